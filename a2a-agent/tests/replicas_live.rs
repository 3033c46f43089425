//! Several agents on one PostgreSQL database, live (issue 33): a subscriber on replica B of a
//! task running on replica A gets every event in order exactly once, and so does a
//! `Last-Event-ID` resume on B, on both bindings in both versions, also while B's listener is
//! cut off; CancelTask on B reaches A's handler and every subscriber gets CANCELED (the same
//! with three `a2a-agent` processes, and `kill -9`: `replicas_procs.rs`).

use crate::common::*;
use crate::resume::{Ev, WAYS, Way, chunks, completes, event, ids, read, subscribe};
use a2a_agent::model::{Artifact, Part, TaskState};
use a2a_agent::{AgentConfig, Handler, HandlerError, Reply, RequestContext};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Emits `n` chunks (`c0`, `c1`, ...) of one artifact, each once the test gives a permit, then
/// completes.
pub(crate) struct Gated {
    pub(crate) n: usize,
    pub(crate) permits: Arc<Semaphore>,
}

#[async_trait::async_trait]
impl Handler for Gated {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        for i in 0..self.n {
            match self.permits.acquire().await {
                Ok(p) => p.forget(),
                Err(_) => return Err(HandlerError::failed("closed")),
            }
            ctx.emit_artifact(
                Artifact {
                    artifact_id: "out".into(),
                    parts: vec![Part::text(format!("c{i}"))],
                    ..Default::default()
                },
                i > 0,
                i + 1 == self.n,
            )
            .await;
        }
        Ok(Reply::State(TaskState::Completed, None))
    }
}

/// Waits until its task is canceled (and says so), or until a 60 s bound.
struct Waiter {
    saw_cancel: Arc<AtomicBool>,
}

#[async_trait::async_trait]
impl Handler for Waiter {
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        if ctx.text().contains("input") {
            return Ok(Reply::input_required("more, please"));
        }
        tokio::select! {
            _ = ctx.cancelled() => {
                self.saw_cancel.store(true, Ordering::SeqCst);
                Err(HandlerError::failed("canceled"))
            }
            _ = tokio::time::sleep(Duration::from_secs(60)) => Ok(Reply::text("too late")),
        }
    }
}

/// A library server on database `url` running `handler`.
pub(crate) async fn replica(url: &str, handler: impl Handler) -> a2a_agent::ServerHandle {
    start_with(
        push_card(),
        handler,
        AgentConfig {
            store: Some(url.to_owned()),
            allow_local_webhook_urls: true,
            ..open_config()
        },
    )
    .await
}

/// The card of the test replicas: streaming and push notifications.
pub(crate) fn push_card() -> a2a_agent::AgentCard {
    a2a_agent::AgentCard::from_json(card_json()).unwrap()
}

/// [`push_card`] as JSON.
pub(crate) fn card_json() -> Value {
    json!({
        "name": "echo", "description": "echoes", "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": []
    })
}

/// Cuts every `LISTEN`ing session of the database at `url` (the replicas' listeners): they
/// reconnect by themselves, and poll the log while they are away.
async fn cut_listeners(url: &str) {
    let (c, conn) = a2a_pg::tokio_postgres::connect(url, a2a_pg::tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let rows = c
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(!rows.is_empty(), "the replicas listen");
}

/// The stream's kind of its first event (the snapshot: `task`).
fn first_kind(way: Way, evs: &[Ev]) -> String {
    event(way, evs[0].data.as_ref().unwrap()).0
}

fn consecutive(evs: &[Ev]) -> bool {
    ids(evs).windows(2).all(|w| w[1] == w[0] + 1)
}

pub(crate) fn texts(from: usize, to: usize) -> Vec<String> {
    (from..to).map(|i| format!("c{i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_and_a_resume_on_b_get_every_event_of_a_task_running_on_a() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("live").unwrap();
    let url = cluster.url_of("live");
    let permits = Arc::new(Semaphore::new(0));
    let a = replica(
        &url,
        Gated {
            n: 10,
            permits: permits.clone(),
        },
    )
    .await;
    let b = replica(
        &url,
        Gated {
            n: 10,
            permits: Arc::new(Semaphore::new(0)),
        },
    )
    .await;
    for (i, way) in WAYS.into_iter().enumerate() {
        let id = send_async(a.url(), "go").await;
        wait_task(b.url(), &id, |s| s == "TASK_STATE_WORKING").await;
        // Subscribed on B before the task emits anything: one reads to the end, one reads the
        // snapshot and five chunks, then comes back with Last-Event-ID.
        let whole = tokio::spawn(read(subscribe(b.url(), way, &id, None).await, usize::MAX));
        let cut = subscribe(b.url(), way, &id, None).await;
        permits.add_permits(5);
        let first = read(cut, 6).await;
        assert_eq!(first_kind(way, &first), "task", "{way:?} {first:?}");
        assert_eq!(chunks(way, &first), texts(0, 5), "{way:?} {first:?}");
        assert!(consecutive(&first), "{way:?} {first:?}");
        if i % 2 == 1 {
            // The rest is announced while B's listener is away (polled, then caught up).
            cut_listeners(&url).await;
        }
        let last = first.last().unwrap().id.unwrap().to_string();
        let resumed = subscribe(b.url(), way, &id, Some(&last)).await;
        permits.add_permits(5);
        let rest = read(resumed, usize::MAX).await;
        assert_eq!(chunks(way, &rest), texts(5, 10), "{way:?} {rest:?}");
        assert_eq!(
            rest[0].id.unwrap(),
            first.last().unwrap().id.unwrap() + 1,
            "{way:?} {rest:?}"
        );
        assert!(consecutive(&rest), "{way:?} {rest:?}");
        assert!(completes(way, &rest), "{way:?} {rest:?}");
        let all = tokio::time::timeout(Duration::from_secs(30), whole)
            .await
            .expect("the whole stream ends after the final event")
            .unwrap();
        assert_eq!(first_kind(way, &all), "task", "{way:?} {all:?}");
        assert_eq!(chunks(way, &all), texts(0, 10), "{way:?} {all:?}");
        assert!(consecutive(&all), "{way:?} {all:?}");
        assert!(completes(way, &all), "{way:?} {all:?}");
        assert_eq!(
            all.len(),
            12,
            "the snapshot, ten chunks, the end: {way:?} {all:?}"
        );
    }
    a.shutdown().await;
    b.shutdown().await;
}

/// A 1.0 JSON-RPC SubscribeToTask on `url`, open (its response headers read).
pub(crate) async fn open_subscription(url: &str, id: &str) -> reqwest::Response {
    client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                      "params": {"id": id}}),
        )
        .send()
        .await
        .unwrap()
}

/// The state of the last event of a 1.0 JSON-RPC stream.
pub(crate) fn last_state(evs: &[Value]) -> String {
    let r = &evs.last().unwrap_or_else(|| panic!("no events"))["result"];
    let s = r["statusUpdate"]["status"]["state"]
        .as_str()
        .or_else(|| r["task"]["status"]["state"].as_str())
        .unwrap_or("");
    s.to_owned()
}

/// Polls `f` until it holds, for at most `within`.
pub(crate) async fn until(within: Duration, f: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while !f() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_b_reaches_the_handler_on_a_and_every_subscriber_gets_canceled() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("cancel").unwrap();
    let url = cluster.url_of("cancel");
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let a = replica(
        &url,
        Waiter {
            saw_cancel: saw_cancel.clone(),
        },
    )
    .await;
    let b = replica(
        &url,
        Waiter {
            saw_cancel: Arc::new(AtomicBool::new(false)),
        },
    )
    .await;
    // Running on A.
    let id = send_async(a.url(), "wait").await;
    wait_task(b.url(), &id, |s| s == "TASK_STATE_WORKING").await;
    let on_a = tokio::spawn(sse_events(open_subscription(a.url(), &id).await));
    let on_b = tokio::spawn(sse_events(open_subscription(b.url(), &id).await));
    let (_, v) = rpc(b.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_CANCELED", "{v}");
    assert!(
        until(Duration::from_secs(5), || saw_cancel.load(Ordering::SeqCst)).await,
        "A's handler saw the cancel"
    );
    for (who, sub) in [("A", on_a), ("B", on_b)] {
        let evs = tokio::time::timeout(Duration::from_secs(30), sub)
            .await
            .unwrap_or_else(|_| panic!("{who}'s stream ends"))
            .unwrap();
        assert_eq!(last_state(&evs), "TASK_STATE_CANCELED", "{who}: {evs:?}");
    }
    let (_, v) = rpc(a.url(), "GetTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_CANCELED", "{v}");
    let (_, v) = rpc(b.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(v["error"]["code"], -32002, "not cancelable any more: {v}");

    // Waiting for input (no replica runs it): canceled on B, told to A's subscriber.
    let (_, v) = rpc(a.url(), "SendMessage", json!({"message": msg("input")})).await;
    assert_eq!(
        state(&v["result"]["task"]),
        "TASK_STATE_INPUT_REQUIRED",
        "{v}"
    );
    let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    let on_a = tokio::spawn(sse_events(open_subscription(a.url(), &id).await));
    let (_, v) = rpc(b.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_CANCELED", "{v}");
    let evs = tokio::time::timeout(Duration::from_secs(30), on_a)
        .await
        .expect("A's stream ends")
        .unwrap();
    assert_eq!(last_state(&evs), "TASK_STATE_CANCELED", "{evs:?}");
    a.shutdown().await;
    b.shutdown().await;
}

/// The official Python SDK client (a2a-sdk 1.x, both bindings) subscribes on B to a task
/// running on A: the task first, then the rest of its chunks, each once, and the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_subscribes_on_b_to_a_task_running_on_a() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("sdk").unwrap();
    let url = cluster.url_of("sdk");
    let permits = Arc::new(Semaphore::new(0));
    let a = replica(
        &url,
        Gated {
            n: 6,
            permits: permits.clone(),
        },
    )
    .await;
    let b = replica(
        &url,
        Gated {
            n: 6,
            permits: Arc::new(Semaphore::new(0)),
        },
    )
    .await;
    for binding in ["jsonrpc", "rest"] {
        let id = send_async(a.url(), "go").await;
        wait_task(b.url(), &id, |s| s == "TASK_STATE_WORKING").await;
        permits.add_permits(2);
        let b_url = b.url().to_owned();
        let scenario = json!([{"op": "subscribe", "taskId": id}]);
        let client = tokio::spawn(async move {
            crate::common::sdk::run("sdk1", &b_url, binding, Some("1.0"), scenario).await
        });
        // Once B follows the task (the SDK's subscription made it live there), A goes on.
        assert!(
            until(Duration::from_secs(60), || b.manager().live_count() == 1).await,
            "{binding}: the SDK subscribed on B"
        );
        permits.add_permits(4);
        let lines = client.await.unwrap();
        let evs = crate::common::sdk::events(&lines, 0);
        assert!(evs[0].get("task").is_some(), "{binding}: {lines:?}");
        // The chunks the snapshot holds, then those of the events: each once, in order.
        let mut got: Vec<String> = evs[0]["task"]["artifacts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .flat_map(|x| x["parts"].as_array().unwrap().clone())
                    .collect::<Vec<Value>>()
            })
            .unwrap_or_default()
            .iter()
            .map(|p| p["text"].as_str().unwrap().to_owned())
            .collect();
        for e in &evs[1..] {
            if let Some(p) = e["artifactUpdate"]["artifact"]["parts"].as_array() {
                got.extend(p.iter().map(|p| p["text"].as_str().unwrap().to_owned()));
            }
        }
        assert_eq!(got, texts(0, 6), "{binding}: {lines:?}");
        assert_eq!(
            crate::common::sdk::st(evs.last().unwrap()),
            "TASK_STATE_COMPLETED",
            "{binding}: {lines:?}"
        );
        assert!(
            until(Duration::from_secs(10), || b.manager().live_count() == 0).await,
            "{binding}: B stops following the ended task"
        );
    }
    a.shutdown().await;
    b.shutdown().await;
}

/// A task followed on B whose subscribers all went away is given up at its next event (B
/// follows no task nobody reads); a later subscriber on B follows it again and gets the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b_stops_following_a_task_nobody_reads_and_follows_it_again_for_a_new_subscriber() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("abandon").unwrap();
    let url = cluster.url_of("abandon");
    let permits = Arc::new(Semaphore::new(0));
    let a = replica(
        &url,
        Gated {
            n: 4,
            permits: permits.clone(),
        },
    )
    .await;
    let b = replica(
        &url,
        Gated {
            n: 4,
            permits: Arc::new(Semaphore::new(0)),
        },
    )
    .await;
    let way = Way::RpcV1;
    let id = send_async(a.url(), "go").await;
    wait_task(b.url(), &id, |s| s == "TASK_STATE_WORKING").await;
    let open = subscribe(b.url(), way, &id, None).await;
    assert_eq!(b.manager().live_count(), 1, "B follows the task");
    let first = read(open, 1).await;
    assert_eq!(first_kind(way, &first), "task");
    // The subscriber is gone; the next event (once B's server noticed the closed connection)
    // finds nobody to give it to.
    let mut released = 0;
    while released < 3 {
        permits.add_permits(1);
        released += 1;
        if until(Duration::from_secs(2), || b.manager().live_count() == 0).await {
            break;
        }
    }
    assert_eq!(b.manager().live_count(), 0, "B gave the task up");
    let again = subscribe(b.url(), way, &id, None).await;
    permits.add_permits(4 - released);
    let rest = read(again, usize::MAX).await;
    assert_eq!(first_kind(way, &rest), "task", "{rest:?}");
    assert_eq!(chunks(way, &rest[1..]), texts(released, 4), "{rest:?}");
    assert!(consecutive(&rest) && completes(way, &rest), "{rest:?}");
    a.shutdown().await;
    b.shutdown().await;
}

/// A status event of task `id` in `state` saying `text`, as the log keeps it.
fn status_event(id: &str, state: &str, text: &str) -> a2a_agent::model::StreamResponse {
    serde_json::from_value(json!({"statusUpdate": {
        "taskId": id, "contextId": "c",
        "status": {"state": state, "message": {
            "messageId": format!("m-{text}"), "role": "ROLE_AGENT", "parts": [{"text": text}]}}
    }}))
    .unwrap()
}

/// B's snapshot of a task another replica runs names the last event the stored task includes:
/// a task stored before its event is logged does not get that event again, and one logged
/// ahead of the store (the runtime's WORKING) gets the logged events after the snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_on_b_names_the_event_the_stored_task_includes() {
    use a2a_agent::TaskStore;
    use a2a_agent::replay::ReplayLog;
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("snapshot").unwrap();
    let url = cluster.url_of("snapshot");
    // "A": a live replica that writes the task and its log by hand.
    let a = a2a_agent::PostgresStore::connect(&url, &a2a_agent::store::PoolOptions::default())
        .await
        .unwrap();
    let log = a2a_agent::replay_pg::PgReplay::new(a.clone(), 256);
    let b = replica(
        &url,
        Gated {
            n: 1,
            permits: Arc::new(Semaphore::new(0)),
        },
    )
    .await;
    let owner = a2a_agent::CallerProfile::anonymous().owner_key();
    let task = |id: &str, text: &str| -> a2a_agent::store::StoredTask {
        a2a_agent::store::StoredTask {
            task: serde_json::from_value(json!({
                "id": id, "contextId": "c",
                "status": {"state": "TASK_STATE_WORKING", "message": {
                    "messageId": format!("m-{text}"), "role": "ROLE_AGENT",
                    "parts": [{"text": text}]}}
            }))
            .unwrap(),
            owner: owner.clone(),
        }
    };
    let text_of = |e: &Ev| -> String {
        let (_, body) = event(Way::RpcV1, e.data.as_ref().unwrap());
        body["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    // Stored with event 3, which is not logged yet (events 1 and 2 are).
    for n in 1..=2 {
        log.append(
            "ahead",
            n,
            &status_event("ahead", "TASK_STATE_WORKING", &format!("e{n}")),
        )
        .await
        .unwrap();
    }
    a.put_numbered(task("ahead", "e3"), vec![], 3)
        .await
        .unwrap();
    let sub = tokio::spawn(read(
        subscribe(b.url(), Way::RpcV1, "ahead", None).await,
        usize::MAX,
    ));
    assert!(until(Duration::from_secs(10), || b.manager().live_count() == 1).await);
    log.append(
        "ahead",
        3,
        &status_event("ahead", "TASK_STATE_WORKING", "e3"),
    )
    .await
    .unwrap();
    log.append(
        "ahead",
        4,
        &status_event("ahead", "TASK_STATE_COMPLETED", "e4"),
    )
    .await
    .unwrap();
    let evs = tokio::time::timeout(Duration::from_secs(30), sub)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(&evs), [3, 4], "{evs:?}");
    assert_eq!(first_kind(Way::RpcV1, &evs), "task", "{evs:?}");
    assert_eq!(
        text_of(&evs[0]),
        "e3",
        "the snapshot includes event 3: {evs:?}"
    );
    assert_eq!(text_of(&evs[1]), "e4", "{evs:?}");

    // Stored with event 1; events 2 and 3 logged only.
    for n in 1..=3 {
        log.append(
            "behind",
            n,
            &status_event("behind", "TASK_STATE_WORKING", &format!("e{n}")),
        )
        .await
        .unwrap();
    }
    a.put_numbered(task("behind", "e1"), vec![], 1)
        .await
        .unwrap();
    let sub = tokio::spawn(read(
        subscribe(b.url(), Way::RpcV1, "behind", None).await,
        usize::MAX,
    ));
    assert!(until(Duration::from_secs(10), || b.manager().live_count() == 1).await);
    log.append(
        "behind",
        4,
        &status_event("behind", "TASK_STATE_COMPLETED", "e4"),
    )
    .await
    .unwrap();
    let evs = tokio::time::timeout(Duration::from_secs(30), sub)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(&evs), [1, 2, 3, 4], "{evs:?}");
    assert_eq!(first_kind(Way::RpcV1, &evs), "task", "{evs:?}");
    assert_eq!(text_of(&evs[0]), "e1", "{evs:?}");
    let texts: Vec<String> = evs[1..].iter().map(text_of).collect();
    assert_eq!(texts, ["e2", "e3", "e4"], "{evs:?}");
    b.shutdown().await;
}
