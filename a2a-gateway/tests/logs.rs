//! The binary's logs: `--log-format json` writes one JSON object per line, `--log-level`
//! filters them (`warn,access=info`: the access lines alone), each hop has one access line with
//! its workspace, agent, operation, versions, status, decision, latency and trace id; text
//! logs into a pipe carry no ANSI colour codes.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{ok_peer, seed_file, spawn_gateway};

/// Starts `serve` with `extra` flags, stderr piped; returns the child, its base URL and the
/// receiver of its stderr lines.
fn serve(
    db: &std::path::Path,
    extra: &[&str],
) -> (
    std::process::Child,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    let mut args: Vec<&std::ffi::OsStr> = ["serve", "--listen", "127.0.0.1:0", "--dev"]
        .iter()
        .map(|a| a.as_ref())
        .collect();
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    args.extend(["--database".as_ref(), db.as_os_str()]);
    spawn_gateway(&args)
}

async fn hop(base: &str, key: &str) -> String {
    let resp = reqwest::Client::new()
        .post(format!("{base}/a2a/p"))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.split('-').nth(1))
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_access_lines_one_per_hop_with_their_fields() {
    let peer = ok_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    let (mut child, base, lines) = serve(
        &db,
        &["--log-format", "json", "--log-level", "warn,access=info"],
    );
    let trace = hop(&base, &key).await;
    let refused = reqwest::Client::new()
        .post(format!("{base}/a2a/nobody"))
        .bearer_auth(&key)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}))
        .send()
        .await
        .unwrap();
    assert!(refused.status().is_client_error() || refused.status() == 200);
    let mut access = Vec::new();
    while access.len() < 2 {
        let l = lines
            .recv_timeout(Duration::from_secs(10))
            .expect("two access lines");
        // Log lines only (the binary's own notes to stderr, such as a blank line, are not).
        if !l.starts_with('{') {
            continue;
        }
        let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        if v["target"] == "access" {
            access.push(v);
        }
    }
    let f = &access[0]["fields"];
    assert_eq!(f["message"], "hop");
    assert_eq!(f["workspace"], "ws");
    assert_eq!(f["agent"], "p");
    assert_eq!(f["operation"], "message/send");
    assert_eq!(f["caller_version"], "1.0");
    assert_eq!(f["status"], 200);
    assert_eq!(f["decision"], "allowed");
    assert_eq!(f["code"], "ok");
    assert!(f["latency_ms"].is_u64(), "{f}");
    assert!(
        f["peer_version"].as_str().is_some_and(|v| !v.is_empty()),
        "{f}"
    );
    if !trace.is_empty() {
        assert_eq!(f["trace_id"], trace.as_str());
    }
    let g = &access[1]["fields"];
    assert_eq!(g["agent"], "nobody");
    assert_eq!(g["decision"], "refused");
    assert_ne!(g["code"], "ok");
    // The filter: nothing below warn from other targets.
    let _ = child.kill();
    let _ = child.wait();
    for l in lines.try_iter().filter(|l| l.starts_with('{')) {
        let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(
            v["target"] == "access" || v["level"] == "WARN" || v["level"] == "ERROR",
            "{l}"
        );
    }
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_logs_into_a_pipe_have_no_colour_codes() {
    let peer = ok_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    let (mut child, base, lines) = serve(&db, &["--log-level", "info"]);
    hop(&base, &key).await;
    let line = loop {
        let l = lines
            .recv_timeout(Duration::from_secs(10))
            .expect("an access line");
        if l.contains("hop") && l.contains("workspace") {
            break l;
        }
    };
    assert!(!line.contains('\u{1b}'), "{line:?}");
    let _ = child.kill();
    let _ = child.wait();
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["serve", "--log-format", "yaml"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("text or json"));
    peer.shutdown().await;
}
