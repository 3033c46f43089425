//! One audit suite, written once against `AuditStore` and run on both backends (issue 32): a
//! SQLite file (the serving process's store, its intent journal open) and a throwaway
//! PostgreSQL cluster. One record per hop (an intent alone reads `incomplete`), the console's
//! filtered pages and counts add up, a hop's detail and samples, the admin audit, the export; retention
//! deletes the oldest rows in batches by age and keeps the byte bound. On PostgreSQL: two
//! replicas' records are all read back exactly once; a durable record survives dropping the
//! writer; with the database stopped calls fail as unavailable, and work after its restart.

use std::collections::HashMap;
use std::time::Duration;

use a2a_gateway::config::AuditRetention;
use a2a_gateway::store::backend::{
    AdminAuditRecord, AdminIdentity, Audit, AuditStore, PgAudit, SqliteAudit, export_jsonl,
};
use a2a_gateway::store::{AuditRecord, HopFilter, Store};
use a2a_pg::PoolOptions;
use serde_json::json;

use crate::store_suite::cluster;

fn rec(trace: &str, ws: &str, agent: &str, decision: &str, ts: &str) -> AuditRecord {
    AuditRecord {
        ts: ts.into(),
        trace_id: trace.into(),
        workspace_id: Some(ws.into()),
        target: Some(agent.into()),
        operation: Some("SendMessage".into()),
        decision: decision.into(),
        status: if decision == "allowed" { 200 } else { 403 },
        latency_ms: 7,
        ..AuditRecord::default()
    }
}

fn at(s: u32) -> String {
    format!("2026-01-01T00:00:{s:02}Z")
}

fn traces(rows: &[AuditRecord]) -> Vec<&str> {
    rows.iter().map(|r| r.trace_id.as_str()).collect()
}

/// Every hop matching `f`, newest first, read a page of `n` at a time.
async fn paged<A: AuditStore>(a: &A, f: &HopFilter, n: i64) -> Vec<AuditRecord> {
    let mut out: Vec<AuditRecord> = Vec::new();
    loop {
        let page = a.hop_page(f, out.last().map(|r| r.seq), n).await.unwrap();
        assert!(page.len() as i64 <= n);
        if page.is_empty() {
            return out;
        }
        out.extend(page);
    }
}

/// The whole suite, on an empty audit.
pub async fn suite<A: AuditStore>(a: &A) {
    hops(a).await;
    admin(a).await;
}

async fn hops<A: AuditStore>(a: &A) {
    // A hop with its intent: one record, the completion, linked to the intent.
    let link = a
        .intent(&rec("h1", "wa", "echo", "allowed", &at(1)))
        .await
        .unwrap();
    // With its split of time (peer and gateway), kept as written.
    let timed = AuditRecord {
        peer_us: Some(1234),
        overhead_us: Some(567),
        ..rec("h1", "wa", "echo", "allowed", &at(1))
    };
    a.durable(&timed, Some(&link)).await.unwrap();
    // A hop cut after its intent: read as incomplete.
    a.intent(&rec("cut", "wa", "echo", "allowed", &at(2)))
        .await
        .unwrap();
    for (i, d) in ["allowed", "refused", "allowed", "refused", "allowed"]
        .into_iter()
        .enumerate()
    {
        let t = format!("q{i}");
        a.enqueue(&rec(&t, "wa", "echo", d, &at(3 + i as u32)), None)
            .unwrap();
        // One batch each: batches in flight at once may commit in any order.
        a.flushed().await;
    }
    a.enqueue(&rec("other-agent", "wa", "other", "allowed", &at(8)), None)
        .unwrap();
    a.flushed().await;
    for i in 0..3 {
        a.enqueue(
            &rec(&format!("b{i}"), "wb", "echo", "allowed", &at(9)),
            None,
        )
        .unwrap();
    }
    a.flushed().await;

    let all = a.records(None, None, 0, 100).await.unwrap();
    assert_eq!(all.len(), 11, "{:?}", traces(&all));
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq), "oldest first");
    let h1: Vec<&AuditRecord> = all.iter().filter(|r| r.trace_id == "h1").collect();
    assert_eq!(h1.len(), 1, "one record per hop");
    assert_eq!(h1[0].outcome, None);
    assert_eq!(h1[0].intent_seq, link.seq(), "linked to its intent's row");
    assert_eq!((h1[0].peer_us, h1[0].overhead_us), (Some(1234), Some(567)));
    assert!(
        all.iter()
            .filter(|r| r.trace_id != "h1")
            .all(|r| r.peer_us.is_none() && r.overhead_us.is_none()),
        "no split where none was measured"
    );
    let cut = all.iter().find(|r| r.trace_id == "cut").unwrap();
    assert_eq!(cut.outcome.as_deref(), Some("incomplete"));
    assert_eq!(a.records(Some("wb"), None, 0, 100).await.unwrap().len(), 3);
    assert_eq!(
        a.records(Some("wa"), Some("other"), 0, 100)
            .await
            .unwrap()
            .len(),
        1
    );
    let after = a.records(None, None, all[5].seq, 3).await.unwrap();
    assert_eq!(traces(&after), traces(&all[6..9]));

    // The console's pages: newest first, filters, keyset pages that add up.
    let mut newest_first = all.clone();
    newest_first.reverse();
    let every = paged(a, &HopFilter::default(), 4).await;
    assert_eq!(traces(&every), traces(&newest_first));
    let f = HopFilter {
        workspace: Some("wa".into()),
        agent: Some("echo".into()),
        ..HopFilter::default()
    };
    let wa_echo = paged(a, &f, 2).await;
    assert_eq!(
        traces(&wa_echo),
        ["q4", "q3", "q2", "q1", "q0", "cut", "h1"]
    );
    let refused = HopFilter {
        decision: Some("refused".into()),
        ..f.clone()
    };
    assert_eq!(traces(&paged(a, &refused, 1).await), ["q3", "q1"]);
    let window = HopFilter {
        since: Some(at(4)),
        until: Some("2026-01-01T00:00:07".into()),
        ..f.clone()
    };
    assert_eq!(traces(&paged(a, &window, 10).await), ["q3", "q2", "q1"]);
    // Counts: one per hop, as the pages.
    for (filter, n) in [
        (HopFilter::default(), 11),
        (f.clone(), 7),
        (refused.clone(), 2),
        (window.clone(), 3),
    ] {
        assert_eq!(a.hop_count(&filter).await.unwrap(), n, "{filter:?}");
    }
    let q1 = wa_echo.iter().find(|r| r.trace_id == "q1").unwrap();
    let newer = a.hops_after(&f, q1.seq, 100).await.unwrap();
    assert_eq!(traces(&newer), ["q4", "q3", "q2"]);

    // A hop's detail, its trace, an agent's samples and last refusal.
    let one = a.record(q1.seq).await.unwrap().unwrap();
    assert_eq!(one, *q1);
    assert_eq!(a.record(i64::MAX).await.unwrap(), None);
    let trace = a.trace_records("h1").await.unwrap();
    assert!(!trace.is_empty() && trace.iter().all(|r| r.trace_id == "h1"));
    assert!(trace.iter().any(|r| r.outcome.is_none() && r.status == 200));
    let samples = a.latency_samples("wa", "echo", &at(2), 10).await.unwrap();
    let times: Vec<&str> = samples.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(times, [at(7), at(6), at(5), at(4), at(3)], "no intent");
    assert!(samples.iter().all(|(_, l)| *l == 7));
    let last = a.last_refusal("wa", "echo").await.unwrap().unwrap();
    assert_eq!(last.trace_id, "q3");
    assert_eq!(a.last_refusal("wb", "echo").await.unwrap(), None);

    // The export: every hop once, as JSON lines.
    let mut out = Vec::new();
    assert_eq!(export_jsonl(a, None, 0, &mut out).await.unwrap(), 11);
    let lines: Vec<AuditRecord> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, all);
}

async fn admin<A: AuditStore>(a: &A) {
    let row = |ws: Option<&str>, action: &str| AdminAuditRecord {
        seq: 0,
        ts: String::new(),
        actor: AdminIdentity {
            kind: "admin-token".into(),
            subject: "admin-token".into(),
            remote: Some("127.0.0.1:1".into()),
        },
        action: action.into(),
        workspace_id: ws.map(str::to_owned),
        status: 201,
        detail: json!({"body": {"agentId": "echo"}}),
    };
    let s1 = a
        .append_admin(&row(Some("wa"), "POST /admin/x"))
        .await
        .unwrap();
    let s2 = a
        .append_admin(&row(None, "cli workspace-add"))
        .await
        .unwrap();
    assert!(s2 > s1);
    let rows = a.admin_records(None, 0, 10).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].seq, s1);
    assert_eq!(rows[0].actor, row(None, "").actor);
    assert_eq!(rows[0].detail, json!({"body": {"agentId": "echo"}}));
    assert!(rows[0].ts.starts_with("20"), "{}", rows[0].ts);
    let wa = a.admin_records(Some("wa"), 0, 10).await.unwrap();
    assert_eq!(wa.len(), 1);
    assert_eq!(wa[0].action, "POST /admin/x");
    assert!(a.admin_records(None, s2, 10).await.unwrap().is_empty());
}

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

fn days_ago(d: i64) -> String {
    rfc3339(time::OffsetDateTime::now_utc() - time::Duration::days(d))
}

/// Trims until the rule keeps every row, checking each batch's bound; the rows deleted.
async fn trim_all<A: AuditStore>(a: &A, rule: &AuditRetention) -> usize {
    let mut n = 0;
    loop {
        let t = a.trim(rule).await.unwrap();
        assert!(t.rows <= rule.batch, "{t:?}");
        if t.rows == 0 {
            return n;
        }
        n += t.rows;
    }
}

/// Retention on an empty audit: the age rule deletes exactly the old rows, oldest first, in
/// batches, keeping the newest row; the size rule keeps the byte bound, deleting the oldest.
pub async fn retention<A: AuditStore>(a: &A) {
    for i in 0..30 {
        a.enqueue(
            &rec(&format!("old{i}"), "w", "e", "allowed", &days_ago(40)),
            None,
        )
        .unwrap();
    }
    a.flushed().await;
    for i in 0..5 {
        a.enqueue(
            &rec(&format!("new{i}"), "w", "e", "allowed", &days_ago(2)),
            None,
        )
        .unwrap();
    }
    a.flushed().await;
    let by_age = |days: u64| AuditRetention {
        max_age: Some(Duration::from_secs(days * 24 * 3600)),
        max_bytes: None,
        batch: 7,
    };
    assert_eq!(trim_all(a, &by_age(30)).await, 30);
    let rows = a.records(None, None, 0, 100).await.unwrap();
    let mut kept: Vec<&str> = traces(&rows);
    kept.sort_unstable();
    assert_eq!(kept, ["new0", "new1", "new2", "new3", "new4"]);
    let state = a.retention_state().await.unwrap();
    assert_eq!(state.deleted_rows, 30);
    assert!(state.deleted_below <= rows[0].seq);
    assert!(state.last_at.is_some());
    // A shorter retention takes the rest but the newest row.
    assert_eq!(trim_all(a, &by_age(1)).await, 4);
    let newest = a.records(None, None, 0, 100).await.unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].seq, rows.last().unwrap().seq);

    // The byte bound: about 2 MB written, bound at 256 KiB.
    let max = 256 * 1024;
    let blob = json!({ "evidence": "x".repeat(600) });
    for round in 0..6 {
        for i in 0..500 {
            let mut r = rec(&format!("r{round}-{i}"), "w", "e", "allowed", "");
            r.governance = Some(blob.clone());
            a.enqueue(&r, None).unwrap();
        }
        a.flushed().await;
    }
    let before: Vec<i64> = a
        .records(None, None, 0, 10_000)
        .await
        .unwrap()
        .iter()
        .map(|r| r.seq)
        .collect();
    assert!(a.audit_bytes().await.unwrap() > 4 * max);
    let rule = AuditRetention {
        max_age: None,
        max_bytes: Some(max),
        batch: 500,
    };
    let deleted = trim_all(a, &rule).await;
    let after: Vec<i64> = a
        .records(None, None, 0, 10_000)
        .await
        .unwrap()
        .iter()
        .map(|r| r.seq)
        .collect();
    assert!(deleted > 0 && deleted + after.len() == before.len());
    assert_eq!(after, before[before.len() - after.len()..], "oldest first");
    let bytes = a.audit_bytes().await.unwrap();
    assert!(bytes <= max + max / 2, "the audit takes {bytes} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_suite_on_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::store_records::sqlite_store(&dir).await;
    let a = Audit::Sqlite(SqliteAudit::new(store.clone()));
    suite(&a).await;
    // The same rows through the store the gateway calls today.
    assert_eq!(store.audit(None, None, 0, 100).unwrap().len(), 11);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    retention(&SqliteAudit::new(store)).await;
}

async fn pg_audit(cluster: &a2a_pg::testing::TempCluster, db: &str) -> PgAudit {
    cluster.create_database(db).unwrap();
    PgAudit::connect(&cluster.url_of(db), &PoolOptions::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_suite_on_postgres() {
    let Some(cluster) = cluster() else { return };
    suite(&Audit::Postgres(pg_audit(&cluster, "audit").await)).await;
    retention(&pg_audit(&cluster, "retention").await).await;
}

/// Two replicas (two pools and writers on one database) write at once: every record of both
/// is read back exactly once, from either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_records_are_all_read_back_once() {
    let Some(cluster) = cluster() else { return };
    let a = pg_audit(&cluster, "replicas").await;
    let b = PgAudit::connect(&cluster.url_of("replicas"), &PoolOptions::default())
        .await
        .unwrap();
    let write = |r: PgAudit, name: &'static str| async move {
        for i in 0..300 {
            let t = format!("{name}-{i}");
            if i % 10 == 0 {
                let link = r.intent(&rec(&t, "w", name, "allowed", "")).await.unwrap();
                r.durable(&rec(&t, "w", name, "allowed", ""), Some(&link))
                    .await
                    .unwrap();
            } else {
                r.enqueue(&rec(&t, "w", name, "allowed", ""), None).unwrap();
            }
        }
        r.flushed().await;
    };
    tokio::join!(write(a.clone(), "a"), write(b.clone(), "b"));
    for reader in [&a, &b] {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::new();
        assert_eq!(export_jsonl(reader, None, 0, &mut out).await.unwrap(), 600);
        for line in String::from_utf8(out).unwrap().lines() {
            let r: AuditRecord = serde_json::from_str(line).unwrap();
            *seen.entry(r.trace_id).or_default() += 1;
        }
        assert_eq!(seen.len(), 600);
        assert!(seen.values().all(|n| *n == 1), "each hop once");
        // The hops with an intent are completed ones, linked.
        let linked = reader
            .records(Some("w"), Some("a"), 0, 1000)
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.intent_seq.is_some())
            .count();
        assert_eq!(linked, 30);
    }
}

/// A durable record is committed when the call returns: dropping the writer right after loses
/// nothing; what was only queued is committed by the writer as it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_write_survives_dropping_the_writer() {
    let Some(cluster) = cluster() else { return };
    let a = pg_audit(&cluster, "drop").await;
    a.durable(&rec("kept", "w", "e", "allowed", ""), None)
        .await
        .unwrap();
    a.intent(&rec("cut", "w", "e", "allowed", ""))
        .await
        .unwrap();
    a.enqueue(&rec("queued", "w", "e", "allowed", ""), None)
        .unwrap();
    drop(a);
    let b = PgAudit::connect(&cluster.url_of("drop"), &PoolOptions::default())
        .await
        .unwrap();
    let rows = b.records(None, None, 0, 10).await.unwrap();
    assert!(rows.iter().any(|r| r.trace_id == "kept"));
    let cut = rows.iter().find(|r| r.trace_id == "cut").unwrap();
    assert_eq!(cut.outcome.as_deref(), Some("incomplete"));
    for _ in 0..500 {
        let rows = b.records(None, None, 0, 10).await.unwrap();
        if rows.iter().any(|r| r.trace_id == "queued") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the queued record was never committed");
}

/// With the database stopped, every awaited call fails as unavailable (a queued record does
/// not wait); after the restart the same handle writes and reads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_postgres_is_down_audit_calls_fail_as_unavailable() {
    let Some(cluster) = cluster() else { return };
    cluster.create_database("outage").unwrap();
    let quick = PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    };
    let a = PgAudit::connect(&cluster.url_of("outage"), &quick)
        .await
        .unwrap();
    a.durable(&rec("before", "w", "e", "allowed", ""), None)
        .await
        .unwrap();
    cluster.stop().unwrap();
    let r = rec("during", "w", "e", "allowed", "");
    let bounded = Duration::from_secs(20);
    let err = tokio::time::timeout(bounded, a.durable(&r, None))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    let err = tokio::time::timeout(bounded, a.intent(&r))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    a.enqueue(&r, None).unwrap();
    let err = tokio::time::timeout(bounded, a.records(None, None, 0, 10))
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    let err = a.admin_records(None, 0, 10).await.unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    let rule = AuditRetention {
        max_age: Some(Duration::from_secs(3600)),
        max_bytes: None,
        batch: 10,
    };
    let err = a.trim(&rule).await.unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");

    cluster.start_again().unwrap();
    let mut ok = false;
    for _ in 0..100 {
        if a.durable(&rec("after", "w", "e", "allowed", ""), None)
            .await
            .is_ok()
        {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "writes again after the restart");
    let rows = a.records(None, None, 0, 10).await.unwrap();
    let names = traces(&rows);
    assert!(
        names.contains(&"before") && names.contains(&"after"),
        "{names:?}"
    );
}
