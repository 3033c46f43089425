//! The push outbox of a [`PostgresStore`] (table `agent_push_outbox`): notices recorded under
//! the replica that owes them, removed once delivered, and taken over (in one `UPDATE`, so one
//! replica takes each) from replicas that are gone.

use bytes::Bytes;

use super::api::{DueNotice, Notice, StoreError};
use super::postgres::{PostgresStore, col, pg};

const OUTBOX_INSERT: &str = "INSERT INTO agent_push_outbox(task_id, config_id, content_type,
    body, runner) VALUES ($1, $2, $3, $4, $5) RETURNING seq";

impl PostgresStore {
    /// Inserts `notices` for this replica within `tx`; their numbers, in order.
    pub(super) async fn insert_notices(
        &self,
        tx: &a2a_pg::deadpool_postgres::Transaction<'_>,
        notices: &[Notice],
    ) -> Result<Vec<i64>, StoreError> {
        let st = tx.prepare_cached(OUTBOX_INSERT).await.map_err(pg)?;
        let mut seqs = Vec::with_capacity(notices.len());
        for n in notices {
            let body: &[u8] = &n.body;
            let row = tx
                .query_one(
                    &st,
                    &[
                        &n.task_id,
                        &n.config_id,
                        &n.content_type,
                        &body,
                        &self.inner().replica,
                    ],
                )
                .await
                .map_err(pg)?;
            seqs.push(col(&row, 0)?);
        }
        Ok(seqs)
    }

    /// Records `notices` for this replica, in one transaction; their numbers, in order.
    pub(super) async fn record(&self, notices: &[Notice]) -> Result<Vec<i64>, StoreError> {
        if notices.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.inner().pool.get().await.map_err(pg)?;
        let tx = c.transaction().await.map_err(pg)?;
        let seqs = self.insert_notices(&tx, notices).await?;
        tx.commit().await.map_err(pg)?;
        Ok(seqs)
    }

    /// Notice `seq` was delivered: removed.
    pub(super) async fn done(&self, seq: i64) -> Result<(), StoreError> {
        self.execute("DELETE FROM agent_push_outbox WHERE seq = $1", &[&seq])
            .await?;
        Ok(())
    }

    /// The due notices of replicas that are gone, taken over in one statement (of two replicas
    /// taking over at once, one takes each), with this replica's own when `own`.
    pub(super) async fn take_notices(&self, own: bool) -> Result<Vec<DueNotice>, StoreError> {
        let dead = self.dead_runners("agent_push_outbox", "TRUE").await?;
        if dead.is_empty() && !own {
            return Ok(Vec::new());
        }
        let rows = self
            .query(
                "UPDATE agent_push_outbox SET runner = $1
                 WHERE ($3 AND runner = $1) OR runner = ANY($2)
                 RETURNING seq, task_id, config_id, content_type, body",
                &[&self.inner().replica, &dead, &own],
            )
            .await?;
        let mut out = rows
            .iter()
            .map(|r| -> Result<DueNotice, StoreError> {
                let body: Vec<u8> = col(r, 4)?;
                Ok(DueNotice {
                    seq: col(r, 0)?,
                    notice: Notice {
                        task_id: col(r, 1)?,
                        config_id: col(r, 2)?,
                        content_type: col(r, 3)?,
                        body: Bytes::from(body),
                    },
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.sort_by_key(|d| d.seq);
        Ok(out)
    }
}
