//! Approval end to end through a real gateway and peer: a policy holds the hop (nothing sent),
//! the queue shows a preview with the workspace's PII rules applied, the caller follows with standard operations only
//! (SendMessage → gateway task, GetTask, CancelTask), approve / deny / expiry, both versions,
//! and another workspace can neither see nor decide nor follow it.

use crate::common;

use std::time::Duration;

use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use serde_json::{Value, json};

fn policy() -> Value {
    json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'", "decision": "approve"}]})
}

fn held(v: Option<&str>, text: &str) -> Value {
    let mut r = if v.is_some() {
        send10(text)
    } else {
        send03(text)
    };
    r["params"]["metadata"] = json!({"skill": "refund"});
    if v.is_some() {
        r["params"]["configuration"] = json!({"returnImmediately": true});
    }
    r
}

fn get(v: Option<&str>, id: &str) -> Value {
    let m = if v.is_some() { "GetTask" } else { "tasks/get" };
    json!({"jsonrpc":"2.0","id":"g","method": m,"params":{"id": id}})
}

fn state(b: &Value) -> String {
    let r = &b["result"];
    let t = if r.get("task").is_some() {
        &r["task"]
    } else {
        r
    };
    t["status"]["state"].as_str().unwrap_or("").to_owned()
}

fn task_id(b: &Value) -> String {
    let r = &b["result"];
    let t = if r.get("task").is_some() {
        &r["task"]
    } else {
        r
    };
    t["id"].as_str().unwrap_or("").to_owned()
}

#[tokio::test]
async fn approval_holds_then_releases_denies_and_expires() {
    let env = env_with(Version::V1, |c| {
        c.approval_ttl_secs = 6; // long enough for a CLI process under load to approve in time
        c.approval_wait_secs = 0;
        c.delegation_key = Some("k".into());
    })
    .await;
    assert_eq!(
        admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy()))
            .await
            .0,
        200
    );
    assert_eq!(
        admin(
            &env,
            "PUT",
            "/admin/workspaces/ws1/pii",
            Some(json!({"actions": {"EMAIL": "redact"}}))
        )
        .await
        .0,
        200
    );
    let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "echo", &env.peers[0].url, None);
    for v in [None, Some("1.0")] {
        let submitted = if v.is_some() {
            "TASK_STATE_SUBMITTED"
        } else {
            "submitted"
        };
        // Held: a gateway task, nothing sent to the peer.
        let before = env.peers[0].last_body();
        let (_, b) = env
            .rpc(
                "/a2a/echo",
                v,
                held(v, "refund order 7 for alice@example.com"),
            )
            .await;
        assert_eq!(state(&b), submitted, "{b}");
        let gw_task = task_id(&b);
        assert!(gw_task.starts_with("gw-approval-"), "{b}");
        assert_eq!(env.peers[0].last_body(), before, "the peer was called");
        // The queue: a redacted preview, never the PII.
        let (_, q) = admin(
            &env,
            "GET",
            "/admin/workspaces/ws1/approvals?state=pending",
            None,
        )
        .await;
        let a = q
            .as_array()
            .unwrap()
            .iter()
            .find(|a| gw_task.ends_with(a["id"].as_str().unwrap()))
            .unwrap()
            .clone();
        let id = a["id"].as_str().unwrap().to_owned();
        assert_eq!(a["rule"], "needs-a-person");
        assert!(
            a["preview"]["text"]
                .as_str()
                .unwrap()
                .contains("[REDACTED:EMAIL]"),
            "{a}"
        );
        assert!(!q.to_string().contains("alice@"), "{q}");
        assert!(a.get("params").is_none());
        // The caller follows with GetTask: still submitted.
        let (_, b) = env.rpc("/a2a/echo", v, get(v, &gw_task)).await;
        assert_eq!(state(&b), submitted, "{b}");
        // Another workspace: cannot see, decide or follow it.
        assert_eq!(
            admin(
                &env,
                "GET",
                &format!("/admin/workspaces/ws2/approvals/{id}"),
                None
            )
            .await
            .0,
            404
        );
        let (s, _) = admin(
            &env,
            "POST",
            &format!("/admin/workspaces/ws2/approvals/{id}/approve"),
            Some(json!({"approver": "mallory"})),
        )
        .await;
        assert_eq!(s, 404);
        let (_, b) = env.rpc_key("/a2a/echo", v, get(v, &gw_task), &k2).await;
        assert_eq!(b["error"]["code"], -32001, "{b}");
        // Approved: the held request goes to the peer (redacted); GetTask goes on as its task.
        // 0.3: through the admin API; 1.0: with `a2a-gateway admin approval-approve`, which
        // calls that API of the running gateway.
        let r = if v.is_none() {
            let (s, r) = admin(
                &env,
                "POST",
                &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
                Some(json!({"approver": "ana", "reason": "checked"})),
            )
            .await;
            assert_eq!(s, 200, "{r}");
            r
        } else {
            let db = env._dir.path().join("gw.db");
            let base = env.gw.base_url().to_string();
            let id = id.clone();
            let out = tokio::task::spawn_blocking(move || {
                std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
                    .args(["admin", "--database"])
                    .arg(db)
                    .args(["approval-approve", "ws1", &id, "--approver", "ana"])
                    .args(["--reason", "checked", "--gateway", &base])
                    .args(["--admin-token", common::ADMIN])
                    .output()
                    .unwrap()
            })
            .await
            .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice(&out.stdout).unwrap()
        };
        assert_eq!(r["approval"]["state"], "approved", "{r}");
        assert_eq!(r["approval"]["approver"], "ana", "{r}");
        assert_eq!(r["approval"]["reason"], "checked", "{r}");
        let chain = env.peers[0]
            .last_headers()
            .into_iter()
            .find(|(n, _)| n == "a2a-delegation-chain")
            .map(|(_, v)| v)
            .expect("the released call carries the chain");
        let members = a2a_gateway::governance::loops::ChainKey::new(b"k")
            .verify(&chain)
            .unwrap();
        assert_eq!(members, vec!["ws1/echo"], "{chain}");
        let seen = env.peers[0].last_body().to_string();
        assert!(
            seen.contains("refund order 7")
                && seen.contains("[REDACTED:EMAIL]")
                && !seen.contains("alice@"),
            "{seen}"
        );
        let peer_task = r["peerTaskId"].as_str().unwrap().to_owned();
        let (_, b) = env.rpc("/a2a/echo", v, get(v, &gw_task)).await;
        assert_eq!(task_id(&b), peer_task, "{b}");
        let done = if v.is_some() {
            "TASK_STATE_COMPLETED"
        } else {
            "completed"
        };
        assert_eq!(state(&b), done, "{b}");
        // A second decision is refused.
        let (s, _) = admin(
            &env,
            "POST",
            &format!("/admin/workspaces/ws1/approvals/{id}/deny"),
            Some(json!({"approver": "bo"})),
        )
        .await;
        assert_eq!(s, 409);

        // Denied: the gateway task is rejected.
        let (_, b) = env.rpc("/a2a/echo", v, held(v, "refund order 8")).await;
        let gw_task = task_id(&b);
        let id = gw_task.trim_start_matches("gw-approval-").to_owned();
        let (s, _) = admin(
            &env,
            "POST",
            &format!("/admin/workspaces/ws1/approvals/{id}/deny"),
            Some(json!({"approver": "bo", "reason": "no"})),
        )
        .await;
        assert_eq!(s, 200);
        let (_, b) = env.rpc("/a2a/echo", v, get(v, &gw_task)).await;
        let rejected = if v.is_some() {
            "TASK_STATE_REJECTED"
        } else {
            "rejected"
        };
        assert_eq!(state(&b), rejected, "{b}");
        assert!(b.to_string().contains("a2a_approval_denied"), "{b}");

        // Withdrawn by the caller: CancelTask on the held task.
        let (_, b) = env.rpc("/a2a/echo", v, held(v, "refund order 9")).await;
        let gw_task = task_id(&b);
        let m = if v.is_some() {
            "CancelTask"
        } else {
            "tasks/cancel"
        };
        let (_, b) = env
            .rpc(
                "/a2a/echo",
                v,
                json!({"jsonrpc":"2.0","id":"c","method": m,"params":{"id": gw_task}}),
            )
            .await;
        let canceled = if v.is_some() {
            "TASK_STATE_CANCELED"
        } else {
            "canceled"
        };
        assert_eq!(state(&b), canceled, "{b}");
    }
    // Without PII rules the stored request is unchanged, and the approver sees it as it will
    // be sent (issue 39: the workspace's PII rules decide what is redacted).
    assert_eq!(
        admin(&env, "DELETE", "/admin/workspaces/ws1/pii", None)
            .await
            .0,
        204
    );
    let (_, b) = env
        .rpc("/a2a/echo", None, held(None, "refund for bob@example.org"))
        .await;
    let id = task_id(&b).trim_start_matches("gw-approval-").to_owned();
    let (_, a) = admin(
        &env,
        "GET",
        &format!("/admin/workspaces/ws1/approvals/{id}"),
        None,
    )
    .await;
    assert!(
        a["preview"]["text"]
            .as_str()
            .unwrap()
            .contains("refund for bob@example.org"),
        "{a}"
    );
    assert!(
        a["request"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("bob@example.org"),
        "{a}"
    );
    // Expiry.
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            held(Some("1.0"), "refund order 10"),
        )
        .await;
    let gw_task = task_id(&b);
    let id = gw_task.trim_start_matches("gw-approval-").to_owned();
    tokio::time::sleep(Duration::from_millis(6200)).await;
    let (_, b) = env
        .rpc("/a2a/echo", Some("1.0"), get(Some("1.0"), &gw_task))
        .await;
    assert_eq!(state(&b), "TASK_STATE_REJECTED", "{b}");
    assert!(b.to_string().contains("a2a_approval_expired"), "{b}");
    let (s, _) = admin(
        &env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
        Some(json!({"approver": "late"})),
    )
    .await;
    assert_eq!(s, 409);
    // Deny follows the same rule: an expired hold nobody looked at is not denied but expired.
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            held(Some("1.0"), "refund order 11"),
        )
        .await;
    let id = task_id(&b).trim_start_matches("gw-approval-").to_owned();
    tokio::time::sleep(Duration::from_millis(6200)).await;
    let (s, b) = admin(
        &env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/deny"),
        Some(json!({"approver": "late"})),
    )
    .await;
    assert_eq!(s, 409, "{b}");
    assert!(b.to_string().contains("is expired"), "{b}");
    let (_, a) = admin(
        &env,
        "GET",
        &format!("/admin/workspaces/ws1/approvals/{id}"),
        None,
    )
    .await;
    assert_eq!(a["state"], "expired", "{a}");
    // Audited: held with the approval id, then the decision with its approver.
    let hops = env.store.audit(Some("ws1"), None, 0, 1000).unwrap();
    let all = serde_json::to_string(&hops).unwrap();
    assert!(all.contains("\"approver\":\"ana\""), "{all}");
    assert!(
        hops.iter()
            .any(|h| h.client_method.as_deref() == Some("approval:denied"))
    );
    assert!(!all.contains("alice@"));
    env.stop().await;
}

#[tokio::test]
async fn held_stream_then_subscribe_goes_on_as_the_peer_task() {
    use futures::StreamExt;
    let env = env(Version::V1).await;
    assert_eq!(
        admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy()))
            .await
            .0,
        200
    );
    for v in [None, Some("1.0")] {
        let mut req = held(v, "refund by stream");
        req["method"] = json!(if v.is_some() {
            "SendStreamingMessage"
        } else {
            "message/stream"
        });
        let mut r = env
            .http
            .post(env.url("/a2a/echo"))
            .header("content-type", "application/json")
            .bearer_auth(&env.key)
            .body(req.to_string());
        if let Some(v) = v {
            r = r.header("A2A-Version", v);
        }
        let resp = r.send().await.unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            let mut body = resp.bytes_stream();
            let mut buf = String::new();
            while let Some(Ok(c)) = body.next().await {
                buf.push_str(&String::from_utf8_lossy(&c));
                while let Some(i) = buf.find("\n\n") {
                    let block: String = buf.drain(..i + 2).collect();
                    for l in block.lines() {
                        if let Some(d) = l.strip_prefix("data:") {
                            let _ = tx.send(serde_json::from_str(d.trim()).unwrap_or(Value::Null));
                        }
                    }
                }
            }
        });
        let first = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        let gw_task = task_id(&first);
        assert!(gw_task.starts_with("gw-approval-"), "{first}");
        let submitted = if v.is_some() {
            "TASK_STATE_SUBMITTED"
        } else {
            "submitted"
        };
        assert_eq!(state(&first), submitted, "{first}");
        let id = gw_task.trim_start_matches("gw-approval-").to_owned();
        let (s, r) = admin(
            &env,
            "POST",
            &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
            Some(json!({"approver": "ana"})),
        )
        .await;
        assert_eq!(s, 200, "{r}");
        let update = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        let u = &update["result"];
        let st = if v.is_some() {
            &u["statusUpdate"]["status"]["state"]
        } else {
            &u["status"]["state"]
        };
        let working = if v.is_some() {
            "TASK_STATE_WORKING"
        } else {
            "working"
        };
        assert_eq!(st, working, "{update}");
        assert!(
            update
                .to_string()
                .contains(r["peerTaskId"].as_str().unwrap()),
            "{update}"
        );
        assert!(
            tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .unwrap()
                .is_none()
        );
        // SubscribeToTask on the gateway task goes on as the peer's task.
        let m = if v.is_some() {
            "SubscribeToTask"
        } else {
            "tasks/resubscribe"
        };
        let (_, _, events) = env
            .sse(
                "/a2a/echo",
                v,
                json!({"jsonrpc":"2.0","id":"s","method": m,"params":{"id": gw_task}}),
            )
            .await;
        assert!(
            events
                .to_vec()
                .iter()
                .any(|e| e.to_string().contains(r["peerTaskId"].as_str().unwrap())),
            "{events:?}"
        );
    }
    env.stop().await;
}

#[tokio::test]
async fn blocking_send_waits_for_the_decision() {
    let env = env_with(Version::V1, |c| c.approval_wait_secs = 5).await;
    assert_eq!(
        admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy()))
            .await
            .0,
        200
    );
    let mut req = send10("refund now");
    req["params"]["metadata"] = json!({"skill": "refund"});
    let url = env.url("/a2a/echo");
    let key = env.key.clone();
    let http = env.http.clone();
    let caller = tokio::spawn(async move {
        let r = http
            .post(url)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(key)
            .body(req.to_string())
            .send()
            .await
            .unwrap();
        r.json::<Value>().await.unwrap()
    });
    // Approve while the caller waits.
    let mut id = None;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, q) = admin(
            &env,
            "GET",
            "/admin/workspaces/ws1/approvals?state=pending",
            None,
        )
        .await;
        if let Some(a) = q.as_array().and_then(|a| a.first()) {
            id = a["id"].as_str().map(str::to_owned);
            break;
        }
    }
    let id = id.expect("held");
    let (s, _) = admin(
        &env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
        Some(json!({"approver": "ana"})),
    )
    .await;
    assert_eq!(s, 200);
    let b = caller.await.unwrap();
    assert_eq!(
        b["result"]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{b}"
    );
    let gw_task = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (_, b) = env
        .rpc("/a2a/echo", Some("1.0"), get(Some("1.0"), &gw_task))
        .await;
    assert_eq!(
        b["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{b}"
    );
    env.stop().await;
}
