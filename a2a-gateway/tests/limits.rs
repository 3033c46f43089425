//! Response and stream limits (with per-workspace overrides), stalls, and peer card revalidation.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_gateway::errors::Version;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use common::*;
use serde_json::{Value, json};

struct Peer {
    url: String,
    revalidations: Arc<AtomicUsize>,
    join: tokio::task::JoinHandle<()>,
}

/// A 1.0 JSON-RPC peer: SendMessage answers a task with a 4 KiB artifact; SendStreamingMessage
/// sends one event and then stalls; the card has an ETag and counts revalidations.
async fn peer() -> Peer {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let card = crate::common::echo::echo_card(&url, Version::V1);
    let revalidations = Arc::new(AtomicUsize::new(0));
    let rv = revalidations.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move |h: HeaderMap| {
                let card = card.clone();
                let rv = rv.clone();
                async move {
                    if h.get("if-none-match").and_then(|v| v.to_str().ok()) == Some("\"v1\"") {
                        rv.fetch_add(1, Ordering::SeqCst);
                        return (axum::http::StatusCode::NOT_MODIFIED, [("etag", "\"v1\"")]).into_response();
                    }
                    ([("etag", "\"v1\""), ("cache-control", "max-age=600")], axum::Json(card)).into_response()
                }
            }),
        )
        .route(
            "/",
            post(|body: String| async move {
                let req: Value = serde_json::from_str(&body).unwrap();
                let id = req["id"].clone();
                let big = "x".repeat(4096);
                let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
                    "artifacts": [{"artifactId": "a", "parts": [{"text": big}]}]});
                if req["method"] == "SendStreamingMessage" {
                    let first = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}}).to_string();
                    let s = async_stream::stream! {
                        yield Ok::<_, std::convert::Infallible>(axum::response::sse::Event::default().data(first));
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    };
                    return axum::response::sse::Sse::new(s).into_response();
                }
                axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}})).into_response()
            }),
        );
    let join = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    Peer {
        url,
        revalidations,
        join,
    }
}

#[tokio::test]
async fn response_limit_with_workspace_override() {
    let p = peer().await;
    let env = env(Version::V1).await;
    env.register("ws1", "big", &p.url, None);
    let (_, b) = env.rpc("/a2a/big", Some("1.0"), send10("x")).await;
    assert!(b["result"]["task"].is_object(), "{b}");
    env.store
        .set_workspace_limits("ws1", Some(1024), None, None)
        .unwrap();
    let (_, b) = env.rpc("/a2a/big", Some("1.0"), send10("x")).await;
    assert_eq!(gw_code(&b), "a2a_response_too_large", "{b}");
    p.join.abort();
    env.stop().await;
}

#[tokio::test]
async fn stall_and_stream_limit_end_with_one_error_event() {
    let p = peer().await;
    let env = env_with(Version::V1, |c| c.peer_timeout_secs = 1).await;
    env.register("ws1", "stall", &p.url, None);
    let mut req = send03("s");
    req["method"] = json!("message/stream");
    let (s, _, events) = env.sse("/a2a/stall", None, req.clone()).await;
    assert_eq!(s, 200);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["result"]["kind"], "task");
    assert_eq!(events[1]["id"], "1");
    assert_eq!(
        events[1]["error"]["data"]["code"], "a2a_peer_timeout",
        "{events:?}"
    );
    env.store
        .set_workspace_limits("ws1", None, Some(1000), None)
        .unwrap();
    // A new message (the same messageId would be answered from the first send's record).
    let mut req = send03("s");
    req["method"] = json!("message/stream");
    let (_, _, events) = env.sse("/a2a/stall", None, req).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["error"]["data"]["code"], "a2a_stream_too_large");
    p.join.abort();
    env.stop().await;
}

#[tokio::test]
async fn peer_card_is_revalidated_with_its_etag() {
    let p = peer().await;
    let env = env(Version::V1).await;
    env.register("ws1", "cached", &p.url, None);
    let get = |q: &str| {
        env.http
            .get(env.url(&format!("/a2a/cached/.well-known/agent-card.json{q}")))
            .bearer_auth(&env.key)
            .send()
    };
    assert_eq!(get("").await.unwrap().status().as_u16(), 200);
    assert_eq!(get("").await.unwrap().status().as_u16(), 200);
    assert_eq!(
        p.revalidations.load(Ordering::SeqCst),
        0,
        "fresh card served from the cache"
    );
    let resp = get("?refresh=true").await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let card: Value = resp.json().await.unwrap();
    assert_eq!(card["name"], "Echo agent");
    assert_eq!(
        p.revalidations.load(Ordering::SeqCst),
        1,
        "refresh revalidates with If-None-Match"
    );
    p.join.abort();
    env.stop().await;
}
