//! The `a2a-agent` binary on SIGTERM / SIGINT: it stops accepting, lets tasks run for the grace
//! period, then every open stream gets a final event and every blocking send an answer, and the
//! process exits 0.

use crate::common;

use common::{Bin, bin};
use serde_json::{Value, json};
use std::process::Child;
use std::time::{Duration, Instant};

fn start(grace_ms: u64) -> Bin {
    let grace = grace_ms.to_string();
    bin(
        &[
            "--exec",
            "sleep 20",
            "--no-validate-auth",
            "--shutdown-grace-ms",
            &grace,
        ],
        &[],
    )
}

fn msg(i: usize) -> Value {
    json!({"message": {"messageId": format!("m-{i}"), "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
}

fn rpc(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

async fn post(http: &reqwest::Client, url: &str, body: String) -> reqwest::Response {
    http.post(format!("{url}/"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body)
        .send()
        .await
        .expect("request")
}

/// Polls ListTasks until `n` tasks exist (every send has reached the agent).
async fn wait_tasks(http: &reqwest::Client, url: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v: Value = post(http, url, rpc("ListTasks", json!({})))
            .await
            .json()
            .await
            .unwrap_or(Value::Null);
        let have = v["result"]["tasks"].as_array().map_or(0, Vec::len);
        if have >= n {
            return;
        }
        assert!(Instant::now() < deadline, "only {have} of {n} tasks: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("a2a-agent did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn run(signal: libc::c_int, streams: usize, blocking: usize) {
    let mut agent = start(1000);
    let http = reqwest::Client::new();
    let url = agent.url.clone();
    let mut stream_tasks = Vec::new();
    for i in 0..streams {
        let (http, url) = (http.clone(), url.clone());
        stream_tasks.push(tokio::spawn(async move {
            let resp = post(&http, &url, rpc("SendStreamingMessage", msg(i))).await;
            let text = resp.text().await.unwrap_or_default();
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .collect::<Vec<Value>>()
        }));
    }
    let mut blocking_tasks = Vec::new();
    for i in 0..blocking {
        let (http, url) = (http.clone(), url.clone());
        blocking_tasks.push(tokio::spawn(async move {
            let resp = post(&http, &url, rpc("SendMessage", msg(100 + i))).await;
            resp.json::<Value>().await.unwrap_or(Value::Null)
        }));
    }
    wait_tasks(&http, &url, streams + blocking).await;
    let sent = Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(agent.child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0);
    for t in stream_tasks {
        let events = tokio::time::timeout(Duration::from_secs(15), t)
            .await
            .expect("stream not ended")
            .expect("join");
        let last = events.last().cloned().unwrap_or(Value::Null);
        let state = last["result"]["statusUpdate"]["status"]["state"]
            .as_str()
            .or(last["result"]["task"]["status"]["state"].as_str());
        assert_eq!(state, Some("TASK_STATE_FAILED"), "last event {last}");
    }
    for t in blocking_tasks {
        let v = tokio::time::timeout(Duration::from_secs(15), t)
            .await
            .expect("blocking send not answered")
            .expect("join");
        let state = v["result"]["task"]["status"]["state"].as_str();
        assert_eq!(state, Some("TASK_STATE_FAILED"), "answer {v}");
    }
    let status = wait_exit(&mut agent.child, Duration::from_secs(12));
    assert!(status.success(), "exit status {status:?}");
    // The tasks were given the grace period before they failed.
    assert!(sent.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn sigterm_ends_streams_answers_blocking_sends_and_exits_0() {
    run(libc::SIGTERM, 4, 4).await;
}

#[tokio::test]
async fn sigint_is_handled_the_same_way() {
    run(libc::SIGINT, 2, 2).await;
}
