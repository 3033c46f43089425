//! PII end to end through a real gateway: the request redacted before the peer sees it (what the
//! peer received is checked), a blocked request never sent, a peer's answer redacted, a stream
//! whose email is split across artifact chunks, a stream ended by a block, and a push
//! notification blocked (not delivered, audited). Both caller versions.

use crate::common;

use std::sync::{Arc, Mutex};

use crate::common::echo::start_echo;
use a2a_agent::handler::Reply;
use a2a_agent::model::{Artifact, Part};
use a2a_gateway::config::Config;
use a2a_gateway::errors::Version;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::Store;
use common::gov::{Fut, admin, agent, artifact_text};
use common::*;
use serde_json::{Value, json};

const SECRET: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

fn rules() -> Value {
    json!({"default_action": "record", "actions": {"EMAIL": "redact", "SECRET": "block"}})
}

/// A peer that puts PII in its own answers: a unary reply with an email, or a stream whose
/// email is split across two chunks of one artifact (or, asked for "secret", a secret).
fn leaky(ctx: a2a_agent::handler::RequestContext) -> Fut {
    Box::pin(async move {
        let text = ctx.text();
        if text.contains("chunks") {
            let a = |t: &str| Artifact {
                artifact_id: "out".into(),
                parts: vec![Part::text(t)],
                ..Artifact::new(vec![])
            };
            ctx.emit_artifact(a("write to bob@exa"), false, false).await;
            ctx.emit_artifact(a("mple.org please"), true, true).await;
            return Ok(Reply::Empty);
        }
        if text.contains("secret") {
            ctx.emit("working").await;
            ctx.emit(format!("here: {SECRET}")).await;
            ctx.emit("after the secret").await;
            return Ok(Reply::Empty);
        }
        Ok(Reply::Text("contact carol@example.net".into()))
    })
}

#[tokio::test]
async fn pii_redacts_and_blocks_requests_answers_and_streams() {
    let env = env(Version::V1).await;
    let leak = agent(leaky).await;
    env.register("ws1", "leaky", leak.url(), None);
    // Off by default: nothing is changed.
    let (_, b) = env
        .rpc("/a2a/echo", None, send03("mail alice@example.com"))
        .await;
    assert!(b.to_string().contains("alice@example.com"), "{b}");
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/pii", Some(rules())).await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/pii",
        Some(json!({"actions": {"EMAIL": "maybe"}})),
    )
    .await;
    assert_eq!(s, 400);

    for v in [None, Some("1.0")] {
        let req = if v.is_some() {
            send10("mail alice@example.com")
        } else {
            send03("mail alice@example.com")
        };
        // The request is redacted before the peer sees it.
        let (_, b) = env.rpc("/a2a/echo", v, req).await;
        assert!(b["result"].is_object(), "{b}");
        let seen = env.peers[0].last_body().to_string();
        assert!(!seen.contains("alice@example.com"), "{seen}");
        assert!(seen.contains("[REDACTED:EMAIL]"), "{seen}");
        // A blocked type: refused, the peer never called.
        let req = if v.is_some() {
            send10(&format!("key {SECRET} x1"))
        } else {
            send03(&format!("key {SECRET} x1"))
        };
        let (_, b) = env.rpc("/a2a/echo", v, req).await;
        assert_eq!(gw_code(&b), "a2a_pii_blocked", "{b}");
        assert!(!b.to_string().contains(SECRET));
        assert!(!env.peers[0].last_body().to_string().contains("x1"));
        // A text file that cannot be read (not UTF-8) cannot be checked: refused, never
        // passed on unread.
        if v.is_some() {
            let mut req = send10("f");
            req["params"]["message"]["parts"] =
                json!([{"raw": "//4A", "mediaType": "text/plain", "filename": "x.txt"}]);
            let before = env.peers[0].last_body().to_string();
            let (_, b) = env.rpc("/a2a/echo", v, req).await;
            assert_eq!(gw_code(&b), "a2a_pii_blocked", "{b}");
            assert!(b.to_string().contains("UNREADABLE"), "{b}");
            assert_eq!(
                env.peers[0].last_body().to_string(),
                before,
                "the peer was not called"
            );
        }
        // A data part's string values are scanned too (keys kept).
        let mut req = send03("d");
        req["params"]["message"]["parts"] =
            json!([{"kind": "data", "data": {"email": "dave@example.com", "n": 1}}]);
        if v.is_some() {
            req = send10("d");
            req["params"]["message"]["parts"] =
                json!([{"data": {"email": "dave@example.com", "n": 1}}]);
        }
        let (_, b) = env.rpc("/a2a/echo", v, req).await;
        assert!(b["result"].is_object(), "{b}");
        let seen = env.peers[0].last_body().to_string();
        assert!(
            !seen.contains("dave@") && seen.contains("\"email\""),
            "{seen}"
        );
        // The peer's answer is redacted.
        let req = if v.is_some() {
            send10("hello")
        } else {
            send03("hello")
        };
        let (_, b) = env.rpc("/a2a/leaky", v, req).await;
        let t = b.to_string();
        assert!(
            !t.contains("carol@example.net") && t.contains("[REDACTED:EMAIL]"),
            "{t}"
        );
        // A stream whose email is split across artifact chunks.
        let mut req = if v.is_some() {
            send10("chunks")
        } else {
            send03("chunks")
        };
        req["method"] = json!(if v.is_some() {
            "SendStreamingMessage"
        } else {
            "message/stream"
        });
        let (_, _, events) = env.sse("/a2a/leaky", v, req).await;
        let text = artifact_text(&events);
        assert!(
            !text.contains("bob@exa") && !text.contains("mple.org"),
            "{events:?}"
        );
        assert!(text.contains("[REDACTED:EMAIL]"), "{text} {events:?}");
        assert!(
            events.iter().all(|e| e.get("error").is_none()),
            "{events:?}"
        );
        // A stream carrying a blocked type: one error event, then the end.
        let mut req = if v.is_some() {
            send10("secret")
        } else {
            send03("secret")
        };
        req["method"] = json!(if v.is_some() {
            "SendStreamingMessage"
        } else {
            "message/stream"
        });
        let (_, _, events) = env.sse("/a2a/leaky", v, req).await;
        let last = events.last().unwrap();
        assert_eq!(gw_code(last), "a2a_pii_blocked", "{events:?}");
        assert_eq!(
            events.iter().filter(|e| e.get("error").is_some()).count(),
            1
        );
        assert!(
            !events
                .iter()
                .any(|e| e.to_string().contains(SECRET)
                    || e.to_string().contains("after the secret")),
            "{events:?}"
        );
    }
    // Audit: types and counts, never the PII; the streams' own evidence rows.
    let hops = env.store.audit(Some("ws1"), None, 0, 1000).unwrap();
    let all = serde_json::to_string(&hops).unwrap();
    for pii in ["alice@example.com", "carol@example.net", "bob@exa", SECRET] {
        assert!(!all.contains(pii), "{pii} in the audit");
    }
    let blocked = hops
        .iter()
        .find(|h| h.error_code.as_deref() == Some("a2a_pii_blocked") && h.decision == "refused")
        .unwrap();
    assert_eq!(blocked.governance.as_ref().unwrap()["pii"]["SECRET"], 1);
    assert!(hops.iter().any(|h| {
        h.decision == "stream"
            && h.governance
                .as_ref()
                .is_some_and(|g| g["pii"]["EMAIL"].as_u64() >= Some(1))
    }));
    // Another workspace keeps its own (no) rules.
    let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "echo", &env.peers[0].url, None);
    let (_, b) = env
        .rpc_key("/a2a/echo", None, send03("mail alice@example.com"), &k2)
        .await;
    assert!(b.to_string().contains("alice@example.com"), "{b}");
    env.stop().await;
    leak.shutdown().await;
}

pub(crate) type Seen = Arc<Mutex<Vec<Value>>>;

pub(crate) async fn receiver() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let s = s.clone();
            async move {
                s.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                axum::http::StatusCode::OK
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, seen)
}

pub(crate) fn find_str<'a>(v: &'a Value, pred: &dyn Fn(&str, &str) -> bool) -> Option<&'a str> {
    match v {
        Value::Object(o) => o.iter().find_map(|(k, x)| match x {
            Value::String(s) if pred(k, s) => Some(s.as_str()),
            other => find_str(other, pred),
        }),
        Value::Array(a) => a.iter().find_map(|x| find_str(x, pred)),
        _ => None,
    }
}

/// A gateway with push callbacks on (`push_callback_base_url`) in front of a 1.0 echo peer,
/// registered as `echo` in ws1.
pub(crate) async fn push_env() -> (Env, crate::common::echo::EchoAgent) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    store.create_workspace("ws1", "One").unwrap();
    let (_, key) = store.create_key("ws1", &[], None, None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = Config {
        dev_mode: true,
        peer_timeout_secs: 5,
        listen: addr,
        admin_token: Some(ADMIN.into()),
        push_callback_base_url: Some(format!("http://{addr}")),
        ..Config::default()
    };
    let gw = Gateway::new(config, store.clone())
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    let peer = start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        Version::V1,
        None,
    )
    .await
    .unwrap();
    let env = Env {
        gw,
        store,
        key,
        http: reqwest::Client::new(),
        _dir: dir,
        peers: vec![],
    };
    env.register("ws1", "echo", &peer.url, None);
    (env, peer)
}

#[tokio::test]
async fn pii_blocks_push_notifications() {
    let (env, peer) = push_env().await;
    let (_, b) = env
        .rpc("/a2a/echo", Some("1.0"), send10("task please"))
        .await;
    let tid = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (hook, seen) = receiver().await;
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"p","method":"CreateTaskPushNotificationConfig",
                   "params":{"taskId": tid, "url": hook, "token": "caller-token"}}),
        )
        .await;
    assert!(b["result"].is_object(), "{b}");
    // What the peer was given: the gateway's sealed callback and its token.
    let sent = peer.last_body();
    let cb = find_str(&sent, &|_, s| s.contains("/push:notify/"))
        .unwrap()
        .to_owned();
    let token = find_str(&sent, &|k, _| k == "token").unwrap().to_owned();
    let (s, _) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/pii",
        Some(json!({"actions": {"EMAIL": "block"}})),
    )
    .await;
    assert_eq!(s, 200);
    let notify = |text: &str| {
        let body = json!({"statusUpdate": {"taskId": tid, "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING",
                "message": {"messageId": "n1", "role": "ROLE_AGENT", "parts": [{"text": text}]}}}});
        env.http
            .post(&cb)
            .header("content-type", "application/a2a+json")
            .header("x-a2a-notification-token", &token)
            .body(body.to_string())
            .send()
    };
    let r = notify("reach me at erin@example.com").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        seen.lock().unwrap().is_empty(),
        "a blocked notification was delivered"
    );
    let r = notify("no personal data").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(seen.lock().unwrap().len(), 1);
    let hops = env.store.audit(Some("ws1"), Some("echo"), 0, 100).unwrap();
    let blocked = hops
        .iter()
        .find(|h| h.decision == "blocked")
        .expect("audited block");
    assert_eq!(blocked.operation.as_deref(), Some("push:notify"));
    assert_eq!(blocked.error_code.as_deref(), Some("a2a_pii_blocked"));
    assert_eq!(blocked.governance.as_ref().unwrap()["pii"]["EMAIL"], 1);
    assert!(!serde_json::to_string(&hops).unwrap().contains("erin@"));
    env.stop().await;
    peer.shutdown().await;
}
