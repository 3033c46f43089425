//! The official Python SDK clients (a2a-sdk 1.x and 0.3.x, venvs made by `interop/setup_venvs.py`)
//! run as drivers (`interop/clients/*`, see `interop/README.md`): a JSON scenario in, one JSON
//! line per op out. Run directly, so this crate needs no dependency on the conformance crate.
//! Also a loopback webhook receiver for push deliveries.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::io::AsyncWriteExt;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn ensure_venvs() {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        std::process::Command::new(
            std::env::var("A2A_INTEROP_PYTHON").unwrap_or_else(|_| "python3".into()),
        )
        .arg(root().join("interop/setup_venvs.py"))
        .current_dir(root())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
    });
    assert!(ok, "interop/setup_venvs.py failed");
}

/// Run the client driver of venv `sdk` ("sdk1" | "sdk03" | "sdk103", the last with the 1.x
/// driver) with `scenario`; returns its JSON lines.
pub async fn run(
    sdk: &str,
    url: &str,
    binding: &str,
    version: Option<&str>,
    scenario: Value,
) -> Vec<Value> {
    tokio::task::spawn_blocking(ensure_venvs).await.unwrap();
    let script = if sdk == "sdk103" { "sdk1" } else { sdk };
    let mut cmd = tokio::process::Command::new(root().join(format!(".venv/{sdk}/bin/python")));
    cmd.arg(root().join(format!("interop/clients/{script}_client.py")))
        .args(["--url", url, "--binding", binding])
        .current_dir(root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(v) = version {
        cmd.args(["--protocol-version", v]);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(scenario.to_string().as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(180),
        child.wait_with_output(),
    )
    .await
    .expect("client driver timed out")
    .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("non-JSON line {l:?}")))
        .collect();
    assert!(
        !lines.is_empty(),
        "no output; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

/// The closing record of op `i`.
pub fn op(lines: &[Value], i: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["i"] == i && l.get("event").is_none())
        .unwrap_or_else(|| panic!("no op {i} in {lines:?}"))
}

/// The events streamed by op `i`.
pub fn events(lines: &[Value], i: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["i"] == i)
        .filter_map(|l| l.get("event"))
        .collect()
}

/// The task state in a result or event of either SDK ("" when there is none).
pub fn st(v: &Value) -> String {
    let s = v
        .pointer("/task/status/state")
        .or_else(|| v.pointer("/statusUpdate/status/state"))
        .or_else(|| v.pointer("/status/state"));
    s.and_then(Value::as_str).unwrap_or("").to_string()
}

/// What a webhook received: (headers, JSON body) per POST.
pub type Hits = Arc<Mutex<Vec<(axum::http::HeaderMap, Value)>>>;

/// A webhook receiver on loopback: `POST {url}` answers 200 and records the delivery.
pub struct Receiver {
    pub hits: Hits,
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn receiver() -> Receiver {
    let hits: Hits = Arc::default();
    let h = hits.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let h = h.clone();
                async move {
                    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    h.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((headers, v));
                    axum::http::StatusCode::OK
                }
            },
        ),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(l, app).await.unwrap();
    });
    Receiver { hits, url, task }
}

impl Receiver {
    /// The deliveries so far (a copy, read under the lock).
    pub fn hits(&self) -> Vec<(axum::http::HeaderMap, Value)> {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The deliveries carrying `token`, once one of them satisfies `done` (bounded wait: up to
    /// `tries` times 10 ms; deliveries are asynchronous, and CI machines are loaded).
    pub async fn wait(&self, token: &str, tries: u32, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        for _ in 0..tries {
            let got: Vec<Value> = self
                .hits()
                .into_iter()
                .filter(|(h, _)| {
                    h.get("x-a2a-notification-token")
                        .is_some_and(|t| t == token)
                })
                .map(|(_, b)| b)
                .collect();
            if got.iter().any(&done) {
                return got;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("no final delivery for {token}: {:?}", self.hits());
    }
}
