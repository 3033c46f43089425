//! Embedded SQLite registry: workspaces, registered agents, workspace API keys and the
//! append-only audit log.
//!
//! The store is one SQLite file in WAL mode. Migrations are in code ([`MIGRATIONS`], module
//! `schema`) and run on open; the registry (`registry`), push callbacks (`push_callbacks`) and
//! the audit log (`audit`) are `impl Store` blocks of their own. Every operation takes the connection lock for a few microseconds; the gateway calls it
//! from request handlers directly (SQLite in WAL mode with `synchronous=NORMAL` does not block on
//! fsync for reads). What a hop needs is kept cheap (issue 11, figures in docs/benchmarks.md):
//! statements are compiled once per connection (`sql`), keys, agents and workspaces are read
//! from an exact in-memory cache (`cache`), and the hop's audit rows go through one writer
//! thread that commits them in batches from a connection of its own (`audit_writer`; the intent
//! record is committed, or in the serving process journaled (`journal`), before
//! [`Store::append_intent_committed`] returns, and in the serving process the completion record
//! is journaled before [`Store::append_audit_queued`] returns). Old audit rows are deleted by
//! the retention (`retention`); task records not heard of for `task_retention`, and the WAL
//! past its limit, by `task_retention`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

mod audit;
mod audit_batch;
mod audit_writer;
pub mod backend;
mod cache;
mod checkpoint;
mod hop_page;
mod journal;
pub mod migrate;
mod model;
pub mod pg_schema;
mod push_callbacks;
mod registry;
pub mod retention;
mod rules;
mod schema;
pub mod sends;
pub mod sends_memory;
mod settings;
mod sql;
mod task_overlay;
mod task_owners;
mod task_records;
pub mod task_retention;
pub use audit::audit_to_value;
use audit::insert_audit_row_linked;
pub use audit_batch::IntentRef;
pub(crate) use audit_writer::BindOutcome;
pub use hop_page::HopFilter;
pub use journal::Recovered;
pub(crate) use journal::{SendRow, TaskBinding, insert_send};
pub use model::{
    Agent, AuditRecord, KeyInfo, KeyRejection, KeySource, Principal, PushCallback, Workspace,
    deserialize_key_source,
};
pub use retention::{AuditRetention, RetentionState, Trimmed};
pub use schema::MIGRATIONS;
pub use settings::{PushDelivery, WorkspaceSettings};
pub(crate) use sql::CachedExt;
pub use task_owners::{Bound, Owner};
pub use task_records::{TaskQuery, TaskRecord, TaskStatusRow};

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
    /// The database was migrated by a newer release than this one.
    #[error(
        "the database's schema is at version {found}, newer than this release knows ({known}): \
         run the newer release, or restore the backup taken before the upgrade \
         (docs/operations.md)"
    )]
    NewerSchema {
        /// The version the file is at.
        found: i64,
        /// The newest version this release knows.
        known: i64,
    },
    /// The connection lock was poisoned by a panic elsewhere.
    #[error("database lock poisoned")]
    Poisoned,
    /// PostgreSQL refused a statement, or could not be reached ([`StoreError::is_unavailable`]).
    #[error("database error: {0}")]
    Postgres(#[from] a2a_pg::PgError),
    /// PostgreSQL could not be reached, as another caller waiting on the same attempt was told
    /// (the text of that error; [`StoreError::is_unavailable`]).
    #[error("database unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// Whether the database is unreachable or gone away (the caller answers 503 and retries
    /// later) rather than refusing a statement or a value.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Postgres(e) => e.is_unavailable(),
            StoreError::Unavailable(_) => true,
            _ => false,
        }
    }
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
    /// Idempotent sends claimed or not yet committed (see `crate::hop::idempotency`).
    sends: Arc<sends_memory::SendMemory>,
    /// The audit retention's own connection to the database file, opened on first use
    /// (see [`retention`]).
    retention: Arc<Mutex<retention::Retention>>,
    /// The gateway's metrics, once attached ([`Store::set_metrics`]).
    metrics: Arc<std::sync::OnceLock<crate::metrics::Metrics>>,
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl Store {
    /// Opens (creating if needed) the SQLite file at `path` and applies migrations. A
    /// PostgreSQL URL is refused ([`StoreError::Invalid`]): `serve` and `admin` take it through
    /// [`crate::app::Gateway::on_postgres`] and the backends (docs/replicas.md), never here.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if crate::config::is_postgres_url(&path.to_string_lossy()) {
            return Err(StoreError::Invalid(
                "this command needs a SQLite file, not a PostgreSQL URL (`serve` and `admin` \
                 take a URL; docs/replicas.md): give the path of a SQLite file"
                    .into(),
            ));
        }
        let conn = Connection::open(path)?;
        let mut store = Self::init(conn, Some(path))?;
        store.path = Some(Arc::new(path.to_owned()));
        Ok(store)
    }

    /// Opens a private in-memory store (tests, examples).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::init(Connection::open_in_memory()?, None)
    }

    /// The settings of every connection of the store: commits without fsync (WAL), foreign
    /// keys, `busy` to wait for another connection's write lock, the statement cache.
    fn configure(c: &Connection, busy: std::time::Duration) -> Result<(), StoreError> {
        c.pragma_update(None, "synchronous", "NORMAL")?;
        c.pragma_update(None, "foreign_keys", "ON")?;
        // A WAL started over is cut back to this size (`task_retention`, "The WAL").
        c.pragma_update(None, "journal_size_limit", task_retention::WAL_LIMIT as i64)?;
        c.busy_timeout(busy)?;
        c.set_prepared_statement_cache_capacity(sql::STATEMENT_CACHE);
        Ok(())
    }

    fn init(conn: Connection, path: Option<&Path>) -> Result<Store, StoreError> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        Self::configure(&conn, std::time::Duration::from_secs(5))?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            // A newer release migrated this file: writing to a schema this one does not know
            // could lose or corrupt what the newer one relies on (docs/operations.md).
            return Err(StoreError::NewerSchema {
                found: version,
                known,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate() {
            let v = i as i64 + 1;
            if v > version {
                let tx = conn.unchecked_transaction()?;
                tx.execute_batch(sql)?;
                tx.pragma_update(None, "user_version", v)?;
                tx.commit()?;
            }
        }
        // WAL checkpoints (page copies and fsyncs, milliseconds) run on the writer thread's own
        // connection, outside the lock the hops share (`checkpoint::Checkpointer`).
        let checkpointer = path.and_then(checkpoint::Checkpointer::open);
        if checkpointer.is_some() {
            conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        }
        let conn = Arc::new(Mutex::new(conn));
        // The audit writer commits from a connection of its own where there is a file to open
        // a second one on: its batches (up to a few milliseconds under load) then no longer
        // hold the lock the hops take for their registry, ownership and idempotency reads.
        // SQLite's WAL lets those reads run beside the writer's transaction; writes through
        // the shared connection (admin changes, push configs) wait for it by SQLite's lock
        // and `busy_timeout`. In memory there is one database per connection: shared.
        let writer_conn = match path {
            Some(p) => Arc::new(Mutex::new(Self::writer_connection(p)?)),
            None => conn.clone(),
        };
        Ok(Store {
            audit: Arc::new(audit_writer::AuditWriter::start(writer_conn, checkpointer)),
            conn,
            cache: Arc::default(),
            path: None,
            sends: Arc::default(),
            retention: Arc::default(),
            metrics: Arc::default(),
        })
    }

    /// The audit writer's connection to the database file at `path` (migrated already).
    fn writer_connection(path: &Path) -> Result<Connection, StoreError> {
        let w = Connection::open(path)?;
        // A longer wait than the shared connection's 5 s: nobody on the request path waits for
        // this thread (journaled intents), and a batch given up on is logged, not retried.
        Self::configure(&w, std::time::Duration::from_secs(30))?;
        // Checkpoints run from the checkpointer's connection (`checkpoint::Checkpointer`).
        w.pragma_update(None, "wal_autocheckpoint", 0)?;
        // Statement journals in memory: inside a batch's transaction SQLite keeps one per
        // statement that may have to be undone alone, and past 64 KiB it spilled to a temporary
        // file, written, read back and deleted in every batch (most of this thread's writes
        // at 16 connections: docs/benchmarks.md, "a2a-gateway beside the proxy floor"). This
        // connection only inserts, updates and deletes by key: no sort or temporary table
        // that could grow with the data.
        w.pragma_update(None, "temp_store", "MEMORY")?;
        Ok(w)
    }

    /// Makes this process the one serving the database: intent and completion records are
    /// journaled to `<database>.intents` instead of committed one by one (see [`journal`]),
    /// after what a previous process journaled but never committed is recovered (returned:
    /// how many intents and hop outcomes). Refused if another process holds the journal, and
    /// for in-memory stores.
    pub fn open_intent_journal(&self) -> Result<Recovered, StoreError> {
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
        let started = std::time::Instant::now();
        let out = match self.conn.lock() {
            Ok(c) => f(&c),
            Err(_) => Err(StoreError::Poisoned),
        };
        self.timed(started, &out);
        out
    }

    /// Attaches the gateway's metrics to this store and its clones (store calls' latency and
    /// failures; the first attached stays).
    pub fn set_metrics(&self, m: &crate::metrics::Metrics) {
        let _ = self.metrics.set(m.clone());
        self.audit.set_metrics(m.clone());
    }

    /// Records one call under the connection lock: its latency (the wait for the lock
    /// included) and whether the database failed (a missing or refused row is no failure).
    fn timed<T>(&self, started: std::time::Instant, out: &Result<T, StoreError>) {
        if let Some(m) = self.metrics.get() {
            let failed = matches!(
                out,
                Err(StoreError::Sql(_)
                    | StoreError::Poisoned
                    | StoreError::Postgres(_)
                    | StoreError::Unavailable(_))
            );
            m.store("query", started.elapsed(), !failed);
        }
    }

    /// Like [`Store::with`] for changes to workspaces, agents or keys: the registry cache is
    /// cleared before the lock is released.
    fn with_write<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let started = std::time::Instant::now();
        let out = match self.conn.lock() {
            Ok(c) => {
                let out = f(&c);
                self.cache.clear();
                out
            }
            Err(_) => Err(StoreError::Poisoned),
        };
        self.timed(started, &out);
        out
    }

    /// Schema version after migrations.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.with(|c| Ok(c.pragma_query_value(None, "user_version", |r| r.get(0))?))
    }

    /// Raw SQL escape hatch for tests of the append-only rule.
    #[doc(hidden)]
    pub fn execute_raw(&self, sql: &str) -> Result<usize, StoreError> {
        self.flush_audit();
        self.with_write(|c| Ok(c.execute(sql, [])?))
    }
}
