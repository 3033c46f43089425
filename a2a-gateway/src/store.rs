//! Embedded SQLite registry: workspaces, registered agents, workspace API keys and the
//! append-only audit log.
//!
//! The store is one SQLite file in WAL mode. Migrations are in code ([`MIGRATIONS`]) and run on
//! open. Every operation takes the connection lock for a few microseconds; the gateway calls it
//! from request handlers directly (SQLite in WAL mode with `synchronous=NORMAL` does not block on
//! fsync for reads). What a hop needs is kept cheap (issue 11, figures in docs/benchmarks.md):
//! statements are compiled once per connection (`sql`), keys, agents and workspaces are read
//! from an exact in-memory cache (`cache`), and the hop's audit rows go through one writer
//! thread that commits them in batches (`audit_writer`; the intent record is committed, or in the
//! serving process journaled (`journal`), before [`Store::append_intent_committed`] returns).

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::keys::{self, Scope};

mod audit_writer;
mod cache;
mod hop_page;
mod journal;
pub(crate) use audit_writer::BindOutcome;
pub use audit_writer::IntentRef;
pub use hop_page::HopFilter;
pub(crate) use journal::{SendRow, TaskBinding, insert_send};
mod settings;
mod sql;
pub use settings::{PushDelivery, WorkspaceSettings};
pub(crate) use sql::CachedExt;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The named row does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The row already exists or a value is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// The connection lock was poisoned by a panic elsewhere.
    #[error("database lock poisoned")]
    Poisoned,
}

/// Schema migrations, applied in order; the index + 1 is the schema version.
pub const MIGRATIONS: &[&str] = &[
    // 1: registry, keys and audit
    r#"
    CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        max_response_bytes INTEGER,
        max_stream_bytes INTEGER,
        max_card_bytes INTEGER
    );
    CREATE TABLE agents (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        agent_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        credential TEXT,
        skill_allow TEXT,
        pinned_card_key TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, agent_id)
    );
    CREATE TABLE api_keys (
        key_id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        hash BLOB NOT NULL,
        scopes TEXT NOT NULL,
        label TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    );
    CREATE TABLE audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        workspace_id TEXT,
        key_id TEXT,
        target TEXT,
        operation TEXT,
        client_method TEXT,
        peer_method TEXT,
        client_version TEXT,
        client_binding TEXT,
        peer_version TEXT,
        peer_binding TEXT,
        decision TEXT NOT NULL,
        status INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        error_code TEXT
    );
    CREATE INDEX audit_ws_target ON audit(workspace_id, target);
    CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    "#,
    // 2: sealed push callbacks (the caller's webhook, kept from the peer) and delivered bodies
    r#"
    CREATE TABLE push_callbacks (
        callback_id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        config_id TEXT,
        url TEXT NOT NULL,
        token TEXT,
        auth_scheme TEXT,
        auth_credentials TEXT,
        caller_version TEXT NOT NULL,
        peer_version TEXT NOT NULL,
        notify_token TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX push_callbacks_task ON push_callbacks(workspace_id, agent_id, task_id);
    CREATE TABLE push_delivered (
        callback_id TEXT NOT NULL REFERENCES push_callbacks(callback_id) ON DELETE CASCADE,
        body_hash TEXT NOT NULL,
        delivered_at INTEGER NOT NULL,
        PRIMARY KEY (callback_id, body_hash)
    );
    "#,
    // 3: task ownership (see `crate::ownership`) and audit intent records: an intent row is
    // written before the peer call; the hop's final row names it in `intent_of`.
    r#"
    CREATE TABLE task_owners (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint TEXT NOT NULL,
        task_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX task_owners_task ON task_owners(endpoint, task_id);
    CREATE INDEX task_owners_owner ON task_owners(workspace_id, agent_id, endpoint, seq);
    ALTER TABLE audit ADD COLUMN phase TEXT;
    ALTER TABLE audit ADD COLUMN intent_of INTEGER;
    ALTER TABLE audit ADD COLUMN task_id TEXT;
    CREATE INDEX audit_intent_of ON audit(intent_of);
    "#,
    // 4: the intent journal's watermark (see `journal`): the highest journal number whose
    // intent row is committed.
    r#"
    CREATE TABLE journal_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        committed INTEGER NOT NULL
    );
    INSERT INTO journal_state(id, committed) VALUES (1, 0);
    "#,
    // 5: governance (issue 14): policies, PII rules, kills, and each hop's evidence in `audit`.
    crate::governance::store::MIGRATION,
    // 6: approvals (held hops).
    crate::governance::approval::MIGRATION,
    // 7: idempotent sends (issue 16): the send records of `crate::idempotency`.
    crate::idempotency::store::MIGRATION,
    // 8: the operator console's keyset pages (issue 18): audit indexes ending in `seq`.
    hop_page::MIGRATION,
    // 9: card trust (issue 15): own signing keys, workspaces requiring signed cards, push JWT
    // ids, and each hop's card trust state in `audit`.
    crate::trust::store::MIGRATION,
    // 10: per-workspace settings (issue 15): extension allow-list, push delivery.
    settings::MIGRATION,
    // 11: the admin audit log (issue 15): every admin action with the admin's identity.
    crate::admin_audit::MIGRATION,
    // 12: the extension URIs of a held hop (issue 15), sent when it is released.
    crate::governance::approval::MIGRATION_EXTENSIONS,
    // 13: the intent link index without the intent rows (issue 11).
    hop_page::MIGRATION_INTENT_OF,
    // 14: the audit table without AUTOINCREMENT, the decision index without `allowed` rows
    // (issue 11; why seq numbers are still never reused: see the constant).
    hop_page::MIGRATION_AUDIT_REBUILD,
];

/// A sealed push callback: the caller's webhook, which the peer never sees.
#[derive(Debug, Clone, PartialEq)]
pub struct PushCallback {
    /// Random id in the callback URL given to the peer.
    pub callback_id: String,
    /// Owning workspace.
    pub workspace_id: String,
    /// Target agent.
    pub agent_id: String,
    /// Task the config belongs to.
    pub task_id: String,
    /// The config id (as the peer answered it), when known.
    pub config_id: Option<String>,
    /// The caller's webhook URL.
    pub url: String,
    /// The caller's notification token.
    pub token: Option<String>,
    /// The caller's authentication scheme (`Bearer` ...).
    pub auth_scheme: Option<String>,
    /// The caller's authentication credentials.
    pub auth_credentials: Option<String>,
    /// Version the caller created the config in (`0.3`/`1.0`).
    pub caller_version: String,
    /// Version the peer speaks (`0.3`/`1.0`).
    pub peer_version: String,
    /// Token the peer must send in `X-A2A-Notification-Token`.
    pub notify_token: String,
}

/// A workspace: the unit that owns agents and keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Stable identifier.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Per-workspace override of the peer answer/card limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// Per-workspace override of the per-stream limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stream_bytes: Option<u64>,
    /// Per-workspace override of the peer card limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_card_bytes: Option<u64>,
}

/// A registered peer agent inside a workspace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// Workspace that owns the registration.
    #[serde(default)]
    pub workspace_id: String,
    /// The agent id callers use in `/a2a/{agentId}`.
    pub agent_id: String,
    /// The registered A2A endpoint of the peer (the base its card is read from).
    pub endpoint: String,
    /// Outbound credential sent to the peer as `Authorization: Bearer ...`, if any.
    #[serde(default, skip_serializing)]
    pub credential: Option<String>,
    /// Skill allow-list; `None` allows every skill of the peer's card.
    #[serde(default)]
    pub skills: Option<Vec<String>>,
    /// Trusted keys for the peer's card signatures and signed push notifications: a public
    /// JWK or JWK Set (JSON text; the admin API also takes the object itself), or a JWKS URL
    /// (see `crate::trust::KeySource`).
    #[serde(default, deserialize_with = "crate::trust::deserialize_key_source")]
    pub pinned_card_key: Option<String>,
}

/// Metadata of a workspace API key (never the secret).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    /// Public key id (also the prefix of the key).
    pub key_id: String,
    /// Owning workspace.
    pub workspace_id: String,
    /// Scopes; empty = unrestricted.
    pub scopes: Vec<Scope>,
    /// Free-text label.
    pub label: Option<String>,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Expiry, Unix seconds.
    pub expires_at: Option<i64>,
    /// Revocation time, Unix seconds.
    pub revoked_at: Option<i64>,
}

/// A key that authenticated successfully.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    /// Key id.
    pub key_id: String,
    /// Workspace the key belongs to.
    pub workspace_id: String,
    /// Scopes; empty = unrestricted.
    pub scopes: Vec<Scope>,
    /// The registry version the key was read at: the hop's later lookups pass it back
    /// ([`Store::agent_seen`] and friends) to read the registry as of the hop's start.
    pub registry_version: Option<i64>,
}

/// Why a presented key was not accepted (all answered 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRejection {
    /// No key, malformed key, unknown key id or wrong secret.
    Invalid,
    /// The key has expired.
    Expired,
    /// The key was revoked.
    Revoked,
}

/// One audit record: one hop (a caller request and, if made, the peer call).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Sequence number (assigned on insert).
    #[serde(default)]
    pub seq: i64,
    /// RFC 3339 time.
    #[serde(default)]
    pub ts: String,
    /// Trace id (W3C, 32 hex).
    pub trace_id: String,
    /// Workspace (None when refused before authentication).
    pub workspace_id: Option<String>,
    /// Key id.
    pub key_id: Option<String>,
    /// Target agent id.
    pub target: Option<String>,
    /// Operation, by its A2A 0.3 method name.
    pub operation: Option<String>,
    /// Method name the client sent (or the route it used).
    pub client_method: Option<String>,
    /// Method name sent to the peer.
    pub peer_method: Option<String>,
    /// A2A version of the caller.
    pub client_version: Option<String>,
    /// Binding of the caller (`JSONRPC`, `HTTP+JSON`).
    pub client_binding: Option<String>,
    /// A2A version used with the peer.
    pub peer_version: Option<String>,
    /// Binding used with the peer.
    pub peer_binding: Option<String>,
    /// `allowed` or `refused`.
    pub decision: String,
    /// HTTP status of the refusal's kind (e.g. 403), or 200.
    pub status: i64,
    /// Latency in milliseconds.
    pub latency_ms: i64,
    /// Gateway error code, if refused.
    pub error_code: Option<String>,
    /// The task the hop concerned or created, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Sequence number of the hop's intent record (written before the peer call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_seq: Option<i64>,
    /// `incomplete` on an intent record whose hop never finished (the gateway stopped
    /// between the peer call and the answer); absent on finished hops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The hop's governance evidence (JSON: decisions with rule ids, PII types and counts,
    /// delegation chain, approval), when a governance step ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<Value>,
    /// Trust state of the peer card behind the hop (`verified`, `unsigned`, `invalid`,
    /// `untrusted-key`; see `crate::trust`), when it was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_trust: Option<String>,
}

/// Handle to the SQLite store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    /// Keys, agents and workspaces read on every hop (see [`cache`]).
    cache: Arc<cache::Cache>,
    /// The audit log's group-commit writer (see [`audit_writer`]).
    audit: Arc<audit_writer::AuditWriter>,
    /// The database file (none in memory).
    path: Option<Arc<std::path::PathBuf>>,
    /// Idempotent sends claimed or not yet committed (see `crate::idempotency`).
    sends: Arc<crate::idempotency::memory::SendMemory>,
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl Store {
    /// Opens (creating if needed) the SQLite file at `path` and applies migrations.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        let mut store = Self::init(conn)?;
        store.path = Some(Arc::new(path.to_owned()));
        Ok(store)
    }

    /// Opens a private in-memory store (tests, examples).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Store, StoreError> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.set_prepared_statement_cache_capacity(sql::STATEMENT_CACHE);
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        for (i, sql) in MIGRATIONS.iter().enumerate() {
            let v = i as i64 + 1;
            if v > version {
                let tx = conn.unchecked_transaction()?;
                tx.execute_batch(sql)?;
                tx.pragma_update(None, "user_version", v)?;
                tx.commit()?;
            }
        }
        let conn = Arc::new(Mutex::new(conn));
        Ok(Store {
            audit: Arc::new(audit_writer::AuditWriter::start(conn.clone())),
            conn,
            cache: Arc::default(),
            path: None,
            sends: Arc::default(),
        })
    }

    /// Makes this process the one serving the database: intent records are journaled to
    /// `<database>.intents` instead of committed one by one (see [`journal`]), after the
    /// intents a previous process journaled but never committed are recovered (returned: how
    /// many). Refused if another process holds the journal, and for in-memory stores.
    pub fn open_intent_journal(&self) -> Result<usize, StoreError> {
        let Some(path) = &self.path else {
            return Err(StoreError::Invalid(
                "an in-memory store has no intent journal".into(),
            ));
        };
        let (journal, recovered) = {
            let c = self.conn.lock().map_err(|_| StoreError::Poisoned)?;
            journal::Journal::open(path, &c)?
        };
        self.audit.set_journal(journal)?;
        Ok(recovered)
    }

    /// Runs `f` under the connection lock (for stores in other modules over the same file).
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let c = self.conn.lock().map_err(|_| StoreError::Poisoned)?;
        f(&c)
    }

    /// Like [`Store::with`] for changes to workspaces, agents or keys: the registry cache is
    /// cleared before the lock is released.
    fn with_write<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let c = self.conn.lock().map_err(|_| StoreError::Poisoned)?;
        let out = f(&c);
        self.cache.clear();
        out
    }

    /// Schema version after migrations.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.with(|c| Ok(c.pragma_query_value(None, "user_version", |r| r.get(0))?))
    }

    /// Creates a workspace.
    pub fn create_workspace(&self, id: &str, name: &str) -> Result<Workspace, StoreError> {
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(StoreError::Invalid(format!(
                "workspace id {id:?} must be non-empty ASCII letters, digits, '-', '_' or '.'"
            )));
        }
        self.with_write(|c| {
            let n = c.execute_cached(
                "INSERT OR IGNORE INTO workspaces(id, name, created_at) VALUES (?1, ?2, ?3)",
                params![id, name, now()],
            )?;
            if n == 0 {
                return Err(StoreError::Invalid(format!(
                    "workspace {id} already exists"
                )));
            }
            Ok(())
        })?;
        self.workspace(id)?
            .ok_or_else(|| StoreError::NotFound(format!("workspace {id}")))
    }

    /// Reads a workspace.
    pub fn workspace(&self, id: &str) -> Result<Option<Workspace>, StoreError> {
        self.workspace_seen(id, None)
    }

    /// [`Store::workspace`] as of registry version `seen` (see [`Principal::registry_version`]).
    pub fn workspace_seen(
        &self,
        id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Workspace>, StoreError> {
        self.with(|c| {
            let mut cached = self.cache.current_seen(c, seen)?;
            if let Some(w) = cached.workspaces.get(id) {
                return Ok(w.clone());
            }
            let w = c.query_row_cached(
                "SELECT id, name, max_response_bytes, max_stream_bytes, max_card_bytes FROM workspaces WHERE id = ?1",
                params![id],
                |r| {
                    Ok(Workspace {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        max_response_bytes: r.get::<_, Option<i64>>(2)?.map(|v| v as u64),
                        max_stream_bytes: r.get::<_, Option<i64>>(3)?.map(|v| v as u64),
                        max_card_bytes: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                    })
                },
            )
            .optional()?;
            cached.make_room();
            cached.workspaces.insert(id.to_owned(), w.clone());
            Ok(w)
        })
    }

    /// Lists workspaces.
    pub fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        let ids: Vec<String> = self.with(|c| {
            let mut st = c.prepare_cached("SELECT id FROM workspaces ORDER BY id")?;
            let rows = st.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(w) = self.workspace(&id)? {
                out.push(w);
            }
        }
        Ok(out)
    }

    /// Sets (or clears, with `None`) the per-workspace response limits.
    pub fn set_workspace_limits(
        &self,
        id: &str,
        max_response_bytes: Option<u64>,
        max_stream_bytes: Option<u64>,
        max_card_bytes: Option<u64>,
    ) -> Result<(), StoreError> {
        self.with_write(|c| {
            let n = c.execute_cached(
                "UPDATE workspaces SET max_response_bytes = ?2, max_stream_bytes = ?3, max_card_bytes = ?4 WHERE id = ?1",
                params![
                    id,
                    max_response_bytes.map(|v| v as i64),
                    max_stream_bytes.map(|v| v as i64),
                    max_card_bytes.map(|v| v as i64)
                ],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("workspace {id}")));
            }
            Ok(())
        })
    }

    /// Registers (or replaces) an agent in a workspace.
    pub fn upsert_agent(&self, agent: &Agent) -> Result<(), StoreError> {
        if agent.agent_id.is_empty()
            || !agent
                .agent_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(StoreError::Invalid(format!(
                "agent id {:?} must be non-empty ASCII letters, digits, '-', '_' or '.'",
                agent.agent_id
            )));
        }
        url::Url::parse(&agent.endpoint)
            .map_err(|e| StoreError::Invalid(format!("endpoint {:?}: {e}", agent.endpoint)))?;
        if let Some(k) = agent.pinned_card_key.as_deref() {
            // The static form only (http allowed): each use checks the address again.
            crate::trust::KeySource::parse(k, true).map_err(StoreError::Invalid)?;
        }
        if self.workspace(&agent.workspace_id)?.is_none() {
            return Err(StoreError::NotFound(format!(
                "workspace {}",
                agent.workspace_id
            )));
        }
        let skills = match &agent.skills {
            Some(s) => {
                Some(serde_json::to_string(s).map_err(|e| StoreError::Invalid(e.to_string()))?)
            }
            None => None,
        };
        self.with_write(|c| {
            c.execute_cached(
                "INSERT INTO agents(workspace_id, agent_id, endpoint, credential, skill_allow, pinned_card_key, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(workspace_id, agent_id) DO UPDATE SET endpoint = excluded.endpoint,
                   credential = excluded.credential, skill_allow = excluded.skill_allow,
                   pinned_card_key = excluded.pinned_card_key",
                params![
                    agent.workspace_id,
                    agent.agent_id,
                    agent.endpoint,
                    agent.credential,
                    skills,
                    agent.pinned_card_key,
                    now()
                ],
            )?;
            Ok(())
        })
    }

    /// Looks an agent up inside a workspace. An agent of another workspace is `None`, like a
    /// missing one.
    pub fn agent(&self, workspace_id: &str, agent_id: &str) -> Result<Option<Agent>, StoreError> {
        self.agent_seen(workspace_id, agent_id, None)
    }

    /// [`Store::agent`] as of registry version `seen` (see [`Principal::registry_version`]).
    pub fn agent_seen(
        &self,
        workspace_id: &str,
        agent_id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Agent>, StoreError> {
        self.with(|c| {
            let mut cached = self.cache.current_seen(c, seen)?;
            let key = (workspace_id.to_owned(), agent_id.to_owned());
            if let Some(a) = cached.agents.get(&key) {
                return Ok(a.clone());
            }
            let a = c
                .query_row_cached(
                    "SELECT workspace_id, agent_id, endpoint, credential, skill_allow, pinned_card_key
                     FROM agents WHERE workspace_id = ?1 AND agent_id = ?2",
                    params![workspace_id, agent_id],
                    row_agent,
                )
                .optional()?;
            cached.make_room();
            cached.agents.insert(key, a.clone());
            Ok(a)
        })
    }

    /// Lists the agents of a workspace.
    pub fn list_agents(&self, workspace_id: &str) -> Result<Vec<Agent>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT workspace_id, agent_id, endpoint, credential, skill_allow, pinned_card_key
                 FROM agents WHERE workspace_id = ?1 ORDER BY agent_id",
            )?;
            let rows = st.query_map(params![workspace_id], row_agent)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Removes an agent registration.
    pub fn delete_agent(&self, workspace_id: &str, agent_id: &str) -> Result<(), StoreError> {
        self.with_write(|c| {
            let n = c.execute_cached(
                "DELETE FROM agents WHERE workspace_id = ?1 AND agent_id = ?2",
                params![workspace_id, agent_id],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("agent {agent_id}")));
            }
            Ok(())
        })
    }

    /// Creates an API key. Returns the metadata and the secret key, which is shown only once
    /// (only its SHA-256 is stored).
    pub fn create_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> Result<(KeyInfo, String), StoreError> {
        if self.workspace(workspace_id)?.is_none() {
            return Err(StoreError::NotFound(format!("workspace {workspace_id}")));
        }
        let generated = keys::generate().map_err(StoreError::Invalid)?;
        let scopes_s = keys::scopes_to_string(scopes);
        let created = now();
        self.with_write(|c| {
            c.execute_cached(
                "INSERT INTO api_keys(key_id, workspace_id, hash, scopes, label, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    generated.key_id,
                    workspace_id,
                    generated.hash.to_vec(),
                    scopes_s,
                    label,
                    created,
                    expires_at
                ],
            )?;
            Ok(())
        })?;
        Ok((
            KeyInfo {
                key_id: generated.key_id,
                workspace_id: workspace_id.to_owned(),
                scopes: scopes.to_vec(),
                label: label.map(str::to_owned),
                created_at: created,
                expires_at,
                revoked_at: None,
            },
            generated.secret,
        ))
    }

    /// Lists the keys of a workspace (metadata only).
    pub fn list_keys(&self, workspace_id: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT key_id, workspace_id, scopes, label, created_at, expires_at, revoked_at
                 FROM api_keys WHERE workspace_id = ?1 ORDER BY created_at, key_id",
            )?;
            let rows = st.query_map(params![workspace_id], |r| {
                Ok(KeyInfo {
                    key_id: r.get(0)?,
                    workspace_id: r.get(1)?,
                    scopes: keys::parse_scopes(&r.get::<_, String>(2)?).unwrap_or_default(),
                    label: r.get(3)?,
                    created_at: r.get(4)?,
                    expires_at: r.get(5)?,
                    revoked_at: r.get(6)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Revokes a key (idempotent).
    pub fn revoke_key(&self, key_id: &str) -> Result<(), StoreError> {
        self.with_write(|c| {
            let n = c.execute_cached(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?2) WHERE key_id = ?1",
                params![key_id, now()],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("key {key_id}")));
            }
            Ok(())
        })
    }

    /// Authenticates a presented bearer key: constant-time comparison of SHA-256 digests.
    pub fn authenticate(
        &self,
        presented: &str,
    ) -> Result<Result<Principal, KeyRejection>, StoreError> {
        let Some(key_id) = keys::key_id_of(presented) else {
            return Ok(Err(KeyRejection::Invalid));
        };
        let mut registry_version = None;
        let row: Option<KeyRow> = self.with(|c| {
            let mut cached = self.cache.current(c)?;
            registry_version = cached.version();
            if let Some(k) = cached.keys.get(key_id) {
                return Ok(Some(k.clone()));
            }
            let k: Option<KeyRow> = c
                .query_row_cached(
                    "SELECT workspace_id, hash, scopes, expires_at, revoked_at FROM api_keys WHERE key_id = ?1",
                    params![key_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()?;
            if let Some(k) = &k {
                cached.make_room();
                cached.keys.insert(key_id.to_owned(), k.clone());
            }
            Ok(k)
        })?;
        // Hash even when the id is unknown, so timing does not tell ids apart.
        let digest = keys::hash(presented);
        let Some((workspace_id, stored, scopes, expires_at, revoked_at)) = row else {
            let _ = keys::digest_eq(&digest, &[0u8; 32]);
            return Ok(Err(KeyRejection::Invalid));
        };
        if !keys::digest_eq(&digest, &stored) {
            return Ok(Err(KeyRejection::Invalid));
        }
        if revoked_at.is_some() {
            return Ok(Err(KeyRejection::Revoked));
        }
        if let Some(exp) = expires_at
            && exp <= now()
        {
            return Ok(Err(KeyRejection::Expired));
        }
        Ok(Ok(Principal {
            key_id: key_id.to_owned(),
            workspace_id,
            scopes: keys::parse_scopes(&scopes).unwrap_or_default(),
            registry_version,
        }))
    }

    /// Stores a sealed push callback.
    pub fn insert_push_callback(&self, cb: &PushCallback) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "INSERT INTO push_callbacks(callback_id, workspace_id, agent_id, task_id, config_id,
                   url, token, auth_scheme, auth_credentials, caller_version, peer_version,
                   notify_token, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    cb.callback_id,
                    cb.workspace_id,
                    cb.agent_id,
                    cb.task_id,
                    cb.config_id,
                    cb.url,
                    cb.token,
                    cb.auth_scheme,
                    cb.auth_credentials,
                    cb.caller_version,
                    cb.peer_version,
                    cb.notify_token,
                    now()
                ],
            )?;
            Ok(())
        })
    }

    /// Records the task id and/or config id the peer answered for a callback (None: unchanged).
    pub fn update_push_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "UPDATE push_callbacks SET task_id = COALESCE(?2, task_id),
                   config_id = COALESCE(?3, config_id) WHERE callback_id = ?1",
                params![callback_id, task_id, config_id],
            )?;
            Ok(())
        })
    }

    /// One sealed push callback.
    pub fn push_callback(&self, callback_id: &str) -> Result<Option<PushCallback>, StoreError> {
        self.with(|c| {
            Ok(c.query_row_cached(
                "SELECT callback_id, workspace_id, agent_id, task_id, config_id, url, token,
                   auth_scheme, auth_credentials, caller_version, peer_version, notify_token
                 FROM push_callbacks WHERE callback_id = ?1",
                params![callback_id],
                |r| {
                    Ok(PushCallback {
                        callback_id: r.get(0)?,
                        workspace_id: r.get(1)?,
                        agent_id: r.get(2)?,
                        task_id: r.get(3)?,
                        config_id: r.get(4)?,
                        url: r.get(5)?,
                        token: r.get(6)?,
                        auth_scheme: r.get(7)?,
                        auth_credentials: r.get(8)?,
                        caller_version: r.get(9)?,
                        peer_version: r.get(10)?,
                        notify_token: r.get(11)?,
                    })
                },
            )
            .optional()?)
        })
    }

    /// Removes the sealed callbacks of a push config (`config_id` None: of every config of
    /// the task); returns how many were removed.
    pub fn delete_push_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        self.with(|c| {
            Ok(c.execute_cached(
                "DELETE FROM push_callbacks WHERE workspace_id = ?1 AND agent_id = ?2
                   AND task_id = ?3 AND (?4 IS NULL OR config_id = ?4)",
                params![workspace_id, agent_id, task_id, config_id],
            )?)
        })
    }

    /// Marks a body as delivered for a callback; false when it already was (a duplicate).
    pub fn mark_push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            Ok(c.execute_cached(
                "INSERT OR IGNORE INTO push_delivered(callback_id, body_hash, delivered_at)
                 VALUES (?1, ?2, ?3)",
                params![callback_id, hash, now()],
            )? == 1)
        })
    }

    /// Whether a body was already delivered for a callback.
    pub fn push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            Ok(c.query_row_cached(
                "SELECT 1 FROM push_delivered WHERE callback_id = ?1 AND body_hash = ?2",
                params![callback_id, hash],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
        })
    }

    /// Appends an audit record; returns its sequence number. `rec.intent_seq` names the
    /// intent record this record completes.
    pub fn append_audit(&self, rec: &AuditRecord) -> Result<i64, StoreError> {
        self.insert_audit(rec, None)
    }

    /// Appends the intent record of a hop about to call its peer; returns its sequence
    /// number. Until a record naming it in `intent_seq` is appended, reads show it with
    /// `outcome = "incomplete"`.
    pub fn append_intent(&self, rec: &AuditRecord) -> Result<i64, StoreError> {
        self.insert_audit(rec, Some("intent"))
    }

    fn insert_audit(&self, rec: &AuditRecord, phase: Option<&str>) -> Result<i64, StoreError> {
        self.with(|c| insert_audit_row(c, rec, phase))
    }

    /// Writes the intent record of a hop through the group-commit writer; returns once the
    /// record survives the process (its batch committed, or its journal line written when
    /// [`Store::open_intent_journal`] was called), so before the peer is called.
    pub async fn append_intent_committed(
        &self,
        rec: &AuditRecord,
    ) -> Result<IntentRef, StoreError> {
        self.audit.intent(rec).await
    }

    /// Queues an audit record for the writer's next batch (readers of the log and
    /// [`Store::flush_audit`] wait for it); `intent` names the intent record it completes.
    pub fn append_audit_queued(
        &self,
        rec: &AuditRecord,
        intent: Option<&IntentRef>,
    ) -> Result<(), StoreError> {
        self.audit.enqueue(rec, intent)
    }

    /// Binds a task to its owner through the intent journal when it is open (the binding is
    /// visible at once and committed in the writer's next batch); `None` without a journal.
    pub(crate) fn bind_journaled(
        &self,
        b: &TaskBinding,
    ) -> Result<Option<BindOutcome>, StoreError> {
        self.audit.bind(b, || {
            self.with(|c| {
                Ok(c.query_row_cached(
                    "SELECT workspace_id, agent_id FROM task_owners WHERE endpoint = ?1 AND task_id = ?2",
                    params![b.endpoint, b.task_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?)
            })
        })
    }

    /// The owner (workspace id, agent id) of a task bound through the journal and not yet
    /// committed.
    pub(crate) fn pending_owner(&self, endpoint: &str, task_id: &str) -> Option<(String, String)> {
        self.audit.pending_owner(endpoint, task_id)
    }

    /// Whether the intent journal is open (this is the serving process).
    pub(crate) fn has_intent_journal(&self) -> bool {
        self.audit.journaled()
    }

    /// The idempotent sends of this store held in memory (see `crate::idempotency`).
    pub(crate) fn send_memory(&self) -> Arc<crate::idempotency::memory::SendMemory> {
        self.sends.clone()
    }

    /// Writes a completed send record through the intent journal (committed in the writer's
    /// next batch, then `committed` runs); `Ok(false)` without a journal. `sweep_before`:
    /// the batch first forgets the records created before that time.
    pub(crate) fn journal_send(
        &self,
        row: &SendRow,
        sweep_before: Option<i64>,
        committed: Box<dyn FnOnce() + Send>,
    ) -> Result<bool, StoreError> {
        self.audit.send_record(row, sweep_before, committed)
    }

    /// Whether journaled bindings wait for the writer's next batch.
    pub(crate) fn has_pending_bindings(&self) -> bool {
        self.audit.has_pending_bindings()
    }

    /// Blocks until every queued audit record has committed.
    pub fn flush_audit(&self) {
        self.audit.flush();
    }

    /// Reads audit records, oldest first, optionally filtered by workspace and target, after
    /// sequence number `after`. One record per hop: an intent record is shown only while no
    /// record completes it (then with `outcome = "incomplete"`).
    pub fn audit(
        &self,
        workspace_id: Option<&str>,
        target: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush_audit();
        self.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {} FROM audit
                 WHERE (?1 IS NULL OR workspace_id = ?1) AND (?2 IS NULL OR target = ?2) AND seq > ?3
                   AND NOT (phase IS 'intent'
                     AND EXISTS (SELECT 1 FROM audit c WHERE c.intent_of = audit.seq))
                 ORDER BY seq LIMIT ?4",
                hop_page::RECORD_COLUMNS
            ))?;
            let rows = st.query_map(
                params![workspace_id, target, after, limit],
                hop_page::row_record,
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Exports audit records as JSON lines (one object per line).
    pub fn export_audit_jsonl(
        &self,
        workspace_id: Option<&str>,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, StoreError> {
        let mut after = 0;
        let mut n = 0;
        loop {
            let page = self.audit(workspace_id, None, after, 1000)?;
            if page.is_empty() {
                return Ok(n);
            }
            for rec in &page {
                let line =
                    serde_json::to_string(rec).map_err(|e| StoreError::Invalid(e.to_string()))?;
                writeln!(out, "{line}").map_err(|e| StoreError::Invalid(e.to_string()))?;
                after = rec.seq;
                n += 1;
            }
        }
    }

    /// Raw SQL escape hatch for tests of the append-only rule.
    #[doc(hidden)]
    pub fn execute_raw(&self, sql: &str) -> Result<usize, StoreError> {
        self.flush_audit();
        self.with_write(|c| Ok(c.execute(sql, [])?))
    }
}

/// workspace, hash, scopes, expires_at, revoked_at
type KeyRow = (String, Vec<u8>, String, Option<i64>, Option<i64>);

fn row_agent(r: &rusqlite::Row<'_>) -> rusqlite::Result<Agent> {
    let skills: Option<String> = r.get(4)?;
    Ok(Agent {
        workspace_id: r.get(0)?,
        agent_id: r.get(1)?,
        endpoint: r.get(2)?,
        credential: r.get(3)?,
        skills: skills.and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok()),
        pinned_card_key: r.get(5)?,
    })
}

/// Serialises an audit record for the hop-history endpoint.
pub fn audit_to_value(rec: &AuditRecord) -> Value {
    serde_json::to_value(rec).unwrap_or(Value::Null)
}

/// Inserts one audit row on `c` (the store's connection or a transaction on it).
fn insert_audit_row(
    c: &Connection,
    rec: &AuditRecord,
    phase: Option<&str>,
) -> Result<i64, StoreError> {
    let intent_of = if phase.is_some() {
        None
    } else {
        rec.intent_seq
    };
    insert_audit_row_linked(c, rec, phase, intent_of)
}

/// [`insert_audit_row`] with the intent it completes given apart from the record.
fn insert_audit_row_linked(
    c: &Connection,
    rec: &AuditRecord,
    phase: Option<&str>,
    intent_of: Option<i64>,
) -> Result<i64, StoreError> {
    let ts = if rec.ts.is_empty() {
        time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    } else {
        rec.ts.clone()
    };
    {
        c.execute_cached(
                "INSERT INTO audit(ts, trace_id, workspace_id, key_id, target, operation, client_method,
                   peer_method, client_version, client_binding, peer_version, peer_binding, decision,
                   status, latency_ms, error_code, phase, intent_of, task_id, governance,
                   signature_trust)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                   ?17, ?18, ?19, ?20, ?21)",
                params![
                    ts,
                    rec.trace_id,
                    rec.workspace_id,
                    rec.key_id,
                    rec.target,
                    rec.operation,
                    rec.client_method,
                    rec.peer_method,
                    rec.client_version,
                    rec.client_binding,
                    rec.peer_version,
                    rec.peer_binding,
                    rec.decision,
                    rec.status,
                    rec.latency_ms,
                    rec.error_code,
                    phase,
                    intent_of,
                    rec.task_id,
                    rec.governance.as_ref().map(Value::to_string),
                    rec.signature_trust
                ],
            )?;
        Ok(c.last_insert_rowid())
    }
}
