//! The 0.3 edge: one function per direction between the 0.3 wire forms and the runtime's 1.0
//! model. The conversions belong to `a2a-translate`; until it provides them, 0.3 operations are
//! refused with a clear error (the card is converted here, minimally).

use crate::error::{A2aError, ErrorKind};
use crate::model::{StreamResponse, Task};
use serde_json::{Value, json};

fn unavailable() -> A2aError {
    A2aError::new(
        ErrorKind::UnsupportedOperation,
        "A2A 0.3 operations are not available in this build; send A2A-Version: 1.0",
    )
}

/// A 0.3 JSON-RPC request -> the 1.0 method name and params.
pub(crate) fn v03_jsonrpc_request(
    method: &str,
    _params: Value,
) -> Result<(&'static str, Value), A2aError> {
    match method {
        "message/send"
        | "message/stream"
        | "tasks/get"
        | "tasks/cancel"
        | "tasks/resubscribe"
        | "tasks/pushNotificationConfig/set"
        | "tasks/pushNotificationConfig/get"
        | "tasks/pushNotificationConfig/list"
        | "tasks/pushNotificationConfig/delete"
        | "agent/getAuthenticatedExtendedCard" => Err(unavailable()),
        other => Err(A2aError::new(
            ErrorKind::MethodNotFound,
            format!("Method not found: {other}"),
        )),
    }
}

/// A 1.0 task -> 0.3 JSON-RPC `Task`.
pub(crate) fn v03_task(_t: &Task) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 1.0 stream event -> 0.3 JSON-RPC stream result (`final` on the closing status update).
pub(crate) fn v03_event(_ev: &StreamResponse, _fin: bool) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 0.3 REST send body -> 1.0 `SendMessageRequest` JSON.
pub(crate) fn v03_rest_send(_body: Value) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 1.0 task -> 0.3 REST `SendMessageResponse`.
pub(crate) fn v03_rest_send_response(_t: &Task) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 1.0 `ListTasksResponse` -> 0.3 REST list body.
pub(crate) fn v03_rest_list(_v: Value) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 1.0 task -> 0.3 REST task.
pub(crate) fn v03_rest_task(_t: &Task) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 1.0 stream event -> 0.3 REST stream event.
pub(crate) fn v03_rest_event(_ev: &StreamResponse, _fin: bool) -> Result<Value, A2aError> {
    Err(unavailable())
}

/// A 1.0 card -> a 0.3 card.
pub(crate) fn card_to_v03(card: &Value) -> Value {
    let ifaces = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let pick = ifaces
        .iter()
        .find(|i| i.get("protocolVersion").and_then(Value::as_str) == Some("0.3"))
        .or_else(|| ifaces.first());
    let url = pick
        .and_then(|i| i.get("url"))
        .cloned()
        .unwrap_or(Value::String(String::new()));
    let transport = pick
        .and_then(|i| i.get("protocolBinding"))
        .cloned()
        .unwrap_or(Value::String("JSONRPC".into()));
    let mut out = json!({
        "protocolVersion": "0.3.0",
        "name": card.get("name").cloned().unwrap_or_default(),
        "description": card.get("description").cloned().unwrap_or_default(),
        "version": card.get("version").cloned().unwrap_or_default(),
        "url": url,
        "preferredTransport": transport,
        "capabilities": card.get("capabilities").cloned().unwrap_or(json!({})),
        "defaultInputModes": card.get("defaultInputModes").cloned().unwrap_or(json!([])),
        "defaultOutputModes": card.get("defaultOutputModes").cloned().unwrap_or(json!([])),
        "skills": card.get("skills").cloned().unwrap_or(json!([])),
    });
    let extra: Vec<Value> = ifaces
        .iter()
        .filter(|i| i.get("protocolVersion").and_then(Value::as_str) == Some("0.3"))
        .map(|i| json!({"url": i.get("url"), "transport": i.get("protocolBinding")}))
        .collect();
    if !extra.is_empty() {
        out["additionalInterfaces"] = Value::Array(extra);
    }
    for k in ["provider", "iconUrl", "documentationUrl"] {
        if let Some(v) = card.get(k) {
            out[k] = v.clone();
        }
    }
    out
}
