//! A soak through the release gateway binary: `cargo xtask soak --minutes N` builds the release
//! binaries and runs this. Two a2a-agent peers (the echo agent, and a program that takes 30 s
//! so that its tasks can be cancelled and subscribed to), one workspace, and W workers (default
//! 8) that each loop over a fixed mix: SendMessage 40 %, SendStreamingMessage read to its end
//! 20 %, ListTasks (page of 50) 10 %, send-then-CancelTask 15 %, send-then-SubscribeToTask (read
//! the first event, then hang up) then CancelTask 15 %. Every 10 s it prints the gateway's RSS,
//! open fds and the database file and WAL sizes; at the end the bytes and rows of each table
//! (SQLite's `dbstat`), the count, errors and p50/p99 of each operation, and exits 1 (keeping its
//! temporary folder, logs and database) on any error, when the listing p99 is 100 ms or more, or
//! when RSS, fds, the database file or file + WAL grew by more than a quarter between the second
//! and the last quarter of the run.
//!
//! `cargo run --release -p a2ars-gateway --example soak -- --minutes N [--workers W]
//!  [--bin-dir target/release] [-- extra gateway serve flags]`

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The listing p99 the soak holds (milliseconds).
const LIST_P99_MS: f64 = 100.0;

/// How much the last quarter's maximum may exceed the second quarter's (RSS, fds, database).
const SLACK: f64 = 1.25;

const KINDS: [&str; 5] = ["send", "stream", "list", "cancel", "subscribe"];

#[derive(Default)]
struct Tally {
    lat: [Vec<Duration>; 5],
    errors: [u64; 5],
    examples: Vec<String>,
}

impl Tally {
    fn record(&mut self, kind: usize, t: Duration, r: Result<(), String>) {
        self.lat[kind].push(t);
        if let Err(e) = r {
            self.errors[kind] += 1;
            if self.examples.len() < 10 {
                self.examples.push(format!("{}: {e}", KINDS[kind]));
            }
        }
    }
}

/// A figure the soak watches, and how it is read off a sample.
type Rule = (&'static str, fn(&Sample) -> u64);

struct Sample {
    at: Duration,
    rss_kib: u64,
    fds: usize,
    db_bytes: u64,
    wal_bytes: u64,
    ops: usize,
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Starts a server binary and waits for its `LISTENING <url>` line.
fn start(bin: &Path, args: &[&str], log: &Path) -> (Child, String) {
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("log file"))
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
            _ => panic!(
                "{} exited before listening; see {}",
                bin.display(),
                log.display()
            ),
        }
    };
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

fn admin(gw: &Path, db: &Path, args: &[&str]) -> String {
    let out = Command::new(gw)
        .arg("admin")
        .arg("--database")
        .arg(db)
        .args(args)
        .output()
        .expect("admin command");
    assert!(
        out.status.success(),
        "admin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| {
                    l.strip_prefix("VmRSS:")
                        .map(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
                })
                .flatten()
        })
        .unwrap_or(0)
}

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// The database file alone, without its write-ahead log.
fn db_bytes(db: &Path) -> u64 {
    std::fs::metadata(db).map(|m| m.len()).unwrap_or(0)
}

/// The write-ahead log beside the database.
fn wal_bytes(db: &Path) -> u64 {
    let mut p = db.as_os_str().to_owned();
    p.push("-wal");
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Bytes per table and index (SQLite's `dbstat`) and rows per table, largest first: where the
/// file's pages went.
fn table_sizes(db: &Path) -> Vec<String> {
    let Ok(c) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return vec!["(database not readable)".into()];
    };
    let sizes: Vec<(String, i64)> = c
        .prepare("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()
        })
        .unwrap_or_default();
    let free: i64 = c
        .query_row("PRAGMA freelist_count", [], |r| r.get(0))
        .unwrap_or(0);
    let page: i64 = c
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap_or(0);
    let mut out = vec![format!("free pages: {} bytes", free * page)];
    for (name, bytes) in sizes.into_iter().take(15) {
        let rows: Option<i64> = c
            .query_row(&format!("SELECT COUNT(*) FROM \"{name}\""), [], |r| {
                r.get(0)
            })
            .ok();
        out.push(match rows {
            Some(n) => format!("{name}: {bytes} bytes, {n} rows"),
            None => format!("{name}: {bytes} bytes"),
        });
    }
    out
}

struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Client {
    async fn rpc(&self, agent: &str, method: &str, params: Value) -> Result<Value, String> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let resp = self
            .http
            .post(format!("{}/a2a/{agent}", self.base))
            .bearer_auth(&self.key)
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        let status = resp.status();
        let v: Value = resp
            .json()
            .await
            .map_err(|e| format!("{method}: {status}: {e}"))?;
        match v.get("result") {
            Some(r) if status.is_success() => Ok(r.clone()),
            _ => Err(format!("{method}: {status}: {}", cut(&v.to_string()))),
        }
    }

    /// Posts a streaming method and reads `limit` events (all of them when None).
    async fn stream(
        &self,
        agent: &str,
        method: &str,
        params: Value,
        limit: Option<usize>,
    ) -> Result<usize, String> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut resp = self
            .http
            .post(format!("{}/a2a/{agent}", self.base))
            .bearer_auth(&self.key)
            .header("A2A-Version", "1.0")
            .header("Accept", "text/event-stream")
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("{method}: {}", resp.status()));
        }
        let mut events = 0;
        let mut text = String::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| format!("{method}: {e}"))? {
            text.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(i) = text.find("\n\n") {
                let ev: String = text.drain(..i + 2).collect();
                if let Some(data) = ev.lines().find_map(|l| l.strip_prefix("data:")) {
                    if data.contains("\"error\"") {
                        return Err(format!("{method}: {}", cut(data)));
                    }
                    events += 1;
                }
                if limit.is_some_and(|n| events >= n) {
                    return Ok(events);
                }
            }
        }
        if events == 0 {
            return Err(format!("{method}: no event"));
        }
        Ok(events)
    }
}

fn cut(s: &str) -> String {
    s.chars().take(300).collect()
}

fn message(text: &str, immediately: bool) -> Value {
    json!({"message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
        "parts": [{"text": text}]}, "configuration": {"returnImmediately": immediately}})
}

fn task_id(r: &Value) -> Result<String, String> {
    r.pointer("/task/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("no task in {}", cut(&r.to_string())))
}

async fn one(c: &Client, kind: usize) -> Result<(), String> {
    match kind {
        0 => c
            .rpc("echo", "SendMessage", message("soak hello", false))
            .await
            .map(|_| ()),
        1 => c
            .stream(
                "echo",
                "SendStreamingMessage",
                message("soak stream", false),
                None,
            )
            .await
            .map(|_| ()),
        2 => {
            let r = c.rpc("echo", "ListTasks", json!({"pageSize": 50})).await?;
            r.get("tasks")
                .and_then(Value::as_array)
                .map(|_| ())
                .ok_or_else(|| "ListTasks: no tasks".into())
        }
        3 => {
            let id = task_id(
                &c.rpc("slow", "SendMessage", message("cancel me", true))
                    .await?,
            )?;
            let r = c.rpc("slow", "CancelTask", json!({"id": id})).await?;
            match r.pointer("/status/state").and_then(Value::as_str) {
                Some("TASK_STATE_CANCELED") => Ok(()),
                other => Err(format!("CancelTask: state {other:?}")),
            }
        }
        _ => {
            let id = task_id(
                &c.rpc("slow", "SendMessage", message("watch me", true))
                    .await?,
            )?;
            c.stream("slow", "SubscribeToTask", json!({"id": id}), Some(1))
                .await?;
            c.rpc("slow", "CancelTask", json!({"id": id}))
                .await
                .map(|_| ())
        }
    }
}

fn pick(n: u64) -> usize {
    match n % 20 {
        0..=7 => 0,
        8..=11 => 1,
        12..=13 => 2,
        14..=16 => 3,
        _ => 4,
    }
}

fn pct(v: &mut [Duration], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    let i = ((v.len() as f64 * q) as usize).min(v.len() - 1);
    v[i].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let minutes: f64 = arg(&args, "--minutes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let workers: usize = arg(&args, "--workers")
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let bins = PathBuf::from(arg(&args, "--bin-dir").unwrap_or_else(|| "target/release".into()));
    let extra: Vec<String> = args
        .iter()
        .skip_while(|a| *a != "--")
        .skip(1)
        .cloned()
        .collect();
    let dir = std::env::temp_dir().join(format!("a2a-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (gwbin, agbin) = (bins.join("a2a-gateway"), bins.join("a2a-agent"));

    let (mut echo, echo_url) = start(
        &agbin,
        &["serve", "--echo", "--port", "0"],
        &dir.join("echo.log"),
    );
    let (mut slow, slow_url) = start(
        &agbin,
        &[
            "serve",
            "--port",
            "0",
            "--name",
            "slow",
            "--validate-auth",
            "false",
            "--exec",
            "sleep 30; echo late",
        ],
        &dir.join("slow.log"),
    );
    let db = dir.join("gw.db");
    admin(&gwbin, &db, &["workspace-create", "soak"]);
    admin(&gwbin, &db, &["agent-add", "soak", "echo", &echo_url]);
    admin(&gwbin, &db, &["agent-add", "soak", "slow", &slow_url]);
    let out = admin(&gwbin, &db, &["key-create", "soak"]);
    let key = out
        .split_whitespace()
        .find(|w| w.starts_with("a2agw_"))
        .expect("a key in key-create's output")
        .to_string();
    let mut serve = vec!["serve", "--listen", "127.0.0.1:0", "--dev", "--database"];
    let dbs = db.to_string_lossy().into_owned();
    serve.push(&dbs);
    serve.extend(extra.iter().map(String::as_str));
    let (mut gw, base) = start(&gwbin, &serve, &dir.join("gateway.log"));
    let pid = gw.id();
    println!(
        "soak: {minutes} min, {workers} workers, gateway {base} (pid {pid}), logs in {}",
        dir.display()
    );

    let client = Arc::new(Client {
        http: reqwest::Client::new(),
        base,
        key,
    });
    let tally = Arc::new(Mutex::new(Tally::default()));
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(minutes * 60.0);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (client, tally) = (client.clone(), tally.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = w as u64 * 7;
            while Instant::now() < until {
                let kind = pick(n);
                n += 1;
                let t = Instant::now();
                let r = one(&client, kind).await;
                if let Ok(mut g) = tally.lock() {
                    g.record(kind, t.elapsed(), r);
                }
            }
        }));
    }
    let mut samples = Vec::new();
    while Instant::now() < until {
        tokio::time::sleep(
            Duration::from_secs(10).min(until.saturating_duration_since(Instant::now())),
        )
        .await;
        let ops = tally
            .lock()
            .map(|g| g.lat.iter().map(Vec::len).sum())
            .unwrap_or(0);
        let s = Sample {
            at: started.elapsed(),
            rss_kib: rss_kib(pid),
            fds: fds(pid),
            db_bytes: db_bytes(&db),
            wal_bytes: wal_bytes(&db),
            ops,
        };
        println!(
            "soak: {:>6.0} s  {:>8} ops  rss {:>7} KiB  fds {:>4}  db {:>10} bytes  wal {:>10} bytes",
            s.at.as_secs_f64(),
            s.ops,
            s.rss_kib,
            s.fds,
            s.db_bytes,
            s.wal_bytes
        );
        samples.push(s);
    }
    for t in tasks {
        let _ = t.await;
    }
    for c in [&mut gw, &mut echo, &mut slow] {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let _ = c.wait();
    }
    for line in table_sizes(&db) {
        println!("soak: db: {line}");
    }
    let mut g = tally
        .lock()
        .map(|mut g| std::mem::take(&mut *g))
        .unwrap_or_default();
    let secs = started.elapsed().as_secs_f64();
    let mut errors = 0;
    println!("\n| operation | count | errors | p50 ms | p99 ms |\n|---|---|---|---|---|");
    for (i, k) in KINDS.iter().enumerate() {
        errors += g.errors[i];
        let n = g.lat[i].len();
        let (p50, p99) = (pct(&mut g.lat[i], 0.5), pct(&mut g.lat[i], 0.99));
        println!("| {k} | {n} | {} | {p50:.1} | {p99:.1} |", g.errors[i]);
    }
    let total: usize = g.lat.iter().map(Vec::len).sum();
    println!(
        "\nsoak: {total} operations in {secs:.0} s ({:.0}/s), {errors} errors",
        total as f64 / secs
    );
    for e in &g.examples {
        println!("soak: error: {e}");
    }
    let mut failed = errors > 0;
    // Listings answer from the gateway's own records: their p99 stays under the bound.
    if let Some(i) = KINDS.iter().position(|k| *k == "list") {
        let p99 = pct(&mut g.lat[i], 0.99);
        let ok = p99 < LIST_P99_MS;
        println!(
            "soak: list p99 {p99:.1} ms (bound {LIST_P99_MS} ms): {}",
            if ok { "ok" } else { "OVER" }
        );
        failed |= !ok;
    }
    // Flat: the last quarter's maxima against the second quarter's (the first one warms caches
    // up and fills the database to its retention bound).
    let q = samples.len() / 4;
    if q >= 1 {
        let (second, last) = (&samples[q..2 * q], &samples[samples.len() - q..]);
        let max = |s: &[Sample], f: fn(&Sample) -> u64| s.iter().map(f).max().unwrap_or(0);
        let rules: [Rule; 4] = [
            ("rss KiB", |s| s.rss_kib),
            ("fds", |s| s.fds as u64),
            ("db file bytes", |s| s.db_bytes),
            ("db file + wal bytes", |s| s.db_bytes + s.wal_bytes),
        ];
        for (name, f) in rules {
            let (a, b) = (max(second, f), max(last, f));
            let flat = (b as f64) <= (a as f64) * SLACK + 64.0;
            println!(
                "soak: {name}: second quarter max {a}, last quarter max {b}: {}",
                if flat { "flat" } else { "GREW" }
            );
            failed |= !flat;
        }
    } else {
        println!("soak: too short to judge growth (fewer than 4 samples)");
    }
    if failed {
        println!("soak: logs and database kept in {}", dir.display());
        std::process::exit(1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
