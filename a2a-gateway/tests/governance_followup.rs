//! Acting on a gateway task of a held hop, in both versions, with `json_rpc_error_status =
//! refusal`: a follow-up send into it is refused while it is held (409 `a2a_approval_pending`)
//! and once denied or expired (403 `a2a_approval_denied` / 410 `a2a_approval_expired`), as is
//! SubscribeToTask on a denied or expired one (GetTask still answers the REJECTED task); once
//! approved, a follow-up send goes on as the peer's task. An operation that needs approval but
//! cannot be held is refused with `a2a_approval_pending`.

use crate::common;

use a2a_gateway::config::ErrorStatusMode;
use a2a_gateway::errors::Version;
use a2a_gateway::store::backend::{HoldStore, SqliteHolds};
use common::gov::admin;
use common::*;
use serde_json::{Value, json};

fn policy() -> Value {
    json!({"rules": [{"id": "refunds", "when": "skill == 'refund'", "decision": "approve"}]})
}

/// A held send (non-blocking) in the caller's version; returns the gateway task id.
async fn hold(env: &Env, v: Option<&str>, text: &str) -> String {
    let mut r = if v.is_some() {
        send10(text)
    } else {
        send03(text)
    };
    r["params"]["metadata"] = json!({"skill": "refund"});
    if v.is_some() {
        r["params"]["configuration"] = json!({"returnImmediately": true});
    }
    let (s, b) = env.rpc("/a2a/echo", v, r).await;
    assert_eq!(s, 200, "{b}");
    let t = if v.is_some() {
        &b["result"]["task"]
    } else {
        &b["result"]
    };
    let id = t["id"].as_str().unwrap_or_default().to_owned();
    assert!(id.starts_with("gw-approval-"), "{b}");
    id
}

fn method(v: Option<&str>, m10: &str, m03: &str) -> String {
    if v.is_some() { m10 } else { m03 }.to_owned()
}

/// A send into task `task` (message.taskId).
fn send_into(v: Option<&str>, task: &str) -> Value {
    let mut r = if v.is_some() {
        send10("one more thing")
    } else {
        send03("one more thing")
    };
    r["params"]["message"]["taskId"] = json!(task);
    r
}

fn subscribe(v: Option<&str>, task: &str) -> Value {
    json!({"jsonrpc":"2.0","id":"s","method": method(v, "SubscribeToTask", "tasks/resubscribe"),
        "params":{"id": task}})
}

fn get(v: Option<&str>, task: &str) -> Value {
    json!({"jsonrpc":"2.0","id":"g","method": method(v, "GetTask", "tasks/get"),"params":{"id": task}})
}

fn approval_id(gw_task: &str) -> String {
    gw_task.trim_start_matches("gw-approval-").to_owned()
}

/// The gateway code, status and approval id of a refusal in either version's form.
fn refusal(s: u16, b: &Value) -> (u16, String, String) {
    let data = &b["error"]["data"];
    let approval = if data.is_array() {
        &data[0]["metadata"]["approvalId"]
    } else {
        &data["approvalId"]
    };
    (
        s,
        gw_code(b),
        approval.as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
async fn follow_ups_on_held_denied_expired_and_approved_gateway_tasks() {
    let env = env_with(Version::V1, |c| {
        c.json_rpc_error_status = ErrorStatusMode::Refusal;
        c.approval_wait_secs = 0;
    })
    .await;
    let (s, _) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200);
    for v in [None, Some("1.0")] {
        let rejected = if v.is_some() {
            "TASK_STATE_REJECTED"
        } else {
            "rejected"
        };
        // To expire.
        let expired = hold(&env, v, "refund order 1").await;
        // Held: a send into it waits for the same approval.
        let denied = hold(&env, v, "refund order 2").await;
        let before = env.peers[0].last_body();
        let (s, b) = env.rpc("/a2a/echo", v, send_into(v, &denied)).await;
        assert_eq!(
            refusal(s, &b),
            (409, "a2a_approval_pending".into(), approval_id(&denied)),
            "{b}"
        );
        assert_eq!(env.peers[0].last_body(), before, "the peer was called");
        // Denied.
        let (s, r) = admin(
            &env,
            "POST",
            &format!(
                "/admin/workspaces/ws1/approvals/{}/deny",
                approval_id(&denied)
            ),
            Some(json!({"approver": "ana", "reason": "no"})),
        )
        .await;
        assert_eq!(s, 200, "{r}");
        // Expired: as the hold's expiry marks it (timed expiry: `governance_approval.rs`).
        assert!(
            SqliteHolds::new(env.store.clone())
                .decide("ws1", &approval_id(&expired), "expired", None, None)
                .await
                .unwrap()
        );
        for (task, status, code) in [
            (&denied, 403, "a2a_approval_denied"),
            (&expired, 410, "a2a_approval_expired"),
        ] {
            // GetTask answers the task itself.
            let (s, b) = env.rpc("/a2a/echo", v, get(v, task)).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["result"]["status"]["state"], rejected, "{b}");
            assert_eq!(b["result"]["metadata"]["code"], code, "{b}");
            // SubscribeToTask and a follow-up send are refused.
            for req in [subscribe(v, task), send_into(v, task)] {
                let (s, b) = env.rpc("/a2a/echo", v, req).await;
                assert_eq!(
                    refusal(s, &b),
                    (status, code.into(), approval_id(task)),
                    "{v:?} {b}"
                );
            }
        }
        assert_eq!(env.peers[0].last_body(), before, "the peer was called");

        // Approved: a follow-up send goes on as the peer's task (the gateway's context dropped).
        let approved = hold(&env, v, "refund order 3").await;
        let (s, r) = admin(
            &env,
            "POST",
            &format!(
                "/admin/workspaces/ws1/approvals/{}/approve",
                approval_id(&approved)
            ),
            Some(json!({"approver": "ana"})),
        )
        .await;
        assert_eq!(s, 200, "{r}");
        let peer_task = r["peerTaskId"].as_str().unwrap().to_owned();
        let mut req = send_into(v, &approved);
        req["params"]["message"]["contextId"] = r["task"]["contextId"].clone();
        let (s, b) = env.rpc("/a2a/echo", v, req).await;
        assert_eq!(s, 200, "{b}");
        let seen = env.peers[0].last_body();
        assert_eq!(seen["params"]["message"]["taskId"], peer_task, "{seen}");
        assert!(
            seen["params"]["message"].get("contextId").is_none(),
            "{seen}"
        );
        assert!(seen.to_string().contains("one more thing"), "{seen}");
    }
    // Another workspace's gateway task answers like a task that does not exist.
    let other = hold(&env, Some("1.0"), "refund order 4").await;
    let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "echo", &env.peers[0].url, None);
    let (_, b) = env
        .rpc_key(
            "/a2a/echo",
            Some("1.0"),
            send_into(Some("1.0"), &other),
            &k2,
        )
        .await;
    assert_eq!(b["error"]["code"], -32001, "{b}");
    env.stop().await;
}

#[tokio::test]
async fn an_operation_that_cannot_be_held_is_refused_pending() {
    let env = env_with(Version::V1, |c| {
        c.json_rpc_error_status = ErrorStatusMode::Refusal;
    })
    .await;
    let (s, _) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200);
    for v in [None, Some("1.0")] {
        let send = if v.is_some() {
            send10("plain")
        } else {
            send03("plain")
        };
        let (_, b) = env.rpc("/a2a/echo", v, send).await;
        let t = if v.is_some() {
            &b["result"]["task"]
        } else {
            &b["result"]
        };
        let task = t["id"].as_str().unwrap().to_owned();
        let before = env.peers[0].last_body();
        let cancel = json!({"jsonrpc":"2.0","id":"c","method": method(v, "CancelTask", "tasks/cancel"),
            "params":{"id": task, "metadata": {"skill": "refund"}}});
        let (s, b) = env.rpc("/a2a/echo", v, cancel).await;
        assert_eq!(
            (s, gw_code(&b).as_str()),
            (409, "a2a_approval_pending"),
            "{b}"
        );
        assert_eq!(env.peers[0].last_body(), before, "the peer was called");
        let (_, q) = admin(&env, "GET", "/admin/workspaces/ws1/approvals", None).await;
        assert_eq!(q, json!([]), "nothing is held");
    }
    env.stop().await;
}
