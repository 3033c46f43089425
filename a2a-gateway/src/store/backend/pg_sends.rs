//! Idempotent sends on PostgreSQL (`gateway_sends`), claimed exactly once across replicas.
//!
//! A claim first forgets this key's record when it is out of the window or an abandoned claim,
//! then inserts the claim with `ON CONFLICT DO NOTHING`: of any number of replicas claiming one
//! key at once, exactly one inserts (the others wait on the unique index until it commits, then
//! insert nothing) and the others read its row back: pending, its answer, or a conflict when
//! their message differs. A claim, a completion and a release run in the transaction of the
//! replica's group-commit writer (`pg_writer`) and return once it has committed (the other
//! replicas' claims of the key wait on the unique index until then); the abandoned-claim rule relies
//! on the replicas' clocks agreeing within the abandonment margin (the peer timeout plus a
//! margin, far above clock skew on hosts running NTP). Completing keeps the first answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use super::super::StoreError;
use super::super::sends::{Claimed, Outcome, SendKey};
use super::pg_writer::{Client, stopped};
use super::{PgRecords, SendStore};

/// The second of this process's last sweep of every expired record (housekeeping; each claim
/// forgets its own key's expired record itself).
static LAST_SWEEP: AtomicI64 = AtomicI64::new(i64::MIN);

/// A send's row: digest, task id, reply.
const SEND_ROW: &str = "SELECT digest, task_id, reply FROM gateway_sends
    WHERE workspace_id = $1 AND agent_id = $2 AND message_id = $3";

/// What a claim reads back of the row that won: the answer to this claim.
fn decide(digest: &str, row_digest: &str, outcome: Option<Outcome>) -> Claimed {
    if row_digest != digest {
        return Claimed::Conflict;
    }
    match outcome {
        Some(o) => Claimed::Done(o),
        None => Claimed::Pending,
    }
}

impl PgRecords {
    /// The row of `key`: (digest, outcome).
    async fn send_row(
        &self,
        key: &SendKey,
    ) -> Result<Option<(String, Option<Outcome>)>, StoreError> {
        let rows = self
            .query(
                SEND_ROW,
                &[&key.workspace_id, &key.agent_id, &key.message_id],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        Ok(Some((r.get(0), Outcome::from_columns(r.get(1), r.get(2))?)))
    }
}

impl SendStore for PgRecords {
    async fn claim(
        &self,
        key: &SendKey,
        digest: &str,
        now: i64,
        since: i64,
        abandoned: i64,
    ) -> Result<Claimed, StoreError> {
        if LAST_SWEEP.swap(now, Ordering::Relaxed) != now {
            // Housekeeping off the hop's path and outside the writer's transactions (which
            // would hold the swept rows' locks until their commit).
            let pool = self.pool.clone();
            tokio::spawn(async move {
                let swept = a2a_pg::execute(
                    &pool,
                    "DELETE FROM gateway_sends WHERE created_at < $1",
                    &[&since],
                )
                .await;
                if let Err(e) = swept {
                    tracing::warn!("expired send records not swept: {e}");
                }
            });
        }
        let (key, digest) = (Arc::new(key.clone()), Arc::new(digest.to_owned()));
        self.writer
            .run(move |c: &Client| {
                let (key, digest) = (key.clone(), digest.clone());
                Box::pin(async move { claim_on(c, &key, &digest, now, since, abandoned).await })
            })
            .await
    }

    async fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        let (task, reply) = outcome.columns();
        let key = Arc::new(key.clone());
        let cols = Arc::new((task, reply));
        let trace = key.message_id.clone();
        let done = self.writer.submit(move |c: &Client| {
            let (key, cols) = (key.clone(), cols.clone());
            Box::pin(async move {
                let st = c
                    .prepare_cached(
                        "UPDATE gateway_sends SET task_id = $4, reply = $5
                         WHERE workspace_id = $1 AND agent_id = $2 AND message_id = $3
                           AND task_id IS NULL AND reply IS NULL",
                    )
                    .await?;
                c.execute(
                    &st,
                    &[
                        &key.workspace_id,
                        &key.agent_id,
                        &key.message_id,
                        &cols.0,
                        &cols.1,
                    ],
                )
                .await?;
                Ok(())
            })
        })?;
        // Inside a request's handling the commit is awaited before its answer leaves, with the
        // hop's record (one commit for both; a failure is logged, as the hop's caller does);
        // elsewhere here.
        if !super::audit::answering() {
            return done.await.unwrap_or_else(|_| Err(stopped()));
        }
        let _ = super::audit::defer(Box::pin(async move {
            if let Err(e) = done.await.unwrap_or_else(|_| Err(stopped())) {
                tracing::error!(message_id = %trace, "send record not completed: {e}");
            }
        }));
        Ok(())
    }

    async fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        let key = Arc::new(key.clone());
        self.writer
            .run(move |c: &Client| {
                let key = key.clone();
                Box::pin(async move {
                    let st = c
                        .prepare_cached(
                            "DELETE FROM gateway_sends WHERE workspace_id = $1 AND agent_id = $2
                               AND message_id = $3 AND task_id IS NULL AND reply IS NULL",
                        )
                        .await?;
                    c.execute(&st, &[&key.workspace_id, &key.agent_id, &key.message_id])
                        .await?;
                    Ok(())
                })
            })
            .await
    }

    async fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        Ok(self.send_row(key).await?.and_then(|(_, o)| o))
    }
}

/// Claims `key` on `c` (see [`SendStore::claim`]): the insert first (one statement when the
/// key is new, as on nearly every send); a row in the way that is out of the window or an
/// abandoned claim is deleted (under the same conditions, so a row changed meanwhile stays)
/// and the insert goes again.
async fn claim_on(
    c: &Client,
    key: &SendKey,
    digest: &str,
    now: i64,
    since: i64,
    abandoned: i64,
) -> Result<Claimed, StoreError> {
    let k = [&key.workspace_id, &key.agent_id, &key.message_id];
    // A winner released or forgotten between our insert and our read: claim again (a few
    // rounds).
    for _ in 0..3 {
        let st = c
            .prepare_cached(
                "INSERT INTO gateway_sends(workspace_id, agent_id, message_id, digest,
                   created_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (workspace_id, agent_id, message_id) DO NOTHING",
            )
            .await?;
        let n = c.execute(&st, &[k[0], k[1], k[2], &digest, &now]).await?;
        if n == 1 {
            return Ok(Claimed::First);
        }
        let st = c
            .prepare_cached(
                "SELECT digest, task_id, reply, created_at FROM gateway_sends
                 WHERE workspace_id = $1 AND agent_id = $2 AND message_id = $3",
            )
            .await?;
        let Some(r) = c.query(&st, &[k[0], k[1], k[2]]).await?.first().cloned() else {
            continue;
        };
        let (task, reply): (Option<String>, Option<String>) = (r.get(1), r.get(2));
        let created: i64 = r.get(3);
        let open = task.is_none() && reply.is_none();
        if created < since || (open && created < abandoned) {
            let st = c
                .prepare_cached(
                    "DELETE FROM gateway_sends WHERE workspace_id = $1 AND agent_id = $2
                       AND message_id = $3 AND (created_at < $4
                         OR (task_id IS NULL AND reply IS NULL AND created_at < $5))",
                )
                .await?;
            c.execute(&st, &[k[0], k[1], k[2], &since, &abandoned])
                .await?;
            continue;
        }
        let outcome = Outcome::from_columns(task, reply)?;
        return Ok(decide(digest, &r.get::<_, String>(0), outcome));
    }
    Ok(Claimed::Pending)
}
