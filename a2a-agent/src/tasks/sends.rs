//! Where accepted sends are remembered for the retry contract of `idempotency`: the
//! [`SendLog`] (in memory or in the SQLite file) and its records, and the in-process
//! [`Claims`] that serialise concurrent sends of one `messageId`.

use crate::model::Message;
use crate::store::StoreError;
#[cfg(feature = "sqlite")]
use crate::store::{SqliteDb, sq};
use async_trait::async_trait;
use std::collections::{HashMap, VecDeque};
#[cfg(feature = "sqlite")]
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a send ended as: a task, or a direct message (no task).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendTarget {
    /// The task the send created or continued.
    Task(String),
    /// The direct message the agent answered with.
    Message(Box<Message>),
}

/// One accepted send.
#[derive(Debug, Clone, PartialEq)]
pub struct SendRecord {
    /// SHA-256 (hex) of the message as received.
    pub digest: String,
    /// What it ended as.
    pub target: SendTarget,
    /// When it was accepted (ms since the Unix epoch).
    pub at_ms: i64,
}

/// Where accepted sends are remembered, per (owner key, messageId).
#[async_trait]
pub trait SendLog: Send + Sync + 'static {
    /// The record of `message_id` from `owner`, if one was kept after `since_ms`.
    async fn get(
        &self,
        owner: &str,
        message_id: &str,
        since_ms: i64,
    ) -> Result<Option<SendRecord>, StoreError>;
    /// Keep `rec` (replacing an earlier record of the same send).
    async fn put(&self, owner: &str, message_id: &str, rec: SendRecord) -> Result<(), StoreError>;
}

/// The digest of a message as the caller sent it.
pub fn digest(m: &Message) -> String {
    let bytes = serde_json::to_vec(m).unwrap_or_default();
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &bytes);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Now, in ms since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

type Key = (String, String);

/// Records by key, and keys in the order they were kept (with the time, for the window).
type MemRecords = (HashMap<Key, SendRecord>, VecDeque<(Key, i64)>);

/// Records in memory, bounded in count (the oldest go first) and by the window.
pub struct MemorySendLog {
    window: Duration,
    cap: usize,
    inner: Mutex<MemRecords>,
}

impl MemorySendLog {
    /// A log keeping records for `window`, at most `cap` of them.
    pub fn new(window: Duration, cap: usize) -> Self {
        MemorySendLog {
            window,
            cap: cap.max(1),
            inner: Mutex::new((HashMap::new(), VecDeque::new())),
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, MemRecords>, StoreError> {
        self.inner
            .lock()
            .map_err(|_| StoreError("send log poisoned".into()))
    }
}

#[async_trait]
impl SendLog for MemorySendLog {
    async fn get(
        &self,
        owner: &str,
        message_id: &str,
        since_ms: i64,
    ) -> Result<Option<SendRecord>, StoreError> {
        let g = self.lock()?;
        Ok(g.0
            .get(&(owner.to_string(), message_id.to_string()))
            .filter(|r| r.at_ms >= since_ms)
            .cloned())
    }

    async fn put(&self, owner: &str, message_id: &str, rec: SendRecord) -> Result<(), StoreError> {
        let key = (owner.to_string(), message_id.to_string());
        let mut g = self.lock()?;
        let (map, order) = &mut *g;
        let at = rec.at_ms;
        if map.insert(key.clone(), rec).is_none() {
            order.push_back((key, at));
        }
        let horizon = now_ms() - i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX);
        while let Some((k, at)) = order.front().cloned() {
            if map.len() <= self.cap && at >= horizon {
                break;
            }
            order.pop_front();
            if map.get(&k).is_some_and(|r| r.at_ms == at) {
                map.remove(&k);
            }
        }
        Ok(())
    }
}

/// Records in the agent's SQLite file (table `sends`), so that a retry after a restart is
/// still recognised.
#[cfg(feature = "sqlite")]
pub struct SqliteSendLog {
    db: SqliteDb,
    window: Duration,
}

#[cfg(feature = "sqlite")]
impl SqliteSendLog {
    /// Open (or create) the log in the database at `path`, keeping records for `window`.
    pub fn open(path: impl AsRef<Path>, window: Duration) -> Result<Self, StoreError> {
        let db = SqliteDb::open(
            path,
            "CREATE TABLE IF NOT EXISTS sends (
                owner TEXT NOT NULL,
                message_id TEXT NOT NULL,
                digest TEXT NOT NULL,
                target TEXT NOT NULL,
                at INTEGER NOT NULL,
                PRIMARY KEY (owner, message_id)
             ) WITHOUT ROWID;
             CREATE INDEX IF NOT EXISTS sends_at ON sends(at);",
        )?;
        Ok(SqliteSendLog { db, window })
    }
}

#[cfg(feature = "sqlite")]
#[async_trait]
impl SendLog for SqliteSendLog {
    async fn get(
        &self,
        owner: &str,
        message_id: &str,
        since_ms: i64,
    ) -> Result<Option<SendRecord>, StoreError> {
        let (o, m) = (owner.to_string(), message_id.to_string());
        self.db.with(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT digest, target, at FROM sends WHERE owner = ?1 AND message_id = ?2 AND at >= ?3",
                )
                .map_err(sq)?;
            let mut rows = st.query(rusqlite::params![o, m, since_ms]).map_err(sq)?;
            let Some(r) = rows.next().map_err(sq)? else {
                return Ok(None);
            };
            let target: String = r.get(1).map_err(sq)?;
            Ok(Some(SendRecord {
                digest: r.get(0).map_err(sq)?,
                target: serde_json::from_str(&target).map_err(sq)?,
                at_ms: r.get(2).map_err(sq)?,
            }))
        })
        .await
    }

    async fn put(&self, owner: &str, message_id: &str, rec: SendRecord) -> Result<(), StoreError> {
        let (o, m) = (owner.to_string(), message_id.to_string());
        let target = serde_json::to_string(&rec.target).map_err(sq)?;
        let horizon = now_ms() - i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX);
        self.db.with(move |c| {
            c.prepare_cached(
                "INSERT OR REPLACE INTO sends(owner, message_id, digest, target, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| st.execute(rusqlite::params![o, m, rec.digest, target, rec.at_ms]))
            .map_err(sq)?;
            c.prepare_cached("DELETE FROM sends WHERE at < ?1")
                .and_then(|mut st| st.execute([horizon]))
                .map_err(sq)?;
            Ok(())
        })
        .await
    }
}

/// In-process claims on (owner, messageId) while the first send of it is being accepted.
#[derive(Default)]
pub(crate) struct Claims {
    inner: Mutex<HashMap<Key, (String, tokio::sync::watch::Receiver<bool>)>>,
}

/// What [`Claims::claim`] found.
pub(crate) enum Claim {
    /// This send is the first: it runs, and must [`Claims::release`] the key when its record
    /// is kept (or it failed).
    First(tokio::sync::watch::Sender<bool>),
    /// Another send of the same message is being accepted: wait, then look the record up.
    Wait(tokio::sync::watch::Receiver<bool>),
    /// Another send of the same `messageId` with a different message is being accepted.
    Conflict,
}

impl Claims {
    /// Claim `key` for a send of a message with `digest`.
    pub(crate) fn claim(&self, owner: &str, message_id: &str, digest: &str) -> Claim {
        let key = (owner.to_string(), message_id.to_string());
        let Ok(mut g) = self.inner.lock() else {
            return Claim::Conflict;
        };
        match g.get(&key) {
            Some((d, rx)) if d == digest => Claim::Wait(rx.clone()),
            Some(_) => Claim::Conflict,
            None => {
                let (tx, rx) = tokio::sync::watch::channel(false);
                g.insert(key, (digest.to_string(), rx));
                Claim::First(tx)
            }
        }
    }

    /// Give `key` up (its record is kept, or the send failed) and wake the waiters.
    pub(crate) fn release(
        &self,
        owner: &str,
        message_id: &str,
        tx: tokio::sync::watch::Sender<bool>,
    ) {
        if let Ok(mut g) = self.inner.lock() {
            g.remove(&(owner.to_string(), message_id.to_string()));
        }
        let _ = tx.send(true);
    }
}

/// The caller's key of an idempotent send.
pub(crate) struct Idem {
    pub(super) owner: String,
    pub(super) message_id: String,
    pub(super) digest: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(task: &str, at_ms: i64) -> SendRecord {
        SendRecord {
            digest: "d".into(),
            target: SendTarget::Task(task.into()),
            at_ms,
        }
    }

    async fn exercise(log: &dyn SendLog) {
        let now = now_ms();
        log.put("alice", "m1", rec("t1", now)).await.unwrap();
        assert_eq!(
            log.get("alice", "m1", now - 1000).await.unwrap(),
            Some(rec("t1", now))
        );
        // Per caller: bob's m1 is another send.
        assert_eq!(log.get("bob", "m1", 0).await.unwrap(), None);
        // Outside the window.
        assert_eq!(log.get("alice", "m1", now + 1).await.unwrap(), None);
    }

    #[tokio::test]
    async fn memory_log_is_per_caller_and_windowed() {
        let log = MemorySendLog::new(Duration::from_secs(60), 2);
        exercise(&log).await;
        let now = now_ms();
        log.put("alice", "m2", rec("t2", now)).await.unwrap();
        log.put("alice", "m3", rec("t3", now)).await.unwrap();
        // Bounded in count: the oldest record went.
        assert_eq!(log.get("alice", "m1", 0).await.unwrap(), None);
        assert!(log.get("alice", "m3", 0).await.unwrap().is_some());
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn sqlite_log_is_per_caller_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.db");
        exercise(&SqliteSendLog::open(&p, Duration::from_secs(60)).unwrap()).await;
        let again = SqliteSendLog::open(&p, Duration::from_secs(60)).unwrap();
        assert!(again.get("alice", "m1", 0).await.unwrap().is_some());
    }

    #[test]
    fn claims_serialise_one_message_id_and_refuse_another_body() {
        let c = Claims::default();
        let Claim::First(tx) = c.claim("a", "m", "d1") else {
            panic!("first claim");
        };
        assert!(matches!(c.claim("a", "m", "d1"), Claim::Wait(_)));
        assert!(matches!(c.claim("a", "m", "d2"), Claim::Conflict));
        assert!(matches!(c.claim("b", "m", "d2"), Claim::First(_)));
        c.release("a", "m", tx);
        assert!(matches!(c.claim("a", "m", "d2"), Claim::First(_)));
    }
}
