//! Crash recovery: `kill -9` the agent binary with tasks in flight on a SQLite file, restart it
//! on the same file: every acknowledged task is there, none is left SUBMITTED/WORKING, and the
//! push webhook of each receives its final (FAILED) status.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn start(dir: &Path) -> Bin {
    let path = |f: &str| dir.join(f).display().to_string();
    let (card, toml, db) = (path("card.json"), path("agent.toml"), path("tasks.db"));
    bin(
        &[
            "--exec",
            "sleep 10",
            "--card",
            &card,
            "--config",
            &toml,
            "--sqlite-path",
            &db,
        ],
        &[("A2A_AGENT_LOG", "warn")],
    )
}

/// A webhook on 127.0.0.1:0 recording every JSON body it receives.
async fn webhook() -> (String, Arc<Mutex<Vec<Value>>>) {
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let g = g.clone();
            async move {
                if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                    g.lock().unwrap().push(v);
                }
                "ok"
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, got)
}

fn final_failed_for(bodies: &[Value], id: &str) -> bool {
    bodies.iter().any(|b| {
        b["statusUpdate"]["taskId"] == id
            && b["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_restart_fails_unfinished_tasks_and_notifies_webhooks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("card.json"),
        json!({
            "name": "slow", "description": "sleeps", "version": "1.0.0",
            "capabilities": {"streaming": true, "pushNotifications": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("agent.toml"),
        "validate_auth = false\nallow_local_webhook_urls = true\npush_retry_backoff = \"50ms\"\n",
    )
    .unwrap();
    let (hook, got) = webhook().await;

    let a = start(dir.path());
    let mut ids = Vec::new();
    for i in 0..5 {
        let (_, v) = rpc(
            &a.url,
            "SendMessage",
            json!({"message": msg(&format!("job {i}")), "configuration": {"returnImmediately": true}}),
        )
        .await;
        let id = v["result"]["task"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no task: {v}"))
            .to_string();
        let (_, c) = rpc(
            &a.url,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": hook}),
        )
        .await;
        assert!(c.get("result").is_some(), "{c}");
        ids.push(id);
    }
    for id in &ids {
        wait_task(&a.url, id, |s| s == "TASK_STATE_WORKING").await;
    }
    drop(a); // SIGKILL (Child::kill) and reap

    let b = start(dir.path());
    for id in &ids {
        let (_, v) = rpc(&b.url, "GetTask", json!({"id": id})).await;
        let t = &v["result"];
        assert_eq!(state(t), "TASK_STATE_FAILED", "{v}");
        assert_eq!(
            t["status"]["message"]["parts"][0]["text"],
            a2a_agent::RESTARTED,
            "{v}"
        );
    }
    let (_, v) = rpc(&b.url, "ListTasks", json!({"pageSize": 100})).await;
    assert_eq!(v["result"]["totalSize"], ids.len(), "{v}");
    for t in v["result"]["tasks"].as_array().unwrap() {
        assert_eq!(state(t), "TASK_STATE_FAILED", "{t}");
    }
    // Each webhook receives the final status (bounded wait).
    for _ in 0..500 {
        let bodies = got.lock().unwrap().clone();
        if ids.iter().all(|id| final_failed_for(&bodies, id)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let bodies = got.lock().unwrap().clone();
    for id in &ids {
        assert!(
            final_failed_for(&bodies, id),
            "no FAILED push for {id}: {bodies:?}"
        );
    }
    // The restarted agent still serves new work.
    let (_, v) = rpc(
        &b.url,
        "SendMessage",
        json!({"message": msg("again"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_SUBMITTED", "{v}");
}
