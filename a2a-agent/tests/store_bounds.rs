//! The in-memory store's byte bound: what it counts (the JSON size of each task and of its kept
//! events, as serde_json writes them), what it evicts (the oldest terminal tasks) and what it
//! refuses (a new task while unfinished tasks fill the bound).

use a2a_agent::bounds::{json_len, task_bytes};
use a2a_agent::model::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskState, TaskStatus,
    TaskStatusUpdateEvent, Timestamp,
};
use a2a_agent::replay::ReplayLog;
use a2a_agent::store::{MemoryStore, StoredTask, TaskFilter, TaskStore};
use serde_json::json;
use std::time::Duration;

fn ts(ms: i64) -> Timestamp {
    Timestamp::from_unix_millis(ms).unwrap()
}

/// A task with history, an artifact, metadata and text that needs escapes.
fn task(id: &str, state: TaskState, ms: i64, text: &str) -> StoredTask {
    let msg = Message {
        message_id: format!("m-{id}"),
        task_id: Some(id.into()),
        role: Role::User,
        parts: vec![
            Part::text(text),
            Part::data(json!({"k": [1, 2.5, "\"q\""]})),
        ],
        ..Default::default()
    };
    let mut meta = serde_json::Map::new();
    meta.insert("note".into(), json!("tab\there \u{1}"));
    StoredTask {
        task: Task {
            id: id.into(),
            context_id: Some("ctx".into()),
            status: TaskStatus {
                state,
                message: Some(msg.clone()),
                timestamp: Some(ts(ms)),
            },
            artifacts: vec![Artifact::new(vec![Part::raw(b"\x00\x01 bytes")])],
            history: vec![msg.clone(), msg],
            metadata: Some(meta),
        },
        owner: "alice".into(),
    }
}

fn event(id: &str) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.into(),
        context_id: "ctx".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: Some(ts(1)),
        },
        metadata: None,
    })
}

fn size(t: &StoredTask) -> usize {
    serde_json::to_vec(&t.task).unwrap().len()
}

#[tokio::test]
async fn the_bound_counts_each_task_and_its_events_as_their_json() {
    let s = MemoryStore::new(100, Duration::from_secs(3600));
    let a = task("a", TaskState::Working, 1_000, "line\n\"quoted\" \\ é");
    assert_eq!(task_bytes(&a.task), size(&a));
    s.put(a.clone()).await.unwrap();
    assert_eq!(s.bytes(), size(&a));
    let ev = event("a");
    let ev_size = serde_json::to_vec(&ev).unwrap().len();
    assert_eq!(json_len(&ev), ev_size);
    s.append("a", 1, &ev).await.unwrap();
    s.append("a", 2, &ev).await.unwrap();
    assert_eq!(s.bytes(), size(&a) + 2 * ev_size);
    // Replaced (same status time, then a later one): the events stay, the task is recounted.
    let mut b = a.clone();
    b.task.history.push(b.task.history[0].clone());
    s.put(b.clone()).await.unwrap();
    assert_eq!(s.bytes(), size(&b) + 2 * ev_size);
    let mut c = b.clone();
    c.task.status.timestamp = Some(ts(2_000));
    c.task.status.state = TaskState::Completed;
    s.put(c.clone()).await.unwrap();
    assert_eq!(s.bytes(), size(&c) + 2 * ev_size);
    assert_eq!(s.since("a", 0).await.unwrap().len(), 2);
    assert_eq!(s.get("a").await.unwrap(), Some(c.clone()));
    // The listing index follows the new status time (one entry, found by the newer bound).
    let after = TaskFilter {
        owner: "alice".into(),
        status_timestamp_after: Some(ts(1_500)),
        ..Default::default()
    };
    assert_eq!(s.list(&after).await.unwrap(), vec![c.clone()]);
    let all = TaskFilter {
        owner: "alice".into(),
        ..Default::default()
    };
    assert_eq!(s.list(&all).await.unwrap(), vec![c]);
    s.delete("a").await.unwrap();
    assert_eq!(s.bytes(), 0);
}

#[tokio::test]
async fn over_the_bound_the_oldest_terminal_tasks_go_and_new_tasks_are_refused() {
    let one = size(&task("t0", TaskState::Completed, 1_000, "x"));
    // Room for three tasks of this size.
    let s = MemoryStore::new(100, Duration::from_secs(3600)).with_max_bytes(3 * one + one / 2);
    for i in 0..3 {
        s.put(task(&format!("t{i}"), TaskState::Completed, 1_000 + i, "x"))
            .await
            .unwrap();
    }
    assert_eq!(s.count().await.unwrap(), 3);
    // A fourth: the oldest terminal task is evicted, the others stay.
    s.put(task("t3", TaskState::Completed, 1_003, "x"))
        .await
        .unwrap();
    assert_eq!(s.get("t0").await.unwrap(), None);
    for id in ["t1", "t2", "t3"] {
        assert!(s.get(id).await.unwrap().is_some(), "{id}");
    }
    assert!(s.bytes() <= 3 * one + one / 2);
    // Unfinished tasks fill the bound: terminal ones are evicted for them, then a new task is
    // refused (and not kept).
    for i in 0..3 {
        s.put(task(&format!("w{i}"), TaskState::Working, 2_000 + i, "x"))
            .await
            .unwrap();
    }
    assert_eq!(s.count().await.unwrap(), 3);
    let e = s
        .put(task("w3", TaskState::Working, 2_003, "x"))
        .await
        .unwrap_err();
    assert!(e.is_full(), "{e}");
    assert_eq!(s.get("w3").await.unwrap(), None);
    assert!(s.bytes() <= 3 * one + one / 2);
    // A task growing in place is never refused (only new ones are).
    s.put(task("w0", TaskState::Working, 2_004, &"y".repeat(one)))
        .await
        .unwrap();
    assert!(s.get("w0").await.unwrap().is_some());
}
