//! Task retention (issue 40, item 5: the database stays bounded): the records of a task the
//! gateway has heard nothing of for `task_retention` are deleted by the background pass; the
//! task then answers TaskNotFound to its owner (never reaches another owner), leaves the
//! owner's listing, and a task still heard of is kept.

use std::time::Duration;

use crate::common::*;
use a2a_gateway::config::Age;
use a2a_gateway::errors::Version;
use serde_json::{Value, json};

async fn get(env: &Env, id: &str) -> Value {
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": id}}),
        )
        .await;
    b
}

async fn listed(env: &Env) -> (Vec<String>, u64) {
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"l","method":"ListTasks","params":{"pageSize": 50}}),
        )
        .await;
    let ids = b["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{b}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, b["result"]["totalSize"].as_u64().unwrap())
}

async fn send(env: &Env) -> String {
    let (status, b) = env.rpc("/a2a/echo", Some("1.0"), send10("keep me")).await;
    assert_eq!(status, 200, "{b}");
    b["result"]["task"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn tasks_not_heard_of_for_the_retention_are_forgotten_and_answer_not_found() {
    let env = env_with(Version::V1, |c| {
        c.task_retention = Age(Duration::from_secs(3));
        c.audit_retention_check_secs = 1;
    })
    .await;
    let old = send(&env).await;
    assert_eq!(get(&env, &old).await["result"]["id"], old.as_str());
    env.store.settle_task_records().await;
    assert_eq!(listed(&env).await, (vec![old.clone()], 1));

    // The old task ages past the retention while a newer one is read every half second
    // (a GetTask answer is news of the task) for longer than the retention.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let fresh = send(&env).await;
    let born = std::time::Instant::now();
    let deadline = born + Duration::from_secs(20);
    // (Reading the old task would be news of it: only the fresh one is read.)
    let mut old_gone = false;
    while !old_gone || born.elapsed() < Duration::from_secs(6) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let f = get(&env, &fresh).await;
        assert_eq!(
            f["result"]["id"],
            fresh.as_str(),
            "the task heard of is kept: {f}"
        );
        old_gone = env.store.task_record_count().unwrap() == 1;
        assert!(
            std::time::Instant::now() < deadline,
            "the old task was never forgotten"
        );
    }
    let o = get(&env, &old).await;
    assert_eq!(o["error"]["code"], -32001, "{o}");
    assert_eq!(env.store.task_record_count().unwrap(), 1);
    env.store.settle_task_records().await;
    let (ids, total) = listed(&env).await;
    assert!(!ids.contains(&old), "{ids:?}");
    assert_eq!(total, ids.len() as u64);
    assert!(ids.contains(&fresh), "{ids:?}");
    env.stop().await;
}
