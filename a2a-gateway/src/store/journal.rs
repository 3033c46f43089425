//! The intent journal: a hop's intent record made crash-safe with one `write(2)` instead of a
//! SQLite commit on the request path.
//!
//! The hardening rule is "the intent record exists before the peer is called", so that a
//! gateway killed between the peer call and its answer still shows the hop (as `incomplete`).
//! Committing a SQLite transaction per intent costs a WAL append, page writes and file locks
//! (issue 11's profile: about a quarter of the gateway's CPU per hop). Here the intent is
//! appended as one JSON line to `<database>.intents` (`O_APPEND`, one `write` call: once it
//! returns the bytes are in the kernel, so they survive the process being killed) and queued for
//! the audit writer, which inserts it in its next batch and records in the same transaction the
//! highest journal number it has committed (`journal_state.committed`).
//!
//! On start ([`Journal::open`]) every line above that number is inserted as an intent row (it
//! then reads as `incomplete`, as with a committed intent whose hop never finished) and the
//! files are emptied. While serving, the active file is rotated to `<database>.intents.old` when
//! it passes [`ROTATE_BYTES`]; that file is deleted once the writer has committed its last line,
//! so a line is always in a file or in the database.
//!
//! Task bindings (which workspace and agent own a task the peer created, the isolation rule of
//! the hardening work) go the same way: a [`TaskBinding`] line, then the writer's next batch.
//! Until that batch commits, the binding is answered from memory (`audit_writer`'s pending
//! bindings), so every read in this process sees it at once; after a crash it is recovered
//! from the journal like an intent. This took the binding's own SQLite commit (17 % of the
//! gateway's CPU at 16 connections in issue 11's profile) off the request path.
//!
//! Completed idempotent sends (`crate::hop::idempotency`) go the same way: a [`SendRow`] line, then
//! the writer's next batch; until it commits, the record is answered from memory.
//!
//! So do hop outcomes (issue 40): a hop's completion record (decision, status, latency) is a
//! `fin` line written before its answer leaves, naming its intent by journal number (`of`) and,
//! when the intent row was committed already, by `seq` (`of_seq`). On recovery a completion
//! links to the intent recovered in the same pass, or to the committed row named by `of_seq`,
//! or to the committed intent row carrying its journal number (`audit.journal`, written with
//! every journaled intent row: the completion may have been journaled while its intent was
//! still in the writer's queue). Without these lines a kill lost the outcome of the 1-4 hops
//! answered within the writer's last batch window: they read `incomplete`, like hops cut.
//!
//! The journal belongs to one serving process: `<database>.intents.lock` is locked exclusively
//! for its lifetime ([`std::fs::File::try_lock`]); a second `serve` on the same database is
//! refused. Other processes (the admin CLI) open the store without a journal. Power loss is not
//! covered (nor is it for SQLite commits with `synchronous=NORMAL`).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::{AuditRecord, StoreError};

/// Size after which the active journal file is rotated.
pub(crate) const ROTATE_BYTES: u64 = 4 * 1024 * 1024;

/// One journal line: an intent record, a hop's completion record, a task binding or a send.
#[derive(Serialize, Deserialize)]
struct Line {
    /// Journal sequence number (increasing).
    j: u64,
    /// The intent record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rec: Option<AuditRecord>,
    /// When the record was journaled (Unix nanoseconds): its time if it is recovered (the
    /// record's `ts` is set when the row is inserted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<i64>,
    /// A task bound to its owner (see [`TaskBinding`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bind: Option<TaskBinding>,
    /// A completed idempotent send (see [`SendRow`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    send: Option<SendRow>,
    /// A hop's completion record (its outcome: decision, status, latency), journaled before
    /// the answer leaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fin: Option<AuditRecord>,
    /// The journal number of the intent `fin` completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    of: Option<u64>,
    /// The sequence number of the intent `fin` completes, when its row was committed already.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    of_seq: Option<i64>,
}

/// What one journal line carries (borrowed: no copy of a record to serialise it).
pub(crate) enum Entry<'a> {
    /// A hop's intent record.
    Intent(&'a AuditRecord),
    /// A hop's completion record, with the journal number and (if committed) the sequence
    /// number of the intent it completes.
    Completion(&'a AuditRecord, Option<u64>, Option<i64>),
    /// A task binding.
    Binding(&'a TaskBinding),
    /// A completed idempotent send.
    Send(&'a SendRow),
}

/// A [`Line`] to write, borrowing its record.
#[derive(Serialize, Default)]
struct LineRef<'a> {
    j: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    rec: Option<&'a AuditRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bind: Option<&'a TaskBinding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    send: Option<&'a SendRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fin: Option<&'a AuditRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    of: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    of_seq: Option<i64>,
}

impl<'a> LineRef<'a> {
    fn of(j: u64, entry: Entry<'a>) -> LineRef<'a> {
        let now = || {
            let t = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
            Some(i64::try_from(t).unwrap_or(i64::MAX))
        };
        match entry {
            Entry::Intent(rec) => LineRef {
                j,
                rec: Some(rec),
                at: now(),
                ..LineRef::default()
            },
            Entry::Completion(fin, of, of_seq) => LineRef {
                j,
                fin: Some(fin),
                at: now(),
                of,
                of_seq,
                ..LineRef::default()
            },
            Entry::Binding(b) => LineRef {
                j,
                bind: Some(b),
                ..LineRef::default()
            },
            Entry::Send(r) => LineRef {
                j,
                send: Some(r),
                ..LineRef::default()
            },
        }
    }
}

/// A completed idempotent send (a `gateway_sends` row, see `crate::hop::idempotency`), journaled
/// like an intent so that a repeat after a crash is still answered from the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SendRow {
    /// The caller's workspace.
    pub workspace_id: String,
    /// The target agent.
    pub agent_id: String,
    /// The message's `messageId`.
    pub message_id: String,
    /// The digest of the message.
    pub digest: String,
    /// When the send was claimed (Unix seconds).
    pub created_at: i64,
    /// The task it became.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The direct message it became (JSON text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

/// Writes `r` (replacing the key's earlier record: a later send of the key is newer).
pub(crate) fn insert_send(conn: &Connection, r: &SendRow) -> rusqlite::Result<usize> {
    use super::sql::CachedExt;
    conn.execute_cached(
        "INSERT OR REPLACE INTO gateway_sends(workspace_id, agent_id, message_id, digest,
           created_at, task_id, reply) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            r.workspace_id,
            r.agent_id,
            r.message_id,
            r.digest,
            r.created_at,
            r.task_id,
            r.reply
        ],
    )
}

/// A task bound to the workspace and agent that created it (a `task_owners` row), journaled
/// like an intent so that the binding survives the process once the caller has seen the task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TaskBinding {
    /// The peer's registered endpoint.
    pub endpoint: String,
    /// The peer's task id.
    pub task_id: String,
    /// Owner: workspace.
    pub workspace_id: String,
    /// Owner: registered agent id.
    pub agent_id: String,
}

/// Inserts `b` unless the task is bound already (the first binding wins).
pub(crate) fn insert_binding(conn: &Connection, b: &TaskBinding) -> rusqlite::Result<usize> {
    use super::sql::CachedExt;
    conn.execute_cached(
        "INSERT OR IGNORE INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at)
         VALUES (?1, ?2, ?3, ?4, strftime('%s','now'))",
        params![b.endpoint, b.task_id, b.workspace_id, b.agent_id],
    )
}

struct Files {
    active: File,
    /// Bytes in the active file.
    bytes: u64,
    /// Next journal number.
    next: u64,
    /// The rotated file's last journal number, while that file exists.
    old_last: Option<u64>,
}

/// The open journal of the serving process.
pub(crate) struct Journal {
    path: PathBuf,
    old_path: PathBuf,
    files: Mutex<Files>,
    /// Held (locked) for the journal's lifetime.
    _lock: File,
}

fn with_suffix(db: &Path, suffix: &str) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Invalid(format!("intent journal: {what} {}: {e}", path.display()))
}

/// The lines of `path` with a journal number above `after` (a missing file has none; a line
/// that does not parse, which only a torn write at power loss leaves, is skipped).
fn read_lines(path: &Path, after: u64) -> Result<Vec<Line>, StoreError> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io("cannot read", path, e)),
    };
    let mut out = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line.map_err(|e| io("cannot read", path, e))?;
        match serde_json::from_str::<Line>(&line) {
            Ok(l) if l.j > after => out.push(l),
            Ok(_) => {}
            Err(e) => tracing::warn!(file = %path.display(), "skipping a torn journal line: {e}"),
        }
    }
    Ok(out)
}

/// What [`Journal::open`] recovered from a previous process's journal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Intent records (hops that reached the point of calling their peer).
    pub intents: usize,
    /// Completion records (outcomes of hops answered to their callers).
    pub outcomes: usize,
}

/// `rec` with the time its line was journaled, when it has none of its own.
fn with_time(rec: &AuditRecord, at: Option<i64>) -> std::borrow::Cow<'_, AuditRecord> {
    let t = at.and_then(|t| time::OffsetDateTime::from_unix_timestamp_nanos(t.into()).ok());
    match t {
        Some(t) if rec.ts.is_empty() => {
            let mut rec = rec.clone();
            rec.ts = t
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default();
            std::borrow::Cow::Owned(rec)
        }
        _ => std::borrow::Cow::Borrowed(rec),
    }
}

/// The committed intent row of journal number `j` (trace `trace_id`): a completion journaled
/// while its intent was still on its way to the database. `None` if retention removed it.
fn committed_intent(c: &Connection, trace_id: &str, j: u64) -> Result<Option<i64>, StoreError> {
    use rusqlite::OptionalExtension;
    Ok(c.query_row(
        "SELECT seq FROM audit WHERE trace_id = ?1 AND journal = ?2 AND phase = 'intent'",
        params![trace_id, i64::try_from(j).unwrap_or(i64::MAX)],
        |r| r.get(0),
    )
    .optional()?)
}

impl Journal {
    /// Takes the journal of the database at `db` and recovers what a previous process left:
    /// intents it journaled but never committed are inserted (on `conn`) as intent rows, hop
    /// outcomes as the rows completing them. Returns the journal and what was recovered.
    pub(crate) fn open(db: &Path, conn: &Connection) -> Result<(Journal, Recovered), StoreError> {
        let lock_path = with_suffix(db, ".intents.lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io("cannot open", &lock_path, e))?;
        lock.try_lock().map_err(|_| {
            StoreError::Invalid(format!(
                "another gateway process is serving {} (its intent journal is locked)",
                db.display()
            ))
        })?;
        let path = with_suffix(db, ".intents");
        let old_path = with_suffix(db, ".intents.old");
        let committed: i64 = conn.query_row(
            "SELECT committed FROM journal_state WHERE id = 1",
            [],
            |r| r.get(0),
        )?;
        let committed = u64::try_from(committed).unwrap_or(0);
        let mut lines = read_lines(&old_path, committed)?;
        lines.extend(read_lines(&path, committed)?);
        let recovered = Recovered {
            intents: lines.iter().filter(|l| l.rec.is_some()).count(),
            outcomes: lines.iter().filter(|l| l.fin.is_some()).count(),
        };
        let mut last = committed;
        if !lines.is_empty() {
            let tx = conn.unchecked_transaction()?;
            // Intent rows inserted here, by journal number (a completion later in the journal
            // names its intent so).
            let mut intents = std::collections::HashMap::new();
            for l in &lines {
                if let Some(rec) = &l.rec {
                    let seq = super::insert_audit_row_linked(
                        &tx,
                        &with_time(rec, l.at),
                        Some("intent"),
                        None,
                        Some(l.j),
                    )?;
                    intents.insert(l.j, seq);
                }
                if let Some(fin) = &l.fin {
                    // The intent recovered above, or committed with its seq known, or
                    // committed after this line was written (found by its journal number).
                    let intent_of =
                        match (l.of.and_then(|j| intents.get(&j).copied()), l.of_seq, l.of) {
                            (Some(seq), _, _) | (None, Some(seq), _) => Some(seq),
                            (None, None, Some(j)) => committed_intent(&tx, &fin.trace_id, j)?,
                            (None, None, None) => None,
                        };
                    super::insert_audit_row_linked(
                        &tx,
                        &with_time(fin, l.at),
                        None,
                        intent_of,
                        None,
                    )?;
                }
                if let Some(b) = &l.bind {
                    insert_binding(&tx, b)?;
                }
                if let Some(r) = &l.send {
                    insert_send(&tx, r)?;
                }
                last = last.max(l.j);
            }
            tx.execute(
                "UPDATE journal_state SET committed = ?1 WHERE id = 1",
                params![i64::try_from(last).unwrap_or(i64::MAX)],
            )?;
            tx.commit()?;
        }
        match std::fs::remove_file(&old_path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("cannot remove", &old_path, e)),
        }
        let active = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| io("cannot create", &path, e))?;
        let journal = Journal {
            files: Mutex::new(Files {
                active,
                bytes: 0,
                next: last + 1,
                old_last: None,
            }),
            path,
            old_path,
            _lock: lock,
        };
        Ok((journal, recovered))
    }

    /// Appends `entry` with the next journal number, then calls `queue` with that number
    /// while still holding the journal (so the writer receives lines in journal order).
    pub(crate) fn append(
        &self,
        entry: Entry<'_>,
        queue: impl FnOnce(u64) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut f = self.files.lock().map_err(|_| StoreError::Poisoned)?;
        let j = f.next;
        let mut buf = serde_json::to_vec(&LineRef::of(j, entry))
            .map_err(|e| StoreError::Invalid(format!("intent journal: {e}")))?;
        buf.push(b'\n');
        // One write call: a line is in the file whole or not at all if the process dies.
        f.active
            .write_all(&buf)
            .map_err(|e| io("cannot write", &self.path, e))?;
        f.next += 1;
        f.bytes += buf.len() as u64;
        queue(j)
    }

    /// The writer committed every line up to `j`: drop the rotated file once it is all in the
    /// database, rotate the active one when it is large and no rotated file is pending.
    pub(crate) fn committed(&self, j: u64) {
        let Ok(mut f) = self.files.lock() else {
            return;
        };
        if let Some(old_last) = f.old_last
            && j >= old_last
        {
            if let Err(e) = std::fs::remove_file(&self.old_path) {
                tracing::warn!(
                    "intent journal: cannot remove {}: {e}",
                    self.old_path.display()
                );
                return;
            }
            f.old_last = None;
        }
        if f.old_last.is_none() && f.bytes >= ROTATE_BYTES {
            if let Err(e) = std::fs::rename(&self.path, &self.old_path) {
                tracing::warn!("intent journal: cannot rotate {}: {e}", self.path.display());
                return;
            }
            match OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&self.path)
            {
                Ok(active) => {
                    f.active = active;
                    f.old_last = Some(f.next - 1);
                    f.bytes = 0;
                }
                Err(e) => {
                    // Keep appending to the renamed file; it is read on recovery as well.
                    tracing::warn!("intent journal: cannot create {}: {e}", self.path.display());
                    f.old_last = None;
                }
            }
        }
    }
}
