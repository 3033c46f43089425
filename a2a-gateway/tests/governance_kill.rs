//! Session kill with an open stream: the stream ends with one `a2a_session_killed` error event,
//! the peer task is canceled, further sends to the context are refused (both versions), and
//! another workspace's session at the same peer is untouched.

use crate::common;

use std::time::Duration;

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use serde_json::{Value, json};

async fn slow_agent() -> a2a_agent::server::ServerHandle {
    agent_speaking("1.0").await
}

/// The echo agent with a card that offers only JSON-RPC in `version`.
async fn agent_speaking(version: &str) -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": version}]);
    AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// Opens a stream and returns a channel of its events (JSON-RPC objects) as they arrive.
async fn open_stream(
    env: &Env,
    key: &str,
    body: Value,
) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
    open_stream_in(env, key, Some("1.0"), body).await
}

/// [`open_stream`] in the caller's `version` (`None`: 0.3, no header).
async fn open_stream_in(
    env: &Env,
    key: &str,
    version: Option<&str>,
    body: Value,
) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
    let mut req = env
        .http
        .post(env.url("/a2a/slow"))
        .header("content-type", "application/json")
        .bearer_auth(key)
        .body(body.to_string());
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = req.send().await.unwrap();
    crate::common::approval::sse_channel(resp)
}

async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Value>) -> Option<Value> {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .ok()
        .flatten()
}

fn stream_req(ctx: &str) -> Value {
    json!({"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":
        {"messageId": format!("m-{ctx}"),"role":"ROLE_USER","contextId": ctx,"parts":[{"text":"slow please"}]}}})
}

#[tokio::test]
async fn kill_ends_open_stream_cancels_peer_task_and_refuses_the_context() {
    let peer = slow_agent().await;
    let env = env(Version::V1).await;
    env.register("ws1", "slow", peer.url(), None);
    env.register("ws2", "slow", peer.url(), None);
    let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
    let mut s1 = open_stream(&env, &env.key, stream_req("ctx-kill")).await;
    // ws2 uses the same context id at the same peer: not its kill.
    let mut s2 = open_stream(&env, &k2, stream_req("ctx-kill")).await;
    let first = next(&mut s1).await.unwrap();
    let task = first["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert!(next(&mut s2).await.is_some());
    // Wait for the "taking its time" update so the handler is waiting.
    while let Some(ev) = next(&mut s1).await {
        if ev.to_string().contains("taking its time") {
            break;
        }
    }
    // Another workspace cannot kill it (its kill names its own sessions only).
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws2/kill",
        Some(json!({"kind": "task", "id": task, "agentId": "slow"})),
    )
    .await;
    assert_eq!(s, 201);
    assert_eq!(
        b["canceled"][0]["outcome"], "not a task of this workspace: not canceled",
        "{b}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    if let Ok(ev) = tokio::time::timeout(Duration::from_millis(300), s1.recv()).await {
        panic!("ws1 stream touched by ws2's kill: {ev:?}");
    }
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/kill",
        Some(json!({"kind": "context", "id": "ctx-kill", "reason": "runaway"})),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["canceled"][0]["taskId"], task.as_str(), "{b}");
    assert_eq!(b["canceled"][0]["outcome"], "canceled", "{b}");
    // The open stream: exactly one error event, then the end.
    let mut rest = Vec::new();
    let t = std::time::Instant::now();
    while let Some(ev) = next(&mut s1).await {
        rest.push(ev);
    }
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the stream did not end"
    );
    let errors: Vec<_> = rest.iter().filter(|e| e.get("error").is_some()).collect();
    assert_eq!(errors.len(), 1, "{rest:?}");
    assert_eq!(gw_code(errors[0]), "a2a_session_killed", "{rest:?}");
    assert!(rest.last().unwrap().get("error").is_some(), "{rest:?}");
    // The peer task is canceled (asked directly).
    let direct: Value = env
        .http
        .post(peer.url())
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(
            json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": task}}).to_string(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        direct["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{direct}"
    );
    // Further sends to the context are refused, in both versions.
    let mut m = send10("again");
    m["params"]["message"]["contextId"] = json!("ctx-kill");
    let (_, b) = env.rpc("/a2a/slow", Some("1.0"), m).await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    assert_eq!(b["error"]["data"][0]["reason"], "A2A_SESSION_KILLED");
    let mut m = send03("again");
    m["params"]["message"]["contextId"] = json!("ctx-kill");
    let (_, b) = env.rpc("/a2a/slow", None, m).await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    assert_eq!(b["error"]["data"]["type"], "a2a_error");
    // ws2's stream and context are untouched; its own task-level kill did record.
    let mut m = send10("fine");
    m["params"]["message"]["contextId"] = json!("ctx-kill");
    let (_, b) = env.rpc_key("/a2a/slow", Some("1.0"), m, &k2).await;
    assert!(b["result"].is_object(), "{b}");
    // One context kill; the context's task became a task kill too.
    let (_, kills) = admin(&env, "GET", "/admin/workspaces/ws1/kills", None).await;
    let kills = kills.as_array().unwrap().clone();
    assert_eq!(
        kills.iter().filter(|k| k["kind"] == "context").count(),
        1,
        "{kills:?}"
    );
    assert!(
        kills
            .iter()
            .any(|k| k["kind"] == "task" && k["id"] == task.as_str()),
        "{kills:?}"
    );
    // Audited: the kill, with what it canceled.
    let hops = env.store.audit(Some("ws1"), None, 0, 100).unwrap();
    assert!(
        hops.iter()
            .any(|h| h.operation.as_deref() == Some("admin:kill"))
    );
    // ws2 kills its own context: its stream ends the same way.
    let (s, _) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws2/kill",
        Some(json!({"kind": "context", "id": "ctx-kill"})),
    )
    .await;
    assert_eq!(s, 201);
    let mut last = None;
    while let Some(ev) = next(&mut s2).await {
        last = Some(ev);
    }
    assert_eq!(gw_code(&last.unwrap()), "a2a_session_killed");
    env.stop().await;
    peer.shutdown().await;
}

/// GetTask of `id` asked of the peer directly (1.0).
async fn peer_state(env: &Env, peer: &a2a_agent::server::ServerHandle, id: &str) -> Value {
    let direct: Value = env
        .http
        .post(peer.url())
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": id}}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    direct["result"]["status"]["state"].clone()
}

#[tokio::test]
async fn context_kill_reaches_the_contexts_tasks_without_an_open_stream() {
    // A 1.0 peer is asked with ListTasks filtered by context, a 0.3 peer task by task.
    for (version, method) in [("1.0", "ListTasks"), ("0.3", "GetTask")] {
        let peer = agent_speaking(version).await;
        let env = env(Version::V1).await;
        env.register("ws1", "slow", peer.url(), None);
        env.register("ws2", "slow", peer.url(), None);
        let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
        let waiting = |ctx: &str| {
            let mut m = send10("input please");
            m["params"]["message"]["contextId"] = json!(ctx);
            m
        };
        let task_of = |b: &Value| b["result"]["task"]["id"].as_str().unwrap().to_owned();
        let (_, b) = env
            .rpc("/a2a/slow", Some("1.0"), waiting("ctx-quiet"))
            .await;
        assert_eq!(
            b["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{b}"
        );
        let t1 = task_of(&b);
        let (_, b) = env
            .rpc("/a2a/slow", Some("1.0"), waiting("ctx-other"))
            .await;
        let t3 = task_of(&b);
        // ws2 has a task under the same context id at the same peer.
        let (_, b) = env
            .rpc_key("/a2a/slow", Some("1.0"), waiting("ctx-quiet"), &k2)
            .await;
        let t2 = task_of(&b);
        let (s, b) = admin(
            &env,
            "POST",
            "/admin/workspaces/ws1/kill",
            Some(json!({"kind": "context", "id": "ctx-quiet"})),
        )
        .await;
        assert_eq!(s, 201, "{b}");
        let scans = b["scanned"].as_array().unwrap();
        let slow = scans.iter().find(|s| s["agentId"] == "slow").unwrap();
        assert_eq!(slow["method"], method, "{b}");
        assert_eq!(slow["tasks"], json!([t1]), "{version}: {b}");
        assert_eq!(
            b["canceled"],
            json!([{"agentId": "slow", "taskId": t1, "outcome": "canceled"}]),
            "{b}"
        );
        assert_eq!(peer_state(&env, &peer, &t1).await, "TASK_STATE_CANCELED");
        // Requests naming only the task are refused: a send on it, GetTask.
        let mut m = send10("more");
        m["params"]["message"]["taskId"] = json!(t1);
        let (_, b) = env.rpc("/a2a/slow", Some("1.0"), m).await;
        assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
        let get =
            |id: &str| json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": id}});
        let (_, b) = env.rpc("/a2a/slow", Some("1.0"), get(&t1)).await;
        assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
        // The workspace's other context and ws2's task of the same context id are untouched.
        let (_, b) = env.rpc("/a2a/slow", Some("1.0"), get(&t3)).await;
        assert_eq!(
            b["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{b}"
        );
        let (_, b) = env.rpc_key("/a2a/slow", Some("1.0"), get(&t2), &k2).await;
        assert_eq!(
            b["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{b}"
        );
        assert_eq!(
            peer_state(&env, &peer, &t2).await,
            "TASK_STATE_INPUT_REQUIRED"
        );
        env.stop().await;
        peer.shutdown().await;
    }
}

#[tokio::test]
async fn task_kill_ends_a_03_callers_stream_and_refuses_the_task_only() {
    let peer = slow_agent().await;
    let env = env(Version::V1).await;
    env.register("ws1", "slow", peer.url(), None);
    let body = json!({"jsonrpc":"2.0","id":"s","method":"message/stream","params":{"message":
        {"kind":"message","messageId":"m-task-kill","role":"user","contextId":"ctx-task-kill",
         "parts":[{"kind":"text","text":"slow please"}]}}});
    let mut s = open_stream_in(&env, &env.key, None, body).await;
    let first = next(&mut s).await.unwrap();
    assert_eq!(first["result"]["kind"], "task", "{first}");
    let task = first["result"]["id"].as_str().unwrap().to_owned();
    while let Some(ev) = next(&mut s).await {
        if ev.to_string().contains("taking its time") {
            break;
        }
    }
    let (st, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/kill",
        Some(json!({"kind": "task", "id": task, "agentId": "slow", "reason": "stuck"})),
    )
    .await;
    assert_eq!(st, 201, "{b}");
    assert_eq!(
        b["canceled"],
        json!([{"agentId": "slow", "taskId": task, "outcome": "canceled"}]),
        "{b}"
    );
    // The 0.3 stream: one error event in the 0.3 form, then the end.
    let mut rest = Vec::new();
    while let Some(ev) = next(&mut s).await {
        rest.push(ev);
    }
    let errors: Vec<_> = rest.iter().filter(|e| e.get("error").is_some()).collect();
    assert_eq!(errors.len(), 1, "{rest:?}");
    assert_eq!(errors[0]["error"]["data"]["type"], "a2a_error", "{rest:?}");
    assert_eq!(gw_code(errors[0]), "a2a_session_killed", "{rest:?}");
    assert!(rest.last().unwrap().get("error").is_some(), "{rest:?}");
    assert_eq!(peer_state(&env, &peer, &task).await, "TASK_STATE_CANCELED");
    // The task is refused (0.3 tasks/get, a 1.0 send into it); its context is not killed.
    let (_, b) = env
        .rpc(
            "/a2a/slow",
            None,
            json!({"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"id": task}}),
        )
        .await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    let mut m = send10("more");
    m["params"]["message"]["taskId"] = json!(task);
    let (_, b) = env.rpc("/a2a/slow", Some("1.0"), m).await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    let mut m = send03("same context, new task");
    m["params"]["message"]["contextId"] = json!("ctx-task-kill");
    let (_, b) = env.rpc("/a2a/slow", None, m).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let (_, kills) = admin(&env, "GET", "/admin/workspaces/ws1/kills", None).await;
    assert_eq!(
        kills
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["kind"].clone(), k["id"].clone()))
            .collect::<Vec<_>>(),
        vec![(json!("task"), json!(task))],
        "{kills}"
    );
    env.stop().await;
    peer.shutdown().await;
}
