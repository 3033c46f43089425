//! Caller version x binding against peer version: what the gateway does where the two versions
//! differ (docs/gateway/peers.md, "Pairings"). The peers are our agent with the reference behaviour
//! (`a2a-agent/tests/common/reference.rs`), its card offering JSON-RPC 0.3 only (a 0.3 peer) or
//! JSON-RPC 1.0 only (a 1.0 peer).
//!
//! - history lengths mean what the caller's version says: 1.0 `0` = no history, 0.3 `0` = no
//!   limit, on GetTask and SendMessage, JSON-RPC and HTTP+JSON, to both peers;
//! - a 1.0 SubscribeToTask at a 0.3 peer starts with the Task; on a terminal task it is
//!   UnsupportedOperationError;
//! - ListTasks at a 0.3 peer is served from the gateway's records: owner only, filters, paging,
//!   tasks the peer forgot left out;
//! - a 0.3 JSON-RPC streaming call that fails is one SSE error event;
//! - caller paths with a trailing slash are served.

use crate::common;
// The reference behaviour, loaded once by the SDK table module.
use crate::interop_table::reference;

use a2a_agent::{AgentCard, AgentConfig, AgentServer};
use a2a_gateway::errors::Version;
use common::*;
use serde_json::{Value, json};

/// The reference agent, its card offering one JSON-RPC interface of `version`.
async fn peer(version: &str) -> a2a_agent::server::ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let mut card = reference::card("reference").json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": version}]);
    let cfg = AgentConfig {
        validate_auth: false,
        ..AgentConfig::default()
    };
    AgentServer::new(AgentCard::from_json(card).unwrap(), reference::handler())
        .config(cfg)
        .serve(l)
        .await
        .unwrap()
}

fn msg10(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

fn msg03(text: &str) -> Value {
    json!({"kind": "message", "messageId": uuid::Uuid::new_v4().to_string(), "role": "user",
        "parts": [{"kind": "text", "text": text}]})
}

fn rpc(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// A 1.0 JSON-RPC call through the gateway; the `result` (panics on an error).
async fn call10(env: &Env, agent: &str, method: &str, params: Value) -> Value {
    let (_, b) = env
        .rpc(&format!("/a2a/{agent}"), Some("1.0"), rpc(method, params))
        .await;
    assert!(b.get("error").is_none(), "{method}: {b}");
    b["result"].clone()
}

/// A GET on the HTTP+JSON binding (`version` None: the 0.3 dialect); (status, body).
async fn get(env: &Env, path: &str, version: Option<&str>) -> (u16, Value) {
    let mut req = env.http.get(env.url(path)).bearer_auth(&env.key);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = req.send().await.unwrap();
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

fn hist(task: &Value) -> usize {
    task["history"].as_array().map(Vec::len).unwrap_or(0)
}

/// A task of the reference agent with a history of at least three messages: a report (asks
/// for a format, input-required) answered with "csv" (completed).
async fn long_task(env: &Env, agent: &str) -> String {
    let t = call10(
        env,
        agent,
        "SendMessage",
        json!({"message": msg10("a report")}),
    )
    .await;
    let id = t["task"]["id"].as_str().unwrap().to_owned();
    let mut answer = msg10("csv");
    answer["taskId"] = json!(id);
    let t = call10(env, agent, "SendMessage", json!({"message": answer})).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{t}");
    id
}

#[tokio::test]
async fn history_lengths_mean_what_the_callers_version_says() {
    let p03 = peer("0.3").await;
    let p10 = peer("1.0").await;
    let env = env(Version::V1).await;
    env.register("ws1", "p03", p03.url(), None);
    env.register("ws1", "p10", p10.url(), None);
    for agent in ["p03", "p10"] {
        let id = long_task(&env, agent).await;
        let all = call10(&env, agent, "GetTask", json!({"id": id})).await;
        let n = hist(&all);
        assert!(n >= 3, "{agent}: {all}");
        // 1.0 JSON-RPC: 0 is no history, N at most N.
        let t = call10(
            &env,
            agent,
            "GetTask",
            json!({"id": id, "historyLength": 0}),
        )
        .await;
        assert!(t.get("history").is_none(), "{agent}: {t}");
        let t = call10(
            &env,
            agent,
            "GetTask",
            json!({"id": id, "historyLength": 1}),
        )
        .await;
        assert_eq!(hist(&t), 1, "{agent}: {t}");
        assert_eq!(
            t["history"][0],
            all["history"][n - 1],
            "{agent}: the newest kept"
        );
        // 1.0 HTTP+JSON.
        let (s, t) = get(
            &env,
            &format!("/a2a/{agent}/v1/tasks/{id}?historyLength=0"),
            Some("1.0"),
        )
        .await;
        assert_eq!(s, 200, "{t}");
        assert!(t.get("history").is_none(), "{agent}: {t}");
        // 0.3 JSON-RPC: 0 is no limit.
        let (_, b) = env
            .rpc(
                &format!("/a2a/{agent}"),
                None,
                rpc("tasks/get", json!({"id": id, "historyLength": 0})),
            )
            .await;
        assert_eq!(hist(&b["result"]), n, "{agent}: {b}");
        let (_, b) = env
            .rpc(
                &format!("/a2a/{agent}"),
                None,
                rpc("tasks/get", json!({"id": id, "historyLength": 2})),
            )
            .await;
        assert_eq!(hist(&b["result"]), 2, "{agent}: {b}");
        // 0.3 HTTP+JSON (no A2A-Version): 0 is no limit.
        let (s, t) = get(
            &env,
            &format!("/a2a/{agent}/v1/tasks/{id}?historyLength=0"),
            None,
        )
        .await;
        assert_eq!(s, 200, "{t}");
        assert_eq!(hist(&t), n, "{agent}: {t}");
        // SendMessage: 1.0 0 answers the task without history, 0.3 0 with all of it.
        let t = call10(
            &env,
            agent,
            "SendMessage",
            json!({"message": msg10("another report"), "configuration": {"historyLength": 0}}),
        )
        .await;
        assert_eq!(t["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert!(t["task"].get("history").is_none(), "{agent}: {t}");
        let (_, b) = env
            .rpc(
                &format!("/a2a/{agent}"),
                None,
                rpc(
                    "message/send",
                    json!({"message": msg03("a third report"), "configuration": {"historyLength": 0}}),
                ),
            )
            .await;
        assert_eq!(b["result"]["kind"], "task", "{b}");
        assert!(hist(&b["result"]) >= 1, "{agent}: {b}");
        // A streamed send: the Task event follows the limit too.
        let (_, _, events) = env
            .sse(
                &format!("/a2a/{agent}"),
                Some("1.0"),
                rpc(
                    "SendStreamingMessage",
                    json!({"message": msg10("a streamed report"), "configuration": {"historyLength": 0}}),
                ),
            )
            .await;
        let tasks: Vec<&Value> = events
            .iter()
            .filter_map(|e| e["result"].get("task"))
            .collect();
        assert!(!tasks.is_empty(), "{agent}: {events:?}");
        assert!(
            tasks.iter().all(|t| t.get("history").is_none()),
            "{agent}: {events:?}"
        );
    }
    env.stop().await;
    p03.shutdown().await;
    p10.shutdown().await;
}

/// Reads SSE `data:` events from `resp` until `n` have arrived (bounded by the stream's end).
async fn read_events(resp: &mut reqwest::Response, buf: &mut String, n: usize) -> Vec<Value> {
    loop {
        let events: Vec<Value> = buf
            .split("\n\n")
            .filter_map(|e| {
                let d: String = e
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .collect();
                serde_json::from_str(&d).ok()
            })
            .collect();
        if events.len() >= n {
            return events;
        }
        match tokio::time::timeout(std::time::Duration::from_secs(20), resp.chunk()).await {
            Ok(Ok(Some(c))) => buf.push_str(&String::from_utf8_lossy(&c)),
            _ => return events,
        }
    }
}

#[tokio::test]
async fn subscribe_starts_with_the_task_at_a_03_peer() {
    let p03 = peer("0.3").await;
    let env = env(Version::V1).await;
    env.register("ws1", "p03", p03.url(), None);
    // The 0.3 HTTP+JSON caller (no A2A-Version) runs as a 1.0 call and gets the task first too.
    for binding in ["JSONRPC", "HTTP+JSON", "HTTP+JSON 0.3"] {
        let t = call10(
            &env,
            "p03",
            "SendMessage",
            json!({"message": msg10("slow job"), "configuration": {"returnImmediately": true}}),
        )
        .await;
        let id = t["task"]["id"].as_str().unwrap().to_owned();
        let mut req = if binding == "JSONRPC" {
            env.http
                .post(env.url("/a2a/p03"))
                .header("content-type", "application/json")
                .body(rpc("SubscribeToTask", json!({"id": id})).to_string())
        } else {
            env.http
                .post(env.url(&format!("/a2a/p03/v1/tasks/{id}:subscribe")))
        };
        if binding != "HTTP+JSON 0.3" {
            req = req.header("A2A-Version", "1.0");
        }
        let mut resp = req.bearer_auth(&env.key).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{binding}");
        let mut buf = String::new();
        let first = read_events(&mut resp, &mut buf, 1).await;
        let first = first.first().cloned().unwrap_or(Value::Null);
        let task = if binding == "JSONRPC" {
            &first["result"]["task"]
        } else {
            &first["task"]
        };
        assert_eq!(task["id"], json!(id), "{binding}: the Task first: {first}");
        assert!(
            ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]
                .contains(&task["status"]["state"].as_str().unwrap_or("")),
            "{binding}: {first}"
        );
        // Live events follow, up to the terminal one.
        let c = call10(&env, "p03", "CancelTask", json!({"id": id})).await;
        assert_eq!(c["status"]["state"], "TASK_STATE_CANCELED", "{c}");
        let all = read_events(&mut resp, &mut buf, usize::MAX).await;
        let last = all.last().cloned().unwrap_or(Value::Null);
        // (the 0.3 proto spells it TASK_STATE_CANCELLED)
        assert!(
            last.to_string().contains("TASK_STATE_CANCEL"),
            "{binding}: {all:?}"
        );
        // A terminal task: UnsupportedOperationError, before any stream.
        let (_, b) = env
            .rpc(
                "/a2a/p03",
                Some("1.0"),
                rpc("SubscribeToTask", json!({"id": id})),
            )
            .await;
        assert_eq!(b["error"]["code"], -32004, "{b}");
        assert_eq!(
            b["error"]["data"][0]["reason"], "UNSUPPORTED_OPERATION",
            "{b}"
        );
    }
    env.stop().await;
    p03.shutdown().await;
}

#[tokio::test]
async fn list_tasks_at_a_03_peer_from_the_gateways_records() {
    let p03 = peer("0.3").await;
    let env = env(Version::V1).await;
    env.register("ws1", "p03", p03.url(), None);
    env.register("ws2", "p03", p03.url(), None);
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    // Mine: two reports in context "c-a" (input-required), one failure in "c-b".
    let mut mine = vec![];
    for (text, ctx) in [
        ("report one", "c-a"),
        ("fail now", "c-b"),
        ("report two", "c-a"),
    ] {
        let mut m = msg10(text);
        m["contextId"] = json!(ctx);
        let t = call10(&env, "p03", "SendMessage", json!({"message": m})).await;
        mine.push(t["task"]["id"].as_str().unwrap().to_owned());
    }
    // Another workspace's task at the same peer, and a record the peer does not know.
    let (_, b) = env
        .rpc_key(
            "/a2a/p03",
            Some("1.0"),
            rpc("SendMessage", json!({"message": msg10("report b")})),
            &key_b,
        )
        .await;
    let theirs = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    bind_task(&env, p03.url(), "forgotten-by-the-peer", "p03");

    let list = |p: Value| call10(&env, "p03", "ListTasks", p);
    let ids = |r: &Value| -> Vec<String> {
        r["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = list(json!({})).await;
    assert_eq!(all["totalSize"], 3, "{all}");
    assert_eq!(all["nextPageToken"], "", "{all}");
    let mut got = ids(&all);
    assert!(!got.contains(&theirs));
    // Newest status first.
    let stamps: Vec<&str> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "{stamps:?}");
    // Artifacts only when asked for; history as the caller's version says.
    assert!(
        all["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("artifacts").is_none())
    );
    let with = list(json!({"includeArtifacts": true, "historyLength": 0})).await;
    assert!(with["tasks"].to_string().contains("report.txt"), "{with}");
    assert!(
        with["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("history").is_none())
    );
    // Filters.
    let a = list(json!({"contextId": "c-a"})).await;
    let mut want = vec![mine[0].clone(), mine[2].clone()];
    let mut got_a = ids(&a);
    got_a.sort();
    want.sort();
    assert_eq!(got_a, want, "{a}");
    let failed = list(json!({"status": "TASK_STATE_FAILED"})).await;
    assert_eq!(ids(&failed), vec![mine[1].clone()], "{failed}");
    let later = list(json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"})).await;
    assert_eq!(later["totalSize"], 0, "{later}");
    // Paging: pages of two, every task once, in the same order.
    let mut paged = vec![];
    let mut token = String::new();
    for _ in 0..5 {
        let r = list(json!({"pageSize": 2, "pageToken": token})).await;
        assert_eq!(r["pageSize"], 2);
        paged.extend(ids(&r));
        token = r["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(paged, got, "pages");
    let (_, b) = env
        .rpc(
            "/a2a/p03",
            Some("1.0"),
            rpc("ListTasks", json!({"pageToken": "gw1.1.deadbeef.00"})),
        )
        .await;
    assert_eq!(b["error"]["code"], -32602, "{b}");
    // HTTP+JSON 1.0.
    let (s, r) = get(
        &env,
        "/a2a/p03/v1/tasks?contextId=c-a&pageSize=1",
        Some("1.0"),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["totalSize"], 2, "{r}");
    assert_eq!(r["tasks"].as_array().unwrap().len(), 1, "{r}");
    // A 0.3 JSON-RPC caller's ListTasks (`POST .../tasks:list`: the 1.0 shape, 0.3 tasks).
    let (_, b) = env
        .rpc(
            "/a2a/p03/tasks:list",
            None,
            json!({"jsonrpc": "2.0", "id": 1, "params": {"contextId": "c-a"}}),
        )
        .await;
    assert_eq!(b["result"]["totalSize"], 2, "{b}");
    assert_eq!(b["result"]["tasks"][0]["kind"], "task", "{b}");
    // ... and at a 1.0 peer (its ListTasks answer, 0.3 tasks).
    let p10 = peer("1.0").await;
    env.register("ws1", "p10", p10.url(), None);
    let t = call10(
        &env,
        "p10",
        "SendMessage",
        json!({"message": msg10("report ten")}),
    )
    .await;
    let (_, b) = env
        .rpc(
            "/a2a/p10/tasks:list",
            None,
            json!({"jsonrpc": "2.0", "id": 1, "params": {}}),
        )
        .await;
    assert_eq!(b["result"]["totalSize"], 1, "{b}");
    assert_eq!(b["result"]["tasks"][0]["id"], t["task"]["id"], "{b}");
    assert_eq!(
        b["result"]["tasks"][0]["status"]["state"], "input-required",
        "{b}"
    );
    p10.shutdown().await;
    // The other workspace sees its own task only.
    let (_, b) = env
        .rpc_key("/a2a/p03", Some("1.0"), rpc("ListTasks", json!({})), &key_b)
        .await;
    assert_eq!(b["result"]["totalSize"], 1, "{b}");
    assert_eq!(b["result"]["tasks"][0]["id"], json!(theirs), "{b}");
    got.sort();
    mine.sort();
    assert_eq!(got, mine);
    env.stop().await;
    p03.shutdown().await;
}

#[tokio::test]
async fn failed_03_streaming_calls_are_one_sse_error_event() {
    let env = env(Version::V1).await;
    let ghost = json!({"id": "never-was"});
    for (method, params) in [
        ("tasks/resubscribe", ghost.clone()),
        (
            "message/stream",
            json!({"message": {"kind": "message", "messageId": "m", "role": "user",
                "taskId": "never-was", "parts": [{"kind": "text", "text": "hi"}]}}),
        ),
    ] {
        let (s, ct, events) = env.sse("/a2a/echo", None, rpc(method, params)).await;
        assert_eq!(s, 200, "{method}");
        assert!(ct.starts_with("text/event-stream"), "{method}: {ct}");
        assert_eq!(events.len(), 1, "{method}: {events:?}");
        assert_eq!(events[0]["id"], 1, "{method}: {events:?}");
        assert_eq!(events[0]["error"]["code"], -32001, "{method}: {events:?}");
    }
    // A 1.0 caller's refusal stays plain JSON (S1 §9: the error response).
    let (_, ct, _) = env
        .sse("/a2a/echo", Some("1.0"), rpc("SubscribeToTask", ghost))
        .await;
    assert!(ct.starts_with("application/json"), "{ct}");
    env.stop().await;
}

#[tokio::test]
async fn caller_paths_with_a_trailing_slash_are_served() {
    let env = env(Version::V1).await;
    let (s, b) = env.rpc("/a2a/echo/", Some("1.0"), send10("slash")).await;
    assert_eq!(s, 200, "{b}");
    let id = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (s, b) = env.rpc("/a2a/echo/", None, send03("slash")).await;
    assert_eq!(
        (s, b["result"]["kind"].clone()),
        (200, json!("task")),
        "{b}"
    );
    let (s, t) = get(&env, &format!("/a2a/echo/v1/tasks/{id}/"), Some("1.0")).await;
    assert_eq!((s, t["id"].clone()), (200, json!(id)), "{t}");
    let (s, b) = env
        .rpc(
            "/a2a/echo/v1/message:send/",
            Some("1.0"),
            json!({"message": msg10("slash")}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert!(b["task"]["id"].is_string(), "{b}");
    // Still a 404 in A2A form where nothing is routed.
    let (s, b) = env.rpc("/a2a/", Some("1.0"), send10("x")).await;
    assert_eq!(s, 404, "{b}");
    env.stop().await;
}
