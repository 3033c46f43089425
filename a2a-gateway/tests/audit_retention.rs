//! Audit retention (issue 40): `audit_retention` deletes rows by age, `audit_max_bytes` keeps
//! the database file bounded, both in small batches from a background task; the newest row is
//! always kept (sequence numbers never reused) and every other delete still raises.

use std::time::Duration;

use a2a_gateway::config::AuditRetention;
use a2a_gateway::store::{AuditRecord, Store};
use serde_json::{Value, json};

use crate::common::{seed_file, spawn_serve};

fn fresh() -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
    (dir, path, s)
}

fn rec(trace: &str, ts: &str) -> AuditRecord {
    AuditRecord {
        ts: ts.into(),
        trace_id: trace.into(),
        workspace_id: Some("w".into()),
        decision: "allowed".into(),
        status: 200,
        ..AuditRecord::default()
    }
}

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

fn days_ago(d: i64) -> String {
    rfc3339(time::OffsetDateTime::now_utc() - time::Duration::days(d))
}

fn by_age(days: u64) -> AuditRetention {
    AuditRetention {
        max_age: Some(Duration::from_secs(days * 24 * 3600)),
        max_bytes: None,
        batch: 7,
    }
}

/// Trims until the rule keeps every row; returns the rows deleted.
fn trim_all(s: &Store, rule: &AuditRetention) -> usize {
    let mut n = 0;
    loop {
        let t = s.trim_audit(rule).unwrap();
        assert!(t.rows <= rule.batch, "{t:?}");
        if t.rows == 0 {
            return n;
        }
        n += t.rows;
    }
}

/// The age rule deletes exactly the rows older than the retention, oldest first, in batches;
/// the retention mark records it; the trigger still refuses any other delete.
#[test]
fn rows_older_than_the_retention_are_deleted_and_no_others() {
    let (_dir, _path, s) = fresh();
    for i in 0..30 {
        s.append_audit(&rec(&format!("old{i}"), &days_ago(40)))
            .unwrap();
    }
    for i in 0..5 {
        s.append_audit(&rec(&format!("new{i}"), &days_ago(2)))
            .unwrap();
    }
    assert_eq!(trim_all(&s, &by_age(30)), 30);
    let rows = s.audit(Some("w"), None, 0, 100).unwrap();
    let traces: Vec<&str> = rows.iter().map(|r| r.trace_id.as_str()).collect();
    assert_eq!(traces, ["new0", "new1", "new2", "new3", "new4"]);
    let state = s.audit_retention_state().unwrap();
    assert_eq!(state.deleted_rows, 30);
    assert_eq!(state.deleted_below, rows[0].seq);
    assert!(state.last_at.is_some());
    // A shorter retention takes the rest but the newest row.
    assert_eq!(trim_all(&s, &by_age(1)), 4);
    let rows = s.audit(Some("w"), None, 0, 100).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].trace_id, "new4");
    // Anyone else's delete still raises, and the mark cannot pass the newest row or go back.
    for sql in [
        "DELETE FROM audit",
        "UPDATE audit_retention SET deleted_below = 1000000",
        "UPDATE audit_retention SET deleted_below = 0",
        "DELETE FROM audit_retention",
    ] {
        let err = s.execute_raw(sql).unwrap_err().to_string();
        assert!(err.contains("audit"), "{sql}: {err}");
    }
    // Sequence numbers go on from the newest: none is given twice.
    let next = s.append_audit(&rec("after", &days_ago(0))).unwrap();
    assert_eq!(next, rows[0].seq + 1);
}

/// Rows are deleted in `seq` order up to the first one the rule keeps: a young row stops the
/// age rule even when older ones follow it (they go once it has gone).
#[test]
fn the_age_rule_stops_at_the_first_young_row() {
    let (_dir, _path, s) = fresh();
    for (t, d) in [("a", 50), ("b", 1), ("c", 50), ("d", 1)] {
        s.append_audit(&rec(t, &days_ago(d))).unwrap();
    }
    assert_eq!(trim_all(&s, &by_age(30)), 1);
    let traces: Vec<String> = s
        .audit(Some("w"), None, 0, 10)
        .unwrap()
        .into_iter()
        .map(|r| r.trace_id)
        .collect();
    assert_eq!(traces, ["b", "c", "d"]);
}

/// Many rows through the audit writer with a tiny `audit_max_bytes`, a retention pass after
/// every thousand: the audit's pages and the file stay bounded (freed pages are reused), the
/// newest rows are kept, and far more was written than the file holds.
#[test]
fn the_database_stays_bounded_under_a_tiny_max() {
    let (dir, _path, s) = fresh();
    let max = 512 * 1024;
    let rule = AuditRetention {
        max_age: None,
        max_bytes: Some(max),
        batch: 500,
    };
    let blob = json!({ "evidence": "x".repeat(600) });
    let file = |name: &str| {
        std::fs::metadata(dir.path().join(name))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    let mut largest = 0;
    let mut written = 0u64;
    for round in 0..40 {
        for i in 0..1000 {
            let mut r = rec(&format!("r{round}-{i}"), "");
            r.governance = Some(blob.clone());
            written += 700;
            s.append_audit_queued(&r, None).unwrap();
        }
        s.flush_audit();
        a2a_gateway::store::retention::run_pass(&s, &rule, &|| false);
        largest = largest.max(file("gw.db"));
        // The audit's pages, read one by one (the retention estimates them from a measure
        // taken once, so the deleted rows' holes in the trace index show here).
        let audit = s.audit_bytes().unwrap();
        assert!(
            audit <= max + max / 2,
            "round {round}: the audit takes {audit} bytes"
        );
    }
    // 40,000 rows of about 700 bytes: about 28 MB written, the file never past a few times
    // the bound (the pages of one round on top of it; the WAL is apart).
    assert!(written > 20 * max);
    assert!(largest < 4 * max, "the file grew to {largest} bytes");
    let rows = s.audit(Some("w"), None, 0, 100_000).unwrap();
    eprintln!(
        "written {written} B in 40,000 rows; largest file {largest} B; kept {} rows, audit {} B",
        rows.len(),
        s.audit_bytes().unwrap()
    );
    assert!(rows.len() < 2000, "{} rows kept", rows.len());
    assert_eq!(
        rows.last().unwrap().trace_id,
        "r39-999",
        "the newest row is kept"
    );
    let state = s.audit_retention_state().unwrap();
    assert_eq!(state.deleted_rows as usize + rows.len(), 40_000);
}

/// The retention's rows gone, a hop completed against a deleted intent still reads as one
/// finished record (its intent row went first, `seq` order).
#[test]
fn a_completion_outlives_its_deleted_intent() {
    let (_dir, _path, s) = fresh();
    let mut done = rec("long", &days_ago(40));
    let seq = s.append_intent(&done).unwrap();
    done.intent_seq = Some(seq);
    done.ts = days_ago(0);
    s.append_audit(&done).unwrap();
    assert_eq!(trim_all(&s, &by_age(30)), 1);
    let rows = s.audit(Some("w"), None, 0, 10).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].trace_id.as_str(), &rows[0].outcome),
        ("long", &None)
    );
}

fn send(mid: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
}

/// The serving binary applies both rules in the background: rows older than
/// `--audit-retention` are gone shortly after the start, and under load with a tiny
/// `--audit-max-bytes` the file stays bounded while every hop is answered. The peer answers
/// with direct messages and the idempotency window is off: the audit is all that grows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_serving_gateway_applies_both_rules_while_hops_go_on() {
    let peer = crate::common::ok_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    {
        let s = Store::open(&db).unwrap();
        for i in 0..50 {
            let mut r = rec(&format!("ancient{i}"), &days_ago(10));
            r.workspace_id = Some("ws".into());
            s.append_audit(&r).unwrap();
        }
    }
    let max = 256 * 1024;
    let (mut child, base) = spawn_serve(
        &db,
        &[
            "--audit-retention",
            "7d",
            "--audit-max-bytes",
            &max.to_string(),
            "--audit-retention-check",
            "1s",
            "--idempotency-window",
            "0",
        ],
    );
    let http = reqwest::Client::new();
    let url = format!("{base}/a2a/p");
    let mut largest = 0;
    for round in 0..6 {
        let mut calls = Vec::new();
        for c in 0..4 {
            let (http, url, key) = (http.clone(), url.clone(), key.clone());
            calls.push(tokio::spawn(async move {
                for i in 0..150 {
                    let r = http
                        .post(&url)
                        .bearer_auth(&key)
                        .header("A2A-Version", "1.0")
                        .json(&send(&format!("m{round}-{c}-{i}")))
                        .send()
                        .await
                        .unwrap();
                    let v: Value = r.json().await.unwrap();
                    assert!(v["result"]["message"].is_object(), "{v}");
                }
            }));
        }
        for c in calls {
            c.await.unwrap();
        }
        largest = largest.max(std::fs::metadata(&db).unwrap().len());
        tokio::time::sleep(Duration::from_millis(1200)).await;
    }
    let s = Store::open(&db).unwrap();
    let rows = s.audit(Some("ws"), None, 0, 100_000).unwrap();
    assert!(
        rows.iter().all(|r| !r.trace_id.starts_with("ancient")),
        "rows older than 7 days are gone"
    );
    let state = s.audit_retention_state().unwrap();
    // 3,600 hops, far past the bound, which the retention held.
    assert!(state.deleted_rows > 1000, "{state:?}");
    let audit = s.audit_bytes().unwrap();
    eprintln!(
        "deleted {} rows, kept {}; audit {audit} B, largest file {largest} B",
        state.deleted_rows,
        rows.len()
    );
    assert!(audit <= 2 * max, "the audit takes {audit} bytes");
    assert!(largest < 8 * max, "the file grew to {largest} bytes");
    assert!(rows.len() < 3000, "{} rows kept", rows.len());
    let _ = child.kill();
    let _ = child.wait();
    peer.shutdown().await;
}

/// The age rule alone, set in the TOML file: the serving gateway deletes the rows older than
/// `audit_retention` shortly after its start and keeps the younger ones.
#[test]
fn the_serving_gateway_deletes_rows_past_the_retention_set_in_its_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    seed_file(&db, "p", "http://127.0.0.1:9/");
    {
        let s = Store::open(&db).unwrap();
        for (i, d) in [40, 9, 8, 6, 1, 0].into_iter().enumerate() {
            let mut r = rec(&format!("d{d}-{i}"), &days_ago(d));
            r.workspace_id = Some("ws".into());
            s.append_audit(&r).unwrap();
        }
    }
    let toml = dir.path().join("gw.toml");
    std::fs::write(
        &toml,
        "audit_retention = \"7d\"\naudit_max_bytes = 0\naudit_retention_check = \"1s\"\n",
    )
    .unwrap();
    let (mut child, _base) = spawn_serve(&db, &["--config", toml.to_str().unwrap()]);
    let s = Store::open(&db).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while s.audit_retention_state().unwrap().deleted_rows < 3 {
        assert!(std::time::Instant::now() < deadline, "nothing deleted");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let traces: Vec<String> = s
        .audit(Some("ws"), None, 0, 100)
        .unwrap()
        .into_iter()
        .map(|r| r.trace_id)
        .collect();
    assert_eq!(traces, ["d6-3", "d1-4", "d0-5"]);
    assert_eq!(s.audit_retention_state().unwrap().deleted_rows, 3);
    let _ = child.kill();
    let _ = child.wait();
}

/// `serve --help` names both settings with their defaults.
#[test]
fn serve_help_shows_the_retention_defaults() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for s in [
        "--audit-retention <AUDIT_RETENTION>",
        "[default: 30d]",
        "--audit-max-bytes <AUDIT_MAX_BYTES>",
        "[default: 1GiB]",
        "A2A_GATEWAY_AUDIT_MAX_BYTES",
    ] {
        assert!(help.contains(s), "{s} not in serve --help:\n{help}");
    }
}
