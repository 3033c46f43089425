//! ListTasks through the gateway (issue 40): a page of 50 of a workspace's tasks at a peer that
//! holds only that workspace's tasks, then the same page once the peer also holds OTHER tasks
//! made directly at it (not through the gateway; default 100,000) and the gateway also holds as
//! many records of another workspace's tasks, all of them newer than the workspace's. Printed:
//! the latency (median, p99) before, with the peer's tasks, and with both, and the ratio; as a
//! control, the page's 50 GetTask calls made straight to the peer (what the peer's own size
//! costs); and the store's page query alone (`Store::task_records`). Everything runs in this
//! one process (peer, gateway, client), with the gateway binary's allocator.
//!
//! `cargo run --release -p a2ars-gateway --example list_bench -- [OTHER] [OWN]`
//! (OWN: the workspace's tasks, default 200).

// The allocator of the `a2a-gateway` binary (with the `jemalloc` feature, on by default).
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::time::{Duration, Instant};

use a2a_gateway::config::Config;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::{Agent, Store, TaskQuery};
use futures::StreamExt;
use serde_json::{Value, json};

fn send(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}]}}})
}

fn uuid() -> String {
    format!("{:032x}", fastrand::u128(..))
}

/// Median and p99 of `runs` calls of `f`.
async fn measure<F, Fut>(runs: usize, mut f: F) -> (Duration, Duration)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..5 {
        f().await;
    }
    let mut lat = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f().await;
        lat.push(t.elapsed());
    }
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    (p(0.5), p(0.99))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let other: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let own: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(200);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    // Room for every task (the agent's in-memory store keeps 10,000 by default).
    let cfg = a2a_agent::AgentConfig {
        validate_auth: false,
        memory_store_cap: other + own + 1000,
        ..a2a_agent::AgentConfig::default()
    };
    let agent = a2a_agent::AgentServer::new(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
    )
    .config(cfg)
    .serve(listener)
    .await
    .unwrap();
    let dir = std::env::temp_dir().join(format!("a2a-gw-list-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Store::open(&dir.join("bench.db")).unwrap();
    for ws in ["a", "b"] {
        store.create_workspace(ws, ws).unwrap();
        store
            .upsert_agent(&Agent {
                workspace_id: ws.into(),
                agent_id: "echo".into(),
                endpoint: agent.url().to_owned(),
                credential: None,
                skills: None,
                pinned_card_key: None,
            })
            .unwrap();
    }
    let (_, key) = store.create_key("a", &[], None, None).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        listen: listener.local_addr().unwrap(),
        dev_mode: true,
        ..Config::default()
    };
    let gw = Gateway::new(config, store.clone())
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    let via = format!("{}/a2a/echo", gw.base_url());
    let http = reqwest::Client::new();
    let post = |url: String, body: Value, key: Option<String>| {
        let http = http.clone();
        async move {
            let mut r = http.post(url).header("A2A-Version", "1.0").json(&body);
            if let Some(k) = key {
                r = r.bearer_auth(k);
            }
            let v: Value = r.send().await.unwrap().json().await.unwrap();
            assert!(v.get("error").is_none(), "{v}");
            v
        }
    };
    // The workspace's own tasks, through the gateway.
    futures::stream::iter(0..own)
        .map(|_| post(via.clone(), send("hello"), Some(key.clone())))
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    let list = || {
        let call = post(
            via.clone(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 50}}),
            Some(key.clone()),
        );
        async move {
            let v = call.await;
            assert_eq!(v["result"]["totalSize"], own, "{v}");
            assert_eq!(
                v["result"]["tasks"].as_array().map(Vec::len),
                Some(50.min(own))
            );
        }
    };
    let endpoint = agent.url().to_owned();
    // The control: the same 50 GetTask calls straight to the peer, 8 at a time as the gateway
    // makes them (what the peer's own size costs).
    let listed: Vec<String> = post(
        via.clone(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 50}}),
        Some(key.clone()),
    )
    .await["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    let gets = || {
        let calls: Vec<_> = listed
            .iter()
            .map(|id| {
                post(
                    endpoint.clone(),
                    json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}}),
                    None,
                )
            })
            .collect();
        async move {
            futures::stream::iter(calls)
                .buffer_unordered(8)
                .collect::<Vec<_>>()
                .await;
        }
    };
    let page = || {
        let q = TaskQuery {
            limit: 51,
            ..TaskQuery::default()
        };
        let (rows, total) = store.task_records(&endpoint, "a", "echo", &q).unwrap();
        assert_eq!((rows.len(), total), (51.min(own), own as u64));
    };
    let store_page = |runs: usize| {
        page();
        let mut lat: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                page();
                t.elapsed()
            })
            .collect();
        lat.sort();
        lat[lat.len() / 2]
    };
    let empty = measure(200, list).await;
    let peer_empty = measure(200, gets).await;
    let store_empty = store_page(2000);

    // OTHER tasks made directly at the peer, and as many records of workspace b, all newer.
    let started = Instant::now();
    futures::stream::iter(0..other)
        .map(|_| post(endpoint.clone(), send("hello"), None))
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    let made = started.elapsed();
    let peer_only = measure(200, list).await;
    let now_ns = time::OffsetDateTime::now_utc().unix_timestamp_nanos() as i64;
    store
        .execute_raw(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {other})
             INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at,
               context_id, state, status_at, open, checked_at)
             SELECT '{endpoint}', 'other-' || i, 'b', 'echo', 0, 'ctx-' || (i % 100),
               'TASK_STATE_COMPLETED', {now_ns} + i, 0, 0 FROM n"
        ))
        .unwrap();
    let full = measure(200, list).await;
    let peer_full = measure(200, gets).await;
    let store_full = store_page(2000);

    println!(
        "ListTasks pageSize=50 of the workspace's {own} tasks; {other} other tasks made at the peer in {:.1} s\n",
        made.as_secs_f64()
    );
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
    println!(
        "| measurement | only the workspace's tasks | + {other} other tasks at the peer | + {other} other workspace records | ratio (last / first) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    println!(
        "| gateway ListTasks, median / p99 | {:.2} / {:.2} ms | {:.2} / {:.2} ms | {:.2} / {:.2} ms | {:.2} |",
        ms(empty.0),
        ms(empty.1),
        ms(peer_only.0),
        ms(peer_only.1),
        ms(full.0),
        ms(full.1),
        ratio(empty.0, full.0)
    );
    println!(
        "| control: the page's 50 GetTask straight to the peer (8 at a time), median / p99 | {:.2} / {:.2} ms | | {:.2} / {:.2} ms | {:.2} |",
        ms(peer_empty.0),
        ms(peer_empty.1),
        ms(peer_full.0),
        ms(peer_full.1),
        ratio(peer_empty.0, peer_full.0)
    );
    println!(
        "| store page query and count (`Store::task_records`), median | {:.1} µs | | {:.1} µs | {:.2} |",
        store_empty.as_secs_f64() * 1e6,
        store_full.as_secs_f64() * 1e6,
        ratio(store_empty, store_full)
    );
    gw.shutdown().await;
    agent.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
