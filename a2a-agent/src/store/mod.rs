//! Task stores: the [`TaskStore`] trait, a bounded in-memory store and a SQLite store (with the
//! push outbox).

mod api;
mod memory;
#[cfg(feature = "sqlite")]
mod outbox;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use api::{
    DueNotice, Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore,
};
pub use memory::MemoryStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
#[cfg(feature = "sqlite")]
pub(crate) use sqlite::{SqliteDb, sq};
