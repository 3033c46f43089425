//! Task stores: the [`TaskStore`] trait, a bounded in-memory store, a SQLite store (with the
//! push outbox) and a PostgreSQL store that replicas share (feature `postgres`).

mod api;
mod choice;
mod memory;
#[cfg(feature = "sqlite")]
mod outbox;
#[cfg(feature = "postgres")]
mod pg_lease;
#[cfg(feature = "postgres")]
mod pg_outbox;
#[cfg(feature = "postgres")]
mod pg_schema;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

/// How a [`PostgresStore`] connects and waits (pool size, connect and wait timeouts, statement
/// timeout, `application_name`): the PostgreSQL plumbing the gateway uses too.
#[cfg(feature = "postgres")]
pub use a2a_pg::PoolOptions;
pub use api::{
    DueNotice, Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore,
};
pub use choice::StoreChoice;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use pg_schema::DEFAULT_LEASE;
#[cfg(feature = "postgres")]
pub(crate) use pg_schema::{CANCELS_CHANNEL, EVENTS_CHANNEL, PUSH_CONFIGS_CHANNEL, renew_every};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "postgres")]
pub(crate) use postgres::{col, pg};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// A sequence number (an event's, a window's) as a database integer (saturating).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
#[cfg(feature = "sqlite")]
pub(crate) use sqlite::{SqliteDb, sq};
