//! Task stores: the [`TaskStore`] trait, a bounded in-memory store and a SQLite store.

use crate::model::{Task, TaskState, Timestamp};
use async_trait::async_trait;
use foldhash::HashMap;
use std::collections::{BTreeSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A stored task with the key of the caller that owns it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTask {
    /// The task.
    pub task: Task,
    /// Owner key (see [`crate::auth::CallerProfile::owner_key`]).
    pub owner: String,
}

impl StoredTask {
    fn ms(&self) -> i64 {
        self.task
            .status
            .timestamp
            .as_ref()
            .map(|t| t.unix_millis() as i64)
            .unwrap_or(0)
    }
}

/// Filters of a task listing (the store returns every match, newest status first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskFilter {
    /// Only this owner's tasks.
    pub owner: String,
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status timestamp is >= this.
    pub status_timestamp_after: Option<Timestamp>,
}

impl TaskFilter {
    /// Whether `t` matches.
    pub fn matches(&self, t: &StoredTask) -> bool {
        t.owner == self.owner
            && self
                .context_id
                .as_ref()
                .is_none_or(|c| t.task.context_id.as_ref() == Some(c))
            && self.state.is_none_or(|s| t.task.status.state == s)
            && self
                .status_timestamp_after
                .as_ref()
                .is_none_or(|after| t.ms() >= after.unix_millis() as i64)
    }
}

/// Store failures.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

const FULL: &str = "full: ";

impl StoreError {
    /// The store has no room for a new task (its byte bound is reached by unfinished tasks).
    pub fn full(msg: impl std::fmt::Display) -> Self {
        StoreError(format!("{FULL}{msg}"))
    }
    /// Whether this is a [`StoreError::full`].
    pub fn is_full(&self) -> bool {
        self.0.starts_with(FULL)
    }
}

/// Where tasks live.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Insert or replace a task.
    async fn put(&self, task: StoredTask) -> Result<(), StoreError>;
    /// Fetch a task by id.
    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError>;
    /// Every task matching `filter`, sorted by status timestamp (newest first), then id (descending).
    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError>;
    /// One page of `filter`'s matches: up to `limit` tasks after `after` (exclusive), newest
    /// first, with the total count. The default pages over [`TaskStore::list`].
    async fn page(
        &self,
        filter: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let all = self.list(filter).await?;
        let start = match after {
            None => 0,
            Some((t, i)) => all
                .iter()
                .position(|x| (x.ms(), x.task.id.as_str()) < (*t, i.as_str()))
                .unwrap_or(all.len()),
        };
        let end = start.saturating_add(limit).min(all.len());
        Ok(TaskPage {
            tasks: all[start..end].to_vec(),
            total: all.len(),
            more: end < all.len(),
        })
    }
    /// Number of stored tasks.
    async fn count(&self) -> Result<usize, StoreError>;
    /// Tasks left SUBMITTED or WORKING, read once on start to recover what a previous process
    /// did not finish. Default: none (a store that does not outlive the process).
    async fn unfinished(&self) -> Result<Vec<StoredTask>, StoreError> {
        Ok(Vec::new())
    }
    /// Remove a task (the task of a direct-message reply, which the caller never sees).
    /// Default: keep it (a store that cannot delete lists it as COMPLETED).
    async fn delete(&self, _id: &str) -> Result<(), StoreError> {
        Ok(())
    }
}

/// One page of a listing (newest status first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPage {
    /// The tasks of the page.
    pub tasks: Vec<StoredTask>,
    /// How many tasks match the filter in all.
    pub total: usize,
    /// Whether tasks follow this page.
    pub more: bool,
}

/// The position of a task in a listing: (status timestamp ms, id), compared newest first.
pub type PageCursor = (i64, String);

/// In-memory store, bounded: terminal tasks expire after a TTL, and beyond `cap` tasks the oldest
/// terminal tasks are evicted, so memory stays flat under load. Listings page from a per-owner
/// index ordered by (status timestamp, id), cloning only the page.
pub struct MemoryStore {
    inner: Mutex<MemInner>,
    cap: usize,
    ttl: Duration,
    max_bytes: usize,
    replay_per_task: usize,
}

struct Entry {
    t: Arc<StoredTask>,
    /// JSON size of the task.
    task_bytes: usize,
    /// JSON size of its kept events.
    log_bytes: usize,
    /// The task's newest events, kept for resumes ([`crate::replay::ReplayLog`]).
    log: VecDeque<(u64, crate::model::StreamResponse, usize)>,
    /// Number of the task's last event.
    last: u64,
}

#[derive(Default)]
struct MemInner {
    tasks: HashMap<String, Entry>,
    /// Sum of the stored sizes (JSON bytes) of every task.
    bytes: usize,
    /// Per owner: (status ms, id) of each of its tasks.
    by_owner: HashMap<String, BTreeSet<PageCursor>>,
    terminal: VecDeque<(String, Instant)>,
}

impl MemoryStore {
    /// A store holding at most `cap` tasks (non-terminal tasks are never evicted) and keeping
    /// terminal tasks for `ttl`.
    pub fn new(cap: usize, ttl: Duration) -> Self {
        MemoryStore {
            inner: Mutex::new(MemInner::default()),
            cap: cap.max(1),
            ttl,
            max_bytes: 0,
            replay_per_task: 256,
        }
    }

    /// Keep the newest `events` stream events of each task for resumes with `Last-Event-ID`
    /// (counted in the byte bound, evicted with the task; 0 keeps none). Default: 256.
    pub fn with_replay_events(mut self, events: usize) -> Self {
        self.replay_per_task = events;
        self
    }

    /// Bound the store to `max_bytes` (JSON bytes of every task; 0 = unlimited): the oldest
    /// terminal tasks are evicted first, and a new task is refused while unfinished tasks
    /// alone fill the bound.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Bytes currently stored (JSON size of every task).
    pub fn bytes(&self) -> usize {
        self.inner.lock().map(|g| g.bytes).unwrap_or(0)
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, MemInner>, StoreError> {
        self.inner.lock().map_err(|_| StoreError("poisoned".into()))
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(10_000, Duration::from_secs(3600))
    }
}

impl MemInner {
    /// Drop `t` from its owner's listing index.
    fn unindex(&mut self, t: &StoredTask) {
        if let Some(set) = self.by_owner.get_mut(&t.owner) {
            set.remove(&(t.ms(), t.task.id.clone()));
            if set.is_empty() {
                self.by_owner.remove(&t.owner);
            }
        }
    }

    /// Add `t` at `ms` to its owner's listing index (the owner's name is copied only for a new
    /// owner).
    fn index(&mut self, t: &StoredTask, ms: i64) {
        let key = (ms, t.task.id.clone());
        match self.by_owner.get_mut(&t.owner) {
            Some(set) => {
                set.insert(key);
            }
            None => {
                self.by_owner.insert(t.owner.clone(), BTreeSet::from([key]));
            }
        }
    }

    fn remove(&mut self, id: &str) -> Option<Entry> {
        let e = self.tasks.remove(id)?;
        self.bytes = self.bytes.saturating_sub(e.task_bytes + e.log_bytes);
        self.unindex(&e.t);
        Some(e)
    }

    /// Insert or replace `t` (a replaced task keeps its events, in place); returns the task
    /// replaced.
    fn insert(&mut self, t: StoredTask) -> Option<Arc<StoredTask>> {
        let ms = t.ms();
        let task_bytes = crate::bounds::task_bytes(&t.task);
        if let Some(e) = self.tasks.get_mut(&t.task.id) {
            let old = std::mem::replace(&mut e.t, Arc::new(t));
            self.bytes = self.bytes.saturating_sub(e.task_bytes) + task_bytes;
            e.task_bytes = task_bytes;
            let new = e.t.clone();
            // The listing index moves only when the task's key in it changes.
            if old.owner != new.owner || old.ms() != ms {
                self.unindex(&old);
                self.index(&new, ms);
            }
            return Some(old);
        }
        self.index(&t, ms);
        self.bytes += task_bytes;
        self.tasks.insert(
            t.task.id.clone(),
            Entry {
                t: Arc::new(t),
                task_bytes,
                log_bytes: 0,
                log: VecDeque::new(),
                last: 0,
            },
        );
        None
    }

    fn evict(&mut self, cap: usize, ttl: Duration, max_bytes: usize) {
        let now = Instant::now();
        // Looked at in place: the front is copied only when it goes.
        while let Some((_, at)) = self.terminal.front() {
            let expired = now.duration_since(*at) >= ttl;
            let over = max_bytes > 0 && self.bytes > max_bytes;
            if !(expired || over || self.tasks.len() > cap) {
                break;
            }
            let Some((id, _)) = self.terminal.pop_front() else {
                break;
            };
            // The entry may be stale (the task was replaced); only evict terminal tasks.
            if self
                .tasks
                .get(&id)
                .is_some_and(|e| e.t.task.status.state.is_terminal())
            {
                self.remove(&id);
            }
        }
    }

    /// Walk `filter`'s matches newest first: count them all, keep `limit` after `after`.
    fn page(
        &self,
        filter: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> (Vec<Arc<StoredTask>>, usize, bool) {
        let (mut out, mut total, mut more) = (Vec::new(), 0, false);
        let Some(idx) = self.by_owner.get(&filter.owner) else {
            return (out, total, more);
        };
        let min_ms = filter
            .status_timestamp_after
            .as_ref()
            .map(|t| t.unix_millis() as i64);
        for (ms, id) in idx.iter().rev() {
            if min_ms.is_some_and(|m| *ms < m) {
                break;
            }
            let Some(Entry { t, .. }) = self.tasks.get(id) else {
                continue;
            };
            if !filter.matches(t) {
                continue;
            }
            total += 1;
            if after.is_some_and(|(am, ai)| (*ms, id.as_str()) >= (*am, ai.as_str())) {
                continue;
            }
            if out.len() < limit {
                out.push(t.clone());
            } else {
                more = true;
            }
        }
        (out, total, more)
    }
}

impl MemoryStore {
    /// Keep event `seq` of `task_id`; `own` makes the kept copy (a clone of a borrowed event, or
    /// the event itself when it is given).
    fn keep_event<E: std::borrow::Borrow<crate::model::StreamResponse>>(
        &self,
        task_id: &str,
        seq: u64,
        event: E,
        own: impl FnOnce(E) -> crate::model::StreamResponse,
    ) -> Result<(), StoreError> {
        let keep = self.replay_per_task;
        let size = if keep > 0 {
            crate::bounds::json_len(event.borrow())
        } else {
            0
        };
        let mut g = self.lock()?;
        let g = &mut *g;
        let Some(e) = g.tasks.get_mut(task_id) else {
            return Ok(());
        };
        e.last = seq;
        if keep == 0 {
            return Ok(());
        }
        e.log.push_back((seq, own(event), size));
        e.log_bytes += size;
        g.bytes += size;
        while e.log.len() > keep {
            if let Some((_, _, n)) = e.log.pop_front() {
                e.log_bytes -= n;
                g.bytes -= n;
            }
        }
        Ok(())
    }
}

/// The memory store keeps each task's replayable events with the task: counted in its byte
/// bound, gone when the task is evicted or deleted.
#[async_trait]
impl crate::replay::ReplayLog for MemoryStore {
    async fn append(
        &self,
        task_id: &str,
        seq: u64,
        event: &crate::model::StreamResponse,
    ) -> Result<(), StoreError> {
        self.keep_event(task_id, seq, event, Clone::clone)
    }

    async fn append_owned(
        &self,
        task_id: &str,
        seq: u64,
        event: crate::model::StreamResponse,
    ) -> Result<(), StoreError> {
        self.keep_event(task_id, seq, event, |e| e)
    }

    async fn since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, crate::model::StreamResponse)>, StoreError> {
        let g = self.lock()?;
        Ok(g.tasks
            .get(task_id)
            .map(|e| {
                e.log
                    .iter()
                    .filter(|(s, _, _)| *s > after)
                    .map(|(s, ev, _)| (*s, ev.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn last(&self, task_id: &str) -> Result<u64, StoreError> {
        Ok(self.lock()?.tasks.get(task_id).map_or(0, |e| e.last))
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn put(&self, task: StoredTask) -> Result<(), StoreError> {
        let mut g = self.lock()?;
        let terminal = task.task.status.state.is_terminal();
        // The id is needed below only for the terminal queue or a refusal.
        let mut id = (terminal || self.max_bytes > 0).then(|| task.task.id.clone());
        let old = g.insert(task);
        let is_new = old.is_none();
        let was_terminal = old.is_some_and(|old| old.task.status.state.is_terminal());
        if terminal && !was_terminal {
            // A new task may still be refused below: it keeps its id.
            let queued = if is_new { id.clone() } else { id.take() };
            if let Some(queued) = queued {
                g.terminal.push_back((queued, Instant::now()));
            }
        }
        g.evict(self.cap, self.ttl, self.max_bytes);
        if let Some(id) = id.filter(|_| is_new && self.max_bytes > 0 && g.bytes > self.max_bytes) {
            // Only unfinished tasks are left and they fill the bound: refuse the new one.
            g.remove(&id);
            return Err(StoreError::full(format!(
                "the in-memory task store is at its bound of {} bytes",
                self.max_bytes
            )));
        }
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let mut g = self.lock()?;
        g.remove(id);
        g.terminal.retain(|(t, _)| t != id);
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        let found = self.lock()?.tasks.get(id).map(|e| e.t.clone());
        Ok(found.map(|t| (*t).clone()))
    }

    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        let (v, _, _) = {
            let mut g = self.lock()?;
            g.evict(self.cap, self.ttl, self.max_bytes);
            g.page(filter, None, usize::MAX)
        };
        Ok(v.into_iter().map(|t| (*t).clone()).collect())
    }

    async fn page(
        &self,
        filter: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let (v, total, more) = {
            let mut g = self.lock()?;
            g.evict(self.cap, self.ttl, self.max_bytes);
            g.page(filter, after, limit)
        };
        // Clone only the page, outside the lock.
        Ok(TaskPage {
            tasks: v.into_iter().map(|t| (*t).clone()).collect(),
            total,
            more,
        })
    }

    async fn count(&self) -> Result<usize, StoreError> {
        Ok(self.lock()?.tasks.len())
    }
}

/// One SQLite connection (WAL journal, `synchronous = NORMAL`, 5 s busy timeout) used from async
/// code on the blocking pool: the task store, the replay log and the send log each hold one on
/// the same file.
#[derive(Clone)]
pub(crate) struct SqliteDb {
    conn: Arc<Mutex<rusqlite::Connection>>,
}

/// A SQLite error as a store error.
pub(crate) fn sq(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

impl SqliteDb {
    /// Open (or create) the database at `path` and run `schema` (idempotent DDL).
    pub(crate) fn open(path: impl AsRef<Path>, schema: &str) -> Result<Self, StoreError> {
        let conn = rusqlite::Connection::open(path).map_err(sq)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sq)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sq)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(sq)?;
        conn.execute_batch(schema).map_err(sq)?;
        Ok(SqliteDb {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Run `f` with the connection on the blocking pool.
    pub(crate) async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let g = conn.lock().map_err(|_| StoreError("poisoned".into()))?;
            f(&g)
        })
        .await
        .map_err(sq)?
    }
}

/// SQLite store (rusqlite, WAL journal): tasks survive a restart. Calls run on the blocking pool.
#[derive(Clone)]
pub struct SqliteStore {
    db: SqliteDb,
}

impl SqliteStore {
    /// Open (or create) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = SqliteDb::open(
            path,
            "CREATE TABLE IF NOT EXISTS tasks (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL,
                context_id TEXT,
                state TEXT NOT NULL,
                ts INTEGER NOT NULL,
                body TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS tasks_owner_ts ON tasks(owner, ts DESC, id DESC);",
        )?;
        Ok(SqliteStore { db })
    }

    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.db.with(f).await
    }
}

fn row_to_task(body: String, owner: String) -> Result<StoredTask, StoreError> {
    let task: Task = serde_json::from_str(&body).map_err(sq)?;
    Ok(StoredTask { task, owner })
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.with(move |c| {
            c.execute("DELETE FROM tasks WHERE id = ?1", [id])
                .map_err(sq)?;
            Ok(())
        })
        .await
    }

    async fn put(&self, t: StoredTask) -> Result<(), StoreError> {
        let body = serde_json::to_string(&t.task).map_err(sq)?;
        self.with(move |c| {
            c.execute(
                "INSERT INTO tasks(id, owner, context_id, state, ts, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(id) DO UPDATE SET owner=excluded.owner, context_id=excluded.context_id,
                 state=excluded.state, ts=excluded.ts, body=excluded.body",
                rusqlite::params![
                    t.task.id,
                    t.owner,
                    t.task.context_id,
                    t.task.status.state.as_str(),
                    t.ms(),
                    body
                ],
            )
            .map_err(sq)?;
            Ok(())
        })
        .await
    }

    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        let id = id.to_string();
        self.with(move |c| {
            let mut st = c
                .prepare_cached("SELECT body, owner FROM tasks WHERE id = ?1")
                .map_err(sq)?;
            let mut rows = st.query([id]).map_err(sq)?;
            match rows.next().map_err(sq)? {
                Some(r) => Ok(Some(row_to_task(
                    r.get(0).map_err(sq)?,
                    r.get(1).map_err(sq)?,
                )?)),
                None => Ok(None),
            }
        })
        .await
    }

    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        let f = filter.clone();
        self.with(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT body, owner FROM tasks WHERE owner = ?1
                     AND (?2 IS NULL OR context_id = ?2)
                     AND (?3 IS NULL OR state = ?3)
                     AND (?4 IS NULL OR ts >= ?4)
                     ORDER BY ts DESC, id DESC",
                )
                .map_err(sq)?;
            let mut rows = st
                .query(rusqlite::params![
                    f.owner,
                    f.context_id,
                    f.state.map(|s| s.as_str()),
                    f.status_timestamp_after.map(|t| t.unix_millis() as i64)
                ])
                .map_err(sq)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                out.push(row_to_task(r.get(0).map_err(sq)?, r.get(1).map_err(sq)?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn page(
        &self,
        filter: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let f = filter.clone();
        let after = after.cloned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(move |c| {
            let ctx = f.context_id.clone();
            let state = f.state.map(|s| s.as_str());
            let ts = f.status_timestamp_after.map(|t| t.unix_millis() as i64);
            let total: i64 = c
                .prepare_cached(
                    "SELECT COUNT(*) FROM tasks WHERE owner = ?1
                     AND (?2 IS NULL OR context_id = ?2)
                     AND (?3 IS NULL OR state = ?3)
                     AND (?4 IS NULL OR ts >= ?4)",
                )
                .map_err(sq)?
                .query_row(rusqlite::params![f.owner, ctx, state, ts], |r| r.get(0))
                .map_err(sq)?;
            let mut st = c
                .prepare_cached(
                    "SELECT body, owner FROM tasks WHERE owner = ?1
                     AND (?2 IS NULL OR context_id = ?2)
                     AND (?3 IS NULL OR state = ?3)
                     AND (?4 IS NULL OR ts >= ?4)
                     AND (?5 IS NULL OR ts < ?5 OR (ts = ?5 AND id < ?6))
                     ORDER BY ts DESC, id DESC LIMIT ?7",
                )
                .map_err(sq)?;
            let (am, ai) = match &after {
                Some((m, i)) => (Some(*m), Some(i.clone())),
                None => (None, None),
            };
            let mut rows = st
                .query(rusqlite::params![
                    f.owner,
                    ctx,
                    state,
                    ts,
                    am,
                    ai,
                    limit.saturating_add(1)
                ])
                .map_err(sq)?;
            let mut tasks = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                tasks.push(row_to_task(r.get(0).map_err(sq)?, r.get(1).map_err(sq)?)?);
            }
            let more = tasks.len() as i64 > limit;
            tasks.truncate(limit as usize);
            Ok(TaskPage {
                tasks,
                total: total as usize,
                more,
            })
        })
        .await
    }

    async fn unfinished(&self) -> Result<Vec<StoredTask>, StoreError> {
        self.with(|c| {
            let mut st = c
                .prepare("SELECT body, owner FROM tasks WHERE state IN (?1, ?2) ORDER BY ts, id")
                .map_err(sq)?;
            let mut rows = st
                .query(rusqlite::params![
                    TaskState::Submitted.as_str(),
                    TaskState::Working.as_str()
                ])
                .map_err(sq)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                out.push(row_to_task(r.get(0).map_err(sq)?, r.get(1).map_err(sq)?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn count(&self) -> Result<usize, StoreError> {
        self.with(|c| {
            let n: i64 = c
                .query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))
                .map_err(sq)?;
            Ok(n as usize)
        })
        .await
    }
}
