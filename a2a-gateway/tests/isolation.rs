//! Workspace isolation: two workspaces register the same peer (our Rust agent); with A's key,
//! every task operation on B's task answers byte-for-byte like the same call on a task id that
//! never existed, in JSON-RPC 0.3, JSON-RPC 1.0 and HTTP+JSON 1.0. ListTasks shows only the
//! caller's own tasks, paged correctly.

use crate::common;

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_gateway::errors::Version;
use common::*;
use serde_json::{Value, json};

const TRACE: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

pub(crate) async fn rust_agent() -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    card["capabilities"]["pushNotifications"] = json!(true);
    AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// One raw call: (status, content type, body bytes), with a fixed traceparent.
pub(crate) async fn raw(
    env: &Env,
    method: reqwest::Method,
    path: &str,
    version: Option<&str>,
    key: &str,
    body: Option<Value>,
) -> (u16, String, Vec<u8>) {
    let mut req = env
        .http
        .request(method, env.url(path))
        .bearer_auth(key)
        .header("traceparent", TRACE);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, ct, resp.bytes().await.unwrap().to_vec())
}

fn msg03(task: &str) -> Value {
    json!({"kind":"message","messageId": uuid::Uuid::new_v4().to_string(),"role":"user","taskId":task,"parts":[{"kind":"text","text":"hi"}]})
}

fn msg10(task: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","taskId":task,"parts":[{"text":"hi"}]})
}

/// One probe: (label, method, path, version, body).
type Call = (
    String,
    reqwest::Method,
    String,
    Option<&'static str>,
    Option<Value>,
);

/// Every task operation on `task` in every binding.
fn calls(agent: &str, task: &str) -> Vec<Call> {
    use reqwest::Method;
    let rpc = format!("/a2a/{agent}");
    let r = |m: &str, p: Value| json!({"jsonrpc":"2.0","id":7,"method":m,"params":p});
    let hook = "https://8.8.8.8/a2a";
    let mut out = vec![];
    for (m, p) in [
        ("tasks/get", json!({"id": task})),
        ("tasks/cancel", json!({"id": task})),
        ("tasks/resubscribe", json!({"id": task})),
        ("message/send", json!({"message": msg03(task)})),
        ("message/stream", json!({"message": msg03(task)})),
        (
            "tasks/pushNotificationConfig/set",
            json!({"taskId": task, "pushNotificationConfig": {"id": "cfg", "url": hook}}),
        ),
        (
            "tasks/pushNotificationConfig/get",
            json!({"id": task, "pushNotificationConfigId": "cfg"}),
        ),
        ("tasks/pushNotificationConfig/list", json!({"id": task})),
        (
            "tasks/pushNotificationConfig/delete",
            json!({"id": task, "pushNotificationConfigId": "cfg"}),
        ),
    ] {
        out.push((
            format!("0.3 {m}"),
            Method::POST,
            rpc.clone(),
            None,
            Some(r(m, p)),
        ));
    }
    for (m, p) in [
        ("GetTask", json!({"id": task})),
        ("CancelTask", json!({"id": task})),
        ("SubscribeToTask", json!({"id": task})),
        ("SendMessage", json!({"message": msg10(task)})),
        ("SendStreamingMessage", json!({"message": msg10(task)})),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg", "url": hook}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg"}),
        ),
    ] {
        out.push((
            format!("1.0 {m}"),
            Method::POST,
            rpc.clone(),
            Some("1.0"),
            Some(r(m, p)),
        ));
    }
    let v1 = format!("/a2a/{agent}/v1");
    let rest = [
        ("GET task", Method::GET, format!("{v1}/tasks/{task}"), None),
        (
            "POST cancel",
            Method::POST,
            format!("{v1}/tasks/{task}:cancel"),
            Some(json!({})),
        ),
        (
            "POST subscribe",
            Method::POST,
            format!("{v1}/tasks/{task}:subscribe"),
            None,
        ),
        (
            "POST send",
            Method::POST,
            format!("{v1}/message:send"),
            Some(json!({"message": msg10(task)})),
        ),
        (
            "POST stream",
            Method::POST,
            format!("{v1}/message:stream"),
            Some(json!({"message": msg10(task)})),
        ),
        (
            "POST push",
            Method::POST,
            format!("{v1}/tasks/{task}/pushNotificationConfigs"),
            Some(json!({"id": "cfg", "url": hook})),
        ),
        (
            "GET push",
            Method::GET,
            format!("{v1}/tasks/{task}/pushNotificationConfigs/cfg"),
            None,
        ),
        (
            "GET push list",
            Method::GET,
            format!("{v1}/tasks/{task}/pushNotificationConfigs"),
            None,
        ),
        (
            "DELETE push",
            Method::DELETE,
            format!("{v1}/tasks/{task}/pushNotificationConfigs/cfg"),
            None,
        ),
    ];
    for (l, m, p, b) in rest {
        out.push((format!("HTTP+JSON {l}"), m, p, Some("1.0"), b));
    }
    out
}

/// A task created by `key` through `agent`; returns its id.
pub(crate) async fn create(env: &Env, agent: &str, key: &str) -> String {
    let (s, _, b) = raw(
        env,
        reqwest::Method::POST,
        &format!("/a2a/{agent}"),
        Some("1.0"),
        key,
        Some(send10("make a task")),
    )
    .await;
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(s, 200, "{v}");
    v["result"]["task"]["id"].as_str().unwrap().to_owned()
}

/// With `key` through `agent`, every operation on `foreign` answers exactly like on a ghost.
pub(crate) async fn assert_like_missing(env: &Env, agent: &str, key: &str, foreign: &str) {
    let ghost = format!("never-{}", uuid::Uuid::new_v4());
    let a = calls(agent, foreign);
    let g = calls(agent, &ghost);
    for ((label, m, p, v, b), (_, gm, gp, gv, gb)) in a.into_iter().zip(g) {
        let got = raw(env, m, &p, v, key, b).await;
        let want = raw(env, gm, &gp, gv, key, gb).await;
        let show = |r: &(u16, String, Vec<u8>)| {
            format!("{} {} {}", r.0, r.1, String::from_utf8_lossy(&r.2))
        };
        assert_eq!(show(&got), show(&want), "{agent} {label}");
        let body = String::from_utf8_lossy(&got.2);
        assert!(
            body.contains("-32001") || body.contains("NOT_FOUND"),
            "{agent} {label}: {body}"
        );
        assert!(
            !body.contains(foreign),
            "{agent} {label} leaks the id: {body}"
        );
        // A 0.3 JSON-RPC streaming method answers its refusal as one SSE event.
        let sse = label == "0.3 tasks/resubscribe" || label == "0.3 message/stream";
        assert_eq!(
            got.1.starts_with("text/event-stream"),
            sse,
            "{agent} {label}: {}",
            got.1
        );
    }
}

#[tokio::test]
async fn foreign_tasks_answer_like_missing_ones() {
    let agent = rust_agent().await;
    let env = env(Version::V1).await;
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    // Same peer, same agentId in both workspaces; and under two more agentIds.
    env.register("ws1", "shared", agent.url(), None);
    env.register("ws2", "shared", agent.url(), None);
    env.register("ws1", "alpha", agent.url(), None);
    env.register("ws2", "beta", agent.url(), None);

    let b_task = create(&env, "shared", &key_b).await;
    // B's push config on its task (direct delivery in this harness).
    let (s, _, body) = raw(
        &env,
        reqwest::Method::POST,
        "/a2a/shared",
        Some("1.0"),
        &key_b,
        Some(json!({"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig",
            "params":{"taskId": b_task, "id": "cfg", "url": "https://8.8.8.8/a2a", "token": "b-secret"}})),
    )
    .await;
    assert_eq!(s, 200);
    let set: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(set["result"]["id"], "cfg", "{set}");
    // Control: B reaches its own task and config.
    let (_, _, body) = raw(
        &env,
        reqwest::Method::POST,
        "/a2a/shared",
        Some("1.0"),
        &key_b,
        Some(json!({"jsonrpc":"2.0","id":1,"method":"ListTaskPushNotificationConfigs","params":{"taskId": b_task}})),
    )
    .await;
    // (Its token is shown as set, never its value: issue 39.)
    let listed = String::from_utf8_lossy(&body);
    assert!(
        listed.contains("\"cfg\"") && listed.contains("[REDACTED]"),
        "{listed}"
    );
    assert!(!listed.contains("b-secret"), "{listed}");

    // A, same agentId.
    assert_like_missing(&env, "shared", &env.key, &b_task).await;
    // A, another agentId at the same peer.
    assert_like_missing(&env, "alpha", &env.key, &b_task).await;
    // B's task through B's other registration: ownership is per agentId too.
    assert_like_missing(&env, "beta", &key_b, &b_task).await;
    // A's own task through A's other registration.
    let a_task = create(&env, "alpha", &env.key).await;
    assert_like_missing(&env, "shared", &env.key, &a_task).await;

    // B's task is untouched: still there, config intact.
    let (_, _, body) = raw(
        &env,
        reqwest::Method::POST,
        "/a2a/shared",
        Some("1.0"),
        &key_b,
        Some(json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id": b_task}})),
    )
    .await;
    let got: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(got["result"]["id"], json!(b_task), "{got}");
    env.stop().await;
    agent.shutdown().await;
}

#[tokio::test]
async fn list_tasks_shows_own_tasks_with_paging() {
    let agent = rust_agent().await;
    let env = env(Version::V1).await;
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws1", "shared", agent.url(), None);
    env.register("ws2", "shared", agent.url(), None);
    let mut mine = vec![];
    for i in 0..8 {
        if i % 3 == 0 && mine.len() < 3 {
            mine.push(create(&env, "shared", &env.key).await);
        } else {
            create(&env, "shared", &key_b).await;
        }
    }
    while mine.len() < 3 {
        mine.push(create(&env, "shared", &env.key).await);
    }
    mine.sort();
    // JSON-RPC 1.0.
    let mut seen = vec![];
    let mut token = String::new();
    for page in 0.. {
        let (_, _, body) = raw(
            &env,
            reqwest::Method::POST,
            "/a2a/shared",
            Some("1.0"),
            &env.key,
            Some(json!({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize": 2, "pageToken": token}})),
        )
        .await;
        let v: Value = serde_json::from_slice(&body).unwrap();
        let r = &v["result"];
        assert_eq!(r["totalSize"], 3, "{v}");
        let tasks = r["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), if page == 0 { 2 } else { 1 }, "{v}");
        seen.extend(tasks.iter().map(|t| t["id"].as_str().unwrap().to_owned()));
        token = r["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
        assert!(page < 3, "paging does not end");
    }
    seen.sort();
    assert_eq!(seen, mine);
    // HTTP+JSON.
    let (s, _, body) = raw(
        &env,
        reqwest::Method::GET,
        "/a2a/shared/v1/tasks?pageSize=2",
        Some("1.0"),
        &env.key,
        None,
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(v["totalSize"], 3);
    let next = v["nextPageToken"].as_str().unwrap().to_owned();
    // A page token is bound to its workspace: B cannot page with A's token.
    let (_, _, body) = raw(
        &env,
        reqwest::Method::GET,
        &format!("/a2a/shared/v1/tasks?pageSize=2&pageToken={next}"),
        Some("1.0"),
        &key_b,
        None,
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(v.get("tasks").is_none(), "{v}");
    // B sees its 5.
    let (_, _, body) = raw(
        &env,
        reqwest::Method::GET,
        "/a2a/shared/v1/tasks",
        Some("1.0"),
        &key_b,
        None,
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["totalSize"], 5, "{v}");
    assert!(
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !mine.contains(&t["id"].as_str().unwrap().to_owned()))
    );
    env.stop().await;
    agent.shutdown().await;
}
