//! Task stores: the [`TaskStore`] trait, a bounded in-memory store and a SQLite store (with the
//! push outbox).

mod api;
mod memory;
mod outbox;
mod sqlite;

pub use api::{
    DueNotice, Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore,
};
pub use memory::MemoryStore;
pub use sqlite::SqliteStore;
pub(crate) use sqlite::{SqliteDb, sq};
