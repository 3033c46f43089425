//! Task ownership, task records and idempotent sends behind two traits with a SQLite and a
//! PostgreSQL implementation (issue 32, docs/replicas.md), in the registry's design
//! ([`super::RegistryStore`]): async methods returning `Send` futures, the SQLite backend
//! ([`SqliteRecords`](super::SqliteRecords)) calling today's [`Store`](crate::store::Store)
//! in place, the PostgreSQL backend ([`PgRecords`](super::PgRecords)) on the tables of
//! `pg_schema`, shared by replicas, and [`Records`] holding either, chosen at start.
//!
//! Both keep the same rules, checked by one suite (`tests/store_records.rs`) on both:
//! a task is bound to exactly one owner (workspace + agentId) and a second owner's bind is
//! refused ([`Bound::Other`]); one owner never reads another's tasks; a listing's `totalSize`
//! is exact and its pages are stable (newest recorded status first, then task id in byte
//! order); a `messageId` is claimed exactly once, across replicas too, and a repeat reads the
//! first send's answer.

use std::future::Future;
use std::time::Duration;

use super::{PgRecords, SqliteRecords};
use crate::store::sends::{Claimed, Outcome, SendKey};
use crate::store::{Bound, Owner, StoreError, TaskQuery, TaskRecord, TaskStatusRow};

/// Task ownership bindings and the task records ListTasks reads, on either backend.
pub trait TaskStore: Clone + Send + Sync + 'static {
    /// Binds `task_id` at peer `endpoint` to `owner` unless it is bound already; a task bound
    /// to another owner stays theirs ([`Bound::Other`]).
    fn bind(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
    ) -> impl Future<Output = Result<Bound, StoreError>> + Send;

    /// The owner of a task, if the gateway knows it.
    fn owner(
        &self,
        endpoint: &str,
        task_id: &str,
    ) -> impl Future<Output = Result<Option<Owner>, StoreError>> + Send;

    /// A page of the owner's task ids at `endpoint`, oldest binding first, after binding
    /// sequence `after`: `(seq, task_id)` pairs.
    fn owned_tasks(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<(i64, String)>, StoreError>> + Send;

    /// Removes a task's binding and record.
    fn forget(
        &self,
        endpoint: &str,
        task_id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Records what an answer, event or notification says of a bound task (applied only to
    /// the row of the owner it names; see [`TaskStatusRow`] for which record wins). SQLite
    /// queues it for the writer's next batch; PostgreSQL writes it.
    fn record_status(
        &self,
        row: TaskStatusRow,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Returns once the bindings and status records made so far are committed.
    fn settle(&self) -> impl Future<Output = ()> + Send;

    /// One page of the owner's listed tasks at `endpoint` (newest recorded status first, then
    /// by task id; tasks the peer no longer knows left out) and how many match in all.
    fn task_records(
        &self,
        endpoint: &str,
        owner: &Owner,
        q: &TaskQuery<'_>,
    ) -> impl Future<Output = Result<(Vec<TaskRecord>, u64), StoreError>> + Send;

    /// Up to `limit` of the owner's tasks whose record may be out of date (not terminal, last
    /// recorded before `before`, Unix milliseconds), least recently recorded first.
    fn unsettled(
        &self,
        endpoint: &str,
        owner: &Owner,
        before: i64,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Deletes the records of at most `batch` tasks heard nothing of for `max_age` (binding,
    /// status record, push callbacks); returns how many. Call again while it deletes.
    fn trim_task_records(
        &self,
        max_age: Duration,
        batch: usize,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// How many task records (bindings) the store holds.
    fn task_record_count(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Whether `owner` owns the task.
    fn owns(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move { Ok(self.owner(endpoint, task_id).await?.as_ref() == Some(owner)) }
    }
}

/// Idempotent sends, scoped by [`SendKey`], on either backend. Times are Unix seconds.
pub trait SendStore: Clone + Send + Sync + 'static {
    /// Claims `key` for a message with `digest` at `now`, exactly once across replicas:
    /// records older than `since` are forgotten, and so is a claim never completed made
    /// before `abandoned`. A repeat gets [`Claimed::Pending`] or the first send's answer
    /// ([`Claimed::Done`]); another message under the key [`Claimed::Conflict`].
    fn claim(
        &self,
        key: &SendKey,
        digest: &str,
        now: i64,
        since: i64,
        abandoned: i64,
    ) -> impl Future<Output = Result<Claimed, StoreError>> + Send;

    /// Records what the claimed send became (the first answer recorded stays).
    fn complete(
        &self,
        key: &SendKey,
        outcome: &Outcome,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Forgets a claim that has no outcome (the send failed: a retry may try again).
    fn release(&self, key: &SendKey) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The first answer recorded for `key`, if the send completed.
    fn first_answer(
        &self,
        key: &SendKey,
    ) -> impl Future<Output = Result<Option<Outcome>, StoreError>> + Send;
}

/// Task records and sends on the backend chosen at start (see the module doc).
#[derive(Clone)]
pub enum Records {
    /// The embedded SQLite file (one process).
    Sqlite(SqliteRecords),
    /// PostgreSQL, shared by replicas.
    Postgres(PgRecords),
}

impl Records {
    /// Binds like [`TaskStore::bind`] and records `status`, the first status of the same task
    /// from the answer that revealed it (a status that cannot be recorded is logged, as the
    /// callers of [`TaskStore::record_status`] do). On PostgreSQL a new binding is inserted
    /// with its status: one write of the row instead of an insert and an update.
    pub async fn bind_recorded(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
        status: Option<TaskStatusRow>,
    ) -> Result<Bound, StoreError> {
        let (bound, rest) = match self {
            Records::Postgres(r) => r.bind_with_status(endpoint, task_id, owner, status).await?,
            Records::Sqlite(r) => (r.bind(endpoint, task_id, owner).await?, status),
        };
        if let (Some(row), Bound::New | Bound::Already) = (rest, &bound)
            && let Err(e) = self.record_status(row).await
        {
            tracing::warn!(task = %task_id, "task status not recorded: {e}");
        }
        Ok(bound)
    }
}

/// Calls the same method on whichever backend `self` is.
macro_rules! either {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self {
            Records::Sqlite(r) => r.$m($($a),*).await,
            Records::Postgres(r) => r.$m($($a),*).await,
        }
    };
}

impl TaskStore for Records {
    async fn bind(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
    ) -> Result<Bound, StoreError> {
        either!(self.bind(endpoint, task_id, owner))
    }
    async fn owner(&self, endpoint: &str, task_id: &str) -> Result<Option<Owner>, StoreError> {
        either!(self.owner(endpoint, task_id))
    }
    async fn owned_tasks(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        either!(self.owned_tasks(endpoint, owner, after, limit))
    }
    async fn forget(&self, endpoint: &str, task_id: &str) -> Result<(), StoreError> {
        either!(self.forget(endpoint, task_id))
    }
    async fn record_status(&self, row: TaskStatusRow) -> Result<(), StoreError> {
        either!(self.record_status(row))
    }
    async fn settle(&self) {
        either!(self.settle())
    }
    async fn task_records(
        &self,
        endpoint: &str,
        owner: &Owner,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError> {
        either!(self.task_records(endpoint, owner, q))
    }
    async fn unsettled(
        &self,
        endpoint: &str,
        owner: &Owner,
        before: i64,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        either!(self.unsettled(endpoint, owner, before, limit))
    }
    async fn trim_task_records(
        &self,
        max_age: Duration,
        batch: usize,
    ) -> Result<usize, StoreError> {
        either!(self.trim_task_records(max_age, batch))
    }
    async fn task_record_count(&self) -> Result<u64, StoreError> {
        either!(self.task_record_count())
    }
}

impl SendStore for Records {
    async fn claim(
        &self,
        key: &SendKey,
        digest: &str,
        now: i64,
        since: i64,
        abandoned: i64,
    ) -> Result<Claimed, StoreError> {
        either!(self.claim(key, digest, now, since, abandoned))
    }
    async fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        either!(self.complete(key, outcome))
    }
    async fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        either!(self.release(key))
    }
    async fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        either!(self.first_answer(key))
    }
}
