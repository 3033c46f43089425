//! Send records of the serving process: claims in memory, completed records through the
//! intent journal and the audit writer's batch (no SQLite commit on the request path).
//!
//! The serving process is the only writer of its database (it holds the journal's lock), so
//! the claims it makes can live in its memory: a claim in flight is lost with the process, and
//! nobody would ever complete it (the database way marked it abandoned after the peer timeout
//! plus a margin; here it is gone at once: the first repeat after the restart is a new send).
//! A completed record is what must survive: it is appended to the journal (one `write(2)`,
//! kept by the kernel if the process is killed) and written to `gateway_sends` in the writer's
//! next batch; until that batch commits it is answered from memory, afterwards from the
//! database (one indexed read). After a crash, [`crate::store`] recovers the journaled records
//! that no batch committed when it opens the journal, as it does intents and task bindings.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{OptionalExtension, params};

use crate::{store::CachedExt, store::SendRow, store::Store, store::StoreError};
use crate::{store::sends::Claimed, store::sends::Outcome, store::sends::SendKey};

/// A claim or a record not yet committed by the writer.
struct Entry {
    digest: String,
    created_at: i64,
    /// `None` while the send is at the peer.
    outcome: Option<Outcome>,
}

/// The claims and uncommitted records of one store (shared by every hop of the process).
#[derive(Default)]
pub struct SendMemory {
    entries: Mutex<HashMap<SendKey, Entry>>,
    /// The oldest creation time still in the window (of the latest claim).
    since: AtomicI64,
    /// The second of the last sweep of expired entries (memory).
    swept: AtomicI64,
    /// The second of the last sweep of expired rows (database, by the writer).
    swept_db: AtomicI64,
}

/// Send records over a store whose intent journal is open (see the module docs); the rules
/// are [`SendStore`](crate::store::backend::SendStore)'s, `SqliteRecords` calls these.
#[derive(Clone)]
pub struct JournaledSends {
    store: Store,
    memory: Arc<SendMemory>,
}

impl JournaledSends {
    /// The send records of `store` (whose journal is open).
    pub fn new(store: Store) -> JournaledSends {
        let memory = store.send_memory();
        JournaledSends { store, memory }
    }
}

/// What a record of `digest` made at `created_at` answers a claim (`None`: out of the window,
/// or an abandoned claim: forgotten, the claim is the first).
fn decide(
    digest: &str,
    created_at: i64,
    outcome: Option<&Outcome>,
    claim_digest: &str,
    since: i64,
    abandoned: i64,
) -> Option<Claimed> {
    if created_at < since || (outcome.is_none() && created_at < abandoned) {
        return None;
    }
    Some(if digest != claim_digest {
        Claimed::Conflict
    } else {
        match outcome {
            Some(o) => Claimed::Done(o.clone()),
            None => Claimed::Pending,
        }
    })
}

/// The committed record of `key`: (digest, created_at, outcome).
fn committed(
    store: &Store,
    key: &SendKey,
) -> Result<Option<(String, i64, Option<Outcome>)>, StoreError> {
    type Row = (String, i64, Option<String>, Option<String>);
    let row: Option<Row> = store.with(|c| {
        Ok(c.query_row_cached(
            "SELECT digest, created_at, task_id, reply FROM gateway_sends
             WHERE workspace_id = ?1 AND agent_id = ?2 AND message_id = ?3",
            params![key.workspace_id, key.agent_id, key.message_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?)
    })?;
    let Some((digest, created_at, task, reply)) = row else {
        return Ok(None);
    };
    Ok(Some((
        digest,
        created_at,
        Outcome::from_columns(task, reply)?,
    )))
}

impl JournaledSends {
    /// Claims `key` (see [`SendStore::claim`](crate::store::backend::SendStore::claim)).
    pub fn claim(
        &self,
        key: &SendKey,
        digest: &str,
        now: i64,
        since: i64,
        abandoned: i64,
    ) -> Result<Claimed, StoreError> {
        let mem = &self.memory;
        mem.since.store(since, Ordering::Relaxed);
        // Lock order: the entries, then (for the committed record) the connection; the writer
        // takes the entries only after its transaction, so a record is always in one of them.
        let mut entries = mem.entries.lock().map_err(|_| StoreError::Poisoned)?;
        if mem.swept.swap(now, Ordering::Relaxed) != now {
            // Housekeeping: records out of the window whose commit failed, abandoned claims.
            entries.retain(|_, e| {
                e.created_at >= since && (e.outcome.is_some() || e.created_at >= abandoned)
            });
        }
        if let Some(e) = entries.get(key) {
            if let Some(c) = decide(
                &e.digest,
                e.created_at,
                e.outcome.as_ref(),
                digest,
                since,
                abandoned,
            ) {
                return Ok(c);
            }
        } else if let Some((d, created_at, outcome)) = committed(&self.store, key)?
            && let Some(c) = decide(&d, created_at, outcome.as_ref(), digest, since, abandoned)
        {
            return Ok(c);
        }
        entries.insert(
            key.clone(),
            Entry {
                digest: digest.to_owned(),
                created_at: now,
                outcome: None,
            },
        );
        Ok(Claimed::First)
    }

    /// Records the outcome of the claimed send: in memory, journaled, committed by the writer.
    pub fn complete(&self, key: &SendKey, outcome: &Outcome) -> Result<(), StoreError> {
        let mem = &self.memory;
        let row = {
            let mut entries = mem.entries.lock().map_err(|_| StoreError::Poisoned)?;
            // A claim taken over (abandoned) or completed already: nothing to record.
            let Some(e) = entries.get_mut(key).filter(|e| e.outcome.is_none()) else {
                return Ok(());
            };
            e.outcome = Some(outcome.clone());
            let (task_id, reply) = outcome.columns();
            SendRow {
                workspace_id: key.workspace_id.clone(),
                agent_id: key.agent_id.clone(),
                message_id: key.message_id.clone(),
                digest: e.digest.clone(),
                created_at: e.created_at,
                task_id,
                reply,
            }
        };
        // The writer forgets expired rows at most once a minute, in the batch of a record.
        let now = row.created_at;
        let last = mem.swept_db.load(Ordering::Relaxed);
        let sweep = (now - last >= 60
            && mem
                .swept_db
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok())
        .then(|| mem.since.load(Ordering::Relaxed));
        let (memory, done_key, created_at) = (mem.clone(), key.clone(), row.created_at);
        let on_commit = Box::new(move || {
            // Committed: answered from the database from now on.
            if let Ok(mut entries) = memory.entries.lock()
                && entries
                    .get(&done_key)
                    .is_some_and(|e| e.created_at == created_at && e.outcome.is_some())
            {
                entries.remove(&done_key);
            }
        });
        if !self.store.journal_send(&row, sweep, on_commit)? {
            // No journal (not the serving process): committed here.
            self.store.with(|c| {
                crate::store::insert_send(c, &row)?;
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Forgets a claim that has no outcome.
    pub fn release(&self, key: &SendKey) -> Result<(), StoreError> {
        let mut entries = self
            .memory
            .entries
            .lock()
            .map_err(|_| StoreError::Poisoned)?;
        if entries.get(key).is_some_and(|e| e.outcome.is_none()) {
            entries.remove(key);
        }
        Ok(())
    }

    /// The first answer recorded for `key`, if the send completed.
    pub fn first_answer(&self, key: &SendKey) -> Result<Option<Outcome>, StoreError> {
        {
            let entries = self
                .memory
                .entries
                .lock()
                .map_err(|_| StoreError::Poisoned)?;
            if let Some(o) = entries.get(key).and_then(|e| e.outcome.clone()) {
                return Ok(Some(o));
            }
        }
        crate::store::sends::committed_answer(&self.store, key)
    }
}

#[cfg(test)]
mod tests {
    use super::super::sends::tests::key;
    use super::*;

    fn served(path: &std::path::Path) -> (Store, JournaledSends) {
        let s = Store::open(path).unwrap();
        s.open_intent_journal().unwrap();
        let j = JournaledSends::new(s.clone());
        (s, j)
    }

    /// A completed send is answered from memory until the writer commits it, then from the
    /// database, the same way (the claim rules are checked through `SendStore` in
    /// `tests/store_race.rs`).
    #[test]
    fn completed_records_are_answered_from_memory_then_from_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let (_s, s) = served(&dir.path().join("gw.db"));
        assert_eq!(s.claim(&key("w1"), "d", 100, 0, 0).unwrap(), Claimed::First);
        assert_eq!(
            s.claim(&key("w1"), "d", 101, 0, 0).unwrap(),
            Claimed::Pending
        );
        s.complete(&key("w1"), &Outcome::Task("t1".into())).unwrap();
        assert_eq!(
            s.claim(&key("w1"), "d", 102, 0, 0).unwrap(),
            Claimed::Done(Outcome::Task("t1".into()))
        );
        // Committed by the writer: answered from the database, the same way.
        s.store.flush_audit();
        assert!(s.memory.entries.lock().unwrap().get(&key("w1")).is_none());
        assert_eq!(
            s.claim(&key("w1"), "d", 104, 0, 0).unwrap(),
            Claimed::Done(Outcome::Task("t1".into()))
        );
        assert_eq!(
            s.claim(&key("w1"), "e", 104, 0, 0).unwrap(),
            Claimed::Conflict
        );
        // Out of the window: forgotten, a new send.
        assert_eq!(
            s.claim(&key("w1"), "z", 200, 150, 0).unwrap(),
            Claimed::First
        );
        // A direct message reply, read back from the database.
        let m = serde_json::json!({"messageId": "r", "parts": [{"text": "hi"}]});
        s.complete(&key("w1"), &Outcome::Message(m.clone()))
            .unwrap();
        s.store.flush_audit();
        assert_eq!(
            s.claim(&key("w1"), "z", 202, 150, 0).unwrap(),
            Claimed::Done(Outcome::Message(m))
        );
    }

    /// A record the previous process journaled but never committed (killed before its batch)
    /// is recovered when the journal is opened: the repeat is answered from it.
    #[test]
    fn a_record_only_in_the_journal_survives_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        drop(Store::open(&path).unwrap());
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let line = serde_json::json!({"j": 1, "send": {"workspace_id": "w1", "agent_id": "a",
            "message_id": "m1", "digest": "d", "created_at": now, "task_id": "t-lost"}});
        std::fs::write(dir.path().join("gw.db.intents"), format!("{line}\n")).unwrap();
        let (_s, s) = served(&path);
        assert_eq!(
            s.claim(&key("w1"), "d", now, now - 600, now - 60).unwrap(),
            Claimed::Done(Outcome::Task("t-lost".into()))
        );
        assert_eq!(
            s.claim(&key("w1"), "x", now, now - 600, now - 60).unwrap(),
            Claimed::Conflict
        );
        assert_eq!(
            s.claim(&key("w2"), "d", now, now - 600, now - 60).unwrap(),
            Claimed::First
        );
    }

    /// A store dropped with records still queued flushes them; a claim in flight is not
    /// written anywhere: the next process takes the messageId as a new send.
    #[test]
    fn a_restart_keeps_completed_records_and_forgets_claims_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        {
            let (_store, s) = served(&path);
            assert_eq!(
                s.claim(&key("w1"), "d", now, now - 600, now - 60).unwrap(),
                Claimed::First
            );
            s.complete(&key("w1"), &Outcome::Task("t1".into())).unwrap();
            assert_eq!(
                s.claim(&key("w2"), "d", now, now - 600, now - 60).unwrap(),
                Claimed::First
            );
        }
        let (_store, s) = served(&path);
        assert_eq!(
            s.claim(&key("w1"), "d", now, now - 600, now - 60).unwrap(),
            Claimed::Done(Outcome::Task("t1".into()))
        );
        assert_eq!(
            s.claim(&key("w2"), "d", now, now - 600, now - 60).unwrap(),
            Claimed::First
        );
    }
}
