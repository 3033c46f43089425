//! Idempotent sends on PostgreSQL (`gateway_sends`), claimed exactly once across replicas.
//!
//! A claim first forgets this key's record when it is out of the window or an abandoned claim,
//! then inserts the claim with `ON CONFLICT DO NOTHING`: of any number of replicas claiming one
//! key at once, exactly one inserts (the others wait on the unique index until it commits, then
//! insert nothing) and the others read its row back: pending, its answer, or a conflict when
//! their message differs. Each statement commits on its own; the abandoned-claim rule relies
//! on the replicas' clocks agreeing within the abandonment margin (the peer timeout plus a
//! margin, far above clock skew on hosts running NTP). Completing keeps the first answer.

use std::sync::atomic::{AtomicI64, Ordering};

use super::super::StoreError;
use super::super::sends::{Claimed, Outcome, SendKey};
use super::{PgRecords, SendStore};

/// The second of this process's last sweep of every expired record (housekeeping; each claim
/// forgets its own key's expired record itself).
static LAST_SWEEP: AtomicI64 = AtomicI64::new(i64::MIN);

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
                "SELECT digest, task_id, reply FROM gateway_sends
                 WHERE workspace_id = $1 AND agent_id = $2 AND message_id = $3",
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
        let k = [&key.workspace_id, &key.agent_id, &key.message_id];
        self.execute(
            "DELETE FROM gateway_sends WHERE workspace_id = $1 AND agent_id = $2
               AND message_id = $3 AND (created_at < $4
                 OR (task_id IS NULL AND reply IS NULL AND created_at < $5))",
            &[k[0], k[1], k[2], &since, &abandoned],
        )
        .await?;
        if LAST_SWEEP.swap(now, Ordering::Relaxed) != now {
            self.execute("DELETE FROM gateway_sends WHERE created_at < $1", &[&since])
                .await?;
        }
        // A winner released between our insert and our read: claim again (a few rounds).
        for _ in 0..3 {
            let n = self
                .execute(
                    "INSERT INTO gateway_sends(workspace_id, agent_id, message_id, digest,
                       created_at) VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (workspace_id, agent_id, message_id) DO NOTHING",
                    &[k[0], k[1], k[2], &digest, &now],
                )
                .await?;
            if n == 1 {
                return Ok(Claimed::First);
            }
            if let Some((d, outcome)) = self.send_row(key).await? {
                return Ok(decide(digest, &d, outcome));
            }
        }
        Ok(Claimed::Pending)
    }

    async fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        let (task, reply) = outcome.columns();
        self.execute(
            "UPDATE gateway_sends SET task_id = $4, reply = $5
             WHERE workspace_id = $1 AND agent_id = $2 AND message_id = $3
               AND task_id IS NULL AND reply IS NULL",
            &[
                &key.workspace_id,
                &key.agent_id,
                &key.message_id,
                &task,
                &reply,
            ],
        )
        .await?;
        Ok(())
    }

    async fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM gateway_sends WHERE workspace_id = $1 AND agent_id = $2
               AND message_id = $3 AND task_id IS NULL AND reply IS NULL",
            &[&key.workspace_id, &key.agent_id, &key.message_id],
        )
        .await?;
        Ok(())
    }

    async fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        Ok(self.send_row(key).await?.and_then(|(_, o)| o))
    }
}
