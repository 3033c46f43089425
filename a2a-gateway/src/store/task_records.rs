//! The listing columns of `task_owners` (migration 16): what the gateway last saw of the status
//! of each task it bound, so that a workspace's ListTasks is one indexed query over its own
//! records (`crate::hop::list_tasks`), whatever the peer holds besides.
//!
//! Columns: `context_id`, `state` (the 1.0 name), `status_at` (the status timestamp in Unix
//! nanoseconds, -1 when the peer gave none or nothing was recorded yet), `open` (1 unless the
//! recorded state is terminal), `gone` (1 once the peer answered that it no longer knows the
//! task: the binding stays, the task is no longer listed) and `checked_at` (Unix milliseconds
//! of the last record). Records are written by the audit writer in its batches
//! ([`Store::record_task_status`], not journaled: a record lost in a crash is only older, and
//! the listing reads every listed task from the peer anyway). [`Store::task_records`] reads
//! what is queued beside what is committed (`super::task_overlay`); [`Store::settle_task_records`]
//! waits until what was queued is committed (tests, retention).

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params, params_from_iter};

use super::sql::CachedExt;
use super::{Store, StoreError};

/// Migration: `task_owner_counts`, each owner's number of listed (not gone) tasks per peer
/// endpoint, kept exact by triggers on every insert, delete and change of `gone` of
/// `task_owners`, so that an unfiltered listing's `totalSize` is one row read however many
/// tasks the owner has.
pub(crate) const COUNTS: &str = r#"
    CREATE TABLE task_owner_counts (
        workspace_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        listed INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, agent_id, endpoint)
    ) WITHOUT ROWID;
    INSERT INTO task_owner_counts(workspace_id, agent_id, endpoint, listed)
        SELECT workspace_id, agent_id, endpoint, COUNT(*) FROM task_owners WHERE gone = 0
        GROUP BY workspace_id, agent_id, endpoint;
    CREATE TRIGGER task_owner_counts_insert AFTER INSERT ON task_owners WHEN NEW.gone = 0
    BEGIN
        INSERT OR IGNORE INTO task_owner_counts(workspace_id, agent_id, endpoint, listed)
            VALUES (NEW.workspace_id, NEW.agent_id, NEW.endpoint, 0);
        UPDATE task_owner_counts SET listed = listed + 1
            WHERE workspace_id = NEW.workspace_id AND agent_id = NEW.agent_id
              AND endpoint = NEW.endpoint;
    END;
    CREATE TRIGGER task_owner_counts_delete AFTER DELETE ON task_owners WHEN OLD.gone = 0
    BEGIN
        UPDATE task_owner_counts SET listed = listed - 1
            WHERE workspace_id = OLD.workspace_id AND agent_id = OLD.agent_id
              AND endpoint = OLD.endpoint;
    END;
    CREATE TRIGGER task_owner_counts_gone AFTER UPDATE OF gone ON task_owners
        WHEN OLD.gone <> NEW.gone
    BEGIN
        UPDATE task_owner_counts SET listed = listed + (CASE WHEN NEW.gone = 0 THEN 1 ELSE -1 END)
            WHERE workspace_id = OLD.workspace_id AND agent_id = OLD.agent_id
              AND endpoint = OLD.endpoint;
    END;
"#;

/// One status record of a bound task, as the writer applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStatusRow {
    /// The peer's registered endpoint.
    pub endpoint: String,
    /// The peer's task id.
    pub task_id: String,
    /// Owner: workspace (a record never touches another owner's row).
    pub workspace_id: String,
    /// Owner: registered agent id.
    pub agent_id: String,
    /// The task's context id, when the answer names it.
    pub context_id: Option<String>,
    /// The state, as its 1.0 name.
    pub state: String,
    /// Whether the state is not terminal.
    pub open: bool,
    /// The status timestamp (Unix nanoseconds), -1 when the answer has none.
    pub status_at: i64,
    /// A read of the task itself (GetTask at listing time): replaces the record whatever its
    /// time. Otherwise (answers, events, notifications, which may arrive out of order) a record
    /// older than the one kept is not applied, nor a non-terminal one of the same time as a
    /// terminal one kept.
    pub fresh: bool,
    /// The peer no longer knows the task (the other fields are not applied).
    pub gone: bool,
    /// When it was recorded (Unix milliseconds; set by [`Store::record_task_status`]).
    pub checked_at: i64,
}

/// Applies `r` to its task's row (see [`TaskStatusRow`]); the writer's part.
pub(crate) fn update_status(c: &Connection, r: &TaskStatusRow) -> rusqlite::Result<usize> {
    if r.gone {
        return c.execute_cached(
            "UPDATE task_owners SET gone = 1, checked_at = ?5
             WHERE endpoint = ?1 AND task_id = ?2 AND workspace_id = ?3 AND agent_id = ?4",
            params![
                r.endpoint,
                r.task_id,
                r.workspace_id,
                r.agent_id,
                r.checked_at
            ],
        );
    }
    // Applied when fresh, when the task was gone, when later, or at the same time unless it
    // would reopen a terminal record. A row that is not gone by a statement that leaves `gone`
    // alone: it fires no trigger (`task_owner_counts_gone`), so inside the writer's batch SQLite
    // keeps no statement journal for it (a copy of every page it touches, as much again as the
    // update); else by the statement that applies to any row (a gone row: it clears `gone`;
    // a row not gone: the condition the first one found false).
    let args = params![
        r.endpoint,
        r.task_id,
        r.workspace_id,
        r.agent_id,
        r.context_id,
        r.state,
        r.status_at,
        r.open,
        r.checked_at,
        r.fresh,
    ];
    let n = c.execute_cached(
        "UPDATE task_owners SET context_id = COALESCE(?5, context_id), state = ?6,
           status_at = ?7, open = ?8, checked_at = ?9
         WHERE endpoint = ?1 AND task_id = ?2 AND workspace_id = ?3 AND agent_id = ?4
           AND gone = 0 AND (?10 OR status_at < ?7 OR (status_at = ?7 AND (open = 1 OR ?8 = 0)))",
        args,
    )?;
    if n > 0 {
        return Ok(n);
    }
    c.execute_cached(
        "UPDATE task_owners SET context_id = COALESCE(?5, context_id), state = ?6,
           status_at = ?7, open = ?8, gone = 0, checked_at = ?9
         WHERE endpoint = ?1 AND task_id = ?2 AND workspace_id = ?3 AND agent_id = ?4
           AND (?10 OR gone = 1 OR status_at < ?7 OR (status_at = ?7 AND (open = 1 OR ?8 = 0)))",
        args,
    )
}

/// One page of a ListTasks over the owner's records: filters, keyset cursor and size.
#[derive(Debug, Clone, Default)]
pub struct TaskQuery<'a> {
    /// Only this state (1.0 name).
    pub state: Option<&'a str>,
    /// Only this context.
    pub context_id: Option<&'a str>,
    /// Only status timestamps at or after this one (Unix nanoseconds).
    pub after: Option<i64>,
    /// After this task in the order (its recorded `status_at` and id).
    pub cursor: Option<(i64, &'a str)>,
    /// Rows skipped first (page tokens that carry no cursor).
    pub offset: u64,
    /// Rows at most.
    pub limit: u64,
}

/// A listed task's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    /// The peer's task id.
    pub task_id: String,
    /// Recorded context id.
    pub context_id: Option<String>,
    /// Recorded state (1.0 name), if any was recorded.
    pub state: Option<String>,
    /// Recorded status timestamp (Unix nanoseconds, -1 none).
    pub status_at: i64,
}

impl Store {
    /// Queues a status record for the writer's next batch (does not wait).
    pub fn record_task_status(&self, mut row: TaskStatusRow) -> Result<(), StoreError> {
        row.checked_at = (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000)
            .try_into()
            .unwrap_or(i64::MAX);
        self.audit.status(row)
    }

    /// Returns once the bindings and status records queued so far are committed (at once when
    /// none wait).
    pub async fn settle_task_records(&self) {
        if self.audit.has_pending_statuses() || self.audit.has_pending_bindings() {
            self.audit.flushed().await;
        }
    }

    /// [`Store::task_records`] as committed (what is queued left out).
    pub(crate) fn committed_task_records(
        &self,
        endpoint: &str,
        workspace_id: &str,
        agent_id: &str,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError> {
        self.committed_task_records_with(endpoint, workspace_id, agent_id, q, |_| Ok(()))
            .map(|((), rows, total)| (rows, total))
    }

    /// [`Store::committed_task_records`] after `first`, all in one read transaction: what
    /// `first` reads and the page and count come from the same committed state.
    pub(crate) fn committed_task_records_with<T>(
        &self,
        endpoint: &str,
        workspace_id: &str,
        agent_id: &str,
        q: &TaskQuery<'_>,
        first: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<(T, Vec<TaskRecord>, u64), StoreError> {
        let mut filter = String::from(
            "workspace_id = ? AND agent_id = ? AND endpoint = ? AND gone = 0 AND status_at >= ?",
        );
        let mut args: Vec<SqlValue> = vec![
            workspace_id.to_owned().into(),
            agent_id.to_owned().into(),
            endpoint.to_owned().into(),
            q.after.unwrap_or(i64::MIN).into(),
        ];
        if let Some(s) = q.state {
            filter.push_str(" AND state = ?");
            args.push(s.to_owned().into());
        }
        if let Some(c) = q.context_id {
            filter.push_str(" AND context_id = ?");
            args.push(c.to_owned().into());
        }
        // Unfiltered: the owner's kept count (migration 21, [`COUNTS`]).
        let unfiltered = q.state.is_none() && q.context_id.is_none() && q.after.is_none();
        let count_sql = if unfiltered {
            "SELECT COALESCE((SELECT listed FROM task_owner_counts
               WHERE workspace_id = ?1 AND agent_id = ?2 AND endpoint = ?3), 0)"
                .to_owned()
        } else {
            format!("SELECT COUNT(*) FROM task_owners WHERE {filter}")
        };
        let count_args = if unfiltered { &args[..3] } else { &args[..] };
        let page_sql = format!(
            "SELECT task_id, context_id, state, status_at FROM task_owners WHERE {filter}
               AND status_at <= ? AND (status_at < ? OR task_id > ?)
             ORDER BY status_at DESC, task_id LIMIT ? OFFSET ?"
        );
        let (at, id) = q.cursor.unwrap_or((i64::MAX, ""));
        let mut page_args = args.clone();
        page_args.extend([
            at.into(),
            at.into(),
            id.to_owned().into(),
            i64::try_from(q.limit).unwrap_or(i64::MAX).into(),
            i64::try_from(q.offset).unwrap_or(i64::MAX).into(),
        ]);
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            let c = &*tx;
            let first = first(c)?;
            let total: i64 =
                c.query_row_cached(&count_sql, params_from_iter(count_args.iter()), |r| {
                    r.get(0)
                })?;
            let mut st = c.prepare_cached(&page_sql)?;
            let rows = st.query_map(params_from_iter(page_args.iter()), |r| {
                Ok(TaskRecord {
                    task_id: r.get(0)?,
                    context_id: r.get(1)?,
                    state: r.get(2)?,
                    status_at: r.get(3)?,
                })
            })?;
            let rows = rows.collect::<Result<Vec<_>, _>>()?;
            drop(st);
            tx.commit()?;
            Ok((first, rows, u64::try_from(total).unwrap_or(0)))
        })
    }

    /// Up to `limit` of the owner's tasks at `endpoint` whose record may be out of date: not
    /// terminal (or never recorded), not gone, last recorded before `before` (Unix
    /// milliseconds); the least recently recorded first.
    pub fn unsettled_task_records(
        &self,
        endpoint: &str,
        workspace_id: &str,
        agent_id: &str,
        before: i64,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT task_id FROM task_owners WHERE workspace_id = ?1 AND agent_id = ?2
                   AND endpoint = ?3 AND open = 1 AND checked_at < ?4 AND gone = 0
                 ORDER BY checked_at LIMIT ?5",
            )?;
            let rows = st.query_map(
                params![
                    workspace_id,
                    agent_id,
                    endpoint,
                    before,
                    i64::try_from(limit).unwrap_or(i64::MAX)
                ],
                |r| r.get(0),
            )?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TaskBinding;
    use crate::store::journal::insert_binding;

    fn bind(s: &Store, task: &str, ws: &str) {
        s.with(|c| {
            insert_binding(
                c,
                &TaskBinding {
                    endpoint: "http://p".into(),
                    task_id: task.into(),
                    workspace_id: ws.into(),
                    agent_id: "x".into(),
                },
            )?;
            Ok(())
        })
        .unwrap();
    }

    fn row(task: &str, ws: &str, state: &str, at: i64) -> TaskStatusRow {
        TaskStatusRow {
            endpoint: "http://p".into(),
            task_id: task.into(),
            workspace_id: ws.into(),
            agent_id: "x".into(),
            context_id: Some("c".into()),
            state: state.into(),
            open: !state.ends_with("COMPLETED"),
            status_at: at,
            fresh: false,
            gone: false,
            checked_at: 0,
        }
    }

    fn ids(s: &Store, q: &TaskQuery<'_>) -> (Vec<String>, u64) {
        let (rows, total) = s.task_records("http://p", "a", "x", q).unwrap();
        (rows.into_iter().map(|r| r.task_id).collect(), total)
    }

    #[tokio::test]
    async fn records_order_filter_and_page() {
        let s = Store::open_in_memory().unwrap();
        for (t, ws) in [("t1", "a"), ("t2", "a"), ("t3", "a"), ("u1", "b")] {
            bind(&s, t, ws);
        }
        s.record_task_status(row("t1", "a", "TASK_STATE_WORKING", 10))
            .unwrap();
        s.record_task_status(row("t2", "a", "TASK_STATE_COMPLETED", 30))
            .unwrap();
        s.record_task_status(row("t3", "a", "TASK_STATE_WORKING", 20))
            .unwrap();
        // Another owner's record of the same task id is never applied to a's row.
        s.record_task_status(row("t1", "b", "TASK_STATE_FAILED", 99))
            .unwrap();
        s.settle_task_records().await;
        let all = TaskQuery {
            limit: 10,
            ..TaskQuery::default()
        };
        assert_eq!(
            ids(&s, &all),
            (vec!["t2".into(), "t3".into(), "t1".into()], 3)
        );
        let working = TaskQuery {
            state: Some("TASK_STATE_WORKING"),
            ..all.clone()
        };
        assert_eq!(ids(&s, &working), (vec!["t3".into(), "t1".into()], 2));
        let after = TaskQuery {
            after: Some(20),
            ..all.clone()
        };
        assert_eq!(ids(&s, &after).1, 2);
        let next = TaskQuery {
            cursor: Some((30, "t2")),
            limit: 1,
            ..all.clone()
        };
        assert_eq!(ids(&s, &next), (vec!["t3".into()], 3));
        // An older event does not win; a terminal state is not reopened at the same time; a
        // fresh read replaces the record.
        s.record_task_status(row("t2", "a", "TASK_STATE_WORKING", 25))
            .unwrap();
        s.record_task_status(row("t2", "a", "TASK_STATE_WORKING", 30))
            .unwrap();
        s.settle_task_records().await;
        assert_eq!(ids(&s, &working).1, 2);
        let mut fresh = row("t2", "a", "TASK_STATE_WORKING", 5);
        fresh.fresh = true;
        s.record_task_status(fresh).unwrap();
        s.settle_task_records().await;
        assert_eq!(
            ids(&s, &working),
            (vec!["t3".into(), "t1".into(), "t2".into()], 3)
        );
        // Gone: not listed, not counted; unsettled lists open records not read since.
        let mut gone = row("t1", "a", "", 0);
        gone.gone = true;
        s.record_task_status(gone).unwrap();
        s.settle_task_records().await;
        assert_eq!(ids(&s, &working).1, 2);
        let open = s
            .unsettled_task_records("http://p", "a", "x", i64::MAX, 10)
            .unwrap();
        assert_eq!(open.len(), 2, "{open:?}");
        assert!(
            s.unsettled_task_records("http://p", "a", "x", 0, 10)
                .unwrap()
                .is_empty()
        );
    }

    /// The kept count of an unfiltered listing follows every insert, gone mark, return and
    /// delete of the owner's rows, and only the owner's.
    #[tokio::test]
    async fn kept_counts_follow_every_change() {
        let s = Store::open_in_memory().unwrap();
        let all = TaskQuery {
            limit: 0,
            ..TaskQuery::default()
        };
        let counted = |s: &Store| -> (u64, i64) {
            let kept = s.task_records("http://p", "a", "x", &all).unwrap().1;
            let rows = s
                .with(|c| {
                    Ok(c.query_row(
                        "SELECT COUNT(*) FROM task_owners WHERE workspace_id = 'a'
                           AND agent_id = 'x' AND endpoint = 'http://p' AND gone = 0",
                        [],
                        |r| r.get(0),
                    )?)
                })
                .unwrap();
            (kept, rows)
        };
        assert_eq!(counted(&s), (0, 0));
        for (t, ws) in [("t1", "a"), ("t2", "a"), ("t3", "a"), ("u1", "b")] {
            bind(&s, t, ws);
        }
        assert_eq!(counted(&s), (3, 3));
        let mut gone = row("t2", "a", "", 0);
        gone.gone = true;
        s.record_task_status(gone.clone()).unwrap();
        // Marked gone twice: counted once.
        s.record_task_status(gone).unwrap();
        s.settle_task_records().await;
        assert_eq!(counted(&s), (2, 2));
        // Seen again (a fresh read): listed again.
        let mut back = row("t2", "a", "TASK_STATE_WORKING", 5);
        back.fresh = true;
        s.record_task_status(back).unwrap();
        s.record_task_status(row("t1", "a", "TASK_STATE_WORKING", 5))
            .unwrap();
        s.settle_task_records().await;
        assert_eq!(counted(&s), (3, 3));
        s.with(|c| {
            c.execute("DELETE FROM task_owners WHERE task_id IN ('t3', 'u1')", [])?;
            Ok(())
        })
        .unwrap();
        assert_eq!(counted(&s), (2, 2));
        // A filtered listing still counts its matches.
        let working = TaskQuery {
            state: Some("TASK_STATE_WORKING"),
            limit: 0,
            ..TaskQuery::default()
        };
        assert_eq!(s.task_records("http://p", "a", "x", &working).unwrap().1, 2);
        assert_eq!(s.task_records("http://p", "b", "x", &all).unwrap().1, 0);
    }

    /// Every listing statement reads through an index, never a sort of the owner's rows.
    #[test]
    fn listing_reads_indexes_in_order() {
        let s = Store::open_in_memory().unwrap();
        for filter in ["", " AND state = 'x'", " AND context_id = 'c'"] {
            let plan: Vec<String> = s
                .with(|c| {
                    let sql = format!(
                        "EXPLAIN QUERY PLAN SELECT task_id FROM task_owners
                         WHERE workspace_id = 'a' AND agent_id = 'x' AND endpoint = 'e'
                           AND gone = 0 AND status_at >= 0{filter}
                           AND status_at <= 9 AND (status_at < 9 OR task_id > '')
                         ORDER BY status_at DESC, task_id LIMIT 5"
                    );
                    let mut st = c.prepare(&sql)?;
                    let rows = st.query_map([], |r| r.get::<_, String>(3))?;
                    Ok(rows.collect::<Result<Vec<_>, _>>()?)
                })
                .unwrap();
            let plan = plan.join("; ");
            assert!(plan.contains("INDEX task_owners_"), "{filter}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{filter}: {plan}");
        }
    }
}
