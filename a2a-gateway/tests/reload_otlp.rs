//! SIGHUP changes the gateway's OTLP trace export live (issue 34, item 5): started without an
//! endpoint, a reload naming one makes the next hop's spans arrive there; a reload naming a
//! second receiver moves the export, and the first gets nothing sent after the move; a
//! keep-alive connection opened before the reloads keeps serving.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::otlp::{Receiver, terminate};
use crate::common::{ok_peer, seed_file, spawn_gateway_cmd};

/// The next stderr line containing `needle` within 10 s (lines before it are passed over).
fn line_with(lines: &std::sync::mpsc::Receiver<String>, needle: &str) -> String {
    let end = Instant::now() + Duration::from_secs(10);
    let mut seen = vec![];
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(l) if l.contains(needle) => return l,
            Ok(l) => seen.push(l),
            Err(e) => {
                seen.push(format!("({e})"));
                break;
            }
        }
    }
    panic!("no stderr line with {needle:?}: {seen:#?}");
}

fn hangup(child: &std::process::Child) {
    // SAFETY: kill(2) on the pid of a child this test started.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) },
        0
    );
}

/// A SendMessage through the gateway carrying trace `trace`: the HTTP status.
async fn send(base: &str, key: &str, trace: &str) -> u16 {
    let resp = reqwest::Client::new()
        .post(format!("{base}/a2a/p"))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
             "parts": [{"text": "hi"}]}}}),
        )
        .send()
        .await
        .unwrap();
    resp.status().as_u16()
}

/// One keep-alive `GET /healthz` on `conn`: whether it answered 200.
fn healthz_ok(conn: &mut std::net::TcpStream) -> bool {
    conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).unwrap();
        if n == 0 {
            return false;
        }
        got.extend_from_slice(&buf[..n]);
    }
    // The small body arrives with the head; let it drain before the next request.
    std::thread::sleep(Duration::from_millis(50));
    conn.set_nonblocking(true).unwrap();
    while conn.read(&mut buf).is_ok_and(|n| n > 0) {}
    conn.set_nonblocking(false).unwrap();
    String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200")
}

fn settings(otlp: Option<&str>) -> String {
    let mut s = "listen = \"127.0.0.1:0\"\ndev_mode = true\n".to_owned();
    if let Some(url) = otlp {
        s.push_str(&format!("otlp_endpoint = \"{url}\"\n"));
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_turns_the_otlp_export_on_and_moves_it() {
    let (first, second) = (Receiver::http().await, Receiver::http().await);
    let peer = ok_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let file = dir.path().join("gateway.toml");
    let key = seed_file(&db, "p", peer.url());
    std::fs::write(&file, settings(None)).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.arg("serve")
        .arg("--config")
        .arg(&file)
        .arg("--database")
        .arg(&db)
        // Spans leave the batch processor every 100 ms (not 5 s).
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    for k in [
        "RUST_LOG",
        "A2A_GATEWAY_LOG_LEVEL",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SERVICE_NAME",
    ] {
        cmd.env_remove(k);
    }
    let (mut child, base, lines) = spawn_gateway_cmd(cmd);
    let mut conn = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(healthz_ok(&mut conn));
    let t0 = "1af7651916cd43dd8448eb211c80319c";
    assert_eq!(send(&base, &key, t0).await, 200);

    std::fs::write(&file, settings(Some(&first.url))).unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded: ");
    assert!(
        l.contains("applied: otlp_endpoint") && l.contains("need a restart: none"),
        "{l}"
    );
    let t1 = "2af7651916cd43dd8448eb211c80319c";
    assert_eq!(send(&base, &key, t1).await, 200);
    let spans = first.wait_for(t1, "a2a.hop").await;
    assert!(
        spans.iter().all(|s| s.trace_id != t0),
        "a hop before the export was on: {spans:#?}"
    );
    assert!(spans.iter().all(|s| s.service == "a2a-gateway"));

    std::fs::write(&file, settings(Some(&second.url))).unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded: ");
    assert!(l.contains("applied: otlp_endpoint"), "{l}");
    let t2 = "3af7651916cd43dd8448eb211c80319c";
    assert_eq!(send(&base, &key, t2).await, 200);
    second.wait_for(t2, "a2a.hop").await;
    assert!(
        first.spans().iter().all(|s| s.trace_id != t2),
        "the first receiver got a span sent after the move"
    );
    // A bad protocol: refused, the export stays where it is.
    std::fs::write(
        &file,
        format!(
            "{}otlp_protocol = \"http/json\"\n",
            settings(Some(&first.url))
        ),
    )
    .unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reload refused: ");
    assert!(l.contains("http/json"), "{l}");
    let t3 = "4af7651916cd43dd8448eb211c80319c";
    assert_eq!(send(&base, &key, t3).await, 200);
    second.wait_for(t3, "a2a.hop").await;
    assert!(
        healthz_ok(&mut conn),
        "the connection opened first still serves"
    );
    assert!(terminate(&mut child).success());
    assert!(first.spans().iter().all(|s| s.trace_id != t3));
    peer.shutdown().await;
}
