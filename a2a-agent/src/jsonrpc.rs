//! The JSON-RPC 2.0 binding (`POST {base}/`): every 1.0 method, and the 0.3 methods through the
//! edge translation.

use crate::edge;
use crate::error::{A2aError, ErrorKind};
use crate::negotiate::Version;
use crate::ops::{self, Outcome};
use crate::server::{App, Call, json_response};
use crate::sse::sse_response;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

/// The 1.0 method names.
pub(crate) const V1_METHODS: &[&str] = &[
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
];

fn reply(id: &Value, result: Value) -> Response {
    json_response(
        StatusCode::OK,
        "application/json",
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn reply_err(id: &Value, e: &A2aError, v: Version) -> Response {
    json_response(
        StatusCode::OK,
        "application/json",
        &json!({"jsonrpc": "2.0", "id": id, "error": e.jsonrpc_error(v)}),
    )
}

pub(crate) async fn handle(
    app: &App,
    explicit: Option<Version>,
    call: &Call,
    body: Bytes,
) -> Response {
    let fallback_v = explicit.unwrap_or(Version::V03);
    let v: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return reply_err(
                &Value::Null,
                &A2aError::new(ErrorKind::JsonParse, format!("Invalid JSON payload: {e}")),
                fallback_v,
            );
        }
    };
    let id = match v.get("id") {
        Some(i @ (Value::String(_) | Value::Number(_))) => i.clone(),
        _ => Value::Null,
    };
    let method = v.get("method").and_then(Value::as_str);
    let (Some(obj), Some(method)) = (v.as_object(), method) else {
        return reply_err(
            &id,
            &A2aError::new(
                ErrorKind::InvalidRequest,
                "Request payload validation error: not a JSON-RPC 2.0 request",
            ),
            fallback_v,
        );
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return reply_err(
            &id,
            &A2aError::new(
                ErrorKind::InvalidRequest,
                "Request payload validation error: jsonrpc must be \"2.0\"",
            ),
            fallback_v,
        );
    }
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    let is_v1_name = V1_METHODS.contains(&method);
    // No header: the method name tells the version (names never collide between versions).
    let version = explicit.unwrap_or(if is_v1_name {
        Version::V1
    } else {
        Version::V03
    });
    let heartbeat = Duration::from_millis(app.cfg.sse_heartbeat_interval_ms);
    let (m1, p1) = match version {
        Version::V1 if !is_v1_name => {
            return reply_err(
                &id,
                &A2aError::new(
                    ErrorKind::MethodNotFound,
                    format!("Method not found: {method}"),
                ),
                version,
            );
        }
        Version::V1 => (method, params),
        Version::V03 => match edge::v03_jsonrpc_request(method, params) {
            Ok(x) => x,
            Err(e) => return reply_err(&id, &e, version),
        },
    };
    match ops::dispatch_v(app, call, m1, p1, version).await {
        Err(e) => reply_err(&id, &e, version),
        Ok(Outcome::Unary(r)) => match version {
            Version::V1 => reply(&id, r),
            Version::V03 => match edge::v03_result(m1, r) {
                Ok(r) => reply(&id, r),
                Err(e) => reply_err(&id, &e, version),
            },
        },
        Ok(Outcome::Stream(sub)) => {
            let id2 = id.clone();
            match version {
                Version::V1 => sse_response(*sub, heartbeat, move |ev, _| {
                    vec![json!({"jsonrpc": "2.0", "id": id2, "result": ev})]
                }),
                Version::V03 => {
                    let mut tr = edge::V03Stream::new(false);
                    sse_response(*sub, heartbeat, move |ev, last| {
                        tr.push(ev, last)
                            .into_iter()
                            .map(|r| match r {
                                Ok(v) => json!({"jsonrpc": "2.0", "id": id2, "result": v}),
                                Err(e) => json!({"jsonrpc": "2.0", "id": id2, "error": e.jsonrpc_error(Version::V03)}),
                            })
                            .collect()
                    })
                }
            }
        }
    }
}
