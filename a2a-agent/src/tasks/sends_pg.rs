//! The send log in PostgreSQL (table `agent_sends` of the agent's schema), on the pool of a
//! [`PostgresStore`]: a retry is recognised on whichever replica it reaches, after a restart
//! too. (Two copies of one send racing on two replicas at once may both run: the in-process
//! claims of `sends` serialise one replica's only.)

use super::sends::{SendLog, SendRecord, now_ms};
use crate::store::{PostgresStore, StoreError, col, pg};
use async_trait::async_trait;
use std::time::Duration;

/// Accepted sends in the database of a [`PostgresStore`], kept for `window`.
#[derive(Clone)]
pub struct PgSendLog {
    db: PostgresStore,
    window: Duration,
}

impl PgSendLog {
    /// The log in `db`'s database, keeping records for `window`.
    pub fn new(db: PostgresStore, window: Duration) -> Self {
        PgSendLog { db, window }
    }
}

#[async_trait]
impl SendLog for PgSendLog {
    async fn get(
        &self,
        owner: &str,
        message_id: &str,
        since_ms: i64,
    ) -> Result<Option<SendRecord>, StoreError> {
        let rows = self
            .db
            .query(
                "SELECT digest, target, at FROM agent_sends
                 WHERE owner = $1 AND message_id = $2 AND at >= $3",
                &[&owner, &message_id, &since_ms],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let target: &str = col(r, 1)?;
        Ok(Some(SendRecord {
            digest: col(r, 0)?,
            target: serde_json::from_str(target).map_err(pg)?,
            at_ms: col(r, 2)?,
        }))
    }

    async fn put(&self, owner: &str, message_id: &str, rec: SendRecord) -> Result<(), StoreError> {
        let target = serde_json::to_string(&rec.target).map_err(pg)?;
        let horizon = now_ms() - i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX);
        self.db
            .execute(
                "INSERT INTO agent_sends(owner, message_id, digest, target, at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (owner, message_id) DO UPDATE SET digest = EXCLUDED.digest,
                   target = EXCLUDED.target, at = EXCLUDED.at",
                &[&owner, &message_id, &rec.digest, &target, &rec.at_ms],
            )
            .await?;
        // Records past the window go (an index range on `at`).
        self.db
            .execute("DELETE FROM agent_sends WHERE at < $1", &[&horizon])
            .await?;
        Ok(())
    }
}
