//! The console's hop pages with 100,000 audit rows: every filter is served by an index in
//! `seq` order (checked on SQLite's plan) and a page comes back fast (timed and printed; the
//! figures are in docs/console.md, "Speed").

use std::time::{Duration, Instant};

use a2a_gateway::store::{HopFilter, Store};

const ROWS: i64 = 100_000;

/// 100,000 hops over 10 workspaces of 5 agents, 1 in 25 refused and 1 in 500 killed, 10 ms
/// apart, written straight into the file.
fn seed(path: &std::path::Path) {
    let s = Store::open(path).unwrap();
    for w in 0..10 {
        s.create_workspace(&format!("ws{w}"), "W").unwrap();
    }
    drop(s);
    let mut c = rusqlite::Connection::open(path).unwrap();
    let tx = c.transaction().unwrap();
    {
        let mut st = tx
            .prepare(
                "INSERT INTO audit(ts, trace_id, workspace_id, key_id, target, operation,
                   client_version, client_binding, peer_version, peer_binding, decision, status,
                   latency_ms, error_code)
                 VALUES (?1, ?2, ?3, 'k', ?4, 'message/send', '1.0', 'JSONRPC', '1.0',
                   'JSONRPC', ?5, ?6, ?7, ?8)",
            )
            .unwrap();
        let start = time::OffsetDateTime::from_unix_timestamp(1_767_225_600).unwrap();
        for i in 0..ROWS {
            let ts = (start + time::Duration::milliseconds(i * 10))
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap();
            let (decision, status, code) = if i % 500 == 7 {
                ("killed", 200, None)
            } else if i % 25 == 3 {
                ("refused", 403, Some("a2a_policy_denied"))
            } else {
                ("allowed", 200, None)
            };
            st.execute(rusqlite::params![
                ts,
                format!("{i:032x}"),
                format!("ws{}", i % 10),
                format!("agent{}", (i / 10) % 5),
                decision,
                status,
                i % 97,
                code
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn median(mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut n = 0;
    for _ in 0..5 {
        let t = Instant::now();
        n = f();
        times.push(t.elapsed());
    }
    times.sort();
    (times[2], n)
}

#[test]
fn hop_pages_with_100k_rows_use_indexes_and_are_fast() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    seed(&path);
    let store = Store::open(&path).unwrap();
    let f = |ws: Option<&str>, agent: Option<&str>, decision: Option<&str>| HopFilter {
        workspace: ws.map(Into::into),
        agent: agent.map(Into::into),
        decision: decision.map(Into::into),
        ..HopFilter::default()
    };
    let cases = [
        ("no filter", f(None, None, None), "audit"),
        ("workspace", f(Some("ws3"), None, None), "audit_ws_seq"),
        (
            "workspace + agent",
            f(Some("ws3"), Some("agent1"), None),
            "audit_ws_target_seq",
        ),
        (
            "decision (rare)",
            f(None, None, Some("killed")),
            "audit_decision_seq",
        ),
        (
            "workspace + decision",
            f(Some("ws3"), None, Some("refused")),
            "audit_",
        ),
        (
            "since (last minute)",
            HopFilter {
                since: Some("2026-01-01T00:15:40".into()),
                ..HopFilter::default()
            },
            "audit",
        ),
    ];
    let mut report = String::new();
    for (name, filter, index) in &cases {
        let plan = store.hop_page_plan(filter).unwrap().join(" | ");
        assert!(
            plan.contains(index) && !plan.contains("TEMP B-TREE"),
            "{name}: {plan}"
        );
        let (first, n) = median(|| store.hop_page(filter, None, 50).unwrap().len());
        assert!(n > 0, "{name}: rows");
        // A deep page: keyset from the middle of the log.
        let (deep, _) = median(|| store.hop_page(filter, Some(ROWS / 2), 50).unwrap().len());
        report.push_str(&format!(
            "{name:<24} first page {first:>10.2?}  page at seq 50000 {deep:>10.2?}  ({n} rows)  plan: {plan}\n"
        ));
        assert!(
            first < Duration::from_millis(500) && deep < Duration::from_millis(500),
            "{name}: {first:?} / {deep:?}"
        );
    }
    // The newest-first order and the keyset boundary.
    let page = store.hop_page(&cases[1].1, None, 50).unwrap();
    assert!(page.windows(2).all(|w| w[0].seq > w[1].seq));
    let next = store.hop_page(&cases[1].1, Some(page[49].seq), 50).unwrap();
    assert!(next[0].seq < page[49].seq);
    assert!(
        page.iter()
            .chain(&next)
            .all(|r| r.workspace_id.as_deref() == Some("ws3"))
    );
    eprintln!("console hop pages over {ROWS} audit rows (median of 5):\n{report}");
}
