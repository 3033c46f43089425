//! One writer for the audit log that commits in batches (group commit).
//!
//! Every hop writes two audit rows: the intent record before the peer is called and the
//! record that completes it. Committed one by one, each row is its own SQLite transaction
//! (WAL append, page writes, locking); the profile of issue 11 put the audit insert at 13 % of
//! the gateway's CPU. Here a dedicated thread takes every queued row, inserts them all in one
//! transaction and commits once: with one connection a batch is the completion of the last hop
//! plus the intent of the next, with many connections the rows of all hops in flight. There is
//! no timer: the writer commits as soon as it has taken what is queued (at most
//! [`MAX_BATCH`] rows), so a lone hop waits for one commit and nothing else.
//!
//! Guarantees:
//! - [`AuditWriter::intent`] returns only after the transaction holding the intent record has
//!   committed (the intent-before-call rule of the hardening work: a hop whose gateway stops
//!   between the peer call and the answer is still on record, as `incomplete`);
//! - completion records ([`AuditWriter::enqueue`]) are committed in the next batch; readers of
//!   the log call [`AuditWriter::flush`] first, so they see every record of every hop that
//!   has answered; dropping the last handle (and the binary at shutdown) flushes as well.

use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::{AuditRecord, StoreError};

/// Most rows committed in one transaction.
pub(crate) const MAX_BATCH: usize = 256;

type Reply = tokio::sync::oneshot::Sender<Result<i64, String>>;

enum Job {
    /// Insert `rec` (`phase` = `Some("intent")` for intent records); answer with its rowid.
    Insert {
        rec: Box<AuditRecord>,
        phase: Option<&'static str>,
        reply: Option<Reply>,
    },
    /// Answer once everything queued before has committed.
    Flush(Sender<()>),
}

/// Handle to the writer thread (one per store, shared by its clones).
pub(crate) struct AuditWriter {
    tx: Mutex<Option<Sender<Job>>>,
    join: Mutex<Option<JoinHandle<()>>>,
}

impl AuditWriter {
    /// Starts the writer over the store's connection.
    pub fn start(conn: Arc<Mutex<Connection>>) -> AuditWriter {
        let (tx, rx) = channel();
        let join = std::thread::Builder::new()
            .name("a2a-gateway-audit".into())
            .spawn(move || run(&conn, &rx))
            .ok();
        AuditWriter {
            tx: Mutex::new(Some(tx)),
            join: Mutex::new(join),
        }
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        let tx = self.tx.lock().map_err(|_| StoreError::Poisoned)?;
        match tx.as_ref() {
            Some(tx) => tx
                .send(job)
                .map_err(|_| StoreError::Invalid("audit writer stopped".into())),
            None => Err(StoreError::Invalid("audit writer stopped".into())),
        }
    }

    /// Writes an intent record; returns its sequence number once it has committed.
    pub async fn intent(&self, rec: &AuditRecord) -> Result<i64, StoreError> {
        let (reply, done) = tokio::sync::oneshot::channel();
        self.send(Job::Insert {
            rec: Box::new(rec.clone()),
            phase: Some("intent"),
            reply: Some(reply),
        })?;
        match done.await {
            Ok(Ok(seq)) => Ok(seq),
            Ok(Err(e)) => Err(StoreError::Invalid(format!("audit write failed: {e}"))),
            Err(_) => Err(StoreError::Invalid("audit writer stopped".into())),
        }
    }

    /// Queues a (completion) record for the next batch; does not wait.
    pub fn enqueue(&self, rec: &AuditRecord) -> Result<(), StoreError> {
        self.send(Job::Insert {
            rec: Box::new(rec.clone()),
            phase: None,
            reply: None,
        })
    }

    /// Blocks until every record queued so far has committed.
    pub fn flush(&self) {
        let (tx, rx) = channel();
        if self.send(Job::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
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

/// The writer loop: take one job (blocking), then whatever else is queued, commit, answer.
fn run(conn: &Mutex<Connection>, rx: &Receiver<Job>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        let results = commit(conn, &batch);
        for (job, result) in batch.into_iter().zip(results) {
            match job {
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
                Job::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }
}

/// Inserts the batch's records in one transaction; one result per job.
fn commit(conn: &Mutex<Connection>, batch: &[Job]) -> Vec<Result<i64, String>> {
    let fail = |e: String| batch.iter().map(|_| Err(e.clone())).collect();
    let Ok(c) = conn.lock() else {
        return fail("store lock poisoned".into());
    };
    let tx = match c.unchecked_transaction() {
        Ok(tx) => tx,
        Err(e) => return fail(e.to_string()),
    };
    let mut out = Vec::with_capacity(batch.len());
    for job in batch {
        out.push(match job {
            Job::Insert { rec, phase, .. } => {
                super::insert_audit_row(&tx, rec, *phase).map_err(|e| e.to_string())
            }
            Job::Flush(_) => Ok(0),
        });
    }
    if let Err(e) = tx.commit() {
        return fail(e.to_string());
    }
    out
}
