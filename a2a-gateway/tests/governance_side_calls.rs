//! Calls the gateway makes on a caller's behalf are governed like the caller's own (issue 39,
//! item 1). A 0.3 webhook receives the whole task, which the gateway reads from a 1.0 peer
//! with GetTask: the workspace's PII rules see that task before the webhook does, so a
//! notification that is itself clean cannot carry the task's PII out in clear. A held send's
//! release is one too (the peer's error becomes the caller's answer), and direct push delivery,
//! which no rule could read, is refused in a workspace with PII rules. Every caller form and
//! answer path: `tests/attack_table.rs`.

use crate::common;

use crate::governance_pii::{find_str, push_env, receiver};
use a2a_gateway::errors::Version;
use common::gov::admin;
use common::leaks::Got;
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

/// A held send released by a person is a call the gateway makes on the caller's behalf: when
/// the peer answers it with an error, that error becomes the caller's answer (the gateway task
/// FAILED, a send into it refused), so it passes the workspace's PII rules first.
#[tokio::test]
async fn a_released_holds_peer_error_reaches_the_caller_through_the_pii_rules() {
    use common::approval::{approval_id, decide, get, held, policy, result_task, send_into};
    let env = env(Version::V1).await;
    let peer = common::leaky::start(Version::V1).await;
    env.register("ws1", "leaky", &peer.url, None);
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{b}");
    let rules = json!({"actions": {"EMAIL": "block", "PAYMENT_CARD": "block", "US_SSN": "block"}});
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/pii", Some(rules)).await;
    assert_eq!(s, 200, "{b}");
    for v in [Some("1.0"), None] {
        // The leaky peer answers a message saying `error` with PII in every member of its error.
        let (_, b) = env.rpc("/a2a/leaky", v, held(v, "error please")).await;
        let id = approval_id(&b);
        let gw_task = result_task(&b)["id"].as_str().unwrap().to_owned();
        let (s, b) = decide(&env, &id, "approve", None).await;
        assert_eq!(s, 502, "{b}");
        let mut got = Got::default();
        got.value(b);
        let (_, b) = env.rpc("/a2a/leaky", v, get(v, &gw_task)).await;
        assert_eq!(
            result_task(&b)["metadata"]["code"],
            "a2a_pii_blocked",
            "{b}"
        );
        got.value(b);
        let (_, b) = env.rpc("/a2a/leaky", v, send_into(v, &gw_task)).await;
        assert_eq!(gw_code(&b), "a2a_pii_blocked", "{b}");
        got.value(b);
        assert!(got.leaks().is_empty(), "{:?}", got.leaking());
    }
    peer.stop();
    env.stop().await;
}

/// Direct push delivery lets the peer post to the caller's webhook past the gateway: in a
/// workspace with PII rules a new push config (set, or inline on a send) is refused while the
/// workspace delivers directly, and accepted again once the rules are gone.
#[tokio::test]
async fn direct_push_is_refused_where_pii_rules_would_not_see_it() {
    let env = env(Version::V1).await;
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("a task")).await;
    let tid = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let set = json!({"jsonrpc": "2.0", "id": "p", "method": "CreateTaskPushNotificationConfig",
        "params": {"taskId": tid, "url": "https://8.8.8.8/hook", "token": "t"}});
    let mut inline = send10("with a webhook");
    inline["params"]["configuration"] =
        json!({"taskPushNotificationConfig": {"url": "https://8.8.8.8/hook"}});
    let rules = json!({"actions": {"EMAIL": "redact"}});
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/pii", Some(rules)).await;
    assert_eq!(s, 200, "{b}");
    for req in [&set, &inline] {
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req.clone()).await;
        assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
        assert!(b.to_string().contains("PII rules"), "{b}");
    }
    let (s, _) = admin(&env, "DELETE", "/admin/workspaces/ws1/pii", None).await;
    assert!(s == 200 || s == 204, "{s}");
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set).await;
    assert!(b["result"].is_object(), "{b}");
    env.stop().await;
}
