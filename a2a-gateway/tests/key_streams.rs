//! A revoked or expired key ends its open streams and subscriptions (issue 39, item 7): within
//! 2 s each one's last event is the refusal a new request with the key gets (`a2a_unauthorized`),
//! in the caller's form (JSON-RPC 1.0 and 0.3, HTTP+JSON); another key's streams of the same
//! task stay open. Revoked through the admin API (at once) and on the database, as the CLI does
//! (the sweeper reads the keys of open streams), and by expiry.

use crate::common;

use std::time::Duration;

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

/// The demo echo agent (its `slow` task waits until canceled), JSON-RPC 1.0 only.
async fn slow_agent() -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// A caller's open stream: its events as they arrive; `None` once the stream has ended.
struct Open {
    rx: UnboundedReceiver<Value>,
    seen: Vec<Value>,
}

/// Opens `method path` (a JSON-RPC body, or none for an HTTP+JSON GET) with `key`.
async fn open(
    env: &Env,
    path: &str,
    version: Option<&str>,
    key: &str,
    body: Option<Value>,
) -> Open {
    let mut req = match &body {
        Some(b) => env
            .http
            .post(env.url(path))
            .header("content-type", "application/json")
            .body(b.to_string()),
        None => env.http.get(env.url(path)),
    }
    .bearer_auth(key);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200, "{path}");
    let rx = crate::common::approval::sse_channel(resp);
    Open {
        rx,
        seen: Vec::new(),
    }
}

impl Open {
    /// Waits for the first event (the stream is open at the peer).
    async fn started(&mut self) -> Value {
        let ev = tokio::time::timeout(Duration::from_secs(5), self.rx.recv())
            .await
            .expect("no first event")
            .expect("ended before its first event");
        self.seen.push(ev.clone());
        ev
    }

    /// The events until the stream ends, which it must within `within`.
    async fn ends_within(&mut self, within: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(ev)) => self.seen.push(ev),
                Ok(None) => return self.seen.clone(),
                Err(_) => panic!("still open after {within:?}: {:?}", self.seen),
            }
        }
    }

    /// Still open: nothing ended it (events may still come).
    async fn still_open(&mut self) -> bool {
        loop {
            match tokio::time::timeout(Duration::from_millis(300), self.rx.recv()).await {
                Ok(Some(ev)) => self.seen.push(ev),
                Ok(None) => return false,
                Err(_) => return true,
            }
        }
    }
}

/// The last event is the key's refusal, in the JSON-RPC (either version) or HTTP+JSON form.
fn refused_last(what: &str, events: &[Value], detail: &str) {
    let last = events.last().unwrap_or(&Value::Null);
    let code = if last.get("jsonrpc").is_some() {
        gw_code(last)
    } else {
        last["error"]["details"]
            .as_array()
            .and_then(|d| d.iter().find_map(|i| i["metadata"]["code"].as_str()))
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(code, "a2a_unauthorized", "{what}: {events:?}");
    assert!(last.to_string().contains(detail), "{what}: {last}");
}

fn stream_req(text: &str) -> Value {
    json!({"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":
        {"messageId": format!("m-{text}"),"role":"ROLE_USER","parts":[{"text": text}]}}})
}

/// With `key`: a 1.0 stream of a slow task, then subscriptions to it (JSON-RPC 0.3, HTTP+JSON
/// 1.0); with `other`: a subscription that must stay open.
async fn streams_of(env: &Env, key: &str, other: &str, text: &str) -> (Vec<Open>, Open, String) {
    let mut s = open(env, "/a2a/slow", Some("1.0"), key, Some(stream_req(text))).await;
    let first = s.started().await;
    let task = first["result"]["task"]["id"].as_str().unwrap().to_owned();
    let sub03 =
        json!({"jsonrpc":"2.0","id":"r","method":"tasks/resubscribe","params":{"id": task}});
    let mut a = open(env, "/a2a/slow", None, key, Some(sub03)).await;
    a.started().await;
    let path = format!("/a2a/slow/v1/tasks/{task}:subscribe");
    let mut b = open(env, &path, Some("1.0"), key, None).await;
    b.started().await;
    let sub10 = json!({"jsonrpc":"2.0","id":"o","method":"SubscribeToTask","params":{"id": task}});
    let mut o = open(env, "/a2a/slow", Some("1.0"), other, Some(sub10)).await;
    o.started().await;
    (vec![s, a, b], o, task)
}

/// Cancels the slow task (with the key that still stands), so the peer stops at once.
async fn cancel(env: &Env, task: &str) {
    let c = json!({"jsonrpc":"2.0","id":"c","method":"CancelTask","params":{"id": task}});
    let (_, b) = env.rpc("/a2a/slow", Some("1.0"), c).await;
    assert_eq!(b["result"]["status"]["state"], "TASK_STATE_CANCELED", "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_ends_its_streams_and_subscriptions() {
    let peer = slow_agent().await;
    // A short grace at the end: the other key's subscription is still open then.
    let env = env_with(Version::V1, |c| c.shutdown_grace_secs = 0).await;
    env.register("ws1", "slow", peer.url(), None);
    // Through the admin API, then on the database alone (as `admin key-revoke` does).
    for (i, via_admin) in [true, false].into_iter().enumerate() {
        let (kid, key) = key_with(&env, &[], None);
        let (mut mine, mut other, task) =
            streams_of(&env, &key, &env.key, &format!("slow please {i}")).await;
        if via_admin {
            let (s, _) = admin(&env, "POST", &format!("/admin/keys/{kid}/revoke"), None).await;
            assert_eq!(s, 204);
        } else {
            env.store.revoke_key(&kid).unwrap();
        }
        for (j, s) in mine.iter_mut().enumerate() {
            let events = s.ends_within(Duration::from_secs(2)).await;
            refused_last(
                &format!("stream {j}, admin {via_admin}"),
                &events,
                "revoked",
            );
        }
        assert!(other.still_open().await, "another key's subscription ended");
        // The key itself is refused too.
        let (s, b) = env
            .rpc_key("/a2a/slow", Some("1.0"), stream_req("again"), &key)
            .await;
        assert_eq!(s, 401, "{b}");
        cancel(&env, &task).await;
    }
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiring_key_ends_its_streams_and_subscriptions() {
    let peer = slow_agent().await;
    // A short grace at the end: the other key's subscription is still open then.
    let env = env_with(Version::V1, |c| c.shutdown_grace_secs = 0).await;
    env.register("ws1", "slow", peer.url(), None);
    let expires = time::OffsetDateTime::now_utc().unix_timestamp() + 2;
    let (_, key) = key_with(&env, &[], Some(expires));
    let (mut mine, mut other, task) = streams_of(&env, &key, &env.key, "slow please").await;
    assert!(
        time::OffsetDateTime::now_utc().unix_timestamp() < expires,
        "the streams opened after the key expired; the test needs a longer expiry"
    );
    // From the second the key expires, every stream of it ends within 2 s.
    while time::OffsetDateTime::now_utc().unix_timestamp() < expires {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (j, s) in mine.iter_mut().enumerate() {
        let events = s.ends_within(Duration::from_secs(2)).await;
        refused_last(&format!("stream {j}"), &events, "expired");
    }
    assert!(other.still_open().await, "another key's subscription ended");
    cancel(&env, &task).await;
    env.stop().await;
    peer.shutdown().await;
}
