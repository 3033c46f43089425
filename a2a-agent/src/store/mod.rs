//! Task stores: the [`TaskStore`] trait, a bounded in-memory store and a SQLite store.

mod api;
mod memory;
mod sqlite;

pub use api::{PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore};
pub use memory::MemoryStore;
pub use sqlite::SqliteStore;
pub(crate) use sqlite::{SqliteDb, sq};
