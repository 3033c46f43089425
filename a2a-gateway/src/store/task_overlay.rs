//! A listing's records with what waits for the audit writer (issue 40): the owner's bindings
//! and status records queued and not yet committed are applied, in memory and by the writer's
//! own rules ([`super::task_records::update_status`]), over the committed rows, so that
//! [`Store::task_records`] answers at once what it would answer once the writer has committed,
//! instead of waiting for the writer's batches (and the WAL checkpoints between them).
//!
//! The queue is read first, then the database: a record committed between the two is read in
//! both and applied again, which leaves it as it was (a record older than the one kept is not
//! applied); one queued after the queue was read is left out unless already committed. The
//! page is the committed page with the queued tasks taken out and their records as they will
//! be put in their place; `totalSize` is the committed count less the queued tasks it counted
//! plus those that match now.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::audit_writer::PendingRecords;
use super::sql::CachedExt;
use super::task_records::{TaskQuery, TaskRecord, TaskStatusRow};
use super::{Store, StoreError};

impl Store {
    /// One page of the owner's listed tasks at `endpoint` (newest recorded status first, then
    /// by id; tasks the peer no longer knows left out) and how many match the filters in all.
    /// Both read through indexes that begin with the owner: neither the peer's nor other
    /// owners' tasks are read.
    ///
    /// Records queued for the writer and not yet committed count as written (read from the
    /// writer's queue, see the module documentation): a listing never waits for the writer.
    pub fn task_records(
        &self,
        endpoint: &str,
        workspace_id: &str,
        agent_id: &str,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError> {
        let pending = self.audit.pending_of(workspace_id, agent_id, endpoint)?;
        if pending.is_empty() {
            return self.committed_task_records(endpoint, workspace_id, agent_id, q);
        }
        records(self, endpoint, workspace_id, agent_id, q, &pending)
    }
}

/// A task's row as the listing reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    task_id: String,
    context_id: Option<String>,
    state: Option<String>,
    status_at: i64,
    open: bool,
    gone: bool,
}

impl Row {
    /// A new binding's row (the table's defaults).
    fn bound(task_id: &str) -> Row {
        Row {
            task_id: task_id.to_owned(),
            context_id: None,
            state: None,
            status_at: -1,
            open: true,
            gone: false,
        }
    }

    /// `update_status`, in memory.
    fn apply(&mut self, r: &TaskStatusRow) {
        if r.gone {
            self.gone = true;
            return;
        }
        let applies = r.fresh
            || self.gone
            || self.status_at < r.status_at
            || (self.status_at == r.status_at && (self.open || !r.open));
        if applies {
            if r.context_id.is_some() {
                self.context_id.clone_from(&r.context_id);
            }
            self.state = Some(r.state.clone());
            self.status_at = r.status_at;
            self.open = r.open;
            self.gone = false;
        }
    }

    /// Whether the row is counted by `q` (its filters, not its cursor).
    fn matches(&self, q: &TaskQuery<'_>) -> bool {
        !self.gone
            && self.status_at >= q.after.unwrap_or(i64::MIN)
            && q.state.is_none_or(|s| self.state.as_deref() == Some(s))
            && q.context_id
                .is_none_or(|c| self.context_id.as_deref() == Some(c))
    }

    /// Whether the row comes after `q`'s cursor in the order.
    fn after_cursor(&self, q: &TaskQuery<'_>) -> bool {
        let (at, id) = q.cursor.unwrap_or((i64::MAX, ""));
        self.status_at <= at && (self.status_at < at || self.task_id.as_str() > id)
    }

    fn record(self) -> TaskRecord {
        TaskRecord {
            task_id: self.task_id,
            context_id: self.context_id,
            state: self.state,
            status_at: self.status_at,
        }
    }
}

/// The committed row of each task (`None`: not bound, or bound to another owner).
fn committed_rows(
    c: &Connection,
    endpoint: &str,
    workspace_id: &str,
    agent_id: &str,
    ids: &[&str],
) -> Result<HashMap<String, Row>, StoreError> {
    {
        let mut out = HashMap::new();
        for id in ids {
            let row = c
                .query_row_cached(
                    "SELECT context_id, state, status_at, open, gone FROM task_owners
                     WHERE endpoint = ?1 AND task_id = ?2 AND workspace_id = ?3
                       AND agent_id = ?4",
                    params![endpoint, id, workspace_id, agent_id],
                    |r| {
                        Ok(Row {
                            task_id: (*id).to_owned(),
                            context_id: r.get(0)?,
                            state: r.get(1)?,
                            status_at: r.get(2)?,
                            open: r.get(3)?,
                            gone: r.get(4)?,
                        })
                    },
                )
                .optional()?;
            if let Some(row) = row {
                out.insert((*id).to_owned(), row);
            }
        }
        Ok(out)
    }
}

/// [`Store::task_records`] with `pending` applied over the committed rows (see the module
/// documentation).
pub(crate) fn records(
    store: &Store,
    endpoint: &str,
    workspace_id: &str,
    agent_id: &str,
    q: &TaskQuery<'_>,
    pending: &PendingRecords,
) -> Result<(Vec<TaskRecord>, u64), StoreError> {
    let mut ids: Vec<&str> = pending.bound.iter().map(String::as_str).collect();
    ids.extend(pending.rows.iter().map(|r| r.task_id.as_str()));
    let mut seen = HashSet::new();
    ids.retain(|id| seen.insert(*id));
    // The committed page, deep enough that taking the queued tasks out leaves a full page,
    // read in one transaction with the queued tasks' committed rows: a record committed
    // meanwhile is in both or in neither (else the count could take it off twice).
    let deeper = TaskQuery {
        offset: 0,
        limit: q.offset + q.limit + ids.len() as u64,
        ..q.clone()
    };
    let (before, rows, committed) =
        store.committed_task_records_with(endpoint, workspace_id, agent_id, &deeper, |c| {
            committed_rows(c, endpoint, workspace_id, agent_id, &ids)
        })?;
    let mut after: HashMap<&str, Row> = HashMap::new();
    for id in &pending.bound {
        let row = before.get(id).cloned().unwrap_or_else(|| Row::bound(id));
        after.insert(id, row);
    }
    for r in &pending.rows {
        let row = match after.get_mut(r.task_id.as_str()) {
            Some(row) => row,
            // A record of a task neither bound here nor queued for this owner changes no row.
            None => match before.get(&r.task_id) {
                Some(b) => after.entry(r.task_id.as_str()).or_insert(b.clone()),
                None => continue,
            },
        };
        row.apply(r);
    }
    let counted_before = before.values().filter(|r| r.matches(q)).count() as u64;
    let counted_after = after.values().filter(|r| r.matches(q)).count() as u64;
    let mut page: Vec<TaskRecord> = rows
        .into_iter()
        .filter(|r| !seen.contains(r.task_id.as_str()))
        .collect();
    page.extend(
        after
            .into_values()
            .filter(|r| r.matches(q) && r.after_cursor(q))
            .map(Row::record),
    );
    page.sort_by(|a, b| {
        b.status_at
            .cmp(&a.status_at)
            .then_with(|| a.task_id.cmp(&b.task_id))
    });
    let page = page
        .into_iter()
        .skip(usize::try_from(q.offset).unwrap_or(usize::MAX))
        .take(usize::try_from(q.limit).unwrap_or(usize::MAX))
        .collect();
    let total = (committed + counted_after).saturating_sub(counted_before);
    Ok((page, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TaskBinding;

    const STATES: [&str; 4] = [
        "TASK_STATE_WORKING",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_CANCELED",
    ];

    fn binding(task: &str, ws: &str) -> TaskBinding {
        TaskBinding {
            endpoint: "http://p".into(),
            task_id: task.into(),
            workspace_id: ws.into(),
            agent_id: "x".into(),
        }
    }

    fn random_row(rng: &mut fastrand::Rng, task: String, ws: &str) -> TaskStatusRow {
        let state = STATES[rng.usize(..STATES.len())];
        TaskStatusRow {
            endpoint: "http://p".into(),
            task_id: task,
            workspace_id: ws.into(),
            agent_id: "x".into(),
            context_id: rng.bool().then(|| format!("c{}", rng.u8(..3))),
            state: state.into(),
            open: !matches!(state, "TASK_STATE_COMPLETED" | "TASK_STATE_CANCELED"),
            status_at: i64::from(rng.u8(..20)),
            fresh: rng.u8(..5) == 0,
            gone: rng.u8(..10) == 0,
            checked_at: 0,
        }
    }

    /// The queries a listing makes: filters, cursors, offsets, page sizes.
    fn queries() -> Vec<TaskQuery<'static>> {
        let mut out = Vec::new();
        for state in [
            None,
            Some("TASK_STATE_WORKING"),
            Some("TASK_STATE_COMPLETED"),
        ] {
            for context_id in [None, Some("c1")] {
                for after in [None, Some(7)] {
                    for (cursor, offset) in [(None, 0), (Some((12, "t05")), 0), (None, 3)] {
                        for limit in [0, 1, 4, 100] {
                            out.push(TaskQuery {
                                state,
                                context_id,
                                after,
                                cursor,
                                offset,
                                limit,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// With the writer held up (another connection holds the write lock), every listing over
    /// queued bindings and records answers what it answers once they are committed: the same
    /// page, the same `totalSize`, for owner a, never counting owner b's tasks. Random rounds.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_records_list_as_they_will_be_committed() {
        let mut rng = fastrand::Rng::with_seed(40);
        for round in 0..12 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.db");
            let s = Store::open(&path).unwrap();
            s.open_intent_journal().unwrap();
            // Committed first: some tasks of a and b with records.
            for i in 0..10 {
                let ws = if i % 4 == 3 { "b" } else { "a" };
                s.bind_journaled(&binding(&format!("t{i:02}"), ws)).unwrap();
                for _ in 0..rng.usize(..3) {
                    s.record_task_status(random_row(&mut rng, format!("t{i:02}"), ws))
                        .unwrap();
                }
            }
            s.settle_task_records().await;
            // Queued behind a held writer: new tasks and records of old and new ones.
            let blocker = rusqlite::Connection::open(&path).unwrap();
            blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
            for i in 10..16 {
                let ws = if i % 4 == 3 { "b" } else { "a" };
                s.bind_journaled(&binding(&format!("t{i:02}"), ws)).unwrap();
            }
            for _ in 0..rng.usize(5..25) {
                let i = rng.usize(..18);
                let ws = if rng.u8(..6) == 0 { "b" } else { "a" };
                s.record_task_status(random_row(&mut rng, format!("t{i:02}"), ws))
                    .unwrap();
            }
            assert!(
                !s.audit.pending_of("a", "x", "http://p").unwrap().is_empty(),
                "round {round}: nothing queued"
            );
            let queued: Vec<_> = queries()
                .iter()
                .map(|q| s.task_records("http://p", "a", "x", q).unwrap())
                .collect();
            blocker.execute_batch("COMMIT").unwrap();
            s.settle_task_records().await;
            assert!(s.audit.pending_of("a", "x", "http://p").unwrap().is_empty());
            for (q, got) in queries().iter().zip(queued) {
                let want = s.committed_task_records("http://p", "a", "x", q).unwrap();
                assert_eq!(got, want, "round {round}: {q:?}");
            }
        }
    }

    #[test]
    fn records_apply_as_the_writer_applies_them() {
        let mut row = Row::bound("t");
        let rec = |state: &str, at: i64, open: bool, fresh: bool| TaskStatusRow {
            endpoint: "e".into(),
            task_id: "t".into(),
            workspace_id: "w".into(),
            agent_id: "a".into(),
            context_id: None,
            state: state.into(),
            open,
            status_at: at,
            fresh,
            gone: false,
            checked_at: 0,
        };
        row.apply(&rec("W", 5, true, false));
        row.apply(&rec("OLD", 4, true, false));
        assert_eq!((row.state.as_deref(), row.status_at), (Some("W"), 5));
        row.apply(&rec("DONE", 5, false, false));
        row.apply(&rec("W", 5, true, false));
        assert_eq!(
            row.state.as_deref(),
            Some("DONE"),
            "not reopened at the same time"
        );
        row.apply(&rec("READ", 1, true, true));
        assert_eq!((row.state.as_deref(), row.status_at), (Some("READ"), 1));
    }
}
