//! The registry on PostgreSQL, shared by replicas: workspaces and agents here, keys in
//! `pg_keys`, settings and push callbacks in `pg_push`.
//!
//! The tables are `pg_schema`'s, migrated once across replicas under an advisory lock. Reads
//! on the hop path go through the same registry cache as SQLite's (`cache`), at the epoch
//! `pg_epoch` keeps; a row read at epoch `v` is cached only while the cache is still at `v`,
//! so a row read before a change is never kept past it. Writes move the epoch and raise the
//! notification by the tables' triggers; the writer then moves its own epoch forward, so it
//! reads its change at once. Statements are prepared once per pooled connection.

use std::sync::Arc;

use a2a_pg::tokio_postgres::error::SqlState;
use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::{PgError, Pool, PoolOptions};

use super::super::cache::{Cache, Rows};
use super::super::pg_schema::{COMPONENT, PG_MIGRATIONS};
use super::super::rules::{agent_of, check_agent, check_workspace_id, workspace_exists};
use super::super::{
    Agent, KeyInfo, KeyRejection, Principal, PushCallback, StoreError, Workspace,
    WorkspaceSettings, now,
};
use super::RegistryStore;
use super::pg_epoch::{self, Epoch};
use super::pg_writer::Writer;
use crate::keys::Scope;

/// The registry on PostgreSQL (see the module doc). Cheap to clone; the clones share one
/// pool, cache and listener.
#[derive(Clone)]
pub struct PgRegistry {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    cache: Cache,
    epoch: Epoch,
    /// The replica's group-commit writer (`pg_writer`), shared by its audit and records.
    writer: Writer,
    /// The connection settings (for the listeners of [`PgRegistry::holds`] and
    /// [`PgRegistry::stream_events`]).
    config: a2a_pg::tokio_postgres::Config,
}

impl From<a2a_pg::tokio_postgres::Error> for StoreError {
    fn from(e: a2a_pg::tokio_postgres::Error) -> Self {
        StoreError::Postgres(PgError::Db(e))
    }
}

impl From<a2a_pg::deadpool_postgres::PoolError> for StoreError {
    fn from(e: a2a_pg::deadpool_postgres::PoolError) -> Self {
        StoreError::Postgres(PgError::Pool(e))
    }
}

/// A statement's error as the kinds both backends use: a taken key is
/// `Invalid("{what} already exists")`, a missing referenced row `NotFound(missing)`.
pub(super) fn refused(e: a2a_pg::tokio_postgres::Error, what: &str, missing: &str) -> StoreError {
    match e.code() {
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => {
            StoreError::Invalid(format!("{what} already exists"))
        }
        Some(c) if *c == SqlState::FOREIGN_KEY_VIOLATION => {
            StoreError::NotFound(missing.to_owned())
        }
        _ => e.into(),
    }
}

const WORKSPACE: &str = "SELECT id, name, max_response_bytes, max_stream_bytes, max_card_bytes
    FROM workspaces";
const AGENT: &str = "SELECT workspace_id, agent_id, endpoint, credential, skill_allow,
    pinned_card_key FROM agents";

fn workspace_of(r: &a2a_pg::tokio_postgres::Row) -> Workspace {
    let bytes = |i: usize| r.get::<_, Option<i64>>(i).map(|v| v as u64);
    Workspace {
        id: r.get(0),
        name: r.get(1),
        max_response_bytes: bytes(2),
        max_stream_bytes: bytes(3),
        max_card_bytes: bytes(4),
    }
}

fn agent_row(r: &a2a_pg::tokio_postgres::Row) -> Agent {
    agent_of(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5))
}

impl PgRegistry {
    /// Connects to the database at `url` (`postgres://…`), applies the gateway's migrations
    /// (once across replicas) and starts listening for registry changes.
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<PgRegistry, StoreError> {
        let pool = a2a_pg::pool(url, opts)?;
        {
            let mut c = pool.get().await?;
            a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
        }
        let config = a2a_pg::pg_config(url, opts)?;
        let epoch = Epoch::start(pool.clone(), config.clone()).await?;
        let writer = Writer::start(pool.clone());
        Ok(PgRegistry {
            inner: Arc::new(Inner {
                pool,
                cache: Cache::default(),
                epoch,
                writer,
                config,
            }),
        })
    }

    /// Approvals and kills on the same database and pool as this registry (their listener on
    /// a connection of its own).
    pub fn holds(&self) -> Result<super::PgHolds, StoreError> {
        super::PgHolds::on(self.inner.pool.clone(), self.inner.config.clone())
    }

    /// Stream resume events on the same database and pool as this registry (their writer
    /// task and listener started here).
    pub fn stream_events(
        &self,
        bounds: super::StreamBounds,
    ) -> Result<super::PgStreams, StoreError> {
        super::PgStreams::on(self.inner.pool.clone(), self.inner.config.clone(), bounds)
    }

    /// Whether the database answers a trivial query within `wait` (readiness), and the
    /// gateway schema version it holds.
    pub async fn ping(&self, wait: std::time::Duration) -> Result<i64, StoreError> {
        let read = async {
            let c = self.inner.pool.get().await?;
            let row = c
                .query_one(
                    "SELECT version FROM a2a_schema WHERE component = $1",
                    &[&COMPONENT],
                )
                .await?;
            Ok::<i64, StoreError>(row.get::<_, i64>(0))
        };
        match tokio::time::timeout(wait, read).await {
            Ok(r) => r,
            Err(_) => Err(StoreError::Postgres(PgError::Setup(format!(
                "the database did not answer within {} ms",
                wait.as_millis()
            )))),
        }
    }

    /// The pool (shared with [`super::PgRecords`]).
    pub(super) fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The replica's group-commit writer (shared with its audit and records).
    pub(super) fn writer(&self) -> &Writer {
        &self.inner.writer
    }

    /// Whether registry changes are heard by notification now (false: every cached read asks
    /// the database for the epoch first).
    pub fn listening(&self) -> bool {
        self.inner.epoch.listening()
    }

    /// How many cached reads asked the database for the epoch because the listener was away
    /// (`a2a_store_polls_total{listener="registry"}`).
    pub fn polls(&self) -> u64 {
        self.inner.epoch.polls()
    }

    /// The epoch a read as of `seen` uses: `seen` itself while the cache still holds it.
    pub(super) async fn version(&self, seen: Option<i64>) -> Result<i64, StoreError> {
        if let Some(s) = seen
            && self.inner.cache.version() == Some(s)
        {
            return Ok(s);
        }
        self.inner.epoch.current(&self.inner.pool).await
    }

    /// Looks `get` up in the cache at epoch `v`.
    pub(super) fn lookup<T>(
        &self,
        v: i64,
        get: impl FnOnce(&Rows) -> Option<T>,
    ) -> Result<Option<T>, StoreError> {
        Ok(get(&*self.inner.cache.at_least(v)?))
    }

    /// Caches what was read at epoch `v`, unless the cache has moved past `v` meanwhile.
    pub(super) fn remember(&self, v: i64, put: impl FnOnce(&mut Rows)) -> Result<(), StoreError> {
        let mut rows = self.inner.cache.at_least(v)?;
        if rows.version() == Some(v) {
            rows.make_room();
            put(&mut rows);
        }
        Ok(())
    }

    /// One statement's affected rows.
    pub(super) async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        self.execute_or(sql, params, StoreError::from).await
    }

    /// One statement's affected rows, its refusal mapped by `refuse` (see [`refused`]).
    pub(super) async fn execute_or(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        refuse: impl FnOnce(a2a_pg::tokio_postgres::Error) -> StoreError,
    ) -> Result<u64, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        c.execute(&st, params).await.map_err(refuse)
    }

    /// The rows of one query.
    pub(super) async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<a2a_pg::tokio_postgres::Row>, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.query(&st, params).await?)
    }

    /// After a registry write through this replica: the epoch moved by the write's trigger
    /// becomes this replica's, so its next read sees the change.
    pub(super) async fn changed(&self) {
        match pg_epoch::read(&self.inner.pool).await {
            Ok(e) => {
                self.inner.epoch.advance(e);
            }
            Err(e) => {
                tracing::warn!("registry epoch after a write: {e}");
                self.inner.epoch.mark_stale();
            }
        }
        self.inner.cache.clear();
    }

    /// Whether the workspace exists (read like [`RegistryStore::workspace`]).
    pub(super) async fn exists(&self, workspace_id: &str) -> Result<bool, StoreError> {
        Ok(self.workspace(workspace_id).await?.is_some())
    }
}

impl RegistryStore for PgRegistry {
    async fn create_workspace(&self, id: &str, name: &str) -> Result<Workspace, StoreError> {
        check_workspace_id(id)?;
        let n = self
            .execute(
                "INSERT INTO workspaces(id, name, created_at) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO NOTHING",
                &[&id, &name, &now()],
            )
            .await?;
        if n == 0 {
            return Err(workspace_exists(id));
        }
        self.changed().await;
        self.workspace(id)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("workspace {id}")))
    }

    async fn workspace_seen(
        &self,
        id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Workspace>, StoreError> {
        let v = self.version(seen).await?;
        if let Some(w) = self.lookup(v, |r| r.workspaces.get(id).cloned())? {
            return Ok(w);
        }
        let w = self
            .query(&format!("{WORKSPACE} WHERE id = $1"), &[&id])
            .await?
            .first()
            .map(workspace_of);
        self.remember(v, |r| {
            r.workspaces.insert(id.to_owned(), w.clone());
        })?;
        Ok(w)
    }

    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        // Byte order, as SQLite sorts, whatever the database's collation.
        let rows = self
            .query(&format!("{WORKSPACE} ORDER BY id COLLATE \"C\""), &[])
            .await?;
        Ok(rows.iter().map(workspace_of).collect())
    }

    async fn set_workspace_limits(
        &self,
        id: &str,
        max_response_bytes: Option<u64>,
        max_stream_bytes: Option<u64>,
        max_card_bytes: Option<u64>,
    ) -> Result<(), StoreError> {
        let n = self
            .execute(
                "UPDATE workspaces SET max_response_bytes = $2, max_stream_bytes = $3,
                   max_card_bytes = $4 WHERE id = $1",
                &[
                    &id,
                    &max_response_bytes.map(|v| v as i64),
                    &max_stream_bytes.map(|v| v as i64),
                    &max_card_bytes.map(|v| v as i64),
                ],
            )
            .await?;
        self.changed().await;
        if n == 0 {
            return Err(StoreError::NotFound(format!("workspace {id}")));
        }
        Ok(())
    }

    async fn upsert_agent(&self, agent: &Agent) -> Result<(), StoreError> {
        let skills = check_agent(agent)?;
        let ws = &agent.workspace_id;
        let missing = format!("workspace {ws}");
        if !self.exists(ws).await? {
            return Err(StoreError::NotFound(missing));
        }
        self.execute_or(
            "INSERT INTO agents(workspace_id, agent_id, endpoint, credential, skill_allow,
               pinned_card_key, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (workspace_id, agent_id) DO UPDATE SET endpoint = EXCLUDED.endpoint,
               credential = EXCLUDED.credential, skill_allow = EXCLUDED.skill_allow,
               pinned_card_key = EXCLUDED.pinned_card_key",
            &[
                ws,
                &agent.agent_id,
                &agent.endpoint,
                &agent.credential,
                &skills,
                &agent.pinned_card_key,
                &now(),
            ],
            |e| refused(e, &format!("agent {}", agent.agent_id), &missing),
        )
        .await?;
        self.changed().await;
        Ok(())
    }

    async fn agent_seen(
        &self,
        workspace_id: &str,
        agent_id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Agent>, StoreError> {
        let v = self.version(seen).await?;
        let key = (workspace_id.to_owned(), agent_id.to_owned());
        if let Some(a) = self.lookup(v, |r| r.agents.get(&key).cloned())? {
            return Ok(a);
        }
        let a = self
            .query(
                &format!("{AGENT} WHERE workspace_id = $1 AND agent_id = $2"),
                &[&workspace_id, &agent_id],
            )
            .await?
            .first()
            .map(agent_row);
        self.remember(v, |r| {
            r.agents.insert(key, a.clone());
        })?;
        Ok(a)
    }

    async fn list_agents(&self, workspace_id: &str) -> Result<Vec<Agent>, StoreError> {
        let rows = self
            .query(
                &format!("{AGENT} WHERE workspace_id = $1 ORDER BY agent_id COLLATE \"C\""),
                &[&workspace_id],
            )
            .await?;
        Ok(rows.iter().map(agent_row).collect())
    }

    async fn delete_agent(&self, workspace_id: &str, agent_id: &str) -> Result<(), StoreError> {
        let n = self
            .execute(
                "DELETE FROM agents WHERE workspace_id = $1 AND agent_id = $2",
                &[&workspace_id, &agent_id],
            )
            .await?;
        self.changed().await;
        if n == 0 {
            return Err(StoreError::NotFound(format!("agent {agent_id}")));
        }
        Ok(())
    }

    async fn create_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> Result<(KeyInfo, String), StoreError> {
        self.new_key(workspace_id, scopes, label, expires_at).await
    }

    async fn list_keys(&self, workspace_id: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.keys_of(workspace_id).await
    }

    async fn revoke_key(&self, key_id: &str) -> Result<(), StoreError> {
        self.revoke(key_id).await
    }

    async fn authenticate(
        &self,
        presented: &str,
    ) -> Result<Result<Principal, KeyRejection>, StoreError> {
        self.judge(presented).await
    }

    async fn key_standing(&self, key_id: &str) -> Result<Option<KeyRejection>, StoreError> {
        self.standing_of(key_id).await
    }

    async fn workspace_settings_seen(
        &self,
        workspace_id: &str,
        seen: Option<i64>,
    ) -> Result<WorkspaceSettings, StoreError> {
        self.settings_seen(workspace_id, seen).await
    }

    async fn put_workspace_settings(
        &self,
        workspace_id: &str,
        settings: &WorkspaceSettings,
    ) -> Result<(), StoreError> {
        self.put_settings(workspace_id, settings).await
    }

    async fn insert_push_callback(&self, cb: &PushCallback) -> Result<(), StoreError> {
        self.insert_callback(cb).await
    }

    async fn update_push_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> Result<(), StoreError> {
        self.update_callback(callback_id, task_id, config_id).await
    }

    async fn push_callback(&self, callback_id: &str) -> Result<Option<PushCallback>, StoreError> {
        self.callback(callback_id).await
    }

    async fn delete_push_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        self.delete_callbacks(workspace_id, agent_id, task_id, config_id)
            .await
    }

    async fn mark_push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.mark_delivered(callback_id, hash).await
    }

    async fn push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.delivered(callback_id, hash).await
    }
}
