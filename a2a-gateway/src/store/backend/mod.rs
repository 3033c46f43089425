//! The registry behind one trait with two backends (issue 32, docs/replicas.md): workspaces,
//! agents, API keys, workspace settings and sealed push callbacks, on the embedded SQLite file
//! ([`SqliteRegistry`], today's [`Store`](super::Store)) or on PostgreSQL shared by replicas
//! ([`PgRegistry`]). [`Registry`] is either, chosen at start.
//!
//! The trait is async: a PostgreSQL call is a network round trip, which must not block a
//! runtime thread. What a hop reads on every request (keys, agents, workspaces, settings) is
//! answered from the in-memory registry cache on both backends, so those futures are ready
//! at once; SQLite's run to completion on the calling thread, as the handlers call the store
//! today (microseconds under the connection lock). The futures are `Send`, so handlers and
//! spawned tasks can await them; the gateway will hold the [`Registry`] enum rather than a
//! `dyn` trait object, so no call boxes a future.
//!
//! Both backends refuse the same way: a malformed id, registration or setting and a taken
//! workspace id or callback id are [`StoreError::Invalid`] with the same message; a missing
//! workspace, agent, key or callback is [`StoreError::NotFound`]; a database that cannot be
//! reached is [`StoreError::is_unavailable`]. The suite in `tests/store_suite.rs` runs against
//! both.
//!
//! Task ownership, task records and idempotent sends are behind two more traits of the same
//! design, [`TaskStore`] and [`SendStore`] (module `records`): [`SqliteRecords`] on today's
//! store, [`PgRecords`] on PostgreSQL, [`Records`] either.
//!
//! The audit log and the admin audit are behind [`AuditStore`] (module `audit`): a
//! non-blocking enqueue and an awaited "durable" write, the reads of the console and the
//! export, retention; [`SqliteAudit`] is today's group-commit writer, [`PgAudit`] a writer task
//! per replica committing batches; [`Audit`] either. Approvals (held requests) and session
//! kills are behind [`HoldStore`] (module `holds`), with a wait for an approval's decision and a
//! stream of kills that reach every replica on PostgreSQL by notification; [`Holds`] either.
//! Workspace policies and PII rules are behind [`GovDocStore`] (module `gov_docs`), read at the
//! registry's epoch on PostgreSQL; [`GovDocs`] either.
//!
//! What one process kept in memory and replicas must share is behind three more traits
//! (module `shared`): [`SecretStore`] (the page-token key), [`SessionStore`] (console
//! sessions and login links) and [`TrustStore`] (card signing keys, "require signed cards",
//! the push JWT replay guard); [`SqliteShared`] keeps today's single-process behaviour,
//! [`PgShared`] shares them through PostgreSQL; [`Shared`] is either.

use std::future::Future;

use super::{
    Agent, KeyInfo, KeyRejection, Principal, PushCallback, StoreError, Workspace, WorkspaceSettings,
};
use crate::keys::Scope;

mod audit;
mod gov_docs;
mod holds;
mod pg;
mod pg_audit;
mod pg_audit_read;
mod pg_audit_rows;
mod pg_epoch;
mod pg_gov_docs;
mod pg_holds;
mod pg_keys;
mod pg_push;
mod pg_sends;
mod pg_shared;
mod pg_streams;
mod pg_tasks;
mod pg_writer;
mod records;
mod rows;
mod shared;
mod sqlite;
mod sqlite_audit;
mod sqlite_gov_docs;
mod sqlite_holds;
mod sqlite_records;
mod sqlite_shared;

pub use audit::{Audit, AuditStore, answered, export_jsonl};
pub use gov_docs::{GovDocStore, GovDocs};
pub use holds::{APPROVALS_CHANNEL, HoldStore, Holds, KILL_MARGIN, KILLS_CHANNEL, Kills, POLL};
pub use pg::PgRegistry;
pub use pg_audit::{PIPELINE, PgAudit};
pub use pg_gov_docs::PgGovDocs;
pub use pg_holds::PgHolds;
pub use pg_shared::{KEY_POLL, NewestKey, PgShared};
pub use pg_streams::{
    BATCH as STREAM_BATCH, PgStreams, STREAM_EVENTS_CHANNEL, StreamBounds, StreamKey, StreamRow,
};
pub use pg_tasks::PgRecords;
pub use records::{Records, SendStore, TaskStore};
pub use rows::{AdminAuditRecord, AdminIdentity, Approval, ApprovalSummary, Kill, MAX_PAGE};
pub use shared::{
    PAGE_KEY, SecretStore, SessionInfo, SessionStore, Shared, SigningKeyInfo, TrustStore,
};
pub use sqlite::SqliteRegistry;
pub use sqlite_audit::SqliteAudit;
pub use sqlite_gov_docs::SqliteGovDocs;
pub use sqlite_holds::SqliteHolds;
pub use sqlite_records::SqliteRecords;
pub use sqlite_shared::{MAX_SESSIONS, SqliteShared};

/// The registry's operations, on either backend (see the module doc). The `_seen` reads take
/// the registry version a hop started at ([`Principal::registry_version`]) and skip the
/// freshness check while the cache still holds that version.
pub trait RegistryStore: Clone + Send + Sync + 'static {
    /// Creates a workspace; a taken id is [`StoreError::Invalid`].
    fn create_workspace(
        &self,
        id: &str,
        name: &str,
    ) -> impl Future<Output = Result<Workspace, StoreError>> + Send;

    /// Reads a workspace as of registry version `seen`.
    fn workspace_seen(
        &self,
        id: &str,
        seen: Option<i64>,
    ) -> impl Future<Output = Result<Option<Workspace>, StoreError>> + Send;

    /// Reads a workspace.
    fn workspace(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Workspace>, StoreError>> + Send {
        self.workspace_seen(id, None)
    }

    /// Lists the workspaces by id.
    fn list_workspaces(&self) -> impl Future<Output = Result<Vec<Workspace>, StoreError>> + Send;

    /// Sets (or clears, with `None`) a workspace's response limits.
    fn set_workspace_limits(
        &self,
        id: &str,
        max_response_bytes: Option<u64>,
        max_stream_bytes: Option<u64>,
        max_card_bytes: Option<u64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Registers (or replaces) an agent in an existing workspace.
    fn upsert_agent(&self, agent: &Agent) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Looks an agent up inside a workspace as of registry version `seen` (another
    /// workspace's agent is `None`, like a missing one).
    fn agent_seen(
        &self,
        workspace_id: &str,
        agent_id: &str,
        seen: Option<i64>,
    ) -> impl Future<Output = Result<Option<Agent>, StoreError>> + Send;

    /// Looks an agent up inside a workspace.
    fn agent(
        &self,
        workspace_id: &str,
        agent_id: &str,
    ) -> impl Future<Output = Result<Option<Agent>, StoreError>> + Send {
        self.agent_seen(workspace_id, agent_id, None)
    }

    /// Lists the agents of a workspace by id.
    fn list_agents(
        &self,
        workspace_id: &str,
    ) -> impl Future<Output = Result<Vec<Agent>, StoreError>> + Send;

    /// Removes an agent registration.
    fn delete_agent(
        &self,
        workspace_id: &str,
        agent_id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Creates an API key: its metadata and the secret, shown once (only its SHA-256 is kept).
    fn create_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> impl Future<Output = Result<(KeyInfo, String), StoreError>> + Send;

    /// Lists the keys of a workspace (metadata only), oldest first.
    fn list_keys(
        &self,
        workspace_id: &str,
    ) -> impl Future<Output = Result<Vec<KeyInfo>, StoreError>> + Send;

    /// Revokes a key (idempotent).
    fn revoke_key(&self, key_id: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Authenticates a presented bearer key.
    fn authenticate(
        &self,
        presented: &str,
    ) -> impl Future<Output = Result<Result<Principal, KeyRejection>, StoreError>> + Send;

    /// Whether a key still stands (`None`), or why not.
    fn key_standing(
        &self,
        key_id: &str,
    ) -> impl Future<Output = Result<Option<KeyRejection>, StoreError>> + Send;

    /// The settings of a workspace as of registry version `seen` (the defaults when none).
    fn workspace_settings_seen(
        &self,
        workspace_id: &str,
        seen: Option<i64>,
    ) -> impl Future<Output = Result<WorkspaceSettings, StoreError>> + Send;

    /// The settings of a workspace (the defaults when none are stored).
    fn workspace_settings(
        &self,
        workspace_id: &str,
    ) -> impl Future<Output = Result<WorkspaceSettings, StoreError>> + Send {
        self.workspace_settings_seen(workspace_id, None)
    }

    /// Replaces the settings of an existing workspace.
    fn put_workspace_settings(
        &self,
        workspace_id: &str,
        settings: &WorkspaceSettings,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Stores a sealed push callback; a taken callback id is [`StoreError::Invalid`].
    fn insert_push_callback(
        &self,
        cb: &PushCallback,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Records the task id and/or config id the peer answered for a callback (`None`: kept).
    fn update_push_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// One sealed push callback.
    fn push_callback(
        &self,
        callback_id: &str,
    ) -> impl Future<Output = Result<Option<PushCallback>, StoreError>> + Send;

    /// Removes the callbacks of a push config (`config_id` `None`: of every config of the
    /// task); returns how many were removed.
    fn delete_push_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// Marks a body delivered for a callback; false when it already was (a duplicate). An
    /// unknown callback is [`StoreError::NotFound`].
    fn mark_push_delivered(
        &self,
        callback_id: &str,
        hash: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Whether a body was already delivered for a callback.
    fn push_delivered(
        &self,
        callback_id: &str,
        hash: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// The registry on the backend chosen at start (see the module doc).
#[derive(Clone)]
pub enum Registry {
    /// The embedded SQLite file (one process).
    Sqlite(SqliteRegistry),
    /// PostgreSQL, shared by replicas.
    Postgres(PgRegistry),
}

/// Calls the same method on whichever backend `self` is.
macro_rules! either {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self {
            Registry::Sqlite(r) => r.$m($($a),*).await,
            Registry::Postgres(r) => r.$m($($a),*).await,
        }
    };
}

impl RegistryStore for Registry {
    async fn create_workspace(&self, id: &str, name: &str) -> Result<Workspace, StoreError> {
        either!(self.create_workspace(id, name))
    }
    async fn workspace_seen(
        &self,
        id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Workspace>, StoreError> {
        either!(self.workspace_seen(id, seen))
    }
    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        either!(self.list_workspaces())
    }
    async fn set_workspace_limits(
        &self,
        id: &str,
        max_response_bytes: Option<u64>,
        max_stream_bytes: Option<u64>,
        max_card_bytes: Option<u64>,
    ) -> Result<(), StoreError> {
        either!(self.set_workspace_limits(id, max_response_bytes, max_stream_bytes, max_card_bytes))
    }
    async fn upsert_agent(&self, agent: &Agent) -> Result<(), StoreError> {
        either!(self.upsert_agent(agent))
    }
    async fn agent_seen(
        &self,
        workspace_id: &str,
        agent_id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Agent>, StoreError> {
        either!(self.agent_seen(workspace_id, agent_id, seen))
    }
    async fn list_agents(&self, workspace_id: &str) -> Result<Vec<Agent>, StoreError> {
        either!(self.list_agents(workspace_id))
    }
    async fn delete_agent(&self, workspace_id: &str, agent_id: &str) -> Result<(), StoreError> {
        either!(self.delete_agent(workspace_id, agent_id))
    }
    async fn create_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> Result<(KeyInfo, String), StoreError> {
        either!(self.create_key(workspace_id, scopes, label, expires_at))
    }
    async fn list_keys(&self, workspace_id: &str) -> Result<Vec<KeyInfo>, StoreError> {
        either!(self.list_keys(workspace_id))
    }
    async fn revoke_key(&self, key_id: &str) -> Result<(), StoreError> {
        either!(self.revoke_key(key_id))
    }
    async fn authenticate(
        &self,
        presented: &str,
    ) -> Result<Result<Principal, KeyRejection>, StoreError> {
        either!(self.authenticate(presented))
    }
    async fn key_standing(&self, key_id: &str) -> Result<Option<KeyRejection>, StoreError> {
        either!(self.key_standing(key_id))
    }
    async fn workspace_settings_seen(
        &self,
        workspace_id: &str,
        seen: Option<i64>,
    ) -> Result<WorkspaceSettings, StoreError> {
        either!(self.workspace_settings_seen(workspace_id, seen))
    }
    async fn put_workspace_settings(
        &self,
        workspace_id: &str,
        settings: &WorkspaceSettings,
    ) -> Result<(), StoreError> {
        either!(self.put_workspace_settings(workspace_id, settings))
    }
    async fn insert_push_callback(&self, cb: &PushCallback) -> Result<(), StoreError> {
        either!(self.insert_push_callback(cb))
    }
    async fn update_push_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> Result<(), StoreError> {
        either!(self.update_push_callback(callback_id, task_id, config_id))
    }
    async fn push_callback(&self, callback_id: &str) -> Result<Option<PushCallback>, StoreError> {
        either!(self.push_callback(callback_id))
    }
    async fn delete_push_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        either!(self.delete_push_callbacks(workspace_id, agent_id, task_id, config_id))
    }
    async fn mark_push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        either!(self.mark_push_delivered(callback_id, hash))
    }
    async fn push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        either!(self.push_delivered(callback_id, hash))
    }
}
