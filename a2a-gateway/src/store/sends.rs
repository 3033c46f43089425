//! Where the gateway remembers accepted sends: one row per (workspace, agent, `messageId`),
//! claimed before the peer is called and completed with what the send became.

use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::{store::CachedExt, store::Store, store::StoreError};

/// Migration 7: the gateway's send records (issue 16).
pub const MIGRATION: &str = r#"
    CREATE TABLE gateway_sends (
        workspace_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        task_id TEXT,
        reply TEXT,
        PRIMARY KEY (workspace_id, agent_id, message_id)
    );
    CREATE INDEX gateway_sends_created ON gateway_sends(created_at);
"#;

/// The second of the last sweep of expired records (process-wide: the sweep is housekeeping,
/// each claim forgets its own key's expired record itself).
static LAST_SWEEP: AtomicI64 = AtomicI64::new(i64::MIN);

/// The scope of a `messageId`: one workspace's agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SendKey {
    /// The caller's workspace.
    pub workspace_id: String,
    /// The target agent.
    pub agent_id: String,
    /// The message's `messageId`.
    pub message_id: String,
}

/// What an accepted send became.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The task it created or continued (the peer's id).
    Task(String),
    /// The direct message the peer answered with (1.0 form).
    Message(Value),
}

impl Outcome {
    /// The `gateway_sends` columns of the outcome: (`task_id`, `reply` as JSON text).
    pub(crate) fn columns(&self) -> (Option<String>, Option<String>) {
        match self {
            Outcome::Task(t) => (Some(t.clone()), None),
            Outcome::Message(m) => (None, Some(m.to_string())),
        }
    }

    /// The outcome stored in the `task_id` and `reply` columns (`None`: still pending).
    pub(crate) fn from_columns(
        task_id: Option<String>,
        reply: Option<String>,
    ) -> Result<Option<Outcome>, StoreError> {
        Ok(match (task_id, reply) {
            (Some(t), _) => Some(Outcome::Task(t)),
            (None, Some(r)) => {
                Some(Outcome::Message(serde_json::from_str(&r).map_err(|e| {
                    StoreError::Invalid(format!("send record: {e}"))
                })?))
            }
            (None, None) => None,
        })
    }
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Claimed {
    /// No record: this send is the first; the caller must complete or release it.
    First,
    /// The first send of this `messageId` is still at the peer.
    Pending,
    /// The first send's outcome.
    Done(Outcome),
    /// The `messageId` was used for a different message.
    Conflict,
}

/// The committed outcome of `key` in the SQLite file, if the send completed.
pub(crate) fn committed_answer(
    store: &Store,
    key: &SendKey,
) -> Result<Option<Outcome>, StoreError> {
    let row: Option<(Option<String>, Option<String>)> = store.with(|c| {
        Ok(c.query_row_cached(
            "SELECT task_id, reply FROM gateway_sends
             WHERE workspace_id = ?1 AND agent_id = ?2 AND message_id = ?3",
            params![key.workspace_id, key.agent_id, key.message_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
    })?;
    match row {
        Some((task, reply)) => Outcome::from_columns(task, reply),
        None => Ok(None),
    }
}

/// Send records committed to the gateway's SQLite file, each claim and completion a
/// transaction: stores without an intent journal (see `crate::hop::idempotency`). The rules
/// are [`SendStore`](crate::store::backend::SendStore)'s; `SqliteRecords` calls these.
#[derive(Clone)]
pub struct SqliteSends {
    store: Store,
}

impl SqliteSends {
    /// Send records in `store`'s file.
    pub fn new(store: Store) -> SqliteSends {
        SqliteSends { store }
    }
}

impl SqliteSends {
    /// [`SendStore::claim`](crate::store::backend::SendStore::claim) in the file.
    pub fn claim(
        &self,
        key: &SendKey,
        digest: &str,
        now: i64,
        since: i64,
        abandoned: i64,
    ) -> Result<Claimed, StoreError> {
        self.store.with(|c| {
            // One transaction (one commit) for the whole claim.
            let tx = c.unchecked_transaction()?;
            // This key's record out of the window, or abandoned, is forgotten now; the sweep of
            // every expired record is housekeeping and runs at most once a second.
            tx.execute_cached(
                "DELETE FROM gateway_sends WHERE workspace_id = ?1 AND agent_id = ?2
                   AND message_id = ?3 AND (created_at < ?4
                     OR (task_id IS NULL AND reply IS NULL AND created_at < ?5))",
                params![
                    key.workspace_id,
                    key.agent_id,
                    key.message_id,
                    since,
                    abandoned
                ],
            )?;
            if LAST_SWEEP.swap(now, Ordering::Relaxed) != now {
                tx.execute_cached(
                    "DELETE FROM gateway_sends WHERE created_at < ?1",
                    params![since],
                )?;
            }
            let n = tx.execute_cached(
                "INSERT OR IGNORE INTO gateway_sends(workspace_id, agent_id, message_id, digest,
                   created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![key.workspace_id, key.agent_id, key.message_id, digest, now],
            )?;
            if n == 1 {
                tx.commit()?;
                return Ok(Claimed::First);
            }
            let row: Option<(String, Option<String>, Option<String>)> = c
                .query_row_cached(
                    "SELECT digest, task_id, reply FROM gateway_sends
                     WHERE workspace_id = ?1 AND agent_id = ?2 AND message_id = ?3",
                    params![key.workspace_id, key.agent_id, key.message_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            tx.commit()?;
            Ok(match row {
                // Deleted between the two statements cannot happen under the lock; be safe.
                None => Claimed::Pending,
                Some((d, _, _)) if d != digest => Claimed::Conflict,
                Some((_, task, reply)) => match Outcome::from_columns(task, reply)? {
                    Some(o) => Claimed::Done(o),
                    None => Claimed::Pending,
                },
            })
        })
    }

    /// Records the outcome of the claimed send (the first one recorded stays).
    pub fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        let (task, reply) = outcome.columns();
        self.store.with(|c| {
            c.execute_cached(
                "UPDATE gateway_sends SET task_id = ?4, reply = ?5
                 WHERE workspace_id = ?1 AND agent_id = ?2 AND message_id = ?3
                   AND task_id IS NULL AND reply IS NULL",
                params![key.workspace_id, key.agent_id, key.message_id, task, reply],
            )?;
            Ok(())
        })
    }

    /// Forgets a claim that has no outcome.
    pub fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        self.store.with(|c| {
            c.execute_cached(
                "DELETE FROM gateway_sends WHERE workspace_id = ?1 AND agent_id = ?2
                   AND message_id = ?3 AND task_id IS NULL AND reply IS NULL",
                params![key.workspace_id, key.agent_id, key.message_id],
            )?;
            Ok(())
        })
    }

    /// The first answer recorded for `key`, if the send completed.
    pub fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        committed_answer(&self.store, key)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::store) fn key(ws: &str) -> SendKey {
        SendKey {
            workspace_id: ws.into(),
            agent_id: "a".into(),
            message_id: "m1".into(),
        }
    }

    /// The claim rules themselves are checked on every backend through `SendStore`
    /// (`tests/store_race.rs`); here: a completed record is kept and its digest checked.
    #[test]
    fn a_completed_send_is_kept_and_its_digest_checked() {
        let s = SqliteSends::new(Store::open_in_memory().unwrap());
        assert_eq!(s.claim(&key("w1"), "d", 100, 0, 0).unwrap(), Claimed::First);
        s.complete(&key("w1"), &Outcome::Task("t1".into())).unwrap();
        s.release(&key("w1")).unwrap();
        assert_eq!(
            s.claim(&key("w1"), "d", 101, 0, 0).unwrap(),
            Claimed::Done(Outcome::Task("t1".into()))
        );
        assert_eq!(
            s.claim(&key("w1"), "x", 101, 0, 0).unwrap(),
            Claimed::Conflict
        );
        assert_eq!(
            s.first_answer(&key("w1")).unwrap(),
            Some(Outcome::Task("t1".into()))
        );
    }
}
