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
use std::sync::Arc;

use a2a_pg::{Pool, PoolOptions};
use tokio::sync::{Mutex, oneshot};

use super::super::pg_schema::{COMPONENT, PG_MIGRATIONS};
use super::super::retention::Measure;
use super::super::{AuditRecord, IntentRef, StoreError};
use super::PgRegistry;
use super::pg_audit_rows::{Row, insert_rows, linked};
pub use super::pg_writer::PIPELINE;
use super::pg_writer::Writer;

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
