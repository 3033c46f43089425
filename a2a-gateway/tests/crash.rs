//! `kill -9` of the `a2a-gateway serve` binary under load, on its SQLite file: every hop that
//! reached the peer has an audit record (the intent record is committed before the peer call),
//! the interrupted hops are reported as `incomplete`, and the restarted gateway serves on the
//! same file.

use std::collections::HashSet;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_agent::{AgentCard, AgentConfig, AgentServer, Reply, handler_fn};
use a2a_gateway::store::Store;
use serde_json::{Value, json};

use crate::common;
use common::{seed_file, spawn_serve};

/// A peer that remembers the message id of every call that reached it.
async fn peer(seen: Arc<Mutex<HashSet<String>>>) -> a2a_agent::ServerHandle {
    let card = AgentCard::builder("p", "Remembers", "1.0.0").build();
    let handler = handler_fn(move |ctx: a2a_agent::RequestContext| {
        let seen = seen.clone();
        async move {
            if let Ok(mut s) = seen.lock() {
                s.insert(ctx.message().message_id.clone());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
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

struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_gateway(db: &std::path::Path) -> (Gateway, String) {
    let (child, base) = spawn_serve(db, &[]);
    (Gateway(child), base)
}

fn send_body(mid: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_load_leaves_no_hop_without_an_audit_record() {
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let peer = peer(seen.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    let (mut gw, base) = start_gateway(&db);
    let url = format!("{base}/a2a/p");
    let http = reqwest::Client::new();
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));

    // Eight callers send one message after another until the gateway dies.
    let mut loops = Vec::new();
    for c in 0..8 {
        let (http, url, key, acked) = (http.clone(), url.clone(), key.clone(), acked.clone());
        loops.push(tokio::spawn(async move {
            for i in 0.. {
                let mid = format!("m-{c}-{i}");
                let r = http
                    .post(&url)
                    .bearer_auth(&key)
                    .header("content-type", "application/json")
                    .header("A2A-Version", "1.0")
                    .body(send_body(&mid))
                    .timeout(Duration::from_secs(10))
                    .send()
                    .await;
                let Ok(r) = r else { break };
                let Ok(v) = r.json::<Value>().await else {
                    break;
                };
                if v["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED" {
                    acked.lock().unwrap().push(mid);
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().unwrap().len() < 60 {
        assert!(Instant::now() < deadline, "the load did not reach the peer");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // kill -9, in the middle of hops.
    let st = Command::new("kill")
        .args(["-KILL", &gw.0.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let _ = gw.0.wait();
    for l in loops {
        let _ = tokio::time::timeout(Duration::from_secs(15), l).await;
    }
    // Calls still on their way to the peer when the gateway died may land just after.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seen_n = seen.lock().unwrap().len();
    let acked = acked.lock().unwrap().clone();
    assert!(!acked.is_empty());

    // The restarted gateway opens the same file and serves.
    let (mut gw2, base2) = start_gateway(&db);
    let r = http
        .post(format!("{base2}/a2a/p"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(send_body("after-restart"))
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );

    // The restarted gateway's own hop may still be queued for its audit writer (its outcome is
    // in the intent journal): a graceful stop writes it before the file is read.
    let st = Command::new("kill")
        .args(["-TERM", &gw2.0.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let _ = gw2.0.wait();
    let store = Store::open(&db).unwrap();
    let records = store.audit(Some("ws"), None, 0, 100_000).unwrap();
    let hops: Vec<Value> = records
        .iter()
        .map(a2a_gateway::store::audit_to_value)
        .filter(|r| r["operation"] == "message/send")
        .collect();
    let incomplete = hops.iter().filter(|r| r["outcome"] == "incomplete").count();
    let complete = hops.len() - incomplete;
    eprintln!(
        "peer saw {seen_n}, acked {}, audit hops {} ({incomplete} incomplete)",
        acked.len(),
        hops.len()
    );
    // Every hop that reached the peer (+ the one after the restart) has a record.
    assert!(
        hops.len() > seen_n,
        "{} audit records for {seen_n} hops that reached the peer (+1 after restart)",
        hops.len()
    );
    // Incomplete records: the hops cut by the kill (at most one per caller) and completions
    // still in the audit writer's queue (one batch); every other acknowledged send is complete.
    assert!(
        incomplete <= 16,
        "{incomplete} incomplete records for 8 callers"
    );
    assert!(
        complete + 16 > acked.len(),
        "{complete} completed records for {} acknowledged sends",
        acked.len()
    );
    peer.shutdown().await;
}
