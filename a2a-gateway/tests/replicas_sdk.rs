//! The official Python SDK across replicas (issue 32, tests: "real callers on different
//! replicas, including the official Python SDK clients of the interop suite on a replica other
//! than the one holding the stream"): two `a2a-gateway serve --database postgres://…` replicas,
//! the official Python SDK 1.x agent as the peer. The SDK 1.x client starts a slow task through
//! replica A (non-blocking) and follows it there; the same SDK client, on both bindings, then
//! lists it, reads it, subscribes to it and cancels it through replica B, which holds no
//! stream or memory of it: the ownership, the task record and the peer's task are found through
//! PostgreSQL and the peer. A 0.3 SDK client on replica B reads the same task in its version.

use serde_json::{Value, json};

use crate::replicas_chaos::start;
use conformance::interop::{self, Binding, ClientOptions, PyAgent, Sdk};

/// The driver's closing line of op `i`.
fn op(lines: &[Value], i: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["i"] == i && l.get("event").is_none())
        .unwrap_or_else(|| panic!("no closing line for op {i}: {lines:#?}"))
}

/// The driver's events of op `i`.
fn events(lines: &[Value], i: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["i"] == i)
        .filter_map(|l| l.get("event"))
        .collect()
}

async fn run(
    url: &str,
    sdk: Sdk,
    binding: Binding,
    protocol: Option<&str>,
    scen: Value,
) -> Vec<Value> {
    let mut opts = ClientOptions::new(binding);
    opts.protocol_version = protocol.map(str::to_owned);
    interop::run_client_async_with(sdk, url, &opts, scen)
        .await
        .unwrap()
        .lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_clients_follow_a_task_through_another_replica() {
    let Some((c, _echo)) = start(2).await else {
        return;
    };
    interop::ensure_venvs_async().await.unwrap();
    let agent = PyAgent::start_async(Sdk::V1).await.unwrap();
    c.register("peer", agent.url()).await.unwrap();
    let a = format!("{}/a2a/peer", c.replicas[0].url());
    let b = format!("{}/a2a/peer", c.replicas[1].url());
    let headers =
        json!({"op": "headers", "headers": {"Authorization": format!("Bearer {}", c.key)}});

    // Replica A: a slow task, not waited for; its first event followed on A.
    let mut lines = Vec::new();
    for _ in 0..50 {
        lines = run(
            &a,
            Sdk::V1,
            Binding::JsonRpc,
            Some("1.0"),
            json!([headers, {"op": "send", "text": "slow 20", "blocking": false},
                {"op": "subscribe", "taskId": "$1.task_id", "maxEvents": 1}]),
        )
        .await;
        // The registration reaches A by notification: until then the agent is unknown.
        if op(&lines, 1)["ok"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(op(&lines, 1)["ok"], true, "{lines:#?}");
    let task = op(&lines, 1)["task_id"]
        .as_str()
        .expect("a task id")
        .to_owned();
    assert!(!events(&lines, 2).is_empty(), "{lines:#?}");

    // Replica B, the SDK 1.x client on each binding: list, get, subscribe.
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let lines = run(
            &b,
            Sdk::V1,
            binding,
            Some("1.0"),
            json!([headers, {"op": "list"}, {"op": "get", "taskId": task},
                {"op": "subscribe", "taskId": task, "maxEvents": 1}]),
        )
        .await;
        for i in 1..=3 {
            assert_eq!(op(&lines, i)["ok"], true, "{binding:?} op {i}: {lines:#?}");
        }
        assert!(
            op(&lines, 1)["result"].to_string().contains(&task),
            "{binding:?}: B lists A's task: {lines:#?}"
        );
        assert_eq!(op(&lines, 2)["result"]["id"], task, "{lines:#?}");
        let evs = events(&lines, 3);
        assert!(
            !evs.is_empty(),
            "{binding:?}: B relays the task's events: {lines:#?}"
        );
    }

    // The 0.3 SDK client on B reads the task in 0.3.
    let lines = run(
        &b,
        Sdk::V03,
        Binding::JsonRpc,
        None,
        json!([{"op": "headers", "headers": {"Authorization": format!("Bearer {}", c.key),
            "A2A-Version": "0.3"}}, {"op": "get", "taskId": task}]),
    )
    .await;
    assert_eq!(op(&lines, 1)["ok"], true, "{lines:#?}");
    assert_eq!(op(&lines, 1)["result"]["id"], task, "{lines:#?}");

    // B cancels it; A reads the canceled task.
    let lines = run(
        &b,
        Sdk::V1,
        Binding::JsonRpc,
        Some("1.0"),
        json!([headers, {"op": "cancel", "taskId": task}]),
    )
    .await;
    assert_eq!(op(&lines, 1)["ok"], true, "{lines:#?}");
    assert!(
        op(&lines, 1)["result"].to_string().contains("CANCELED"),
        "{lines:#?}"
    );
    let lines = run(
        &a,
        Sdk::V1,
        Binding::JsonRpc,
        Some("1.0"),
        json!([headers, {"op": "get", "taskId": task}]),
    )
    .await;
    assert_eq!(
        op(&lines, 1)["result"]["status"]["state"],
        "TASK_STATE_CANCELED",
        "{lines:#?}"
    );
    drop(agent);
}
