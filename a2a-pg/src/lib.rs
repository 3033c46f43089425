//! PostgreSQL plumbing shared by the a2a-rs gateway and agent when they run as several replicas
//! on one database (docs/replicas.md): PostgreSQL is their only coordination, through rows,
//! `LISTEN/NOTIFY` and advisory locks; there is no consensus or gossip of our own.
//!
//! - [`pool`]: a connection pool with a prepared-statement cache per connection, which fails
//!   fast (bounded connect and wait times) instead of hanging while the database is away;
//! - [`migrate()`]: versioned migrations per component, applied once across replicas under an
//!   advisory lock, refusing a database migrated by a newer release;
//! - [`Listener`]: one connection that `LISTEN`s, reconnects by itself, and says when it was
//!   away (so its user re-reads what it caches, or polls while it is down);
//! - [`Alive`]: a replica's liveness lock, held by a session of its own while the replica runs,
//!   and [`is_alive`], which tells another replica whether it is still held (the rows of a
//!   gone replica can then be taken over);
//! - [`lease`]: a replica's lease in a row, renewed every third of its time ([`Lease`]), and
//!   [`lease::gone`], which tells another replica the lease ended (a stalled or unreachable
//!   replica too, within the lease time);
//! - [`query`] and [`execute`]: one statement on a pooled connection, prepared once per
//!   connection;
//! - [`testing::TempCluster`]: a throwaway cluster (`initdb` into a temporary directory,
//!   `pg_ctl` on a loopback port) for tests and benchmarks; never a system service.
//!
//! Why these crates: `tokio-postgres` is the rust-postgres project's async client (pipelined
//! queries, `LISTEN/NOTIFY` through its connection's message stream, no macros and no
//! database at compile time); `deadpool-postgres` is a small pool for it with a statement
//! cache. Both are widely used and kept.
//!
//! ```no_run
//! # async fn demo() -> Result<(), a2a_pg::PgError> {
//! use a2a_pg::{PoolOptions, migrate, pool};
//!
//! let cluster = a2a_pg::testing::TempCluster::start()?; // or your own postgres://… URL
//! let pool = pool(&cluster.url(), &PoolOptions::default())?;
//! let mut client = pool.get().await?;
//! let migrations = ["CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)"];
//! let m = migrate(&mut client, "example", &migrations).await?;
//! assert_eq!(m.version, 1);
//! client.execute("INSERT INTO notes(body) VALUES ($1)", &[&"hello"]).await?;
//! # Ok(()) }
//! ```

mod alive;
pub mod lease;
mod migrate;
mod notify;
mod pool;
pub mod testing;

pub use alive::{Alive, is_alive};
pub use deadpool_postgres;
pub use lease::Lease;
pub use migrate::{Migrated, advisory_key, migrate};
pub use notify::{Event, Listener, notify};
pub use pool::{PoolOptions, execute, pg_config, pool, query};
pub use tokio_postgres;

/// A pool of connections (deadpool's, with its statement cache).
pub type Pool = deadpool_postgres::Pool;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The database answered with an error, or the connection failed.
    #[error("postgres: {0}")]
    Db(#[from] tokio_postgres::Error),
    /// No connection could be had from the pool in time (the database is down or saturated).
    #[error("postgres pool: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The pool could not be built (a bad URL or setting).
    #[error("postgres pool setup: {0}")]
    Setup(String),
    /// The database was migrated by a newer release than this one.
    #[error(
        "the database's {component} schema is at version {found}, newer than this release knows \
         ({known}): run the newer release, or restore the backup taken before the upgrade"
    )]
    NewerSchema {
        /// The component (`gateway`, `agent`).
        component: String,
        /// The version the database is at.
        found: i64,
        /// The newest version this release knows.
        known: i64,
    },
    /// Starting or stopping a test cluster failed.
    #[error("postgres test cluster: {0}")]
    Cluster(#[from] std::io::Error),
}

impl PgError {
    /// Whether the error means the database is unreachable or gone away (the caller answers
    /// 503 and retries later) rather than a refused statement.
    pub fn is_unavailable(&self) -> bool {
        match self {
            PgError::Pool(_) => true,
            PgError::Db(e) => e.is_closed() || e.as_db_error().is_none(),
            _ => false,
        }
    }
}
