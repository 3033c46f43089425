//! Replay logs: the numbered events of each task, kept so that a subscriber that comes back
//! with `Last-Event-ID` gets exactly what it missed.
//!
//! Every event the runtime publishes for a task gets the next number of that task (1, 2, ...),
//! sent as the SSE `id:` of the event. A [`ReplayLog`] keeps the last
//! `replay_events_per_task` events of each task: [`MemoryReplay`] in memory (bounded in bytes
//! as well), [`SqliteReplay`] in the agent's SQLite file, so that a resume works across a
//! restart, and the [`MemoryStore`], which keeps them with each task (its impl is here). How a
//! resume is answered is in `tasks::Start`.

use crate::model::StreamResponse;
use crate::store::{MemoryStore, StoreError};
#[cfg(feature = "sqlite")]
use crate::store::{SqliteDb, sq};
use async_trait::async_trait;
use std::collections::{HashMap, VecDeque};
#[cfg(feature = "sqlite")]
use std::path::Path;
use std::sync::Mutex;

/// Where the numbered events of tasks are kept.
#[async_trait]
pub trait ReplayLog: Send + Sync + 'static {
    /// Keep event `seq` of `task_id` (numbers grow by one per task).
    async fn append(
        &self,
        task_id: &str,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), StoreError>;
    /// [`ReplayLog::append`] of an event its caller has no further use for: a log that keeps
    /// events in memory takes it instead of copying it. By default, `append(&event)`.
    async fn append_owned(
        &self,
        task_id: &str,
        seq: u64,
        event: StreamResponse,
    ) -> Result<(), StoreError> {
        self.append(task_id, seq, &event).await
    }
    /// The kept events of `task_id` numbered above `after`, in order.
    async fn since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, StreamResponse)>, StoreError>;
    /// The number of the last event kept for `task_id` (0: none).
    async fn last(&self, task_id: &str) -> Result<u64, StoreError>;
}

/// Retention of a replay log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Events kept per task (the newest ones); 0 keeps none.
    pub events_per_task: usize,
    /// Bytes kept in all (JSON size), oldest tasks' logs dropped first; 0 = unlimited.
    /// Only [`MemoryReplay`] applies it.
    pub max_bytes: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            events_per_task: 256,
            max_bytes: 16 * 1024 * 1024,
        }
    }
}

#[derive(Default)]
struct TaskLog {
    events: VecDeque<(u64, StreamResponse, usize)>,
    bytes: usize,
    /// Number of the last event appended, even when it was not kept.
    last: u64,
}

#[derive(Default)]
struct MemInner {
    logs: HashMap<String, TaskLog>,
    /// Task ids in the order their logs were created (the eviction order).
    order: VecDeque<String>,
    bytes: usize,
}

/// Tasks whose numbering a [`MemoryReplay`] remembers at most.
const MAX_TASKS: usize = 100_000;

/// A replay log in memory, bounded per task, in bytes and in tasks.
pub struct MemoryReplay {
    retention: Retention,
    inner: Mutex<MemInner>,
}

impl MemoryReplay {
    /// A log with `retention`.
    pub fn new(retention: Retention) -> Self {
        MemoryReplay {
            retention,
            inner: Mutex::new(MemInner::default()),
        }
    }

    /// Bytes kept now.
    pub fn bytes(&self) -> usize {
        self.inner.lock().map(|g| g.bytes).unwrap_or(0)
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, MemInner>, StoreError> {
        self.inner
            .lock()
            .map_err(|_| StoreError("replay log poisoned".into()))
    }
}

impl Default for MemoryReplay {
    fn default() -> Self {
        MemoryReplay::new(Retention::default())
    }
}

#[async_trait]
impl ReplayLog for MemoryReplay {
    async fn append(
        &self,
        task_id: &str,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), StoreError> {
        let Retention {
            events_per_task,
            max_bytes,
        } = self.retention;
        let size = crate::bounds::json_len(event);
        let mut g = self.lock()?;
        let g = &mut *g;
        if !g.logs.contains_key(task_id) {
            g.order.push_back(task_id.to_string());
        }
        let log = g.logs.entry(task_id.to_string()).or_default();
        log.last = seq;
        if events_per_task > 0 {
            log.events.push_back((seq, event.clone(), size));
            log.bytes += size;
            g.bytes += size;
            while log.events.len() > events_per_task {
                if let Some((_, _, n)) = log.events.pop_front() {
                    log.bytes -= n;
                    g.bytes -= n;
                }
            }
        }
        // Over the byte bound: empty whole logs, oldest first, never the one just written to
        // (their last numbers stay, so a task's numbering never restarts).
        let mut i = 0;
        while max_bytes > 0 && g.bytes > max_bytes && i < g.order.len() {
            if g.order[i] != task_id
                && let Some(l) = g.logs.get_mut(&g.order[i])
            {
                g.bytes -= l.bytes;
                l.bytes = 0;
                l.events.clear();
            }
            i += 1;
        }
        // Bounded in tasks too: the oldest logs go entirely.
        while g.order.len() > MAX_TASKS {
            if let Some(old) = g.order.pop_front()
                && let Some(l) = g.logs.remove(&old)
            {
                g.bytes -= l.bytes;
            }
        }
        Ok(())
    }

    async fn since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, StreamResponse)>, StoreError> {
        let g = self.lock()?;
        Ok(g.logs
            .get(task_id)
            .map(|l| {
                l.events
                    .iter()
                    .filter(|(s, _, _)| *s > after)
                    .map(|(s, e, _)| (*s, e.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn last(&self, task_id: &str) -> Result<u64, StoreError> {
        Ok(self.lock()?.logs.get(task_id).map_or(0, |l| l.last))
    }
}

/// A replay log in a SQLite file (the agent's `sqlite_path`, table `replay_events`), so that
/// events can be replayed after a restart.
#[cfg(feature = "sqlite")]
pub struct SqliteReplay {
    db: SqliteDb,
    events_per_task: usize,
}

#[cfg(feature = "sqlite")]
impl SqliteReplay {
    /// Open (or create) the log in the database at `path`, keeping `events_per_task` per task.
    pub fn open(path: impl AsRef<Path>, events_per_task: usize) -> Result<Self, StoreError> {
        let db = SqliteDb::open(
            path,
            "CREATE TABLE IF NOT EXISTS replay_events (
                task_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (task_id, seq)
             ) WITHOUT ROWID;",
        )?;
        Ok(SqliteReplay {
            db,
            events_per_task,
        })
    }
}

/// A sequence number as a database integer (saturating; at home in the store).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use crate::store::as_i64;

#[cfg(feature = "sqlite")]
#[async_trait]
impl ReplayLog for SqliteReplay {
    async fn append(
        &self,
        task_id: &str,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), StoreError> {
        let keep = self.events_per_task as u64;
        if keep == 0 {
            return Ok(());
        }
        let body = serde_json::to_string(event).map_err(sq)?;
        let id = task_id.to_string();
        self.db
            .with(move |c| {
                c.prepare_cached(
                    "INSERT OR REPLACE INTO replay_events(task_id, seq, body) VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut st| st.execute(rusqlite::params![id, as_i64(seq), body]))
                .map_err(sq)?;
                if seq > keep {
                    c.prepare_cached("DELETE FROM replay_events WHERE task_id = ?1 AND seq <= ?2")
                        .and_then(|mut st| st.execute(rusqlite::params![id, as_i64(seq - keep)]))
                        .map_err(sq)?;
                }
                Ok(())
            })
            .await
    }

    async fn since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, StreamResponse)>, StoreError> {
        let id = task_id.to_string();
        self.db.with(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT seq, body FROM replay_events WHERE task_id = ?1 AND seq > ?2 ORDER BY seq",
                )
                .map_err(sq)?;
            let rows = st
                .query_map(rusqlite::params![id, as_i64(after)], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(sq)?;
            let mut out = Vec::new();
            for row in rows {
                let (seq, body) = row.map_err(sq)?;
                let ev: StreamResponse = serde_json::from_str(&body).map_err(sq)?;
                out.push((u64::try_from(seq).unwrap_or(0), ev));
            }
            Ok(out)
        })
        .await
    }

    async fn last(&self, task_id: &str) -> Result<u64, StoreError> {
        let id = task_id.to_string();
        self.db
            .with(move |c| {
                let n: Option<i64> = c
                    .prepare_cached("SELECT max(seq) FROM replay_events WHERE task_id = ?1")
                    .and_then(|mut st| st.query_row([id], |r| r.get(0)))
                    .map_err(sq)?;
                Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
            })
            .await
    }
}

/// The memory store keeps each task's replayable events with the task: counted in its byte
/// bound, gone when the task is evicted or deleted.
#[async_trait]
impl ReplayLog for MemoryStore {
    async fn append(
        &self,
        task_id: &str,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), StoreError> {
        self.keep_event(task_id, seq, event, Clone::clone)
    }

    async fn append_owned(
        &self,
        task_id: &str,
        seq: u64,
        event: StreamResponse,
    ) -> Result<(), StoreError> {
        self.keep_event(task_id, seq, event, |e| e)
    }

    async fn since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, StreamResponse)>, StoreError> {
        self.events_since(task_id, after)
    }

    async fn last(&self, task_id: &str) -> Result<u64, StoreError> {
        self.last_event(task_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{TaskState, TaskStatus, TaskStatusUpdateEvent};

    fn ev(task: &str, state: TaskState) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.into(),
            context_id: "c".into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            metadata: None,
        })
    }

    async fn exercise(log: &dyn ReplayLog) {
        for seq in 1..=5 {
            log.append("t1", seq, &ev("t1", TaskState::Working))
                .await
                .unwrap();
        }
        log.append("t2", 1, &ev("t2", TaskState::Completed))
            .await
            .unwrap();
        assert_eq!(log.last("t1").await.unwrap(), 5);
        assert_eq!(log.last("t2").await.unwrap(), 1);
        assert_eq!(log.last("none").await.unwrap(), 0);
        // Retention 3: events 3, 4, 5 are kept.
        let got: Vec<u64> = log
            .since("t1", 0)
            .await
            .unwrap()
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(got, vec![3, 4, 5]);
        let got: Vec<u64> = log
            .since("t1", 4)
            .await
            .unwrap()
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(got, vec![5]);
        assert!(log.since("t1", 5).await.unwrap().is_empty());
        assert_eq!(
            log.since("t2", 0).await.unwrap(),
            vec![(1, ev("t2", TaskState::Completed))]
        );
    }

    #[tokio::test]
    async fn memory_log_keeps_the_newest_events_per_task() {
        let log = MemoryReplay::new(Retention {
            events_per_task: 3,
            max_bytes: 0,
        });
        exercise(&log).await;
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn sqlite_log_keeps_the_newest_events_per_task_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.db");
        exercise(&SqliteReplay::open(&path, 3).unwrap()).await;
        let again = SqliteReplay::open(&path, 3).unwrap();
        assert_eq!(again.last("t1").await.unwrap(), 5);
        assert_eq!(again.since("t1", 2).await.unwrap().len(), 3);
    }

    #[tokio::test]
    async fn memory_log_drops_the_oldest_tasks_over_its_byte_bound() {
        let one = crate::bounds::json_len(&ev("t0", TaskState::Working));
        let log = MemoryReplay::new(Retention {
            events_per_task: 10,
            max_bytes: one * 3,
        });
        for t in ["t0", "t1", "t2", "t3"] {
            log.append(t, 1, &ev(t, TaskState::Working)).await.unwrap();
        }
        assert!(log.bytes() <= one * 3);
        assert!(log.since("t0", 0).await.unwrap().is_empty());
        assert_eq!(log.since("t3", 0).await.unwrap().len(), 1);
    }
}
