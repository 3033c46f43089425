//! Issue 39: PII scanning of a large adversarial request runs off the async workers, so that
//! `/healthz` keeps answering on a one-worker runtime while it runs; and a request with more
//! text to scan than `max_scanned_bytes` is refused before any scan.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::gov::admin;
use crate::common::*;
use a2a_gateway::errors::Version;
use serde_json::{Value, json};

const MIB: usize = 1 << 20;

/// A text of private key headers without END lines (quadratic before issue 39).
fn pem_headers(bytes: usize) -> String {
    "-----BEGIN RSA PRIVATE KEY-----\n".repeat(bytes / 32)
}

/// A 1.0 SendMessage with `text` in a data part (data parts are not held to
/// `max_message_chars`; they are scanned).
fn send_data(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {"message": {
        "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
        "parts": [{"text": "see data"}, {"data": {"blob": text}}]}}})
}

async fn post(env: &Env, body: String) -> (u16, Value) {
    let resp = env
        .http
        .post(env.url("/a2a/echo"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn rules(env: &Env, rules: Value) {
    let (s, b) = admin(env, "PUT", "/admin/workspaces/ws1/pii", Some(rules)).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_6_mib_adversarial_request_leaves_healthz_answering_on_one_worker() {
    let env = env_with(Version::V10, |c| c.limits.max_scanned_bytes = 8 * MIB).await;
    rules(&env, json!({"actions": {"SECRET": "block"}})).await;
    let body = send_data(&pem_headers(6 * MIB)).to_string();

    let done = Arc::new(AtomicBool::new(false));
    let probe = {
        let (done, http, url) = (done.clone(), env.http.clone(), env.url("/healthz"));
        tokio::spawn(async move {
            let mut times = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let start = Instant::now();
                let resp = http.get(&url).send().await.unwrap();
                assert_eq!(resp.status(), 200);
                times.push(start.elapsed());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            times
        })
    };
    let start = Instant::now();
    let (status, b) = post(&env, body).await;
    let took = start.elapsed();
    done.store(true, Ordering::Relaxed);
    let times = probe.await.unwrap();
    // The scan ran: the headers are a secret, and secrets are blocked.
    assert_eq!(gw_code(&b), "a2a_pii_blocked", "{status} {b}");
    let slow = times
        .iter()
        .filter(|t| **t >= Duration::from_millis(100))
        .count();
    let worst = times.iter().max().copied().unwrap_or_default();
    eprintln!(
        "request {took:?}; {} healthz probes, {slow} of 100 ms or more, slowest {worst:?}",
        times.len()
    );
    assert!(
        times.len() >= 5,
        "healthz was probed only {} times",
        times.len()
    );
    // Scanned on the worker, one probe waits for the whole scan (about the whole request).
    // Off the worker, every probe answers within 100 ms, but for at most one: the one in
    // flight while the worker reads the 6 MiB body as JSON (any request of that size costs
    // it, scanned or not; in a debug build it can pass 100 ms on a loaded machine).
    assert!(
        slow <= 1 && worst < took / 2,
        "healthz: {slow} probes of 100 ms or more, slowest {worst:?}, while the request took \
         {took:?}"
    );
    env.stop().await;
}

#[tokio::test]
async fn more_text_to_scan_than_the_limit_is_refused_before_the_scan() {
    let env = env_with(Version::V10, |c| c.limits.max_scanned_bytes = MIB).await;
    // Without PII rules nothing is scanned, so nothing is refused for it.
    let big = "word ".repeat(MIB / 5 + 10);
    let (_, b) = post(&env, send_data(&big).to_string()).await;
    assert!(b.get("result").is_some(), "{b}");
    rules(&env, json!({"default_action": "record"})).await;
    let (_, b) = post(&env, send_data(&big).to_string()).await;
    assert_eq!(gw_code(&b), "a2a_message_too_large", "{b}");
    assert!(b.to_string().contains("to check for PII"), "{b}");
    // Under the limit it goes through.
    let (_, b) = post(&env, send_data("mail ann@example.org").to_string()).await;
    assert!(b.get("result").is_some(), "{b}");
    env.stop().await;
}
