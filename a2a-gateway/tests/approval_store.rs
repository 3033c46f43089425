//! The approvals store on a real file (issue 39, item 8): a database written before the held
//! requests had a table of their own keeps every request, a preview written before the bound
//! is cut to it, counts are read from the index alone, list pages walk the index newest first
//! and carry no request.

use std::collections::HashSet;

use a2a_gateway::store::backend::{Approval, ApprovalSummary, HoldStore, MAX_PAGE, SqliteHolds};
use a2a_gateway::store::{MIGRATIONS, Store, StoreError};
use rusqlite::Connection;
use serde_json::json;

/// The migration that gives held requests their table.
fn split() -> usize {
    MIGRATIONS
        .iter()
        .position(|m| m.contains("CREATE TABLE gov_approval_requests"))
        .expect("the migration")
}

fn summary(id: &str, state: &str, created_at: i64) -> ApprovalSummary {
    ApprovalSummary {
        id: id.into(),
        workspace_id: "w".into(),
        agent_id: "echo".into(),
        caller_version: "1.0".into(),
        preview: json!({"operation": "SendMessage", "text": id}),
        context_id: format!("ctx-{id}"),
        state: state.into(),
        rule: Some("r".into()),
        approver: None,
        reason: None,
        peer_task_id: None,
        chain: vec!["w/echo".into()],
        extensions: Vec::new(),
        created_at,
        expires_at: created_at + 3600,
        key_id: Some("k".into()),
        refusal: None,
    }
}

fn query_plan(path: &std::path::Path, sql: &str) -> String {
    let c = Connection::open(path).unwrap();
    let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = st
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows.join("; ")
}

#[tokio::test]
async fn a_database_held_before_the_split_keeps_every_request_and_bounds_old_previews() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let big_request = json!({"message": {"parts": [{"text": "x".repeat(3 << 20)}]}}).to_string();
    let huge_preview = json!({"operation": "SendMessage", "bytes": 123,
        "parts": vec![json!({"kind": "text", "bytes": 1}); 20_000]})
    .to_string();
    {
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        for (i, sql) in MIGRATIONS[..split()].iter().enumerate() {
            c.execute_batch(sql).unwrap();
            c.pragma_update(None, "user_version", i as i64 + 1).unwrap();
        }
        c.execute(
            "INSERT INTO workspaces(id, name, created_at) VALUES ('w', 'W', 0)",
            [],
        )
        .unwrap();
        for (id, params, preview, state) in [
            ("big", big_request.as_str(), r#"{"text":"big"}"#, "pending"),
            ("wide", "{}", huge_preview.as_str(), "pending"),
            ("done", "{}", r#"{"text":"done"}"#, "denied"),
        ] {
            c.execute(
                "INSERT INTO gov_approvals(id, workspace_id, agent_id, caller_version, params,
                   preview, context_id, state, created_at, expires_at)
                 VALUES (?1, 'w', 'echo', '1.0', ?2, ?3, 'ctx', ?4, 10, 99999999999)",
                rusqlite::params![id, params, preview, state],
            )
            .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
    let a = SqliteHolds::new(store.clone());
    assert_eq!(
        a.approval("w", "big").await.unwrap().unwrap().params,
        big_request
    );
    assert_eq!(a.approval("w", "done").await.unwrap().unwrap().params, "{}");
    assert_eq!(a.approval_count("w", "pending").await.unwrap(), 2);
    assert_eq!(a.approval_count("w", "denied").await.unwrap(), 1);
    let wide = a.approval_summary("w", "wide").await.unwrap().unwrap();
    assert_eq!(
        wide.preview,
        json!({"operation": "SendMessage", "bytes": 123,
            "previewOmittedBytes": huge_preview.len()})
    );
    assert_eq!(
        a.approval_summary("w", "big")
            .await
            .unwrap()
            .unwrap()
            .preview,
        json!({"text": "big"})
    );
    // The approvals' rows have no request column any more.
    let c = Connection::open(&path).unwrap();
    let cols: Vec<String> = c
        .prepare("SELECT name FROM pragma_table_info('gov_approvals')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!cols.iter().any(|c| c == "params"), "{cols:?}");
    // A workspace removed takes its approvals and their requests with it.
    c.execute_batch("PRAGMA foreign_keys = ON; DELETE FROM workspaces WHERE id = 'w';")
        .unwrap();
    let left: i64 = c
        .query_row("SELECT COUNT(*) FROM gov_approval_requests", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn counts_read_the_index_alone_and_pages_walk_it_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let store = Store::open(&path).unwrap();
    store.create_workspace("w", "W").unwrap();
    store.create_workspace("other", "O").unwrap();
    let a = SqliteHolds::new(store.clone());
    let request = "r".repeat(64 * 1024);
    // 130 pending (ten of them at the same second: the id orders them), 7 denied, one
    // pending in another workspace.
    for i in 0..137i64 {
        let state = if i % 20 == 3 { "denied" } else { "pending" };
        let mut s = summary(&format!("a{i:03}"), state, 1000 + i.min(120));
        s.preview = json!({"n": i});
        a.create_approval(&Approval {
            summary: s,
            params: request.clone(),
        })
        .await
        .unwrap();
    }
    let mut elsewhere = summary("x", "pending", 5000);
    elsewhere.workspace_id = "other".into();
    a.create_approval(&Approval {
        summary: elsewhere,
        params: request.clone(),
    })
    .await
    .unwrap();
    assert_eq!(a.approval_count("w", "pending").await.unwrap(), 130);
    assert_eq!(a.approval_count("w", "denied").await.unwrap(), 7);
    assert_eq!(a.approval_count("other", "pending").await.unwrap(), 1);
    assert_eq!(a.approval_count("w", "approved").await.unwrap(), 0);
    let count = query_plan(
        &path,
        "SELECT COUNT(*) FROM gov_approvals WHERE workspace_id = 'w' AND state = 'pending'",
    );
    assert!(
        count.contains("COVERING INDEX gov_approvals_queue"),
        "{count}"
    );
    let page = query_plan(
        &path,
        "SELECT * FROM gov_approvals WHERE workspace_id = 'w' AND state = 'pending'
         AND (created_at, id) < (1100, 'a100') ORDER BY created_at DESC, id DESC LIMIT 50",
    );
    assert!(page.contains("INDEX gov_approvals_queue"), "{page}");
    assert!(!page.contains("TEMP B-TREE"), "no sort: {page}");
    // Pages of 50: every pending approval once, newest first, no request in them.
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let rows = a
            .summaries("w", Some("pending"), after.as_deref(), 50)
            .await
            .unwrap();
        assert!(rows.len() <= 50);
        let bytes = serde_json::to_string(&rows).unwrap().len();
        assert!(
            bytes < rows.len().max(1) * 1024,
            "{bytes} bytes for {}",
            rows.len()
        );
        after = rows.last().map(|r| r.id.clone());
        let last = rows.len() < 50;
        seen.extend(rows);
        if last {
            break;
        }
    }
    assert_eq!(seen.len(), 130);
    assert!(
        seen.iter()
            .all(|s| s.state == "pending" && s.workspace_id == "w")
    );
    assert_eq!(
        seen.iter().map(|s| &s.id).collect::<HashSet<_>>().len(),
        130
    );
    let order: Vec<(i64, String)> = seen.iter().map(|s| (s.created_at, s.id.clone())).collect();
    let mut sorted = order.clone();
    sorted.sort_by(|x, y| y.cmp(x));
    assert_eq!(order, sorted, "newest first, then by id");
    // Every state at once; a page past the end is empty; an unknown `after` is not found.
    assert_eq!(
        a.summaries("w", None, None, MAX_PAGE).await.unwrap().len(),
        137
    );
    assert_eq!(a.summaries("w", None, None, 0).await.unwrap().len(), 1);
    assert!(
        a.summaries("w", Some("pending"), Some(&seen[129].id), 50)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        a.summaries("w", Some("pending"), Some("x"), 50).await,
        Err(StoreError::NotFound(_))
    ));
    // Due ones expire in one update; the counts follow.
    assert_eq!(a.expire_due("w", 1000 + 3600 + 4).await.unwrap(), 4);
    assert_eq!(a.approval_count("w", "pending").await.unwrap(), 126);
    assert_eq!(a.approval_count("w", "expired").await.unwrap(), 4);
    let one = a.approval_summary("w", "a000").await.unwrap().unwrap();
    assert_eq!(one.state, "expired");
    assert_eq!(one.preview, json!({"n": 0}));
    assert_eq!(
        a.approval("w", "a000").await.unwrap().unwrap().params,
        request
    );
    assert!(a.approval("other", "a000").await.unwrap().is_none());
}
