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

/// The longest any request of these tests may take: a store that cannot be reached is answered
/// within `--database-timeout` (1 s here), never left hanging.
const BOUND: Duration = Duration::from_secs(10);

pub(crate) async fn admin(base: &str, method: &str, path: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .request(method.parse().unwrap(), format!("{base}{path}"))
        .timeout(BOUND)
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
        .timeout(BOUND)
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
    match reqwest::Client::new().get(url).timeout(BOUND).send().await {
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

/// Polls `check` every 100 ms for up to `secs` seconds; whether it held once.
async fn eventually<F: std::future::Future<Output = bool>>(
    secs: u64,
    check: impl Fn() -> F,
) -> bool {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn metrics(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_database_and_liveness_does_not() {
    let Some(cluster) = cluster() else { return };
    let peer = counting_peer(Arc::new(AtomicUsize::new(0))).await;
    let dir = tempfile::tempdir().unwrap();
    let a = replica(&cluster.url(), dir.path());
    let (s, _) = admin(&a.base, "POST", "/admin/workspaces", json!({"id": "ws1"})).await;
    assert_eq!(s, 201);
    let agent = json!({"agentId": "count", "endpoint": peer.url()});
    assert_eq!(
        admin(&a.base, "POST", "/admin/workspaces/ws1/agents", agent)
            .await
            .0,
        201
    );
    let (_, k) = admin(&a.base, "POST", "/admin/workspaces/ws1/keys", json!({})).await;
    let key = k["key"].as_str().unwrap().to_owned();
    let ready = format!("{}/readyz", a.base);
    let live = format!("{}/healthz", a.base);
    assert_eq!(get(&ready).await, 200);
    assert!(
        metrics(&a.base)
            .await
            .contains("a2a_store_listener_up{listener=\"registry\"} 1")
    );

    cluster.stop().unwrap();
    assert!(
        eventually(10, || async { get(&ready).await == 503 }).await,
        "readyz stays 200"
    );
    assert_eq!(get(&live).await, 200, "liveness follows the database");
    let body: Value = reqwest::get(&ready).await.unwrap().json().await.unwrap();
    assert!(
        body["reason"]
            .as_str()
            .unwrap()
            .contains("database unavailable"),
        "{body}"
    );
    // A request is refused in its caller's form, within the client's bound.
    let (s, r) = rpc(&a.base, "count", &key, send10("while down")).await;
    assert_eq!(s, 503, "{r}");
    assert!(r.to_string().contains("a2a_store_unavailable"), "{r}");
    assert!(
        eventually(10, || async {
            metrics(&a.base)
                .await
                .contains("a2a_store_listener_up{listener=\"registry\"} 0")
        })
        .await,
        "the listener is not reported away"
    );
    assert_eq!(get(&live).await, 200);

    cluster.start_again().unwrap();
    assert!(
        eventually(20, || async { get(&ready).await == 200 }).await,
        "readyz stays 503"
    );
    assert!(
        eventually(10, || async {
            rpc(&a.base, "count", &key, send10("back"))
                .await
                .1
                .get("result")
                .is_some()
        })
        .await,
        "not served again"
    );
    assert!(
        eventually(10, || async {
            metrics(&a.base)
                .await
                .contains("a2a_store_listener_up{listener=\"registry\"} 1")
        })
        .await,
        "the listener is not reported back"
    );
    let m = metrics(&a.base).await;
    assert!(
        m.contains("a2a_store_polls_total{listener=\"registry\"}"),
        "{m}"
    );
    assert_eq!(get(&live).await, 200);
}

/// `a2a-gateway admin --database url ARGS`: (success, stdout, stderr).
pub(crate) fn cli(url: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["admin", "--database", url])
        .args(args)
        .env("USER", "operator-pg")
        .env_remove("A2A_GATEWAY_DATABASE")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_cli_works_on_postgres() {
    let Some(cluster) = cluster() else { return };
    let peer = counting_peer(Arc::new(AtomicUsize::new(0))).await;
    let url = cluster.url();
    let dir = tempfile::tempdir().unwrap();
    let a = replica(&url, dir.path());
    let ok = |args: &[&str]| {
        let (done, out, err) = cli(&url, args);
        assert!(done, "admin {args:?}: {err}");
        out
    };
    ok(&["workspace-create", "ws2"]);
    ok(&["agent-add", "ws2", "count", peer.url(), "--dev"]);
    let key = ok(&["key-create", "ws2"])
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_owned();
    let agents: Value = serde_json::from_str(&ok(&["agent-list", "ws2"])).unwrap();
    assert_eq!(agents[0]["agentId"], "count", "{agents}");
    // The running replica serves what the CLI made.
    assert!(
        eventually(5, || async {
            rpc(&a.base, "count", &key, send10("cli"))
                .await
                .1
                .get("result")
                .is_some()
        })
        .await,
        "the CLI's key and agent are not served"
    );
    let set: Value = serde_json::from_str(&ok(&[
        "settings-set",
        "ws2",
        "--allow-extension",
        "urn:x:a",
        "--push-delivery",
        "direct",
    ]))
    .unwrap();
    assert_eq!(set["a2a.extensions.allowed"], json!(["urn:x:a"]));
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"rules": []}"#).unwrap();
    ok(&["policy-set", "ws2", policy.to_str().unwrap()]);
    assert!(ok(&["policy-get", "ws2"]).contains("rules"));
    ok(&["kill", "ws2", "context", "ctx-1"]);
    assert!(ok(&["kill-list", "ws2"]).contains("ctx-1"));
    // The hop through the replica is in the export; the CLI's changes in the admin audit.
    assert!(ok(&["audit-export", "--workspace", "ws2"]).lines().count() >= 1);
    let rows: Vec<Value> = ok(&["admin-audit", "--workspace", "ws2"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let actions: Vec<&str> = rows.iter().map(|r| r["action"].as_str().unwrap()).collect();
    for want in [
        "cli workspace-create",
        "cli agent-add",
        "cli key-create",
        "cli settings-set",
    ] {
        assert!(actions.contains(&want), "{want} not in {actions:?}");
    }
    assert!(
        rows.iter().all(|r| r["actor"]["subject"] == "operator-pg"),
        "{rows:?}"
    );
    // What it cannot do there is refused clearly.
    let (done, _, err) = cli(&url, &["signing-key-list"]);
    assert!(!done);
    assert!(err.contains("SQLite file"), "{err}");
    assert!(sqlite_files(dir.path()).is_empty());
}

/// `a2a-gateway admin --database file ARGS` on a SQLite file; stdout (the command must pass).
fn file_cli(db: &std::path::Path, args: &[&str]) -> String {
    let (done, out, err) = cli(db.to_str().unwrap(), args);
    assert!(done, "admin {args:?}: {err}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_store_copies_a_sqlite_deployment_and_a_gateway_serves_it() {
    use crate::common::approval::{held_parts, policy};
    let Some(cluster) = cluster() else { return };
    let peer = counting_peer(Arc::new(AtomicUsize::new(0))).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");

    // A SQLite deployment with data of every kind, made through its admin API and CLI.
    let secret = "a card key secret of 32 bytes or more";
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--dev",
        "--admin-token",
        ADMIN,
    ])
    .arg("--database")
    .arg(&db)
    .env("A2A_GATEWAY_CARD_KEY_SECRET", secret);
    let (mut old, base, _) = spawn_gateway_cmd(cmd);
    assert_eq!(
        admin(&base, "POST", "/admin/workspaces", json!({"id": "ws1"}))
            .await
            .0,
        201
    );
    let agent = json!({"agentId": "count", "endpoint": peer.url()});
    assert_eq!(
        admin(&base, "POST", "/admin/workspaces/ws1/agents", agent)
            .await
            .0,
        201
    );
    let (_, k) = admin(&base, "POST", "/admin/workspaces/ws1/keys", json!({})).await;
    let key = k["key"].as_str().unwrap().to_owned();
    assert_eq!(
        admin(&base, "POST", "/admin/signing-keys", json!({}))
            .await
            .0,
        201
    );
    let trust = json!({"requireSignedCards": false});
    assert_eq!(
        admin(&base, "PUT", "/admin/workspaces/ws1/card-trust", trust)
            .await
            .0,
        200
    );
    for i in 0..3 {
        let (s, r) = rpc(&base, "count", &key, send10(&format!("old {i}"))).await;
        assert_eq!(s, 200, "{r}");
    }
    assert_eq!(
        admin(&base, "PUT", "/admin/workspaces/ws1/policy", policy())
            .await
            .0,
        200
    );
    for _ in 0..2 {
        let held = held_parts(Some("1.0"), &[json!({"text": "refund"})], None, false);
        let (s, r) = rpc(&base, "count", &key, held).await;
        assert_eq!(s, 200, "{r}");
    }
    old.kill().unwrap();
    old.wait().unwrap();
    let pending: Value = serde_json::from_str(&file_cli(&db, &["approval-list", "ws1"])).unwrap();
    assert_eq!(pending.as_array().unwrap().len(), 2, "{pending}");
    let first = pending[0]["id"].as_str().unwrap();
    file_cli(&db, &["approval-deny", "ws1", first, "--approver", "ann"]);
    file_cli(
        &db,
        &[
            "pii-set",
            "ws1",
            r#"{"default_action":"record","actions":{"EMAIL":"redact"}}"#,
        ],
    );
    file_cli(&db, &["kill", "ws1", "context", "ctx-old"]);
    file_cli(
        &db,
        &["settings-set", "ws1", "--allow-extension", "urn:x:a"],
    );

    // The copy, verified by counts.
    let url = cluster.url();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["admin", "migrate-store", "--from"])
        .arg(&db)
        .args(["--to", &url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counts: std::collections::HashMap<String, (u64, u64)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 3 {
                return None;
            }
            Some((f[0].to_owned(), (f[1].parse().ok()?, f[2].parse().ok()?)))
        })
        .collect();
    for table in [
        "workspaces",
        "agents",
        "api_keys",
        "workspace_settings",
        "gov_policies",
        "gov_pii_rules",
        "gov_kills",
        "workspace_card_trust",
        "card_signing_keys",
        "task_owners",
        "gateway_sends",
        "gov_approvals",
        "gov_approval_requests",
        "audit",
        "admin_audit",
    ] {
        let (lite, pg) = counts
            .get(table)
            .copied()
            .unwrap_or_else(|| panic!("{table}: {text}"));
        assert!(lite > 0, "{table} copied nothing: {text}");
        assert_eq!(lite, pg, "{table}: {text}");
    }
    assert!(text.contains("every count matches"), "{text}");
    // A second copy into the same database is refused.
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["admin", "migrate-store", "--from"])
        .arg(&db)
        .args(["--to", &url])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));

    // A gateway on the URL serves the migrated registry, tasks, audit and governance.
    let run = tempfile::tempdir().unwrap();
    let b = replica(&url, run.path());
    let (s, page) = rpc(&b.base, "count", &key, list(50, "")).await;
    assert_eq!(s, 200, "{page}");
    assert!(page["result"]["totalSize"].as_u64().unwrap() >= 3, "{page}");
    let (s, sent) = rpc(&b.base, "count", &key, send10("new")).await;
    assert_eq!(s, 200, "{sent}");
    assert!(
        sent.get("result").is_some(),
        "the migrated key and agent: {sent}"
    );
    let (s, audit) = admin(&b.base, "GET", "/admin/audit?workspace=ws1", Value::Null).await;
    assert_eq!(s, 200);
    let audit = audit
        .as_str()
        .map(str::to_owned)
        .unwrap_or(audit.to_string());
    assert!(
        audit.contains("old 0") || audit.lines().count() >= 5,
        "{audit}"
    );
    let (s, approvals) = admin(
        &b.base,
        "GET",
        "/admin/workspaces/ws1/approvals",
        Value::Null,
    )
    .await;
    assert_eq!(s, 200, "{approvals}");
    assert!(approvals.to_string().contains("denied"), "{approvals}");
    let (s, keys) = admin(&b.base, "GET", "/admin/signing-keys", Value::Null).await;
    assert_eq!(s, 200);
    assert!(keys.to_string().contains("kid"), "{keys}");
    let (s, admin_audit) = admin(&b.base, "GET", "/admin/admin-audit", Value::Null).await;
    assert_eq!(s, 200);
    assert!(
        admin_audit.to_string().contains("signing-keys"),
        "{admin_audit}"
    );
}
