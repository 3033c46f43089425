//! In-memory copies of the rows read on every hop: API keys, agents and workspaces.
//!
//! A hop used to run three SELECTs before calling its peer (key, agent, workspace). The cache
//! answers them from memory and stays exact:
//! - changes made through this [`Store`](super::Store) (the admin API, `admin` CLI in-process,
//!   tests) clear it while the connection lock is held, so the next read sees them;
//! - changes made by another connection or process (`a2a-gateway admin ...` against the file
//!   of a running gateway) bump SQLite's `PRAGMA data_version`, which every cached read
//!   compares (one cached statement, no table access) and then clears the cache.
//!
//! A hop reads the registry as of its start: authentication checks `data_version` and records
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

use super::registry::KeyRow;
use super::settings::WorkspaceSettings;
use super::sql::CachedExt;
use super::{Agent, StoreError, Workspace};

/// Entries per map before it is cleared.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// The cached rows and the `data_version` they were read at.
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
    /// The `data_version` the rows were read at.
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
        let version: i64 = conn.query_row_cached("PRAGMA data_version", [], |r| r.get(0))?;
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
