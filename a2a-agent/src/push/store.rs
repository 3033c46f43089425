//! Where push notification configs live: in memory, or in the SQLite task database.

use crate::edge::version::Version;
use a2a_types::v1::TaskPushNotificationConfig;
use async_trait::async_trait;
#[cfg(feature = "sqlite")]
use std::path::Path;
#[cfg(feature = "sqlite")]
use std::sync::Arc;
use std::sync::Mutex;

/// A stored push config: the 1.0 config (with `id` and `taskId` set), the protocol version it
/// was created with (it picks the delivery body) and the owner of its task.
#[derive(Debug, Clone, PartialEq)]
pub struct PushRecord {
    /// The config (1.0 form; `id` and `task_id` are set).
    pub config: TaskPushNotificationConfig,
    /// The version of the request that created it.
    pub version: Version,
    /// Owner key of the task (see [`crate::caller::CallerProfile::owner_key`]).
    pub owner: String,
}

impl PushRecord {
    /// The task id.
    pub fn task_id(&self) -> &str {
        self.config.task_id.as_deref().unwrap_or("")
    }
    /// The config id.
    pub fn id(&self) -> &str {
        self.config.id.as_deref().unwrap_or("")
    }
}

/// Push store failures.
#[derive(Debug, thiserror::Error)]
#[error("push config store: {0}")]
pub struct PushStoreError(pub String);

/// Where push configs live.
#[async_trait]
pub trait PushConfigStore: Send + Sync + 'static {
    /// Insert, or replace the config with the same task and id.
    async fn put(&self, rec: PushRecord) -> Result<(), PushStoreError>;
    /// The configs of a task, in creation order.
    async fn list(&self, task_id: &str) -> Result<Vec<PushRecord>, PushStoreError>;
    /// Remove a config; whether it existed.
    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, PushStoreError>;
    /// The ids of every task with at least one config (read once at start-up).
    async fn task_ids(&self) -> Result<Vec<String>, PushStoreError>;
}

/// In-memory push configs.
#[derive(Default)]
pub struct MemoryPushStore {
    inner: Mutex<Vec<PushRecord>>,
}

fn poisoned() -> PushStoreError {
    PushStoreError("poisoned".into())
}

#[async_trait]
impl PushConfigStore for MemoryPushStore {
    async fn put(&self, rec: PushRecord) -> Result<(), PushStoreError> {
        let mut g = self.inner.lock().map_err(|_| poisoned())?;
        match g
            .iter_mut()
            .find(|r| r.task_id() == rec.task_id() && r.id() == rec.id())
        {
            Some(r) => *r = rec,
            None => g.push(rec),
        }
        Ok(())
    }

    async fn list(&self, task_id: &str) -> Result<Vec<PushRecord>, PushStoreError> {
        let g = self.inner.lock().map_err(|_| poisoned())?;
        Ok(g.iter()
            .filter(|r| r.task_id() == task_id)
            .cloned()
            .collect())
    }

    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, PushStoreError> {
        let mut g = self.inner.lock().map_err(|_| poisoned())?;
        let before = g.len();
        g.retain(|r| !(r.task_id() == task_id && r.id() == id));
        Ok(g.len() != before)
    }

    async fn task_ids(&self) -> Result<Vec<String>, PushStoreError> {
        let g = self.inner.lock().map_err(|_| poisoned())?;
        let mut v: Vec<String> = g.iter().map(|r| r.task_id().to_string()).collect();
        v.sort();
        v.dedup();
        Ok(v)
    }
}

/// Push configs in a `push_configs` table of the SQLite task database (survive a restart).
#[cfg(feature = "sqlite")]
#[derive(Clone)]
pub struct SqlitePushStore {
    conn: Arc<Mutex<rusqlite::Connection>>,
}

#[cfg(feature = "sqlite")]
fn sq(e: impl std::fmt::Display) -> PushStoreError {
    PushStoreError(e.to_string())
}

#[cfg(feature = "sqlite")]
impl SqlitePushStore {
    /// Open (or create) the table in the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, PushStoreError> {
        let conn = rusqlite::Connection::open(path).map_err(sq)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sq)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS push_configs (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                task_id TEXT NOT NULL,
                id TEXT NOT NULL,
                owner TEXT NOT NULL,
                version TEXT NOT NULL,
                body TEXT NOT NULL,
                UNIQUE(task_id, id)
             );",
        )
        .map_err(sq)?;
        Ok(SqlitePushStore {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, PushStoreError> + Send + 'static,
    ) -> Result<T, PushStoreError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let g = conn.lock().map_err(|_| poisoned())?;
            f(&g)
        })
        .await
        .map_err(sq)?
    }
}

#[cfg(feature = "sqlite")]
#[async_trait]
impl PushConfigStore for SqlitePushStore {
    async fn put(&self, rec: PushRecord) -> Result<(), PushStoreError> {
        let body = serde_json::to_string(&rec.config).map_err(sq)?;
        self.with(move |c| {
            c.execute(
                "INSERT INTO push_configs(task_id, id, owner, version, body) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(task_id, id) DO UPDATE SET owner=excluded.owner,
                 version=excluded.version, body=excluded.body",
                rusqlite::params![rec.task_id(), rec.id(), rec.owner, rec.version.as_str(), body],
            )
            .map_err(sq)?;
            Ok(())
        })
        .await
    }

    async fn list(&self, task_id: &str) -> Result<Vec<PushRecord>, PushStoreError> {
        let t = task_id.to_string();
        self.with(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT body, version, owner FROM push_configs WHERE task_id = ?1 ORDER BY seq",
                )
                .map_err(sq)?;
            let mut rows = st.query([t]).map_err(sq)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                let body: String = r.get(0).map_err(sq)?;
                let version: String = r.get(1).map_err(sq)?;
                out.push(PushRecord {
                    config: serde_json::from_str(&body).map_err(sq)?,
                    version: if version == "0.3" {
                        Version::V03
                    } else {
                        Version::V1
                    },
                    owner: r.get(2).map_err(sq)?,
                });
            }
            Ok(out)
        })
        .await
    }

    async fn delete(&self, task_id: &str, id: &str) -> Result<bool, PushStoreError> {
        let (t, i) = (task_id.to_string(), id.to_string());
        self.with(move |c| {
            let n = c
                .execute(
                    "DELETE FROM push_configs WHERE task_id = ?1 AND id = ?2",
                    rusqlite::params![t, i],
                )
                .map_err(sq)?;
            Ok(n > 0)
        })
        .await
    }

    async fn task_ids(&self) -> Result<Vec<String>, PushStoreError> {
        self.with(|c| {
            let mut st = c
                .prepare_cached("SELECT DISTINCT task_id FROM push_configs")
                .map_err(sq)?;
            let mut rows = st.query([]).map_err(sq)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                out.push(r.get(0).map_err(sq)?);
            }
            Ok(out)
        })
        .await
    }
}
