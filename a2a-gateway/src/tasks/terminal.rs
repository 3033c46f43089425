//! The last read of tasks in a terminal state, kept for ListTasks (issue 40).
//!
//! A task that reached a terminal state (completed, failed, canceled, rejected) no longer
//! changes (the spec's terminal states are final): once the gateway has read it from its peer
//! (GetTask, or the ended task a 1.0 peer's SendMessage answered with, passed on unchanged),
//! a listing can show that read again instead of asking the peer for it on every page. Only
//! the peer's own content is kept, before governance: every listing passes it through the
//! answer steps of that listing's hop, so a rule added since the read applies. Entries are per
//! owner (workspace and agent) and peer endpoint, kept as JSON text, least recently used first
//! out within [`MAX_BYTES`], and read again after [`KEEP`] (a peer that forgot a task is seen
//! to forget it).
//!
//! Each replica keeps its own: what it keeps does not change, so replicas never disagree.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use hashlink::LruCache;
use serde_json::Value;

/// JSON bytes kept at most (all owners together).
pub const MAX_BYTES: usize = 16 << 20;
/// A single task larger than this is not kept.
pub const MAX_TASK_BYTES: usize = 1 << 20;
/// How long a read is shown again before the peer is asked anew.
pub const KEEP: Duration = Duration::from_secs(300);

/// (endpoint, workspace, agent, task id)
type Key = (String, String, String, String);

struct Entry {
    /// The `historyLength` the task was read with (`None`: its whole history).
    history: Option<usize>,
    /// The task's JSON text (a parsed `Value` takes several times its text's bytes).
    task: Box<str>,
    read_at: Instant,
}

#[derive(Default)]
struct Inner {
    map: Option<LruCache<Key, Entry>>,
    bytes: usize,
}

/// Terminal tasks as last read from their peers (see the module documentation).
#[derive(Default)]
pub struct TerminalTasks {
    inner: Mutex<Inner>,
}

fn key(endpoint: &str, workspace: &str, agent: &str, task: &str) -> Key {
    (
        endpoint.to_owned(),
        workspace.to_owned(),
        agent.to_owned(),
        task.to_owned(),
    )
}

impl TerminalTasks {
    /// The kept read of a task, when one covers a read with `history` (kept with the whole
    /// history, or with at least as many messages) and is younger than [`KEEP`].
    pub fn get(
        &self,
        endpoint: &str,
        workspace: &str,
        agent: &str,
        task: &str,
        history: Option<usize>,
    ) -> Option<Value> {
        let mut inner = self.inner.lock().ok()?;
        let map = inner.map.as_mut()?;
        let k = key(endpoint, workspace, agent, task);
        let e = map.get(&k)?;
        if e.read_at.elapsed() > KEEP {
            let bytes = map.remove(&k).map_or(0, |e| e.task.len());
            inner.bytes -= bytes;
            return None;
        }
        let covers = match (e.history, history) {
            (None, _) => true,
            (Some(kept), Some(asked)) => asked <= kept,
            (Some(_), None) => false,
        };
        if !covers {
            return None;
        }
        serde_json::from_str(&e.task).ok()
    }

    /// Keeps `task` (the peer's 1.0 content, before governance) as read with `history`, when
    /// its state is terminal.
    pub fn put(
        &self,
        endpoint: &str,
        workspace: &str,
        agent: &str,
        history: Option<usize>,
        task: &Value,
    ) {
        let terminal = task
            .pointer("/status/state")
            .and_then(|s| serde_json::from_value::<a2a_types::v1::TaskState>(s.clone()).ok())
            .is_some_and(|s| s.is_terminal());
        let Some(id) = task.get("id").and_then(Value::as_str) else {
            return;
        };
        if !terminal {
            return;
        }
        let Ok(text) = serde_json::to_string(task) else {
            return;
        };
        self.keep(key(endpoint, workspace, agent, id), history, text);
    }

    /// Keeps an ended task a 1.0 peer's `SendMessage` answered with (`crate::protocol::passed`:
    /// its JSON text as the peer wrote it, whole history), as a read of it would be kept.
    pub fn put_answered(&self, endpoint: &str, workspace: &str, agent: &str, id: &str, task: &str) {
        self.keep(key(endpoint, workspace, agent, id), None, task.to_owned());
    }

    fn keep(&self, k: Key, history: Option<usize>, text: String) {
        let bytes = text.len();
        if bytes > MAX_TASK_BYTES {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        let map = inner.map.get_or_insert_with(LruCache::new_unbounded);
        let old = map.insert(
            k,
            Entry {
                history,
                task: text.into_boxed_str(),
                read_at: Instant::now(),
            },
        );
        inner.bytes = inner.bytes + bytes - old.map_or(0, |e| e.task.len());
        while inner.bytes > MAX_BYTES {
            match map.remove_lru() {
                Some((_, e)) => inner.bytes -= e.task.len(),
                None => break,
            }
        }
    }

    /// JSON bytes kept now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(id: &str, state: &str, pad: usize) -> Value {
        json!({"id": id, "contextId": "c", "status": {"state": state}, "metadata": {"pad": "x".repeat(pad)}})
    }

    #[test]
    fn keeps_only_terminal_tasks_per_owner() {
        let t = TerminalTasks::default();
        t.put("e", "w1", "a", None, &task("1", "TASK_STATE_COMPLETED", 0));
        t.put("e", "w1", "a", None, &task("2", "TASK_STATE_WORKING", 0));
        t.put(
            "e",
            "w1",
            "a",
            None,
            &task("3", "TASK_STATE_INPUT_REQUIRED", 0),
        );
        assert!(t.get("e", "w1", "a", "1", None).is_some());
        assert!(t.get("e", "w1", "a", "2", None).is_none());
        assert!(t.get("e", "w1", "a", "3", None).is_none());
        // Another workspace, agent or endpoint never sees it.
        assert!(t.get("e", "w2", "a", "1", None).is_none());
        assert!(t.get("e", "w1", "b", "1", None).is_none());
        assert!(t.get("f", "w1", "a", "1", None).is_none());
    }

    #[test]
    fn a_read_with_a_short_history_covers_only_shorter_asks() {
        let t = TerminalTasks::default();
        t.put("e", "w", "a", Some(2), &task("1", "TASK_STATE_FAILED", 0));
        assert!(t.get("e", "w", "a", "1", Some(0)).is_some());
        assert!(t.get("e", "w", "a", "1", Some(2)).is_some());
        assert!(t.get("e", "w", "a", "1", Some(3)).is_none());
        assert!(t.get("e", "w", "a", "1", None).is_none());
    }

    #[test]
    fn stays_within_its_bytes() {
        let t = TerminalTasks::default();
        for i in 0..40 {
            t.put(
                "e",
                "w",
                "a",
                None,
                &task(&i.to_string(), "TASK_STATE_COMPLETED", 500 << 10),
            );
        }
        assert!(t.bytes() <= MAX_BYTES, "{}", t.bytes());
        assert!(t.get("e", "w", "a", "39", None).is_some());
        assert!(t.get("e", "w", "a", "0", None).is_none());
        // Too large to keep.
        t.put(
            "e",
            "w",
            "a",
            None,
            &task("big", "TASK_STATE_COMPLETED", 2 << 20),
        );
        assert!(t.get("e", "w", "a", "big", None).is_none());
    }
}
