//! The official Python SDK clients (1.x over 1.0 JSON-RPC, 0.3.x over 0.3 JSON-RPC) register push
//! configs on our agent, and our agent delivers to a webhook receiver on loopback.
//! The drivers are run directly (as in `tests/interop.rs`), see `interop/README.md`.

mod common;

use a2a_agent::{AgentCard, AgentConfig, Reply, handler_fn};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::io::AsyncWriteExt;

fn root() -> PathBuf {
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

/// Run the `sdk` ("sdk1" | "sdk03") client driver with `scenario`; returns its JSON lines.
async fn run(
    sdk: &str,
    url: &str,
    binding: &str,
    version: Option<&str>,
    scenario: Value,
) -> Vec<Value> {
    tokio::task::spawn_blocking(ensure_venvs).await.unwrap();
    let mut cmd = tokio::process::Command::new(root().join(format!(".venv/{sdk}/bin/python")));
    cmd.arg(root().join(format!("interop/clients/{sdk}_client.py")))
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

type Hits = Arc<Mutex<Vec<(http::HeaderMap, Value)>>>;

async fn receiver() -> (Hits, String, tokio::task::JoinHandle<()>) {
    let hits: Hits = Arc::default();
    let h = hits.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: http::HeaderMap, body: axum::body::Bytes| {
            let h = h.clone();
            async move {
                let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
                h.lock().unwrap().push((headers, v));
                http::StatusCode::OK
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    let j = tokio::spawn(async move {
        axum::serve(l, app).await.unwrap();
    });
    (hits, url, j)
}

async fn agent() -> a2a_agent::ServerHandle {
    let card = AgentCard::from_json(json!({
        "name": "push-interop", "description": "push", "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    }))
    .unwrap();
    let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
        ctx.emit("working on it").await;
        Ok(Reply::text(format!("echo {}", ctx.text())))
    });
    let cfg = AgentConfig {
        validate_auth: false,
        allow_local_webhook_urls: true,
        push_retry_backoff_ms: 5,
        ..AgentConfig::default()
    };
    common::start_with(card, h, cfg).await
}

async fn wait_final(hits: &Hits, done: impl Fn(&Value) -> bool) -> Vec<(http::HeaderMap, Value)> {
    for _ in 0..1000 {
        let v = hits.lock().unwrap().clone();
        if v.iter().any(|(_, b)| done(b)) {
            return v;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("no final delivery: {:?}", hits.lock().unwrap());
}

#[tokio::test]
async fn sdk1_client_registers_push_and_receives_stream_responses() {
    let (hits, hook, j) = receiver().await;
    let srv = agent().await;
    let lines = run(
        "sdk1",
        srv.url(),
        "jsonrpc",
        None,
        json!([
            {"op": "send", "text": "hello", "pushUrl": hook, "pushToken": "sdk-token"},
            {"op": "push_set", "taskId": "$last.task_id", "url": hook, "id": "second"},
            {"op": "push_get", "taskId": "$0.task_id", "id": "second"},
            {"op": "push_list", "taskId": "$0.task_id"},
        ]),
    )
    .await;
    let all = wait_final(&hits, |b| {
        b.pointer("/statusUpdate/status/state") == Some(&json!("TASK_STATE_COMPLETED"))
    })
    .await;
    for (h, b) in &all {
        assert_eq!(h["content-type"], "application/a2a+json");
        assert_eq!(h["x-a2a-notification-token"], "sdk-token");
        assert!(
            b.get("statusUpdate").is_some() || b.get("artifactUpdate").is_some(),
            "{b}"
        );
    }
    assert!(
        all.iter()
            .any(|(_, b)| b.pointer("/statusUpdate/status/state")
                == Some(&json!("TASK_STATE_WORKING"))),
        "{all:?}"
    );
    let ok = |i: usize| {
        lines
            .iter()
            .filter(|l| l.get("event").is_none())
            .nth(i)
            .cloned()
            .unwrap()
    };
    assert_eq!(ok(1)["ok"], true, "{lines:?}");
    assert_eq!(ok(2)["ok"], true, "{lines:?}");
    assert!(ok(2).to_string().contains("second"), "{lines:?}");
    assert_eq!(ok(3)["ok"], true, "{lines:?}");
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn sdk03_client_registers_push_and_receives_03_tasks() {
    let (hits, hook, j) = receiver().await;
    let srv = agent().await;
    let lines = run(
        "sdk03",
        srv.url(),
        "jsonrpc",
        None,
        json!([
            {"op": "send", "text": "hello", "pushUrl": hook, "pushToken": "t03"},
            {"op": "push_get", "taskId": "$last.task_id"},
        ]),
    )
    .await;
    let all = wait_final(&hits, |b| b["status"]["state"] == "completed").await;
    for (h, b) in &all {
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["x-a2a-notification-token"], "t03");
        assert_eq!(b["kind"], "task", "{b}");
    }
    let get = lines
        .iter()
        .filter(|l| l.get("event").is_none())
        .nth(1)
        .cloned()
        .unwrap();
    assert_eq!(get["ok"], true, "{lines:?}");
    assert!(get.to_string().contains(&hook), "{get}");
    srv.shutdown().await;
    j.abort();
}
