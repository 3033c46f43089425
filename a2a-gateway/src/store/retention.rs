//! Audit retention: the oldest audit rows are deleted by age (`audit_retention`) and by the
//! audit's size (`audit_max_bytes`), a small batch per short transaction ([`Store::trim_audit`];
//! the gateway's background task calls it, `crate::app`).
//!
//! The audit stays append-only for everything else: the `audit_no_delete` trigger now lets a
//! row go only below `audit_retention.deleted_below`, a mark that only moves forward and never
//! past the newest row. So the newest row is never deleted, the largest `seq` never goes down
//! and a sequence number is still never given twice (see `hop_page::MIGRATION_AUDIT_REBUILD`);
//! a `DELETE` from anyone else still raises. `audit_retention` also counts the rows deleted and
//! when, so a gap at the start of the log is accounted for.
//!
//! **The audit's size** is its table's and indexes' pages. Reading them (SQLite's `dbstat`)
//! walks every page, so a check does that only when it has to: when the database's pages in
//! use (`page_count - freelist_count`, read at no cost) are under the bound, the audit is too;
//! otherwise the audit's bytes per row, measured with `dbstat` at most every
//! [`RECALIBRATE`], times its rows (`max(seq) - min(seq) + 1`: rows leave only from the start)
//! estimate its size. Over the bound, the oldest rows are deleted until the estimate is 10 %
//! under it, so the next deletion waits for that much growth. Other tables (task records,
//! idempotency records within their window) do not count and are not trimmed here.
//!
//! Freed pages are reused, not returned to the file system (no `auto_vacuum`): SQLite puts the
//! pages a batch frees on its free list and the next rows are written into them, so the file
//! stops growing at about `audit_max_bytes` plus what is written between two checks (plus the
//! other tables). Shrinking the file would need `auto_vacuum = INCREMENTAL`, which an existing
//! database only gets by a full `VACUUM` (a rewrite of the whole file under an exclusive lock),
//! and then every incremental vacuum moves pages from the end of the file (more writes, the WAL
//! grows with them) to give back space the next hops need again. An operator who lowers the
//! bound and wants the disk back runs `VACUUM` with the gateway stopped (docs/gateway/storage.md,
//! "Audit retention").

use std::time::Duration;

use rusqlite::{Connection, params};

pub use crate::config::AuditRetention;

use super::{Store, StoreError};

/// Migration 18: the journal number of journaled intent rows (a hop outcome recovered from the
/// journal finds its intent by it, see `journal`) and the retention mark.
pub const MIGRATION: &str = r#"
    ALTER TABLE audit ADD COLUMN journal INTEGER;
    CREATE TABLE audit_retention (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        deleted_below INTEGER NOT NULL,
        deleted_rows INTEGER NOT NULL,
        last_at TEXT
    );
    INSERT INTO audit_retention(id, deleted_below, deleted_rows) VALUES (1, 0, 0);
    DROP TRIGGER audit_no_delete;
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        WHEN OLD.seq >= (SELECT deleted_below FROM audit_retention WHERE id = 1)
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    CREATE TRIGGER audit_retention_forward BEFORE UPDATE OF deleted_below ON audit_retention
        WHEN NEW.deleted_below < OLD.deleted_below
          OR NEW.deleted_below > (SELECT coalesce(max(seq), 0) FROM audit)
        BEGIN SELECT RAISE(ABORT, 'audit retention moves forward, never past the newest row'); END;
    CREATE TRIGGER audit_retention_kept BEFORE DELETE ON audit_retention
        BEGIN SELECT RAISE(ABORT, 'audit retention mark is kept'); END;
"#;

/// How long a measure of the audit's bytes per row is used before it is taken again.
pub const RECALIBRATE: Duration = Duration::from_secs(600);

/// What one [`Store::trim_audit`] call deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// Rows deleted (0: the rule keeps every row now).
    pub rows: usize,
    /// Rows deleted for their age (the rest for the size).
    pub by_age: usize,
    /// The audit's estimated bytes before the batch, when the size rule had to estimate them.
    pub audit_bytes: Option<u64>,
}

/// The retention counters (`audit_retention`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionState {
    /// Every audit row below this `seq` was deleted by retention.
    pub deleted_below: i64,
    /// Rows deleted by retention so far.
    pub deleted_rows: i64,
    /// When retention last deleted rows (RFC 3339).
    pub last_at: Option<String>,
}

/// What the retention keeps between calls: its connection and its measure of the audit.
#[derive(Default)]
pub(crate) struct Retention {
    /// Its own connection to a database file (opened on first use).
    conn: Option<Connection>,
    measure: Measure,
}

/// The size rule's state (one per retention: per file on SQLite, per replica on PostgreSQL).
#[derive(Default)]
pub(in crate::store) struct Measure {
    /// Bytes per audit row and when they were measured.
    per_row: Option<(f64, std::time::Instant)>,
    /// Deleting for the size: go on until 10 % under the bound.
    trimming: bool,
}

impl Measure {
    /// Whether the bytes per row were measured less than [`RECALIBRATE`] ago.
    pub(in crate::store) fn fresh(&self) -> bool {
        self.per_row
            .is_some_and(|(_, at)| at.elapsed() < RECALIBRATE)
    }

    /// Keeps a new measure of the bytes per audit row.
    pub(in crate::store) fn measured(&mut self, per_row: f64) {
        self.per_row = Some((per_row, std::time::Instant::now()));
    }

    /// The store as a whole is under the bound `max` (so is the audit): nothing to delete.
    pub(in crate::store) fn under_bound(&mut self) -> (usize, Option<u64>) {
        self.trimming = false;
        (0, None)
    }

    /// The size rule for an audit of `rows` rows against `max` bytes: how many of the oldest
    /// rows to delete, and the audit's estimated bytes. Once over `max` it deletes down to 10 %
    /// under it. Not measured yet: nothing (the next call measures).
    pub(in crate::store) fn excess(&mut self, max: u64, rows: i64) -> (usize, Option<u64>) {
        let Some((per_row, _)) = self.per_row else {
            return (0, None);
        };
        let bytes = (rows.max(0) as f64 * per_row) as u64;
        let target = if self.trimming || bytes > max {
            max / 10 * 9
        } else {
            max
        };
        self.trimming = bytes > target;
        if !self.trimming || per_row <= 0.0 {
            return (0, Some(bytes));
        }
        let excess = ((bytes - target) as f64 / per_row).ceil() as usize;
        (excess.max(1), Some(bytes))
    }
}

/// Bytes of the database's pages in use (`page_count - freelist_count`, times the page size).
pub(crate) fn used_bytes(c: &Connection) -> Result<u64, StoreError> {
    let get =
        |p: &str| -> Result<i64, StoreError> { Ok(c.pragma_query_value(None, p, |r| r.get(0))?) };
    let used = (get("page_count")? - get("freelist_count")?).max(0) * get("page_size")?;
    Ok(u64::try_from(used).unwrap_or(0))
}

/// Bytes of the pages of the audit table and its indexes (reads every one of them).
pub(crate) fn audit_bytes(c: &Connection) -> Result<u64, StoreError> {
    let b: i64 = c.query_row(
        "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN
           (SELECT name FROM sqlite_schema WHERE tbl_name = 'audit' AND type IN ('table', 'index'))",
        [],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(b).unwrap_or(0))
}

pub(super) fn is_older(ts: &str, cutoff: time::OffsetDateTime) -> bool {
    // A time that does not parse (never written by the gateway) counts as old: it is behind
    // older rows in `seq` order.
    time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339)
        .map(|t| t < cutoff)
        .unwrap_or(true)
}

/// Measures the audit's bytes per row when the size rule may need them and the last measure is
/// stale: outside the batch's transaction, as a read (it walks every page of the audit; WAL
/// readers never hold up the writer).
fn calibrate(c: &Connection, r: &mut Measure, max: u64) -> Result<(), StoreError> {
    if r.fresh() || used_bytes(c)? <= max {
        return Ok(());
    }
    c.execute_batch("BEGIN")?;
    let measured = (|| {
        let rows: i64 = c.query_row(
            "SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM audit",
            [],
            |r| r.get(0),
        )?;
        Ok::<_, StoreError>(audit_bytes(c)? as f64 / rows.max(1) as f64)
    })();
    let _ = c.execute_batch("COMMIT");
    r.measured(measured?);
    Ok(())
}

/// One batch on `c`, in one transaction.
fn trim(c: &Connection, r: &mut Measure, rule: &AuditRetention) -> Result<Trimmed, StoreError> {
    if let Some(max) = rule.max_bytes {
        calibrate(c, r, max)?;
    }
    super::sql::immediate(c, |c| trim_in(c, r, rule))
}

/// How many of the oldest `rows` rows the size rule deletes (and the audit's estimated bytes).
fn over_size(
    c: &Connection,
    r: &mut Measure,
    max: u64,
    rows: i64,
) -> Result<(usize, Option<u64>), StoreError> {
    if used_bytes(c)? <= max {
        // The whole database is under the bound, so is the audit.
        return Ok(r.under_bound());
    }
    // Measured before the transaction (`calibrate`); none yet: the next call measures.
    Ok(r.excess(max, rows))
}

fn trim_in(c: &Connection, r: &mut Measure, rule: &AuditRetention) -> Result<Trimmed, StoreError> {
    let oldest: Vec<(i64, String)> = {
        let mut st = c.prepare_cached("SELECT seq, ts FROM audit ORDER BY seq LIMIT ?1")?;
        let limit = i64::try_from(rule.batch.max(1)).unwrap_or(i64::MAX);
        let rows = st.query_map(params![limit], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    let newest: i64 = c.query_row("SELECT coalesce(max(seq), 0) FROM audit", [], |r| r.get(0))?;
    let Some(first) = oldest.first().map(|(s, _)| *s) else {
        return Ok(Trimmed::default());
    };
    // The newest row stays (the largest `seq` never goes down).
    let candidates: Vec<&(i64, String)> = oldest.iter().filter(|(s, _)| *s < newest).collect();
    let by_age = match rule.max_age {
        Some(age) => {
            let cutoff = time::OffsetDateTime::now_utc() - age;
            candidates
                .iter()
                .take_while(|(_, ts)| is_older(ts, cutoff))
                .count()
        }
        None => 0,
    };
    let (by_size, audit_bytes) = match rule.max_bytes {
        Some(max) => over_size(c, r, max, newest - first + 1)?,
        None => (0, None),
    };
    let n = by_age.max(by_size).min(candidates.len());
    let Some(upper) = n
        .checked_sub(1)
        .and_then(|i| candidates.get(i))
        .map(|(s, _)| *s)
    else {
        return Ok(Trimmed {
            audit_bytes,
            ..Trimmed::default()
        });
    };
    c.execute(
        "UPDATE audit_retention SET deleted_below = max(deleted_below, ?1) WHERE id = 1",
        params![upper + 1],
    )?;
    let rows = c.execute("DELETE FROM audit WHERE seq <= ?1", params![upper])?;
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    c.execute(
        "UPDATE audit_retention SET deleted_rows = deleted_rows + ?1, last_at = ?2 WHERE id = 1",
        params![i64::try_from(rows).unwrap_or(i64::MAX), now],
    )?;
    Ok(Trimmed {
        rows,
        by_age: by_age.min(rows),
        audit_bytes,
    })
}

impl Store {
    /// Deletes the oldest audit rows `rule` no longer keeps, at most `rule.batch` of them, in
    /// one short transaction (from a connection of its own for a database file, so the hops'
    /// reads never wait for it). Call it again while it deletes rows.
    pub fn trim_audit(&self, rule: &AuditRetention) -> Result<Trimmed, StoreError> {
        self.with_retention(|c, measure| trim(c, measure, rule))
    }

    /// Runs `f` on the retention's own connection to the database file (opened on first use;
    /// the shared connection for an in-memory store), so the hops' reads never wait for it.
    pub(crate) fn with_retention_conn<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.with_retention(|c, _| f(c))
    }

    fn with_retention<T>(
        &self,
        f: impl FnOnce(&Connection, &mut Measure) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut r = self.retention.lock().map_err(|_| StoreError::Poisoned)?;
        let Retention { conn, measure } = &mut *r;
        match &self.path {
            Some(path) => {
                if conn.is_none() {
                    let c = Connection::open(path.as_path())?;
                    Self::configure(&c, Duration::from_secs(5))?;
                    c.pragma_update(None, "wal_autocheckpoint", 0)?;
                    *conn = Some(c);
                }
                match conn.as_ref() {
                    Some(c) => f(c, measure),
                    None => Err(StoreError::Poisoned),
                }
            }
            None => self.with(|c| f(c, measure)),
        }
    }

    /// Bytes of the database's pages in use.
    pub fn database_bytes(&self) -> Result<u64, StoreError> {
        self.with(used_bytes)
    }

    /// Bytes of the audit's pages (table and indexes; reads every page: for tests and checks,
    /// not for a request path).
    pub fn audit_bytes(&self) -> Result<u64, StoreError> {
        self.with(audit_bytes)
    }

    /// The retention counters: up to which `seq` rows were deleted, how many, when last.
    pub fn audit_retention_state(&self) -> Result<RetentionState, StoreError> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT deleted_below, deleted_rows, last_at FROM audit_retention WHERE id = 1",
                [],
                |r| {
                    Ok(RetentionState {
                        deleted_below: r.get(0)?,
                        deleted_rows: r.get(1)?,
                        last_at: r.get(2)?,
                    })
                },
            )?)
        })
    }
}

/// One retention pass: batches until the rule keeps every row, `stop()` says so, or a batch
/// fails (logged; the next pass tries again). Returns the rows deleted (by age, in all).
pub fn run_pass(store: &Store, rule: &AuditRetention, stop: &dyn Fn() -> bool) -> (usize, usize) {
    let (mut by_age, mut rows) = (0, 0);
    while !stop() {
        match store.trim_audit(rule) {
            Ok(t) if t.rows == 0 => break,
            Ok(t) => {
                rows += t.rows;
                by_age += t.by_age;
                super::task_retention::between_batches(store, super::task_retention::WAL_LIMIT);
            }
            Err(e) => {
                tracing::warn!("audit retention: {e}");
                break;
            }
        }
    }
    if rows > 0 {
        tracing::info!(
            rows,
            by_age,
            by_size = rows - by_age,
            "audit retention deleted rows"
        );
    }
    (by_age, rows)
}
