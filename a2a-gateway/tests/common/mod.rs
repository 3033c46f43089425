//! Test harness: a real gateway on 127.0.0.1:0 over a SQLite file in a tempdir, and peers.

#![allow(dead_code)]

use a2a_gateway::config::Config;
pub mod echo;
use a2a_gateway::errors::Version;
use a2a_gateway::keys::Scope;
use a2a_gateway::server::{Gateway, ServerHandle};
use a2a_gateway::store::{Agent, Store};
use echo::{EchoAgent, start_echo};
use serde_json::Value;

pub mod approval;
pub mod callers;
pub mod cluster;
pub mod console;
pub mod gov;
/// The raw gRPC caller and bad-input table the agent's tests use too.
#[path = "../../../a2a-agent/tests/common/grpc_raw.rs"]
pub mod grpc_raw;
pub mod lb;
pub mod leaks;
pub mod leaky;
/// The long-value probes the agent's tests use too.
#[path = "../../../a2a-agent/tests/common/long_probe.rs"]
pub mod long_probe;
pub mod oidc;
/// The OTLP trace receiver the agent's tests use too.
#[path = "../../../a2a-agent/tests/common/otlp.rs"]
pub mod otlp;
/// The Prometheus text parser the agent's tests use too.
#[path = "../../../a2a-agent/tests/common/scrape.rs"]
pub mod scrape;

pub struct Env {
    pub gw: ServerHandle,
    pub store: Store,
    pub key: String,
    pub http: reqwest::Client,
    pub _dir: tempfile::TempDir,
    pub peers: Vec<EchoAgent>,
}

pub const ADMIN: &str = "admin-secret";

impl Env {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.gw.base_url(), path)
    }

    /// Registers `agent_id` at `endpoint` in workspace `ws`.
    pub fn register(&self, ws: &str, agent_id: &str, endpoint: &str, skills: Option<Vec<&str>>) {
        self.store
            .upsert_agent(&Agent {
                workspace_id: ws.into(),
                agent_id: agent_id.into(),
                endpoint: endpoint.into(),
                credential: Some("peer-cred".into()),
                skills: skills.map(|s| s.into_iter().map(str::to_owned).collect()),
                pinned_card_key: None,
            })
            .unwrap();
    }

    /// A request to `path` with the caller's key and `A2A-Version: 1.0`.
    pub fn v1(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .header("A2A-Version", "1.0")
            .bearer_auth(&self.key)
    }

    pub async fn rpc(&self, path: &str, version: Option<&str>, body: Value) -> (u16, Value) {
        self.rpc_key(path, version, body, &self.key).await
    }

    pub async fn rpc_key(
        &self,
        path: &str,
        version: Option<&str>,
        body: Value,
        key: &str,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .bearer_auth(key)
            .body(body.to_string());
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn sse(
        &self,
        path: &str,
        version: Option<&str>,
        body: Value,
    ) -> (u16, String, Vec<Value>) {
        let mut req = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .bearer_auth(&self.key)
            .body(body.to_string());
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let text = resp.text().await.unwrap();
        let events = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| serde_json::from_str(d.trim()).unwrap_or(Value::String(d.to_owned())))
            .collect();
        (status, ct, events)
    }

    pub async fn stop(self) {
        self.gw.shutdown().await;
        for p in self.peers {
            p.shutdown().await;
        }
    }
}

/// The peer timeout of the tests that drive the official Python SDKs as peers: up to 18 of
/// their driver processes run at once, and on a loaded 2-core machine a row's answer can take
/// longer than the 5 s of the other tests (a 504 "the peer sent nothing" is not what they test).
pub const SDK_PEER_TIMEOUT_SECS: u64 = 30;

/// The settings of the SDK tables through the gateway: governed push (callbacks sealed by the
/// gateway and delivered to its own address) and [`SDK_PEER_TIMEOUT_SECS`].
pub fn sdk_table_config(c: &mut Config) {
    c.push_direct_workspaces.clear();
    c.push_callback_base_url = Some(format!("http://{}", c.listen));
    c.peer_timeout_secs = SDK_PEER_TIMEOUT_SECS;
}

pub async fn env_with(peer_version: Version, tweak: impl FnOnce(&mut Config)) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    store.create_workspace("ws1", "One").unwrap();
    store.create_workspace("ws2", "Two").unwrap();
    let (_, key) = store.create_key("ws1", &[], None, None).unwrap();
    let peer = start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        peer_version,
        None,
    )
    .await
    .unwrap();
    let mut config = Config {
        dev_mode: true,
        admin_token: Some(ADMIN.into()),
        peer_timeout_secs: 5,
        // Direct push delivery (the caller's webhook goes to the peer): the CRUD and interop
        // tests predate governed push; `tests/push_callback.rs` covers sealed callbacks.
        push_direct_workspaces: vec!["ws1".into(), "ws2".into()],
        ..Config::default()
    };
    // The listener first, so that `tweak` sees the gateway's own address (`config.listen`).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    config.listen = listener.local_addr().unwrap();
    tweak(&mut config);
    let gw = Gateway::new(config, store.clone())
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    let env = Env {
        gw,
        store,
        key,
        http: reqwest::Client::new(),
        _dir: dir,
        peers: vec![],
    };
    env.register("ws1", "echo", &peer.url, None);
    let mut env = env;
    env.peers.push(peer);
    env
}

pub async fn env(peer_version: Version) -> Env {
    env_with(peer_version, |_| {}).await
}

pub fn key_with(env: &Env, scopes: &[Scope], expires_at: Option<i64>) -> (String, String) {
    let (info, secret) = env
        .store
        .create_key("ws1", scopes, None, expires_at)
        .unwrap();
    (info.key_id, secret)
}

pub fn send03(text: &str) -> Value {
    serde_json::json!({"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":
        {"kind":"message","messageId": uuid::Uuid::new_v4().to_string(),"role":"user","parts":[{"kind":"text","text":text}]}}})
}

pub fn send10(text: &str) -> Value {
    serde_json::json!({"jsonrpc":"2.0","id":"1","method":"SendMessage","params":{"message":
        {"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":text}]}}})
}

/// The gateway's own code of a JSON-RPC error in either form.
pub fn gw_code(body: &Value) -> String {
    let data = &body["error"]["data"];
    if let Some(arr) = data.as_array() {
        arr[0]["metadata"]["code"].as_str().unwrap_or("").to_owned()
    } else {
        data["code"].as_str().unwrap_or("").to_owned()
    }
}

/// Binds `task` at `endpoint` to ws1's `agent_id`, as if it had been created through the gateway.
pub fn bind_task(env: &Env, endpoint: &str, task: &str, agent_id: &str) {
    use a2a_gateway::ownership::Owner;
    env.store
        .bind_task(
            endpoint,
            task,
            &Owner {
                workspace_id: "ws1".into(),
                agent_id: agent_id.into(),
            },
        )
        .unwrap();
}

/// Seeds the SQLite file `db` for the `serve` binary: workspace `ws` with `agent_id` at
/// `endpoint` (no credential); returns an unscoped key of `ws`.
pub fn seed_file(db: &std::path::Path, agent_id: &str, endpoint: &str) -> String {
    let store = Store::open(db).unwrap();
    store.create_workspace("ws", "W").unwrap();
    store
        .upsert_agent(&Agent {
            workspace_id: "ws".into(),
            agent_id: agent_id.into(),
            endpoint: endpoint.into(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .unwrap();
    store.create_key("ws", &[], None, None).unwrap().1
}

/// Starts `a2a-gateway serve --listen 127.0.0.1:0 --dev --database db` plus `extra`
/// arguments; returns the child and the base URL from its `LISTENING` line.
pub fn spawn_serve(db: &std::path::Path, extra: &[&str]) -> (std::process::Child, String) {
    let (child, base, _) = spawn_serve_until(db, extra, "LISTENING ");
    (child, base)
}

/// [`spawn_serve`], waiting also for the first printed line that starts with `prefix` (such
/// as `WORKERS `); returns it too.
pub fn spawn_serve_until(
    db: &std::path::Path,
    extra: &[&str],
    prefix: &str,
) -> (std::process::Child, String, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["serve", "--listen", "127.0.0.1:0", "--dev"])
        .args(extra)
        .arg("--database")
        .arg(db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let wait = |what: &str| loop {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no {what} line"));
        if line.starts_with(what) {
            break line;
        }
    };
    let base = wait("LISTENING ")["LISTENING ".len()..].to_owned();
    let line = if prefix == "LISTENING " {
        format!("LISTENING {base}")
    } else {
        wait(prefix)
    };
    // Keep reading so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in rx {});
    (child, base, line)
}

/// A JSON-RPC 1.0 peer (its card at the well-known path) whose `POST /` is answered by
/// `answer`; returns its URL and the task serving it.
pub async fn card_peer(
    answer: impl Fn() -> axum::response::Response + Clone + Send + Sync + 'static,
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = crate::common::echo::echo_card(&url, Version::V1);
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/",
            axum::routing::post(move || {
                let answer = answer.clone();
                async move { answer() }
            }),
        );
    let join = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, join)
}

/// A peer (agent id `p`) that answers every message with the direct message "ok", on a
/// loopback port: the smallest answer, so that only the gateway's own records grow.
pub async fn ok_peer() -> a2a_agent::ServerHandle {
    a2a_agent::AgentServer::new(
        a2a_agent::AgentCard::builder("p", "Echo", "1.0.0").build(),
        a2a_agent::handler_fn(|_c: a2a_agent::RequestContext| async move {
            Ok(a2a_agent::Reply::direct_text("ok"))
        }),
    )
    .validate_auth(false)
    .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
    .await
    .unwrap()
}

/// `a2a-gateway ARGS` started with stdout and stderr piped: the child, the base URL of its
/// `LISTENING` line, and its stderr lines. stdout is read to its end on a thread (a closed pipe
/// would fail the gateway's later prints); `RUST_LOG` and `A2A_GATEWAY_LOG_LEVEL` are unset.
pub fn spawn_gateway<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
) -> (
    std::process::Child,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.args(args)
        .env_remove("RUST_LOG")
        .env_remove("A2A_GATEWAY_LOG_LEVEL");
    spawn_gateway_cmd(cmd)
}

/// [`spawn_gateway`] of a command the caller made (arguments, environment).
pub fn spawn_gateway_cmd(
    mut cmd: std::process::Command,
) -> (
    std::process::Child,
    String,
    std::sync::mpsc::Receiver<String>,
) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let err = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let (found, listening) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in out.lines().map_while(Result::ok) {
            if let Some(b) = l.strip_prefix("LISTENING ") {
                let _ = found.send(b.trim().to_owned());
            }
        }
    });
    let base = listening
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("no LISTENING line");
    (child, base, lines)
}
