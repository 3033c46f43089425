//! Which registry epoch a PostgreSQL replica reads at (the version its registry cache is
//! valid for; docs/replicas.md, "How a change reaches every replica").
//!
//! Every registry write moves the one-row `registry_epoch` and raises a notification on
//! [`REGISTRY_CHANNEL`] (triggers, `pg_schema`). A [`Listener`] hears them: on each one (and on
//! every (re)connection, after which some may have been missed) a watcher task reads the epoch
//! and moves [`Epoch::known`] forward. While the listener is connected a cached read takes the
//! epoch from memory, with no round trip; while it is not (or after the watcher could not read
//! the epoch), every cached read asks the table first, as the SQLite store always does. A
//! write through this replica moves the epoch forward itself before it returns, so the writer
//! reads its own change at once; other replicas see it once the notification has arrived.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use a2a_pg::{Listener, Pool};
use tokio::sync::broadcast::error::RecvError;

use super::super::StoreError;
use super::super::pg_schema::REGISTRY_CHANNEL;

/// How often a lost notification connection is retried.
const RETRY: Duration = Duration::from_millis(500);

/// The epoch a replica reads at (see the module doc). Dropping it stops its listener.
pub(super) struct Epoch {
    known: Arc<AtomicI64>,
    /// Set when the watcher could not read the epoch after a notification: reads ask the
    /// table until one succeeds.
    stale: Arc<AtomicBool>,
    listener: Listener,
    watcher: tokio::task::JoinHandle<()>,
    /// Reads of the epoch made because the listener was away (polls).
    polls: AtomicU64,
}

impl Drop for Epoch {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

/// The epoch in the table.
pub(super) async fn read(pool: &Pool) -> Result<i64, StoreError> {
    let c = pool.get().await.map_err(a2a_pg::PgError::from)?;
    let st = c
        .prepare_cached("SELECT epoch FROM registry_epoch WHERE id = 1")
        .await
        .map_err(a2a_pg::PgError::from)?;
    let row = c.query_one(&st, &[]).await.map_err(a2a_pg::PgError::from)?;
    Ok(row.get(0))
}

impl Epoch {
    /// Starts listening with the connection settings `config`, reading through `pool`.
    pub async fn start(
        pool: Pool,
        config: a2a_pg::tokio_postgres::Config,
    ) -> Result<Epoch, StoreError> {
        let listener = Listener::start(config, &[REGISTRY_CHANNEL], RETRY)?;
        // Subscribed before the first read: a change between the two is heard.
        let mut events = listener.subscribe();
        let known = Arc::new(AtomicI64::new(read(&pool).await?));
        let stale = Arc::new(AtomicBool::new(false));
        let (k, s) = (known.clone(), stale.clone());
        let watcher = tokio::spawn(async move {
            // Every event (a notification, a (re)connection, notifications dropped for lag)
            // may mean a newer epoch.
            while !matches!(events.recv().await, Err(RecvError::Closed)) {
                match read(&pool).await {
                    Ok(e) => {
                        k.fetch_max(e, Ordering::AcqRel);
                    }
                    Err(e) => {
                        tracing::warn!("registry epoch after a notification: {e}");
                        s.store(true, Ordering::Release);
                    }
                }
            }
        });
        Ok(Epoch {
            known,
            stale,
            listener,
            watcher,
            polls: AtomicU64::new(0),
        })
    }

    /// The epoch to read at now (see the module doc).
    pub async fn current(&self, pool: &Pool) -> Result<i64, StoreError> {
        if self.listener.is_connected() && !self.stale.load(Ordering::Acquire) {
            return Ok(self.known.load(Ordering::Acquire));
        }
        if !self.listener.is_connected() {
            self.polls.fetch_add(1, Ordering::Relaxed);
        }
        let e = read(pool).await?;
        self.stale.store(false, Ordering::Release);
        Ok(self.advance(e))
    }

    /// Moves the known epoch forward to `e` (after a write through this replica); returns
    /// the known epoch.
    pub fn advance(&self, e: i64) -> i64 {
        self.known.fetch_max(e, Ordering::AcqRel).max(e)
    }

    /// Makes every read ask the table until one succeeds (a write whose epoch could not be
    /// read back).
    pub fn mark_stale(&self) {
        self.stale.store(true, Ordering::Release);
    }

    /// Whether notifications are being heard (false: every cached read asks the table).
    pub fn listening(&self) -> bool {
        self.listener.is_connected()
    }

    /// How many reads asked the table because the listener was away.
    pub fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }
}
