//! The audit writer's jobs and the transaction that commits a batch of them (cut out of
//! `audit_writer` to keep each file readable): what a job is, how a hop's intent is linked to
//! its completion ([`IntentRef`]), which journaled intents need no row ([`folded_intents`]),
//! which status records are written with their task's binding ([`folded_statuses`]), and
//! [`commit`].

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, params};

use super::AuditRecord;
use super::journal::{SendRow, TaskBinding, insert_binding, insert_send};
use super::sql::CachedExt;
use super::task_records::{TaskStatusRow, update_status};

pub(super) type Reply = tokio::sync::oneshot::Sender<Result<i64, String>>;

/// A hop's intent record as the writer will know it: its sequence number, set once inserted,
/// and its journal number when it was journaled. The completion record carries it, so the
/// writer (and a recovery from the journal) links the two in either mode.
#[derive(Debug, Clone, Default)]
pub struct IntentRef(Arc<IntentIds>);

#[derive(Debug, Default)]
struct IntentIds {
    seq: AtomicI64,
    journal: AtomicU64,
}

impl IntentRef {
    /// The intent row's sequence number, once it is in the database.
    pub fn seq(&self) -> Option<i64> {
        match self.0.seq.load(Ordering::Acquire) {
            0 => None,
            n => Some(n),
        }
    }

    /// The intent's journal number, when it was journaled.
    pub(super) fn journal(&self) -> Option<u64> {
        match self.0.journal.load(Ordering::Acquire) {
            0 => None,
            n => Some(n),
        }
    }

    /// Records the intent row's sequence number (once committed; the PostgreSQL writer
    /// in `backend` sets it too).
    pub(super) fn set_seq(&self, seq: i64) {
        self.0.seq.store(seq, Ordering::Release);
    }

    /// Records the intent's journal number (once journaled).
    pub(super) fn set_journal(&self, j: u64) {
        self.0.journal.store(j, Ordering::Release);
    }
}

pub(super) enum Job {
    /// Insert `rec` (`phase` = `Some("intent")` for intent records); answer with its rowid.
    Insert {
        rec: Box<AuditRecord>,
        phase: Option<&'static str>,
        reply: Option<Reply>,
        /// Intent: where to put the rowid; completion: the intent it completes.
        link: Option<IntentRef>,
        /// The intent's journal number, when journaled.
        journal: Option<u64>,
    },
    /// Insert a task binding (journaled with number `journal`).
    Bind {
        binding: Box<TaskBinding>,
        journal: u64,
    },
    /// Write a completed send record (journaled with number `journal`); `sweep_before`:
    /// first forget every send record created before that time. `committed` runs once the
    /// record is committed.
    Send {
        row: Box<SendRow>,
        journal: u64,
        sweep_before: Option<i64>,
        committed: Option<OnCommit>,
    },
    /// Update what the listing records of a task's status (not journaled: a record lost in
    /// a crash is read again from the peer, see `super::task_records`).
    Status(Arc<TaskStatusRow>),
    /// Run once everything queued before has committed.
    Flush(OnCommit),
}

/// What to do once a job's transaction has committed.
pub(crate) type OnCommit = Box<dyn FnOnce() + Send>;

impl Job {
    pub(super) fn waited_for(&self) -> bool {
        matches!(self, Job::Flush(_) | Job::Insert { reply: Some(_), .. })
    }
}

impl IntentRef {
    fn same(&self, other: &IntentRef) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Journaled intents whose completion is queued in the same batch. Their rows are not written:
/// the completion row holds everything the intent row held (readers show one record per hop,
/// the completed one), and the intent's journal line kept the hop on record until this commit.
/// Half the audit rows and their index entries of a hop, whenever the hop answers within the
/// writer's batch window. An intent somebody waits for (no journal) is always written.
fn folded_intents(batch: &[Job]) -> Vec<&IntentRef> {
    let mut intents: Vec<&IntentRef> = Vec::new();
    let mut folded = Vec::new();
    for job in batch {
        if let Job::Insert {
            phase,
            link: Some(link),
            reply,
            journal,
            ..
        } = job
        {
            if phase.is_some() {
                if reply.is_none() && journal.is_some() {
                    intents.push(link);
                }
            } else if let Some(i) = intents.iter().position(|i| i.same(link)) {
                folded.push(intents.swap_remove(i));
            }
        }
    }
    folded
}

/// Status records written with their task's binding: for each `Job::Bind` of the batch, the
/// index of the first `Job::Status` after it of the same task, when that record is of the
/// binding's owner and not `gone`. A send's answer binds its task and queues its first status
/// right after, so both usually share a batch: the row is then inserted with the status
/// instead of inserted and updated at once (the update rewrote four listing indexes and, as a
/// statement that may abort, copied every page it touched into a statement journal first:
/// about as much as the insert itself). On a freshly inserted row the update always applies
/// (`status_at` -1, open, not gone), so the row ends the same either way.
fn folded_statuses(batch: &[Job]) -> Vec<Option<usize>> {
    let mut folded = vec![None; batch.len()];
    // Bindings of this batch whose task has had no status record since.
    let mut open: Vec<usize> = Vec::new();
    for (i, job) in batch.iter().enumerate() {
        match job {
            Job::Bind { .. } => open.push(i),
            Job::Status(row) => {
                let same_task = |&&b: &&usize| {
                    matches!(&batch[b], Job::Bind { binding, .. }
                        if binding.endpoint == row.endpoint && binding.task_id == row.task_id)
                };
                if let Some(k) = open.iter().position(|b| same_task(&b)) {
                    let b = open.swap_remove(k);
                    if let Job::Bind { binding, .. } = &batch[b]
                        && binding.workspace_id == row.workspace_id
                        && binding.agent_id == row.agent_id
                        && !row.gone
                    {
                        folded[b] = Some(i);
                    }
                }
            }
            _ => {}
        }
    }
    folded
}

/// Inserts `b` with its first status record `r` (see [`folded_statuses`]) unless the task is
/// bound already: the row as [`insert_binding`] and then [`update_status`] leave it.
fn insert_bound_with_status(
    conn: &Connection,
    b: &TaskBinding,
    r: &TaskStatusRow,
) -> rusqlite::Result<usize> {
    conn.execute_cached(
        "INSERT OR IGNORE INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at,
           context_id, state, status_at, open, checked_at)
         VALUES (?1, ?2, ?3, ?4, strftime('%s','now'), ?5, ?6, ?7, ?8, ?9)",
        params![
            b.endpoint,
            b.task_id,
            b.workspace_id,
            b.agent_id,
            r.context_id,
            r.state,
            r.status_at,
            r.open,
            r.checked_at
        ],
    )
}

/// Inserts the batch's records in one transaction; one result per job, and the highest
/// journal number committed (recorded in `journal_state` in the same transaction).
pub(super) fn commit(
    conn: &Mutex<Connection>,
    batch: &[Job],
) -> (Vec<Result<i64, String>>, Option<u64>) {
    let fail = |e: String| (batch.iter().map(|_| Err(e.clone())).collect(), None);
    let Ok(c) = conn.lock() else {
        return fail("store lock poisoned".into());
    };
    // BEGIN and COMMIT through the statement cache (compiled once, not per batch). IMMEDIATE:
    // the write lock is taken here, waiting (busy_timeout) for a write of the store's shared
    // connection to end, so no statement of the batch meets a busy database halfway.
    if let Err(e) = c.execute_cached("BEGIN IMMEDIATE", []) {
        return fail(e.to_string());
    }
    let tx: &Connection = &c;
    let folded = folded_intents(batch);
    let statuses = folded_statuses(batch);
    // Status jobs already applied by their binding's insert.
    let mut applied = vec![false; batch.len()];
    let mut out = Vec::with_capacity(batch.len());
    let mut journaled = None;
    // Intents linked in this batch (a completion later in the batch needs the rowid); unset
    // again if the transaction does not commit.
    let mut linked: Vec<&IntentRef> = Vec::new();
    for (i, job) in batch.iter().enumerate() {
        out.push(match job {
            Job::Insert {
                phase: Some(_),
                link: Some(link),
                journal,
                ..
            } if folded.iter().any(|f| f.same(link)) => {
                // An intent whose completion is in this batch: the completion row stands for
                // the hop (see `folded_intents`); the journal line counts as committed.
                journaled = journaled.max(*journal);
                Ok(0)
            }
            Job::Insert {
                rec,
                phase,
                link,
                journal,
                ..
            } => {
                // A completion names its intent's rowid once the writer knows it.
                let intent_of = match phase {
                    Some(_) => None,
                    None => link.as_ref().and_then(IntentRef::seq).or(rec.intent_seq),
                };
                // An intent row keeps its journal number: a completion journaled before the
                // intent's seq was known finds the row by it on recovery.
                let journal_no = phase.and(*journal);
                let inserted =
                    super::audit::insert_audit_row_linked(tx, rec, *phase, intent_of, journal_no);
                let inserted = inserted.map_err(|e| e.to_string());
                if let (Ok(seq), Some(link), Some(_)) = (&inserted, link, phase) {
                    link.set_seq(*seq);
                    linked.push(link);
                }
                if journal.is_some() {
                    journaled = journaled.max(*journal);
                }
                inserted
            }
            Job::Bind { binding, journal } => {
                journaled = journaled.max(Some(*journal));
                let inserted = match statuses[i].map(|j| (j, &batch[j])) {
                    Some((j, Job::Status(row))) => {
                        let n = insert_bound_with_status(tx, binding, row);
                        // Ignored (bound already): the status job updates the row as usual.
                        if let Ok(1) = n {
                            applied[j] = true;
                        }
                        n
                    }
                    _ => insert_binding(tx, binding),
                };
                inserted.map(|_| 0).map_err(|e| e.to_string())
            }
            Job::Send {
                row,
                journal,
                sweep_before,
                ..
            } => {
                journaled = journaled.max(Some(*journal));
                let swept = match sweep_before {
                    Some(t) => tx
                        .execute_cached(
                            "DELETE FROM gateway_sends WHERE created_at < ?1",
                            params![t],
                        )
                        .map(|_| ()),
                    None => Ok(()),
                };
                swept
                    .and_then(|()| insert_send(tx, row))
                    .map(|_| 0)
                    .map_err(|e| e.to_string())
            }
            Job::Status(_) if applied[i] => Ok(0),
            Job::Status(row) => update_status(tx, row).map(|_| 0).map_err(|e| e.to_string()),
            Job::Flush(_) => Ok(0),
        });
    }
    let done = match journaled {
        Some(j) => tx
            .execute_cached(
                "UPDATE journal_state SET committed = ?1 WHERE id = 1",
                params![i64::try_from(j).unwrap_or(i64::MAX)],
            )
            .map(|_| ()),
        None => Ok(()),
    }
    .and_then(|()| tx.execute_cached("COMMIT", []).map(|_| ()));
    if let Err(e) = done {
        if !tx.is_autocommit() {
            let _ = tx.execute_cached("ROLLBACK", []);
        }
        for link in linked {
            link.set_seq(0);
        }
        return fail(e.to_string());
    }
    (out, journaled)
}

#[cfg(test)]
#[path = "audit_batch_tests.rs"]
mod tests;
