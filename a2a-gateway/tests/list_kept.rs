//! ListTasks shows an ended task's last read again (issue 40: a listing's cost must not be its
//! page's peer reads): a second listing reads from the peer only the tasks that can still
//! change, and what it shows again passes the listing's governance as it is now (a PII rule
//! added after the read redacts it). An ended task a 1.0 peer's SendMessage answered with is
//! kept from that answer: even the first listing does not read it.

use crate::common;
use crate::list_records::{Counts, call, ids, message, shared_peer};

use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use serde_json::json;

/// GetTask calls the peer saw since `counts` was last cleared, and clears it.
fn reads(counts: &Counts) -> usize {
    let mut c = counts.lock().unwrap();
    let n = c
        .iter()
        .filter(|(op, _)| matches!(op.as_str(), "GetTask" | "tasks/get"))
        .map(|(_, n)| n)
        .sum();
    c.clear();
    n
}

#[tokio::test]
async fn ended_tasks_are_read_once_and_governed_on_every_listing() {
    let env = env(Version::V1).await;
    let (agent, front, counts) = shared_peer("JSONRPC", "1.0", 0).await;
    env.register("ws1", "shared", &front, None);
    let key = env.key.clone();
    let mut made = vec![];
    for text in ["hello alice@example.com", "need input", "fail now"] {
        let t = call(
            &env,
            &key,
            "SendMessage",
            json!({ "message": message(text, None, None) }),
        )
        .await;
        made.push(t["task"]["id"].as_str().unwrap().to_owned());
    }
    counts.lock().unwrap().clear();
    let list = || call(&env, &key, "ListTasks", json!({"pageSize": 50}));
    let first = list().await;
    assert_eq!(first["totalSize"], 3, "{first}");
    assert_eq!(
        reads(&counts),
        1,
        "the first listing reads only the task still open: the ended ones were answered"
    );
    assert!(first.to_string().contains("alice@example.com"), "{first}");
    // What the answers left is what the peer holds: each listed task is its GetTask.
    for t in first["tasks"].as_array().unwrap() {
        let mut got = call(&env, &key, "GetTask", json!({"id": t["id"]})).await;
        got.as_object_mut().unwrap().remove("artifacts");
        assert_eq!(&got, t, "listed as read");
    }
    counts.lock().unwrap().clear();

    // Again: only the input-required task is read; the ended ones are shown as read.
    let again = list().await;
    assert_eq!(reads(&counts), 1, "{again}");
    let mut want = made.clone();
    want.sort();
    let mut got = ids(&again);
    got.sort();
    assert_eq!(got, want);
    let strip = |v: &serde_json::Value| {
        let mut v = v.clone();
        for t in v["tasks"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("status");
        }
        v
    };
    assert_eq!(strip(&again), strip(&first), "the same content");

    // A rule added since the read applies to what is shown again.
    let rules = json!({"default_action": "record", "actions": {"EMAIL": "redact"}});
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/pii", Some(rules)).await;
    assert_eq!(s, 200, "{b}");
    let governed = list().await;
    assert_eq!(reads(&counts), 1);
    assert_eq!(governed["totalSize"], 3, "{governed}");
    assert!(
        !governed.to_string().contains("alice@example.com"),
        "{governed}"
    );
    // Shorter histories are cut from the kept read; a task the peer answers anew is read.
    let short = call(
        &env,
        &key,
        "ListTasks",
        json!({"pageSize": 50, "historyLength": 0}),
    )
    .await;
    assert_eq!(reads(&counts), 1);
    assert!(
        short["tasks"].as_array().unwrap().iter().all(|t| t
            .get("history")
            .is_none_or(|h| h.as_array().unwrap().is_empty())),
        "{short}"
    );
    env.stop().await;
    agent.shutdown().await;
}
