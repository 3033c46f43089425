//! A status record written with its binding (`folded_statuses`) leaves the row, and the
//! owner's count, as the binding's insert followed by the status update leave them.

use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension};

use super::{Job, commit, folded_statuses};
use crate::store::Store;
use crate::store::journal::TaskBinding;
use crate::store::task_records::TaskStatusRow;

const E: &str = "http://127.0.0.1:9/a2a";

fn bind(task: &str, ws: &str, journal: u64) -> Job {
    Job::Bind {
        binding: Box::new(TaskBinding {
            endpoint: E.into(),
            task_id: task.into(),
            workspace_id: ws.into(),
            agent_id: "x".into(),
        }),
        journal,
    }
}

fn status(task: &str, ws: &str, at: i64, gone: bool) -> Job {
    Job::Status(Arc::new(TaskStatusRow {
        endpoint: E.into(),
        task_id: task.into(),
        workspace_id: ws.into(),
        agent_id: "x".into(),
        context_id: Some("c1".into()),
        state: "TASK_STATE_COMPLETED".into(),
        open: false,
        status_at: at,
        fresh: false,
        gone,
        checked_at: 77,
    }))
}

/// (workspace, context, state, status_at, open, gone, checked_at) of a task's row.
type Row = (String, Option<String>, Option<String>, i64, i64, i64, i64);

fn row(c: &Mutex<Connection>, task: &str) -> Option<Row> {
    c.lock()
        .unwrap()
        .query_row(
            "SELECT workspace_id, context_id, state, status_at, open, gone, checked_at
             FROM task_owners WHERE task_id = ?1",
            [task],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )
        .optional()
        .unwrap()
}

fn listed(c: &Mutex<Connection>, ws: &str) -> i64 {
    let c = c.lock().unwrap();
    c.query_row(
        "SELECT COALESCE((SELECT listed FROM task_owner_counts WHERE workspace_id = ?1), 0)",
        [ws],
        |r| r.get(0),
    )
    .unwrap()
}

fn ok(c: &Mutex<Connection>, batch: &[Job]) {
    let (results, _) = commit(c, batch);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
}

#[test]
fn the_first_status_after_a_binding_of_its_owner_is_folded() {
    let batch = [
        bind("t1", "a", 1),
        status("t2", "a", 5, false),
        status("t1", "b", 5, false),
        status("t1", "a", 6, false),
        bind("t3", "a", 2),
        status("t3", "a", 5, true),
        bind("t4", "a", 3),
        status("t4", "a", 5, false),
        status("t4", "a", 6, false),
    ];
    let folded = folded_statuses(&batch);
    // t1: its first status is another owner's, so none is folded; t3's is `gone`.
    assert_eq!(folded[0], None);
    assert_eq!(folded[4], None);
    assert_eq!(folded[6], Some(7));
    assert_eq!(folded.iter().flatten().count(), 1);
}

#[test]
fn a_folded_status_leaves_the_row_an_update_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    drop(Store::open(&path).unwrap());
    let c = Mutex::new(Connection::open(&path).unwrap());
    // Folded: the binding and its status in one batch.
    ok(&c, &[bind("f", "a", 1), status("f", "a", 5, false)]);
    // Not folded: each in a batch of its own.
    ok(&c, &[bind("u", "b", 2)]);
    ok(&c, &[status("u", "b", 5, false)]);
    let (f, u) = (row(&c, "f").unwrap(), row(&c, "u").unwrap());
    assert_eq!((f.0.as_str(), u.0.as_str()), ("a", "b"));
    assert_eq!(
        (&f.1, &f.2, f.3, f.4, f.5, f.6),
        (&u.1, &u.2, u.3, u.4, u.5, u.6)
    );
    assert_eq!(f.3, 5);
    assert_eq!((listed(&c, "a"), listed(&c, "b")), (1, 1));
    // Bound already: the binding is ignored and its status applied as an update.
    ok(&c, &[bind("f", "a", 3), status("f", "a", 9, false)]);
    assert_eq!(row(&c, "f").unwrap().3, 9);
    assert_eq!(listed(&c, "a"), 1);
}
