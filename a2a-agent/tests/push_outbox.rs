//! Push notifications at shutdown and across restarts (the outbox): the `a2a-agent` binary on a
//! SQLite file with a real webhook receiver on 127.0.0.1:0. SIGTERM waits for queued
//! notifications (every task's final one); what cannot be delivered (webhook down, `kill -9`)
//! stays recorded in the `push_outbox` table and a restart resends it. The in-process server
//! drains too, with the memory store.

use crate::common;

use a2a_agent::store::{Notice, StoredTask};
use a2a_agent::{AgentCard, AgentConfig, Reply, TaskStore, handler_fn};
use common::{Bin, bin, msg, rpc, start_with};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// The webhook: answers `status` after `delay_ms`, and records each body it answered 2xx.

#[derive(Clone)]
struct Webhook {
    url: String,
    delivered: Arc<Mutex<Vec<Value>>>,
    status: Arc<AtomicU16>,
    delay_ms: Arc<AtomicU64>,
}

impl Webhook {
    async fn start(status: u16, delay_ms: u64) -> Webhook {
        let delivered: Arc<Mutex<Vec<Value>>> = Arc::default();
        let status = Arc::new(AtomicU16::new(status));
        let delay_ms = Arc::new(AtomicU64::new(delay_ms));
        let (d, s, w) = (delivered.clone(), status.clone(), delay_ms.clone());
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: axum::body::Bytes| {
                let (d, s, w) = (d.clone(), s.clone(), w.clone());
                async move {
                    tokio::time::sleep(Duration::from_millis(w.load(Ordering::SeqCst))).await;
                    let code = s.load(Ordering::SeqCst);
                    if (200..300).contains(&code) {
                        let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        d.lock().unwrap().push(v);
                    }
                    http::StatusCode::from_u16(code).unwrap()
                }
            }),
        );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", l.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        Webhook {
            url,
            delivered,
            status,
            delay_ms,
        }
    }

    fn delivered(&self) -> Vec<Value> {
        self.delivered.lock().unwrap().clone()
    }

    /// The states delivered for task `id`, in arrival order.
    fn states_of(&self, id: &str) -> Vec<String> {
        self.delivered()
            .iter()
            .filter(|b| b["statusUpdate"]["taskId"] == id)
            .filter_map(|b| b["statusUpdate"]["status"]["state"].as_str())
            .map(str::to_string)
            .collect()
    }

    /// Wait (bounded) until every task of `ids` got its COMPLETED status.
    async fn wait_completed(&self, ids: &[String], within: Duration) {
        let deadline = Instant::now() + within;
        while !ids.iter().all(|id| completed(&self.states_of(id))) {
            if Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn completed(states: &[String]) -> bool {
    states.iter().any(|s| s == "TASK_STATE_COMPLETED")
}

// ---------------------------------------------------------------------------------------------
// The binary and its SQLite file.

fn write_files(dir: &Path, extra_toml: &str) {
    std::fs::write(
        dir.join("card.json"),
        json!({
            "name": "echo", "description": "echoes", "version": "1.0.0",
            "capabilities": {"streaming": true, "pushNotifications": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("agent.toml"),
        format!("validate_auth = false\nallow_local_webhook_urls = true\n{extra_toml}"),
    )
    .unwrap();
}

fn start(dir: &Path) -> Bin {
    let path = |f: &str| dir.join(f).display().to_string();
    let (card, toml, db) = (path("card.json"), path("agent.toml"), path("tasks.db"));
    bin(
        &[
            "--echo",
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

/// `n` blocking sends at once, each with an inline push config for `hook`; the task ids (each
/// answered COMPLETED, so its final notification is queued or recorded).
async fn send_tasks(url: &str, hook: &str, n: usize) -> Vec<String> {
    let sends = (0..n).map(|i| {
        let (url, hook) = (url.to_string(), hook.to_string());
        async move {
            let mut m = msg(&format!("job {i}"));
            m["messageId"] = json!(format!("job-{i}-{}", common::uuid()));
            let (_, v) = rpc(
                &url,
                "SendMessage",
                json!({"message": m, "configuration": {"taskPushNotificationConfig": {"url": hook}}}),
            )
            .await;
            let t = &v["result"]["task"];
            assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
            t["id"].as_str().unwrap().to_string()
        }
    });
    futures::future::join_all(sends).await
}

fn sigterm(b: &Bin) {
    // SAFETY: kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(b.child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
}

fn wait_exit(b: &mut Bin, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = b.child.try_wait().expect("try_wait") {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "a2a-agent did not exit within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The outbox rows of the SQLite file: (task id, body).
fn outbox(dir: &Path) -> Vec<(String, Value)> {
    let c = rusqlite::Connection::open(dir.join("tasks.db")).unwrap();
    let mut st = c
        .prepare("SELECT task_id, body FROM push_outbox ORDER BY seq")
        .unwrap();
    st.query_map([], |r| {
        let body: Vec<u8> = r.get(1)?;
        Ok((
            r.get::<_, String>(0)?,
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn recorded_final(rows: &[(String, Value)], id: &str) -> bool {
    rows.iter()
        .any(|(t, b)| t == id && b["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
}

// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_delivers_the_final_push_of_every_task_before_exiting() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), "shutdown_grace = \"10s\"\n");
    // Slow-ish: each delivery takes 250 ms, so the final ones are still queued at SIGTERM.
    let hook = Webhook::start(200, 250).await;
    let mut a = start(dir.path());
    let ids = send_tasks(&a.url, &hook.url, 8).await;
    sigterm(&a);
    let status = wait_exit(&mut a, Duration::from_secs(20));
    assert!(status.success(), "{status:?}");
    // Delivered before the process exited (no wait here), and so removed from the outbox.
    for id in &ids {
        let states = hook.states_of(id);
        assert!(completed(&states), "task {id}: {states:?}");
    }
    assert_eq!(outbox(dir.path()), Vec::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn final_pushes_a_down_webhook_missed_are_recorded_and_resent_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        "shutdown_grace = \"500ms\"\npush_retry_attempts = 1\npush_retry_backoff = \"20ms\"\n",
    );
    let hook = Webhook::start(503, 0).await;
    let mut a = start(dir.path());
    let ids = send_tasks(&a.url, &hook.url, 8).await;
    sigterm(&a);
    let status = wait_exit(&mut a, Duration::from_secs(20));
    assert!(status.success(), "{status:?}");
    assert!(hook.delivered().is_empty());
    let rows = outbox(dir.path());
    for id in &ids {
        assert!(
            recorded_final(&rows, id),
            "no recorded final push for {id}: {rows:?}"
        );
    }

    // The webhook is back: the restarted agent resends, in order, and empties the outbox.
    hook.status.store(200, Ordering::SeqCst);
    let mut b = start(dir.path());
    hook.wait_completed(&ids, Duration::from_secs(15)).await;
    for id in &ids {
        let states = hook.states_of(id);
        assert_eq!(
            states.last().map(String::as_str),
            Some("TASK_STATE_COMPLETED"),
            "task {id}: {states:?}"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !outbox(dir.path()).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(outbox(dir.path()), Vec::new());
    sigterm(&b);
    assert!(wait_exit(&mut b, Duration::from_secs(20)).success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_pushes_in_flight_then_a_restart_resends_them() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), "push_timeout = \"1m\"\n");
    // The webhook holds every request: nothing is answered before the kill.
    let hook = Webhook::start(200, 60_000).await;
    let a = start(dir.path());
    let ids = send_tasks(&a.url, &hook.url, 8).await;
    drop(a); // SIGKILL and reap
    let rows = outbox(dir.path());
    for id in &ids {
        assert!(
            recorded_final(&rows, id),
            "no recorded final push for {id}: {rows:?}"
        );
    }

    hook.delay_ms.store(0, Ordering::SeqCst);
    let _b = start(dir.path());
    hook.wait_completed(&ids, Duration::from_secs(15)).await;
    for id in &ids {
        let states = hook.states_of(id);
        assert!(completed(&states), "task {id}: {states:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_shutdown_waits_for_queued_pushes_with_the_memory_store() {
    let hook = Webhook::start(200, 200).await;
    let card = AgentCard::from_json(json!({
        "name": "push", "description": "push", "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": []
    }))
    .unwrap();
    let cfg = AgentConfig {
        validate_auth: false,
        allow_local_webhook_urls: true,
        ..AgentConfig::default()
    };
    let srv = start_with(
        card,
        handler_fn(|_ctx: a2a_agent::RequestContext| async { Ok(Reply::text("done")) }),
        cfg,
    )
    .await;
    let ids = send_tasks(srv.url(), &hook.url, 4).await;
    srv.shutdown().await;
    for id in &ids {
        let states = hook.states_of(id);
        assert!(completed(&states), "task {id}: {states:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_outbox_records_with_the_task_and_drops_notices_of_deleted_configs_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    {
        let store = a2a_agent::SqliteStore::open(&db).unwrap();
        let task: a2a_agent::model::Task = serde_json::from_value(json!({
            "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}
        }))
        .unwrap();
        let notice = |cfg: &str| Notice {
            task_id: "t-1".into(),
            config_id: cfg.into(),
            content_type: "application/a2a+json".into(),
            body: bytes::Bytes::from_static(b"{}"),
        };
        let seqs = store
            .put_with_notices(
                StoredTask {
                    task,
                    owner: "o".into(),
                },
                vec![notice("a"), notice("b")],
            )
            .await
            .unwrap();
        assert_eq!(seqs.len(), 2);
        assert!(seqs[0] < seqs[1]);
        assert_eq!(store.get("t-1").await.unwrap().unwrap().owner, "o");
        store.notice_done(seqs[0]).await.unwrap();
        let due = store.due_notices().await.unwrap();
        assert_eq!(due.len(), 1);
        assert_eq!((due[0].seq, due[0].notice.clone()), (seqs[1], notice("b")));
    }
    // Reopened: still due. Served on the file: no config "b" exists, so the notice is dropped.
    let store = a2a_agent::SqliteStore::open(&db).unwrap();
    assert_eq!(store.due_notices().await.unwrap().len(), 1);
    let card = AgentCard::from_json(json!({
        "name": "push", "description": "push", "version": "1.0.0",
        "capabilities": {"pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": []
    }))
    .unwrap();
    let cfg = AgentConfig {
        validate_auth: false,
        sqlite_path: Some(db.clone()),
        ..AgentConfig::default()
    };
    let srv = start_with(
        card,
        handler_fn(|_ctx: a2a_agent::RequestContext| async { Ok(Reply::text("done")) }),
        cfg,
    )
    .await;
    assert_eq!(store.due_notices().await.unwrap(), Vec::new());
    srv.shutdown().await;
}
