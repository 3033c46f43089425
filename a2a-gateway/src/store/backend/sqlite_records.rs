//! Task records and idempotent sends on the embedded SQLite file: today's [`Store`] methods
//! and send records, called in place (as `sqlite` does for the registry). Bindings and status
//! records go through the intent journal and the audit writer in the serving process, and
//! sends through its memory and journal ([`crate::store::sends_memory`]); elsewhere (the
//! admin CLI) they are committed at once.

use std::sync::Arc;
use std::time::Duration;

use super::super::sends::{Claimed, Outcome, SendKey, SendRecords};
use super::super::{Bound, Owner, Store, StoreError, TaskQuery, TaskRecord, TaskStatusRow};
use super::{SendStore, TaskStore};

/// Task records and sends on a SQLite [`Store`] (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct SqliteRecords {
    store: Store,
    sends: Arc<dyn SendRecords>,
}

impl SqliteRecords {
    /// The records of `store`. In the serving process, make it after opening the intent
    /// journal ([`Store::open_intent_journal`]): sends are then claimed in memory and
    /// completed through the journal, as the gateway does today.
    pub fn new(store: Store) -> SqliteRecords {
        let sends = super::super::sends_memory::records(&store);
        SqliteRecords { store, sends }
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
        self.sends.claim(key, digest, now, since, abandoned)
    }
    async fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        self.sends.complete(key, outcome)
    }
    async fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        self.sends.release(key)
    }
    async fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        self.sends.first_answer(key)
    }
}
