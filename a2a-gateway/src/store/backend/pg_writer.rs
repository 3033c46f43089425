//! A replica's group-commit writer on PostgreSQL (issue 32, docs/replicas.md "Where the time
//! goes"): every durable write of a hop (audit records, idempotency claims and their
//! completion, task bindings and status records) goes through one writer task per replica,
//! which commits what concurrent hops queued in one transaction, so they share one commit and
//! one WAL flush instead of paying one each.
//!
//! The writer takes one job (waiting), then everything else queued (at most `MAX_BATCH` audit
//! rows), and runs the batch on a pooled connection of its own: `BEGIN`, the audit rows as one
//! multi-row insert and every other job's statements, all sent at once (tokio-postgres
//! pipelines the statements of concurrent futures on one connection), then `COMMIT`. It takes
//! the next batch without waiting for that commit: up to [`PIPELINE`] batches are in flight at
//! once. There is no timer: a lone write waits for one commit, as before.
//!
//! A job's caller is answered once the transaction holding its statements has committed, with
//! what its statements returned; so what a hop awaits is on record when it goes on, as when
//! each statement committed alone. When a batch fails for a statement's own reason (a refused
//! row, a deadlock with another replica's batch, a serialization error), it is rolled back and
//! each of its jobs runs once more alone (each statement committing on its own, as before the
//! writer existed), so one job's refusal is that job's answer only. When the database cannot
//! be reached, every job of the batch gets that error (a 503 for the hop), without a retry.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use a2a_pg::deadpool_postgres::{ClientWrapper, Object};
use a2a_pg::{PgError, Pool};
use futures::future::join_all;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::super::StoreError;
use super::super::audit_writer::MAX_BATCH;
use super::pg_audit_rows::{Row, insert_rows, linked};

/// Batches a replica's writer has in flight at once.
pub const PIPELINE: usize = 4;

/// A connection of a batch (inside its transaction, or alone after a failed batch).
pub(super) type Client = ClientWrapper;

/// The statements of one job: a future on the batch's connection.
pub(super) type Step<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// One job's statements, runnable again (alone) after its batch failed.
trait Work: Send {
    /// Runs the statements on `c`, keeping what they returned.
    fn run<'a>(&'a mut self, c: &'a Client) -> Step<'a, ()>;
    /// Answers the caller: what the statements returned once committed, or the error.
    fn done(self: Box<Self>, result: Result<(), StoreError>);
}

/// A job returning `T`, built from a closure making its statements' future.
struct Unit<T, F> {
    f: F,
    out: Option<T>,
    tx: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> Work for Unit<T, F>
where
    T: Send,
    F: for<'a> Fn(&'a Client) -> Step<'a, T> + Send,
{
    fn run<'a>(&'a mut self, c: &'a Client) -> Step<'a, ()> {
        let Unit { f, out, .. } = self;
        let step = f(c);
        Box::pin(async move {
            *out = Some(step.await?);
            Ok(())
        })
    }

    fn done(self: Box<Self>, result: Result<(), StoreError>) {
        let Unit { out, tx, .. } = *self;
        let answer = result.and_then(|()| out.ok_or_else(stopped));
        let _ = tx.send(answer);
    }
}

enum Job {
    /// An audit record (the rows of a batch go in one statement).
    Row(Row),
    Work(Box<dyn Work>),
    /// Answered once every batch taken before it has committed (or failed).
    Flush(oneshot::Sender<()>),
}

/// The same failure for one more caller (errors are not `Clone`): an unreachable database stays
/// [`StoreError::is_unavailable`].
fn copy_of(e: &StoreError) -> StoreError {
    match e.is_unavailable() {
        true => StoreError::Unavailable(e.to_string()),
        false => StoreError::Invalid(e.to_string()),
    }
}

/// The error of a write whose writer ended before answering.
pub(super) fn stopped() -> StoreError {
    StoreError::Invalid("the database writer stopped".into())
}

/// A handle on a replica's writer (see the module doc). Cheap to clone; the writer commits
/// what is queued and ends once the last handle is dropped.
#[derive(Clone)]
pub(super) struct Writer {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Writer {
    /// Starts a writer on `pool` (migrated already). Must be called inside the runtime.
    pub(super) fn start(pool: Pool) -> Writer {
        let (jobs, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(pool, rx));
        Writer { jobs }
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        self.jobs.send(job).map_err(|_| stopped())
    }

    /// Queues an audit record for the next batch.
    pub(super) fn row(&self, row: Row) -> Result<(), StoreError> {
        self.send(Job::Row(row))
    }

    /// Queues the statements `f` makes for the next batch; the receiver gets what they
    /// returned once their transaction has committed.
    pub(super) fn submit<T, F>(
        &self,
        f: F,
    ) -> Result<oneshot::Receiver<Result<T, StoreError>>, StoreError>
    where
        T: Send + 'static,
        F: for<'a> Fn(&'a Client) -> Step<'a, T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.send(Job::Work(Box::new(Unit { f, out: None, tx })))?;
        Ok(rx)
    }

    /// Runs the statements `f` makes in the next batch; returns what they returned once
    /// committed.
    pub(super) async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'a> Fn(&'a Client) -> Step<'a, T> + Send + 'static,
    {
        self.submit(f)?.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Returns once every batch taken so far has committed or failed.
    pub(super) async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Job::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// The writer loop: take one job (waiting), then what else is queued, hand the batch to a
/// task of its own once one of the [`PIPELINE`] slots is free, and go on.
async fn run(pool: Pool, mut rx: mpsc::UnboundedReceiver<Job>) {
    let slots = Arc::new(Semaphore::new(PIPELINE));
    while let Some(first) = rx.recv().await {
        let mut batch = Batch::default();
        let mut flush = None;
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Row(r) => batch.rows.push(r),
                Job::Work(w) => batch.works.push(w),
                // A flush ends the batch: it waits for what came before it only.
                Job::Flush(f) => {
                    flush = Some(f);
                    break;
                }
            }
            if batch.rows.len() < MAX_BATCH && batch.works.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            let pool = pool.clone();
            tokio::spawn(async move {
                batch.commit(&pool).await;
                drop(slot);
            });
        }
        if let Some(f) = flush {
            // Every slot free: every batch taken before the flush has ended.
            if let Ok(all) = slots.acquire_many(PIPELINE as u32).await {
                drop(all);
            }
            let _ = f.send(());
        }
    }
    // Closed: what is in flight ends before the task does.
    let _ = slots.acquire_many(PIPELINE as u32).await;
}

/// What one transaction commits.
#[derive(Default)]
struct Batch {
    rows: Vec<Row>,
    works: Vec<Box<dyn Work>>,
}

impl Batch {
    fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.works.is_empty()
    }

    /// Whether the batch is one job: its statements need no transaction of the writer's (each
    /// job is correct with its statements committing on their own, as [`Batch::alone`] runs
    /// them), so `BEGIN` and `COMMIT` would be two round trips for nothing.
    fn is_lone(&self) -> bool {
        match (self.rows.is_empty(), self.works.len()) {
            (true, n) => n == 1,
            (false, n) => n == 0,
        }
    }

    /// Commits the batch in one transaction and answers its callers; after a failure not
    /// caused by the database being away, runs each job once more alone. A batch of one job
    /// runs alone at once.
    async fn commit(mut self, pool: &Pool) {
        if self.is_lone() {
            return self.alone(pool).await;
        }
        let failed = match pool.get().await {
            Ok(c) => match self.together(&c).await {
                Ok(seqs) => {
                    linked(&self.rows, &seqs);
                    return self.answer(Ok(()));
                }
                Err(e) => {
                    // The transaction may still be open: a connection in an unknown state
                    // does not go back to the pool.
                    if c.batch_execute("ROLLBACK").await.is_err() {
                        drop(Object::take(c));
                    }
                    e
                }
            },
            Err(e) => StoreError::Postgres(PgError::Pool(e)),
        };
        if failed.is_unavailable() {
            tracing::error!(
                rows = self.rows.len(),
                jobs = self.works.len(),
                "database writes not committed: {failed}"
            );
            return self.answer(Err(failed));
        }
        tracing::warn!(
            rows = self.rows.len(),
            jobs = self.works.len(),
            "a batch of database writes was rolled back ({failed}); each goes again alone"
        );
        self.alone(pool).await;
    }

    /// `BEGIN`, every statement of the batch (pipelined behind it: the `BEGIN` is sent first,
    /// its answer not awaited before the statements go), `COMMIT`; the intents' sequence
    /// numbers.
    async fn together(&mut self, c: &Client) -> Result<Vec<Option<i64>>, StoreError> {
        let begin = async { c.batch_execute("BEGIN").await.map_err(StoreError::from) };
        let rows = &self.rows;
        let audit = async move {
            match rows.is_empty() {
                true => Ok(Vec::new()),
                false => insert_rows(c, rows).await,
            }
        };
        let works = join_all(self.works.iter_mut().map(|w| w.run(c)));
        // `join!` polls in order: the `BEGIN` is queued on the connection before any statement.
        let (begun, seqs, ran) = futures::join!(begin, audit, works);
        begun?;
        let seqs = seqs?;
        ran.into_iter().collect::<Result<Vec<()>, StoreError>>()?;
        c.batch_execute("COMMIT").await?;
        Ok(seqs)
    }

    /// Tells every caller `result` (dropped queued audit records are logged).
    fn answer(self, result: Result<(), StoreError>) {
        let ok = result.is_ok();
        for row in self.rows {
            row.answer(ok);
        }
        for w in self.works {
            let r = match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(copy_of(e)),
            };
            w.done(r);
        }
    }

    /// Each job alone, its statements committing on their own; the audit rows in one
    /// statement.
    async fn alone(self, pool: &Pool) {
        let c = match pool.get().await {
            Ok(c) => c,
            Err(e) => return self.answer(Err(StoreError::Postgres(PgError::Pool(e)))),
        };
        if !self.rows.is_empty() {
            let inserted = insert_rows(&c, &self.rows).await;
            match &inserted {
                Ok(seqs) => linked(&self.rows, seqs),
                Err(e) => tracing::error!(rows = self.rows.len(), "audit batch not committed: {e}"),
            }
            for row in self.rows {
                row.answer(inserted.is_ok());
            }
        }
        for mut w in self.works {
            let r = w.run(&c).await;
            w.done(r);
        }
    }
}
