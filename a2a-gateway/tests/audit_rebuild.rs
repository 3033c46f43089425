//! The audit table rebuilt without `AUTOINCREMENT` (issue 11): a database written by an
//! earlier version keeps every row with its sequence number, later rows follow every number
//! ever given (also when rows were removed past the append-only trigger), the table stays
//! append-only, and the console's decision filter still walks an index.

use a2a_gateway::store::{AuditRecord, HopFilter, MIGRATIONS, Store};
use rusqlite::Connection;

/// The migrations before the rebuild, applied as an earlier gateway did.
fn old_database(path: &std::path::Path) -> Connection {
    let rebuild = MIGRATIONS
        .iter()
        .position(|m| m.contains("CREATE TABLE audit_rebuilt"))
        .expect("the rebuild migration");
    let c = Connection::open(path).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    for (i, sql) in MIGRATIONS[..rebuild].iter().enumerate() {
        c.execute_batch(sql).unwrap();
        c.pragma_update(None, "user_version", i as i64 + 1).unwrap();
    }
    c.execute(
        "INSERT INTO workspaces(id, name, created_at) VALUES ('w', 'W', 0)",
        [],
    )
    .unwrap();
    c
}

/// Inserts a hop (intent row and the row completing it) as the earlier version did.
fn old_hop(c: &Connection, trace: &str, decision: &str) -> (i64, i64) {
    let insert = |phase: Option<&str>, intent_of: Option<i64>| {
        c.execute(
            "INSERT INTO audit(ts, trace_id, workspace_id, target, operation, decision, status,
               latency_ms, phase, intent_of, governance)
             VALUES ('2026-12-01T00:00:00Z', ?1, 'w', 'echo', 'message/send', ?2, 200, 3, ?3,
               ?4, '{\"decisions\":[]}')",
            rusqlite::params![trace, decision, phase, intent_of],
        )
        .unwrap();
        c.last_insert_rowid()
    };
    let intent = insert(Some("intent"), None);
    (intent, insert(None, Some(intent)))
}

fn rec(trace: &str) -> AuditRecord {
    AuditRecord {
        trace_id: trace.into(),
        workspace_id: Some("w".into()),
        decision: "allowed".into(),
        status: 200,
        ..AuditRecord::default()
    }
}

#[test]
fn rebuilt_audit_keeps_rows_and_never_reuses_a_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let c = old_database(&path);
    let hops: Vec<(i64, i64)> = (0..3)
        .map(|i| {
            old_hop(
                &c,
                &format!("t{i}"),
                if i == 1 { "refused" } else { "allowed" },
            )
        })
        .collect();
    let cut = {
        // An intent whose hop never finished.
        c.execute(
            "INSERT INTO audit(ts, trace_id, workspace_id, decision, status, latency_ms, phase)
             VALUES ('2026-12-01T00:00:01Z', 'cut', 'w', 'allowed', 200, 0, 'intent')",
            [],
        )
        .unwrap();
        c.last_insert_rowid()
    };
    drop(c);

    let s = Store::open(&path).unwrap();
    let schema: String = Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'audit'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!schema.to_uppercase().contains("AUTOINCREMENT"), "{schema}");
    // One record per hop, as before, with the same numbers, links and columns.
    let rows = s.audit(Some("w"), None, 0, 100).unwrap();
    let seqs: Vec<i64> = rows.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![hops[0].1, hops[1].1, hops[2].1, cut], "{rows:?}");
    assert_eq!(rows[0].intent_seq, Some(hops[0].0));
    assert_eq!(rows[1].decision, "refused");
    assert_eq!(
        rows[1].governance,
        Some(serde_json::json!({"decisions": []}))
    );
    assert_eq!(rows[3].outcome.as_deref(), Some("incomplete"));
    assert_eq!(s.trace_records("t2").unwrap().len(), 2);
    // Still append-only.
    assert!(s.execute_raw("DELETE FROM audit").is_err());
    assert!(s.execute_raw("UPDATE audit SET decision = 'x'").is_err());
    // The next row follows the highest number ever given.
    let next = s.append_audit(&rec("new")).unwrap();
    assert_eq!(next, cut + 1);
    // The decision filter walks the partial index and finds the refusal.
    let refused = HopFilter {
        decision: Some("refused".into()),
        ..HopFilter::default()
    };
    let plan = s.hop_page_plan(&refused).unwrap().join(" | ");
    assert!(plan.contains("audit_decision_seq"), "{plan}");
    let page = s.hop_page(&refused, None, 50).unwrap();
    assert_eq!(
        page.iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![hops[1].1]
    );
    // `allowed` rows are not in that index, and are still found.
    let allowed = HopFilter {
        decision: Some("allowed".into()),
        ..HopFilter::default()
    };
    let page = s.hop_page(&allowed, None, 50).unwrap();
    assert_eq!(
        page.iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![next, cut, hops[2].1, hops[0].1]
    );
}

/// Rows removed past the trigger (the file edited outside the gateway): `AUTOINCREMENT` would
/// not have given their numbers again; after the rebuild a `sequence-gap` row holds the
/// highest, so neither does the new table, and the removal stays visible.
#[test]
fn numbers_of_rows_removed_outside_the_gateway_are_not_given_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let c = old_database(&path);
    let first = old_hop(&c, "kept", "allowed");
    let removed = old_hop(&c, "removed", "allowed");
    c.execute_batch(&format!(
        "DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE seq >= {};",
        removed.0
    ))
    .unwrap();
    drop(c);
    let s = Store::open(&path).unwrap();
    let all = s.hop_page(&HopFilter::default(), None, 50).unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0].seq, removed.1);
    assert_eq!(all[0].decision, "sequence-gap");
    assert_eq!(all[0].workspace_id, None);
    assert_eq!(all[1].seq, first.1);
    assert_eq!(s.append_audit(&rec("after")).unwrap(), removed.1 + 1);
    // The rebuilt table has its trigger back.
    assert!(s.execute_raw("DELETE FROM audit").is_err());
}
