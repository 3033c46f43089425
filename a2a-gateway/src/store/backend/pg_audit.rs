//! The audit log on PostgreSQL, shared by replicas: the writer here, reads and retention in
//! `pg_audit_read`.
//!
//! Each replica has one writer task (`pg_writer`), shared with the replica's other durable
//! writes (claims, bindings, status records). Records are queued to it
//! ([`AuditStore::enqueue`] returns at once); it commits the rows queued by every hop in
//! flight as one multi-row `INSERT … SELECT FROM unnest(…)` inside the batch's transaction,
//! with the other writes of the batch, up to [`PIPELINE`] batches in flight at once. There is
//! no timer: a lone record waits for one commit.
//!
//! Guarantees, as the SQLite writer gives them:
//! - [`AuditStore::intent`] and [`AuditStore::durable`] return once the batch holding the
//!   record has committed. When that batch fails, the waiting caller inserts its own record
//!   once more, alone, and returns that statement's error: a database that cannot be reached is
//!   [`StoreError::is_unavailable`], within the pool's connect and wait times.
//! - An intent's sequence number comes from the table's identity before the batch is sent
//!   (`nextval`), so the [`IntentRef`] names its row; it is set once the batch has committed.
//! - Queued records ([`AuditStore::enqueue`]) are committed in the next batch; when that batch
//!   fails they are inserted once more on their own, and dropped (logged) when that fails too.
//! - [`AuditStore::flushed`] waits for every batch taken before it; dropping the last handle
//!   lets the writer commit what is queued and end.
//!
//! Sequence numbers are unique across replicas (one identity) but batches of several replicas,
//! or several batches in flight, commit in any order: a reader may see a row before a row with
//! a smaller number that commits a moment later. Readers of a replica see its own queued
//! records (they flush first) and every replica's committed ones.

use std::future::Future;
use std::sync::{Arc, LazyLock};

use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::{Pool, PoolOptions};
use tokio::sync::{Mutex, oneshot};

use super::super::pg_schema::{COMPONENT, PG_MIGRATIONS};
use super::super::retention::Measure;
use super::super::{AuditRecord, IntentRef, StoreError};
use super::PgRegistry;
pub use super::pg_writer::PIPELINE;
use super::pg_writer::{Client, Writer};

/// One record for the writer.
pub(super) struct Row {
    rec: Box<AuditRecord>,
    /// An intent record (its row gets its sequence number before the insert).
    intent: bool,
    /// Intent: where its sequence number goes; completion: the intent it completes.
    link: Option<IntentRef>,
    /// Told whether the batch committed, when somebody waits for it.
    done: Option<oneshot::Sender<bool>>,
}

impl Row {
    /// Tells a waiter whether the record was committed; a queued record not committed is
    /// logged.
    pub(super) fn answer(self, committed: bool) {
        match self.done {
            Some(done) => {
                let _ = done.send(committed);
            }
            None if !committed => {
                tracing::error!(trace_id = %self.rec.trace_id, "audit record dropped");
            }
            None => {}
        }
    }
}

/// The audit log on PostgreSQL (see the module doc). Cheap to clone; the clones share one
/// writer, which ends once the last clone is dropped (after committing what is queued).
#[derive(Clone)]
pub struct PgAudit {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    writer: Writer,
    /// The retention's measure of the audit (see `pg_audit_read`).
    measure: Mutex<Measure>,
}

impl PgAudit {
    /// Connects to the database at `url` (`postgres://…`), applies the gateway's migrations
    /// (once across replicas) and starts this replica's writer. Call it inside the runtime.
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<PgAudit, StoreError> {
        let pool = a2a_pg::pool(url, opts)?;
        {
            let mut c = pool.get().await?;
            a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
        }
        let writer = Writer::start(pool.clone());
        Ok(PgAudit::on(pool, writer))
    }

    /// The audit on `pool` (migrated already), written by `writer`.
    fn on(pool: Pool, writer: Writer) -> PgAudit {
        PgAudit {
            inner: Arc::new(Inner {
                pool,
                writer,
                measure: Mutex::default(),
            }),
        }
    }

    /// The pool.
    pub(super) fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The retention's measure.
    pub(super) fn measure(&self) -> &Mutex<Measure> {
        &self.inner.measure
    }

    /// Queues `rec` for the next batch (never waits); `done` is told whether it committed.
    pub(super) fn queue(
        &self,
        rec: &AuditRecord,
        intent: bool,
        link: Option<IntentRef>,
        done: Option<oneshot::Sender<bool>>,
    ) -> Result<(), StoreError> {
        self.inner.writer.row(Row {
            rec: Box::new(rec.clone()),
            intent,
            link,
            done,
        })
    }

    /// Queues `rec` and returns once it is committed (see the module doc).
    pub(super) async fn write(
        &self,
        rec: &AuditRecord,
        intent: bool,
        link: Option<IntentRef>,
    ) -> Result<(), StoreError> {
        self.queued(rec, intent, link)?.await
    }

    /// Queues `rec` now; the future returns once it is committed (see the module doc).
    pub(super) fn queued(
        &self,
        rec: &AuditRecord,
        intent: bool,
        link: Option<IntentRef>,
    ) -> Result<impl Future<Output = Result<(), StoreError>> + Send + 'static, StoreError> {
        let (done, committed) = oneshot::channel();
        self.queue(rec, intent, link.clone(), Some(done))?;
        let (pool, rec) = (self.inner.pool.clone(), rec.clone());
        Ok(async move {
            if matches!(committed.await, Ok(true)) {
                return Ok(());
            }
            // The batch failed (or the writer stopped): this record alone, once more, so the
            // caller gets the statement's own error.
            let row = Row {
                rec: Box::new(rec),
                intent,
                link,
                done: None,
            };
            let c = pool.get().await?;
            let seqs = insert_rows(&c, std::slice::from_ref(&row)).await?;
            linked(std::slice::from_ref(&row), &seqs);
            Ok(())
        })
    }

    /// Returns once every batch taken so far has committed or failed.
    pub(super) async fn flush(&self) {
        self.inner.writer.flush().await;
    }
}

impl PgRegistry {
    /// The audit log on the same database and pool as this registry, written by the
    /// registry's writer (one per replica, shared with [`PgRegistry::records`]).
    pub fn audit(&self) -> PgAudit {
        PgAudit::on(self.pool().clone(), self.writer().clone())
    }
}

/// Gives the intents of a committed batch their sequence numbers.
pub(super) fn linked(rows: &[Row], seqs: &[Option<i64>]) {
    for (row, seq) in rows.iter().zip(seqs) {
        if let (true, Some(link), Some(seq)) = (row.intent, &row.link, seq) {
            link.set_seq(*seq);
        }
    }
}

/// The audit's columns, in the order [`insert`] binds them.
const COLUMNS: &str = "seq, ts, trace_id, workspace_id, key_id, target, operation,
    client_method, peer_method, client_version, client_binding, peer_version, peer_binding,
    decision, status, latency_ms, error_code, phase, intent_of, task_id, governance,
    signature_trust";

/// One statement for a whole batch: the rows as arrays, one per column. A row without a
/// sequence number takes the identity's next.
static INSERT: LazyLock<String> = LazyLock::new(insert_sql);

fn insert_sql() -> String {
    let types = [
        "bigint", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text",
        "text", "text", "text", "bigint", "bigint", "text", "text", "bigint", "text", "text",
        "text",
    ];
    let arrays: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("${}::{t}[]", i + 1))
        .collect();
    let select = COLUMNS.replacen(
        "seq,",
        "coalesce(seq, nextval(pg_get_serial_sequence('audit', 'seq')::regclass)),",
        1,
    );
    format!(
        "INSERT INTO audit({COLUMNS}) OVERRIDING SYSTEM VALUE
         SELECT {select} FROM unnest({}) AS u({COLUMNS})",
        arrays.join(", ")
    )
}

/// One optional text column of `recs`.
fn column<'a>(
    recs: &[&'a AuditRecord],
    f: fn(&'a AuditRecord) -> Option<&'a str>,
) -> Vec<Option<&'a str>> {
    recs.iter().copied().map(f).collect()
}

/// Inserts `rows` in one statement; returns each row's sequence number where it was taken
/// before the insert (the intents').
pub(super) async fn insert_rows(c: &Client, rows: &[Row]) -> Result<Vec<Option<i64>>, StoreError> {
    let intents = rows.iter().filter(|r| r.intent).count();
    let mut seq: Vec<Option<i64>> = vec![None; rows.len()];
    if intents > 0 {
        let st = c
            .prepare_cached(
                "SELECT nextval(pg_get_serial_sequence('audit', 'seq')::regclass)
                 FROM generate_series(1, $1::int)",
            )
            .await?;
        let n = i32::try_from(intents).unwrap_or(i32::MAX);
        let taken = c.query(&st, &[&n]).await?;
        let mut taken = taken.iter().map(|r| r.get::<_, i64>(0));
        for (i, r) in rows.iter().enumerate() {
            if r.intent {
                seq[i] = taken.next();
            }
        }
    }
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let recs: Vec<&AuditRecord> = rows.iter().map(|r| &*r.rec).collect();
    let text = |f: fn(&AuditRecord) -> Option<&str>| column(&recs, f);
    let ts: Vec<&str> = recs
        .iter()
        .map(|r| if r.ts.is_empty() { &now } else { &r.ts })
        .map(String::as_str)
        .collect();
    let trace: Vec<&str> = recs.iter().map(|r| r.trace_id.as_str()).collect();
    let decision: Vec<&str> = recs.iter().map(|r| r.decision.as_str()).collect();
    let status: Vec<i64> = recs.iter().map(|r| r.status).collect();
    let latency: Vec<i64> = recs.iter().map(|r| r.latency_ms).collect();
    let phase: Vec<Option<&str>> = rows.iter().map(|r| r.intent.then_some("intent")).collect();
    let intent_of: Vec<Option<i64>> = rows
        .iter()
        .map(|r| match r.intent {
            true => None,
            false => r
                .link
                .as_ref()
                .and_then(IntentRef::seq)
                .or(r.rec.intent_seq),
        })
        .collect();
    let governance: Vec<Option<String>> = recs
        .iter()
        .map(|r| r.governance.as_ref().map(|g| g.to_string()))
        .collect();
    let (workspace, key, target) = (
        text(|r| r.workspace_id.as_deref()),
        text(|r| r.key_id.as_deref()),
        text(|r| r.target.as_deref()),
    );
    let (operation, client_method, peer_method) = (
        text(|r| r.operation.as_deref()),
        text(|r| r.client_method.as_deref()),
        text(|r| r.peer_method.as_deref()),
    );
    let (client_version, client_binding) = (
        text(|r| r.client_version.as_deref()),
        text(|r| r.client_binding.as_deref()),
    );
    let (peer_version, peer_binding) = (
        text(|r| r.peer_version.as_deref()),
        text(|r| r.peer_binding.as_deref()),
    );
    let (error_code, task_id, trust) = (
        text(|r| r.error_code.as_deref()),
        text(|r| r.task_id.as_deref()),
        text(|r| r.signature_trust.as_deref()),
    );
    let params: [&(dyn ToSql + Sync); 22] = [
        &seq,
        &ts,
        &trace,
        &workspace,
        &key,
        &target,
        &operation,
        &client_method,
        &peer_method,
        &client_version,
        &client_binding,
        &peer_version,
        &peer_binding,
        &decision,
        &status,
        &latency,
        &error_code,
        &phase,
        &intent_of,
        &task_id,
        &governance,
        &trust,
    ];
    let st = c.prepare_cached(&INSERT).await?;
    c.execute(&st, &params).await?;
    Ok(seq)
}
