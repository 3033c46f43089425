//! The console over many held requests (issue 39, item 8), through the gateway binary: a
//! policy rule holds N sends (default 1,000) of about M MiB each (default 16, the largest
//! request the gateway reads), an in-process echo agent behind it (it is never called). The
//! gateway is then restarted on the same database and logged in to; printed: its VmRSS and
//! VmHWM (peak) before and after L loads (default 20) of the workspaces page (`/console`), of
//! the approval queue (`/console/approvals`), of the admin API's list, then after one
//! approval's page (its whole request), with each page's median time.
//!
//! The sends are held in rounds of 50, after each of which this program checkpoints the WAL
//! (`PRAGMA wal_checkpoint(TRUNCATE)` from its own connection): the gateway checkpoints after
//! audit batches (every 512 audit rows), so without it the WAL grows by the held bytes of up to
//! a few hundred holds (about twice the disk).
//!
//! `cargo run --release -p a2ars-gateway --example held_bench -- [--held N] [--mib M]
//!  [--loads L] [--bin-dir target/release] [--dir DIR]`
//! (DIR: where the database goes, default a temporary directory; it is removed at the end).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use a2a_gateway::store::{Agent, Store};
use serde_json::{Value, json};

const TOKEN: &str = "held-bench-admin";
/// Holds between two checkpoints of the WAL.
const ROUND: usize = 50;

/// The gateway process, stopped however the program ends.
struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Starts the gateway and waits for its `LISTENING <url>` line.
fn start(bin: &Path, db: &Path) -> (Gateway, String) {
    let mut child = Command::new(bin)
        .args(["serve", "--listen", "127.0.0.1:0", "--dev"])
        .args(["--admin-token", TOKEN, "--approval-wait-secs", "0"])
        .arg("--database")
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let out = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(out));
    let url = loop {
        match lines.next() {
            Some(Ok(l)) => {
                if let Some(u) = l.strip_prefix("LISTENING ") {
                    break u.trim().to_string();
                }
            }
            _ => panic!("{} exited before listening", bin.display()),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (Gateway(child), url)
}

/// `VmRSS` and `VmHWM` of `pid`, in MiB.
fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (kib("VmRSS:") / 1024.0, kib("VmHWM:") / 1024.0)
}

fn db_bytes(db: &Path) -> u64 {
    a2a_gateway::store::task_retention::file_bytes(db)
}

/// A 1.0 SendMessage the policy holds, of `bytes` bytes about: one short text part and one
/// file part of base64 characters.
fn held_send(i: usize, bytes: usize) -> String {
    let raw_len = (bytes - 1024) / 4 * 4;
    let body = json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {
        "message": {"messageId": format!("held-{i}"), "role": "ROLE_USER",
            "parts": [{"text": format!("refund number {i}")},
                {"raw": "RAW", "mediaType": "application/octet-stream", "filename": "scan.bin"}]},
        "metadata": {"skill": "refund"},
        "configuration": {"returnImmediately": true}}});
    body.to_string()
        .replace("\"RAW\"", &format!("\"{}\"", "A".repeat(raw_len)))
}

/// Logs in to the console; the session cookie.
async fn login(http: &reqwest::Client, base: &str) -> String {
    let form = http
        .get(format!("{base}/console/login"))
        .send()
        .await
        .expect("login form");
    let pre = form
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("a2a_console_login="))
        .and_then(|v| v.split(';').next())
        .expect("login cookie")
        .to_owned();
    let html = form.text().await.expect("login form");
    let at = html.find(r#"name="csrf" value=""#).expect("csrf") + 19;
    let csrf = &html[at..at + html[at..].find('"').expect("csrf")];
    let r = http
        .post(format!("{base}/console/login"))
        .header(reqwest::header::COOKIE, &pre)
        .header(reqwest::header::ORIGIN, base)
        .form(&[("csrf", csrf), ("token", TOKEN)])
        .send()
        .await
        .expect("login");
    r.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("a2a_console_") && !v.starts_with("a2a_console_login"))
        .and_then(|v| v.split(';').next())
        .expect("session cookie")
        .to_owned()
}

/// `loads` GETs of `path` (with the cookie, or the admin token); the median time and the
/// last body's size.
async fn load(
    http: &reqwest::Client,
    base: &str,
    cookie: Option<&str>,
    path: &str,
    loads: usize,
) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..loads {
        let t = Instant::now();
        let mut req = http.get(format!("{base}{path}"));
        req = match cookie {
            Some(c) => req.header(reqwest::header::COOKIE, c),
            None => req.bearer_auth(TOKEN),
        };
        let r = req.send().await.expect("page");
        assert!(r.status().is_success(), "{path}: {}", r.status());
        size = r.bytes().await.expect("page").len();
        times.push(t.elapsed());
    }
    times.sort();
    (times[times.len() / 2], size)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let held: usize = arg(&args, "--held").map_or(1000, |v| v.parse().expect("--held N"));
    let mib: usize = arg(&args, "--mib").map_or(16, |v| v.parse().expect("--mib M"));
    let loads: usize = arg(&args, "--loads").map_or(20, |v| v.parse().expect("--loads L"));
    let bin = PathBuf::from(arg(&args, "--bin-dir").unwrap_or("target/release".into()))
        .join("a2a-gateway");
    let dir = match arg(&args, "--dir") {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .expect("a directory");
    let db = dir.path().join("gw.db");
    let peer = a2a_agent::AgentServer::new(
        a2a_agent::AgentCard::builder("echo", "Echo", "1.0.0").build(),
        a2a_agent::handler_fn(|_c: a2a_agent::RequestContext| async move {
            Ok(a2a_agent::Reply::direct_text("ok"))
        }),
    )
    .validate_auth(false)
    .serve(
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind"),
    )
    .await
    .expect("echo agent");
    let key = {
        let s = Store::open(&db).expect("database");
        s.create_workspace("ws", "W").expect("workspace");
        s.upsert_agent(&Agent {
            workspace_id: "ws".into(),
            agent_id: "echo".into(),
            endpoint: peer.url().to_owned(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .expect("agent");
        s.create_key("ws", &[], None, None).expect("key").1
    };
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let (gw, base) = start(&bin, &db);
    let rule = json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'",
        "decision": "approve"}]});
    let r = http
        .put(format!("{base}/admin/workspaces/ws/policy"))
        .bearer_auth(TOKEN)
        .json(&rule)
        .send()
        .await
        .expect("policy");
    assert!(r.status().is_success(), "policy: {}", r.status());
    let bytes = (mib << 20).min(16 << 20);
    let t = Instant::now();
    let wal = rusqlite::Connection::open(&db).expect("checkpoint connection");
    wal.busy_timeout(Duration::from_secs(30))
        .expect("busy timeout");
    for round in (0..held).step_by(ROUND) {
        let end = (round + ROUND).min(held);
        let mut calls = Vec::new();
        for worker in 0..2 {
            let (http, base, key) = (http.clone(), base.clone(), key.clone());
            calls.push(tokio::spawn(async move {
                for i in (round + worker..end).step_by(2) {
                    let r = http
                        .post(format!("{base}/a2a/echo"))
                        .bearer_auth(&key)
                        .header("A2A-Version", "1.0")
                        .header("content-type", "application/json")
                        .body(held_send(i, bytes))
                        .send()
                        .await
                        .expect("send");
                    let v: Value = r.json().await.expect("answer");
                    assert!(
                        v["result"]["task"]["metadata"]["approvalId"].is_string(),
                        "not held: {v}"
                    );
                }
            }));
        }
        for c in calls {
            c.await.expect("sender");
        }
        wal.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .expect("checkpoint");
    }
    drop(wal);
    println!(
        "held {held} sends of {:.1} MiB in {:.0} s; database and WAL {:.2} GiB",
        bytes as f64 / 1048576.0,
        t.elapsed().as_secs_f64(),
        db_bytes(&db) as f64 / f64::from(1 << 30)
    );
    drop(gw);
    let (gw, base) = start(&bin, &db);
    let pid = gw.0.id();
    let cookie = login(&http, &base).await;
    let (rss0, hwm0) = memory(pid);
    println!("restarted, logged in: VmRSS {rss0:.1} MiB, VmHWM {hwm0:.1} MiB");
    let pages = [
        (
            "workspaces page /console",
            Some(cookie.as_str()),
            "/console",
        ),
        (
            "approval queue /console/approvals",
            Some(cookie.as_str()),
            "/console/approvals",
        ),
        (
            "admin API list (100)",
            None,
            "/admin/workspaces/ws/approvals?state=pending",
        ),
    ];
    for (name, cookie, path) in pages {
        let (median, size) = load(&http, &base, cookie, path, loads).await;
        let (rss, hwm) = memory(pid);
        println!(
            "after {loads} loads of the {name}: VmRSS {rss:.1} MiB, VmHWM {hwm:.1} MiB \
             (median {:.1} ms, {size} bytes)",
            median.as_secs_f64() * 1000.0
        );
    }
    let r = http
        .get(format!(
            "{base}/admin/workspaces/ws/approvals?state=pending&limit=1"
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("list");
    let first: Value = r.json().await.expect("list");
    if let Some(id) = first[0]["id"].as_str() {
        let path = format!("/console/workspaces/ws/approvals/{id}");
        let (median, size) = load(&http, &base, Some(&cookie), &path, 1).await;
        let (rss, hwm) = memory(pid);
        println!(
            "after one approval's page (its whole request): VmRSS {rss:.1} MiB, VmHWM \
             {hwm:.1} MiB ({:.0} ms, {size} bytes)",
            median.as_secs_f64() * 1000.0
        );
    }
    drop(gw);
    peer.shutdown().await;
}
