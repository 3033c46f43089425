//! Chaos with real processes (issue 32, docs/replicas.md "Failures"): three `a2a-gateway serve
//! --database postgres://…` replicas on one throwaway PostgreSQL, the loopback load balancer of
//! `common/lb.rs` in front of them (round robin per connection, a refusing replica skipped)
//! and an echo agent. (a) `kill -9` of one replica while several callers send through the load
//! balancer: every send that got an answer is in the audit export and in ListTasks afterwards,
//! the others got an error or a dropped connection, never a wrong answer, and the survivors go
//! on serving. (d) PostgreSQL stopped: every replica answers 503 `a2a_store_unavailable`, within
//! a bound; PostgreSQL started again: every replica serves again by itself.
//!
//! Every wait is a poll with a deadline (a liveness bound, not a speed claim).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::cluster::{AGENT, Cluster, WORKSPACE};
use crate::common::echo::{EchoAgent, start_echo};
use a2a_client::Version;

/// What one send got.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// The echo of this send's own text, in a task with this id.
    Answered(String),
    /// An error answer (HTTP status; 200 for a JSON-RPC error).
    Refused(u16, String),
    /// The connection dropped (or could not be made).
    Dropped(String),
}

/// Starts the echo agent and a cluster of `n` replicas in front of it; `None` (the test is
/// skipped, saying so) without PostgreSQL's server binaries.
pub async fn start(n: usize) -> Option<(Cluster, EchoAgent)> {
    a2a_pg::testing::server_bin().or_else(|| {
        eprintln!(
            "SKIPPED: no initdb/pg_ctl (install Debian's `postgresql`; `cargo xtask test` does)"
        );
        None
    })?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo = start_echo(listener, Version::V1, None).await.unwrap();
    let gateway = Path::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    let local = "127.0.0.1:0".parse().unwrap();
    let c = Cluster::start(gateway, n, &echo.url, local, Default::default())
        .await
        .expect("the cluster starts");
    Some((c, echo))
}

/// A client of its own (its own connections, so the load balancer spreads the callers).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// SendMessage (JSON-RPC, A2A 1.0) of the text `id` (also the message id) to `base`'s echo.
pub async fn send(http: &reqwest::Client, base: &str, key: &str, id: &str) -> Got {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage", "params": {"message": {
        "role": "ROLE_USER", "messageId": id, "parts": [{"text": id}]}}});
    let resp = http
        .post(format!("{base}/a2a/{AGENT}"))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => {
            assert!(!e.is_timeout(), "send {id} hung: {e}");
            return Got::Dropped(e.to_string());
        }
    };
    let status = resp.status().as_u16();
    let text = match resp.text().await {
        Ok(t) => t,
        Err(e) => {
            assert!(!e.is_timeout(), "send {id} hung: {e}");
            return Got::Dropped(e.to_string());
        }
    };
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
    if status != 200 || v.get("error").is_some() {
        return Got::Refused(status, text);
    }
    assert_eq!(v["id"], id, "an answer to another request: {v}");
    let task = &v["result"]["task"];
    let echoed = task["artifacts"][0]["parts"][0]["text"].as_str();
    assert_eq!(
        echoed,
        Some(format!("echo: {id}").as_str()),
        "a wrong answer: {v}"
    );
    let tid = task["id"].as_str().expect("a task id").to_owned();
    Got::Answered(tid)
}

/// Waits until `check` holds (polled every 100 ms for up to `secs`).
pub async fn eventually<F, Fut>(what: &str, secs: u64, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let until = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < until {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not within {secs} s: {what}");
}

/// The audit export (`GET /admin/audit` of the workspace) through `base`: task id -> records.
async fn audited(c: &Cluster, base: &str) -> BTreeMap<String, usize> {
    let r = client()
        .get(format!("{base}/admin/audit?workspace={WORKSPACE}"))
        .bearer_auth(&c.admin_token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut out = BTreeMap::new();
    for line in r.text().await.unwrap().lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        if let Some(t) = rec["taskId"].as_str() {
            *out.entry(t.to_owned()).or_insert(0) += 1;
        }
    }
    out
}

/// Every task id ListTasks (JSON-RPC, all pages) lists through `base`.
async fn listed(c: &Cluster, base: &str) -> BTreeSet<String> {
    let http = client();
    let mut out = BTreeSet::new();
    let mut token = String::new();
    loop {
        let mut params = json!({"pageSize": 100});
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params});
        let r = http
            .post(format!("{base}/a2a/{AGENT}"))
            .bearer_auth(&c.key)
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let v: Value = r.json().await.unwrap();
        assert!(v.get("error").is_none(), "{v}");
        for t in v["result"]["tasks"].as_array().unwrap() {
            out.insert(t["id"].as_str().unwrap().to_owned());
        }
        token = v["result"]["nextPageToken"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        if token.is_empty() {
            return out;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_killed_under_load_loses_no_answered_send() {
    let Some((mut c, _echo)) = start(3).await else {
        return;
    };
    let lb = c.lb.url();
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for w in 0..6 {
        let (stop, answered, lb, key) = (stop.clone(), answered.clone(), lb.clone(), c.key.clone());
        workers.push(tokio::spawn(async move {
            let mut http = client();
            let mut got = Vec::new();
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let id = format!("w{w}-{n}");
                n += 1;
                let g = send(&http, &lb, &key, &id).await;
                match &g {
                    Got::Answered(_) => {
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                    // A dropped connection: the next send opens a new one (the load balancer
                    // gives it to the next replica that accepts).
                    Got::Dropped(_) => http = client(),
                    Got::Refused(..) => {}
                }
                got.push((id, g));
            }
            got
        }));
    }
    eventually("30 sends answered before the kill", 60, || {
        let n = answered.load(Ordering::SeqCst);
        async move { n >= 30 }
    })
    .await;
    c.kill(1);
    let at_kill = answered.load(Ordering::SeqCst);
    eventually("60 more sends answered after the kill", 60, || {
        let n = answered.load(Ordering::SeqCst);
        async move { n >= at_kill + 60 }
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await.unwrap());
    }
    let tasks: Vec<&String> = all
        .iter()
        .filter_map(|(_, g)| match g {
            Got::Answered(t) => Some(t),
            _ => None,
        })
        .collect();
    let failed: Vec<&(String, Got)> = all
        .iter()
        .filter(|(_, g)| !matches!(g, Got::Answered(_)))
        .collect();
    eprintln!(
        "{} sends: {} answered, {} failed: {failed:?}",
        all.len(),
        tasks.len(),
        failed.len()
    );
    // A failed send is a dropped connection or an error answer (a 5xx of the dying replica),
    // never a 2xx or a 4xx refusal of a well-formed send.
    for (id, g) in &failed {
        if let Got::Refused(s, body) = g {
            assert!(*s >= 500, "{id}: {s} {body}");
        }
    }
    // Every answered send is in the audit export and in ListTasks, read through the load
    // balancer (whatever replica answers reads every replica's rows).
    let audit = audited(&c, &lb).await;
    let list = listed(&c, &lb).await;
    let distinct: BTreeSet<&String> = tasks.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        tasks.len(),
        "two sends answered with one task"
    );
    for t in &tasks {
        assert!(
            audit.contains_key(*t),
            "answered task {t} not in the audit export"
        );
        assert!(
            list.contains(*t),
            "answered task {t} not listed by ListTasks"
        );
    }
    // The same through each surviving replica directly.
    for i in [0, 2] {
        let base = c.replicas[i].url();
        assert_eq!(audited(&c, &base).await.len(), audit.len(), "replica {i}");
        assert_eq!(listed(&c, &base).await, list, "replica {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_every_replica_answers_503_and_recovers_by_itself() {
    let Some((c, _echo)) = start(3).await else {
        return;
    };
    let http = client();
    for (i, r) in c.replicas.iter().enumerate() {
        assert!(
            matches!(
                send(&http, &r.url(), &c.key, &format!("before-{i}")).await,
                Got::Answered(_)
            ),
            "replica {i} serves"
        );
    }
    c.pg.stop().unwrap();
    for (i, r) in c.replicas.iter().enumerate() {
        let base = r.url();
        let mut n = 0;
        eventually(&format!("replica {i} answers 503"), 20, || {
            n += 1;
            let (http, base, key, id) = (
                http.clone(),
                base.clone(),
                c.key.clone(),
                format!("down-{i}-{n}"),
            );
            async move {
                // Bounded: an answer within 10 s (the pools' timeouts are shorter), no hang.
                let got =
                    tokio::time::timeout(Duration::from_secs(10), send(&http, &base, &key, &id))
                        .await
                        .expect("an answer while PostgreSQL is down, not a hang");
                match got {
                    Got::Refused(503, body) => {
                        assert!(body.contains("a2a_store_unavailable"), "{body}");
                        true
                    }
                    // Until the replica notices (its listener's connection cut): served from
                    // memory or refused otherwise; never a wrong answer (checked by `send`).
                    _ => false,
                }
            }
        })
        .await;
    }
    // Through the load balancer too: every replica refuses alike.
    match send(&http, &c.lb.url(), &c.key, "down-lb").await {
        Got::Refused(503, body) => assert!(body.contains("a2a_store_unavailable"), "{body}"),
        other => panic!("through the load balancer: {other:?}"),
    }
    c.pg.start_again().unwrap();
    for (i, r) in c.replicas.iter().enumerate() {
        let base = r.url();
        let mut n = 0;
        eventually(&format!("replica {i} serves again"), 30, || {
            n += 1;
            let (http, base, key, id) = (
                http.clone(),
                base.clone(),
                c.key.clone(),
                format!("up-{i}-{n}"),
            );
            async move { matches!(send(&http, &base, &key, &id).await, Got::Answered(_)) }
        })
        .await;
    }
}
