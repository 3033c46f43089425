//! One writer for the audit log that commits in batches (group commit).
//!
//! Every hop writes two audit rows: the intent record before the peer is called and the
//! record that completes it. Committed one by one, each row is its own SQLite transaction
//! (WAL append, page writes, locking); the profile of issue 11 put the audit insert at 13 % of
//! the gateway's CPU. Here a dedicated thread takes every queued row, inserts them all in one
//! transaction and commits once: with one connection a batch is the completion of the last hop
//! plus the intent of the next, with many connections the rows of all hops in flight. There is
//! no timer while somebody waits for the batch: the writer commits as soon as it has taken what
//! is queued (at most [`MAX_BATCH`] rows), so a lone hop waits for one commit and nothing else.
//! With the intent journal ([`super::journal`], the serving binary) nobody waits for an intent
//! commit, and the writer gathers rows for up to [`BATCH_WINDOW`] before committing: fewer,
//! larger transactions, off the request path. A journaled intent whose completion arrives in
//! the same batch is not written at all: the completion row stands for the hop
//! (`audit_batch::folded_intents`). The writer also checkpoints the WAL, from a connection of its own
//! ([`crate::store::checkpoint::Checkpointer`]).
//!
//! Guarantees:
//! - [`AuditWriter::intent`] returns only after the transaction holding the intent record has
//!   committed, or, with the journal, after its journal line is written (the intent-before-call
//!   rule of the hardening work: a hop whose gateway stops between the peer call and the answer
//!   is still on record, as `incomplete`);
//! - completion records ([`AuditWriter::enqueue`]) are committed in the next batch; with the
//!   journal, `enqueue` returns after the record's journal line is written, and the hop's answer
//!   leaves after that (`crate::edge::record`), so every hop acknowledged to its caller has its
//!   outcome (decision, status, latency) even if the process is killed before the batch; readers
//!   of the log call [`AuditWriter::flush`] first, so they see every record of every hop that
//!   has answered; dropping the last handle (and the binary at shutdown) flushes as well.

use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::store::checkpoint::Checkpointer;
use rusqlite::Connection;

use std::collections::HashMap;

use super::audit_batch::{IntentRef, Job, OnCommit, commit};
use super::journal::{Entry, Journal, SendRow, TaskBinding};
use super::task_records::TaskStatusRow;
use super::{AuditRecord, StoreError};

/// Most rows committed in one transaction.
pub(crate) const MAX_BATCH: usize = 256;

/// With the journal, how long the writer gathers rows nobody waits for before committing.
pub(crate) const BATCH_WINDOW: Duration = Duration::from_millis(5);

/// (endpoint, task id) -> (workspace id, agent id).
type Pending = HashMap<(String, String), (String, String)>;

/// What the writer thread shares with the handles.
#[derive(Default)]
struct Shared {
    journal: OnceLock<Journal>,
    /// The gateway's metrics, once attached ([`AuditWriter::set_metrics`]): batch latency and
    /// failed batches.
    metrics: OnceLock<crate::metrics::Metrics>,
    /// Bindings journaled but not yet committed. Lock order: this lock, then the connection;
    /// the writer takes it only after its transaction has ended.
    pending: Mutex<Pending>,
    /// Task status records queued and not yet committed, per owner ([`owner_key`]) in the
    /// order queued (an owner with none has no entry): a listing reads its owner's beside the
    /// committed ones (`super::task_overlay`) instead of waiting for them.
    statuses_by_owner: Mutex<HashMap<u64, Vec<Arc<TaskStatusRow>>>>,
}

/// One owner's records at one endpoint that wait for the writer (see
/// [`AuditWriter::pending_of`]).
#[derive(Debug, Default)]
pub(crate) struct PendingRecords {
    /// Tasks bound and not yet committed.
    pub bound: Vec<String>,
    /// Status records not yet committed, in the order queued.
    pub rows: Vec<Arc<TaskStatusRow>>,
}

impl PendingRecords {
    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty() && self.rows.is_empty()
    }
}

/// An owner's key in [`Shared::statuses_by_owner`] (rows are told apart by their owner's
/// names: a collision only shares a list).
fn owner_key(workspace_id: &str, agent_id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (workspace_id, agent_id).hash(&mut h);
    h.finish()
}

impl Shared {
    /// A status record is committed (or failed): no longer pending.
    fn forget(&self, row: &Arc<TaskStatusRow>) {
        let owner = owner_key(&row.workspace_id, &row.agent_id);
        if let Ok(mut m) = self.statuses_by_owner.lock()
            && let Some(rows) = m.get_mut(&owner)
        {
            if let Some(i) = rows.iter().position(|r| Arc::ptr_eq(r, row)) {
                rows.remove(i);
            }
            if rows.is_empty() {
                m.remove(&owner);
            }
        }
    }
}

/// What [`AuditWriter::bind`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BindOutcome {
    /// The task was not bound; now it is, to the given owner.
    New,
    /// The task was bound already, to this (workspace id, agent id).
    Existing(String, String),
}

/// Handle to the writer thread (one per store, shared by its clones).
pub(crate) struct AuditWriter {
    tx: Mutex<Option<Sender<Job>>>,
    join: Mutex<Option<JoinHandle<()>>>,
    shared: Arc<Shared>,
}

impl AuditWriter {
    /// Starts the writer over `conn` (for a database file a connection of the writer's own,
    /// in memory the store's) and, for a database file, the connection that checkpoints its
    /// WAL.
    pub fn start(conn: Arc<Mutex<Connection>>, checkpointer: Option<Checkpointer>) -> AuditWriter {
        let (tx, rx) = channel();
        let shared = Arc::new(Shared::default());
        let thread_shared = shared.clone();
        let join = std::thread::Builder::new()
            .name("a2a-gateway-audit".into())
            .spawn(move || run(&conn, &rx, &thread_shared, checkpointer))
            .ok();
        AuditWriter {
            tx: Mutex::new(Some(tx)),
            join: Mutex::new(join),
            shared,
        }
    }

    /// Hands the writer the intent journal (once; the serving process).
    pub fn set_journal(&self, journal: Journal) -> Result<(), StoreError> {
        self.shared
            .journal
            .set(journal)
            .map_err(|_| StoreError::Invalid("the intent journal is open already".into()))
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        let urgent = job.waited_for();
        {
            let tx = self.tx.lock().map_err(|_| StoreError::Poisoned)?;
            match tx.as_ref() {
                Some(tx) => tx
                    .send(job)
                    .map_err(|_| StoreError::Invalid("audit writer stopped".into()))?,
                None => return Err(StoreError::Invalid("audit writer stopped".into())),
            }
        }
        // A writer gathering a batch sleeps through its window (see `gather`): wake it for a
        // job somebody waits for.
        if urgent
            && let Ok(join) = self.join.lock()
            && let Some(j) = join.as_ref()
        {
            j.thread().unpark();
        }
        Ok(())
    }

    /// Writes an intent record: returns once it is journaled (journal open) or committed.
    pub async fn intent(&self, rec: &AuditRecord) -> Result<IntentRef, StoreError> {
        let link = IntentRef::default();
        if let Some(journal) = self.shared.journal.get() {
            journal.append(Entry::Intent(rec), |j| {
                link.set_journal(j);
                self.send(Job::Insert {
                    rec: Box::new(rec.clone()),
                    phase: Some("intent"),
                    reply: None,
                    link: Some(link.clone()),
                    journal: Some(j),
                })
            })?;
            return Ok(link);
        }
        let (reply, done) = tokio::sync::oneshot::channel();
        self.send(Job::Insert {
            rec: Box::new(rec.clone()),
            phase: Some("intent"),
            reply: Some(reply),
            link: Some(link.clone()),
            journal: None,
        })?;
        match done.await {
            Ok(Ok(_)) => Ok(link),
            Ok(Err(e)) => Err(StoreError::Invalid(format!("audit write failed: {e}"))),
            Err(_) => Err(StoreError::Invalid("audit writer stopped".into())),
        }
    }

    /// Binds a task through the journal (`None` when no journal is open: the caller commits
    /// the binding itself). `lookup` reads the committed owner of the task; it runs under the
    /// pending-bindings lock, so two binds of one task cannot both find it unbound.
    pub fn bind(
        &self,
        b: &TaskBinding,
        lookup: impl FnOnce() -> Result<Option<(String, String)>, StoreError>,
    ) -> Result<Option<BindOutcome>, StoreError> {
        let Some(journal) = self.shared.journal.get() else {
            return Ok(None);
        };
        let mut pending = self
            .shared
            .pending
            .lock()
            .map_err(|_| StoreError::Poisoned)?;
        let key = (b.endpoint.clone(), b.task_id.clone());
        if let Some((ws, agent)) = pending.get(&key) {
            return Ok(Some(BindOutcome::Existing(ws.clone(), agent.clone())));
        }
        if let Some((ws, agent)) = lookup()? {
            return Ok(Some(BindOutcome::Existing(ws, agent)));
        }
        journal.append(Entry::Binding(b), |j| {
            self.send(Job::Bind {
                binding: Box::new(b.clone()),
                journal: j,
            })
        })?;
        pending.insert(key, (b.workspace_id.clone(), b.agent_id.clone()));
        Ok(Some(BindOutcome::New))
    }

    /// Writes a completed send record through the journal: `Ok(false)` when no journal is
    /// open (the caller writes it itself). `committed` runs once its batch has committed.
    pub fn send_record(
        &self,
        row: &SendRow,
        sweep_before: Option<i64>,
        committed: OnCommit,
    ) -> Result<bool, StoreError> {
        let Some(journal) = self.shared.journal.get() else {
            return Ok(false);
        };
        journal.append(Entry::Send(row), |j| {
            self.send(Job::Send {
                row: Box::new(row.clone()),
                journal: j,
                sweep_before,
                committed: Some(committed),
            })
        })?;
        Ok(true)
    }

    /// Whether the intent journal is open (the serving process).
    pub fn journaled(&self) -> bool {
        self.shared.journal.get().is_some()
    }

    /// The owner of a task bound through the journal and not yet committed.
    pub fn pending_owner(&self, endpoint: &str, task_id: &str) -> Option<(String, String)> {
        self.shared.journal.get()?;
        let pending = self.shared.pending.lock().ok()?;
        pending
            .get(&(endpoint.to_owned(), task_id.to_owned()))
            .cloned()
    }

    /// Whether bindings are waiting for the writer's next batch.
    pub fn has_pending_bindings(&self) -> bool {
        self.shared
            .pending
            .lock()
            .map(|p| !p.is_empty())
            .unwrap_or(false)
    }

    /// Queues a (completion) record for the next batch; does not wait for the commit.
    /// `intent` names the intent record it completes (else `rec.intent_seq` is used as it
    /// is). With the journal open the record is journaled first (one `write(2)`), so a hop's
    /// outcome survives the process once this returns: call it before the answer leaves.
    pub fn enqueue(&self, rec: &AuditRecord, intent: Option<&IntentRef>) -> Result<(), StoreError> {
        let job = |journal| Job::Insert {
            rec: Box::new(rec.clone()),
            phase: None,
            reply: None,
            link: intent.cloned(),
            journal,
        };
        let Some(journal) = self.shared.journal.get() else {
            return self.send(job(None));
        };
        let of = intent.and_then(IntentRef::journal);
        let of_seq = intent.and_then(IntentRef::seq).or(rec.intent_seq);
        let mut queued = false;
        let journaled = journal.append(Entry::Completion(rec, of, of_seq), |j| {
            queued = true;
            self.send(job(Some(j)))
        });
        match journaled {
            Err(e) if !queued => {
                // The line could not be written (disk full?): the record still goes to the
                // writer, only without the journal's guarantee.
                tracing::error!(trace_id = %rec.trace_id, "completion record not journaled: {e}");
                self.send(job(None))
            }
            other => other,
        }
    }

    /// Blocks until every record queued so far has committed (the job drops the sender then).
    pub fn flush(&self) {
        let (tx, rx) = channel::<()>();
        if self.send(Job::Flush(Box::new(move || drop(tx)))).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Waits (without blocking the thread) until every record queued so far has committed.
    pub async fn flushed(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        if self.send(Job::Flush(Box::new(move || drop(tx)))).is_ok() {
            let _ = rx.await;
        }
    }

    /// Queues a task status record for the next batch; does not wait.
    pub fn status(&self, row: TaskStatusRow) -> Result<(), StoreError> {
        let owner = owner_key(&row.workspace_id, &row.agent_id);
        let row = Arc::new(row);
        if let Ok(mut m) = self.shared.statuses_by_owner.lock() {
            m.entry(owner).or_default().push(row.clone());
        }
        self.send(Job::Status(row.clone())).inspect_err(|_| {
            self.shared.forget(&row);
        })
    }

    /// The bindings and status records of `workspace_id`'s agent `agent_id` at `endpoint`
    /// that wait for the writer, as they stand now.
    pub(crate) fn pending_of(
        &self,
        workspace_id: &str,
        agent_id: &str,
        endpoint: &str,
    ) -> Result<PendingRecords, StoreError> {
        // Bindings first: a status record is queued after its task's binding, so a record
        // seen here has its binding seen here or committed.
        let bound = {
            let p = self
                .shared
                .pending
                .lock()
                .map_err(|_| StoreError::Poisoned)?;
            p.iter()
                .filter(|((e, _), (w, a))| e == endpoint && w == workspace_id && a == agent_id)
                .map(|((_, t), _)| t.clone())
                .collect()
        };
        let rows = {
            let m = self
                .shared
                .statuses_by_owner
                .lock()
                .map_err(|_| StoreError::Poisoned)?;
            m.get(&owner_key(workspace_id, agent_id))
                .map(|rows| {
                    rows.iter()
                        .filter(|r| {
                            r.endpoint == endpoint
                                && r.workspace_id == workspace_id
                                && r.agent_id == agent_id
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(PendingRecords { bound, rows })
    }

    /// Whether task status records wait for the writer's next batch.
    pub fn has_pending_statuses(&self) -> bool {
        self.shared
            .statuses_by_owner
            .lock()
            .map_or(true, |m| !m.is_empty())
    }
}

impl AuditWriter {
    /// Attaches the gateway's metrics (the first attached stays).
    pub fn set_metrics(&self, m: crate::metrics::Metrics) {
        let _ = self.shared.metrics.set(m);
    }
}

impl Drop for AuditWriter {
    fn drop(&mut self) {
        // Closing the channel lets the thread commit what is queued and end.
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        if let Ok(mut join) = self.join.lock()
            && let Some(j) = join.take()
        {
            let _ = j.join();
        }
    }
}

/// Takes what is queued after `batch[0]`: everything at once while somebody waits for the
/// batch (or without a journal), else for up to [`BATCH_WINDOW`]. Through the window the
/// writer sleeps rather than waking for each row (a wake-up per row cost each hop several
/// futex calls and context switches); a job somebody waits for wakes it
/// (`AuditWriter::send`).
///
/// A flush ends the batch: it waits only for what was queued before it, not for the rows
/// queued after it too.
fn gather(rx: &Receiver<Job>, batch: &mut Vec<Job>, window: bool) {
    let deadline = Instant::now() + BATCH_WINDOW;
    while batch.len() < MAX_BATCH {
        if matches!(batch.last(), Some(Job::Flush(_))) {
            return;
        }
        match rx.try_recv() {
            Ok(job) => {
                batch.push(job);
                continue;
            }
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {}
        }
        if !window || batch.iter().any(Job::waited_for) {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::park_timeout(left);
    }
}

/// The writer loop: take one job (blocking), then what else is queued, commit, answer, and
/// checkpoint the WAL when it is due.
fn run(
    conn: &Mutex<Connection>,
    rx: &Receiver<Job>,
    shared: &Shared,
    mut checkpointer: Option<Checkpointer>,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        gather(rx, &mut batch, shared.journal.get().is_some());
        let started = Instant::now();
        let (results, journaled) = commit(conn, &batch);
        if let Some(m) = shared.metrics.get() {
            m.store(
                "audit_batch",
                started.elapsed(),
                results.iter().all(Result::is_ok),
            );
        }
        if let (Some(j), Some(journal)) = (journaled, shared.journal.get()) {
            journal.committed(j);
        }
        // Committed bindings are in the database now (the transaction has ended, so taking
        // the pending lock here keeps the lock order). A failed batch leaves them pending:
        // still enforced here, and in the journal for the next start.
        if results.iter().all(Result::is_ok)
            && batch.iter().any(|j| matches!(j, Job::Bind { .. }))
            && let Ok(mut pending) = shared.pending.lock()
        {
            for job in &batch {
                if let Job::Bind { binding, .. } = job {
                    pending.remove(&(binding.endpoint.clone(), binding.task_id.clone()));
                }
            }
        }
        for job in &batch {
            if let Job::Status(row) = job {
                shared.forget(row);
            }
        }
        let rows = batch.len();
        for (job, result) in batch.into_iter().zip(results) {
            match job {
                Job::Send { row, committed, .. } => {
                    if let Err(e) = result {
                        tracing::error!(message_id = %row.message_id, "send record not committed: {e}");
                    } else if let Some(f) = committed {
                        f();
                    }
                }
                Job::Insert {
                    reply: Some(reply), ..
                } => {
                    let _ = reply.send(result);
                }
                Job::Insert {
                    reply: None, rec, ..
                } => {
                    if let Err(e) = result {
                        tracing::error!(trace_id = %rec.trace_id, "audit write failed: {e}");
                    }
                }
                Job::Bind { binding, .. } => {
                    if let Err(e) = result {
                        tracing::error!(task = %binding.task_id, "task binding not committed: {e}");
                    }
                }
                Job::Status(row) => {
                    if let Err(e) = result {
                        tracing::warn!(task = %row.task_id, "task status not recorded: {e}");
                    }
                }
                Job::Flush(done) => done(),
            }
        }
        // After the answers: nobody waits for the checkpoint.
        if let Some(c) = checkpointer.as_mut() {
            c.committed(rows);
        }
    }
}
