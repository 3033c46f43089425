//! The WAL checkpoint of the database file, on a thread and connection of its own, asked for by
//! the audit writer after its commits.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use rusqlite::Connection;

/// Rows committed between two checkpoints of the WAL (about SQLite's default of 1,000 pages
/// at the few pages an audited hop writes).
const CHECKPOINT_ROWS: usize = 512;

/// Checkpoints the WAL of a database file from a thread and connection of its own.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages, on the
/// committing connection. When the writer still shared the connection whose lock every hop
/// takes for its registry, ownership and idempotency reads, the copy and its two fsyncs (up to
/// 4 ms here, a few times a second under load) held the hops that needed the lock (p99 at one
/// connection about 7 ms against a p50 of 0.35 ms). Run on the writer's thread, they held the
/// writer's next batch, and with it every listing waiting for its records (issue 40). The
/// store turns the automatic checkpoint off on its connections; the writer counts its rows
/// and wakes this thread, which runs a passive checkpoint while readers and the next batches
/// go on.
pub(crate) struct Checkpointer {
    wake: SyncSender<()>,
    rows: usize,
}

impl Checkpointer {
    /// A thread with a connection to the database file at `path`; `None` if either cannot be
    /// had (SQLite's automatic checkpoint then stays on). The thread ends when the handle is
    /// dropped.
    pub(crate) fn open(path: &std::path::Path) -> Option<Checkpointer> {
        let conn = match Connection::open(path) {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!("no checkpoint connection ({e}); SQLite checkpoints on commit");
                return None;
            }
        };
        let (wake, rx) = sync_channel(1);
        match std::thread::Builder::new()
            .name("a2a-wal-checkpoint".into())
            .spawn(move || run(&conn, &rx))
        {
            Ok(_) => Some(Checkpointer { wake, rows: 0 }),
            Err(e) => {
                tracing::warn!("no checkpoint thread ({e}); SQLite checkpoints on commit");
                None
            }
        }
    }

    /// `rows` more rows were committed: wake the thread once enough have gathered (a wake-up
    /// already pending stands for this one).
    pub(crate) fn committed(&mut self, rows: usize) {
        self.rows += rows;
        if self.rows < CHECKPOINT_ROWS {
            return;
        }
        self.rows = 0;
        match self.wake.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) => {}
            Err(TrySendError::Disconnected(())) => {
                tracing::warn!("WAL checkpoint thread gone");
            }
        }
    }
}

fn run(conn: &Connection, wake: &Receiver<()>) {
    while wake.recv().is_ok() {
        // PASSIVE: copies what no reader still needs, never waits for readers or writers; a
        // checkpoint left short is finished by a later one.
        let done = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        if let Err(e) = done {
            tracing::warn!("WAL checkpoint failed: {e}");
        }
    }
}
