//! When a turn writes its task to the store: the runtime's own WORKING status is published at
//! once and stored only once the handler waits (a handler that answers at once costs one store
//! write less), without ever waiting for the live task's lock while the handler is not polled.

use crate::common::*;
use a2a_agent::store::{MemoryStore, StoreError, StoredTask, TaskFilter, TaskStore};
use a2a_agent::{AgentServer, Reply, RequestContext, handler_fn};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// A memory store that counts its writes and, when `yields` is set, suspends every write once
/// (as a store that writes on another thread does): a handler's update then holds the live
/// task's lock across a wait.
#[derive(Default)]
struct SlowStore {
    inner: MemoryStore,
    puts: AtomicUsize,
    yields: AtomicBool,
}

#[async_trait::async_trait]
impl TaskStore for SlowStore {
    async fn put(&self, task: StoredTask) -> Result<(), StoreError> {
        self.puts.fetch_add(1, Ordering::SeqCst);
        if self.yields.load(Ordering::SeqCst) {
            tokio::task::yield_now().await;
        }
        self.inner.put(task).await
    }
    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        self.inner.get(id).await
    }
    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        self.inner.list(filter).await
    }
    async fn count(&self) -> Result<usize, StoreError> {
        self.inner.count().await
    }
    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.inner.delete(id).await
    }
}

async fn serve(store: Arc<SlowStore>) -> a2a_agent::ServerHandle {
    // Three updates, the first one in the handler's first poll, then the answer.
    let h = handler_fn(|ctx: RequestContext| async move {
        for step in ["one", "two", "three"] {
            ctx.emit(step).await;
        }
        Ok(Reply::text("done"))
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(a2a_agent::demo::echo_card(), h)
        .config(open_config())
        .store(store)
        .serve(l)
        .await
        .unwrap()
}

/// The deadlock of the first deferred-store design (reverted): the handler's first poll ends
/// suspended inside an update, holding the live task's lock; a runtime that then awaited that
/// lock to store WORKING, without polling the handler, never finished the turn (streams stopped
/// after their first events). Here every update waits once inside its store write, with a
/// stream subscriber and GetTask/ListTasks readers beside the turn.
#[tokio::test]
async fn a_handler_waiting_inside_an_update_is_not_deadlocked() {
    let store = Arc::new(SlowStore::default());
    store.yields.store(true, Ordering::SeqCst);
    let s = serve(store.clone()).await;
    let url = s.url().to_string();
    let done = Arc::new(AtomicBool::new(false));
    let readers = {
        let (url, done) = (url.clone(), done.clone());
        tokio::spawn(async move {
            let mut reads = 0;
            while !done.load(Ordering::SeqCst) {
                let (_, v) = rpc(&url, "ListTasks", json!({})).await;
                for t in v["result"]["tasks"].as_array().into_iter().flatten() {
                    let (code, _) = rpc(&url, "GetTask", json!({"id": t["id"]})).await;
                    assert_eq!(code, 200);
                    reads += 1;
                }
                tokio::task::yield_now().await;
            }
            reads
        })
    };
    let turns = async {
        let events = stream_text(&url, "go").await;
        let (code, v) = rpc(&url, "SendMessage", json!({"message": msg("go")})).await;
        (events, code, v)
    };
    let (events, code, v) = tokio::time::timeout(Duration::from_secs(60), turns)
        .await
        .expect("a turn whose handler waits inside an update never ended (deadlock)");
    done.store(true, Ordering::SeqCst);
    readers.await.unwrap();
    // Task, WORKING, three updates, COMPLETED.
    let states: Vec<&str> = events
        .iter()
        .filter_map(|e| e["result"]["statusUpdate"]["status"]["state"].as_str())
        .collect();
    assert_eq!(
        states,
        [
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ],
        "{events:?}"
    );
    assert_eq!(code, 200, "{v}");
    let task = &v["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{v}");
    // The store has the final task.
    let id = task["id"].as_str().unwrap();
    let (_, listed) = rpc(&url, "ListTasks", json!({})).await;
    let stored = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
        .unwrap_or_default();
    assert_eq!(state(&stored), "TASK_STATE_COMPLETED", "{listed}");
    s.shutdown().await;
}

/// A handler that answers at once: the store gets the new task and its final state, not the
/// WORKING in between (two writes).
#[tokio::test]
async fn a_turn_answered_at_once_writes_the_store_twice() {
    let store = Arc::new(SlowStore::default());
    let s = echo_on(store.clone()).await;
    let url = s.url().to_string();
    let (code, v) = rpc(&url, "SendMessage", json!({"message": msg("hi")})).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    assert_eq!(store.puts.load(Ordering::SeqCst), 2);
    s.shutdown().await;
}

/// WORKING is stored once the handler waits: ListTasks, which reads the store, shows a waiting
/// handler's task WORKING.
#[tokio::test]
async fn a_waiting_handler_has_its_task_stored_working() {
    let store = Arc::new(SlowStore::default());
    let s = echo_on(store.clone()).await;
    let url = s.url().to_string();
    let id = send_async(&url, "sleep:60000").await;
    let mut listed = String::new();
    for _ in 0..500 {
        let (_, v) = rpc(&url, "ListTasks", json!({})).await;
        listed = state(&v["result"]["tasks"][0]).to_string();
        if listed == "TASK_STATE_WORKING" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(listed, "TASK_STATE_WORKING");
    let (_, v) = rpc(&url, "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_CANCELED", "{v}");
    s.shutdown().await;
}

async fn echo_on(store: Arc<SlowStore>) -> a2a_agent::ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
    )
    .config(open_config())
    .store(store)
    .serve(l)
    .await
    .unwrap()
}
