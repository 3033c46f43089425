//! Replicas on one PostgreSQL database: each one's lease, who is gone, and cancel requests
//! between them.
//!
//! **Leases.** A replica holds a lease (a row of `agent_replicas`: its id and when the lease
//! ends, in the database's clock, so the replicas' clocks need not agree; renewed and given up
//! through `a2a_pg::lease`, shared with the gateway). It renews it every
//! third of the lease time with one statement, for all its unfinished tasks and due notices at
//! once (they name it as their `runner`). A runner is gone when its lease has ended; a runner
//! without a lease row (written by an older release, or given up by a store that was dropped)
//! is gone when its liveness lock ([`a2a_pg::Alive`]) is free. The rows of a gone runner are
//! taken over by [`TaskStore::unfinished`](super::TaskStore::unfinished) and
//! [`TaskStore::due_notices`](super::TaskStore::due_notices), which the agent calls at start
//! and then every third of the lease time.
//!
//! **Cancel requests.** CancelTask on a replica that does not run the task marks the task
//! (`cancel_requested`) and sends `NOTIFY` on [`CANCELS_CHANNEL`] with the task id; the runner
//! cancels it (it listens, and reads the marks itself while its listener is away).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::api::StoreError;
use super::pg_schema::{CANCELS_CHANNEL, COMPONENT, REPLICAS, open_states, renew_every};
use super::postgres::{Inner, PostgresStore, col, pg, setup};

impl PostgresStore {
    /// Renews the lease of the store behind `inner` every third of its lease time, and at once when
    /// the lease time changes (`changed`), until the store is dropped.
    pub(super) fn keep_renewing(inner: Weak<Inner>, changed: Arc<tokio::sync::Notify>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            loop {
                let every = match inner.upgrade() {
                    Some(i) => {
                        renew_every(Duration::from_millis(i.lease_ms.load(Ordering::Relaxed)))
                    }
                    None => return,
                };
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = changed.notified() => {}
                }
                let Some(i) = inner.upgrade() else { return };
                if let Err(e) = (PostgresStore { inner: i }).renew().await {
                    tracing::warn!(error = %e, "postgres: renewing this replica's lease failed");
                }
            }
        });
    }

    /// The lease time: how long another replica waits, after this one stopped renewing, before
    /// it ends (or re-runs) this one's tasks.
    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.inner().lease_ms.load(Ordering::Relaxed))
    }

    /// Sets the lease time (default [`DEFAULT_LEASE`](super::DEFAULT_LEASE), at least
    /// 150 ms): the lease is renewed with it at once, then every third of it.
    pub fn set_lease(&self, lease: Duration) {
        let ms = lease.as_millis().clamp(150, u64::MAX as u128) as u64;
        self.inner().lease_ms.store(ms, Ordering::Relaxed);
        self.inner().lease_changed.notify_one();
    }

    /// Renews this replica's lease: one statement for all its tasks.
    pub(crate) async fn renew(&self) -> Result<(), StoreError> {
        a2a_pg::lease::renew(
            &self.inner().pool,
            REPLICAS,
            &self.inner().replica,
            self.lease(),
        )
        .await
        .map_err(setup)
    }

    /// Forgets the leases that ended long ago (their rows were taken over).
    pub(super) async fn forget_leases(&self) {
        let _ = self
            .execute(
                "DELETE FROM agent_replicas WHERE expires < now() - interval '1 hour'",
                &[],
            )
            .await;
    }

    /// The runners named in `table`'s rows matching `cond` that are gone (see the module doc),
    /// this one excepted.
    pub(super) async fn dead_runners(
        &self,
        table: &str,
        cond: &str,
    ) -> Result<Vec<String>, StoreError> {
        let c = self.inner().pool.get().await.map_err(pg)?;
        let sql = format!(
            "SELECT DISTINCT t.runner, r.id IS NULL FROM {table} t
               LEFT JOIN agent_replicas r ON r.id = t.runner
             WHERE {cond} AND t.runner <> $1 AND (r.id IS NULL OR r.expires < now())"
        );
        let st = c.prepare_cached(&sql).await.map_err(pg)?;
        let rows = c.query(&st, &[&self.inner().replica]).await.map_err(pg)?;
        let mut dead = Vec::new();
        for r in &rows {
            let runner: String = col(r, 0)?;
            let no_lease: bool = col(r, 1)?;
            if !no_lease
                || !a2a_pg::is_alive(&c, COMPONENT, &runner)
                    .await
                    .map_err(setup)?
            {
                dead.push(runner);
            }
        }
        Ok(dead)
    }

    /// Asks the replica running task `id` to cancel it: marks the task and notifies. `None`
    /// when no other replica runs it (it is not SUBMITTED or WORKING, or this one runs it);
    /// else the runner's id and whether its lease is current.
    pub(crate) async fn request_cancel(
        &self,
        id: &str,
    ) -> Result<Option<(String, bool)>, StoreError> {
        let rows = self
            .query(
                concat!(
                    "WITH r AS (UPDATE agent_tasks SET cancel_requested = true
                       WHERE id = $1 AND runner <> $2 AND ",
                    open_states!(),
                    " RETURNING runner)
                     SELECT r.runner, COALESCE(l.expires >= now(), false),
                            pg_notify($3, $1)
                     FROM r LEFT JOIN agent_replicas l ON l.id = r.runner"
                ),
                &[&id, &self.inner().replica, &CANCELS_CHANNEL],
            )
            .await?;
        match rows.first() {
            Some(r) => Ok(Some((col(r, 0)?, col(r, 1)?))),
            None => Ok(None),
        }
    }

    /// The unfinished tasks this replica runs that another replica asked to cancel.
    pub(crate) async fn cancel_requests(&self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .query(
                concat!(
                    "SELECT id FROM agent_tasks WHERE runner = $1 AND cancel_requested AND ",
                    open_states!()
                ),
                &[&self.inner().replica],
            )
            .await?;
        rows.iter().map(|r| col(r, 0)).collect()
    }

    /// The settings a listener connects with.
    pub(crate) fn pg_config(&self) -> &a2a_pg::tokio_postgres::Config {
        &self.inner().config
    }
}
