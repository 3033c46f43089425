//! Dispatch of a 1.0 operation, whatever the binding: the method and its params in, an
//! [`Outcome`] out (a unary result, a typed send result, or a stream).

use http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;

use super::list::list;
use super::push;
use super::send::{SendKnobs, SendParams, SendResult, send};
use crate::edge::version::Version;
use crate::error::{A2aError, ErrorKind};
use crate::handler::Headers;
use crate::model::{ListTasksRequest, StreamResponse};
use crate::state::{App, Call};
use crate::tasks::{SendAnswer, Subscription};

/// The buffer a SendMessage answer (or a stream event) is written into starts this large: an
/// echo answer (a task with two history messages) is about 800 bytes, and a buffer grown from
/// less is copied on every regrowth.
pub(crate) const SENT_CAPACITY: usize = 1024;

/// The result of a 1.0 operation.
pub(crate) enum Outcome {
    /// A unary result (1.0 JSON).
    Unary(Value),
    /// The result of a SendMessage, typed: a 1.0 answer serialises it straight to bytes (no
    /// JSON tree); [`Outcome::into_unary`] gives its JSON.
    Sent(Box<SendResult>),
    /// An event stream.
    Stream(Box<Subscription>),
    /// A stream of exactly one event (a direct message reply).
    Single(Box<StreamResponse>),
}

impl Outcome {
    /// A unary result as 1.0 JSON (`None`: a stream).
    pub(crate) fn into_unary(self) -> Option<Result<Value, A2aError>> {
        match self {
            Outcome::Unary(v) => Some(Ok(v)),
            Outcome::Sent(r) => Some(ser(&*r)),
            Outcome::Stream(_) | Outcome::Single(_) => None,
        }
    }
}

fn streaming_unsupported() -> A2aError {
    A2aError::new(
        ErrorKind::UnsupportedOperation,
        "streaming is not supported by this agent (capabilities.streaming)",
    )
}

fn ser(v: impl serde::Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(v).map_err(|e| A2aError::internal(e.to_string()))
}

/// The `Last-Event-ID` of a resuming subscriber: an event number this agent sent.
fn last_event_id(h: &HeaderMap) -> Result<Option<u64>, A2aError> {
    let Some(v) = h.get("last-event-id") else {
        return Ok(None);
    };
    match v.to_str().ok().map(str::trim) {
        Some("") => Ok(None),
        Some(t) => t.parse::<u64>().map(Some).map_err(|_| {
            A2aError::invalid_params(format!(
                "Last-Event-ID {t:?} is not an event id of this agent (a number from an SSE id line)"
            ))
            .with_meta("field", "Last-Event-ID")
        }),
        None => Err(A2aError::invalid_params("Last-Event-ID is not text")
            .with_meta("field", "Last-Event-ID")),
    }
}

/// The trace attributes a request's params name: the operation, and the task and context it
/// concerns (`id` of task operations, a message's `taskId` / `contextId`).
fn note_request(method: &str, params: &Value) {
    crate::otel::note("a2a.operation", method);
    let s = |p: &str| params.pointer(p).and_then(Value::as_str);
    if let Some(t) = s("/id").or_else(|| s("/message/taskId")) {
        crate::otel::note("a2a.task_id", t);
    }
    if let Some(c) = s("/message/contextId") {
        crate::otel::note("a2a.context_id", c);
    }
}

/// A required non-empty string parameter.
pub(crate) fn str_param(params: &Value, name: &str) -> Result<String, A2aError> {
    match params.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(
            A2aError::invalid_params(format!("missing parameter {name:?}"))
                .with_meta("field", name),
        ),
    }
}

/// Run the 1.0 method `method` for a caller of `version`: push config operations and inline
/// push configs of sends are handled here (they depend on the version), the rest by
/// [`dispatch`].
pub(crate) async fn dispatch_v(
    app: &App,
    call: &Call,
    method: &str,
    params: Value,
    version: Version,
) -> Result<Outcome, A2aError> {
    if crate::otel::enabled() {
        note_request(method, &params);
    }
    match method {
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Ok(Outcome::Unary(
            push::op(app, &call.caller, method, params, version).await?,
        )),
        "GetExtendedAgentCard" => {
            let j = app.card.json();
            let declared = j
                .pointer("/capabilities/extendedAgentCard")
                .or_else(|| j.get("supportsAuthenticatedExtendedCard"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !declared {
                return Err(A2aError::new(
                    ErrorKind::UnsupportedOperation,
                    "the extended agent card is not supported by this agent \
                     (capabilities.extendedAgentCard)",
                ));
            }
            match &app.extended_card {
                Some(c) => Ok(Outcome::Unary(c.json().clone())),
                None => Err(A2aError::new(
                    ErrorKind::ExtendedAgentCardNotConfigured,
                    "the extended agent card is not configured",
                )),
            }
        }
        "SendMessage" | "SendStreamingMessage" => {
            let inline = params
                .get("configuration")
                .and_then(|c| {
                    c.get("taskPushNotificationConfig")
                        .or_else(|| c.get("task_push_notification_config"))
                })
                .filter(|v| !v.is_null())
                .cloned();
            let Some(inline) = inline else {
                return dispatch(app, call, method, params).await;
            };
            let Some(d) = app.push.as_ref() else {
                return Err(app.cfg().rest_status_table.push_not_supported());
            };
            let config: a2a_types::v1::TaskPushNotificationConfig = serde_json::from_value(inline)
                .map_err(|e| {
                    A2aError::invalid_params(format!("invalid taskPushNotificationConfig: {e}"))
                        .with_meta("field", "configuration.taskPushNotificationConfig")
                })?;
            let mid = params
                .pointer("/message/messageId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            d.stage_inline(&mid, config, &call.caller, version).await?;
            let r = dispatch(app, call, method, params).await;
            d.settle(&mid);
            r
        }
        _ => dispatch(app, call, method, params).await,
    }
}

/// `SendMessage` (or, `streaming`, `SendStreamingMessage`) for `call`. A caller with params read
/// by type calls it directly: such params have no inline push config for [`dispatch_v`].
pub(crate) async fn send_op(
    app: &App,
    call: &Call,
    streaming: bool,
    params: SendParams,
) -> Result<Outcome, A2aError> {
    if streaming && !app.card.streaming() {
        return Err(streaming_unsupported());
    }
    let traced = crate::otel::enabled();
    if traced {
        let op = if streaming {
            "SendStreamingMessage"
        } else {
            "SendMessage"
        };
        crate::otel::note("a2a.operation", op);
    }
    let knobs = SendKnobs {
        header_override: header_bool(&call.headers, &crate::edge::names::A2A_RETURN_IMMEDIATELY),
        endpoint_default: app.cfg().return_immediately,
    };
    match send(
        &app.manager,
        params,
        call.caller.clone(),
        call.extensions.clone(),
        knobs,
        streaming,
        Headers::lazy(call.headers.clone(), app.hidden_headers.clone()),
    )
    .await?
    {
        SendAnswer::Task(t) if traced => {
            crate::otel::note("a2a.task_id", &t.id);
            crate::otel::note(
                "a2a.context_id",
                t.context_id.as_deref().unwrap_or_default(),
            );
            Ok(Outcome::Sent(Box::new(SendResult::Task(t))))
        }
        SendAnswer::Task(t) => Ok(Outcome::Sent(Box::new(SendResult::Task(t)))),
        SendAnswer::Stream(sub) => Ok(Outcome::Stream(sub)),
        SendAnswer::Message(m) if streaming => {
            Ok(Outcome::Single(Box::new(StreamResponse::Message(m))))
        }
        SendAnswer::Message(m) => Ok(Outcome::Sent(Box::new(SendResult::Message(m)))),
    }
}

/// Run the 1.0 method `method` with `params` for `call`.
pub(crate) async fn dispatch(
    app: &App,
    call: &Call,
    method: &str,
    params: Value,
) -> Result<Outcome, A2aError> {
    let mgr = &app.manager;
    match method {
        "SendMessage" | "SendStreamingMessage" => {
            send_op(
                app,
                call,
                method == "SendStreamingMessage",
                SendParams::Tree(params),
            )
            .await
        }
        "GetTask" => {
            let id = str_param(&params, "id")?;
            let hl =
                match params
                    .get("historyLength")
                    .or_else(|| params.get("history_length"))
                {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_i64().and_then(|h| i32::try_from(h).ok()).ok_or_else(
                        || A2aError::invalid_params("historyLength must be an integer"),
                    )?),
                };
            Ok(Outcome::Unary(ser(mgr.get(&id, hl, &call.caller).await?)?))
        }
        "ListTasks" => {
            let req: ListTasksRequest = if params.is_null() {
                ListTasksRequest::default()
            } else {
                ListTasksRequest::deserialize(&params).map_err(|e| {
                    A2aError::invalid_as::<ListTasksRequest>("ListTasksRequest", &params, e)
                })?
            };
            Ok(Outcome::Unary(ser(list(mgr, req, &call.caller).await?)?))
        }
        "CancelTask" => {
            let id = str_param(&params, "id")?;
            Ok(Outcome::Unary(ser(mgr.cancel(&id, &call.caller).await?)?))
        }
        "SubscribeToTask" => {
            if !app.card.streaming() {
                return Err(streaming_unsupported());
            }
            let id = str_param(&params, "id")?;
            let after = last_event_id(&call.headers)?;
            Ok(Outcome::Stream(Box::new(
                mgr.subscribe_from(&id, &call.caller, after).await?,
            )))
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => {
            Err(app.cfg().rest_status_table.push_not_supported())
        }
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

/// A boolean request header (`true`/`1`/`yes`, `false`/`0`/`no`; anything else: not given).
fn header_bool(h: &HeaderMap, name: &http::HeaderName) -> Option<bool> {
    h.get(name).and_then(|v| v.to_str().ok()).and_then(|v| {
        match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Some(true),
            "false" | "0" | "no" => Some(false),
            _ => None,
        }
    })
}
