//! Push configs in PostgreSQL (table `agent_push_configs` of the agent's schema), on the pool
//! of a [`PostgresStore`]: every replica reads the configs any replica registered, and each new
//! one is announced (`NOTIFY` with the task id) so that the replica running the task uses it.

use super::store::{PushConfigStore, PushRecord, PushStoreError};
use crate::edge::version::Version;
use crate::store::{PUSH_CONFIGS_CHANNEL, PostgresStore};
use async_trait::async_trait;

/// Push configs in the database of a [`PostgresStore`] (shared by replicas, survive restarts).
#[derive(Clone)]
pub struct PgPushStore {
    db: PostgresStore,
}

impl PgPushStore {
    /// Push configs in `db`'s database.
    pub fn new(db: PostgresStore) -> Self {
        PgPushStore { db }
    }
}

fn err(e: impl std::fmt::Display) -> PushStoreError {
    PushStoreError(e.to_string())
}

#[async_trait]
impl PushConfigStore for PgPushStore {
    async fn put(&self, rec: PushRecord) -> Result<(), PushStoreError> {
        let body = serde_json::to_string(&rec.config).map_err(err)?;
        // Announced to the other replicas (the one running the task uses it from then on).
        self.db
            .execute(
                "WITH ins AS (
                   INSERT INTO agent_push_configs(task_id, id, owner, version, body)
                   VALUES ($1, $2, $3, $4, $5)
                   ON CONFLICT (task_id, id) DO UPDATE SET owner = EXCLUDED.owner,
                     version = EXCLUDED.version, body = EXCLUDED.body)
                 SELECT pg_notify($6, $1)",
                &[
                    &rec.task_id(),
                    &rec.id(),
                    &rec.owner,
                    &rec.version.as_str(),
                    &body,
                    &PUSH_CONFIGS_CHANNEL,
                ],
            )
            .await
            .map_err(err)?;
        Ok(())
    }

    async fn list(&self, task_id: &str) -> Result<Vec<PushRecord>, PushStoreError> {
        let rows = self
            .db
            .query(
                "SELECT body, version, owner FROM agent_push_configs WHERE task_id = $1
                 ORDER BY seq",
                &[&task_id],
            )
            .await
            .map_err(err)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let body: &str = r.try_get(0).map_err(err)?;
            let version: &str = r.try_get(1).map_err(err)?;
            out.push(PushRecord {
                config: serde_json::from_str(body).map_err(err)?,
                version: if version == "0.3" {
                    Version::V03
                } else {
                    Version::V1
                },
                owner: r.try_get(2).map_err(err)?,
            });
        }
        Ok(out)
    }

    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, PushStoreError> {
        let n = self
            .db
            .execute(
                "DELETE FROM agent_push_configs WHERE task_id = $1 AND id = $2",
                &[&task_id, &id],
            )
            .await
            .map_err(err)?;
        Ok(n > 0)
    }

    async fn task_ids(&self) -> Result<Vec<String>, PushStoreError> {
        let rows = self
            .db
            .query("SELECT DISTINCT task_id FROM agent_push_configs", &[])
            .await
            .map_err(err)?;
        rows.iter().map(|r| r.try_get(0).map_err(err)).collect()
    }
}
