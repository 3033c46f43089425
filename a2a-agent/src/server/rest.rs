//! The HTTP+JSON binding: 1.0 paths (optionally under `/{tenant}`) and the 0.3 `/v1/...` paths.
//!
//! The route table is [`crate::edge::routes`] (shared with the gateway).

use super::respond::{A2A_JSON, Binding, error_response, json_bytes_response, json_response};
use super::sse::sse_response;
use crate::edge;
pub(crate) use crate::edge::routes::{Op, Route, parse_route};
use crate::edge::version::Version;
use crate::error::{A2aError, ErrorKind};
use crate::model::{ListTasksRequest, TaskState, Timestamp};
use crate::ops::{self, Outcome};
use crate::state::{App, Call};
use axum::response::Response;
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::Value;

fn ok_json(v: Version, body: &Value) -> Response {
    let ct = if v == Version::V1 {
        A2A_JSON
    } else {
        "application/json"
    };
    json_response(StatusCode::OK, ct, body)
}

fn query_map(q: Option<&str>) -> Vec<(String, String)> {
    q.map(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    })
    .unwrap_or_default()
}

fn parse_int(name: &str, v: &str) -> Result<i32, A2aError> {
    v.parse::<i32>().map_err(|_| {
        A2aError::invalid_params(format!("{name} must be an integer")).with_meta("field", name)
    })
}

fn list_request(q: Option<&str>) -> Result<ListTasksRequest, A2aError> {
    let mut r = ListTasksRequest::default();
    for (k, v) in query_map(q) {
        match k.as_str() {
            "contextId" | "context_id" => r.context_id = Some(v),
            "status" => {
                r.status = Some(TaskState::from_name(&v).ok_or_else(|| {
                    A2aError::invalid_params(format!("unknown status {v:?}"))
                        .with_meta("field", "status")
                })?)
            }
            "pageSize" | "page_size" => r.page_size = Some(parse_int("pageSize", &v)?),
            "pageToken" | "page_token" => r.page_token = Some(v),
            "historyLength" | "history_length" => {
                r.history_length = Some(parse_int("historyLength", &v)?)
            }
            "statusTimestampAfter" | "status_timestamp_after" => {
                r.status_timestamp_after = Some(Timestamp::parse(&v).map_err(|e| {
                    A2aError::invalid_params(e.to_string())
                        .with_meta("field", "statusTimestampAfter")
                })?)
            }
            "includeArtifacts" | "include_artifacts" => {
                r.include_artifacts = Some(match v.as_str() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => {
                        return Err(A2aError::invalid_params(
                            "includeArtifacts must be true or false",
                        )
                        .with_meta("field", "includeArtifacts"));
                    }
                })
            }
            _ => {}
        }
    }
    Ok(r)
}

pub(crate) async fn handle(
    app: &App,
    route: Route,
    method: &Method,
    call: &Call,
    body: Bytes,
) -> Response {
    let v = route.version;
    crate::otel::note("a2a.caller.binding", "HTTP+JSON");
    crate::otel::note("a2a.caller.version", v.as_str());
    match run(app, &route, method, call, body).await {
        Ok(r) => r,
        Err(e) => error_response(
            &e.in_table(app.cfg().rest_status_table),
            v,
            Binding::HttpJson,
        ),
    }
}

fn wrong_method() -> A2aError {
    A2aError::new(
        ErrorKind::MethodNotFound,
        "HTTP method not allowed on this path",
    )
    .with_status(405)
}

fn history_param(q: Option<&str>) -> Result<Value, A2aError> {
    Ok(query_map(q)
        .into_iter()
        .find(|(k, _)| k == "historyLength" || k == "history_length")
        .map(|(_, x)| parse_int("historyLength", &x))
        .transpose()?
        .map(Value::from)
        .unwrap_or(Value::Null))
}

async fn run(
    app: &App,
    route: &Route,
    method: &Method,
    call: &Call,
    body: Bytes,
) -> Result<Response, A2aError> {
    let v = route.version;
    let allow = |ok: &[Method]| {
        if ok.contains(method) {
            Ok(())
        } else {
            Err(wrong_method())
        }
    };
    let (m1, params): (&str, Value) = match &route.op {
        Op::Send | Op::Stream => {
            allow(&[Method::POST])?;
            let streaming = route.op == Op::Stream;
            if streaming && !app.card.streaming() {
                return Err(A2aError::new(
                    ErrorKind::UnsupportedOperation,
                    "streaming is not supported by this agent (capabilities.streaming)",
                ));
            }
            // A 1.0 send of the common shape is read by type (no JSON trees).
            if v == Version::V1
                && let Some(t) = crate::typed_send::rest_send(&body)
            {
                let params = ops::SendParams::Typed(Box::new(t));
                let out = ops::send_op(app, call, streaming, params).await?;
                let m = if streaming {
                    "SendStreamingMessage"
                } else {
                    "SendMessage"
                };
                return answer(app, v, m, out);
            }
            if body.iter().all(u8::is_ascii_whitespace) {
                return Err(A2aError::new(
                    ErrorKind::ContentTypeNotSupported,
                    "empty request body",
                )
                .with_status(400));
            }
            let params: Value = serde_json::from_slice(&body).map_err(|e| {
                A2aError::new(ErrorKind::JsonParse, format!("Invalid JSON payload: {e}"))
            })?;
            let params = match v {
                Version::V1 => params,
                Version::V03 => edge::v03_rest_send(params)?,
            };
            if streaming
                && params
                    .pointer("/configuration/returnImmediately")
                    .and_then(Value::as_bool)
                    == Some(true)
            {
                return Err(A2aError::new(
                    ErrorKind::UnsupportedOperation,
                    "returnImmediately is not supported on SendStreamingMessage",
                )
                .with_status(400));
            }
            let m = if streaming {
                "SendStreamingMessage"
            } else {
                "SendMessage"
            };
            (m, params)
        }
        Op::List => {
            allow(&[Method::GET])?;
            let req = list_request(call.query.as_deref())?;
            (
                "ListTasks",
                serde_json::to_value(req).map_err(|e| A2aError::internal(e.to_string()))?,
            )
        }
        Op::Get(id) => {
            allow(&[Method::GET])?;
            let mut hl = history_param(call.query.as_deref())?;
            // 0.3 (P0): `historyLength` 0 is no limit, which is 1.0 unset.
            if v == Version::V03 && hl.as_i64() == Some(0) {
                hl = Value::Null;
            }
            (
                "GetTask",
                serde_json::json!({"id": id, "historyLength": hl}),
            )
        }
        Op::Cancel(id) => {
            allow(&[Method::POST])?;
            ("CancelTask", serde_json::json!({"id": id}))
        }
        Op::Subscribe(id) => {
            allow(&[Method::POST, Method::GET])?;
            ("SubscribeToTask", serde_json::json!({"id": id}))
        }
        Op::Push(task_id, config_id) => edge::rest_push_request(
            method,
            v,
            task_id,
            config_id.as_deref(),
            call.query.as_deref(),
            &body,
        )?,
        Op::ExtendedCard => ("GetExtendedAgentCard", Value::Null),
    };
    let out = ops::dispatch_v(app, call, m1, params, v).await?;
    answer(app, v, m1, out)
}

/// The answer to 1.0 method `m1` called in version `v`.
fn answer(app: &App, v: Version, m1: &str, out: Outcome) -> Result<Response, A2aError> {
    let heartbeat = app.cfg().sse_heartbeat_interval.get();
    match out {
        Outcome::Sent(r) if v == Version::V1 => {
            let mut body = Vec::with_capacity(ops::SENT_CAPACITY);
            serde_json::to_writer(&mut body, &*r).map_err(|e| A2aError::internal(e.to_string()))?;
            Ok(json_bytes_response(StatusCode::OK, A2A_JSON, body))
        }
        out @ (Outcome::Unary(_) | Outcome::Sent(_)) => {
            let r = out
                .into_unary()
                .unwrap_or_else(|| Err(A2aError::internal("no unary result")))?;
            let body = match v {
                Version::V1 => r,
                Version::V03 => edge::v03_rest_result(m1, r)?,
            };
            Ok(ok_json(v, &body))
        }
        Outcome::Single(ev) => {
            let data: Vec<String> = match v {
                Version::V1 => vec![event_text(&ev)],
                Version::V03 => v03_event_texts(&mut edge::V03Stream::new(true), *ev, true),
            };
            Ok(edge::sse::response(
                futures_util::stream::iter(data.into_iter().map(edge::sse::data)),
                None,
            ))
        }
        Outcome::Stream(sub) => Ok(match v {
            Version::V1 => sse_response(*sub, heartbeat, |ev, _| vec![event_text(&ev)]),
            Version::V03 => {
                let mut tr = edge::V03Stream::new(true);
                sse_response(*sub, heartbeat, move |ev, last| {
                    v03_event_texts(&mut tr, ev, last)
                })
            }
        }),
    }
}

/// A 1.0 stream event's `data`: its JSON text, written straight from the typed event; an event
/// that cannot be written (no A2A event is one) is an internal error's body instead.
fn event_text(ev: &crate::model::StreamResponse) -> String {
    // Room for a whole event at once, as for a send's answer (no regrowth of the buffer).
    let mut b = Vec::with_capacity(ops::SENT_CAPACITY);
    let text = serde_json::to_writer(&mut b, ev)
        .map_err(|e| e.to_string())
        .and_then(|()| String::from_utf8(b).map_err(|e| e.to_string()));
    text.unwrap_or_else(|e| A2aError::internal(e).rest_body(Version::V1).to_string())
}

/// The `data` of the 0.3 events one event becomes (a failed translation: its error's body).
fn v03_event_texts(
    tr: &mut edge::V03Stream,
    ev: crate::model::StreamResponse,
    last: bool,
) -> Vec<String> {
    tr.push(ev, last)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| e.rest_body(Version::V03)).to_string())
        .collect()
}
