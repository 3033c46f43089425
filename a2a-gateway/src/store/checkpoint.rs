//! The WAL checkpoint the audit writer runs after its commits, from a connection of its own.

use rusqlite::Connection;

/// Rows committed between two checkpoints of the WAL (about SQLite's default of 1,000 pages
/// at the few pages an audited hop writes).
const CHECKPOINT_ROWS: usize = 512;

/// Checkpoints the WAL of a database file from a connection of its own.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages, on the
/// committing connection. When the writer still shared the connection whose lock every hop
/// takes for its registry, ownership and idempotency reads, the copy and its two fsyncs (up to
/// 4 ms here, a few times a second under load) held the hops that needed the lock (p99 at one
/// connection about 7 ms against a p50 of 0.35 ms). The store turns the automatic checkpoint
/// off on its connections and the writer runs a passive checkpoint on this one after its
/// commits: readers go on while pages are copied.
///
/// It runs on the writer's thread, between batches, on purpose: SQLite starts the WAL over
/// only when a checkpoint has copied all of it, and a checkpoint on a thread of its own always
/// found frames the writer had appended meanwhile. Tried in a soak (issue 40): the WAL grew
/// to 700 MB within a minute and the truncation at `journal_size_limit` then held the writer
/// for up to a second.
pub(crate) struct Checkpointer {
    conn: Connection,
    rows: usize,
}

impl Checkpointer {
    /// A connection to the database file at `path`; `None` if it cannot be opened (SQLite's
    /// automatic checkpoint then stays on).
    pub(crate) fn open(path: &std::path::Path) -> Option<Checkpointer> {
        match Connection::open(path) {
            Ok(conn) => Some(Checkpointer { conn, rows: 0 }),
            Err(e) => {
                tracing::warn!("no checkpoint connection ({e}); SQLite checkpoints on commit");
                None
            }
        }
    }

    /// `rows` more rows were committed: checkpoint once enough have gathered.
    pub(crate) fn committed(&mut self, rows: usize) {
        self.rows += rows;
        if self.rows < CHECKPOINT_ROWS {
            return;
        }
        self.rows = 0;
        // PASSIVE: copies what no reader still needs, never waits for readers or writers; a
        // checkpoint left short is finished by a later one.
        let done = self
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        if let Err(e) = done {
            tracing::warn!("WAL checkpoint failed: {e}");
        }
    }
}
