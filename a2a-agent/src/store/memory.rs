//! [`MemoryStore`]: the bounded in-memory task store (with each task's replayable events).

use super::api::{
    Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore, task_ms,
};
use crate::model::{StreamResponse, Task};
use async_trait::async_trait;
use foldhash::HashMap;
use std::borrow::Cow;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// In-memory store, bounded: terminal tasks expire after a TTL, and beyond `cap` tasks the oldest
/// terminal tasks are evicted, so memory stays flat under load. Listings page from a per-owner
/// index ordered by (status timestamp, id), cloning only the page. A live task's write
/// ([`TaskStore::put_shared`]) keeps the caller's task itself, not a copy.
pub struct MemoryStore {
    inner: Mutex<MemInner>,
    cap: usize,
    ttl: Duration,
    max_bytes: usize,
    replay_per_task: usize,
}

struct Entry {
    task: Arc<Task>,
    /// Owner key of the task.
    owner: String,
    /// JSON size of the task.
    task_bytes: usize,
    /// JSON size of its kept events.
    log_bytes: usize,
    /// The task's newest events, kept for resumes (the memory store is its own replay log:
    /// `replay::ReplayLog`).
    log: VecDeque<(u64, StreamResponse, usize)>,
    /// Number of the task's last event.
    last: u64,
}

#[derive(Default)]
struct MemInner {
    tasks: HashMap<String, Entry>,
    /// Sum of the stored sizes (JSON bytes) of every task.
    bytes: usize,
    /// Per owner: (status ms, id) of each of its tasks.
    by_owner: OwnerIndex,
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

/// Listing index: per owner, (status ms, id) of each of its tasks.
type OwnerIndex = HashMap<String, BTreeSet<PageCursor>>;

/// Drop task `id` of `owner` at `ms` from its owner's listing index.
fn unindex(idx: &mut OwnerIndex, owner: &str, ms: i64, id: &str) {
    if let Some(set) = idx.get_mut(owner) {
        set.remove(&(ms, id.to_string()));
        if set.is_empty() {
            idx.remove(owner);
        }
    }
}

/// Add task `id` of `owner` at `ms` to its owner's listing index (the owner's name is copied
/// only for a new owner).
fn index(idx: &mut OwnerIndex, owner: &str, ms: i64, id: &str) {
    let key = (ms, id.to_string());
    match idx.get_mut(owner) {
        Some(set) => {
            set.insert(key);
        }
        None => {
            idx.insert(owner.to_string(), BTreeSet::from([key]));
        }
    }
}

impl MemInner {
    fn remove(&mut self, id: &str) -> Option<Entry> {
        let e = self.tasks.remove(id)?;
        self.bytes = self.bytes.saturating_sub(e.task_bytes + e.log_bytes);
        unindex(&mut self.by_owner, &e.owner, task_ms(&e.task), &e.task.id);
        Some(e)
    }

    /// Insert or replace `task` of `owner` (a replaced task keeps its events, in place);
    /// returns the task replaced.
    fn insert(&mut self, task: Arc<Task>, owner: Cow<'_, str>) -> Option<Arc<Task>> {
        let ms = task_ms(&task);
        let task_bytes = crate::bounds::task_bytes(&task);
        if let Some(e) = self.tasks.get_mut(&task.id) {
            let old = std::mem::replace(&mut e.task, task);
            self.bytes = self.bytes.saturating_sub(e.task_bytes) + task_bytes;
            e.task_bytes = task_bytes;
            let old_ms = task_ms(&old);
            // The listing index moves only when the task's key in it changes.
            let moved = e.owner != *owner;
            if moved || old_ms != ms {
                unindex(&mut self.by_owner, &e.owner, old_ms, &old.id);
                if moved {
                    e.owner = owner.into_owned();
                }
                index(&mut self.by_owner, &e.owner, ms, &old.id);
            }
            return Some(old);
        }
        index(&mut self.by_owner, &owner, ms, &task.id);
        self.bytes += task_bytes;
        self.tasks.insert(
            task.id.clone(),
            Entry {
                task,
                owner: owner.into_owned(),
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
                .is_some_and(|e| e.task.status.state.is_terminal())
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
    ) -> (Vec<Arc<Task>>, usize, bool) {
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
            let Some(Entry { task: t, owner, .. }) = self.tasks.get(id) else {
                continue;
            };
            if !filter.matches_parts(t, owner) {
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
    pub(crate) fn keep_event<E: std::borrow::Borrow<StreamResponse>>(
        &self,
        task_id: &str,
        seq: u64,
        event: E,
        own: impl FnOnce(E) -> StreamResponse,
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

    /// The kept events of `task_id` numbered above `after`, in order.
    pub(crate) fn events_since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, StreamResponse)>, StoreError> {
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

    /// The number of the last event of `task_id` (0 when none was kept).
    pub(crate) fn last_event(&self, task_id: &str) -> Result<u64, StoreError> {
        Ok(self.lock()?.tasks.get(task_id).map_or(0, |e| e.last))
    }
}

impl MemoryStore {
    /// Insert or replace `task` of `owner`, then evict; a new task beyond the byte bound is
    /// refused.
    fn put_task(&self, task: Arc<Task>, owner: Cow<'_, str>) -> Result<(), StoreError> {
        let mut g = self.lock()?;
        let terminal = task.status.state.is_terminal();
        // The id is needed below only for the terminal queue or a refusal.
        let mut id = (terminal || self.max_bytes > 0).then(|| task.id.clone());
        let old = g.insert(task, owner);
        let is_new = old.is_none();
        let was_terminal = old.is_some_and(|old| old.status.state.is_terminal());
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
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn put(&self, task: StoredTask) -> Result<(), StoreError> {
        self.put_task(Arc::new(task.task), Cow::Owned(task.owner))
    }

    async fn put_shared(&self, task: &Arc<Task>, owner: &str) -> Result<(), StoreError> {
        self.put_task(task.clone(), Cow::Borrowed(owner))
    }

    // No outbox, no event numbers with the task: each is a put (without the defaults' layers).
    async fn put_with_notices(
        &self,
        task: StoredTask,
        _notices: Vec<Notice>,
    ) -> Result<Vec<i64>, StoreError> {
        self.put_task(Arc::new(task.task), Cow::Owned(task.owner))?;
        Ok(Vec::new())
    }

    async fn put_numbered(
        &self,
        task: StoredTask,
        _notices: Vec<Notice>,
        _seq: u64,
    ) -> Result<Vec<i64>, StoreError> {
        self.put_task(Arc::new(task.task), Cow::Owned(task.owner))?;
        Ok(Vec::new())
    }

    async fn put_numbered_shared(
        &self,
        task: &Arc<Task>,
        owner: &str,
        _notices: Vec<Notice>,
        _seq: u64,
    ) -> Result<Vec<i64>, StoreError> {
        self.put_task(task.clone(), Cow::Borrowed(owner))?;
        Ok(Vec::new())
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let mut g = self.lock()?;
        g.remove(id);
        g.terminal.retain(|(t, _)| t != id);
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        let found = self
            .lock()?
            .tasks
            .get(id)
            .map(|e| (e.task.clone(), e.owner.clone()));
        Ok(found.map(|(t, owner)| StoredTask {
            task: Task::clone(&t),
            owner,
        }))
    }

    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        let (v, _, _) = {
            let mut g = self.lock()?;
            g.evict(self.cap, self.ttl, self.max_bytes);
            g.page(filter, None, usize::MAX)
        };
        Ok(v.into_iter().map(|t| stored(&t, filter)).collect())
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
            tasks: v.into_iter().map(|t| stored(&t, filter)).collect(),
            total,
            more,
        })
    }

    async fn count(&self) -> Result<usize, StoreError> {
        Ok(self.lock()?.tasks.len())
    }
}

/// A copy of `task` as listed for `filter` (whose owner it has: listings are per owner).
fn stored(task: &Task, filter: &TaskFilter) -> StoredTask {
    StoredTask {
        task: task.clone(),
        owner: filter.owner.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Part, TaskState, TaskStatus};

    /// A shared write keeps the caller's task: the caller's next change (a copy on write) reaches
    /// the store only when written, and the byte count follows each write.
    #[tokio::test]
    async fn a_shared_task_changes_in_the_store_only_when_written() {
        let s = MemoryStore::default();
        let mut t = Arc::new(Task {
            id: "t1".into(),
            status: TaskStatus {
                state: TaskState::Submitted,
                ..Default::default()
            },
            ..Default::default()
        });
        s.put_shared(&t, "alice").await.unwrap();
        assert_eq!(s.bytes(), crate::bounds::task_bytes(&t));
        let live = Arc::make_mut(&mut t);
        live.status.state = TaskState::Completed;
        live.history.push(Message {
            message_id: "m1".into(),
            parts: vec![Part::text("hi")],
            ..Default::default()
        });
        let got = s.get("t1").await.unwrap().unwrap();
        assert_eq!(got.task.status.state, TaskState::Submitted);
        assert!(got.task.history.is_empty());
        assert_eq!(got.owner, "alice");
        s.put_numbered_shared(&t, "alice", Vec::new(), 2)
            .await
            .unwrap();
        let got = s.get("t1").await.unwrap().unwrap();
        assert_eq!(got.task, *t);
        assert_eq!(s.bytes(), crate::bounds::task_bytes(&t));
        let mine = TaskFilter {
            owner: "alice".into(),
            ..Default::default()
        };
        assert_eq!(s.list(&mine).await.unwrap(), vec![got]);
        assert_eq!(s.count().await.unwrap(), 1);
    }
}
