//! Idempotent sends (issue 16): a repeated `messageId` from the same caller answers from the
//! first send without running the handler again, under concurrency, on both bindings, across a
//! restart with the SQLite store; a different message under the same id is InvalidParams; other
//! callers are not affected.

use crate::common;

use a2a_agent::auth::{AuthRequest, Authenticator, CallerProfile};
use a2a_agent::model::Message;
use a2a_agent::{
    A2aError, AgentConfig, AgentServer, Handler, HandlerError, Reply, RequestContext, ServerHandle,
};
use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Counts its runs; answers after a short pause (or directly, with a message).
struct Counting {
    runs: Arc<AtomicUsize>,
    direct: bool,
}

#[async_trait::async_trait]
impl Handler for Counting {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
        if self.direct {
            return Ok(Reply::Direct(Message {
                parts: vec![a2a_agent::model::Part::text(format!("run {n}"))],
                ..Default::default()
            }));
        }
        let _ = ctx;
        Ok(Reply::Text(format!("run {n}")))
    }

    fn may_reply_directly(&self) -> bool {
        self.direct
    }
}

/// `X-User: name` is the caller.
struct HeaderAuth;

#[async_trait::async_trait]
impl Authenticator for HeaderAuth {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError> {
        let user = req
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("anon");
        Ok(CallerProfile {
            scheme: "oauth2".into(),
            subject: Some(user.to_string()),
            issuer: Some("test".into()),
            ..Default::default()
        })
    }
}

/// The open config with the idempotency window on (it is off by default).
fn on() -> AgentConfig {
    AgentConfig {
        idempotency_window: a2a_agent::config::Dur::from_secs(3600),
        ..open_config()
    }
}

async fn start(cfg: AgentConfig, direct: bool) -> (ServerHandle, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = AgentServer::new(
        a2a_agent::demo::echo_card(),
        Counting {
            runs: runs.clone(),
            direct,
        },
    )
    .config(cfg)
    .authenticator(Arc::new(HeaderAuth))
    .serve(l)
    .await
    .unwrap();
    (s, runs)
}

async fn send_as(url: &str, user: &str, params: Value) -> Value {
    client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("x-user", user)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn message(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

#[tokio::test]
async fn concurrent_retries_of_one_send_run_the_handler_once_and_get_one_task() {
    let (s, runs) = start(on(), false).await;
    let url = s.url().to_string();
    let mid = uuid();
    let mut calls = Vec::new();
    for i in 0..8 {
        let (url, mid) = (url.clone(), mid.clone());
        calls.push(tokio::spawn(async move {
            if i % 2 == 0 {
                send_as(&url, "alice", json!({"message": message(&mid, "hi")})).await
            } else {
                // The same send on HTTP+JSON.
                client()
                    .post(format!("{url}/message:send"))
                    .header("A2A-Version", "1.0")
                    .header("x-user", "alice")
                    .json(&json!({"message": message(&mid, "hi")}))
                    .send()
                    .await
                    .unwrap()
                    .json::<Value>()
                    .await
                    .map(|v| json!({"result": v}))
                    .unwrap()
            }
        }));
    }
    let mut ids = Vec::new();
    for c in calls {
        let v = c.await.unwrap();
        let t = &v["result"]["task"];
        assert_eq!(state(t), "TASK_STATE_COMPLETED", "{v}");
        ids.push(t["id"].as_str().unwrap().to_string());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one task for every retry: {ids:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the handler ran once");
    s.shutdown().await;
}

#[tokio::test]
async fn a_different_message_under_a_used_message_id_is_invalid_params() {
    let (s, runs) = start(on(), false).await;
    let url = s.url().to_string();
    let mid = uuid();
    let v = send_as(&url, "alice", json!({"message": message(&mid, "hi")})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    let v = send_as(
        &url,
        "alice",
        json!({"message": message(&mid, "something else")}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let r = client()
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("x-user", "alice")
        .json(&json!({"message": message(&mid, "something else")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    // Another caller's send with the same messageId is its own send.
    let v = send_as(
        &url,
        "bob",
        json!({"message": message(&mid, "something else")}),
    )
    .await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    s.shutdown().await;
}

#[tokio::test]
async fn a_retried_stream_and_a_blocking_retry_of_a_non_blocking_send_get_the_same_task() {
    let (s, runs) = start(on(), false).await;
    let url = s.url().to_string();
    // Non-blocking first, then a blocking retry: it waits for the same task to finish.
    let mid = uuid();
    let v = send_as(
        &url,
        "alice",
        json!({"message": message(&mid, "hi"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    let v = send_as(&url, "alice", json!({"message": message(&mid, "hi")})).await;
    assert_eq!(v["result"]["task"]["id"], id.as_str());
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    // A stream retry of the finished send: the task, then the stream ends.
    let evs = client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("x-user", "alice")
        .json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage",
            "params": {"message": message(&mid, "hi")}}),
        )
        .send()
        .await
        .unwrap();
    let evs = sse_events(evs).await;
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0]["result"]["task"]["id"], id.as_str());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    s.shutdown().await;
}

#[tokio::test]
async fn a_retried_send_answered_directly_gets_the_same_message() {
    let (s, runs) = start(on(), true).await;
    let url = s.url().to_string();
    let mid = uuid();
    let a = send_as(&url, "alice", json!({"message": message(&mid, "hi")})).await;
    let b = send_as(&url, "alice", json!({"message": message(&mid, "hi")})).await;
    assert!(a["result"]["message"].is_object(), "{a}");
    assert_eq!(a["result"], b["result"]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    s.shutdown().await;
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_retry_after_a_restart_with_the_sqlite_store_finds_the_first_task() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = AgentConfig {
        sqlite_path: Some(dir.path().join("agent.db")),
        ..on()
    };
    let mid = uuid();
    let (s, runs) = start(cfg.clone(), false).await;
    let v = send_as(s.url(), "alice", json!({"message": message(&mid, "hi")})).await;
    let id = v["result"]["task"]["id"].clone();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    s.shutdown().await;
    let (s, runs) = start(cfg, false).await;
    let v = send_as(s.url(), "alice", json!({"message": message(&mid, "hi")})).await;
    assert_eq!(v["result"]["task"]["id"], id, "{v}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the handler did not run again"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn by_default_every_send_runs() {
    let (s, runs) = start(open_config(), false).await;
    let mid = uuid();
    for _ in 0..2 {
        send_as(s.url(), "alice", json!({"message": message(&mid, "hi")})).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    s.shutdown().await;
}
