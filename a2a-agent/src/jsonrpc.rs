//! The JSON-RPC 2.0 binding (`POST {base}/`): every 1.0 method, and the 0.3 methods through the
//! edge translation.

use crate::edge;
use crate::error::{A2aError, ErrorKind};
use crate::model::{ListTasksRequest, SendMessageResponse, StreamResponse};
use crate::negotiate::Version;
use crate::ops::{self, SendKnobs};
use crate::server::{App, Call, header_bool, json_response};
use crate::sse::sse_response;
use crate::tasks::SendOutcome;
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

const V1_METHODS: &[&str] = &[
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
                &A2aError::new(ErrorKind::Parse, format!("Invalid JSON payload: {e}")),
                fallback_v,
            );
        }
    };
    let id = v.get("id").cloned().unwrap_or(Value::Null);
    let id = if matches!(id, Value::String(_) | Value::Number(_) | Value::Null) {
        id
    } else {
        Value::Null
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
    match version {
        Version::V1 => {
            if !is_v1_name {
                return reply_err(
                    &id,
                    &A2aError::new(
                        ErrorKind::MethodNotFound,
                        format!("Method not found: {method}"),
                    ),
                    version,
                );
            }
            match dispatch_v1(app, call, method, params, &id, Version::V1).await {
                Ok(r) => r,
                Err(e) => reply_err(&id, &e, version),
            }
        }
        Version::V03 => {
            let (m1, p1) = match edge::v03_jsonrpc_request(method, params) {
                Ok(x) => x,
                Err(e) => return reply_err(&id, &e, version),
            };
            match dispatch_v1(app, call, m1, p1, &id, Version::V03).await {
                Ok(r) => r,
                Err(e) => reply_err(&id, &e, version),
            }
        }
    }
}

/// Run a 1.0 method; `out` is the version the result is rendered in.
async fn dispatch_v1(
    app: &App,
    call: &Call,
    method: &str,
    params: Value,
    id: &Value,
    out: Version,
) -> Result<Response, A2aError> {
    let mgr = &app.manager;
    let heartbeat = Duration::from_millis(app.cfg.sse_heartbeat_interval_ms);
    match method {
        "SendMessage" | "SendStreamingMessage" => {
            let streaming = method == "SendStreamingMessage";
            if streaming && !app.card.streaming() {
                return Err(A2aError::new(
                    ErrorKind::UnsupportedOperation,
                    "streaming is not supported by this agent (capabilities.streaming)",
                ));
            }
            let knobs = SendKnobs {
                header_override: header_bool(&call.headers, "a2a-return-immediately"),
                endpoint_default: app.cfg.return_immediately,
            };
            let outcome = ops::send(
                mgr,
                &params,
                call.caller.clone(),
                call.extensions.clone(),
                knobs,
                streaming,
            )
            .await?;
            match outcome {
                SendOutcome::Task(t) => {
                    let result = match out {
                        Version::V1 => serde_json::to_value(SendMessageResponse::Task(t))
                            .map_err(|e| A2aError::internal(e.to_string()))?,
                        Version::V03 => edge::v03_task(&t)?,
                    };
                    Ok(reply(id, result))
                }
                SendOutcome::Stream(sub) => Ok(stream_reply(sub, heartbeat, id.clone(), out)),
            }
        }
        "GetTask" => {
            let id_s = str_param(&params, "id")?;
            let hl = params
                .get("historyLength")
                .or_else(|| params.get("history_length"))
                .map(|v| {
                    v.as_i64()
                        .ok_or_else(|| A2aError::invalid_params("historyLength must be an integer"))
                })
                .transpose()?
                .map(|h| h as i32);
            let t = mgr.get(&id_s, hl, &call.caller).await?;
            Ok(reply(id, render_task(&t, out)?))
        }
        "ListTasks" => {
            let req: ListTasksRequest = if params.is_null() {
                ListTasksRequest::default()
            } else {
                serde_json::from_value(params).map_err(|e| {
                    A2aError::invalid_params(format!("invalid ListTasksRequest: {e}"))
                })?
            };
            let r = ops::list(mgr, req, &call.caller).await?;
            Ok(reply(
                id,
                serde_json::to_value(r).map_err(|e| A2aError::internal(e.to_string()))?,
            ))
        }
        "CancelTask" => {
            let id_s = str_param(&params, "id")?;
            let t = mgr.cancel(&id_s, &call.caller).await?;
            Ok(reply(id, render_task(&t, out)?))
        }
        "SubscribeToTask" => {
            if !app.card.streaming() {
                return Err(A2aError::new(
                    ErrorKind::UnsupportedOperation,
                    "streaming is not supported by this agent (capabilities.streaming)",
                ));
            }
            let id_s = str_param(&params, "id")?;
            let sub = mgr.subscribe(&id_s, &call.caller).await?;
            Ok(stream_reply(sub, heartbeat, id.clone(), out))
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Err(A2aError::new(
            ErrorKind::PushNotificationNotSupported,
            "Push Notification is not supported",
        )),
        "GetExtendedAgentCard" => Err(A2aError::new(
            ErrorKind::UnsupportedOperation,
            "the extended agent card is not supported by this agent",
        )),
        other => Err(A2aError::new(
            ErrorKind::MethodNotFound,
            format!("Method not found: {other}"),
        )),
    }
}

fn render_task(t: &crate::model::Task, out: Version) -> Result<Value, A2aError> {
    match out {
        Version::V1 => serde_json::to_value(t).map_err(|e| A2aError::internal(e.to_string())),
        Version::V03 => edge::v03_task(t),
    }
}

pub(crate) fn str_param(params: &Value, name: &str) -> Result<String, A2aError> {
    match params.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(
            A2aError::invalid_params(format!("missing parameter {name:?}"))
                .with_meta("field", name),
        ),
    }
}

fn stream_reply(
    sub: crate::tasks::Subscription,
    heartbeat: Duration,
    id: Value,
    out: Version,
) -> Response {
    sse_response(sub, heartbeat, move |ev: &StreamResponse, fin: bool| {
        let result = match out {
            Version::V1 => serde_json::to_value(ev).unwrap_or(Value::Null),
            Version::V03 => edge::v03_event(ev, fin).unwrap_or(Value::Null),
        };
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    })
}
