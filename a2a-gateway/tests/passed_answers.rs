//! A 1.0 peer's `SendMessage` answer passed through as text (`a2a_gateway::passed`): every
//! caller reads what the `Value` path gave it, the task is still bound to its workspace, and a
//! repeated send is still answered from its record.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_gateway::errors::Version;
use a2a_gateway::ops::Operation;
use axum::body::Body;
use axum::response::Response;
use serde_json::{Value, json};

use crate::common::{Env, card_peer, env, send03, send10};

/// A canned JSON-RPC 1.0 peer answering every call with `result` (JSON text); counts its calls.
async fn canned(result: &str) -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    // Written as a peer may write it: members unsorted, spaced.
    let body = format!("{{ \"result\": {result},\n \"id\": \"1\", \"jsonrpc\": \"2.0\" }}");
    let (url, join) = card_peer(move || {
        h.fetch_add(1, Ordering::SeqCst);
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(body.clone()))
            .unwrap()
    })
    .await;
    (url, hits, join)
}

/// A task answer, members in the peer's order (the `Value` path writes them sorted).
const TASK: &str = r#"{"task": {"status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-05T10:00:00Z"},
  "id": "passed-task-1", "contextId": "ctx-1",
  "history": [{"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]}],
  "artifacts": [{"artifactId": "a1", "parts": [{"text": "hi", "metadata": {"z": 1, "a": [2.5, null]}}]}],
  "metadata": {"b": "x", "a": {"n": -3}}}}"#;

/// A direct message answer, members in the peer's order.
const MESSAGE: &str = r#"{"message": {"role": "ROLE_AGENT", "messageId": "reply-1", "contextId": "ctx-2",
  "parts": [{"text": "echo: hi"}], "metadata": {"k": true}}}"#;

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// A 1.0 HTTP+JSON send through the gateway: (status, body text).
async fn rest_send(env: &Env, agent: &str) -> (u16, String) {
    let body = json!({"message": {"messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    let resp = env
        .http
        .post(env.url(&format!("/a2a/{agent}/v1/message:send")))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_caller_reads_the_value_paths_answer_for_a_task_and_a_message() {
    let env = env(Version::V1).await;
    for (agent, text) in [("canned-task", TASK), ("canned-msg", MESSAGE)] {
        let result = parsed(text);
        let (url, _, join) = canned(text).await;
        env.register("ws1", agent, &url, None);
        let path = format!("/a2a/{agent}");
        // 1.0 JSON-RPC: passed through.
        let (s, passed) = env.rpc(&path, Some("1.0"), send10("hi")).await;
        assert_eq!(s, 200, "{passed}");
        assert_eq!(passed["result"], result, "{agent}: passed answer");
        assert_eq!(passed["id"], json!("1"));
        // The same with a history length, which the Value path serves (it trims history).
        let mut with_len = send10("hi");
        with_len["params"]["configuration"] = json!({"historyLength": 100});
        let (_, read) = env.rpc(&path, Some("1.0"), with_len).await;
        assert_eq!(read["result"], passed["result"], "{agent}: Value path");
        // 1.0 HTTP+JSON: passed through, as the peer wrote it (so not through a Value).
        let (s, rest) = rest_send(&env, agent).await;
        assert_eq!((s, rest.as_str()), (200, text), "{agent}: HTTP+JSON");
        // 0.3 JSON-RPC: translated, as before.
        let (_, old) = env.rpc(&path, Some("0.3"), send03("hi")).await;
        let want =
            a2a_gateway::xlate::result(Operation::SendMessage, Version::V1, Version::V03, &result)
                .unwrap();
        assert_eq!(old["result"], want, "{agent}: 0.3 caller");
        join.abort();
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passed_task_is_bound_to_its_workspace() {
    let env = env(Version::V1).await;
    let (url, hits, join) = canned(TASK).await;
    env.register("ws1", "canned", &url, None);
    let (_, a) = env.rpc("/a2a/canned", Some("1.0"), send10("hi")).await;
    assert_eq!(a["result"]["task"]["id"], json!("passed-task-1"), "{a}");
    // Another workspace on the same peer: the task is not there for it.
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "canned", &url, None);
    let before = hits.load(Ordering::SeqCst);
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask",
        "params": {"id": "passed-task-1"}});
    let (_, b) = env.rpc_key("/a2a/canned", Some("1.0"), get, &key_b).await;
    assert_eq!(b["error"]["code"], json!(-32001), "{b}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        before,
        "the peer was not asked"
    );
    // Nor does a send from it get the task (its answer names a task bound to ws1).
    let (_, c) = env
        .rpc_key("/a2a/canned", Some("1.0"), send10("hi"), &key_b)
        .await;
    assert_eq!(c["error"]["code"], json!(-32001), "{c}");
    join.abort();
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_send_is_answered_from_the_record_of_a_passed_message() {
    let env = env(Version::V1).await;
    let (url, hits, join) = canned(MESSAGE).await;
    env.register("ws1", "canned", &url, None);
    let send = send10("hi");
    let (_, first) = env.rpc("/a2a/canned", Some("1.0"), send.clone()).await;
    let (_, again) = env.rpc("/a2a/canned", Some("1.0"), send).await;
    assert_eq!(first["result"], parsed(MESSAGE), "{first}");
    assert_eq!(again["result"], first["result"], "{again}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the repeat reached the peer"
    );
    join.abort();
    env.stop().await;
}

/// A canned HTTP+JSON 1.0 peer answering `POST /message:send` with `result` (JSON text).
async fn canned_rest(result: &'static str) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = crate::common::echo::echo_card(&url, Version::V1);
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]);
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/message:send",
            axum::routing::post(move || async move {
                Response::builder()
                    .header("content-type", "application/a2a+json")
                    .body(Body::from(result))
                    .unwrap()
            }),
        );
    let join = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, join)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_json_peers_answer_passes_through_as_well() {
    let env = env(Version::V1).await;
    for (agent, text) in [("rest-task", TASK), ("rest-msg", MESSAGE)] {
        let (url, join) = canned_rest(text).await;
        env.register("ws1", agent, &url, None);
        let (s, rest) = rest_send(&env, agent).await;
        assert_eq!((s, rest.as_str()), (200, text), "{agent}: HTTP+JSON caller");
        let (_, rpc) = env
            .rpc(&format!("/a2a/{agent}"), Some("1.0"), send10("hi"))
            .await;
        assert_eq!(rpc["result"], parsed(text), "{agent}: JSON-RPC caller");
        join.abort();
    }
    let hops = env
        .store
        .audit(Some("ws1"), Some("rest-task"), 0, 10)
        .unwrap();
    assert!(
        hops.iter()
            .any(|h| h.task_id.as_deref() == Some("passed-task-1")),
        "the task is on the hop's record"
    );
    env.stop().await;
}
