//! Idempotent sends in the serving process (issue 11): claims in memory, completed records
//! through the intent journal. The rules of `idempotent_sends.rs` hold with the journal open,
//! and a completed send is still answered from its record after `kill -9` of the gateway.

use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_client::{Binding, ClientError, Version};
use a2a_types::error::ErrorKind;
use a2a_types::v1::SendMessageResponse;
use serde_json::{Value, json};

use crate::common::{env, seed_file, spawn_serve};
use crate::idempotent_sends::{OFFERED, caller, counting_peer, first_task_event, send, task_id};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_journal_open_a_retry_is_answered_from_the_first_send() {
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    env.store.open_intent_journal().unwrap();
    env.register("ws1", "count", peer.url(), None);
    for (i, (binding, version)) in OFFERED.into_iter().enumerate() {
        let what = format!("{binding:?} {version:?}");
        let c = Arc::new(caller(&env, &env.key, binding, version).await);
        let before = runs.load(Ordering::SeqCst);
        let id = format!("blocking-{i}");
        let first = task_id(c.send(send("work", &id)).await.unwrap());
        assert_eq!(task_id(c.send(send("work", &id)).await.unwrap()), first);
        // Once the writer committed the record, from the database.
        env.store.flush_audit();
        assert_eq!(task_id(c.send(send("work", &id)).await.unwrap()), first);
        assert_eq!(runs.load(Ordering::SeqCst), before + 1, "{what}: blocking");
        let id = format!("stream-{i}");
        let first = first_task_event(&c, send("work", &id)).await;
        assert_eq!(first_task_event(&c, send("work", &id)).await, first);
        assert_eq!(runs.load(Ordering::SeqCst), before + 2, "{what}: streaming");
        let id = format!("direct-{i}");
        let text = |r: SendMessageResponse| match r {
            SendMessageResponse::Message(m) => m.text(),
            other => panic!("{what}: expected a message: {other:?}"),
        };
        let first = text(c.send(send("direct", &id)).await.unwrap());
        assert_eq!(text(c.send(send("direct", &id)).await.unwrap()), first);
        env.store.flush_audit();
        assert_eq!(text(c.send(send("direct", &id)).await.unwrap()), first);
        match c.send(send("other work", &id)).await {
            Err(ClientError::A2a(e)) => assert_eq!(e.kind, ErrorKind::InvalidParams, "{what}"),
            other => panic!("{what}: expected InvalidParams: {other:?}"),
        }
        assert_eq!(runs.load(Ordering::SeqCst), before + 3, "{what}: direct");
        // Concurrent duplicates wait for the first: one peer call.
        let id = format!("concurrent-{i}");
        let sends = (0..8).map(|_| {
            let (c, id) = (c.clone(), id.clone());
            tokio::spawn(async move { task_id(c.send(send("slow", &id)).await.unwrap()) })
        });
        let ids: Vec<String> = futures::future::join_all(sends)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert!(ids.iter().all(|t| *t == ids[0]), "{what}: {ids:?}");
        assert_eq!(
            runs.load(Ordering::SeqCst),
            before + 4,
            "{what}: concurrent"
        );
    }
    // Another workspace's same messageId is its own send.
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "count", peer.url(), None);
    let two = caller(&env, &key2, Binding::JsonRpc, Version::V1).await;
    let before = runs.load(Ordering::SeqCst);
    task_id(two.send(send("work", "blocking-0")).await.unwrap());
    assert_eq!(runs.load(Ordering::SeqCst), before + 1);
    env.stop().await;
    peer.shutdown().await;
}

struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn rpc_send(http: &reqwest::Client, base: &str, key: &str, mid: &str, text: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]}}});
    http.post(format!("{base}/a2a/count"))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `kill -9` of the `serve` binary right after its answers (the records are in the journal,
/// maybe not yet in the database): the restarted gateway answers each repeat from its record,
/// without calling the peer again, and still refuses a different message under the same id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completed_sends_are_answered_from_their_records_after_kill_9() {
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "count", peer.url());
    let http = reqwest::Client::new();
    let (child, base) = spawn_serve(&db, &[]);
    let gw = Gateway(child);
    let mut tasks = Vec::new();
    for i in 0..5 {
        let v = rpc_send(&http, &base, &key, &format!("m{i}"), "work").await;
        tasks.push(
            v["result"]["task"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
        assert!(!tasks[i].is_empty(), "{v}");
    }
    let st = Command::new("kill")
        .args(["-KILL", &gw.0.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    drop(gw);
    assert_eq!(runs.load(Ordering::SeqCst), 5);

    let (child, base) = spawn_serve(&db, &[]);
    let _gw = Gateway(child);
    for (i, task) in tasks.iter().enumerate() {
        let v = rpc_send(&http, &base, &key, &format!("m{i}"), "work").await;
        assert_eq!(v["result"]["task"]["id"], task.as_str(), "{v}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 5, "the peer was called again");
    let v = rpc_send(&http, &base, &key, "m0", "other work").await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    peer.shutdown().await;
}
