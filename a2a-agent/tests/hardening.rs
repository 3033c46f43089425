//! Hardening: a panicking handler fails its task and the server keeps serving; oversize
//! messages and long histories are refused before they are stored.

use crate::common;

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

#[tokio::test]
async fn oversize_message_is_refused_before_it_is_stored() {
    let cfg = a2a_agent::AgentConfig {
        max_task_bytes: 64 * 1024,
        ..open_config()
    };
    let s = echo(cfg).await;
    let url = s.url().to_string();
    let big = "x".repeat(100 * 1024);
    let (_, v) = rpc(&url, "SendMessage", json!({"message": msg(&big)})).await;
    assert_eq!(
        v["error"]["code"],
        -32602,
        "{}",
        &v.to_string()[..200.min(v.to_string().len())]
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("too large"),
        "{}",
        v["error"]
    );
    let (_, v) = rpc(&url, "ListTasks", json!({})).await;
    assert_eq!(v["result"]["totalSize"], 0, "nothing stored: {v}");
    // REST answers in its own form (400 with an A2A error body).
    let (st, _) = rest_post(&url, "/message:send", json!({"message": msg(&big)})).await;
    assert_eq!(st, 400);
    // A message under the bound is served.
    let (_, v) = rpc(&url, "SendMessage", json!({"message": msg("small")})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    s.shutdown().await;
}

#[tokio::test]
async fn history_is_capped_and_a_growing_task_is_refused() {
    let h = handler_fn(|_ctx: RequestContext| async move {
        Ok::<Reply, HandlerError>(Reply::input_required("more?"))
    });
    let cfg = a2a_agent::AgentConfig {
        max_history_length: 4,
        max_task_bytes: 48 * 1024,
        ..open_config()
    };
    let s = start_with(a2a_agent::demo::echo_card(), h, cfg).await;
    let url = s.url().to_string();
    let (_, v) = rpc(&url, "SendMessage", json!({"message": msg("turn 0")})).await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    for i in 1..6 {
        let mut m = msg(&format!("turn {i}"));
        m["taskId"] = json!(id);
        let (_, v) = rpc(&url, "SendMessage", json!({"message": m})).await;
        assert_eq!(
            state(&v["result"]["task"]),
            "TASK_STATE_INPUT_REQUIRED",
            "{v}"
        );
    }
    let (_, v) = rpc(&url, "GetTask", json!({"id": id})).await;
    let hist = v["result"]["history"].as_array().unwrap();
    assert_eq!(hist.len(), 4, "{v}");
    // The newest turns are kept: the last user message is "turn 5".
    assert!(
        hist.iter().any(|m| m["parts"][0]["text"] == "turn 5"),
        "{v}"
    );
    assert!(
        !hist.iter().any(|m| m["parts"][0]["text"] == "turn 0"),
        "{v}"
    );
    // Each turn fits, but the task would outgrow its byte bound: refused, task unchanged.
    let mut m = msg(&"y".repeat(30 * 1024));
    m["taskId"] = json!(id);
    let (_, ok) = rpc(&url, "SendMessage", json!({"message": m})).await;
    assert!(ok.get("result").is_some(), "first 30 KiB turn fits");
    let mut m = msg(&"z".repeat(30 * 1024));
    m["taskId"] = json!(id);
    let (_, v) = rpc(&url, "SendMessage", json!({"message": m})).await;
    assert_eq!(v["error"]["code"], -32602, "{}", v["error"]);
    let (_, v) = rpc(&url, "GetTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_INPUT_REQUIRED");
    s.shutdown().await;
}

#[tokio::test]
async fn at_shutdown_a_stream_on_a_task_waiting_for_input_ends_with_its_state() {
    let h = handler_fn(|_ctx: RequestContext| async move {
        Ok::<Reply, HandlerError>(Reply::input_required("which colour?"))
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let url = s.url().to_string();
    let (_, v) = rpc(&url, "SendMessage", json!({"message": msg("start")})).await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        state(&v["result"]["task"]),
        "TASK_STATE_INPUT_REQUIRED",
        "{v}"
    );
    // A subscriber waits for the next turn, which never comes.
    let url2 = url.clone();
    let sub =
        tokio::spawn(async move { rpc_stream(&url2, "SubscribeToTask", json!({"id": id})).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!sub.is_finished(), "the subscription is open");
    let t0 = std::time::Instant::now();
    s.shutdown().await;
    let events = tokio::time::timeout(std::time::Duration::from_secs(10), sub)
        .await
        .expect("the stream must end at shutdown")
        .unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "ended by shutdown, not by the drain timer"
    );
    let last = events.last().expect("at least one event");
    assert_eq!(
        state(&last["result"]["task"]),
        "TASK_STATE_INPUT_REQUIRED",
        "the last event is the task's state: {events:?}"
    );
    assert!(
        events.len() >= 2,
        "snapshot on subscribe, then the state at shutdown: {events:?}"
    );
}
