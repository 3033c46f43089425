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
///
/// Under steady load a passive checkpoint rarely lets the WAL start over: some hop's read is
/// nearly always on a snapshot that still needs the WAL, so the file grows while every frame
/// is already copied (a 30-minute soak at ~580 hops/s: 150-400 MB between two passes of the
/// retention's truncation, 10 s apart). So once the WAL file has passed
/// [`WAL_LIMIT`](super::task_retention::WAL_LIMIT), the writer itself runs a `TRUNCATE`
/// checkpoint after its passive one: it waits at most
/// [`WAL_WAIT`](super::task_retention::WAL_WAIT) for readers to leave the WAL (new readers
/// read the file, every frame being copied), then cuts the file to nothing. Only the writer
/// waits (hops journal their writes); a busy truncation is tried after the next batch.
pub(crate) struct Checkpointer {
    conn: Connection,
    wal: std::path::PathBuf,
    /// The WAL size past which the writer truncates ([`WAL_LIMIT`](super::task_retention::WAL_LIMIT)).
    limit: u64,
    rows: usize,
}

impl Checkpointer {
    /// A connection to the database file at `path`; `None` if it cannot be opened (SQLite's
    /// automatic checkpoint then stays on).
    pub(crate) fn open(path: &std::path::Path) -> Option<Checkpointer> {
        match Connection::open(path) {
            Ok(conn) => Some(Checkpointer {
                conn,
                wal: super::task_retention::wal_path(path),
                limit: super::task_retention::WAL_LIMIT,
                rows: 0,
            }),
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
        let size = std::fs::metadata(&self.wal).map(|m| m.len()).unwrap_or(0);
        if size > self.limit {
            self.truncate(size);
        }
    }

    /// A `TRUNCATE` checkpoint waiting at most `WAL_WAIT` for readers; busy is not an error.
    fn truncate(&mut self, size: u64) {
        let started = std::time::Instant::now();
        let _ = self.conn.busy_timeout(super::task_retention::WAL_WAIT);
        let busy: Result<(i64, i64, i64), _> =
            self.conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                });
        let _ = self.conn.busy_timeout(std::time::Duration::from_secs(5));
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        match busy {
            Ok((0, _, _)) => tracing::debug!(wal_bytes = size, ms, "WAL truncated by the writer"),
            Ok((_, frames, copied)) => tracing::debug!(
                wal_bytes = size,
                ms,
                frames,
                copied,
                "WAL truncation busy (readers); after the next batch"
            ),
            Err(rusqlite::Error::SqliteFailure(e, _)) => {
                tracing::debug!(
                    wal_bytes = size,
                    ms,
                    "WAL truncation busy ({e}); after the next batch"
                )
            }
            Err(e) => tracing::warn!("WAL truncation failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Commits 16 MB in small transactions while two readers overlap so that one of them is
    /// always on a snapshot; returns the largest WAL file seen.
    fn largest_wal(limit: u64) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let w = Connection::open(&path).unwrap();
        w.pragma_update(None, "journal_mode", "WAL").unwrap();
        w.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        // No fsyncs: what is measured is where frames go, not when they are durable.
        w.pragma_update(None, "synchronous", "OFF").unwrap();
        w.execute_batch("CREATE TABLE t(b BLOB)").unwrap();
        let mut cp = Checkpointer::open(&path).unwrap();
        cp.conn.pragma_update(None, "synchronous", "OFF").unwrap();
        cp.limit = limit;
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|i| {
                let (path, stop) = (path.clone(), stop.clone());
                std::thread::spawn(move || {
                    let c = Connection::open(&path).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(500 * i));
                    while !stop.load(Ordering::Relaxed) {
                        c.execute_batch("BEGIN").unwrap();
                        let _: i64 = c
                            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                            .unwrap();
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        c.execute_batch("COMMIT").unwrap();
                    }
                })
            })
            .collect();
        let blob = vec![7u8; 4000];
        let mut largest = 0;
        for _ in 0..500 {
            w.execute_batch("BEGIN IMMEDIATE").unwrap();
            for _ in 0..8 {
                w.execute("INSERT INTO t(b) VALUES (?1)", [&blob]).unwrap();
            }
            w.execute_batch("COMMIT").unwrap();
            cp.committed(CHECKPOINT_ROWS);
            largest = largest.max(std::fs::metadata(&cp.wal).map(|m| m.len()).unwrap_or(0));
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
        largest
    }

    #[test]
    fn the_writer_keeps_the_wal_near_its_limit_while_readers_never_leave() {
        // Without the truncation the WAL never starts over: some reader is always on it.
        let unbounded = largest_wal(u64::MAX);
        assert!(unbounded > 12 << 20, "WAL grew to only {unbounded} bytes");
        let bounded = largest_wal(1 << 20);
        assert!(
            bounded < 3 << 20,
            "WAL grew to {bounded} bytes past a 1 MiB limit"
        );
    }
}
