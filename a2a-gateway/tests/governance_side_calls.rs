//! Calls the gateway makes on a caller's behalf are governed like the caller's own (issue 39,
//! item 1). A 0.3 webhook receives the whole task, which the gateway reads from a 1.0 peer
//! with GetTask: the workspace's PII rules see that task before the webhook does, so a
//! notification that is itself clean cannot carry the task's PII out in clear.

use crate::common;

use crate::governance_pii::{find_str, push_env, receiver};
use common::gov::admin;
use common::*;
use serde_json::json;

const EMAIL: &str = "erin@example.com";

#[tokio::test]
async fn a_03_webhook_gets_the_peer_task_only_through_the_pii_rules() {
    let (env, peer) = push_env().await;
    // A task whose history and artifacts hold an email (sent before any PII rule existed).
    let (_, b) = env
        .rpc("/a2a/echo", None, send03(&format!("write to {EMAIL}")))
        .await;
    let tid = b["result"]["id"].as_str().expect("a 0.3 task").to_owned();
    let (hook, seen) = receiver().await;
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            None,
            json!({"jsonrpc": "2.0", "id": "p", "method": "tasks/pushNotificationConfig/set",
                   "params": {"taskId": tid, "pushNotificationConfig": {"url": hook, "token": "t"}}}),
        )
        .await;
    assert!(b["result"].is_object(), "{b}");
    let sent = peer.last_body();
    let cb = find_str(&sent, &|_, s| s.contains("/push:notify/"))
        .expect("sealed callback")
        .to_owned();
    let token = find_str(&sent, &|k, _| k == "token")
        .expect("sealed token")
        .to_owned();
    // A clean notification from the 1.0 peer: a status update naming the task.
    let notify = || {
        let body = json!({"statusUpdate": {"taskId": tid, "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}}});
        env.http
            .post(&cb)
            .header("content-type", "application/a2a+json")
            .header("x-a2a-notification-token", &token)
            .body(body.to_string())
            .send()
    };
    let set_rules = |action: &'static str| {
        let env = &env;
        async move {
            let (s, b) = admin(
                env,
                "PUT",
                "/admin/workspaces/ws1/pii",
                Some(json!({"actions": {"EMAIL": action}})),
            )
            .await;
            assert_eq!(s, 200, "{b}");
        }
    };

    // block: the task read for the 0.3 webhook holds the email, so nothing is delivered.
    set_rules("block").await;
    assert_eq!(notify().await.unwrap().status().as_u16(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        seen.lock().unwrap().is_empty(),
        "delivered under block: {:?}",
        seen.lock().unwrap()
    );
    let hops = env.store.audit(Some("ws1"), Some("echo"), 0, 100).unwrap();
    assert!(
        hops.iter()
            .any(|h| h.decision == "blocked" && h.operation.as_deref() == Some("push:notify")),
        "the block is audited"
    );

    // redact: the whole task arrives, the email replaced wherever it was.
    set_rules("redact").await;
    assert_eq!(notify().await.unwrap().status().as_u16(), 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while seen.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    let text = got[0].to_string();
    assert_eq!(got[0]["kind"], "task", "{text}");
    assert_eq!(got[0]["status"]["state"], "working", "{text}");
    assert!(
        !text.contains(EMAIL) && text.contains("[REDACTED:EMAIL]"),
        "{text}"
    );
    env.stop().await;
}
