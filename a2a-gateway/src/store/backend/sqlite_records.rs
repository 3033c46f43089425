//! Task records and idempotent sends on the embedded SQLite file: today's [`Store`] methods
//! and send records, called in place (as `sqlite` does for the registry). Bindings and status
//! records go through the intent journal and the audit writer in the serving process, and
//! sends through its memory and journal ([`crate::store::sends_memory`]) once the store's
//! intent journal is open; before that, and elsewhere (the admin CLI), they are committed at
//! once ([`crate::store::sends::SqliteSends`]). Which of the two is read at each call, so a
//! journal opened after this is made is used from then on.

use std::time::Duration;

use super::super::sends::{Claimed, Outcome, SendKey, SqliteSends};
use super::super::sends_memory::JournaledSends;
use super::super::{Bound, Owner, Store, StoreError, TaskQuery, TaskRecord, TaskStatusRow};
use super::{SendStore, TaskStore};

/// Task records and sends on a SQLite [`Store`] (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct SqliteRecords {
    store: Store,
}

/// The send records a call uses (see the module doc).
enum Sends {
    Journaled(JournaledSends),
    Committed(SqliteSends),
}

/// Calls the same method on whichever send records the store uses now.
macro_rules! sends {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self.sends() {
            Sends::Journaled(s) => s.$m($($a),*),
            Sends::Committed(s) => s.$m($($a),*),
        }
    };
}

impl SqliteRecords {
    /// The records of `store` (sends through its intent journal once that is open, see the
    /// module doc).
    pub fn new(store: Store) -> SqliteRecords {
        SqliteRecords { store }
    }

    fn sends(&self) -> Sends {
        if self.store.has_intent_journal() {
            Sends::Journaled(JournaledSends::new(self.store.clone()))
        } else {
            Sends::Committed(SqliteSends::new(self.store.clone()))
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }
}

impl TaskStore for SqliteRecords {
    async fn bind(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
    ) -> Result<Bound, StoreError> {
        self.store.bind_task(endpoint, task_id, owner)
    }
    async fn owner(&self, endpoint: &str, task_id: &str) -> Result<Option<Owner>, StoreError> {
        self.store.task_owner(endpoint, task_id)
    }
    async fn owned_tasks(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        self.store.owned_tasks(endpoint, owner, after, limit)
    }
    async fn forget(&self, endpoint: &str, task_id: &str) -> Result<(), StoreError> {
        self.store.forget_task(endpoint, task_id)
    }
    async fn record_status(&self, row: TaskStatusRow) -> Result<(), StoreError> {
        self.store.record_task_status(row)
    }
    async fn settle(&self) {
        self.store.settle_task_records().await;
        if self.store.has_pending_bindings() {
            self.store.flush_audit();
        }
    }
    async fn task_records(
        &self,
        endpoint: &str,
        owner: &Owner,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError> {
        self.store
            .task_records(endpoint, &owner.workspace_id, &owner.agent_id, q)
    }
    async fn unsettled(
        &self,
        endpoint: &str,
        owner: &Owner,
        before: i64,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.store.unsettled_task_records(
            endpoint,
            &owner.workspace_id,
            &owner.agent_id,
            before,
            limit,
        )
    }
    async fn trim_task_records(
        &self,
        max_age: Duration,
        batch: usize,
    ) -> Result<usize, StoreError> {
        self.store.trim_task_records(max_age, batch)
    }
    async fn task_record_count(&self) -> Result<u64, StoreError> {
        self.store.task_record_count()
    }
}

impl SendStore for SqliteRecords {
    async fn claim(
        &self,
        key: &SendKey,
        digest: &str,
        now: i64,
        since: i64,
        abandoned: i64,
    ) -> Result<Claimed, StoreError> {
        sends!(self.claim(key, digest, now, since, abandoned))
    }
    async fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        sends!(self.complete(key, outcome))
    }
    async fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        sends!(self.release(key))
    }
    async fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        sends!(self.first_answer(key))
    }
}
