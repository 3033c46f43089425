//! A send held for approval and retried (issue 32: "an idempotent send retried on another
//! replica returns the first task (claimed exactly once)", "held approvals survive"): the held
//! send claims its `messageId`, so a retry of the same send (same workspace, agent, message id
//! and message), on the same gateway or on another replica, is answered as the held send is
//! (the same gateway task; a blocking retry waits on the same approval) and after the
//! decision gets its outcome (approved with the peer's task, or the denial). Exactly one
//! approval and at most one peer call exist per send. On two replicas of one PostgreSQL
//! database, and on one SQLite gateway.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::approval::{approval_id, decide, held, result_task};
use crate::common::gov::admin;
use crate::common::{Env, env_with};
use crate::gateway_replicas_gov::{
    BOUND, blocking_send, pending_one, policy, replica, seed, send_with,
};
use crate::store_suite::cluster;

/// Every approval of `ws1`, any state.
async fn approvals(env: &Env) -> usize {
    let (s, q) = admin(env, "GET", "/admin/workspaces/ws1/approvals", None).await;
    assert_eq!(s, 200, "{q}");
    q.as_array().map(Vec::len).unwrap_or(0)
}

/// `body` without waiting (1.0 `returnImmediately`).
fn at_once(body: &Value) -> Value {
    let mut b = body.clone();
    b["params"]["configuration"] = json!({"returnImmediately": true});
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_send_retried_on_another_replica_waits_on_the_same_approval() {
    let Some(cluster) = cluster() else { return };
    let (peer, key) = seed(&cluster, "retries").await;
    let a = replica(&cluster, "retries", &key).await;
    let b = replica(&cluster, "retries", &key).await;
    let (s, r) = admin(&a, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{r}");

    // A blocking send held on A; its caller's retry goes to B while the approval is pending.
    let send = send_with("refund 10", "refund");
    let first = blocking_send(&a, send.clone());
    let id = pending_one(&a).await;
    let gw_task = format!("gw-approval-{id}");
    let retry = blocking_send(&b, send.clone());
    // A retry that does not wait gets the same gateway task, still pending.
    let (s, r) = b.rpc("/a2a/echo", Some("1.0"), at_once(&send)).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(result_task(&r)["id"], gw_task.as_str(), "{r}");
    assert_eq!(
        result_task(&r)["status"]["state"],
        "TASK_STATE_SUBMITTED",
        "{r}"
    );
    assert_eq!(approvals(&a).await, 1, "one approval");
    assert_eq!(peer.sends(), 0, "nothing sent while held");

    // Approved through A: both waiting callers (on A and on B) get the outcome.
    let (s, r) = decide(&a, &id, "approve", None).await;
    assert_eq!(s, 200, "{r}");
    let peer_task = r["peerTaskId"].as_str().unwrap().to_owned();
    for caller in [first, retry] {
        let got = tokio::time::timeout(BOUND, caller).await.unwrap().unwrap();
        let task = &got["result"]["task"];
        assert_eq!(task["id"], gw_task.as_str(), "{got}");
        assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{got}");
        assert_eq!(task["metadata"]["peerTaskId"], peer_task.as_str(), "{got}");
    }
    // A retry after the decision, on either replica: the same outcome at once.
    for env in [&a, &b] {
        let (s, r) = env.rpc("/a2a/echo", Some("1.0"), send.clone()).await;
        assert_eq!(s, 200, "{r}");
        assert_eq!(result_task(&r)["id"], gw_task.as_str(), "{r}");
        assert_eq!(
            result_task(&r)["metadata"]["peerTaskId"],
            peer_task.as_str(),
            "{r}"
        );
    }
    assert_eq!(approvals(&b).await, 1, "still one approval");
    assert_eq!(peer.sends(), 1, "the peer got the held request once");

    // A denied send: its retry on the other replica gets the denial, nothing is sent.
    let denied = send_with("refund 20", "refund");
    let (_, r) = b.rpc("/a2a/echo", Some("1.0"), at_once(&denied)).await;
    let id = approval_id(&r);
    let (s, r) = decide(&b, &id, "deny", Some("over budget")).await;
    assert_eq!(s, 200, "{r}");
    let (s, r) = a.rpc("/a2a/echo", Some("1.0"), denied.clone()).await;
    assert_eq!(s, 200, "{r}");
    let task = result_task(&r);
    assert_eq!(task["id"], format!("gw-approval-{id}"), "{r}");
    assert_eq!(task["status"]["state"], "TASK_STATE_REJECTED", "{r}");
    assert_eq!(task["metadata"]["denialReason"], "over budget", "{r}");
    // The same message id with another message is refused, as for any send.
    let mut other = denied.clone();
    other["params"]["message"]["parts"] = json!([{"text": "refund 2000"}]);
    let (_, r) = a.rpc("/a2a/echo", Some("1.0"), other).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(approvals(&a).await, 2);
    assert_eq!(peer.sends(), 1);
    a.stop().await;
    b.stop().await;
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_send_retried_on_one_sqlite_gateway_is_held_once() {
    let env = env_with(a2a_gateway::errors::Version::V1, |c| {
        c.approval_wait_secs = 30;
    })
    .await;
    let (s, r) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{r}");
    let send = held(Some("1.0"), "refund 10");
    let (s, r) = env.rpc("/a2a/echo", Some("1.0"), send.clone()).await;
    assert_eq!(s, 200, "{r}");
    let id = approval_id(&r);
    // The retry, blocking this time (same message): it waits on the same approval.
    let mut blocking = send.clone();
    blocking["params"]["configuration"] = json!({"returnImmediately": false});
    let waiting = blocking_send(&env, blocking.clone());
    let (_, r) = env.rpc("/a2a/echo", Some("1.0"), send.clone()).await;
    assert_eq!(approval_id(&r), id, "the same gateway task: {r}");
    assert_eq!(approvals(&env).await, 1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "the blocking retry waits for the decision"
    );
    let (s, r) = decide(&env, &id, "approve", None).await;
    assert_eq!(s, 200, "{r}");
    let peer_task = r["peerTaskId"].as_str().unwrap().to_owned();
    let got = tokio::time::timeout(BOUND, waiting).await.unwrap().unwrap();
    assert_eq!(
        got["result"]["task"]["metadata"]["peerTaskId"],
        peer_task.as_str(),
        "{got}"
    );
    let (_, r) = env.rpc("/a2a/echo", Some("1.0"), blocking).await;
    assert_eq!(
        result_task(&r)["status"]["state"],
        "TASK_STATE_WORKING",
        "{r}"
    );
    assert_eq!(approvals(&env).await, 1);
    assert_eq!(env.peers[0].sends(), 1);
    // A send of another message is held as its own approval.
    let (_, r) = env
        .rpc("/a2a/echo", Some("1.0"), held(Some("1.0"), "refund 20"))
        .await;
    assert_ne!(approval_id(&r), id);
    assert_eq!(approvals(&env).await, 2);
    env.stop().await;
}
