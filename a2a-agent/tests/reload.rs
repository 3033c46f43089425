//! SIGHUP reloads the `a2a-agent` binary's configuration file (issue 34, item 5): a lowered
//! `max_payload_size` refuses a body that passed before, a connection opened before the reload
//! keeps serving, a setting that needs a restart (`base_path`) is reported and keeps its
//! running value, a file that does not parse is refused with the running settings kept, and
//! the OTLP trace export is turned on and pointed at another receiver without a restart.

use std::io::{BufRead, Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::otlp::{Receiver, terminate};

/// `a2a-agent serve --echo --config FILE` on 127.0.0.1:0; the child, its URL and its stderr
/// lines.
fn agent(file: &std::path::Path) -> (std::process::Child, String, mpsc::Receiver<String>) {
    let mut cmd = std::process::Command::new(crate::common::AGENT_BIN);
    cmd.args(["serve", "--echo", "--port", "0", "--config"])
        .arg(file)
        // Spans leave the batch processor every 100 ms (not 5 s).
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    for k in [
        "A2A_AGENT_LOG",
        "A2A_AGENT_LOG_LEVEL",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SERVICE_NAME",
    ] {
        cmd.env_remove(k);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let err = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let (utx, url) = mpsc::channel();
    std::thread::spawn(move || {
        for l in out.lines().map_while(Result::ok) {
            if let Some(u) = l.strip_prefix("LISTENING ") {
                let _ = utx.send(u.to_owned());
            }
        }
    });
    let url = url
        .recv_timeout(Duration::from_secs(20))
        .expect("no LISTENING line");
    (child, url, lines)
}

/// The next stderr line containing `needle` within 10 s (lines before it are passed over).
fn line_with(lines: &mpsc::Receiver<String>, needle: &str) -> String {
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

/// A SendMessage of `text` at `url` (with `traceparent` when given): the HTTP status.
async fn send(url: &str, text: &str, traceparent: Option<&str>) -> u16 {
    let mut req = reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
             "parts": [{"text": text}]}}}),
        );
    if let Some(tp) = traceparent {
        req = req.header("traceparent", tp);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap();
    if status == 200 {
        assert!(body.contains("\"result\""), "{body}");
    }
    status
}

/// Whether a SendMessage at `url` is refused because every slot is taken.
async fn busy(url: &str) -> bool {
    let resp = reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
             "parts": [{"text": "more"}]}}}),
        )
        .send()
        .await
        .unwrap();
    resp.text().await.unwrap().contains("server busy")
}

/// One keep-alive `GET /healthz` on `conn`: the status line.
fn healthz(conn: &mut std::net::TcpStream) -> String {
    conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: agent\r\n\r\n")
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let head = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "connection closed: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    };
    let text = String::from_utf8_lossy(&got[..head]).into_owned();
    let len: usize = text
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = got.len() - head;
    while body < len {
        body += conn.read(&mut buf).unwrap();
    }
    text.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_applies_live_settings_reports_the_rest_and_refuses_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent.toml");
    std::fs::write(&file, "max_payload_size = 100000\n").unwrap();
    let (mut child, url, lines) = agent(&file);
    let body = "x".repeat(3000);
    assert_eq!(send(&url, &body, None).await, 200);
    let addr = url.trim_start_matches("http://").to_owned();
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(healthz(&mut conn).contains("200"));

    // A lower payload limit (live) and a base path (needs a restart).
    std::fs::write(&file, "max_payload_size = 2000\nbase_path = \"/moved\"\n").unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded: ");
    assert!(
        l.contains("applied: max_payload_size") && l.contains("need a restart: base_path"),
        "{l}"
    );
    assert_eq!(
        send(&url, &body, None).await,
        413,
        "the lowered limit applies"
    );
    assert_eq!(send(&url, "small", None).await, 200, "still served at /");
    // The connection made before the reload still serves.
    assert!(healthz(&mut conn).contains("200"));

    // A file that does not parse: refused; the running settings stay (limit 2000).
    std::fs::write(&file, "max_payload_size = [\n").unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reload refused");
    assert!(l.contains("max_payload_size"), "{l}");
    assert_eq!(send(&url, "small", None).await, 200);
    assert_eq!(send(&url, &body, None).await, 413);
    assert!(child.try_wait().unwrap().is_none(), "the agent exited");
    assert!(healthz(&mut conn).contains("200"));

    // The limit raised again, beside the base path still waiting for a restart.
    std::fs::write(&file, "max_payload_size = 100000\nbase_path = \"/moved\"\n").unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded: ");
    assert!(
        l.contains("applied: max_payload_size") && l.contains("need a restart: base_path"),
        "{l}"
    );
    assert_eq!(send(&url, &body, None).await, 200);
    assert!(terminate(&mut child).success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_turns_the_otlp_export_on_and_moves_it() {
    let (first, second) = (Receiver::http().await, Receiver::http().await);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent.toml");
    std::fs::write(&file, "").unwrap();
    let (mut child, url, lines) = agent(&file);
    let t0 = "1bf92f3577b34da6a3ce929d0e0e4736";
    let tp = |t: &str| format!("00-{t}-00f067aa0ba902b7-01");
    assert_eq!(send(&url, "before", Some(&tp(t0))).await, 200);

    std::fs::write(&file, format!("otlp_endpoint = \"{}\"\n", first.url)).unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded: ");
    assert!(l.contains("applied: otlp_endpoint"), "{l}");
    let t1 = "2bf92f3577b34da6a3ce929d0e0e4736";
    assert_eq!(send(&url, "on", Some(&tp(t1))).await, 200);
    let spans = first.wait_for(t1, "a2a.request").await;
    assert!(
        spans.iter().all(|s| s.trace_id != t0),
        "a request before the export was on: {spans:#?}"
    );
    assert!(spans.iter().all(|s| s.service == "a2a-agent"));

    std::fs::write(
        &file,
        format!(
            "otlp_endpoint = \"{}\"\nservice_name = \"moved\"\n",
            second.url
        ),
    )
    .unwrap();
    hangup(&child);
    let l = line_with(&lines, "config reloaded: ");
    assert!(l.contains("applied: otlp_endpoint, service_name"), "{l}");
    let t2 = "3bf92f3577b34da6a3ce929d0e0e4736";
    assert_eq!(send(&url, "moved", Some(&tp(t2))).await, 200);
    let spans = second.wait_for(t2, "a2a.request").await;
    assert!(spans.iter().all(|s| s.service == "moved"), "{spans:#?}");
    assert!(
        first.spans().iter().all(|s| s.trace_id != t2),
        "the first receiver got a span sent after the move"
    );

    // Off again: nothing more is exported.
    std::fs::write(&file, "").unwrap();
    hangup(&child);
    line_with(&lines, "config reloaded: ");
    let t3 = "4bf92f3577b34da6a3ce929d0e0e4736";
    assert_eq!(send(&url, "off", Some(&tp(t3))).await, 200);
    assert!(terminate(&mut child).success());
    for rx in [&first, &second] {
        assert!(rx.spans().iter().all(|s| s.trace_id != t3));
    }
}

/// `ServerHandle::reload` (what the binary's SIGHUP calls) resizes the concurrency cap: a
/// second running task is refused at 1, admitted once the cap is 2, and refused again after the
/// cap went back to 1 (its slot taken away when a running task ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_resizes_the_concurrency_cap() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let (open, gate) = tokio::sync::watch::channel(false);
    let started = Arc::new(AtomicUsize::new(0));
    let seen = started.clone();
    let handler = a2a_agent::handler_fn(move |_c: a2a_agent::RequestContext| {
        let mut gate = gate.clone();
        let seen = seen.clone();
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = gate.wait_for(|open| *open).await;
            Ok(a2a_agent::Reply::text("done"))
        }
    });
    let boot = a2a_agent::AgentConfig {
        max_concurrent_tasks: 1,
        ..crate::common::open_config()
    };
    let server = crate::common::start_with(
        a2a_agent::AgentCard::identity("gate", "gate", "1.0.0"),
        handler,
        boot.clone(),
    )
    .await;
    let url = server.url().to_owned();
    let running = |n: usize| {
        let started = started.clone();
        async move {
            let end = Instant::now() + Duration::from_secs(10);
            while started.load(Ordering::SeqCst) < n {
                assert!(Instant::now() < end, "{n} tasks never started");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    let held = |url: String| tokio::spawn(async move { send(&url, "hold", None).await });

    let first = held(url.clone());
    running(1).await;
    assert!(busy(&url).await, "one slot, taken");

    let two = a2a_agent::AgentConfig {
        max_concurrent_tasks: 2,
        ..boot.clone()
    };
    let done = server.reload(&boot, &boot, &two).unwrap();
    assert_eq!(done.applied, vec!["max_concurrent_tasks"]);
    let second = held(url.clone());
    running(2).await;

    // Back to one while both run: the slot goes when a task ends.
    let one = boot.clone();
    assert_eq!(
        server.reload(&boot, &two, &one).unwrap().applied,
        vec!["max_concurrent_tasks"]
    );
    open.send(true).unwrap();
    assert_eq!(first.await.unwrap(), 200);
    assert_eq!(second.await.unwrap(), 200);
    open.send(false).unwrap();
    // The ended tasks' slots come back just after their answers: try until one is free.
    let end = Instant::now() + Duration::from_secs(10);
    let third = loop {
        let h = held(url.clone());
        tokio::time::sleep(Duration::from_millis(100)).await;
        if !h.is_finished() {
            break h;
        }
        assert!(Instant::now() < end, "no slot came back");
    };
    running(3).await;
    assert!(busy(&url).await, "one slot again");
    open.send(true).unwrap();
    assert_eq!(third.await.unwrap(), 200);
    server.shutdown().await;
}
