//! The audit log behind one trait with two backends (issue 32, docs/replicas.md), in the
//! registry's design ([`super::RegistryStore`]): async methods returning `Send` futures, an
//! enum ([`Audit`]) chosen at start rather than a trait object.
//!
//! Writes are not a statement per hop. [`AuditStore::enqueue`] only queues a record for the
//! backend's writer and returns at once; [`AuditStore::intent`] and [`AuditStore::durable`]
//! return once the record survives the process, for what must be on record before a peer is
//! called or an answer leaves:
//! - [`SqliteAudit`](super::SqliteAudit): today's group-commit writer thread, called in place
//!   (with the intent journal open, "durable" is the journal line written before the call
//!   returns, as the serving gateway does today; without it, the batch's commit);
//! - [`PgAudit`](super::PgAudit): a writer task per replica that commits what is queued in
//!   batches, one multi-row `INSERT` per batch, several batches in flight at once; "durable"
//!   is the batch's commit.
//!
//! Reads (the console's hop pages, a hop's records, the export, the admin audit) first wait
//! for what this replica queued, then read the table, so they see every replica's committed
//! records. Retention deletes the oldest rows by age and by the audit's size, a batch per call.

use std::future::Future;

use super::rows::AdminAuditRecord;
use super::{PgAudit, SqliteAudit};
use crate::store::{
    AuditRecord, AuditRetention, HopFilter, IntentRef, RetentionState, StoreError, Trimmed,
};

/// The audit log and the admin audit, on either backend (see the module doc).
pub trait AuditStore: Clone + Send + Sync + 'static {
    /// Writes the intent record of a hop about to call its peer; returns once it survives the
    /// process. The [`IntentRef`] links the hop's completion record to it.
    fn intent(
        &self,
        rec: &AuditRecord,
    ) -> impl Future<Output = Result<IntentRef, StoreError>> + Send;

    /// Queues a record for the writer's next batch and returns at once (never waits for the
    /// database); `intent` names the intent record it completes. Readers of this replica see
    /// it; a record queued when the process dies may be lost (SQLite with the intent journal
    /// open: journaled first, so it is not).
    fn enqueue(&self, rec: &AuditRecord, intent: Option<&IntentRef>) -> Result<(), StoreError>;

    /// Writes a record that must be on record before the hop's answer leaves; returns once it
    /// survives the process.
    fn durable(
        &self,
        rec: &AuditRecord,
        intent: Option<&IntentRef>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Returns once every record this replica queued so far is committed (or failed, logged).
    fn flushed(&self) -> impl Future<Output = ()> + Send;

    /// Appends an admin audit row (committed when this returns); returns its sequence number.
    fn append_admin(
        &self,
        rec: &AdminAuditRecord,
    ) -> impl Future<Output = Result<i64, StoreError>> + Send;

    /// Hops after sequence number `after`, oldest first, at most `limit`, optionally of one
    /// workspace and target: one record per hop (an intent record only while nothing completes
    /// it, then with `outcome = "incomplete"`). What `admin audit-export` pages through.
    fn records(
        &self,
        workspace_id: Option<&str>,
        target: Option<&str>,
        after: i64,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<AuditRecord>, StoreError>> + Send;

    /// One hop per row, newest first, with `seq < before` (`None`: from the newest), at most
    /// `limit` (1..=1000): the console's hop pages.
    fn hop_page(
        &self,
        f: &HopFilter,
        before: Option<i64>,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<AuditRecord>, StoreError>> + Send;

    /// Hops newer than `after`, newest first, at most `limit` (the console's live updates).
    fn hops_after(
        &self,
        f: &HopFilter,
        after: i64,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<AuditRecord>, StoreError>> + Send;

    /// How many hops match `f` (one per hop, as the pages count them; reads every matching
    /// row's index entry).
    fn hop_count(&self, f: &HopFilter) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// One audit row by its sequence number (a hop's detail).
    fn record(
        &self,
        seq: i64,
    ) -> impl Future<Output = Result<Option<AuditRecord>, StoreError>> + Send;

    /// Every audit row of a trace (intent and final records), oldest first, at most 100.
    fn trace_records(
        &self,
        trace_id: &str,
    ) -> impl Future<Output = Result<Vec<AuditRecord>, StoreError>> + Send;

    /// `(ts, latency_ms)` of an agent's finished hops at or after `since` (RFC 3339), newest
    /// first, at most `limit`.
    fn latency_samples(
        &self,
        ws: &str,
        agent: &str,
        since: &str,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<(String, i64)>, StoreError>> + Send;

    /// The newest refused hop of an agent, if any.
    fn last_refusal(
        &self,
        ws: &str,
        agent: &str,
    ) -> impl Future<Output = Result<Option<AuditRecord>, StoreError>> + Send {
        let f = HopFilter {
            workspace: Some(ws.into()),
            agent: Some(agent.into()),
            decision: Some("refused".into()),
            ..HopFilter::default()
        };
        async move { Ok(self.hop_page(&f, None, 1).await?.into_iter().next()) }
    }

    /// Admin audit rows after `after`, oldest first, optionally of one workspace.
    fn admin_records(
        &self,
        workspace_id: Option<&str>,
        after: i64,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<AdminAuditRecord>, StoreError>> + Send;

    /// Deletes the oldest rows `rule` no longer keeps (older than its age; past its byte
    /// bound, oldest first until 10 % under it), at most `rule.batch` of them, in one short
    /// transaction; the newest row always stays. Call it again while it deletes rows.
    fn trim(
        &self,
        rule: &AuditRetention,
    ) -> impl Future<Output = Result<Trimmed, StoreError>> + Send;

    /// The retention counters: up to which `seq` rows were deleted, how many, when last.
    fn retention_state(&self) -> impl Future<Output = Result<RetentionState, StoreError>> + Send;

    /// The audit's bytes as the size rule counts them, measured row by row (reads the whole
    /// audit: for tests and checks, not for a request path).
    fn audit_bytes(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// The audit log on the backend chosen at start (see the module doc).
#[derive(Clone)]
pub enum Audit {
    /// The embedded SQLite file (one process).
    Sqlite(SqliteAudit),
    /// PostgreSQL, shared by replicas.
    Postgres(PgAudit),
}

/// Calls the same method on whichever backend `self` is.
macro_rules! either {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self {
            Audit::Sqlite(r) => r.$m($($a),*).await,
            Audit::Postgres(r) => r.$m($($a),*).await,
        }
    };
}

impl AuditStore for Audit {
    async fn intent(&self, rec: &AuditRecord) -> Result<IntentRef, StoreError> {
        either!(self.intent(rec))
    }
    fn enqueue(&self, rec: &AuditRecord, intent: Option<&IntentRef>) -> Result<(), StoreError> {
        match self {
            Audit::Sqlite(r) => r.enqueue(rec, intent),
            Audit::Postgres(r) => r.enqueue(rec, intent),
        }
    }
    async fn durable(
        &self,
        rec: &AuditRecord,
        intent: Option<&IntentRef>,
    ) -> Result<(), StoreError> {
        either!(self.durable(rec, intent))
    }
    async fn flushed(&self) {
        either!(self.flushed())
    }
    async fn append_admin(&self, rec: &AdminAuditRecord) -> Result<i64, StoreError> {
        either!(self.append_admin(rec))
    }
    async fn records(
        &self,
        workspace_id: Option<&str>,
        target: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        either!(self.records(workspace_id, target, after, limit))
    }
    async fn hop_page(
        &self,
        f: &HopFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        either!(self.hop_page(f, before, limit))
    }
    async fn hops_after(
        &self,
        f: &HopFilter,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        either!(self.hops_after(f, after, limit))
    }
    async fn hop_count(&self, f: &HopFilter) -> Result<u64, StoreError> {
        either!(self.hop_count(f))
    }
    async fn record(&self, seq: i64) -> Result<Option<AuditRecord>, StoreError> {
        either!(self.record(seq))
    }
    async fn trace_records(&self, trace_id: &str) -> Result<Vec<AuditRecord>, StoreError> {
        either!(self.trace_records(trace_id))
    }
    async fn latency_samples(
        &self,
        ws: &str,
        agent: &str,
        since: &str,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        either!(self.latency_samples(ws, agent, since, limit))
    }
    async fn admin_records(
        &self,
        workspace_id: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AdminAuditRecord>, StoreError> {
        either!(self.admin_records(workspace_id, after, limit))
    }
    async fn trim(&self, rule: &AuditRetention) -> Result<Trimmed, StoreError> {
        either!(self.trim(rule))
    }
    async fn retention_state(&self) -> Result<RetentionState, StoreError> {
        either!(self.retention_state())
    }
    async fn audit_bytes(&self) -> Result<u64, StoreError> {
        either!(self.audit_bytes())
    }
}

/// A boxed wait for a record's commit.
pub(super) type Wait = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

tokio::task_local! {
    /// The records of the request being answered, to be committed before its answer leaves
    /// ([`answered`]).
    static PENDING: std::cell::RefCell<Vec<Wait>>;
}

impl Audit {
    /// Writes a request's record so that it is on record before the request's answer leaves:
    /// on SQLite queued (with the intent journal open, journaled before this returns); on
    /// PostgreSQL handed to [`answered`], which awaits its commit before the answer (queued,
    /// not awaited, outside it). A failure is logged (the answer still goes: the hop happened).
    pub fn write(&self, rec: &AuditRecord, intent: Option<&IntentRef>) {
        if let Audit::Postgres(pg) = self
            && answering()
        {
            // Queued now, so it shares a commit with what the hop queued before it (the
            // completion of its claim); awaited before the answer leaves.
            match pg.queued(rec, false, intent.cloned()) {
                Ok(committed) => {
                    let trace = rec.trace_id.clone();
                    let _ = defer(Box::pin(async move {
                        if let Err(e) = committed.await {
                            tracing::error!(trace_id = %trace, "audit write failed: {e}");
                        }
                    }));
                }
                Err(e) => tracing::error!(trace_id = %rec.trace_id, "audit write failed: {e}"),
            }
            return;
        }
        if let Err(e) = self.enqueue(rec, intent) {
            tracing::error!(trace_id = %rec.trace_id, "audit write failed: {e}");
        }
    }
}

/// Hands `wait` (a write's commit) to the [`answered`] layer of the request being answered, to
/// be awaited before its answer leaves, with the request's records (so they can share one
/// commit); gives it back outside such a request (a stream's events, a task of its own).
pub(super) fn defer(wait: Wait) -> Option<Wait> {
    let mut wait = Some(wait);
    let _ = PENDING.try_with(|p| {
        if let Some(w) = wait.take() {
            p.borrow_mut().push(w);
        }
    });
    wait
}

/// Whether a request is being answered inside the [`answered`] layer (so [`defer`] takes a wait).
pub(super) fn answering() -> bool {
    PENDING.try_with(|_| ()).is_ok()
}

/// Runs `answer` (a request's handling, up to its answer), then waits until the records it
/// wrote with [`Audit::write`] on PostgreSQL are committed (the writer's next batch, committed
/// with every other record in flight), and returns the answer.
pub async fn answered<F: Future>(answer: F) -> F::Output {
    PENDING
        .scope(std::cell::RefCell::new(Vec::new()), async move {
            let out = answer.await;
            let waits = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
            for w in waits {
                w.await;
            }
            out
        })
        .await
}

/// Writes the hops after `after` (of one workspace, or all) as JSON lines, oldest first, a
/// page at a time; returns how many (the export of `admin audit-export`, on either backend).
pub async fn export_jsonl<A: AuditStore>(
    audit: &A,
    workspace_id: Option<&str>,
    mut after: i64,
    out: &mut (dyn std::io::Write + Send),
) -> Result<usize, StoreError> {
    let mut n = 0;
    loop {
        let page = audit.records(workspace_id, None, after, 1000).await?;
        if page.is_empty() {
            return Ok(n);
        }
        for rec in &page {
            let line =
                serde_json::to_string(rec).map_err(|e| StoreError::Invalid(e.to_string()))?;
            writeln!(out, "{line}").map_err(|e| StoreError::Invalid(e.to_string()))?;
            after = rec.seq;
            n += 1;
        }
    }
}
