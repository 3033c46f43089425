//! The `a2a-gateway serve` binary on SIGTERM / SIGINT: stop accepting, let calls run for the
//! grace period, then every open stream ends with an `a2a_shutting_down` error event, every
//! waiting blocking call is answered with it, and the process exits 0.

use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use a2a_agent::{AgentCard, AgentConfig, AgentServer, Reply, handler_fn};
use serde_json::{Value, json};

use crate::common;
use common::{seed_file, spawn_serve};

/// A peer whose every task takes 30 s; `calls` counts the messages that reached it.
async fn slow_peer(calls: Arc<AtomicUsize>) -> a2a_agent::ServerHandle {
    let card = AgentCard::builder("slow", "Takes its time", "1.0.0")
        .streaming(true)
        .build();
    let handler = handler_fn(move |_ctx: a2a_agent::RequestContext| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(Reply::text("done"))
        }
    });
    let cfg = AgentConfig {
        validate_auth: false,
        shutdown_grace: a2a_agent::config::Dur::from_millis(10),
        ..AgentConfig::default()
    };
    AgentServer::new(card, handler)
        .config(cfg)
        .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .await
        .unwrap()
}

fn body(method: &str, i: usize) -> String {
    json!({"jsonrpc": "2.0", "id": i, "method": method, "params": {"message":
        {"messageId": format!("m-{i}"), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
    .to_string()
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("a2a-gateway did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn run(signal: &str, streams: usize, blocking: usize) {
    let calls = Arc::new(AtomicUsize::new(0));
    let peer = slow_peer(calls.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "slow", peer.url());
    let (mut child, base) = spawn_serve(&db, &["--shutdown-grace", "1s"]);
    let http = reqwest::Client::new();
    let url = format!("{base}/a2a/slow");
    let mut tasks = Vec::new();
    for i in 0..streams + blocking {
        let method = if i < streams {
            "SendStreamingMessage"
        } else {
            "SendMessage"
        };
        let req = http
            .post(&url)
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body(method, i));
        tasks.push(tokio::spawn(async move {
            match req.send().await {
                Ok(r) => r.text().await.unwrap_or_default(),
                Err(e) => format!("transport error: {e}"),
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls.load(Ordering::SeqCst) < streams + blocking {
        assert!(Instant::now() < deadline, "calls did not reach the peer");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let sent = Instant::now();
    let st = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    for (i, t) in tasks.into_iter().enumerate() {
        let text = tokio::time::timeout(Duration::from_secs(15), t)
            .await
            .expect("call not answered")
            .unwrap();
        let last: Value = if i < streams {
            let data: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .collect();
            serde_json::from_str(data.last().copied().unwrap_or("null").trim()).unwrap()
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text.clone()))
        };
        assert!(
            last["error"].to_string().contains("shutting down"),
            "call {i}: {last}"
        );
    }
    let status = wait_exit(&mut child, Duration::from_secs(12));
    assert!(status.success(), "exit status {status:?}");
    assert!(sent.elapsed() >= Duration::from_millis(900));
    peer.shutdown().await;
}

#[tokio::test]
async fn sigterm_ends_streams_and_answers_waiting_calls_then_exits_0() {
    run("-TERM", 4, 4).await;
}

#[tokio::test]
async fn sigint_is_handled_the_same_way() {
    run("-INT", 2, 2).await;
}

/// `--workers N` sizes the runtime that serves requests (the setting `workers`; the binary
/// prints the runtime's worker count as `WORKERS n`); the gateway answers either way and still
/// stops on SIGTERM with exit 0.
#[tokio::test]
async fn workers_sizes_the_runtime() {
    let peer = slow_peer(Arc::new(AtomicUsize::new(0))).await;
    for n in ["1", "3"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("gw.db");
        seed_file(&db, "slow", peer.url());
        let (mut child, base, line) = common::spawn_serve_until(&db, &["--workers", n], "WORKERS ");
        assert_eq!(line, format!("WORKERS {n}"));
        let card = reqwest::get(format!("{base}/a2a/slow/.well-known/agent-card.json"))
            .await
            .unwrap();
        assert!(card.status().as_u16() < 500, "{}", card.status());
        let st = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        assert!(wait_exit(&mut child, Duration::from_secs(12)).success());
    }
    peer.shutdown().await;
}
