//! Blocking sends: a turn that answers at once runs on the caller's own task; a turn that waits
//! moves to a task of its own and ends even when its caller has gone.

use crate::common::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_turn_answered_at_once_completes_is_stored_and_leaves_the_registry() {
    let s = echo(open_config()).await;
    let url = s.url().to_string();
    let (code, v) = rpc(&url, "SendMessage", json!({"message": msg("hi there")})).await;
    assert_eq!(code, 200, "{v}");
    let task = &v["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{v}");
    let id = task["id"].as_str().unwrap();
    let (_, got) = rpc(&url, "GetTask", json!({"id": id})).await;
    assert_eq!(
        got["result"], *task,
        "GetTask answers the task the send answered"
    );
    assert_eq!(
        s.manager().live_count(),
        0,
        "the ended turn left the live registry"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_waiting_turn_ends_after_its_caller_has_gone() {
    let s = echo(open_config()).await;
    let url = s.url().to_string();
    // The handler waits 300 ms; the caller gives up after 50 ms.
    let gone = client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .timeout(Duration::from_millis(50))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": msg("wait sleep:300")}}))
        .send()
        .await;
    assert!(gone.is_err(), "the caller should have timed out");
    // The turn was not cut short: the task completes.
    for _ in 0..500 {
        let (_, v) = rpc(&url, "ListTasks", json!({})).await;
        let tasks = v["result"]["tasks"].as_array().cloned().unwrap_or_default();
        if tasks.iter().any(|t| state(t) == "TASK_STATE_COMPLETED") {
            assert_eq!(tasks.len(), 1, "{v}");
            s.shutdown().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task of a caller that went away never completed");
}
