//! The store's interface: the [`TaskStore`] trait and what it keeps and hands out (stored
//! tasks, filters, pages, errors).

use crate::model::{Task, TaskState, TaskStatus, Timestamp};
use async_trait::async_trait;
use std::sync::Arc;

/// A stored task with the key of the caller that owns it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTask {
    /// The task.
    pub task: Task,
    /// Owner key (see [`crate::caller::CallerProfile::owner_key`]).
    pub owner: String,
}

impl StoredTask {
    /// The status timestamp in ms (0 without one): the listing order.
    pub(crate) fn ms(&self) -> i64 {
        task_ms(&self.task)
    }
}

/// The status timestamp of `t` in ms (0 without one).
pub(crate) fn task_ms(t: &Task) -> i64 {
    t.status
        .timestamp
        .as_ref()
        .map(|t| t.unix_millis() as i64)
        .unwrap_or(0)
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
        self.matches_parts(&t.task, &t.owner)
    }

    /// Whether `task` of `owner` matches.
    pub(crate) fn matches_parts(&self, task: &Task, owner: &str) -> bool {
        owner == self.owner
            && self
                .context_id
                .as_ref()
                .is_none_or(|c| task.context_id.as_ref() == Some(c))
            && self.state.is_none_or(|s| task.status.state == s)
            && self
                .status_timestamp_after
                .as_ref()
                .is_none_or(|after| task_ms(task) >= after.unix_millis() as i64)
    }
}

/// Store failures.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

const FULL: &str = "full: ";
const FENCED: &str = "fenced: ";

impl StoreError {
    /// The store has no room for a new task (its byte bound is reached by unfinished tasks).
    pub fn full(msg: impl std::fmt::Display) -> Self {
        StoreError(format!("{FULL}{msg}"))
    }
    /// Whether this is a [`StoreError::full`].
    pub fn is_full(&self) -> bool {
        self.0.starts_with(FULL)
    }
    /// The write was refused because another replica took the task over (its lease ended while
    /// this replica could not renew it): this replica must stop running the task.
    pub fn fenced(msg: impl std::fmt::Display) -> Self {
        StoreError(format!("{FENCED}{msg}"))
    }
    /// Whether this is a [`StoreError::fenced`].
    pub fn is_fenced(&self) -> bool {
        self.0.starts_with(FENCED)
    }
}

/// A push notification owed to one webhook config of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// The task it reports on.
    pub task_id: String,
    /// The push config (webhook) it goes to.
    pub config_id: String,
    /// The media type of the body.
    pub content_type: String,
    /// The body to POST.
    pub body: bytes::Bytes,
}

/// A notice recorded in a store's outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct DueNotice {
    /// Its number: numbers grow in recording order, so one config's notices sort in event order.
    pub seq: i64,
    /// The notice.
    pub notice: Notice,
}

/// Where tasks live.
///
/// A store may also keep the **push outbox** (`put_with_notices`, `record_notices`,
/// `notice_done`, `due_notices`): push notifications recorded as due with the task change they
/// report and removed once their webhook has answered, so that a restart resends what a previous
/// process did not deliver. The defaults keep none: notifications are then delivered from memory
/// only and what is undelivered when the process ends is lost.
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
    /// [`TaskStore::put`] and record `notices` as due, in one write (both or neither); the
    /// numbers of the recorded notices, in order (empty: this store keeps no outbox). Default:
    /// put, record nothing.
    async fn put_with_notices(
        &self,
        task: StoredTask,
        notices: Vec<Notice>,
    ) -> Result<Vec<i64>, StoreError> {
        let _ = notices;
        self.put(task).await?;
        Ok(Vec::new())
    }
    /// [`TaskStore::put_with_notices`] of the task as it stands after its event number `seq`: a
    /// store replicas share keeps the number with the task ([`TaskStore::get_numbered`]), so
    /// that a snapshot another replica takes names the event it includes. Default:
    /// `put_with_notices`.
    async fn put_numbered(
        &self,
        task: StoredTask,
        notices: Vec<Notice>,
        seq: u64,
    ) -> Result<Vec<i64>, StoreError> {
        let _ = seq;
        self.put_with_notices(task, notices).await
    }
    /// [`TaskStore::put`] of a task its caller keeps too (a live task, which the caller copies
    /// before its next change): a store that keeps tasks in memory keeps `task` itself.
    /// Default: `put` of a copy.
    async fn put_shared(&self, task: &Arc<Task>, owner: &str) -> Result<(), StoreError> {
        self.put(StoredTask {
            task: Task::clone(task),
            owner: owner.to_string(),
        })
        .await
    }
    /// [`TaskStore::put_numbered`] of a task its caller keeps too (see
    /// [`TaskStore::put_shared`]). Default: `put_numbered` of a copy.
    async fn put_numbered_shared(
        &self,
        task: &Arc<Task>,
        owner: &str,
        notices: Vec<Notice>,
        seq: u64,
    ) -> Result<Vec<i64>, StoreError> {
        let rec = StoredTask {
            task: Task::clone(task),
            owner: owner.to_string(),
        };
        self.put_numbered(rec, notices, seq).await
    }
    /// A task with the number of the last event its stored form includes, when the store
    /// keeps it ([`TaskStore::put_numbered`]). Default: [`TaskStore::get`], no number.
    async fn get_numbered(
        &self,
        id: &str,
    ) -> Result<Option<(StoredTask, Option<u64>)>, StoreError> {
        Ok(self.get(id).await?.map(|t| (t, None)))
    }
    /// Record `notices` as due without a task change (one published before it is stored); their
    /// numbers (empty: no outbox). Default: none.
    async fn record_notices(&self, notices: Vec<Notice>) -> Result<Vec<i64>, StoreError> {
        let _ = notices;
        Ok(Vec::new())
    }
    /// Notice `seq` needs no more delivery (its webhook answered): remove it. Default: nothing.
    async fn notice_done(&self, seq: i64) -> Result<(), StoreError> {
        let _ = seq;
        Ok(())
    }
    /// Every notice still due, oldest first (read once at start to resend). Default: none.
    async fn due_notices(&self) -> Result<Vec<DueNotice>, StoreError> {
        Ok(Vec::new())
    }
    /// The notices still due of other processes that are gone (a store replicas share), taken
    /// over by this one, oldest first: called periodically to resend them. Default: none.
    async fn orphaned_notices(&self) -> Result<Vec<DueNotice>, StoreError> {
        Ok(Vec::new())
    }
    /// Begin a follow-up turn of task `id`, which this process found with status `seen`
    /// (waiting for input): mark the stored task SUBMITTED only if nothing changed it since
    /// (its status is still `seen` and, where the store keeps one, its version is the one this
    /// process last read or wrote), in one step; whether this process may continue it. Of two
    /// processes continuing one task at once, one may. Default: true (a store one process
    /// owns: the live task's lock already orders the turns).
    async fn begin_turn(&self, id: &str, seen: &TaskStatus) -> Result<bool, StoreError> {
        let _ = (id, seen);
        Ok(true)
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
