//! Governance test helpers: the admin API, test agents on the a2a-agent library.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::handler::{HandlerError, Reply, RequestContext, handler_fn};
use serde_json::{Value, json};

use super::{ADMIN, Env};

/// An admin API call: (status, body).
pub async fn admin(env: &Env, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = env.http.request(m, env.url(path)).bearer_auth(ADMIN);
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub type Fut = Pin<Box<dyn Future<Output = Result<Reply, HandlerError>> + Send>>;

/// An a2a-agent server on 127.0.0.1:0 (JSON-RPC 1.0, streaming) running `f`.
pub async fn agent<F>(f: F) -> a2a_agent::server::ServerHandle
where
    F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = a2a_agent::demo::echo_card().json().clone();
    card["supportedInterfaces"] =
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
    AgentServer::new(AgentCard::from_json(card).unwrap(), handler_fn(f))
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

/// Shared, set once the gateway is up: (gateway base URL, key).
pub type Slot = Arc<std::sync::OnceLock<(String, String)>>;

/// The text of every artifact of a 1.0 or 0.3 stream's events (result members), in order.
pub fn artifact_text(events: &[Value]) -> String {
    let mut out = String::new();
    for e in events {
        let r = &e["result"];
        let art = if r.get("artifactUpdate").is_some() {
            &r["artifactUpdate"]["artifact"]
        } else if r["kind"] == "artifact-update" {
            &r["artifact"]
        } else {
            continue;
        };
        for p in art["parts"].as_array().into_iter().flatten() {
            out.push_str(p["text"].as_str().unwrap_or(""));
        }
    }
    out
}
