//! SIGHUP reloads the binary's configuration file (issue 34, item 5): a changed limit and log
//! level apply to the next request, a connection opened before the reload keeps serving, a
//! setting that needs a restart (`listen`) is reported and keeps its running value, and a file
//! that does not parse is refused with the old settings kept.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{ok_peer, seed_file, spawn_gateway};

fn settings(max_chars: usize, log_level: &str, listen: &str) -> String {
    format!(
        "listen = \"{listen}\"\ndev_mode = true\nlog_level = \"{log_level}\"\n\n[limits]\nmax_message_chars = {max_chars}\n"
    )
}

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
    let ok = std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// A SendMessage with `text`: the HTTP status and the body.
async fn send(base: &str, key: &str, text: &str) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}/a2a/p"))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]}}}))
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

fn refused_as_too_large(b: &Value) -> bool {
    b["error"]["data"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(std::iter::once(&b["error"]["data"]))
        .any(|d| d.to_string().contains("a2a_message_too_large"))
}

/// One keep-alive `GET /healthz` on `conn`: the status line.
fn healthz(conn: &mut std::net::TcpStream) -> String {
    conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    // Headers and the small body arrive together; read until the blank line and the body.
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "connection closed: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let len: usize = text
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let head = text.find("\r\n\r\n").unwrap() + 4;
    let mut body = got.len() - head;
    while body < len {
        body += conn.read(&mut buf).unwrap();
    }
    text.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_applies_live_settings_reports_the_rest_and_refuses_a_bad_file() {
    let peer = ok_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let file = dir.path().join("gateway.toml");
    let key = seed_file(&db, "p", peer.url());
    std::fs::write(&file, settings(5, "warn", "127.0.0.1:0")).unwrap();
    let (mut child, base, lines) = spawn_gateway(&[
        "serve".as_ref(),
        "--log-format".as_ref(),
        "json".as_ref(),
        "--config".as_ref(),
        file.as_os_str(),
        "--database".as_ref(),
        db.as_os_str(),
    ]);
    let addr = base.trim_start_matches("http://").to_owned();

    let (s, b) = send(&base, &key, "hello world").await;
    assert!(refused_as_too_large(&b), "{s} {b}");
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(healthz(&mut conn).contains("200"));

    // A larger limit, access lines on, and a new listen address (needs a restart).
    std::fs::write(&file, settings(100, "warn,access=info", "127.0.0.1:1")).unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded");
    assert!(
        l.contains("applied: limits, log_level") && l.contains("need a restart: listen"),
        "{l}"
    );
    let (s, b) = send(&base, &key, "hello world").await;
    assert_eq!(s, 200, "{b}");
    assert!(b.get("result").is_some(), "{b}");
    let access = line_with(&lines, "\"target\":\"access\"");
    assert!(access.contains("\"status\":200"), "{access}");
    // The connection made before the reload still serves.
    assert!(healthz(&mut conn).contains("200"));

    // A file that does not parse: refused, the running settings stay (limit 100).
    std::fs::write(&file, "[limits]\nmax_message_chars = \"many\"\n").unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reload refused");
    assert!(l.contains("max_message_chars"), "{l}");
    let (s, b) = send(&base, &key, &"x".repeat(50)).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = send(&base, &key, &"x".repeat(150)).await;
    assert!(refused_as_too_large(&b), "{s} {b}");
    assert!(child.try_wait().unwrap().is_none(), "the gateway exited");
    assert!(healthz(&mut conn).contains("200"));

    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    peer.shutdown().await;
}

/// `config sample` lists every setting (a new setting without a flag or comment fails it) and
/// is a file the gateway reads, with the defaults.
#[test]
fn the_sample_names_every_setting_and_reads_back() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["config", "sample"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for key in a2a_gateway::reload::LIVE {
        assert!(
            text.contains(&format!("{key} =")) || text.contains(&format!("[{key}]")),
            "{key}"
        );
    }
    // Every setting's line, uncommented, reads back as the defaults (an unset one is shown as
    // `""`, left commented).
    let live: String = text
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(r)
                if (r.starts_with('[')
                    && r.ends_with(']')
                    && r[1..r.len() - 1]
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '_'))
                    || r.split_once(" = ").is_some_and(|(k, v)| {
                        v != "\"\"" && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    }) =>
            {
                r
            }
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(live.contains("\npeer_timeout = \"30s\"\n"), "{live}");
    let read = a2a_gateway::config::Config::from_toml_str(&live).unwrap();
    assert_eq!(read, a2a_gateway::config::Config::default());
}
