//! [`PostgresStore`]: tasks and the push outbox in PostgreSQL, shared by every replica of an
//! agent that names the same database (the replay, send and push-config logs use its pool).
//!
//! Each statement is committed before it returns, so every replica reads a task as soon as the
//! replica running it has stored it; listings read their page and their count in one
//! read-only `REPEATABLE READ` transaction (one snapshot), and page by (status time, id) as the
//! other stores do, so a page token from one replica is valid on every other.
//!
//! Unfinished tasks and due notices carry their `runner`, the replica that wrote them. Each
//! store holds its replica's lease, renewed every third of the lease time for all its rows at
//! once (`pg_lease`), and its liveness lock ([`a2a_pg::Alive`]). At start and then
//! periodically ([`TaskStore::unfinished`], [`TaskStore::due_notices`]) a replica takes over,
//! in one `UPDATE`, only the rows of runners that are gone (their lease ended): a replica never
//! ends the running tasks of another that is alive, and of two replicas taking over together
//! one takes each row.
//!
//! Fencing: a task's `runner` is its claim. A write of a task that exists changes it only while
//! its `runner` is still this replica (the `UPSERT`'s `WHERE`): a replica that lost the
//! database for longer than its lease, and whose tasks another replica took over (and ended),
//! finds its writes refused ([`StoreError::is_fenced`]) and stops running the task instead of
//! overwriting the survivor's final state. A turn on another replica takes the claim with
//! [`TaskStore::begin_turn`]; a take-over with [`TaskStore::unfinished`]; the runner id is new
//! at each start, so a claim is never taken back by a restarted replica.
//!
//! Follow-ups (optimistic concurrency): every write of a task moves its `version`; the store
//! remembers the version it last read or wrote of each unfinished task, and
//! [`TaskStore::begin_turn`] marks the task SUBMITTED only while the row still has that
//! version and the status the replica continues from. Of two replicas continuing one task at
//! once, the second finds the version moved and its caller is refused.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::tokio_postgres::{IsolationLevel, Row};
use a2a_pg::{Alive, Pool, PoolOptions};
use async_trait::async_trait;

use super::api::{
    DueNotice, Notice, PageCursor, StoreError, StoredTask, TaskFilter, TaskPage, TaskStore,
};
use super::pg_schema::{COMPONENT, DEFAULT_LEASE, MIGRATIONS, REPLICAS, open_states};
use crate::model::{Task, TaskState, TaskStatus};

/// A PostgreSQL error (or any other failure of this store) as a store error.
pub(crate) fn pg(e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("postgres: {e}"))
}

/// An error of the shared plumbing (its messages name PostgreSQL already).
pub(super) fn setup(e: a2a_pg::PgError) -> StoreError {
    StoreError(e.to_string())
}

/// Column `i` of `r` (an error, not a panic, if the schema were not ours).
pub(crate) fn col<'a, T: a2a_pg::tokio_postgres::types::FromSql<'a>>(
    r: &'a Row,
    i: usize,
) -> Result<T, StoreError> {
    r.try_get(i).map_err(pg)
}

/// PostgreSQL store (see the module doc): tasks survive a restart and are shared by replicas,
/// and so are push notifications not yet delivered (its outbox). Cheap to clone; the clones
/// share one pool and one liveness lock.
#[derive(Clone)]
pub struct PostgresStore {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) pool: Pool,
    /// This replica's id (a v4 UUID, new at each start).
    pub(super) replica: String,
    /// This replica's liveness lock (freed when the store is dropped).
    _alive: Alive,
    /// The version of each unfinished task this replica last read or wrote (bounded).
    versions: Mutex<HashMap<String, i64>>,
    /// The connection settings (the replicas' listener connects with them).
    pub(super) config: a2a_pg::tokio_postgres::Config,
    /// The lease time in ms (see `pg_lease`).
    pub(super) lease_ms: AtomicU64,
    /// Wakes the renewer when the lease time changes (it renews at once with the new time).
    pub(super) lease_changed: Arc<tokio::sync::Notify>,
}

impl Drop for Inner {
    /// A store dropped (its replica stopped) gives its lease up, so that what it left is taken
    /// over without waiting for the lease to end (best effort: only inside a runtime).
    fn drop(&mut self) {
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let pool = self.pool.clone();
            let id = self.replica.clone();
            rt.spawn(async move {
                let _ = a2a_pg::lease::release(&pool, REPLICAS, &id).await;
            });
        }
    }
}

/// Versions remembered at most; beyond, the memory is cleared and a follow-up begins on the
/// status alone.
const MAX_VERSIONS: usize = 100_000;

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:pass@host:port/db`), applies the
    /// agent's migrations (once across replicas, under an advisory lock) and takes this
    /// replica's liveness lock. A database migrated by a newer release is refused.
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<PostgresStore, StoreError> {
        let pool = a2a_pg::pool(url, opts).map_err(setup)?;
        {
            let mut c = pool.get().await.map_err(pg)?;
            a2a_pg::migrate(&mut c, COMPONENT, MIGRATIONS)
                .await
                .map_err(setup)?;
        }
        let replica = uuid::Uuid::new_v4().to_string();
        let cfg = a2a_pg::pg_config(url, opts).map_err(setup)?;
        let alive = Alive::hold(&cfg, COMPONENT, &replica)
            .await
            .map_err(setup)?;
        let store = PostgresStore {
            inner: Arc::new(Inner {
                pool,
                replica,
                _alive: alive,
                versions: Mutex::new(HashMap::new()),
                config: cfg,
                lease_ms: AtomicU64::new(DEFAULT_LEASE.as_millis() as u64),
                lease_changed: Arc::new(tokio::sync::Notify::new()),
            }),
        };
        // The lease is held before anything is written under this replica's id.
        store.renew().await?;
        Self::keep_renewing(
            Arc::downgrade(&store.inner),
            store.inner.lease_changed.clone(),
        );
        Ok(store)
    }

    /// Its shared state.
    pub(super) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// This replica's id (stored as the `runner` of what it writes).
    pub fn replica_id(&self) -> &str {
        &self.inner.replica
    }

    /// The rows of one query (the replay, send and push-config logs on the same database use
    /// it, and [`PostgresStore::execute`]).
    pub(crate) async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        a2a_pg::query(&self.inner.pool, sql, params)
            .await
            .map_err(setup)
    }

    /// One statement's affected rows.
    pub(crate) async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        a2a_pg::execute(&self.inner.pool, sql, params)
            .await
            .map_err(setup)
    }

    /// Remember `version` of task `id` (forget it once the task is finished).
    fn remember(&self, id: &str, state: TaskState, version: i64) {
        let Ok(mut m) = self.inner.versions.lock() else {
            return;
        };
        if state.is_terminal() {
            m.remove(id);
            return;
        }
        if m.len() >= MAX_VERSIONS && !m.contains_key(id) {
            m.clear();
        }
        m.insert(id.to_owned(), version);
    }

    /// The version of task `id` this replica last saw, taken out.
    fn take_version(&self, id: &str) -> Option<i64> {
        self.inner.versions.lock().ok()?.remove(id)
    }
}

const UPSERT: &str = "INSERT INTO agent_tasks(id, owner, context_id, state, ts, runner, body, seq)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, context_id = EXCLUDED.context_id,
      state = EXCLUDED.state, ts = EXCLUDED.ts, runner = EXCLUDED.runner, body = EXCLUDED.body,
      version = agent_tasks.version + 1, seq = COALESCE(EXCLUDED.seq, agent_tasks.seq)
    WHERE agent_tasks.runner = EXCLUDED.runner
    RETURNING version";

/// The error of a write [`UPSERT`] refused: the task is another replica's now.
fn fenced(id: &str) -> StoreError {
    StoreError::fenced(format!(
        "task {id} was taken over by another replica (this replica's lease ended)"
    ))
}

fn task_of(r: &Row) -> Result<StoredTask, StoreError> {
    let body: &str = col(r, 0)?;
    let task: Task = serde_json::from_str(body).map_err(pg)?;
    Ok(StoredTask {
        task,
        owner: col(r, 1)?,
    })
}

/// A filter's conditions (`$1` is the owner) and their arguments after the owner.
struct Where<'a> {
    sql: String,
    args: Vec<&'a (dyn ToSql + Sync)>,
}

impl<'a> Where<'a> {
    fn of(f: &'a TaskFilter, state: &'a Option<&'static str>, ts: &'a Option<i64>) -> Self {
        let mut w = Where {
            sql: "owner = $1".into(),
            args: vec![&f.owner as &(dyn ToSql + Sync)],
        };
        if let Some(c) = &f.context_id {
            w.and("context_id =", c);
        }
        if let Some(s) = state {
            w.and("state =", s);
        }
        if let Some(t) = ts {
            w.and("ts >=", t);
        }
        w
    }

    fn and(&mut self, cond: &str, arg: &'a (dyn ToSql + Sync)) {
        self.args.push(arg);
        self.sql
            .push_str(&format!(" AND {cond} ${}", self.args.len()));
    }
}

impl PostgresStore {
    /// Upserts `t` (including event `seq` when known) and records `notices`, in one
    /// transaction.
    async fn write(
        &self,
        t: &StoredTask,
        notices: &[Notice],
        seq: Option<u64>,
    ) -> Result<Vec<i64>, StoreError> {
        let body = serde_json::to_string(&t.task).map_err(pg)?;
        let (state, ms) = (t.task.status.state.as_str(), t.ms());
        let seq = seq.map(super::as_i64);
        let args: [&(dyn ToSql + Sync); 8] = [
            &t.task.id,
            &t.owner,
            &t.task.context_id,
            &state,
            &ms,
            &self.inner.replica,
            &body,
            &seq,
        ];
        let mut c = self.inner.pool.get().await.map_err(pg)?;
        if notices.is_empty() {
            let st = c.prepare_cached(UPSERT).await.map_err(pg)?;
            let row = c.query_opt(&st, &args).await.map_err(pg)?;
            let row = row.ok_or_else(|| fenced(&t.task.id))?;
            self.remember(&t.task.id, t.task.status.state, col(&row, 0)?);
            return Ok(Vec::new());
        }
        let tx = c.transaction().await.map_err(pg)?;
        let st = tx.prepare_cached(UPSERT).await.map_err(pg)?;
        // Refused: the transaction is dropped (rolled back) with its notices.
        let row = tx.query_opt(&st, &args).await.map_err(pg)?;
        let row = row.ok_or_else(|| fenced(&t.task.id))?;
        let seqs = self.insert_notices(&tx, notices).await?;
        tx.commit().await.map_err(pg)?;
        self.remember(&t.task.id, t.task.status.state, col(&row, 0)?);
        Ok(seqs)
    }
}

#[async_trait]
impl TaskStore for PostgresStore {
    async fn put(&self, t: StoredTask) -> Result<(), StoreError> {
        self.write(&t, &[], None).await.map(|_| ())
    }

    async fn put_numbered(
        &self,
        t: StoredTask,
        notices: Vec<Notice>,
        seq: u64,
    ) -> Result<Vec<i64>, StoreError> {
        self.write(&t, &notices, Some(seq)).await
    }

    async fn get_numbered(
        &self,
        id: &str,
    ) -> Result<Option<(StoredTask, Option<u64>)>, StoreError> {
        let rows = self
            .query(
                "SELECT body, owner, version, seq FROM agent_tasks WHERE id = $1",
                &[&id],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let t = task_of(r)?;
        self.remember(id, t.task.status.state, col(r, 2)?);
        let seq: Option<i64> = col(r, 3)?;
        Ok(Some((t, seq.and_then(|n| u64::try_from(n).ok()))))
    }

    async fn get(&self, id: &str) -> Result<Option<StoredTask>, StoreError> {
        let rows = self
            .query(
                "SELECT body, owner, version FROM agent_tasks WHERE id = $1",
                &[&id],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let t = task_of(r)?;
        self.remember(id, t.task.status.state, col(r, 2)?);
        Ok(Some(t))
    }

    async fn list(&self, filter: &TaskFilter) -> Result<Vec<StoredTask>, StoreError> {
        let state = filter.state.map(|s| s.as_str());
        let ts = filter
            .status_timestamp_after
            .as_ref()
            .map(|t| t.unix_millis() as i64);
        let w = Where::of(filter, &state, &ts);
        let sql = format!(
            "SELECT body, owner FROM agent_tasks WHERE {} ORDER BY ts DESC, id DESC",
            w.sql
        );
        self.query(&sql, &w.args)
            .await?
            .iter()
            .map(task_of)
            .collect()
    }

    async fn page(
        &self,
        filter: &TaskFilter,
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let state = filter.state.map(|s| s.as_str());
        let ts = filter
            .status_timestamp_after
            .as_ref()
            .map(|t| t.unix_millis() as i64);
        let w = Where::of(filter, &state, &ts);
        let count_sql = format!("SELECT COUNT(*) FROM agent_tasks WHERE {}", w.sql);
        // One more than the page: whether tasks follow it.
        let fetch = i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1);
        let mut args = w.args.clone();
        let mut page_sql = format!("SELECT body, owner FROM agent_tasks WHERE {}", w.sql);
        if let Some((at, id)) = after {
            args.push(at);
            args.push(id);
            page_sql.push_str(&format!(
                " AND (ts, id) < (${}, ${})",
                args.len() - 1,
                args.len()
            ));
        }
        args.push(&fetch);
        page_sql.push_str(&format!(" ORDER BY ts DESC, id DESC LIMIT ${}", args.len()));
        let mut c = self.inner.pool.get().await.map_err(pg)?;
        let tx = c
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(pg)?;
        let st = tx.prepare_cached(&count_sql).await.map_err(pg)?;
        let total: i64 = col(&tx.query_one(&st, &w.args).await.map_err(pg)?, 0)?;
        let st = tx.prepare_cached(&page_sql).await.map_err(pg)?;
        let rows = tx.query(&st, &args).await.map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        let mut tasks = rows.iter().map(task_of).collect::<Result<Vec<_>, _>>()?;
        let more = tasks.len() > limit;
        tasks.truncate(limit);
        Ok(TaskPage {
            tasks,
            total: usize::try_from(total).unwrap_or(0),
            more,
        })
    }

    async fn count(&self) -> Result<usize, StoreError> {
        let rows = self.query("SELECT COUNT(*) FROM agent_tasks", &[]).await?;
        let n: i64 = rows.first().map(|r| col(r, 0)).transpose()?.unwrap_or(0);
        Ok(usize::try_from(n).unwrap_or(0))
    }

    async fn unfinished(&self) -> Result<Vec<StoredTask>, StoreError> {
        let dead = self.dead_runners("agent_tasks", open_states!()).await?;
        if dead.is_empty() {
            return Ok(Vec::new());
        }
        // Taken over in one statement: of two replicas starting together, one gets each task.
        let rows = self
            .query(
                concat!(
                    "UPDATE agent_tasks SET runner = $1 WHERE ",
                    open_states!(),
                    " AND runner = ANY($2) RETURNING body, owner"
                ),
                &[&self.inner.replica, &dead],
            )
            .await?;
        let mut out = rows.iter().map(task_of).collect::<Result<Vec<_>, _>>()?;
        out.sort_by(|a, b| (a.ms(), &a.task.id).cmp(&(b.ms(), &b.task.id)));
        self.forget_leases().await;
        Ok(out)
    }

    async fn delete(&self, id: &str) -> Result<(), StoreError> {
        self.take_version(id);
        self.execute("DELETE FROM agent_tasks WHERE id = $1", &[&id])
            .await?;
        Ok(())
    }

    async fn begin_turn(&self, id: &str, seen: &TaskStatus) -> Result<bool, StoreError> {
        let ms = seen
            .timestamp
            .as_ref()
            .map_or(0, |t| t.unix_millis() as i64);
        let version = self.take_version(id);
        let rows = self
            .query(
                "UPDATE agent_tasks SET state = $5, runner = $6, version = version + 1,
                   cancel_requested = false
                 WHERE id = $1 AND state = $2 AND ts = $3
                   AND ($4::BIGINT IS NULL OR version = $4)
                 RETURNING version",
                &[
                    &id,
                    &seen.state.as_str(),
                    &ms,
                    &version,
                    &TaskState::Submitted.as_str(),
                    &self.inner.replica,
                ],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(false);
        };
        self.remember(id, TaskState::Submitted, col(r, 0)?);
        Ok(true)
    }

    async fn put_with_notices(
        &self,
        t: StoredTask,
        notices: Vec<Notice>,
    ) -> Result<Vec<i64>, StoreError> {
        self.write(&t, &notices, None).await
    }

    async fn record_notices(&self, notices: Vec<Notice>) -> Result<Vec<i64>, StoreError> {
        self.record(&notices).await
    }

    async fn notice_done(&self, seq: i64) -> Result<(), StoreError> {
        self.done(seq).await
    }

    async fn due_notices(&self) -> Result<Vec<DueNotice>, StoreError> {
        self.take_notices(true).await
    }

    async fn orphaned_notices(&self) -> Result<Vec<DueNotice>, StoreError> {
        self.take_notices(false).await
    }
}
