//! `kill -9` of the `a2a-gateway serve` binary right after answers arrive: every hop the
//! gateway acknowledged to its caller has its outcome (decision, status, latency) in the audit
//! after the restart, never `incomplete` (the completion record is journaled before the answer
//! leaves, issue 40).

use std::collections::HashMap;
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_agent::{AgentCard, AgentConfig, AgentServer, Reply, handler_fn};
use a2a_gateway::store::{AuditRecord, Store};
use serde_json::{Value, json};

use crate::common::{seed_file, spawn_serve};

/// A peer that answers every message at once.
async fn quick_peer() -> a2a_agent::ServerHandle {
    let card = AgentCard::builder("p", "Answers", "1.0.0").build();
    let handler =
        handler_fn(|_ctx: a2a_agent::RequestContext| async move { Ok(Reply::text("ok")) });
    let cfg = AgentConfig {
        validate_auth: false,
        shutdown_grace: a2a_agent::config::Dur::from_millis(10),
        ..AgentConfig::default()
    };
    AgentServer::new(card, handler)
        .config(cfg)
        .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .await
        .unwrap()
}

/// Sends until the gateway dies; the hop numbered `kill_at` (counted over every caller's
/// acknowledged hops) kills it with SIGKILL as soon as its answer is read. Returns the trace
/// ids of the acknowledged hops (the caller's traceparent, which the audit records).
async fn load_until_killed(
    gw: Arc<Mutex<Child>>,
    url: String,
    key: String,
    round: u64,
    callers: usize,
    kill_at: usize,
) -> Vec<String> {
    let http = reqwest::Client::new();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let mut loops = Vec::new();
    for c in 0..callers {
        let (http, url, key) = (http.clone(), url.clone(), key.clone());
        let (acked, count, gw) = (acked.clone(), count.clone(), gw.clone());
        loops.push(tokio::spawn(async move {
            for i in 0u64.. {
                let trace = format!("{:08x}{:08x}{:016x}", round + 1, c + 1, i + 1);
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": {"messageId": format!("m-{round}-{c}-{i}"),
                        "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
                let sent = http
                    .post(&url)
                    .bearer_auth(&key)
                    .header("A2A-Version", "1.0")
                    .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
                    .json(&body)
                    .timeout(Duration::from_secs(10))
                    .send()
                    .await;
                let Ok(resp) = sent else { break };
                let Ok(v) = resp.json::<Value>().await else {
                    break;
                };
                if v["result"]["task"]["status"]["state"] != "TASK_STATE_COMPLETED" {
                    break;
                }
                acked.lock().unwrap().push(trace);
                if count.fetch_add(1, Ordering::SeqCst) + 1 == kill_at {
                    // SIGKILL, microseconds after this answer was read.
                    gw.lock().unwrap().kill().unwrap();
                }
            }
        }));
    }
    for l in loops {
        tokio::time::timeout(Duration::from_secs(30), l)
            .await
            .expect("a caller did not stop after the kill")
            .unwrap();
    }
    acked.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_hop_keeps_its_outcome_across_kill_9() {
    let peer = quick_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    // Three rounds on the same file: kill, restart, kill again.
    let mut acked_all: Vec<String> = Vec::new();
    for round in 0..3 {
        let (child, base) = spawn_serve(&db, &[]);
        let gw = Arc::new(Mutex::new(child));
        let acked = load_until_killed(
            gw.clone(),
            format!("{base}/a2a/p"),
            key.clone(),
            round,
            8,
            150,
        )
        .await;
        let _ = gw.lock().unwrap().wait();
        assert!(
            acked.len() >= 150,
            "round {round}: {} acknowledged",
            acked.len()
        );
        acked_all.extend(acked);
    }
    // The restart recovers what the killed process journaled but had not committed.
    let (mut last, _) = spawn_serve(&db, &[]);
    let store = Store::open(&db).unwrap();
    let records = store.audit(Some("ws"), None, 0, 1_000_000).unwrap();
    let by_trace: HashMap<&str, Vec<&AuditRecord>> =
        records.iter().fold(HashMap::new(), |mut m, r| {
            m.entry(r.trace_id.as_str()).or_default().push(r);
            m
        });
    let mut missing = Vec::new();
    for t in &acked_all {
        match by_trace.get(t.as_str()).map(Vec::as_slice) {
            Some([r]) => {
                assert_eq!(
                    r.outcome, None,
                    "acknowledged hop {t} reads incomplete: {r:?}"
                );
                assert_eq!((r.decision.as_str(), r.status), ("allowed", 200), "{r:?}");
                assert_eq!(r.operation.as_deref(), Some("message/send"), "{r:?}");
                assert_eq!(r.client_version.as_deref(), Some("1.0"), "{r:?}");
            }
            Some(rs) => panic!("hop {t} has {} records: {rs:?}", rs.len()),
            None => missing.push(t.clone()),
        }
    }
    assert!(
        missing.is_empty(),
        "acknowledged hops without a record: {missing:?}"
    );
    // The hops cut by the kills (sent, not answered) may read incomplete; at most one per
    // caller and round.
    let incomplete = records.iter().filter(|r| r.outcome.is_some()).count();
    assert!(incomplete <= 3 * 8, "{incomplete} incomplete records");
    let _ = last.kill();
    let _ = last.wait();
    peer.shutdown().await;
}

fn rec(trace: &str) -> AuditRecord {
    AuditRecord {
        trace_id: trace.into(),
        workspace_id: Some("w".into()),
        decision: "allowed".into(),
        ..AuditRecord::default()
    }
}

/// A completion line as a killed process leaves it (`of`: its intent's journal number,
/// `of_seq`: the intent's seq when it was committed already).
fn fin_line(j: u64, trace: &str, status: i64, of: Option<u64>, of_seq: Option<i64>) -> String {
    let mut v = json!({"j": j, "at": 1_767_225_600_000_000_000i64, "fin": {"traceId": trace,
        "workspaceId": "w", "decision": "refused", "status": status, "latencyMs": 7,
        "errorCode": "a2a_upstream_error"}});
    if let Some(of) = of {
        v["of"] = json!(of);
    }
    if let Some(s) = of_seq {
        v["of_seq"] = json!(s);
    }
    format!("{v}\n")
}

/// Every way a completion line can meet its intent on restart: both only in the journal, the
/// intent committed before the completion's seq was known (found by its journal number), the
/// intent's seq named in the line, and a refusal with no intent. Each hop reads as one finished
/// record with the journaled outcome, and a second restart recovers nothing again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journaled_outcomes_complete_their_intents_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let journal = dir.path().join("gw.db.intents");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
    s.open_intent_journal().unwrap();
    // j=1 and j=2: intents committed (the writer's batch) before their completions came.
    s.append_intent_committed(&rec("known-j")).await.unwrap();
    let known_seq = s.append_intent_committed(&rec("known-seq")).await.unwrap();
    s.flush_audit();
    let known_seq = known_seq.seq().unwrap();
    drop(s);
    let mut lines = std::fs::read_to_string(&journal).unwrap();
    assert_eq!(lines.lines().count(), 2);
    // j=3 intent and j=4 its completion, neither committed; j=5 completes j=1 by journal
    // number; j=6 names j=2's seq; j=7 a refusal without intent.
    lines.push_str(&format!(
        "{}\n",
        json!({"j": 3, "at": 1_767_225_600_000_000_000i64, "rec": {"traceId": "both",
            "workspaceId": "w", "decision": "allowed", "status": 0, "latencyMs": 0}})
    ));
    lines.push_str(&fin_line(4, "both", 502, Some(3), None));
    lines.push_str(&fin_line(5, "known-j", 503, Some(1), None));
    lines.push_str(&fin_line(6, "known-seq", 504, Some(2), Some(known_seq)));
    lines.push_str(&fin_line(7, "refused", 401, None, None));
    std::fs::write(&journal, lines).unwrap();

    let s = Store::open(&path).unwrap();
    let got = s.open_intent_journal().unwrap();
    assert_eq!((got.intents, got.outcomes), (1, 4));
    let rows = s.audit(Some("w"), None, 0, 100).unwrap();
    let mut seen: Vec<(&str, i64)> = rows
        .iter()
        .map(|r| {
            assert_eq!(r.outcome, None, "{r:?}");
            assert_eq!((r.latency_ms, r.decision.as_str()), (7, "refused"), "{r:?}");
            assert_eq!(
                r.ts, "2026-01-01T00:00:00Z",
                "the time the line was journaled"
            );
            (r.trace_id.as_str(), r.status)
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("both", 502),
            ("known-j", 503),
            ("known-seq", 504),
            ("refused", 401)
        ]
    );
    for t in ["both", "known-j", "known-seq"] {
        let recs = s.trace_records(t).unwrap();
        assert_eq!(recs.len(), 2, "intent and completion rows of {t}: {recs:?}");
        assert_eq!(
            recs[1].intent_seq,
            Some(recs[0].seq),
            "{t} is linked: {recs:?}"
        );
    }
    drop(s);
    let again = Store::open(&path).unwrap();
    let got = again.open_intent_journal().unwrap();
    assert_eq!((got.intents, got.outcomes), (0, 0));
    assert_eq!(again.audit(Some("w"), None, 0, 100).unwrap().len(), 4);
}
