//! In-memory copies of the rows read on every hop: API keys, agents and workspaces.
//!
//! A hop used to run three SELECTs before calling its peer (key, agent, workspace). The cache
//! answers them from memory and stays exact:
//! - changes made through this [`Store`](super::Store) (the admin API, `admin` CLI in-process,
//!   tests) clear it while the connection lock is held, so the next read sees them;
//! - changes made by another connection or process (`a2a-gateway admin ...` against the file
//!   of a running gateway) bump the registry epoch, a one-row table that triggers on the
//!   cached tables increment ([`MIGRATION_EPOCH`]); every cached read compares it (one cached
//!   statement, one row) and then clears the cache. SQLite's `PRAGMA data_version` served here
//!   before, but it moves with every commit of any other connection, and the audit writer
//!   commits from a connection of its own (`super::audit_writer`) hundreds of times a second.
//!
//! A hop reads the registry as of its start: authentication checks the epoch and records
//! it in the [`Principal`](super::Principal) (`registry_version`); the hop's later lookups
//! (agent, workspace, settings) pass it back and skip the check while the cache still holds
//! the rows of that version (one read transaction per hop instead of four). A change made
//! through this store empties the maps, so a later lookup reads the table again.
//!
//! Key rows are cached as stored (digest, scopes, expiry, revocation), so authentication still
//! hashes the presented key, compares digests in constant time and checks expiry per request.
//! Unknown key ids are not cached (nobody can grow the map with guesses); each map is
//! bounded by [`MAX_ENTRIES`] and cleared when full.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use super::rules::KeyRow;
use super::settings::WorkspaceSettings;
use super::sql::CachedExt;
use super::{Agent, StoreError, Workspace};

/// Migration of the registry epoch: one row, incremented by triggers on every change to the
/// tables the cache holds (cascaded deletes fire them too).
pub(crate) const MIGRATION_EPOCH: &str = r#"
    CREATE TABLE registry_epoch (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        epoch INTEGER NOT NULL
    );
    INSERT INTO registry_epoch(id, epoch) VALUES (1, 0);
    CREATE TRIGGER epoch_workspaces_i AFTER INSERT ON workspaces
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_workspaces_u AFTER UPDATE ON workspaces
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_workspaces_d AFTER DELETE ON workspaces
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_agents_i AFTER INSERT ON agents
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_agents_u AFTER UPDATE ON agents
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_agents_d AFTER DELETE ON agents
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_keys_i AFTER INSERT ON api_keys
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_keys_u AFTER UPDATE ON api_keys
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_keys_d AFTER DELETE ON api_keys
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_settings_i AFTER INSERT ON workspace_settings
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_settings_u AFTER UPDATE ON workspace_settings
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
    CREATE TRIGGER epoch_settings_d AFTER DELETE ON workspace_settings
        BEGIN UPDATE registry_epoch SET epoch = epoch + 1; END;
"#;

/// Entries per map before it is cleared.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// The cached rows and the registry epoch they were read at.
#[derive(Default)]
pub(crate) struct Rows {
    version: Option<i64>,
    /// key id -> stored key row.
    pub keys: HashMap<String, KeyRow>,
    /// (workspace, agent) -> registration (`None` = not registered).
    pub agents: HashMap<(String, String), Option<Agent>>,
    /// workspace id -> workspace (`None` = no such workspace).
    pub workspaces: HashMap<String, Option<Workspace>>,
    /// workspace id -> its settings (`super::settings`).
    pub settings: HashMap<String, WorkspaceSettings>,
}

impl Rows {
    /// The registry epoch the rows were read at.
    pub fn version(&self) -> Option<i64> {
        self.version
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.agents.clear();
        self.workspaces.clear();
        self.settings.clear();
    }

    /// Bounds the maps (called before an insert).
    pub fn make_room(&mut self) {
        if self.keys.len() >= MAX_ENTRIES {
            self.keys.clear();
        }
        if self.agents.len() >= MAX_ENTRIES {
            self.agents.clear();
        }
        if self.workspaces.len() >= MAX_ENTRIES {
            self.workspaces.clear();
        }
        if self.settings.len() >= MAX_ENTRIES {
            self.settings.clear();
        }
    }
}

/// The registry cache of one store (shared by its clones).
#[derive(Default)]
pub(crate) struct Cache {
    rows: Mutex<Rows>,
}

impl Cache {
    /// The cached rows, valid for `conn` (the store's connection, whose lock the caller holds):
    /// emptied first when another connection has committed since the last look.
    pub fn current(&self, conn: &Connection) -> Result<MutexGuard<'_, Rows>, StoreError> {
        let version: i64 =
            conn.query_row_cached("SELECT epoch FROM registry_epoch", [], |r| r.get(0))?;
        let mut rows = self.rows.lock().map_err(|_| StoreError::Poisoned)?;
        if rows.version != Some(version) {
            rows.clear();
            rows.version = Some(version);
        }
        Ok(rows)
    }

    /// Like [`Cache::current`], without asking SQLite when the rows are still those of version
    /// `seen` (checked earlier in the same hop); otherwise checks as `current` does.
    pub fn current_seen(
        &self,
        conn: &Connection,
        seen: Option<i64>,
    ) -> Result<MutexGuard<'_, Rows>, StoreError> {
        if let Some(v) = seen {
            let rows = self.rows.lock().map_err(|_| StoreError::Poisoned)?;
            if rows.version == Some(v) {
                return Ok(rows);
            }
        }
        self.current(conn)
    }

    /// The registry epoch the cached rows were read at.
    pub fn version(&self) -> Option<i64> {
        self.rows.lock().ok().and_then(|r| r.version)
    }

    /// The cached rows moved forward to `version`: emptied first when they were read at an
    /// older one, kept when read at a newer one (the caller compares [`Rows::version`] before
    /// inserting what it read at `version`). For a store that learns the epoch by itself
    /// (PostgreSQL's notifications, `super::backend`).
    pub fn at_least(&self, version: i64) -> Result<MutexGuard<'_, Rows>, StoreError> {
        let mut rows = self.rows.lock().map_err(|_| StoreError::Poisoned)?;
        if rows.version.is_none_or(|v| v < version) {
            rows.clear();
            rows.version = Some(version);
        }
        Ok(rows)
    }

    /// Forgets every cached row (after a change through this store).
    pub fn clear(&self) {
        if let Ok(mut rows) = self.rows.lock() {
            rows.clear();
        } else {
            // A poisoned lock: start over with an empty cache.
            self.rows.clear_poison();
            if let Ok(mut rows) = self.rows.lock() {
                *rows = Rows::default();
            }
        }
    }
}
