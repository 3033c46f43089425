//! The SQLite file: [`SqliteDb`], the one connection each SQLite store of the agent holds on it,
//! and [`SqliteStore`], the task store that survives a restart.

use super::api::{
    DueNotice, Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore,
};
use super::outbox;
use crate::model::{Task, TaskState};
use async_trait::async_trait;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One SQLite connection (WAL journal, `synchronous = NORMAL`, 5 s busy timeout) used from async
/// code on the blocking pool: the task store, the replay log and the send log each hold one on
/// the same file.
#[derive(Clone)]
pub(crate) struct SqliteDb {
    conn: Arc<Mutex<rusqlite::Connection>>,
}

/// The schema version of the agent's SQLite file (`PRAGMA user_version`): a file a newer
/// release wrote (a higher number) is refused instead of written into.
pub(crate) const SCHEMA_VERSION: i64 = 1;

/// A SQLite error as a store error.
pub(crate) fn sq(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

impl SqliteDb {
    /// Open (or create) the database at `path` and run `schema` (idempotent DDL).
    pub(crate) fn open(path: impl AsRef<Path>, schema: &str) -> Result<Self, StoreError> {
        let conn = rusqlite::Connection::open(path).map_err(sq)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sq)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sq)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(sq)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sq)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError(format!(
                "the database's schema is at version {version}, newer than this release knows \
                 ({SCHEMA_VERSION}): run the newer release, or restore the backup taken before \
                 the upgrade (docs/operations.md)"
            )));
        }
        conn.execute_batch(schema).map_err(sq)?;
        if version < SCHEMA_VERSION {
            conn.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(sq)?;
        }
        Ok(SqliteDb {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Run `f` with the connection on the blocking pool.
    pub(crate) async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let g = conn.lock().map_err(|_| StoreError("poisoned".into()))?;
            f(&g)
        })
        .await
        .map_err(sq)?
    }
}

/// SQLite store (rusqlite, WAL journal): tasks survive a restart, and so do push notifications
/// not yet delivered (its outbox, the `push_outbox` table). Calls run on the blocking pool.
#[derive(Clone)]
pub struct SqliteStore {
    db: SqliteDb,
}

impl SqliteStore {
    /// Open (or create) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let schema = format!(
            "CREATE TABLE IF NOT EXISTS tasks (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL,
                context_id TEXT,
                state TEXT NOT NULL,
                ts INTEGER NOT NULL,
                body TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS tasks_owner_ts ON tasks(owner, ts DESC, id DESC);
             {}",
            outbox::SCHEMA
        );
        let db = SqliteDb::open(path, &schema)?;
        Ok(SqliteStore { db })
    }

    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.db.with(f).await
    }
}

/// Insert or replace task `t` (its JSON `body`).
fn upsert(c: &rusqlite::Connection, t: &StoredTask, body: &str) -> Result<(), StoreError> {
    c.prepare_cached(
        "INSERT INTO tasks(id, owner, context_id, state, ts, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(id) DO UPDATE SET owner=excluded.owner, context_id=excluded.context_id,
         state=excluded.state, ts=excluded.ts, body=excluded.body",
    )
    .map_err(sq)?
    .execute(rusqlite::params![
        t.task.id,
        t.owner,
        t.task.context_id,
        t.task.status.state.as_str(),
        t.ms(),
        body
    ])
    .map_err(sq)?;
    Ok(())
}

fn row_to_task(body: String, owner: String) -> Result<StoredTask, StoreError> {
    let task: Task = serde_json::from_str(&body).map_err(sq)?;
    Ok(StoredTask { task, owner })
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.with(move |c| {
            c.execute("DELETE FROM tasks WHERE id = ?1", [id])
                .map_err(sq)?;
            Ok(())
        })
        .await
    }

    async fn put(&self, t: StoredTask) -> Result<(), StoreError> {
        let body = serde_json::to_string(&t.task).map_err(sq)?;
        self.with(move |c| upsert(c, &t, &body)).await
    }

    async fn put_with_notices(
        &self,
        t: StoredTask,
        notices: Vec<Notice>,
    ) -> Result<Vec<i64>, StoreError> {
        let body = serde_json::to_string(&t.task).map_err(sq)?;
        self.with(move |c| {
            if notices.is_empty() {
                return upsert(c, &t, &body).map(|()| Vec::new());
            }
            let tx = c.unchecked_transaction().map_err(sq)?;
            upsert(&tx, &t, &body)?;
            let seqs = outbox::insert(&tx, &notices)?;
            tx.commit().map_err(sq)?;
            Ok(seqs)
        })
        .await
    }

    async fn record_notices(&self, notices: Vec<Notice>) -> Result<Vec<i64>, StoreError> {
        if notices.is_empty() {
            return Ok(Vec::new());
        }
        self.with(move |c| {
            let tx = c.unchecked_transaction().map_err(sq)?;
            let seqs = outbox::insert(&tx, &notices)?;
            tx.commit().map_err(sq)?;
            Ok(seqs)
        })
        .await
    }

    async fn notice_done(&self, seq: i64) -> Result<(), StoreError> {
        self.with(move |c| outbox::remove(c, seq)).await
    }

    async fn due_notices(&self) -> Result<Vec<DueNotice>, StoreError> {
        self.with(outbox::due).await
    }

    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        let id = id.to_string();
        self.with(move |c| {
            let mut st = c
                .prepare_cached("SELECT body, owner FROM tasks WHERE id = ?1")
                .map_err(sq)?;
            let mut rows = st.query([id]).map_err(sq)?;
            match rows.next().map_err(sq)? {
                Some(r) => Ok(Some(row_to_task(
                    r.get(0).map_err(sq)?,
                    r.get(1).map_err(sq)?,
                )?)),
                None => Ok(None),
            }
        })
        .await
    }

    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        let f = filter.clone();
        self.with(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT body, owner FROM tasks WHERE owner = ?1
                     AND (?2 IS NULL OR context_id = ?2)
                     AND (?3 IS NULL OR state = ?3)
                     AND (?4 IS NULL OR ts >= ?4)
                     ORDER BY ts DESC, id DESC",
                )
                .map_err(sq)?;
            let mut rows = st
                .query(rusqlite::params![
                    f.owner,
                    f.context_id,
                    f.state.map(|s| s.as_str()),
                    f.status_timestamp_after.map(|t| t.unix_millis() as i64)
                ])
                .map_err(sq)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                out.push(row_to_task(r.get(0).map_err(sq)?, r.get(1).map_err(sq)?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn page(
        &self,
        filter: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let f = filter.clone();
        let after = after.cloned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(move |c| {
            let ctx = f.context_id.clone();
            let state = f.state.map(|s| s.as_str());
            let ts = f.status_timestamp_after.map(|t| t.unix_millis() as i64);
            let total: i64 = c
                .prepare_cached(
                    "SELECT COUNT(*) FROM tasks WHERE owner = ?1
                     AND (?2 IS NULL OR context_id = ?2)
                     AND (?3 IS NULL OR state = ?3)
                     AND (?4 IS NULL OR ts >= ?4)",
                )
                .map_err(sq)?
                .query_row(rusqlite::params![f.owner, ctx, state, ts], |r| r.get(0))
                .map_err(sq)?;
            let mut st = c
                .prepare_cached(
                    "SELECT body, owner FROM tasks WHERE owner = ?1
                     AND (?2 IS NULL OR context_id = ?2)
                     AND (?3 IS NULL OR state = ?3)
                     AND (?4 IS NULL OR ts >= ?4)
                     AND (?5 IS NULL OR ts < ?5 OR (ts = ?5 AND id < ?6))
                     ORDER BY ts DESC, id DESC LIMIT ?7",
                )
                .map_err(sq)?;
            let (am, ai) = match &after {
                Some((m, i)) => (Some(*m), Some(i.clone())),
                None => (None, None),
            };
            let mut rows = st
                .query(rusqlite::params![
                    f.owner,
                    ctx,
                    state,
                    ts,
                    am,
                    ai,
                    limit.saturating_add(1)
                ])
                .map_err(sq)?;
            let mut tasks = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                tasks.push(row_to_task(r.get(0).map_err(sq)?, r.get(1).map_err(sq)?)?);
            }
            let more = tasks.len() as i64 > limit;
            tasks.truncate(limit as usize);
            Ok(TaskPage {
                tasks,
                total: total as usize,
                more,
            })
        })
        .await
    }

    async fn unfinished(&self) -> Result<Vec<StoredTask>, StoreError> {
        self.with(|c| {
            let mut st = c
                .prepare("SELECT body, owner FROM tasks WHERE state IN (?1, ?2) ORDER BY ts, id")
                .map_err(sq)?;
            let mut rows = st
                .query(rusqlite::params![
                    TaskState::Submitted.as_str(),
                    TaskState::Working.as_str()
                ])
                .map_err(sq)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(sq)? {
                out.push(row_to_task(r.get(0).map_err(sq)?, r.get(1).map_err(sq)?)?);
            }
            Ok(out)
        })
        .await
    }

    async fn count(&self) -> Result<usize, StoreError> {
        self.with(|c| {
            let n: i64 = c
                .query_row("SELECT COUNT(*) FROM tasks", [], |r| r.get(0))
                .map_err(sq)?;
            Ok(n as usize)
        })
        .await
    }
}
