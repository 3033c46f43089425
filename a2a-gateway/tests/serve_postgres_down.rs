//! `a2a-gateway serve --database postgres://…` started while PostgreSQL is down (issue 32,
//! docs/replicas.md "Failures"): the replica starts anyway and serves `/healthz` 200, `/readyz`
//! 503 with the reason, and every A2A and admin request 503 `a2a_store_unavailable` in the
//! caller's form (gRPC: UNAVAILABLE); it connects again with a backoff, logging each failed
//! attempt, and once PostgreSQL is started it migrates the database and serves a hop, without
//! a restart.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::callers::{Call, FORMS, call};
use crate::common::{ADMIN, send10, spawn_gateway_cmd};
use crate::gateway_postgres::assert_store_unavailable;
use crate::idempotent_sends::counting_peer;
use crate::serve_postgres::{admin, rpc};
use crate::store_suite::cluster;

/// A GET's status and body (0 when nothing answered).
async fn get(url: &str) -> (u16, Value) {
    match reqwest::Client::new()
        .get(url)
        .timeout(Duration::from_secs(10))
        .send()
        .await
    {
        Ok(r) => {
            let s = r.status().as_u16();
            (s, r.json().await.unwrap_or(Value::Null))
        }
        Err(_) => (0, Value::Null),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_started_while_postgres_is_down_serves_once_it_is_up() {
    let Some(cluster) = cluster() else { return };
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    cluster.stop().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.current_dir(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--dev"])
        .args(["--database", &cluster.url(), "--admin-token", ADMIN])
        .args(["--database-timeout", "1s", "--peer-timeout", "5s"])
        .args(["--serve-grpc", "true"])
        .env(
            "A2A_GATEWAY_CARD_KEY_SECRET",
            "a card key secret of 32 bytes or more",
        )
        .env_remove("A2A_GATEWAY_DATABASE")
        .env_remove("RUST_LOG")
        .env_remove("A2A_GATEWAY_LOG_LEVEL");
    // It listens although the database cannot be reached.
    let (mut child, base, lines) = spawn_gateway_cmd(cmd);
    let (s, _) = get(&format!("{base}/healthz")).await;
    assert_eq!(s, 200);
    let (s, ready) = get(&format!("{base}/readyz")).await;
    assert_eq!(s, 503, "{ready}");
    let reason = ready["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("database unavailable") || reason.starts_with("connecting"),
        "{ready}"
    );
    // Every caller form of every kind of call: 503 a2a_store_unavailable in its own form.
    let addr = base
        .trim_start_matches("http://")
        .parse()
        .expect("the replica's address");
    let http = reqwest::Client::new();
    let calls = [
        Call::Send("work".into()),
        Call::Stream("work".into()),
        Call::List,
        Call::Get("t-1".into()),
    ];
    for form in FORMS {
        for c in calls.iter().filter(|c| form.has(c)) {
            let got = tokio::time::timeout(
                Duration::from_secs(30),
                call(&http, &base, addr, "any-key", form, "count", c),
            )
            .await
            .unwrap_or_else(|_| panic!("{form:?} {c:?}: no answer in 30 s"));
            assert_store_unavailable(form, c, &got, false);
        }
    }
    // The admin API too.
    let (s, r) = admin(&base, "GET", "/admin/workspaces", Value::Null).await;
    assert_eq!(s, 503, "{r}");
    assert!(r.to_string().contains("a2a_store_unavailable"), "{r}");

    // Each failed attempt is logged (with its number), the attempts go on.
    let mut logged = Vec::new();
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until && logged.len() < 2 {
        if let Ok(l) = lines.recv_timeout(Duration::from_millis(200))
            && l.contains("cannot be reached yet")
        {
            logged.push(l);
        }
    }
    assert!(logged.len() >= 2, "attempts logged: {logged:?}");
    assert!(child.try_wait().unwrap().is_none(), "the replica runs on");

    // PostgreSQL starts: the replica becomes ready by itself and serves a hop.
    cluster.start_again().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let mut ready = (0, Value::Null);
    while Instant::now() < until {
        ready = get(&format!("{base}/readyz")).await;
        if ready.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ready.0, 200, "{ready:?}");
    let (s, w) = admin(&base, "POST", "/admin/workspaces", json!({"id": "ws1"})).await;
    assert_eq!(s, 201, "{w}");
    let agent = json!({"agentId": "count", "endpoint": peer.url()});
    let (s, r) = admin(&base, "POST", "/admin/workspaces/ws1/agents", agent).await;
    assert_eq!(s, 201, "{r}");
    let (s, k) = admin(&base, "POST", "/admin/workspaces/ws1/keys", json!({})).await;
    assert_eq!(s, 201, "{k}");
    let key = k["key"].as_str().unwrap().to_owned();
    let (s, r) = rpc(&base, "count", &key, send10("after the start")).await;
    assert_eq!(s, 200, "{r}");
    assert!(r["result"]["task"]["id"].is_string(), "{r}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let _ = child.kill();
    let _ = child.wait();
}
