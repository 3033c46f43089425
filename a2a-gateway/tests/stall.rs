//! The peer-stall timer: SSE comments (heartbeats) from a peer are life, so a peer that sends
//! only comments for longer than the stall timeout keeps the caller's stream open; a silent
//! peer is cut with an `a2a_peer_timeout` error event.

use crate::common;

use std::time::Duration;

use a2a_gateway::errors::Version;
use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};

/// A JSON-RPC 1.0 peer whose stream sends `comments` heartbeat comments 300 ms apart (none =
/// silence for 10 s), then one completed task.
async fn peer(comments: usize) -> (String, tokio::task::JoinHandle<()>) {
    common::card_peer(move || {
        let beats = futures::stream::iter(0..comments).then(|_| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok::<_, std::io::Error>(Bytes::from_static(b": keep-alive\n\n"))
        });
        let silence = futures::stream::once(async move {
            if comments == 0 {
                tokio::time::sleep(Duration::from_secs(10)).await;
            }
            let ev = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t1",
                "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}});
            Ok(Bytes::from(format!("data: {ev}\n\n")))
        });
        let mut r = Response::new(Body::from_stream(beats.chain(silence)));
        r.headers_mut().insert(
            "content-type",
            axum::http::HeaderValue::from_static("text/event-stream"),
        );
        r
    })
    .await
}

fn stream_body() -> Value {
    json!({"jsonrpc": "2.0", "id": "1", "method": "SendStreamingMessage", "params": {"message":
        {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
}

#[tokio::test]
async fn heartbeat_comments_keep_a_stream_alive_past_the_stall_timeout() {
    let env = common::env_with(Version::V1, |c| c.peer_timeout_secs = 1).await;
    // 8 comments x 300 ms = 2.4 s of comments only: more than twice the 1 s stall timeout.
    let (beat_url, beat) = peer(8).await;
    let (silent_url, silent) = peer(0).await;
    env.register("ws1", "beat", &beat_url, None);
    env.register("ws1", "silent", &silent_url, None);

    let (status, _, events) = env.sse("/a2a/beat", Some("1.0"), stream_body()).await;
    assert_eq!(status, 200);
    let last = events.last().cloned().unwrap_or(Value::Null);
    assert!(last["error"].is_null(), "stream cut: {events:?}");
    assert_eq!(
        last["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{events:?}"
    );

    let (status, _, events) = env.sse("/a2a/silent", Some("1.0"), stream_body()).await;
    assert_eq!(status, 200);
    let last = events.last().cloned().unwrap_or(Value::Null);
    assert_eq!(common::gw_code(&last), "a2a_peer_timeout", "{events:?}");

    beat.abort();
    silent.abort();
    env.stop().await;
}
