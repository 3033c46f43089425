//! The gateway in front of a gRPC-only peer (issue 17): the official a2a-sdk 1.x agent with
//! `--grpc only` (its card lists the 1.0 gRPC interface alone), called through the gateway by
//! JSON-RPC and HTTP+JSON callers of both versions. Send, stream, get, cancel and a peer error
//! by hand (each hop recorded as a gRPC call), then the agent's table of official SDK checks
//! (six clients) unchanged through the gateway, as for the HTTP peers in `interop_peers.rs`.

use crate::common::*;
use crate::interop_table::table;
use a2a_gateway::errors::Version;
use conformance::interop::{self, PyAgent, Sdk};
use serde_json::{Value, json};

async fn grpc_only_agent() -> PyAgent {
    grpc_only_agent_of(Sdk::V1).await
}

async fn grpc_only_agent_of(sdk: Sdk) -> PyAgent {
    tokio::task::spawn_blocking(move || PyAgent::start_with(sdk, &["--grpc", "only"]))
        .await
        .unwrap()
        .unwrap()
}

/// A REST call through the gateway: `(status, body)`.
async fn rest(
    env: &Env,
    method: reqwest::Method,
    path: &str,
    version: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = env
        .http
        .request(method, env.url(path))
        .bearer_auth(&env.key)
        .header("A2A-Version", version)
        .header("content-type", "application/json");
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn msg10(text: &str) -> Value {
    json!({"message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

fn msg03(text: &str) -> Value {
    json!({"message": {"kind": "message", "messageId": format!("m-{text}"), "role": "user",
        "parts": [{"kind": "text", "text": text}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_of_both_versions_and_bindings_reach_a_grpc_only_peer() {
    interop::ensure_venvs_async().await.unwrap();
    let agent = grpc_only_agent().await;
    let env = env(Version::V1).await;
    env.register("ws1", "g", agent.url(), None);

    // JSON-RPC 1.0: send, get, a peer error.
    let rpc10 = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (s, b) = env
        .rpc("/a2a/g", Some("1.0"), rpc10("SendMessage", msg10("hello")))
        .await;
    assert_eq!(s, 200, "{b}");
    let task = &b["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{b}");
    let id = task["id"].as_str().unwrap().to_owned();
    let (_, b) = env
        .rpc("/a2a/g", Some("1.0"), rpc10("GetTask", json!({"id": id})))
        .await;
    assert_eq!(b["result"]["id"], id.as_str(), "{b}");
    let (_, b) = env
        .rpc(
            "/a2a/g",
            Some("1.0"),
            rpc10("GetTask", json!({"id": "no-such-task"})),
        )
        .await;
    assert_eq!(
        b["error"]["code"], -32001,
        "the peer's NOT_FOUND status: {b}"
    );

    // JSON-RPC 0.3: send, stream, a peer error (in the 0.3 form).
    let (_, b) = env.rpc("/a2a/g", Some("0.3"), send03("hi from 0.3")).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    assert_eq!(b["result"]["status"]["state"], "completed", "{b}");
    let stream03 =
        json!({"jsonrpc": "2.0", "id": 2, "method": "message/stream", "params": msg03("streamed")});
    let (s, ct, events) = env.sse("/a2a/g", Some("0.3"), stream03).await;
    assert_eq!(s, 200);
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    assert!(events.len() >= 2, "{events:?}");
    let last = &events.last().unwrap()["result"];
    assert_eq!(last["kind"], "status-update", "{events:?}");
    assert_eq!(last["status"]["state"], "completed", "{events:?}");
    assert_eq!(last["final"], true, "{events:?}");
    let (_, b) = env
        .rpc("/a2a/g", Some("0.3"), json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "no-such-task"}}))
        .await;
    assert_eq!(b["error"]["code"], -32001, "{b}");

    // HTTP+JSON 1.0: send, stream, get, cancel of a finished task (the peer's error).
    let (s, b) = rest(
        &env,
        reqwest::Method::POST,
        "/a2a/g/v1/message:send",
        "1.0",
        Some(msg10("rest")),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let rid = b["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{b}"))
        .to_owned();
    let (s, b) = rest(
        &env,
        reqwest::Method::GET,
        &format!("/a2a/g/v1/tasks/{rid}"),
        "1.0",
        None,
    )
    .await;
    assert_eq!((s, b["id"].as_str()), (200, Some(rid.as_str())), "{b}");
    let (s, b) = rest(
        &env,
        reqwest::Method::POST,
        &format!("/a2a/g/v1/tasks/{rid}:cancel"),
        "1.0",
        Some(json!({})),
    )
    .await;
    assert_eq!(s, 400, "a completed task is not cancelable: {b}");
    assert_eq!(
        b["error"]["details"][0]["reason"], "TASK_NOT_CANCELABLE",
        "{b}"
    );
    let (s, b) = rest(
        &env,
        reqwest::Method::GET,
        "/a2a/g/v1/tasks/no-such-task",
        "1.0",
        None,
    )
    .await;
    assert_eq!(s, 404, "{b}");

    // HTTP+JSON 0.3 (served as 1.0 by the gateway's 0.3 REST edge): send.
    let (s, b) = rest(
        &env,
        reqwest::Method::POST,
        "/a2a/g/v1/message:send",
        "0.3",
        // 0.3 HTTP+JSON is the 0.3 proto's ProtoJSON.
        Some(json!({"message": {"messageId": "m-rest03", "role": "ROLE_USER", "content": [{"text": "rest03"}]}})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{b}");

    // Every hop went to the peer over gRPC.
    let hops = env.store.audit(Some("ws1"), Some("g"), 0, 1000).unwrap();
    assert!(!hops.is_empty());
    for h in hops.iter().filter(|h| h.peer_binding.is_some()) {
        assert_eq!(h.peer_binding.as_deref(), Some("GRPC"), "{h:?}");
    }
    assert!(
        hops.iter()
            .any(|h| h.peer_method.as_deref() == Some("GRPC SendStreamingMessage")),
        "{hops:#?}"
    );
    env.stop().await;
    drop(agent);
}

/// The six official SDK clients (1.x at 1.0 and 0.3, 0.3.x; JSON-RPC and HTTP+JSON each) through
/// the gateway to the gRPC-only peer: send, stream, get, list, cancel, subscribe, push, errors.
/// Then a2a-sdk 1.0.3 (the release the DVARA API names) on both sides: its two clients to its
/// gRPC-only agent (after the six, so that no more drivers run at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_table_through_the_gateway_to_a_grpc_only_peer() {
    interop::ensure_venvs_async().await.unwrap();
    let (agent, agent103) =
        futures::future::join(grpc_only_agent(), grpc_only_agent_of(Sdk::V103)).await;
    let env = env_with(Version::V1, sdk_table_config).await;
    env.register("ws1", "g", agent.url(), None);
    env.register("ws1", "g103", agent103.url(), None);
    let key = json!({"op": "headers", "headers": {"Authorization": format!("Bearer {}", env.key)}});
    let mut problems = table::problems(&env.url("/a2a/g"), std::slice::from_ref(&key), &[]).await;
    let url = env.url("/a2a/g103");
    problems.extend(table::problems_of(table::Releases::OnlySdk103, &url, &[key], &[]).await);
    env.stop().await;
    drop((agent, agent103));
    let report: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(report.is_empty(), "{}", report.join("\n\n"));
}
