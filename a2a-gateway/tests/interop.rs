//! The official Python SDK (1.x and 0.3.x) as the caller and as the peer, through the gateway.

use crate::common;

use a2a_gateway::errors::Version;
use common::*;
use conformance::interop::{self, Binding, ClientOptions, PyAgent, Sdk};
use serde_json::{Value, json};

/// The scenario every pairing runs: send, get, stream, subscribe, cancel, push config CRUD.
fn scenario(key: &str, version_header: Option<&str>, python_peer: bool) -> Value {
    let mut headers = json!({"Authorization": format!("Bearer {key}")});
    if let Some(v) = version_header {
        headers["A2A-Version"] = json!(v);
    }
    // With a Python peer a slow task stays cancelable; the Rust echo peer completes at once.
    let slow = if python_peer { "slow 5" } else { "echo slow" };
    json!([
        {"op": "headers", "headers": headers},
        {"op": "card"},
        {"op": "send", "text": "echo hello"},
        {"op": "get", "taskId": "$2.task_id"},
        {"op": "stream", "text": "stream 2"},
        {"op": "send", "text": slow, "blocking": false},
        {"op": "subscribe", "taskId": "$5.task_id", "maxEvents": 1},
        {"op": "cancel", "taskId": "$5.task_id"},
        {"op": "push_set", "taskId": "$5.task_id", "url": "http://127.0.0.1:9/hook", "id": "c1", "token": "tok"},
        {"op": "push_get", "taskId": "$5.task_id", "id": "c1"},
        {"op": "push_list", "taskId": "$5.task_id"},
        {"op": "push_delete", "taskId": "$5.task_id", "id": "c1"}
    ])
}

fn op(lines: &[Value], i: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["i"] == i && l.get("event").is_none())
        .unwrap_or_else(|| panic!("no closing line for op {i}: {lines:#?}"))
}

fn events(lines: &[Value], i: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["i"] == i)
        .filter_map(|l| l.get("event"))
        .collect()
}

fn text_of(v: &Value) -> String {
    v.to_string()
}

/// Checks a finished run: every op answered, results carry what the peer produced.
fn check(lines: &[Value], sdk: Sdk, python_peer: bool) {
    for i in [0, 1, 2, 3, 4, 8, 9, 10, 11] {
        assert_eq!(
            op(lines, i)["ok"],
            true,
            "op {i} failed: {:#}",
            op(lines, i)
        );
    }
    let send = &op(lines, 2)["result"];
    let completed = if sdk.is_1x() {
        "TASK_STATE_COMPLETED"
    } else {
        "completed"
    };
    let task = if sdk.is_1x() { &send["task"] } else { send };
    assert_eq!(task["status"]["state"], completed, "{send:#}");
    assert!(text_of(task).contains("hello"));
    let got = &op(lines, 3)["result"];
    assert_eq!(got["id"], task["id"]);
    let evs = events(lines, 4);
    assert!(evs.len() >= 2, "{lines:#?}");
    assert!(text_of(&json!(evs)).contains(completed), "{evs:#?}");
    if python_peer {
        // The slow task was cancelable and subscribable.
        assert_eq!(op(lines, 7)["ok"], true, "{:#}", op(lines, 7));
        assert!(
            text_of(&op(lines, 7)["result"])
                .to_lowercase()
                .contains("cancel")
        );
        assert!(!events(lines, 6).is_empty(), "{lines:#?}");
    } else {
        // The echo task is already complete: the peer's TaskNotCancelableError arrives intact.
        assert_eq!(op(lines, 7)["ok"], false);
        assert_eq!(op(lines, 7)["error"]["code"], -32002, "{:#}", op(lines, 7));
    }
    assert!(text_of(&op(lines, 9)["result"]).contains("c1"));
    assert!(text_of(&op(lines, 10)["result"]).contains("c1"));
}

async fn run(
    env: &Env,
    sdk: Sdk,
    binding: Binding,
    protocol: Option<&str>,
    scen: Value,
) -> Vec<Value> {
    let url = env.url("/a2a/peer");
    let mut opts = ClientOptions::new(binding);
    opts.protocol_version = protocol.map(str::to_owned);
    interop::run_client_async_with(sdk, &url, &opts, scen)
        .await
        .unwrap()
        .lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_clients_through_gateway_to_rust_peer() {
    interop::ensure_venvs_async().await.unwrap();
    let env = env(Version::V1).await;
    let peer = env.peers[0].url.clone();
    env.register("ws1", "peer", &peer, None);
    // 1.x SDK over JSON-RPC 1.0, over JSON-RPC 0.3 (its compat transport), and over HTTP+JSON 1.0.
    let lines = run(
        &env,
        Sdk::V1,
        Binding::JsonRpc,
        Some("1.0"),
        scenario(&env.key, None, false),
    )
    .await;
    check(&lines, Sdk::V1, false);
    let lines = run(
        &env,
        Sdk::V1,
        Binding::JsonRpc,
        Some("0.3"),
        scenario(&env.key, None, false),
    )
    .await;
    check(&lines, Sdk::V1, false);
    let lines = run(
        &env,
        Sdk::V1,
        Binding::HttpJson,
        Some("1.0"),
        scenario(&env.key, None, false),
    )
    .await;
    check(&lines, Sdk::V1, false);
    // 0.3 SDK (asks for the 0.3 card).
    let lines = run(
        &env,
        Sdk::V03,
        Binding::JsonRpc,
        None,
        scenario(&env.key, Some("0.3"), false),
    )
    .await;
    check(&lines, Sdk::V03, false);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_clients_through_gateway_to_python_peers() {
    interop::ensure_venvs_async().await.unwrap();
    for peer_sdk in [Sdk::V1, Sdk::V03] {
        let agent = PyAgent::start_async(peer_sdk).await.unwrap();
        let env = env(Version::V1).await;
        env.register("ws1", "peer", agent.url(), None);
        for (sdk, binding, protocol, header) in [
            (Sdk::V1, Binding::JsonRpc, Some("1.0"), None),
            (Sdk::V03, Binding::JsonRpc, None, Some("0.3")),
        ] {
            let lines = run(
                &env,
                sdk,
                binding,
                protocol,
                scenario(&env.key, header, true),
            )
            .await;
            check(&lines, sdk, true);
        }
        // The hop records show the version and binding chosen for the peer.
        let hops = env.store.audit(Some("ws1"), Some("peer"), 0, 1000).unwrap();
        let sent: Vec<_> = hops
            .iter()
            .filter(|h| h.operation.as_deref() == Some("message/send"))
            .collect();
        assert!(!sent.is_empty());
        let expected_peer = if peer_sdk == Sdk::V1 { "1.0" } else { "0.3" };
        assert!(
            sent.iter()
                .all(|h| h.peer_version.as_deref() == Some(expected_peer)),
            "{sent:#?}"
        );
        env.stop().await;
        drop(agent);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_peer_called_in_its_first_interface() {
    interop::ensure_venvs_async().await.unwrap();
    // The sdk1 agent lists JSON-RPC 1.0 first: a header-less 0.3 caller is translated to it.
    let agent = PyAgent::start_async(Sdk::V1).await.unwrap();
    let env = env(Version::V1).await;
    env.register("ws1", "peer", agent.url(), None);
    let (_, b) = env.rpc("/a2a/peer", None, send03("echo via gateway")).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    assert_eq!(b["result"]["status"]["state"], "completed");
    let hops = env.store.audit(Some("ws1"), Some("peer"), 0, 10).unwrap();
    assert_eq!(hops[0].peer_binding.as_deref(), Some("JSONRPC"));
    assert_eq!(hops[0].peer_method.as_deref(), Some("SendMessage"));
    env.stop().await;
}
