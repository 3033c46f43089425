//! Governed push: sealed callbacks between a 0.3 caller and a 1.0 Rust peer (a2a-agent).

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::config::AgentConfig;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_gateway::config::Config;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::Store;
use axum::http::HeaderMap;
use common::*;
use serde_json::{Value, json};

pub(crate) type Seen = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

/// A loopback webhook receiver recording what it is sent.
pub(crate) async fn receiver() -> (String, Seen, tokio::task::JoinHandle<()>) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let s = s.clone();
            async move {
                let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                s.lock().unwrap().push((headers, v));
                axum::http::StatusCode::OK
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    let join = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, seen, join)
}

pub(crate) async fn rust_push_agent() -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    card["capabilities"]["pushNotifications"] = json!(true);
    AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .config(AgentConfig {
            allow_local_webhook_urls: true,
            ..AgentConfig::default()
        })
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// A gateway whose callback base is its own loopback URL (when `sealed`).
pub(crate) async fn gateway(sealed: bool, direct: bool) -> Env {
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
        push_callback_base_url: sealed.then(|| format!("http://{addr}")),
        push_direct_workspaces: if direct { vec!["ws1".into()] } else { vec![] },
        push_delete_grace_ms: 300,
        ..Config::default()
    };
    let gw = Gateway::new(config, store.clone())
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    Env {
        gw,
        store,
        key,
        http: reqwest::Client::new(),
        _dir: dir,
        peers: vec![],
    }
}

/// An input-required task on the peer, created through the gateway by a 0.3 caller.
async fn open_task(env: &Env) -> (String, String) {
    let (_, b) = env.rpc("/a2a/rust", None, send03("input please")).await;
    assert_eq!(b["result"]["status"]["state"], "input-required", "{b}");
    (
        b["result"]["id"].as_str().unwrap().to_owned(),
        b["result"]["contextId"].as_str().unwrap().to_owned(),
    )
}

pub(crate) fn set03(task: &str, hook: &str) -> Value {
    json!({"jsonrpc":"2.0","id":"p","method":"tasks/pushNotificationConfig/set","params":{
        "taskId": task,
        "pushNotificationConfig": {"id": "c1", "url": hook, "token": "caller-token",
            "authentication": {"schemes": ["Bearer"], "credentials": "caller-cred"}}}})
}

/// The push config as the peer itself stores it (asked directly, not through the gateway).
async fn peer_config(agent: &str, task: &str) -> Value {
    let v: Value = reqwest::Client::new()
        .post(agent)
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc":"2.0","id":"g","method":"GetTaskPushNotificationConfig",
            "params":{"taskId": task, "id": "c1"}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["result"].clone()
}

pub(crate) async fn wait_for(seen: &Seen, n: usize) {
    for _ in 0..200 {
        if seen.lock().unwrap().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "webhook got {} notifications, wanted {n}",
        seen.lock().unwrap().len()
    );
}

async fn post_notify(url: &str, token: &str, body: String) -> u16 {
    post_notify_answer(url, token, body).await.0
}

/// The status and the JSON body (`Null` when empty) of a notification post.
async fn post_notify_answer(url: &str, token: &str, body: String) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/a2a+json")
        .header("X-A2A-Notification-Token", token)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn sealed_push_reaches_a_03_caller_from_a_10_peer() {
    let agent = rust_push_agent().await;
    let (hook, seen, recv) = receiver().await;
    let env = gateway(true, false).await;
    env.register("ws1", "rust", agent.url(), None);
    let (tid, cid) = open_task(&env).await;

    let (_, b) = env.rpc("/a2a/rust", None, set03(&tid, &hook)).await;
    let cfg = &b["result"]["pushNotificationConfig"];
    assert_eq!(cfg["url"], hook.as_str(), "{b}");
    // Set, but never shown (issue 39): the caller reads that a token and credentials are set.
    assert_eq!(cfg["token"], "[REDACTED]", "{b}");
    assert_eq!(cfg["authentication"]["credentials"], "[REDACTED]", "{b}");
    assert_eq!(cfg["authentication"]["schemes"], json!(["Bearer"]), "{b}");

    // The peer holds the gateway callback, never the caller's webhook.
    let pc = peer_config(agent.url(), &tid).await;
    let sealed = pc["url"].as_str().unwrap().to_owned();
    let prefix = format!("{}/a2a/rust/push:notify/", env.gw.base_url());
    assert!(sealed.starts_with(&prefix), "{pc}");
    assert!(!pc.to_string().contains(&hook), "{pc}");
    assert!(!pc.to_string().contains("caller-cred"), "{pc}");
    let peer_token = pc["token"].as_str().unwrap().to_owned();
    assert_ne!(peer_token, "caller-token");

    // Get through the gateway shows the caller's own webhook.
    let (_, b) = env
        .rpc(
            "/a2a/rust",
            None,
            json!({"jsonrpc":"2.0","id":"g","method":"tasks/pushNotificationConfig/get",
                "params":{"id": tid, "pushNotificationConfigId": "c1"}}),
        )
        .await;
    assert_eq!(
        b["result"]["pushNotificationConfig"]["url"],
        hook.as_str(),
        "{b}"
    );

    // The task moves on; the peer notifies the gateway, which posts 0.3 bodies to the caller.
    let follow = json!({"jsonrpc":"2.0","id":"2","method":"message/send","params":{"message":
        {"kind":"message","messageId": uuid::Uuid::new_v4().to_string(),"role":"user","taskId":tid,"contextId":cid,
         "parts":[{"kind":"text","text":"thanks"}]}}});
    let (_, b) = env.rpc("/a2a/rust", None, follow).await;
    assert_eq!(b["result"]["status"]["state"], "completed", "{b}");
    wait_for(&seen, 1).await;
    // Deliveries are sequential per config; wait for the terminal one.
    for _ in 0..200 {
        let done = seen
            .lock()
            .unwrap()
            .iter()
            .any(|(_, v)| v["status"]["state"] == "completed");
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    {
        let got = seen.lock().unwrap();
        for (h, v) in got.iter() {
            assert_eq!(h["content-type"], "application/json");
            assert_eq!(h["x-a2a-notification-token"], "caller-token");
            assert_eq!(h["authorization"], "Bearer caller-cred");
            assert!(v.get("kind").is_some(), "not a 0.3 body: {v}");
            assert!(
                v.get("task").is_none() && v.get("statusUpdate").is_none(),
                "{v}"
            );
        }
        assert!(
            got.iter().any(|(_, v)| v["status"]["state"] == "completed"),
            "{:?}",
            got.iter().map(|x| &x.1).collect::<Vec<_>>()
        );
    }

    // Bad token, wrong agent, oversized, duplicate.
    let body = json!({"task": {"id": tid, "contextId": cid,
        "status": {"state": "TASK_STATE_COMPLETED"}}})
    .to_string();
    assert_eq!(post_notify(&sealed, "wrong", body.clone()).await, 401);
    let other = sealed.replace("/a2a/rust/", "/a2a/other/");
    assert_eq!(post_notify(&other, &peer_token, body.clone()).await, 404);
    let unknown = format!("{prefix}nope");
    assert_eq!(post_notify(&unknown, &peer_token, body.clone()).await, 404);
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(1024 * 1024));
    let (s, b) = post_notify_answer(&sealed, &peer_token, big).await;
    assert_eq!(s, 413);
    assert_eq!(
        b["error"]["details"][0]["metadata"]["code"], "a2a_push_too_large",
        "{b}"
    );
    let (_, b) = post_notify_answer(&sealed, "wrong", body.clone()).await;
    assert_eq!(
        b["error"]["details"][0]["metadata"]["code"], "a2a_push_unauthorized",
        "{b}"
    );
    // A notification about another task than the sealed config's is not delivered.
    let elsewhere = json!({"task": {"id": "another-task", "contextId": cid,
        "status": {"state": "TASK_STATE_COMPLETED"}}})
    .to_string();
    let (s, b) = post_notify_answer(&sealed, &peer_token, elsewhere).await;
    assert_eq!(s, 403, "{b}");
    assert_eq!(
        b["error"]["details"][0]["metadata"]["code"], "a2a_push_task_mismatch",
        "{b}"
    );
    let before = seen.lock().unwrap().len();
    assert_eq!(post_notify(&sealed, &peer_token, body.clone()).await, 200);
    assert_eq!(seen.lock().unwrap().len(), before + 1);
    assert_eq!(post_notify(&sealed, &peer_token, body.clone()).await, 200);
    assert_eq!(
        seen.lock().unwrap().len(),
        before + 1,
        "duplicate delivered twice"
    );
    assert_eq!(seen.lock().unwrap().last().unwrap().1["kind"], "task");

    // An audit record per notification.
    let hops = env.store.audit(Some("ws1"), Some("rust"), 0, 1000).unwrap();
    let notes: Vec<_> = hops
        .iter()
        .filter(|h| h.operation.as_deref() == Some("push:notify"))
        .collect();
    assert!(notes.iter().any(|h| h.decision == "duplicate"));
    assert!(notes.iter().any(|h| h.status == 401));
    assert!(notes.iter().filter(|h| h.decision == "delivered").count() >= 2);

    // A webhook that is gone: 502 to the peer, no delivery recorded.
    recv.abort();
    let _ = recv.await;
    let body2 = json!({"task": {"id": tid, "contextId": cid,
        "status": {"state": "TASK_STATE_FAILED"}}})
    .to_string();
    assert_eq!(post_notify(&sealed, &peer_token, body2).await, 502);

    // Delete removes the sealed callback after the grace (notifications the peer sent before
    // it saw the delete still arrive), then the peer's callback URL is dead.
    let (_, b) = env
        .rpc(
            "/a2a/rust",
            None,
            json!({"jsonrpc":"2.0","id":"d","method":"tasks/pushNotificationConfig/delete",
                "params":{"id": tid, "pushNotificationConfigId": "c1"}}),
        )
        .await;
    assert!(b.get("error").is_none(), "{b}");
    assert_eq!(post_notify(&sealed, &peer_token, body.clone()).await, 200);
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert_eq!(post_notify(&sealed, &peer_token, body).await, 404);

    env.stop().await;
    agent.shutdown().await;
}

#[tokio::test]
async fn without_base_url_push_is_not_available() {
    let agent = rust_push_agent().await;
    let env = gateway(false, false).await;
    env.register("ws1", "rust", agent.url(), None);
    let (tid, _) = open_task(&env).await;
    let (_, b) = env
        .rpc("/a2a/rust", None, set03(&tid, "http://127.0.0.1:9/hook"))
        .await;
    assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
    let mut inline = send03("hi");
    inline["params"]["configuration"] =
        json!({"pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}});
    let (_, b) = env.rpc("/a2a/rust", None, inline).await;
    assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
    env.stop().await;
    agent.shutdown().await;
}

#[tokio::test]
async fn direct_delivery_forwards_the_callers_webhook() {
    let agent = rust_push_agent().await;
    let (hook, _seen, recv) = receiver().await;
    let env = gateway(true, true).await;
    env.register("ws1", "rust", agent.url(), None);
    let (tid, _) = open_task(&env).await;
    let (_, b) = env.rpc("/a2a/rust", None, set03(&tid, &hook)).await;
    assert_eq!(
        b["result"]["pushNotificationConfig"]["url"],
        hook.as_str(),
        "{b}"
    );
    let pc = peer_config(agent.url(), &tid).await;
    assert_eq!(pc["url"], hook.as_str(), "{pc}");
    assert_eq!(pc["token"], "caller-token", "{pc}");
    env.stop().await;
    agent.shutdown().await;
    recv.abort();
}

#[tokio::test]
async fn inline_push_config_on_send_is_sealed() {
    let agent = rust_push_agent().await;
    let (hook, seen, recv) = receiver().await;
    let env = gateway(true, false).await;
    env.register("ws1", "rust", agent.url(), None);
    let mut send = send03("hello inline");
    send["params"]["configuration"] =
        json!({"blocking": true, "pushNotificationConfig": {"url": hook, "token": "inline-token"}});
    let (_, b) = env.rpc("/a2a/rust", None, send).await;
    assert_eq!(b["result"]["status"]["state"], "completed", "{b}");
    let tid = b["result"]["id"].as_str().unwrap().to_owned();
    wait_for(&seen, 1).await;
    for (h, v) in seen.lock().unwrap().iter() {
        assert_eq!(h["x-a2a-notification-token"], "inline-token");
        assert_eq!(h["content-type"], "application/json");
        assert!(v.get("kind").is_some(), "not a 0.3 body: {v}");
    }
    let v: Value = reqwest::Client::new()
        .post(agent.url())
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc":"2.0","id":"l","method":"ListTaskPushNotificationConfigs",
            "params":{"taskId": tid}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let configs = v["result"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 1, "{v}");
    let prefix = format!("{}/a2a/rust/push:notify/", env.gw.base_url());
    assert!(
        configs[0]["url"].as_str().unwrap().starts_with(&prefix),
        "{v}"
    );
    assert!(!v.to_string().contains(&hook), "{v}");
    env.stop().await;
    agent.shutdown().await;
    recv.abort();
}

#[tokio::test]
async fn sealed_push_reaches_a_10_caller_in_10_form() {
    let agent = rust_push_agent().await;
    let (hook, seen, recv) = receiver().await;
    let env = gateway(true, false).await;
    env.register("ws1", "rust", agent.url(), None);
    let (_, b) = env
        .rpc("/a2a/rust", Some("1.0"), send10("input please"))
        .await;
    assert_eq!(
        b["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{b}"
    );
    let tid = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let cid = b["result"]["task"]["contextId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, b) = env
        .rpc(
            "/a2a/rust",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"p","method":"CreateTaskPushNotificationConfig","params":{
                "taskId": tid, "id": "c1", "url": hook, "token": "t10",
                "authentication": {"scheme": "Bearer", "credentials": "cred10"}}}),
        )
        .await;
    assert_eq!(b["result"]["url"], hook.as_str(), "{b}");
    assert_eq!(
        b["result"]["authentication"]["credentials"], "[REDACTED]",
        "{b}"
    );
    assert_eq!(b["result"]["token"], "[REDACTED]", "{b}");
    let pc = peer_config(agent.url(), &tid).await;
    assert!(!pc.to_string().contains(&hook), "{pc}");
    let (_, b) = env
        .rpc(
            "/a2a/rust",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"l","method":"ListTaskPushNotificationConfigs",
                "params":{"taskId": tid}}),
        )
        .await;
    assert_eq!(b["result"]["configs"][0]["url"], hook.as_str(), "{b}");
    let follow = json!({"jsonrpc":"2.0","id":"2","method":"SendMessage","params":{"message":
        {"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","taskId":tid,"contextId":cid,
         "parts":[{"text":"thanks"}]}}});
    let (_, b) = env.rpc("/a2a/rust", Some("1.0"), follow).await;
    assert_eq!(
        b["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{b}"
    );
    wait_for(&seen, 1).await;
    for (h, v) in seen.lock().unwrap().iter() {
        assert_eq!(h["content-type"], "application/a2a+json");
        assert_eq!(h["x-a2a-notification-token"], "t10");
        assert_eq!(h["authorization"], "Bearer cred10");
        assert!(v.get("kind").is_none(), "not a 1.0 body: {v}");
        assert!(
            ["task", "statusUpdate", "artifactUpdate", "message"]
                .iter()
                .any(|k| v.get(*k).is_some()),
            "{v}"
        );
    }
    env.stop().await;
    agent.shutdown().await;
    recv.abort();
}

#[tokio::test]
async fn notification_extension_lists_keep_what_the_workspace_allows() {
    let agent = rust_push_agent().await;
    let (hook, seen, recv) = receiver().await;
    let env = gateway(true, false).await;
    env.register("ws1", "rust", agent.url(), None);
    env.store
        .put_workspace_settings(
            "ws1",
            &a2a_gateway::store::WorkspaceSettings {
                extensions_allowed: vec!["urn:ok".into()],
                push_delivery: None,
            },
        )
        .unwrap();
    let (tid, cid) = open_task(&env).await;
    let (_, b) = env.rpc("/a2a/rust", None, set03(&tid, &hook)).await;
    assert_eq!(b["result"]["pushNotificationConfig"]["url"], hook.as_str());
    let pc = peer_config(agent.url(), &tid).await;
    let (sealed, token) = (
        pc["url"].as_str().unwrap().to_owned(),
        pc["token"].as_str().unwrap().to_owned(),
    );
    // The peer notifies with an artifact listing an allowed and a not allowed extension.
    let body = json!({"task": {"id": tid, "contextId": cid,
        "status": {"state": "TASK_STATE_WORKING"},
        "artifacts": [{"artifactId": "a1", "parts": [{"text": "x"}],
            "extensions": ["urn:ok", "urn:rogue"]}]}})
    .to_string();
    assert_eq!(post_notify(&sealed, &token, body).await, 200);
    wait_for(&seen, 1).await;
    let got = seen.lock().unwrap().clone();
    let delivered = got
        .iter()
        .map(|(_, v)| v)
        .find(|v| v["artifacts"].is_array())
        .expect("the notification with the artifact");
    assert_eq!(
        delivered["artifacts"][0]["extensions"],
        json!(["urn:ok"]),
        "{delivered}"
    );
    assert!(!delivered.to_string().contains("urn:rogue"), "{delivered}");
    env.stop().await;
    agent.shutdown().await;
    recv.abort();
}
