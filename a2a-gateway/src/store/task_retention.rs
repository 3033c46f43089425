//! Task retention and the WAL's bound: the two other things a long-running gateway's database
//! file would otherwise grow by (the audit has its own retention, [`super::retention`]).
//!
//! **Task records.** Every task a caller creates through the gateway leaves one `task_owners`
//! row (its ownership binding and what the gateway last saw of its status, about 0.5-1 KB with
//! its indexes) and, when the caller set push configs, their sealed callbacks and delivered-body
//! hashes. `task_retention` (`30d` by default) deletes the records of tasks the gateway has
//! heard nothing of for that long: neither bound, nor answered, nor streamed, nor notified
//! (`max(created_at, checked_at)`, indexed by migration 19's expression index). A forgotten
//! task answers like a task the gateway never saw: TaskNotFound to its owner too, never
//! another workspace's (the ownership check fails closed), and it leaves the owner's
//! listings. Deletion runs in the background pass beside the audit's, `batch` rows per short
//! transaction.
//!
//! **The WAL.** Checkpoints copy the WAL into the database file but only a checkpoint with no
//! reader left on an old snapshot lets the next writer start the WAL over; under steady load
//! some reader nearly always is, so the `-wal` file kept growing. Every connection now has
//! `journal_size_limit` ([`WAL_LIMIT`]: a WAL started over is cut back to it), and the
//! background pass runs a `TRUNCATE` checkpoint when the file has passed the limit: it waits
//! at most [`WAL_WAIT`] for readers (writers wait as long behind it; hops journal their
//! writes and do not), and a busy one is tried again on the next pass.
//!
//! **Retention and the WAL.** Deleting a task record touches eight B-trees (the table and its
//! indexes, rows scattered across their pages): about 32 KB of WAL each. In a 30-minute soak
//! the passes' batches (then 500 records, ~16 MB of WAL per transaction, 20 ms apart) and the
//! audit writer took the write lock in turn and the writer's truncation rarely found the WAL
//! free: 300 MB to 1.48 GB. So both passes now hold their own pace to the WAL: after each batch
//! the retention's connection (which has just committed, so holds no lock) truncates a WAL past
//! its limit itself, trying a few times, and the next batch waits until it has
//! ([`between_batches`]); task records go [`TASK_BATCH`] at a time.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, params};

use super::{Store, StoreError};

/// Migration 19: the index task retention reads, oldest sign of life first (Unix ms).
pub const MIGRATION: &str = r#"
    CREATE INDEX task_owners_seen ON task_owners(max(created_at * 1000, checked_at));
"#;

/// The WAL file's size past which the background pass truncates it, and what a WAL started
/// over is cut back to (`journal_size_limit`).
pub const WAL_LIMIT: u64 = 64 << 20;

/// Longest a `TRUNCATE` checkpoint waits for readers to leave the WAL.
pub const WAL_WAIT: Duration = Duration::from_millis(200);

/// Task records deleted per transaction (about 3 MB of WAL).
pub const TASK_BATCH: usize = 100;

/// Truncation attempts between two retention batches while the WAL is past its limit.
const SETTLE_TRIES: u32 = 10;

/// Pause between two batches of a retention pass (and between two truncation attempts): the
/// audit writer's batches and other writes take the write lock in between.
const PAUSE: Duration = Duration::from_millis(20);

/// One batch on `c`, in one transaction: the records of up to `batch` tasks last heard of
/// before `cutoff_ms`, with their push callbacks (their delivered-body hashes go with them,
/// `ON DELETE CASCADE`).
fn trim(c: &Connection, cutoff_ms: i64, batch: usize) -> Result<usize, StoreError> {
    super::sql::immediate(c, |c| trim_in(c, cutoff_ms, batch))
}

fn trim_in(c: &Connection, cutoff_ms: i64, batch: usize) -> Result<usize, StoreError> {
    let old: Vec<(i64, String, String, String)> = {
        let mut st = c.prepare_cached(
            "SELECT seq, task_id, workspace_id, agent_id FROM task_owners
             WHERE max(created_at * 1000, checked_at) < ?1
             ORDER BY max(created_at * 1000, checked_at) LIMIT ?2",
        )?;
        let limit = i64::try_from(batch.max(1)).unwrap_or(i64::MAX);
        let rows = st.query_map(params![cutoff_ms, limit], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let mut del_task = c.prepare_cached("DELETE FROM task_owners WHERE seq = ?1")?;
    let mut del_push = c.prepare_cached(
        "DELETE FROM push_callbacks WHERE workspace_id = ?1 AND agent_id = ?2 AND task_id = ?3",
    )?;
    for (seq, task, ws, agent) in &old {
        del_push.execute(params![ws, agent, task])?;
        del_task.execute(params![seq])?;
    }
    Ok(old.len())
}

/// The WAL file of the database file `db` (`<db>-wal`).
pub fn wal_path(db: &Path) -> PathBuf {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Bytes the database file `db` takes on disk with its WAL (what the soak and the benchmarks
/// report as the database's size).
pub fn file_bytes(db: &Path) -> u64 {
    file_len(db) + file_len(&wal_path(db))
}

/// Unix milliseconds `age` ago.
fn cutoff(age: Duration) -> i64 {
    let now = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let age = i128::try_from(age.as_millis()).unwrap_or(i128::MAX);
    i64::try_from(now.saturating_sub(age)).unwrap_or(i64::MIN)
}

impl Store {
    /// Deletes the records of at most `batch` tasks the gateway has heard nothing of for
    /// `max_age` (ownership binding, status record, push callbacks), in one short transaction
    /// from the retention's own connection; returns how many. Call it again while it deletes.
    pub fn trim_task_records(&self, max_age: Duration, batch: usize) -> Result<usize, StoreError> {
        let cut = cutoff(max_age);
        self.with_retention_conn(|c| trim(c, cut, batch))
    }

    /// Truncates the WAL when its file has passed [`WAL_LIMIT`]; returns whether it did
    /// (`false` too when readers kept it busy past [`WAL_WAIT`]: the next pass tries again).
    pub fn bound_wal(&self) -> Result<bool, StoreError> {
        self.bound_wal_at(WAL_LIMIT)
    }

    /// [`Store::bound_wal`] with the limit `limit`.
    pub(crate) fn bound_wal_at(&self, limit: u64) -> Result<bool, StoreError> {
        let size = self.wal_bytes();
        if size <= limit {
            return Ok(false);
        }
        self.truncate_wal(size)
    }

    /// A `TRUNCATE` checkpoint of a WAL of `size` bytes from the retention's connection,
    /// waiting at most [`WAL_WAIT`] for readers; whether it cut the WAL.
    fn truncate_wal(&self, size: u64) -> Result<bool, StoreError> {
        self.with_retention_conn(|c| {
            c.busy_timeout(WAL_WAIT)?;
            let busy: Result<i64, _> =
                c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0));
            c.busy_timeout(Duration::from_secs(5))?;
            match busy {
                Ok(0) => {
                    tracing::info!(wal_bytes = size, "WAL truncated");
                    Ok(true)
                }
                Ok(_) | Err(rusqlite::Error::SqliteFailure(_, _)) => {
                    tracing::debug!(wal_bytes = size, "WAL truncation busy; next pass");
                    Ok(false)
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    /// Bytes of the WAL file (0 in memory).
    pub fn wal_bytes(&self) -> u64 {
        self.path.as_deref().map_or(0, |p| file_len(&wal_path(p)))
    }

    /// How many task records (ownership bindings) the store holds.
    pub fn task_record_count(&self) -> Result<u64, StoreError> {
        self.with(|c| {
            let n: i64 = c.query_row("SELECT count(*) FROM task_owners", [], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }
}

/// What a retention pass does between two batches: while the WAL is past `limit`, truncate
/// it from the retention's connection (up to [`SETTLE_TRIES`] times, [`PAUSE`] apart), so the
/// passes never write faster than the WAL can start over; then pause.
pub(crate) fn between_batches(store: &Store, limit: u64) {
    for _ in 0..SETTLE_TRIES {
        let size = store.wal_bytes();
        if size <= limit {
            break;
        }
        match store.truncate_wal(size) {
            Ok(true) => break,
            // Readers kept it busy: let them and the writers go on, then try again.
            Ok(false) => std::thread::sleep(PAUSE),
            Err(e) => {
                tracing::warn!("WAL bound: {e}");
                break;
            }
        }
    }
    std::thread::sleep(PAUSE);
}

/// One task retention pass: batches of `batch` until nothing is left to delete or `stop()`
/// says so; returns the records deleted (errors are logged, the next pass tries again).
pub fn run_task_pass(
    store: &Store,
    max_age: Duration,
    batch: usize,
    stop: &dyn Fn() -> bool,
) -> usize {
    run_task_pass_bounded(store, max_age, batch, WAL_LIMIT, stop)
}

/// [`run_task_pass`] holding the WAL to `wal_limit` between batches.
pub(crate) fn run_task_pass_bounded(
    store: &Store,
    max_age: Duration,
    batch: usize,
    wal_limit: u64,
    stop: &dyn Fn() -> bool,
) -> usize {
    let mut rows = 0;
    while !stop() {
        match store.trim_task_records(max_age, batch) {
            Ok(0) => break,
            Ok(n) => {
                rows += n;
                between_batches(store, wal_limit);
            }
            Err(e) => {
                tracing::warn!("task retention: {e}");
                break;
            }
        }
    }
    if rows > 0 {
        tracing::info!(rows, "task retention deleted task records");
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TaskBinding;
    use crate::store::journal::insert_binding;

    fn bind(s: &Store, task: &str, created_s: i64, checked_ms: i64) {
        s.with(|c| {
            insert_binding(
                c,
                &TaskBinding {
                    endpoint: "http://127.0.0.1:9/a2a".into(),
                    task_id: task.into(),
                    workspace_id: "w".into(),
                    agent_id: "a".into(),
                },
            )?;
            c.execute(
                "UPDATE task_owners SET created_at = ?2, checked_at = ?3 WHERE task_id = ?1",
                params![task, created_s, checked_ms],
            )?;
            Ok(())
        })
        .unwrap();
    }

    fn tasks(s: &Store) -> Vec<String> {
        s.with(|c| {
            let mut st = c.prepare("SELECT task_id FROM task_owners ORDER BY task_id")?;
            let r = st.query_map([], |r| r.get(0))?;
            Ok(r.collect::<Result<Vec<String>, _>>()?)
        })
        .unwrap()
    }

    #[test]
    fn forgets_tasks_not_heard_of_within_the_age_in_batches() {
        let s = Store::open_in_memory().unwrap();
        s.create_workspace("w", "W").unwrap();
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let day = 24 * 3600;
        // created 40 days ago, nothing heard since: old
        for i in 0..5 {
            bind(&s, &format!("old{i}"), now - 40 * day, 0);
        }
        // created 40 days ago but a status recorded an hour ago: kept
        bind(&s, "busy", now - 40 * day, (now - 3600) * 1000);
        // created an hour ago: kept
        bind(&s, "new", now - 3600, 0);
        s.with(|c| {
            c.execute(
                "INSERT INTO push_callbacks(callback_id, workspace_id, agent_id, task_id, url,
                   caller_version, peer_version, notify_token, created_at)
                 VALUES ('cb-old', 'w', 'a', 'old0', 'http://127.0.0.1:1/h', '1.0', '1.0', 't', 0),
                        ('cb-busy', 'w', 'a', 'busy', 'http://127.0.0.1:1/h', '1.0', '1.0', 't', 0)",
                [],
            )?;
            Ok(())
        })
        .unwrap();
        let age = Duration::from_secs(30 * day as u64);
        assert_eq!(s.trim_task_records(age, 2).unwrap(), 2);
        assert_eq!(s.trim_task_records(age, 2).unwrap(), 2);
        assert_eq!(s.trim_task_records(age, 2).unwrap(), 1);
        assert_eq!(s.trim_task_records(age, 2).unwrap(), 0);
        assert_eq!(tasks(&s), vec!["busy".to_string(), "new".to_string()]);
        let callbacks: Vec<String> = s
            .with(|c| {
                let mut st = c.prepare("SELECT callback_id FROM push_callbacks")?;
                let r = st.query_map([], |r| r.get(0))?;
                Ok(r.collect::<Result<Vec<String>, _>>()?)
            })
            .unwrap();
        assert_eq!(callbacks, vec!["cb-busy".to_string()]);
        assert_eq!(s.task_record_count().unwrap(), 2);
    }

    #[test]
    fn the_retention_query_reads_its_index() {
        let s = Store::open_in_memory().unwrap();
        let plan: String = s
            .with(|c| {
                let mut st = c.prepare(
                    "EXPLAIN QUERY PLAN SELECT seq FROM task_owners
                     WHERE max(created_at * 1000, checked_at) < 5
                     ORDER BY max(created_at * 1000, checked_at) LIMIT 3",
                )?;
                let r = st.query_map([], |r| r.get::<_, String>(3))?;
                Ok(r.collect::<Result<Vec<_>, _>>()?.join("; "))
            })
            .unwrap();
        assert!(plan.contains("task_owners_seen"), "{plan}");
    }

    #[test]
    fn a_wal_past_its_limit_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        let s = Store::open(&path).unwrap();
        let wal = dir.path().join("gw.db-wal");
        let size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        assert!(!s.bound_wal().unwrap(), "under the limit: nothing to do");
        s.with(|c| {
            c.execute_batch("CREATE TABLE junk(b BLOB)")?;
            let mut ins = c.prepare("INSERT INTO junk VALUES (zeroblob(1048576))")?;
            for _ in 0..(WAL_LIMIT >> 20) + 8 {
                ins.execute([])?;
            }
            Ok(())
        })
        .unwrap();
        assert!(size() > WAL_LIMIT, "{}", size());
        assert!(s.bound_wal().unwrap());
        assert_eq!(size(), 0);
        let n: i64 = s
            .with(|c| Ok(c.query_row("SELECT count(*) FROM junk", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(n as u64, (WAL_LIMIT >> 20) + 8, "nothing lost");
    }

    /// Deletes 3,000 old task records, ids and ages scattered as in a real gateway (each batch
    /// touches pages all over the table's indexes), in batches of 100 while a reader is nearly
    /// always on a snapshot; returns the largest WAL file seen.
    fn largest_wal_while_forgetting(limit: u64) -> u64 {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        let s = Store::open(&path).unwrap();
        s.create_workspace("w", "W").unwrap();
        s.with(|c| {
            c.execute_batch("BEGIN")?;
            for i in 0u64..3000 {
                insert_binding(
                    c,
                    &TaskBinding {
                        endpoint: "http://127.0.0.1:9/a2a".into(),
                        task_id: format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                        workspace_id: "w".into(),
                        agent_id: "a".into(),
                    },
                )?;
            }
            c.execute(
                "UPDATE task_owners SET created_at = 0, checked_at = (seq * 7919) % 100000",
                [],
            )?;
            c.execute_batch("COMMIT")?;
            Ok(())
        })
        .unwrap();
        assert!(s.bound_wal_at(0).unwrap(), "the inserts' WAL is cut first");
        let stop = Arc::new(AtomicBool::new(false));
        let largest = Arc::new(AtomicU64::new(0));
        let reader = {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || {
                let c = Connection::open(&path).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    c.execute_batch("BEGIN").unwrap();
                    let _: i64 = c
                        .query_row("SELECT count(*) FROM task_owners", [], |r| r.get(0))
                        .unwrap();
                    std::thread::sleep(Duration::from_millis(1));
                    c.execute_batch("COMMIT").unwrap();
                }
            })
        };
        let sampler = {
            let (wal, stop, largest) = (wal_path(&path), stop.clone(), largest.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    largest.fetch_max(file_len(&wal), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(500));
                }
            })
        };
        let age = Duration::from_secs(3600);
        let deleted = run_task_pass_bounded(&s, age, 100, limit, &|| false);
        largest.fetch_max(file_len(&wal_path(&path)), Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        reader.join().unwrap();
        sampler.join().unwrap();
        assert_eq!(deleted, 3000);
        assert_eq!(s.task_record_count().unwrap(), 0);
        largest.load(Ordering::Relaxed)
    }

    #[test]
    fn task_retention_keeps_the_wal_near_its_limit_while_a_reader_never_leaves() {
        let unbounded = largest_wal_while_forgetting(u64::MAX);
        assert!(unbounded > 16 << 20, "WAL grew to only {unbounded} bytes");
        let bounded = largest_wal_while_forgetting(4 << 20);
        // The limit plus about one batch (~3 MB) written before the next truncation.
        assert!(
            bounded < 10 << 20,
            "WAL grew to {bounded} bytes past a 4 MiB limit (unbounded: {unbounded})"
        );
    }
}
