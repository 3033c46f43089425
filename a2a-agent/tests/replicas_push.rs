//! Push notifications of replicas on one PostgreSQL database (issue 33): a config registered
//! on replica B for a task running on replica A is used for A's next events, each delivered
//! once; a notification a killed replica left undelivered is resent by the survivor.

use crate::common::*;
use crate::replicas_live::{Gated, replica, texts, until};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// A webhook on loopback that answers 200 after `delay_ms` and records each body it answered.
#[derive(Clone)]
struct Webhook {
    url: String,
    got: Arc<Mutex<Vec<Value>>>,
    // Changed by the process test only.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    delay_ms: Arc<AtomicU64>,
}

impl Webhook {
    async fn start(delay_ms: u64) -> Webhook {
        let got: Arc<Mutex<Vec<Value>>> = Arc::default();
        let delay_ms = Arc::new(AtomicU64::new(delay_ms));
        let (g, d) = (got.clone(), delay_ms.clone());
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: axum::body::Bytes| {
                let (g, d) = (g.clone(), d.clone());
                async move {
                    tokio::time::sleep(Duration::from_millis(d.load(Ordering::SeqCst))).await;
                    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    g.lock().unwrap().push(v);
                    http::StatusCode::OK
                }
            }),
        );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", l.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        Webhook { url, got, delay_ms }
    }

    fn got(&self) -> Vec<Value> {
        self.got.lock().unwrap().clone()
    }

    /// The chunk texts delivered, in arrival order.
    fn chunks(&self) -> Vec<String> {
        self.got()
            .iter()
            .filter_map(|b| b["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
            .map(str::to_owned)
            .collect()
    }

    /// The states delivered for task `id`, in arrival order.
    fn states_of(&self, id: &str) -> Vec<String> {
        self.got()
            .iter()
            .filter(|b| b["statusUpdate"]["taskId"] == id)
            .filter_map(|b| b["statusUpdate"]["status"]["state"].as_str())
            .map(str::to_owned)
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_registered_on_b_is_used_for_the_next_events_of_a_task_running_on_a() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("push").unwrap();
    let url = cluster.url_of("push");
    let permits = Arc::new(Semaphore::new(0));
    let n = 10;
    let a = replica(
        &url,
        Gated {
            n,
            permits: permits.clone(),
        },
    )
    .await;
    let b = replica(
        &url,
        Gated {
            n,
            permits: Arc::new(Semaphore::new(0)),
        },
    )
    .await;
    let hook = Webhook::start(0).await;
    let id = send_async(a.url(), "go").await;
    wait_task(b.url(), &id, |s| s == "TASK_STATE_WORKING").await;
    let (_, v) = rpc(
        b.url(),
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "url": hook.url}),
    )
    .await;
    assert!(v["result"].is_object(), "{v}");
    // One chunk at a time until A (told by NOTIFY) delivers one; then the rest.
    let mut released = 0;
    while released < n - 1 {
        permits.add_permits(1);
        released += 1;
        if until(Duration::from_millis(300), || !hook.chunks().is_empty()).await {
            break;
        }
    }
    let first = hook.chunks();
    assert!(!first.is_empty(), "A used B's config: {:?}", hook.got());
    permits.add_permits(n - released);
    assert!(
        until(Duration::from_secs(30), || hook
            .states_of(&id)
            .iter()
            .any(|s| s == "TASK_STATE_COMPLETED"))
        .await,
        "the final event is delivered: {:?}",
        hook.got()
    );
    // From the first delivered chunk on, every chunk once, in order: one replica delivers.
    let got = hook.chunks();
    let from: usize = got[0][1..].parse().unwrap();
    assert_eq!(got, texts(from, n), "{:?}", hook.got());
    assert_eq!(
        hook.states_of(&id)
            .iter()
            .filter(|s| *s == "TASK_STATE_COMPLETED")
            .count(),
        1
    );
    a.shutdown().await;
    b.shutdown().await;
}

#[cfg(feature = "cli")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_a_killed_replica_left_undelivered_is_resent_by_the_survivor() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("outbox").unwrap();
    let url = cluster.url_of("outbox");
    let dir = tempfile::tempdir().unwrap();
    // The webhook holds every request: A's deliveries are in flight when A is killed.
    let hook = Webhook::start(60_000).await;
    let a = crate::replicas_procs::echo_replica(dir.path(), &url, "1s");
    let b = crate::replicas_procs::echo_replica(dir.path(), &url, "1s");
    let (_, v) = rpc(
        &a.url,
        "SendMessage",
        json!({"message": msg("job"), "configuration": {
            "taskPushNotificationConfig": {"url": hook.url}}}),
    )
    .await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    let t0 = std::time::Instant::now();
    drop(a); // kill -9
    hook.delay_ms.store(0, Ordering::SeqCst);
    assert!(
        until(Duration::from_secs(30), || hook
            .states_of(&id)
            .iter()
            .any(|s| s == "TASK_STATE_COMPLETED"))
        .await,
        "B resent A's final notification: {:?}",
        hook.got()
    );
    // Printed, not asserted.
    eprintln!(
        "kill -9 to resent by the survivor (lease 1s): {:?}",
        t0.elapsed()
    );
    // B is alive and keeps serving.
    let (_, v) = rpc(&b.url, "GetTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_COMPLETED", "{v}");
}
