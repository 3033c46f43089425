//! A small JSON-RPC peer of the tests (A2A 1.0 or 0.3, either version's card, signed or given):
//! it echoes, keeps tasks and push configs in memory and shows the tests what it was sent
//! ([`EchoAgent::last_headers`], [`EchoAgent::last_body`]). The demo serves a2a-agent's echo agent.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use a2a_gateway::protocol::errors::Version;
use a2a_gateway::protocol::ops::Operation;
use a2a_gateway::protocol::xlate;

#[derive(Default)]
struct EchoState {
    tasks: HashMap<String, Value>,
    push: HashMap<String, Vec<Value>>,
    next: u64,
    /// Last request headers seen (tests read `traceparent` and `authorization`).
    last_headers: Vec<(String, String)>,
    /// Last JSON-RPC request body.
    last_body: Value,
    /// Sends received (SendMessage and SendStreamingMessage, either version).
    sends: usize,
}

/// A running echo agent.
pub struct EchoAgent {
    /// Base URL (`http://127.0.0.1:PORT`), also the JSON-RPC endpoint.
    pub url: String,
    state: Arc<Mutex<EchoState>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    join: tokio::task::JoinHandle<()>,
}

impl EchoAgent {
    /// Headers of the last request, lower-case names.
    pub fn last_headers(&self) -> Vec<(String, String)> {
        self.state
            .lock()
            .map(|s| s.last_headers.clone())
            .unwrap_or_default()
    }

    /// The last JSON-RPC request body.
    pub fn last_body(&self) -> Value {
        self.state
            .lock()
            .map(|s| s.last_body.clone())
            .unwrap_or(Value::Null)
    }

    /// How many sends (SendMessage, SendStreamingMessage) it received.
    pub fn sends(&self) -> usize {
        self.state.lock().map(|s| s.sends).unwrap_or(0)
    }

    /// Stops the agent.
    pub async fn shutdown(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = self.join.await;
    }
}

#[derive(Clone)]
struct Ctx {
    version: Version,
    card: Value,
    state: Arc<Mutex<EchoState>>,
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// `card` signed with the echo agent's key (one per process).
fn signed(card: Value) -> Option<Value> {
    static KEY: std::sync::OnceLock<Option<a2a_client::signing::CardKey>> =
        std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| {
        a2a_client::signing::generate_es256("echo-demo")
            .ok()
            .map(|(der, _)| a2a_client::signing::CardKey::es256("echo-demo", &der))
    });
    match key {
        Some(k) => a2a_client::signing::sign_card(card.clone(), k, None).ok(),
        None => Some(card),
    }
}

/// The echo agent's card for `base` speaking `version` over JSON-RPC.
pub fn echo_card(base: &str, version: Version) -> Value {
    let skills = json!([
        {"id": "echo", "name": "Echo", "description": "Echoes the text it receives", "tags": ["demo"]},
        {"id": "shout", "name": "Shout", "description": "Echoes in capitals", "tags": ["demo"]}
    ]);
    match version {
        // Signed by a key nobody pins (the gateway reports `untrusted-key`, and its governed
        // card leaves the peer's signatures out).
        Version::V1 => signed(json!({
            "name": "Echo agent", "description": "Built-in echo agent of a2a-gateway", "version": "1.0.0",
            "supportedInterfaces": [{"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true, "pushNotifications": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": skills
        }))
        .unwrap_or_default(),
        Version::V03 => json!({
            "name": "Echo agent", "description": "Built-in echo agent of a2a-gateway", "version": "1.0.0",
            "protocolVersion": "0.3.0", "url": base, "preferredTransport": "JSONRPC",
            "capabilities": {"streaming": true, "pushNotifications": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": skills
        }),
    }
}

/// Starts an echo agent speaking `version` over JSON-RPC on `listener`. With `card` the agent
/// serves that card instead of its own (tests of interface selection).
pub async fn start_echo(
    listener: TcpListener,
    version: Version,
    card: Option<Value>,
) -> std::io::Result<EchoAgent> {
    let addr = listener.local_addr()?;
    let url = format!("http://{addr}");
    let state = Arc::new(Mutex::new(EchoState::default()));
    let ctx = Ctx {
        version,
        card: card.unwrap_or_else(|| echo_card(&url, version)),
        state: state.clone(),
    };
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(|State(c): State<Ctx>| async move { axum::Json(c.card.clone()) }),
        )
        .route("/", post(echo_rpc))
        .with_state(ctx);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let join = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await;
    });
    Ok(EchoAgent {
        url,
        state,
        stop: Some(tx),
        join,
    })
}

fn rpc_error(id: &Value, code: i64, message: &str, reason: &str, version: Version) -> Value {
    let data = match version {
        Version::V1 => {
            json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}])
        }
        Version::V03 => json!({"detail": "echo agent"}),
    };
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
}

fn to_v(ev: Value, version: Version) -> Value {
    match version {
        Version::V1 => ev,
        Version::V03 => xlate::event(ev, Version::V1, Version::V03).unwrap_or(Value::Null),
    }
}

async fn echo_rpc(State(c): State<Ctx>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if let Ok(mut s) = c.state.lock() {
        s.last_headers = headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect();
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Ok(mut s) = c.state.lock() {
        s.last_body = req.clone();
    }
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req.get("method").and_then(Value::as_str).unwrap_or("");
    let params = req.get("params").cloned().unwrap_or_else(|| json!({}));
    let Ok(op) = a2a_gateway::protocol::ops::from_method(method, c.version) else {
        return axum::Json(rpc_error(
            &id,
            -32601,
            "Method not found",
            "METHOD_NOT_FOUND",
            c.version,
        ))
        .into_response();
    };
    if matches!(op, Operation::SendMessage | Operation::SendStreamingMessage)
        && let Ok(mut s) = c.state.lock()
    {
        s.sends += 1;
    }
    // Work in 1.0 internally.
    let p = if c.version == Version::V03 {
        match xlate::request(op, Version::V03, Version::V1, &params) {
            Ok(p) => p,
            Err(_) => {
                return axum::Json(rpc_error(
                    &id,
                    -32602,
                    "Invalid parameters",
                    "INVALID_PARAMS",
                    c.version,
                ))
                .into_response();
            }
        }
    } else {
        params
    };
    let v = c.version;
    let ok = |result: Value| {
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
    };
    let task_id = p.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            let msg = p.get("message").cloned().unwrap_or(Value::Null);
            let text: String = msg
                .get("parts")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let (tid, ctx_id) = {
                let Ok(mut s) = c.state.lock() else {
                    return ok(Value::Null);
                };
                s.next += 1;
                (
                    format!("task-{}", s.next),
                    msg.get("contextId")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| format!("ctx-{}", s.next)),
                )
            };
            let artifact =
                json!({"artifactId": "a1", "parts": [{"text": format!("echo: {text}")}]});
            let task = json!({"id": tid, "contextId": ctx_id,
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": now()},
                "artifacts": [artifact], "history": [msg]});
            if let Ok(mut s) = c.state.lock() {
                s.tasks.insert(tid.clone(), task.clone());
            }
            if op == Operation::SendMessage {
                return ok(to_v(json!({"task": task}), v));
            }
            let working = json!({"id": tid, "contextId": ctx_id, "status": {"state": "TASK_STATE_WORKING", "timestamp": now()}});
            let events = vec![
                json!({"task": working}),
                json!({"artifactUpdate": {"taskId": tid, "contextId": ctx_id, "artifact": artifact, "lastChunk": true}}),
                json!({"statusUpdate": {"taskId": tid, "contextId": ctx_id, "status": {"state": "TASK_STATE_COMPLETED", "timestamp": now()}}}),
            ];
            sse(id, events, v)
        }
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask => {
            let task = c
                .state
                .lock()
                .ok()
                .and_then(|s| s.tasks.get(&task_id).cloned());
            let Some(task) = task else {
                return axum::Json(rpc_error(
                    &id,
                    -32001,
                    "Task not found",
                    "TASK_NOT_FOUND",
                    v,
                ))
                .into_response();
            };
            match op {
                Operation::CancelTask => axum::Json(rpc_error(
                    &id,
                    -32002,
                    "Task cannot be canceled",
                    "TASK_NOT_CANCELABLE",
                    v,
                ))
                .into_response(),
                Operation::SubscribeToTask => sse(id, vec![json!({"task": task})], v),
                _ => ok(to_v(json!({"task": task}), v)
                    .get("task")
                    .cloned()
                    .unwrap_or_else(|| to_v(json!({"task": task}), v))),
            }
        }
        Operation::ListTasks => {
            let tasks: Vec<Value> = c
                .state
                .lock()
                .map(|s| s.tasks.values().cloned().collect())
                .unwrap_or_default();
            let n = tasks.len();
            ok(json!({"tasks": tasks, "nextPageToken": "", "pageSize": 50, "totalSize": n}))
        }
        Operation::CreateTaskPushNotificationConfig => {
            let mut cfg = p.clone();
            let tid = cfg
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if let Some(o) = cfg.as_object_mut() {
                o.entry("id").or_insert_with(|| json!("cfg-1"));
                o.remove("tenant");
            }
            if let Ok(mut s) = c.state.lock() {
                let list = s.push.entry(tid).or_default();
                let cid = cfg.get("id").cloned();
                list.retain(|x| x.get("id") != cid.as_ref());
                list.push(cfg.clone());
            }
            ok(xlate::result(
                Operation::CreateTaskPushNotificationConfig,
                Version::V1,
                v,
                &cfg,
            )
            .unwrap_or(cfg))
        }
        Operation::GetTaskPushNotificationConfig
        | Operation::DeleteTaskPushNotificationConfig
        | Operation::ListTaskPushNotificationConfigs => {
            let tid = p
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let cid = p.get("id").cloned();
            let Ok(mut s) = c.state.lock() else {
                return ok(Value::Null);
            };
            let list = s.push.entry(tid).or_default();
            match op {
                Operation::ListTaskPushNotificationConfigs => {
                    let r = json!({"configs": list.clone(), "nextPageToken": ""});
                    ok(xlate::result(op, Version::V1, v, &r).unwrap_or(r))
                }
                Operation::DeleteTaskPushNotificationConfig => {
                    list.retain(|x| x.get("id") != cid.as_ref());
                    ok(xlate::result(op, Version::V1, v, &json!({})).unwrap_or(Value::Null))
                }
                _ => match list.iter().find(|x| x.get("id") == cid.as_ref()) {
                    Some(cfg) => ok(xlate::result(op, Version::V1, v, cfg).unwrap_or(cfg.clone())),
                    None => axum::Json(rpc_error(
                        &id,
                        -32001,
                        "Task not found",
                        "TASK_NOT_FOUND",
                        v,
                    ))
                    .into_response(),
                },
            }
        }
        Operation::GetExtendedAgentCard => axum::Json(rpc_error(
            &id,
            -32601,
            "Method not found",
            "METHOD_NOT_FOUND",
            v,
        ))
        .into_response(),
    }
}

fn sse(id: Value, events: Vec<Value>, v: Version) -> Response {
    let items: Vec<Result<Event, Infallible>> = events
        .into_iter()
        .map(|e| {
            let data = json!({"jsonrpc": "2.0", "id": id, "result": to_v(e, v)});
            Ok(Event::default().data(data.to_string()))
        })
        .collect();
    Sse::new(futures::stream::iter(items)).into_response()
}
