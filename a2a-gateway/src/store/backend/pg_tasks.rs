//! Task ownership bindings and task records on PostgreSQL, shared by replicas (the
//! `task_owners` table of `pg_schema`); idempotent sends are in `pg_sends`.
//!
//! Unlike the SQLite file, nothing is journaled: each bind and status record goes through the
//! replica's group-commit writer (`pg_writer`), in the transaction of the next batch, and
//! returns once that has committed, so every replica reads it once it returns. A bind is an
//! `INSERT … ON CONFLICT DO NOTHING` on the unique (endpoint, task id): of two replicas
//! binding one task at once exactly one inserts, the other reads the winner's owner. A
//! listing reads its page and its count in one read-only `REPEATABLE READ` transaction (the
//! same snapshot), the unfiltered count from `task_owner_counts`, kept exact by triggers;
//! task ids are compared and ordered byte-wise (`COLLATE "C"`, indexed so by migration 3), as
//! SQLite orders them, so pages are the same on both backends.

use std::time::Duration;

use a2a_pg::tokio_postgres::IsolationLevel;
use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::{Pool, PoolOptions};

use super::super::pg_schema::{COMPONENT, PG_MIGRATIONS};
use super::super::{Bound, Owner, StoreError, TaskQuery, TaskRecord, TaskStatusRow, now};
use super::pg_writer::{Client, Writer};
use super::{PgRegistry, TaskStore};

/// Task records and idempotent sends on PostgreSQL (see the module doc). Cheap to clone;
/// the clones share one pool.
#[derive(Clone)]
pub struct PgRecords {
    pub(super) pool: Pool,
    /// The replica's group-commit writer.
    pub(super) writer: Writer,
}

impl PgRecords {
    /// Connects to the database at `url` (`postgres://…`) and applies the gateway's
    /// migrations (once across replicas).
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<PgRecords, StoreError> {
        let pool = a2a_pg::pool(url, opts)?;
        {
            let mut c = pool.get().await?;
            a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
        }
        let writer = Writer::start(pool.clone());
        Ok(PgRecords { pool, writer })
    }

    /// One statement's affected rows.
    pub(super) async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let c = self.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.execute(&st, params).await?)
    }

    /// The rows of one query.
    pub(super) async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<a2a_pg::tokio_postgres::Row>, StoreError> {
        let c = self.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.query(&st, params).await?)
    }
}

impl PgRegistry {
    /// Task records and sends on the same database and pool as this registry.
    pub fn records(&self) -> PgRecords {
        PgRecords {
            pool: self.pool().clone(),
            writer: self.writer().clone(),
        }
    }
}

/// A task's owner.
const OWNER: &str = "SELECT workspace_id, agent_id FROM task_owners
    WHERE endpoint = $1 AND task_id = $2";

/// Unix milliseconds now (a status record's `checked_at`).
fn now_ms() -> i64 {
    let ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl PgRecords {
    /// Binds like [`TaskStore::bind`]; a new binding is inserted with `status` (the first
    /// status of the same task, applied as a record of it would be). Returns the binding and
    /// the status still to record (an existing binding's).
    pub(super) async fn bind_with_status(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
        status: Option<TaskStatusRow>,
    ) -> Result<(Bound, Option<TaskStatusRow>), StoreError> {
        // Inserted with the row only when it is this task's (else recorded after, as any).
        let first = status
            .as_ref()
            .filter(|s| s.task_id == task_id && s.endpoint == endpoint && !s.gone)
            .cloned()
            .map(std::sync::Arc::new);
        let inserted_with = first.is_some();
        let (e, t, o) = (endpoint.to_owned(), task_id.to_owned(), owner.clone());
        let bound = self
            .writer
            .run(move |c: &Client| {
                let (e, t, o, first) = (e.clone(), t.clone(), o.clone(), first.clone());
                Box::pin(async move { bind_on(c, &e, &t, &o, first.as_deref()).await })
            })
            .await?;
        Ok(match bound {
            Bound::New if inserted_with => (bound, None),
            _ => (bound, status),
        })
    }
}

impl TaskStore for PgRecords {
    async fn bind(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
    ) -> Result<Bound, StoreError> {
        let (e, t, o) = (endpoint.to_owned(), task_id.to_owned(), owner.clone());
        self.writer
            .run(move |c: &Client| {
                let (e, t, o) = (e.clone(), t.clone(), o.clone());
                Box::pin(async move { bind_on(c, &e, &t, &o, None).await })
            })
            .await
    }

    async fn owner(&self, endpoint: &str, task_id: &str) -> Result<Option<Owner>, StoreError> {
        Ok(self
            .query(OWNER, &[&endpoint, &task_id])
            .await?
            .first()
            .map(|r| Owner {
                workspace_id: r.get(0),
                agent_id: r.get(1),
            }))
    }

    async fn owned_tasks(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let rows = self
            .query(
                "SELECT seq, task_id FROM task_owners WHERE workspace_id = $1 AND agent_id = $2
                   AND endpoint = $3 AND seq > $4 ORDER BY seq LIMIT $5",
                &[
                    &owner.workspace_id,
                    &owner.agent_id,
                    &endpoint,
                    &after,
                    &limit.max(0),
                ],
            )
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    async fn forget(&self, endpoint: &str, task_id: &str) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM task_owners WHERE endpoint = $1 AND task_id = $2",
            &[&endpoint, &task_id],
        )
        .await?;
        Ok(())
    }

    async fn record_status(&self, r: TaskStatusRow) -> Result<(), StoreError> {
        let r = std::sync::Arc::new(r);
        self.writer
            .run(move |c: &Client| {
                let r = r.clone();
                Box::pin(async move { record_on(c, &r).await })
            })
            .await
    }

    async fn settle(&self) {
        // Every bind and record was committed before it returned.
    }

    async fn task_records(
        &self,
        endpoint: &str,
        owner: &Owner,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError> {
        let after = q.after.unwrap_or(i64::MIN);
        let (state, context_id) = (q.state, q.context_id);
        let mut args: Vec<&(dyn ToSql + Sync)> =
            vec![&owner.workspace_id, &owner.agent_id, &endpoint, &after];
        let mut filter = String::from(
            "workspace_id = $1 AND agent_id = $2 AND endpoint = $3 AND NOT gone
               AND status_at >= $4",
        );
        if let Some(s) = &state {
            args.push(s);
            filter.push_str(&format!(" AND state = ${}", args.len()));
        }
        if let Some(c) = &context_id {
            args.push(c);
            filter.push_str(&format!(" AND context_id = ${}", args.len()));
        }
        // Unfiltered: the owner's kept count (its stripes: at most 16 rows, however many
        // tasks; migration 10).
        let unfiltered = state.is_none() && context_id.is_none() && q.after.is_none();
        let (count_sql, count_args) = if unfiltered {
            (
                "SELECT COALESCE((SELECT SUM(listed) FROM task_owner_counts
                   WHERE workspace_id = $1 AND agent_id = $2 AND endpoint = $3), 0)::BIGINT"
                    .to_owned(),
                &args[..3],
            )
        } else {
            (
                format!("SELECT COUNT(*) FROM task_owners WHERE {filter}"),
                &args[..],
            )
        };
        let (at, id) = q.cursor.unwrap_or((i64::MAX, ""));
        let (limit, offset) = (clamp(q.limit), clamp(q.offset));
        let n = args.len();
        let page_sql = format!(
            "SELECT task_id, context_id, state, status_at FROM task_owners WHERE {filter}
               AND status_at <= ${a} AND (status_at < ${a} OR task_id COLLATE \"C\" > ${i})
             ORDER BY status_at DESC, task_id COLLATE \"C\" LIMIT ${l} OFFSET ${o}",
            a = n + 1,
            i = n + 2,
            l = n + 3,
            o = n + 4,
        );
        let mut page_args = args.clone();
        page_args.extend([&at as &(dyn ToSql + Sync), &id, &limit, &offset]);
        let mut c = self.pool.get().await?;
        let tx = c
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let count_st = tx.prepare_cached(&count_sql).await?;
        let total: i64 = tx.query_one(&count_st, count_args).await?.get(0);
        let page_st = tx.prepare_cached(&page_sql).await?;
        let rows = tx.query(&page_st, &page_args).await?;
        tx.commit().await?;
        let rows = rows
            .iter()
            .map(|r| TaskRecord {
                task_id: r.get(0),
                context_id: r.get(1),
                state: r.get(2),
                status_at: r.get(3),
            })
            .collect();
        Ok((rows, u64::try_from(total).unwrap_or(0)))
    }

    async fn unsettled(
        &self,
        endpoint: &str,
        owner: &Owner,
        before: i64,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        let rows = self
            .query(
                "SELECT task_id FROM task_owners WHERE workspace_id = $1 AND agent_id = $2
                   AND endpoint = $3 AND open AND checked_at < $4 AND NOT gone
                 ORDER BY checked_at LIMIT $5",
                &[
                    &owner.workspace_id,
                    &owner.agent_id,
                    &endpoint,
                    &before,
                    &clamp(limit),
                ],
            )
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn trim_task_records(
        &self,
        max_age: Duration,
        batch: usize,
    ) -> Result<usize, StoreError> {
        let age = i64::try_from(max_age.as_millis()).unwrap_or(i64::MAX);
        let cutoff = now_ms().saturating_sub(age);
        let batch = i64::try_from(batch.max(1)).unwrap_or(i64::MAX);
        // One statement: the oldest records (rows another replica's pass holds are skipped),
        // their bindings and their push callbacks (delivered marks cascade).
        let rows = self
            .query(
                "WITH old AS (
                   SELECT seq FROM task_owners
                   WHERE GREATEST(created_at * 1000, checked_at) < $1
                   ORDER BY GREATEST(created_at * 1000, checked_at) LIMIT $2
                   FOR UPDATE SKIP LOCKED),
                 gone AS (
                   DELETE FROM task_owners t USING old WHERE t.seq = old.seq
                   RETURNING t.workspace_id, t.agent_id, t.task_id),
                 callbacks AS (
                   DELETE FROM push_callbacks p USING gone
                   WHERE p.workspace_id = gone.workspace_id AND p.agent_id = gone.agent_id
                     AND p.task_id = gone.task_id)
                 SELECT COUNT(*) FROM gone",
                &[&cutoff, &batch],
            )
            .await?;
        let n: i64 = rows.first().map_or(0, |r| r.get(0));
        Ok(usize::try_from(n).unwrap_or(0))
    }

    async fn task_record_count(&self) -> Result<u64, StoreError> {
        let rows = self.query("SELECT COUNT(*) FROM task_owners", &[]).await?;
        let n: i64 = rows.first().map_or(0, |r| r.get(0));
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// Binds a task on `c` (see [`TaskStore::bind`]); a new binding is inserted with `status`
/// when given (what [`record_on`] would make of the fresh row: its context, state, time and
/// whether it is open, checked now).
async fn bind_on(
    c: &Client,
    endpoint: &str,
    task_id: &str,
    owner: &Owner,
    status: Option<&TaskStatusRow>,
) -> Result<Bound, StoreError> {
    // A binding deleted between the insert and the read (retention, forget) is bound again: a
    // few rounds at most.
    for _ in 0..3 {
        let n = match status {
            None => {
                let st = c
                    .prepare_cached(
                        "INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id,
                           created_at)
                         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (endpoint, task_id) DO NOTHING",
                    )
                    .await?;
                let args: [&(dyn ToSql + Sync); 5] = [
                    &endpoint,
                    &task_id,
                    &owner.workspace_id,
                    &owner.agent_id,
                    &now(),
                ];
                c.execute(&st, &args).await?
            }
            Some(r) => {
                let st = c
                    .prepare_cached(
                        "INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id,
                           created_at, context_id, state, status_at, open, gone, checked_at)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, FALSE, $10)
                         ON CONFLICT (endpoint, task_id) DO NOTHING",
                    )
                    .await?;
                let args: [&(dyn ToSql + Sync); 10] = [
                    &endpoint,
                    &task_id,
                    &owner.workspace_id,
                    &owner.agent_id,
                    &now(),
                    &r.context_id,
                    &r.state,
                    &r.status_at,
                    &r.open,
                    &now_ms(),
                ];
                c.execute(&st, &args).await?
            }
        };
        if n == 1 {
            return Ok(Bound::New);
        }
        let st = c.prepare_cached(OWNER).await?;
        if let Some(r) = c.query(&st, &[&endpoint, &task_id]).await?.first() {
            let (ws, agent): (String, String) = (r.get(0), r.get(1));
            return Ok(Bound::existing(owner, &ws, &agent));
        }
    }
    Err(StoreError::Invalid(format!(
        "task {task_id}: its binding kept changing while being bound"
    )))
}

/// A task's status record: marks it gone.
const GONE: &str = "UPDATE task_owners SET gone = TRUE, checked_at = $5
     WHERE endpoint = $1 AND task_id = $2
       AND (workspace_id, agent_id) IS NOT DISTINCT FROM ($3, $4)";

/// A task's status record: its state, as SQLite's writer applies it.
const STATUS: &str = "UPDATE task_owners SET context_id = COALESCE($5, context_id), state = $6,
       status_at = $7, open = $8, gone = FALSE, checked_at = $9
     WHERE endpoint = $1 AND task_id = $2
       AND (workspace_id, agent_id) IS NOT DISTINCT FROM ($3, $4)
       AND ($10 OR gone OR status_at < $7 OR (status_at = $7 AND (open OR NOT $8)))";

/// Records a task's status on `c` (see [`TaskStore::record_status`]).
///
/// Both statements find the row by its unique key `(endpoint, task_id)` alone and check the
/// owner as a filter: `IS NOT DISTINCT FROM` is never an index condition, so the planner
/// cannot take an index that begins with the owner instead (a cached generic plan did, with
/// statistics of a younger table: each status record then read every task of its owner,
/// 2,600 rows per hop after 5,000 hops; docs/replicas.md "Where the time goes").
async fn record_on(c: &Client, r: &TaskStatusRow) -> Result<(), StoreError> {
    let checked_at = now_ms();
    if r.gone {
        let st = c.prepare_cached(GONE).await?;
        c.execute(
            &st,
            &[
                &r.endpoint,
                &r.task_id,
                &r.workspace_id,
                &r.agent_id,
                &checked_at,
            ],
        )
        .await?;
        return Ok(());
    }
    // As SQLite's writer applies it (`task_records::update_status`): when fresh, when the task
    // was gone, when later, or at the same time unless it would reopen a terminal record. The
    // row lock orders two replicas' records of one task.
    let st = c.prepare_cached(STATUS).await?;
    c.execute(
        &st,
        &[
            &r.endpoint,
            &r.task_id,
            &r.workspace_id,
            &r.agent_id,
            &r.context_id,
            &r.state,
            &r.status_at,
            &r.open,
            &checked_at,
            &r.fresh,
        ],
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::super::pg_schema::{COMPONENT, PG_MIGRATIONS};
    use super::{GONE, STATUS};

    /// The generic plan of each status statement, on a table of 2,000 tasks of one owner
    /// never analyzed (a young deployment's statistics), finds the row by the unique key.
    #[tokio::test]
    async fn a_status_record_finds_its_row_by_the_unique_key() {
        if a2a_pg::testing::server_bin().is_none() {
            eprintln!("SKIPPED: no initdb/pg_ctl");
            return;
        }
        let cluster = a2a_pg::testing::TempCluster::start().unwrap();
        cluster.create_database("plans").unwrap();
        let pool = a2a_pg::pool(&cluster.url_of("plans"), &Default::default()).unwrap();
        let mut c = pool.get().await.unwrap();
        a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS)
            .await
            .unwrap();
        c.batch_execute(
            "INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at)
             SELECT 'http://peer', 't' || i, 'ws', 'agent', 0 FROM generate_series(1, 2000) i;
             SET plan_cache_mode = force_generic_plan",
        )
        .await
        .unwrap();
        for (name, sql, types, args) in [
            (
                "gone",
                GONE,
                "text, text, text, text, bigint",
                "'http://peer', 't1', 'ws', 'agent', 1",
            ),
            (
                "status",
                STATUS,
                "text, text, text, text, text, text, bigint, boolean, bigint, boolean",
                "'http://peer', 't1', 'ws', 'agent', NULL, 'x', 1, TRUE, 1, TRUE",
            ),
        ] {
            c.batch_execute(&format!("PREPARE {name}({types}) AS {sql}"))
                .await
                .unwrap();
            let plan: Vec<String> = c
                .simple_query(&format!("EXPLAIN EXECUTE {name}({args})"))
                .await
                .unwrap()
                .into_iter()
                .filter_map(|m| match m {
                    a2a_pg::tokio_postgres::SimpleQueryMessage::Row(r) => {
                        r.get(0).map(str::to_owned)
                    }
                    _ => None,
                })
                .collect();
            let plan = plan.join("\n");
            assert!(plan.contains("task_owners_task"), "{name}: {plan}");
        }
    }
}
