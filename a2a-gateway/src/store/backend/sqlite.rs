//! The registry on the embedded SQLite file: today's [`Store`] methods, called in place.
//!
//! Each call takes the store's connection lock for microseconds and reads the hop's rows from
//! the registry cache, so it runs to completion on the caller's thread, exactly as the
//! handlers call the store today; nothing is moved to another thread. The only difference
//! from calling [`Store`] directly: a taken callback id and an unknown callback are refused
//! with the kinds the PostgreSQL backend uses ([`StoreError::Invalid`],
//! [`StoreError::NotFound`]) instead of SQLite's constraint error.

use super::super::{
    Agent, KeyInfo, KeyRejection, Principal, PushCallback, Store, StoreError, Workspace,
    WorkspaceSettings,
};
use super::RegistryStore;
use crate::keys::Scope;

/// The registry on a SQLite [`Store`] (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct SqliteRegistry {
    store: Store,
}

impl SqliteRegistry {
    /// The registry of `store` (which keeps serving everything else: audit, tasks, sends).
    pub fn new(store: Store) -> SqliteRegistry {
        SqliteRegistry { store }
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }
}

/// SQLite's constraint errors as the kinds both backends use: a taken primary key or unique
/// value is `Invalid("{what} already exists")`, a missing referenced row `NotFound(what)`.
pub(super) fn constraint(e: StoreError, what: &str) -> StoreError {
    use rusqlite::ffi;
    if let StoreError::Sql(rusqlite::Error::SqliteFailure(f, _)) = &e {
        match f.extended_code {
            ffi::SQLITE_CONSTRAINT_PRIMARYKEY | ffi::SQLITE_CONSTRAINT_UNIQUE => {
                return StoreError::Invalid(format!("{what} already exists"));
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => return StoreError::NotFound(what.to_owned()),
            _ => {}
        }
    }
    e
}

impl RegistryStore for SqliteRegistry {
    async fn create_workspace(&self, id: &str, name: &str) -> Result<Workspace, StoreError> {
        self.store.create_workspace(id, name)
    }
    async fn workspace_seen(
        &self,
        id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Workspace>, StoreError> {
        self.store.workspace_seen(id, seen)
    }
    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        self.store.list_workspaces()
    }
    async fn set_workspace_limits(
        &self,
        id: &str,
        max_response_bytes: Option<u64>,
        max_stream_bytes: Option<u64>,
        max_card_bytes: Option<u64>,
    ) -> Result<(), StoreError> {
        self.store
            .set_workspace_limits(id, max_response_bytes, max_stream_bytes, max_card_bytes)
    }
    async fn upsert_agent(&self, agent: &Agent) -> Result<(), StoreError> {
        self.store.upsert_agent(agent)
    }
    async fn agent_seen(
        &self,
        workspace_id: &str,
        agent_id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Agent>, StoreError> {
        self.store.agent_seen(workspace_id, agent_id, seen)
    }
    async fn list_agents(&self, workspace_id: &str) -> Result<Vec<Agent>, StoreError> {
        self.store.list_agents(workspace_id)
    }
    async fn delete_agent(&self, workspace_id: &str, agent_id: &str) -> Result<(), StoreError> {
        self.store.delete_agent(workspace_id, agent_id)
    }
    async fn create_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> Result<(KeyInfo, String), StoreError> {
        self.store
            .create_key(workspace_id, scopes, label, expires_at)
    }
    async fn list_keys(&self, workspace_id: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.store.list_keys(workspace_id)
    }
    async fn revoke_key(&self, key_id: &str) -> Result<(), StoreError> {
        self.store.revoke_key(key_id)
    }
    async fn authenticate(
        &self,
        presented: &str,
    ) -> Result<Result<Principal, KeyRejection>, StoreError> {
        self.store.authenticate(presented)
    }
    async fn key_standing(&self, key_id: &str) -> Result<Option<KeyRejection>, StoreError> {
        self.store.key_standing(key_id)
    }
    async fn workspace_settings_seen(
        &self,
        workspace_id: &str,
        seen: Option<i64>,
    ) -> Result<WorkspaceSettings, StoreError> {
        self.store.workspace_settings_seen(workspace_id, seen)
    }
    async fn put_workspace_settings(
        &self,
        workspace_id: &str,
        settings: &WorkspaceSettings,
    ) -> Result<(), StoreError> {
        self.store.put_workspace_settings(workspace_id, settings)
    }
    async fn insert_push_callback(&self, cb: &PushCallback) -> Result<(), StoreError> {
        self.store
            .insert_push_callback(cb)
            .map_err(|e| constraint(e, &format!("push callback {}", cb.callback_id)))
    }
    async fn update_push_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> Result<(), StoreError> {
        self.store
            .update_push_callback(callback_id, task_id, config_id)
    }
    async fn push_callback(&self, callback_id: &str) -> Result<Option<PushCallback>, StoreError> {
        self.store.push_callback(callback_id)
    }
    async fn delete_push_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        self.store
            .delete_push_callbacks(workspace_id, agent_id, task_id, config_id)
    }
    async fn mark_push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.store
            .mark_push_delivered(callback_id, hash)
            .map_err(|e| constraint(e, &format!("push callback {callback_id}")))
    }
    async fn push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.store.push_delivered(callback_id, hash)
    }
}
