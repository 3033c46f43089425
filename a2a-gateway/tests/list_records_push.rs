//! ListTasks records follow push notifications (issue 40, item 1): a task moved on directly at
//! the peer (the gateway sees no answer) reaches its new state's filter through the notification
//! the peer sends to the gateway's sealed callback, before any listing reads the task.

use std::time::Duration;

use crate::list_records::{call, direct, ids, message};
use crate::push_callback::{gateway, receiver, rust_push_agent, set03, wait_for};
use serde_json::json;

#[tokio::test]
async fn a_push_notification_updates_the_record() {
    let agent = rust_push_agent().await;
    let (hook, seen, _recv) = receiver().await;
    let env = gateway(true, false).await;
    env.register("ws1", "shared", agent.url(), None);
    let key = env.key.clone();
    let t = call(
        &env,
        &key,
        "SendMessage",
        json!({"message": message("need input", None, None)}),
    )
    .await;
    let task = t["task"]["id"].as_str().unwrap().to_owned();
    let ctx = t["task"]["contextId"].as_str().unwrap().to_owned();
    let (_, b) = env.rpc("/a2a/shared", None, set03(&task, &hook)).await;
    assert!(b.get("error").is_none(), "{b}");
    // Completed directly at the peer: only the notification tells the gateway.
    let base = agent.url().trim_end_matches('/').to_owned();
    let done = direct(
        &reqwest::Client::new(),
        &base,
        message("done", Some(&ctx), Some(&task)),
    )
    .await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    wait_for(&seen, 1).await;
    for _ in 0..200 {
        let delivered = seen
            .lock()
            .unwrap()
            .iter()
            .any(|(_, v)| v["status"]["state"] == "completed");
        if delivered {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let r = call(
        &env,
        &key,
        "ListTasks",
        json!({"status": "TASK_STATE_COMPLETED"}),
    )
    .await;
    assert_eq!(
        (ids(&r), r["totalSize"].clone()),
        (vec![task], json!(1)),
        "{r}"
    );
    env.stop().await;
    agent.shutdown().await;
}
