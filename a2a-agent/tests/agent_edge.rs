//! Integration tests, the edge and the card: version negotiation, content types and empty
//! bodies, streaming switched off, busy handling, the card per version with its ETag, SSE
//! heartbeats, a subscriber across turns. Real servers on 127.0.0.1:0 driven over HTTP;
//! sends, streams, cancel and list: `agent.rs`.

use crate::common;

use a2a_agent::model::TaskState;
use a2a_agent::{AgentCard, AgentConfig};
use common::*;
use serde_json::{Value, json};

// ---------- versions, content, limits ----------

#[tokio::test]
async fn version_negotiation() {
    let s = echo(open_config()).await;
    let (st, v) = rpc_v(
        s.url(),
        "SendMessage",
        json!({"message": msg("x")}),
        Some("2.0"),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(v["error"]["code"], -32009);
    assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    let (_, v) = rpc_v(
        s.url(),
        "SendMessage",
        json!({"message": msg("x")}),
        Some("1.0.7"),
    )
    .await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    // no header: 0.3 (S1 §3.6.2), so a 1.0 method name is unknown
    let (_, v) = rpc_v(s.url(), "SendMessage", json!({"message": msg("x")}), None).await;
    assert_eq!(v["error"]["code"], -32601, "{v}");
    // query parameter
    let r = client()
        .post(format!("{}/message:send?A2A-Version=3.1", s.url()))
        .json(&json!({"message": msg("x")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
    s.shutdown().await;
}

#[tokio::test]
async fn version_refused_before_auth() {
    let s = echo(AgentConfig::default()).await; // validate_auth, no scheme: everything 401
    let (st, v) = rest_post(s.url(), "/message:send", json!({"message": msg("x")})).await;
    assert_eq!(st, 401, "{v}");
    let r = client()
        .post(format!("{}/message:send", s.url()))
        .header("A2A-Version", "9.9")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    s.shutdown().await;
}

#[tokio::test]
async fn payload_content_type_and_empty_body() {
    let cfg = AgentConfig {
        max_payload_size: 1024,
        ..open_config()
    };
    let s = echo(cfg).await;
    let big = "x".repeat(4096);
    let (st, v) = rest_post(s.url(), "/message:send", json!({"message": msg(&big)})).await;
    assert_eq!(st, 413);
    assert_eq!(
        v["error"]["details"][0]["reason"],
        "CONTENT_TYPE_NOT_SUPPORTED"
    );
    let (st, v) = rpc(s.url(), "SendMessage", json!({"message": msg(&big)})).await;
    assert_eq!(st, 413);
    assert_eq!(v["error"]["code"], -32005);
    // chunked body with no Content-Length is cut off too
    let chunks = futures::stream::iter(
        (0..8).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b' '; 512]))),
    );
    let r = client()
        .post(format!("{}/message:send", s.url()))
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let r = post_text_plain(format!("{}/message:send", s.url())).await;
    assert_eq!(r.status(), 400);
    let r = client()
        .post(format!("{}/message:send", s.url()))
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["error"]["details"][0]["reason"],
        "CONTENT_TYPE_NOT_SUPPORTED"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn streaming_disabled_is_unsupported() {
    let card = AgentCard::builder("nostream", "d", "1")
        .streaming(false)
        .build();
    let s = start_with(card, a2a_agent::demo::echo_handler(), open_config()).await;
    let (st, _) = rest_post(s.url(), "/message:stream", json!({"message": msg("x")})).await;
    assert_eq!(st, 400);
    let (_, v) = rpc(
        s.url(),
        "SendStreamingMessage",
        json!({"message": msg("x")}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32004);
    // returnImmediately on REST stream is 400
    s.shutdown().await;
    let s = echo(open_config()).await;
    let (st, _) = rest_post(
        s.url(),
        "/message:stream",
        json!({"message": msg("x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert_eq!(st, 400);
    // push config is unsupported
    let (st, v) = rest_get(s.url(), "/tasks/x/pushNotificationConfigs").await;
    assert_eq!(st, 400);
    assert_eq!(
        v["error"]["details"][0]["reason"],
        "PUSH_NOTIFICATION_NOT_SUPPORTED"
    );
    let (_, v) = rpc(s.url(), "CreateTaskPushNotificationConfig", json!({})).await;
    assert_eq!(v["error"]["code"], -32003);
    s.shutdown().await;
}

#[tokio::test]
async fn busy_sync_rejected_async_queued_and_failed_on_shutdown() {
    let cfg = AgentConfig {
        max_concurrent_tasks: 1,
        task_queue_size: 1,
        shutdown_grace: a2a_agent::config::Dur::from_millis(10),
        ..open_config()
    };
    let s = echo(cfg).await;
    let first = start_slow(s.url()).await;
    // sync: rejected
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("x")})).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    let (st, v) = rest_post(s.url(), "/message:send", json!({"message": msg("x")})).await;
    assert_eq!(st, 429);
    assert_eq!(v["error"]["details"][0]["reason"], "RESOURCE_EXHAUSTED");
    // streaming: rejected
    let (st, _) = rest_post(s.url(), "/message:stream", json!({"message": msg("x")})).await;
    assert_eq!(st, 429);
    // async: queued as SUBMITTED
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let queued = v["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_SUBMITTED");
    // queue full: rejected
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32000);
    let mgr = s.manager().clone();
    let anon = a2a_agent::CallerProfile::anonymous();
    let mut sub = mgr.subscribe(&queued, &anon).await.unwrap();
    let cfg_grace = s.manager().clone();
    drop(cfg_grace);
    s.shutdown().await;
    let t = mgr.get(&queued, None, &anon).await.unwrap();
    assert_eq!(t.status.state, TaskState::Failed);
    let ev = sub.events.recv().await.unwrap();
    assert!(
        matches!(ev, a2a_agent::model::StreamResponse::StatusUpdate(ref s) if s.status.state == TaskState::Failed),
        "{ev:?}"
    );
    let t = mgr.get(&first, None, &anon).await.unwrap();
    assert_eq!(t.status.state, TaskState::Failed);
}

// ---------- card ----------

#[tokio::test]
async fn card_versions_etag_and_cache() {
    let s = echo(AgentConfig::default()).await;
    let c = client();
    let r = c
        .get(format!("{}/.well-known/agent-card.json", s.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let tag = r.headers()["etag"].to_str().unwrap().to_string();
    assert!(
        r.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age=300")
    );
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["name"], "echo");
    assert!(v["supportedInterfaces"].as_array().unwrap().len() >= 2);
    assert_eq!(v["url"], s.url());
    assert_eq!(v["protocolVersion"], "0.3.0");
    let r = c
        .get(format!("{}/.well-known/agent-card.json", s.url()))
        .header("if-none-match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    let r = c
        .get(format!("{}/.well-known/agent-card.json", s.url()))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert!(v.get("url").is_none());
    let r = c
        .get(format!("{}/.well-known/agent-card.json", s.url()))
        .header("A2A-Version", "0.3")
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["url"], s.url());
    assert!(v.get("supportedInterfaces").is_none());
    s.shutdown().await;
}

#[tokio::test]
async fn card_rejects_unsupported_binding_and_keeps_unknown_members() {
    let mut v = a2a_agent::demo::echo_card().json().clone();
    v["x-custom"] = json!({"keep": true});
    v["supportedInterfaces"] =
        json!([{"url": "http://h", "protocolBinding": "rest", "protocolVersion": "1.0"}]);
    let card = AgentCard::from_json(v.clone()).unwrap();
    assert_eq!(
        card.json()["supportedInterfaces"][0]["protocolBinding"],
        "HTTP+JSON"
    );
    assert_eq!(card.json()["x-custom"]["keep"], true);
    v["supportedInterfaces"] =
        json!([{"url": "h:1", "protocolBinding": "urn:x-custom", "protocolVersion": "1.0"}]);
    let err = AgentCard::from_json(v).unwrap_err();
    assert!(err.to_string().contains("urn:x-custom"));
}

#[tokio::test]
async fn sse_heartbeats_while_idle() {
    let cfg = AgentConfig {
        sse_heartbeat_interval: a2a_agent::config::Dur::from_millis(20),
        ..open_config()
    };
    let s = echo(cfg).await;
    let id = start_slow(s.url()).await;
    let mut resp = post_1_0(format!("{}/tasks/{id}:subscribe", s.url())).await;
    let mut buf = String::new();
    while !buf.contains("\n:") && !buf.starts_with(':') {
        let chunk = resp
            .chunk()
            .await
            .unwrap()
            .expect("stream ended before a heartbeat");
        buf.push_str(&String::from_utf8_lossy(&chunk));
    }
    rpc(s.url(), "CancelTask", json!({"id": id})).await;
    s.shutdown().await;
}

#[tokio::test]
async fn subscriber_of_interrupted_task_sees_the_next_turn() {
    let s = echo(open_config()).await;
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("input please")}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    let anon = a2a_agent::CallerProfile::anonymous();
    let mut sub = s.manager().subscribe(&id, &anon).await.unwrap();
    assert_eq!(sub.task.status.state, TaskState::InputRequired);
    let mut m = msg("the answer");
    m["taskId"] = json!(id);
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": m})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    let mut states = vec![];
    while let Some(ev) = sub.events.recv().await {
        if let a2a_agent::model::StreamResponse::StatusUpdate(u) = ev {
            states.push(u.status.state);
            if u.status.state.is_terminal() {
                break;
            }
        }
    }
    assert_eq!(
        states,
        vec![
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    assert_eq!(s.manager().live_count(), 0);
    s.shutdown().await;
}
