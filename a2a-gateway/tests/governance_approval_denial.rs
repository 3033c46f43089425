//! The reason of a denial reaches the caller (issue 39, item 6), through a real gateway and
//! peer: in the refusal of a send into, or SubscribeToTask on, the denied gateway task
//! (JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0), in GetTask, in a blocking send that waited and in a
//! held stream's last status update.

use crate::common;

use std::time::Duration;

use a2a_gateway::errors::Version;
use common::approval::*;
use common::*;
use serde_json::{Value, json};

/// The denial's reason in a JSON-RPC error of either version.
fn denial_reason(b: &Value) -> String {
    let data = &b["error"]["data"];
    let r = if data.is_array() {
        &data[0]["metadata"]["denialReason"]
    } else {
        &data["denialReason"]
    };
    r.as_str().unwrap_or("").to_owned()
}

#[tokio::test]
async fn the_caller_gets_the_reason_of_a_denial() {
    let env = env_with(Version::V1, |c| c.approval_wait_secs = 10).await;
    governed(&env).await;
    let why = "over this month's refund budget";
    for v in [None, Some("1.0")] {
        let (_, b) = env.rpc("/a2a/echo", v, held(v, "refund 40")).await;
        let id = approval_id(&b);
        let gw_task = format!("gw-approval-{id}");
        let (s, b) = decide(&env, &id, "deny", Some(why)).await;
        assert_eq!(s, 200, "{b}");
        // A send into the denied task: the refusal carries the reason.
        let (_, b) = env.rpc("/a2a/echo", v, send_into(v, &gw_task)).await;
        assert_eq!(gw_code(&b), "a2a_approval_denied", "{b}");
        assert!(b["error"]["message"].as_str().unwrap().contains(why), "{b}");
        assert_eq!(denial_reason(&b), why, "{b}");
        // GetTask: the rejected task says why.
        let (_, b) = env.rpc("/a2a/echo", v, get(v, &gw_task)).await;
        let t = result_task(&b);
        assert!(
            t["status"]["message"]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .contains(why),
            "{b}"
        );
        assert_eq!(t["metadata"]["denialReason"], why, "{b}");
        // SubscribeToTask: refused with the reason (one error event or an error answer).
        let m = if v.is_some() {
            "SubscribeToTask"
        } else {
            "tasks/resubscribe"
        };
        let (_, _, evs) = env
            .sse(
                "/a2a/echo",
                v,
                json!({"jsonrpc":"2.0","id":"s","method": m,"params":{"id": gw_task}}),
            )
            .await;
        let (s, b) = if evs.is_empty() {
            env.rpc(
                "/a2a/echo",
                v,
                json!({"jsonrpc":"2.0","id":"s","method": m,"params":{"id": gw_task}}),
            )
            .await
        } else {
            (200, evs.last().unwrap().clone())
        };
        assert_eq!(denial_reason(&b), why, "{s} {b}");
    }

    // HTTP+JSON 1.0: the google.rpc.Status of the refusal carries it.
    let body = json!({"message": {"messageId": "rest-held", "role": "ROLE_USER",
        "parts": [{"text": "refund 41"}]}, "metadata": {"skill": "refund"},
        "configuration": {"returnImmediately": true}});
    let b: Value = env
        .v1(reqwest::Method::POST, "/a2a/echo/v1/message:send")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = approval_id(&json!({"result": b}));
    let (s, _) = decide(&env, &id, "deny", Some(why)).await;
    assert_eq!(s, 200);
    let into = json!({"message": {"messageId": "rest-into", "role": "ROLE_USER",
        "taskId": format!("gw-approval-{id}"), "parts": [{"text": "again"}]}});
    let r = env
        .v1(reqwest::Method::POST, "/a2a/echo/v1/message:send")
        .json(&into)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let b: Value = r.json().await.unwrap();
    assert!(b["error"]["message"].as_str().unwrap().contains(why), "{b}");
    let info = b["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d.get("metadata").is_some())
        .unwrap();
    assert_eq!(info["metadata"]["denialReason"], why, "{b}");

    // A blocking send that waits gets the rejected task with the reason.
    let mut req = held_parts(Some("1.0"), &[json!({"text": "refund 42"})], None, true);
    req["id"] = json!("blocking");
    let http = env.http.clone();
    let url = env.url("/a2a/echo");
    let key = env.key.clone();
    let caller = tokio::spawn(async move {
        http.post(url)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(key)
            .body(req.to_string())
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    let id = pending_id(&env).await;
    let (s, _) = decide(&env, &id, "deny", Some(why)).await;
    assert_eq!(s, 200);
    let b = caller.await.unwrap();
    let t = result_task(&b);
    assert_eq!(t["status"]["state"], "TASK_STATE_REJECTED", "{b}");
    assert!(b.to_string().contains(why), "{b}");

    // A held stream ends with the rejected status, saying why.
    let mut req = held(Some("1.0"), "refund 43");
    req["method"] = json!("SendStreamingMessage");
    let mut rx = events(&env, &env.key, Some("1.0"), req).await;
    let first = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    let id = approval_id(&first);
    let (s, _) = decide(&env, &id, "deny", Some(why)).await;
    assert_eq!(s, 200);
    let rest = rest_of(&mut rx).await;
    let last = rest.last().unwrap();
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_REJECTED",
        "{last}"
    );
    assert!(last.to_string().contains(why), "{last}");
    env.stop().await;
}
