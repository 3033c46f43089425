//! Hardening: a panicking handler fails its task and the server keeps serving; oversize
//! messages and long histories are refused before they are stored.

mod common;

use a2a_agent::{HandlerError, Reply, RequestContext, handler_fn};
use common::*;
use serde_json::json;

async fn panicky() -> a2a_agent::ServerHandle {
    let h = handler_fn(|ctx: RequestContext| async move {
        if ctx.text() == "panic" {
            panic!("boom from the test handler");
        }
        Ok::<Reply, HandlerError>(Reply::text(format!("ok: {}", ctx.text())))
    });
    start_with(a2a_agent::demo::echo_card(), h, open_config()).await
}

#[tokio::test]
async fn panicking_handler_fails_task_and_server_keeps_serving() {
    let s = panicky().await;
    let url = s.url().to_string();

    // Blocking send: InternalError in JSON-RPC form, not a hang.
    let (status, v) = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        rpc(&url, "SendMessage", json!({"message": msg("panic")})),
    )
    .await
    .expect("a blocking send to a panicking handler must answer");
    assert_eq!(v["error"]["code"], -32603, "status {status}: {v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("handler panicked"),
        "{v}"
    );

    // The task it created is FAILED with the internal-error status message.
    let (_, v) = rpc(&url, "ListTasks", json!({"pageSize": 1})).await;
    let t = &v["result"]["tasks"][0];
    assert_eq!(state(t), "TASK_STATE_FAILED", "{v}");
    let (_, v) = rpc(&url, "GetTask", json!({"id": t["id"]})).await;
    let text = v["result"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(text.contains("handler panicked"), "{v}");

    // A stream ends with the FAILED final status.
    let events = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        rpc_stream(
            &url,
            "SendStreamingMessage",
            json!({"message": msg("panic")}),
        ),
    )
    .await
    .expect("the stream must end");
    let last = events.last().expect("at least one event");
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_FAILED",
        "{events:?}"
    );

    // The next request is served normally.
    let (_, v) = rpc(&url, "SendMessage", json!({"message": msg("hi")})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    s.shutdown().await;
}
