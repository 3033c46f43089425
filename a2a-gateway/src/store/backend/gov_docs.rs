//! Governance documents behind one trait with two backends (issue 32, docs/replicas.md): each
//! workspace's policy document and PII rules, kept as the JSON text the admin API validated,
//! in the registry's design ([`super::RegistryStore`]): async methods returning `Send`
//! futures, an enum ([`GovDocs`]) chosen at start.
//!
//! The hop does not read them per request: `governance::Cache` keeps each workspace's
//! compiled documents in memory. [`GovDocStore::epoch`] says which version the cache may trust:
//! on PostgreSQL the registry's epoch (every write to `gov_policies` and `gov_pii_rules`
//! moves it and notifies every replica, as a registry write does, so a change made on one
//! replica governs the next hop on every other within milliseconds); on SQLite `None` (one
//! process: its admin writes invalidate the cache, and an entry is re-read after
//! `governance::CACHE_TTL` for the admin CLI's).
//!
//! Both refuse alike: a write for a missing workspace is [`StoreError::NotFound`].

use std::future::Future;

use super::{PgGovDocs, SqliteGovDocs};
use crate::store::StoreError;

/// Policies and PII rules per workspace, on either backend (see the module doc).
pub trait GovDocStore: Clone + Send + Sync + 'static {
    /// The workspace's policy document (JSON text), if any.
    fn policy(
        &self,
        workspace: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Stores (replaces) the workspace's policy document; a missing workspace is
    /// [`StoreError::NotFound`].
    fn put_policy(
        &self,
        workspace: &str,
        document: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Removes the workspace's policy; false when it had none.
    fn delete_policy(
        &self,
        workspace: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The workspace's PII rules (JSON text of `crate::pii::PiiRules`), if any.
    fn pii_rules(
        &self,
        workspace: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Stores (replaces) the workspace's PII rules; a missing workspace is
    /// [`StoreError::NotFound`].
    fn put_pii_rules(
        &self,
        workspace: &str,
        rules: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Removes the workspace's PII rules (PII scanning off); false when it had none.
    fn delete_pii_rules(
        &self,
        workspace: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The version reads are valid at now (PostgreSQL: the registry epoch, from memory while
    /// its listener is connected); `None`: no version (SQLite, see the module doc).
    fn epoch(&self) -> impl Future<Output = Result<Option<i64>, StoreError>> + Send;
}

/// Governance documents on the backend chosen at start (see the module doc).
#[derive(Clone)]
pub enum GovDocs {
    /// The embedded SQLite file (one process).
    Sqlite(SqliteGovDocs),
    /// PostgreSQL, shared by replicas.
    Postgres(PgGovDocs),
}

/// Calls the same method on whichever backend `self` is.
macro_rules! either {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self {
            GovDocs::Sqlite(r) => r.$m($($a),*).await,
            GovDocs::Postgres(r) => r.$m($($a),*).await,
        }
    };
}

impl GovDocStore for GovDocs {
    async fn policy(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        either!(self.policy(workspace))
    }
    async fn put_policy(&self, workspace: &str, document: &str) -> Result<(), StoreError> {
        either!(self.put_policy(workspace, document))
    }
    async fn delete_policy(&self, workspace: &str) -> Result<bool, StoreError> {
        either!(self.delete_policy(workspace))
    }
    async fn pii_rules(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        either!(self.pii_rules(workspace))
    }
    async fn put_pii_rules(&self, workspace: &str, rules: &str) -> Result<(), StoreError> {
        either!(self.put_pii_rules(workspace, rules))
    }
    async fn delete_pii_rules(&self, workspace: &str) -> Result<bool, StoreError> {
        either!(self.delete_pii_rules(workspace))
    }
    async fn epoch(&self) -> Result<Option<i64>, StoreError> {
        either!(self.epoch())
    }
}
