//! Echo SendMessage through the gateway vs directly to the same Rust peer (a2a-agent echo),
//! same load generator, same run; and stream events/s both ways.
//!
//! `cargo run --release -p a2ars-gateway --example bench -- [REQUESTS]`

use std::time::{Duration, Instant};

use a2a_gateway::config::Config;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::{Agent, Store};
use serde_json::json;

fn body(stream: bool) -> String {
    json!({"jsonrpc":"2.0","id":"1","method": if stream {"SendStreamingMessage"} else {"SendMessage"},
        "params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text": if stream {"stream hello"} else {"hello"}}]}}})
    .to_string()
}

async fn run(
    url: &str,
    key: Option<&str>,
    conns: usize,
    total: usize,
) -> (f64, Duration, Duration) {
    let http = reqwest::Client::new();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let http = http.clone();
        let url = url.to_owned();
        let key = key.map(str::to_owned);
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            for _ in 0..total / conns {
                let t = Instant::now();
                let mut r = http
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("A2A-Version", "1.0")
                    .body(body(false));
                if let Some(k) = &key {
                    r = r.bearer_auth(k);
                }
                let resp = r.send().await.unwrap();
                assert!(resp.status().is_success());
                let _ = resp.bytes().await.unwrap();
                lat.push(t.elapsed());
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let secs = started.elapsed().as_secs_f64();
    all.sort();
    let p = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    (all.len() as f64 / secs, p(0.50), p(0.99))
}

async fn stream_events(url: &str, key: Option<&str>, n: usize) -> f64 {
    let http = reqwest::Client::new();
    let started = Instant::now();
    let mut events = 0usize;
    for _ in 0..n {
        let mut r = http
            .post(url)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body(true));
        if let Some(k) = key {
            r = r.bearer_auth(k);
        }
        let text = r.send().await.unwrap().text().await.unwrap();
        events += text.lines().filter(|l| l.starts_with("data:")).count();
    }
    events as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let total: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent = a2a_agent::AgentServer::new(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
    )
    .validate_auth(false)
    .serve(listener)
    .await
    .unwrap();
    let dir = std::env::temp_dir().join(format!("a2a-gw-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Store::open(&dir.join("bench.db")).unwrap();
    store.create_workspace("b", "bench").unwrap();
    store
        .upsert_agent(&Agent {
            workspace_id: "b".into(),
            agent_id: "echo".into(),
            endpoint: agent.url().to_owned(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .unwrap();
    let (_, key) = store.create_key("b", &[], None, None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        listen: listener.local_addr().unwrap(),
        dev_mode: true,
        ..Config::default()
    };
    let gw = Gateway::new(config, store)
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    let via = format!("{}/a2a/echo", gw.base_url());
    let direct = agent.url().to_owned();
    // warm up (card cache, connections)
    run(&via, Some(&key), 1, 50).await;
    run(&direct, None, 1, 50).await;
    println!(
        "| connections | direct req/s | gateway req/s | ratio | direct p50 / p99 | gateway p50 / p99 |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for conns in [1, 16] {
        let (d, dp50, dp99) = run(&direct, None, conns, total).await;
        let (g, gp50, gp99) = run(&via, Some(&key), conns, total).await;
        println!(
            "| {conns} | {d:.0} | {g:.0} | {:.2} | {:.2} / {:.2} ms | {:.2} / {:.2} ms |",
            g / d,
            dp50.as_secs_f64() * 1e3,
            dp99.as_secs_f64() * 1e3,
            gp50.as_secs_f64() * 1e3,
            gp99.as_secs_f64() * 1e3
        );
    }
    let sd = stream_events(&direct, None, 200).await;
    let sg = stream_events(&via, Some(&key), 200).await;
    println!(
        "\nstream events/s (sequential streams of the echo `stream` reply): direct {sd:.0}, gateway {sg:.0} ({:.2})",
        sg / sd
    );
    gw.shutdown().await;
    agent.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
