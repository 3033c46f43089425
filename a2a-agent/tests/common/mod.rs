#![allow(dead_code)]
//! Helpers for the integration tests: real servers on 127.0.0.1:0, a small JSON-RPC / REST
//! client over reqwest and an SSE reader, the `a2a-agent` binary on port 0 (`bin`), the SDK
//! client drivers (`sdk`), the reference agent of the SDK table (`reference`) and raw-TCP slow
//! clients (`slow`).

#[cfg(feature = "grpc")]
pub mod grpc_raw;
pub mod long_probe;
#[cfg(feature = "cli")]
pub mod otlp;
pub mod reference;
pub mod scrape;
pub mod sdk;
pub mod slow;
pub mod table;

use a2a_agent::{AgentCard, AgentConfig, AgentServer, Handler, ServerHandle};
use futures::StreamExt;
use serde_json::{Value, json};

/// The `a2a-agent` binary. Declared only with the `cli` feature the binary requires: cargo
/// still defines `CARGO_BIN_EXE_a2a-agent` when the binary is not built, so a test naming it
/// without the feature would run a stale binary, or none (the feature matrix's default set).
#[cfg(feature = "cli")]
pub const AGENT_BIN: &str = env!("CARGO_BIN_EXE_a2a-agent");

#[cfg(feature = "cli")]
/// `a2a-agent serve --port 0 ARGS` (stdout read for its `LISTENING` line); killed on drop.
pub struct Bin {
    pub child: std::process::Child,
    pub url: String,
}

#[cfg(feature = "cli")]
impl Drop for Bin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(feature = "cli")]
pub fn bin(args: &[&str], env: &[(&str, &str)]) -> Bin {
    use std::io::BufRead;
    let mut c = std::process::Command::new(AGENT_BIN);
    c.args(["serve", "--port", "0"]).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(u) = line.strip_prefix("LISTENING ") {
                let _ = tx.send(u.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("no LISTENING line");
    Bin { child, url }
}

pub fn open_config() -> AgentConfig {
    AgentConfig {
        validate_auth: false,
        ..AgentConfig::default()
    }
}

pub async fn start_with(card: AgentCard, handler: impl Handler, cfg: AgentConfig) -> ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(card, handler)
        .config(cfg)
        .serve(l)
        .await
        .unwrap()
}

pub async fn echo(cfg: AgentConfig) -> ServerHandle {
    start_with(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
        cfg,
    )
    .await
}

pub fn client() -> reqwest::Client {
    reqwest::Client::new()
}

pub fn msg(text: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

pub fn uuid() -> String {
    format!(
        "m-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A 1.0 JSON-RPC call; returns (HTTP status, body).
pub async fn rpc(url: &str, method: &str, params: Value) -> (u16, Value) {
    rpc_v(url, method, params, Some("1.0")).await
}

pub async fn rpc_v(url: &str, method: &str, params: Value, version: Option<&str>) -> (u16, Value) {
    let mut r = client()
        .post(format!("{url}/"))
        .header("content-type", "application/json")
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}));
    if let Some(v) = version {
        r = r.header("A2A-Version", v);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

pub async fn rest_post(url: &str, path: &str, body: Value) -> (u16, Value) {
    let resp = client()
        .post(format!("{url}{path}"))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

pub async fn rest_get(url: &str, path: &str) -> (u16, Value) {
    let resp = client()
        .get(format!("{url}{path}"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Read every `data:` event of an SSE response until it ends.
pub async fn sse_events(resp: reqwest::Response) -> Vec<Value> {
    assert!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .starts_with("text/event-stream"),
        "not an event stream: {:?}",
        resp.headers()
    );
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut s = resp.bytes_stream();
    while let Some(chunk) = s.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(pos) = buf.find("\n\n") {
            let ev: String = buf.drain(..pos + 2).collect();
            let data: Vec<&str> = ev
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if !data.is_empty() {
                out.push(serde_json::from_str(&data.join("\n")).unwrap());
            }
        }
    }
    out
}

pub async fn rpc_stream(url: &str, method: &str, params: Value) -> Vec<Value> {
    let resp = client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": "s1", "method": method, "params": params}))
        .send()
        .await
        .unwrap();
    sse_events(resp).await
}

pub fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or("")
}

/// Poll GetTask until `pred` holds (bounded number of tries, no wall-clock assertion).
pub async fn wait_task(url: &str, id: &str, pred: impl Fn(&str) -> bool) -> Value {
    for _ in 0..500 {
        let (_, v) = rpc(url, "GetTask", json!({"id": id})).await;
        if pred(state(&v["result"])) {
            return v["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached the expected state");
}

/// A streamed send whose subscriber reads nothing until the task is done: a handler emitting
/// `n` WORKING updates, `sse_queue_capacity` 4 and `policy`; returns the events then read.
pub async fn unread_stream(
    n: usize,
    policy: a2a_agent::fanout::OverflowPolicy,
) -> Vec<a2a_agent::model::StreamResponse> {
    let cfg = AgentConfig {
        sse_queue_capacity: 4,
        sse_overflow_policy: policy,
        ..open_config()
    };
    unread_stream_with(n, cfg).await
}

/// [`unread_stream`] with the server's settings `cfg`.
pub async fn unread_stream_with(
    n: usize,
    cfg: AgentConfig,
) -> Vec<a2a_agent::model::StreamResponse> {
    use a2a_agent::model::{Message, Part, Role, SendMessageRequest};
    use a2a_agent::tasks::{SendInput, SendMode, SendOutcome};
    use a2a_agent::{CallerProfile, Reply, RequestContext, handler_fn};
    let h = handler_fn(move |ctx: RequestContext| async move {
        for i in 0..n {
            ctx.emit(format!("e{i}")).await;
        }
        Ok(Reply::text("done"))
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, cfg).await;
    let mgr = s.manager().clone();
    let req = SendMessageRequest::new(
        Message::new(Role::User, vec![Part::text("go")]).with_message_id("m1"),
    );
    let out = mgr
        .send(SendInput {
            request: req,
            raw_message: Value::Null,
            caller: CallerProfile::anonymous(),
            extensions: vec![],
            mode: SendMode::Stream,
            headers: Default::default(),
        })
        .await
        .unwrap();
    let SendOutcome::Stream(mut sub) = out else {
        panic!("not a stream")
    };
    let id = sub.task.id.clone();
    // Do not read until the task is done.
    loop {
        let t = mgr
            .get(&id, None, &CallerProfile::anonymous())
            .await
            .unwrap();
        if t.status.state.is_terminal() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut got = vec![];
    while let Some(ev) = sub.events.recv().await {
        got.push(ev);
    }
    s.shutdown().await;
    got
}

/// A non-blocking 1.0 JSON-RPC send (`returnImmediately`) of `text`; the task id.
pub async fn send_async(url: &str, text: &str) -> String {
    let (_, v) = rpc(
        url,
        "SendMessage",
        json!({"message": msg(text), "configuration": {"returnImmediately": true}}),
    )
    .await;
    v["result"]["task"]["id"].as_str().unwrap().to_string()
}

/// A non-blocking send of "slow" (the echo demo waits until canceled); the task id.
pub async fn start_slow(url: &str) -> String {
    send_async(url, "slow").await
}

/// A 1.0 JSON-RPC SendStreamingMessage of `text`; its events.
pub async fn stream_text(url: &str, text: &str) -> Vec<Value> {
    rpc_stream(url, "SendStreamingMessage", json!({"message": msg(text)})).await
}

/// A 1.0 HTTP+JSON send with the wrong content type (`text/plain`, body "hi").
pub async fn post_text_plain(url: String) -> reqwest::Response {
    client()
        .post(url)
        .header("A2A-Version", "1.0")
        .header("content-type", "text/plain")
        .body("hi")
        .send()
        .await
        .unwrap()
}

/// `POST url` with `A2A-Version: 1.0` and no body (e.g. an HTTP+JSON subscribe).
pub async fn post_1_0(url: String) -> reqwest::Response {
    client()
        .post(url)
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
}

#[cfg(feature = "cli")]
/// Starts the `a2a-agent` binary with `args` (stdout piped, stderr dropped, log level warn);
/// returns the child, the URL of its `LISTENING` line and the first later line starting with
/// `prefix` (`None`: do not wait for one). Later output is drained.
#[cfg(feature = "cli")]
pub fn spawn_agent(
    args: &[&str],
    prefix: Option<&str>,
) -> (std::process::Child, String, Option<String>) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(AGENT_BIN)
        .args(args)
        .env("A2A_AGENT_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().expect("agent exited").unwrap();
    let url = loop {
        if let Some(u) = next().strip_prefix("LISTENING ") {
            break u.trim().to_string();
        }
    };
    let line = prefix.map(|p| {
        loop {
            let l = next();
            if l.starts_with(p) {
                break l;
            }
        }
    });
    std::thread::spawn(move || for _ in lines {});
    (child, url, line)
}
