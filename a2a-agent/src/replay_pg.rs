//! A replay log in PostgreSQL (table `agent_replay_events` of the agent's schema), on the pool
//! of a [`PostgresStore`]: a subscriber resuming with `Last-Event-ID` on any replica gets the
//! events it missed, and each event added is announced to the other replicas (`NOTIFY` on
//! [`EVENTS_CHANNEL`] with its number and task id), whose subscribers of the task read it from
//! here (`tasks::peers`).

use crate::model::StreamResponse;
use crate::replay::{ReplayLog, as_i64};
use crate::store::{EVENTS_CHANNEL, PostgresStore, StoreError, col, pg};

/// The longest `NOTIFY` payload PostgreSQL takes (bytes, less one).
const MAX_PAYLOAD: usize = 7999;
use async_trait::async_trait;

/// The numbered events of tasks in the database of a [`PostgresStore`], the newest
/// `events_per_task` of each task.
#[derive(Clone)]
pub struct PgReplay {
    db: PostgresStore,
    events_per_task: usize,
}

impl PgReplay {
    /// The log in `db`'s database, keeping `events_per_task` per task (0 keeps none).
    pub fn new(db: PostgresStore, events_per_task: usize) -> Self {
        PgReplay {
            db,
            events_per_task,
        }
    }
}

#[async_trait]
impl ReplayLog for PgReplay {
    async fn append(
        &self,
        task_id: &str,
        seq: u64,
        event: &StreamResponse,
    ) -> Result<(), StoreError> {
        let keep = self.events_per_task as u64;
        if keep == 0 {
            return Ok(());
        }
        let body = serde_json::to_string(event).map_err(pg)?;
        let n = as_i64(seq);
        // The insert, the trim of what falls out of the window and the announcement to the
        // other replicas (delivered once the row is committed; at most the number and the id,
        // within NOTIFY's 8000 bytes: a longer id is announced without it, waking every
        // follower), in one statement.
        let mut note = format!("{seq} {task_id}");
        if note.len() > MAX_PAYLOAD {
            note = seq.to_string();
        }
        self.db
            .execute(
                "WITH ins AS (
                   INSERT INTO agent_replay_events(task_id, seq, body) VALUES ($1, $2, $3)
                   ON CONFLICT (task_id, seq) DO UPDATE SET body = EXCLUDED.body),
                 del AS (
                   DELETE FROM agent_replay_events WHERE task_id = $1 AND seq <= $2 - $4)
                 SELECT pg_notify($5, $6)",
                &[&task_id, &n, &body, &as_i64(keep), &EVENTS_CHANNEL, &note],
            )
            .await?;
        Ok(())
    }

    async fn since(
        &self,
        task_id: &str,
        after: u64,
    ) -> Result<Vec<(u64, StreamResponse)>, StoreError> {
        let rows = self
            .db
            .query(
                "SELECT seq, body FROM agent_replay_events WHERE task_id = $1 AND seq > $2
                 ORDER BY seq",
                &[&task_id, &as_i64(after)],
            )
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let seq: i64 = col(r, 0)?;
            let body: &str = col(r, 1)?;
            let ev: StreamResponse = serde_json::from_str(body).map_err(pg)?;
            out.push((u64::try_from(seq).unwrap_or(0), ev));
        }
        Ok(out)
    }

    async fn last(&self, task_id: &str) -> Result<u64, StoreError> {
        let rows = self
            .db
            .query(
                "SELECT max(seq) FROM agent_replay_events WHERE task_id = $1",
                &[&task_id],
            )
            .await?;
        let n: Option<i64> = match rows.first() {
            Some(r) => col(r, 0)?,
            None => None,
        };
        Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
    }
}
