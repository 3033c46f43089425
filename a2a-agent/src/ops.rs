//! Binding-independent operations in 1.0 terms: parameters in, typed results out.

use crate::caller::CallerProfile;
use crate::error::A2aError;
use crate::model::{ListTasksRequest, ListTasksResponse, SendMessageRequest, Task, TaskState};
use crate::store::TaskFilter;
use crate::tasks::{SendInput, SendMode, SendOutcome, TaskManager, trim_history};
use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

/// The per-request knobs of a send besides its body.
pub(crate) struct SendKnobs {
    /// The per-request override header (`A2A-Return-Immediately`).
    pub header_override: Option<bool>,
    /// The endpoint default.
    pub endpoint_default: bool,
}

/// `returnImmediately` resolution, highest wins: `configuration.returnImmediately`, then
/// `configuration.blocking=false` (typed inverse), then the per-request override, then the
/// endpoint default.
pub fn resolve_return_immediately(
    params: &Value,
    header_override: Option<bool>,
    endpoint_default: bool,
) -> bool {
    let cfg = params.get("configuration");
    if let Some(b) = cfg
        .and_then(|c| {
            c.get("returnImmediately")
                .or_else(|| c.get("return_immediately"))
        })
        .and_then(Value::as_bool)
    {
        return b;
    }
    if let Some(b) = cfg.and_then(|c| c.get("blocking")).and_then(Value::as_bool) {
        return !b;
    }
    header_override.unwrap_or(endpoint_default)
}

/// The typed request and the caller's message JSON (taken out of `params`).
pub(crate) fn parse_send(mut params: Value) -> Result<(SendMessageRequest, Value), A2aError> {
    if params.is_null() || params.as_object().is_some_and(|o| o.is_empty()) {
        return Err(A2aError::new(
            crate::error::ErrorKind::ContentTypeNotSupported,
            "empty SendMessage body",
        )
        .with_status(400));
    }
    // Read from the tree in place (no copy of it).
    let req = SendMessageRequest::deserialize(&params)
        .map_err(|e| A2aError::invalid_params(format!("invalid SendMessageRequest: {e}")))?;
    let raw = params
        .get_mut("message")
        .map(Value::take)
        .unwrap_or(Value::Null);
    Ok((req, raw))
}

/// The params of a send: a JSON tree, or read by type ([`crate::typed_send`]).
pub(crate) enum SendParams {
    /// The params as a tree (every version and shape).
    Tree(Value),
    /// A 1.0 send without `configuration`, read straight into its type.
    Typed(Box<crate::typed_send::TypedSend>),
}

pub(crate) async fn send(
    mgr: &TaskManager,
    params: SendParams,
    caller: CallerProfile,
    extensions: Vec<String>,
    knobs: SendKnobs,
    streaming: bool,
    headers: crate::handler::Headers,
) -> Result<SendOutcome, A2aError> {
    let immediately =
        |p: &Value| resolve_return_immediately(p, knobs.header_override, knobs.endpoint_default);
    let mode = if streaming {
        SendMode::Stream
    } else if match &params {
        SendParams::Tree(p) => immediately(p),
        // No `configuration`: what the tree's resolution gives for params without one.
        SendParams::Typed(_) => immediately(&Value::Null),
    } {
        SendMode::ReturnImmediately
    } else {
        SendMode::Blocking
    };
    let (request, raw_message, raw_text) = match params {
        SendParams::Tree(p) => {
            let (req, raw) = parse_send(p)?;
            (req, raw, None)
        }
        SendParams::Typed(t) => {
            let crate::typed_send::TypedSend { request, raw } = *t;
            (request, Value::Null, Some(raw))
        }
    };
    mgr.send_with(
        SendInput {
            request,
            raw_message,
            caller,
            extensions,
            mode,
            headers: http::HeaderMap::new(),
        },
        crate::tasks::SendExtras {
            raw: raw_text,
            headers: Some(headers),
        },
    )
    .await
}

const DEFAULT_PAGE: i32 = 50;
const MAX_PAGE: i32 = 100;

fn filter_key(f: &TaskFilter) -> String {
    format!(
        "{}|{}|{}|{}",
        f.owner,
        f.context_id.as_deref().unwrap_or(""),
        f.state.map(|s| s.as_str()).unwrap_or(""),
        f.status_timestamp_after
            .as_ref()
            .map(|t| t.unix_millis().to_string())
            .unwrap_or_default()
    )
}

fn fnv(s: &str) -> String {
    crate::card::etag(s.as_bytes())
        .trim_matches('"')
        .to_string()
}

fn task_ms(t: &Task) -> i64 {
    t.status
        .timestamp
        .as_ref()
        .map(|x| x.unix_millis() as i64)
        .unwrap_or(0)
}

fn encode_token(filter: &TaskFilter, last: &Task) -> String {
    let v = json!({"f": fnv(&filter_key(filter)), "t": task_ms(last), "i": last.id});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

fn decode_token(filter: &TaskFilter, token: &str) -> Result<(i64, String), A2aError> {
    let bad = || {
        A2aError::invalid_params(
            "invalid pageToken: send back the token of the previous page unchanged",
        )
        .with_meta("field", "pageToken")
    };
    if token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(A2aError::invalid_params(
            "invalid pageToken: numeric offsets are not accepted; use nextPageToken",
        )
        .with_meta("field", "pageToken"));
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let f = v.get("f").and_then(Value::as_str).ok_or_else(bad)?;
    if f != fnv(&filter_key(filter)) {
        return Err(A2aError::invalid_params(
            "invalid pageToken: it was issued for different filters",
        )
        .with_meta("field", "pageToken"));
    }
    let t = v.get("t").and_then(Value::as_i64).ok_or_else(bad)?;
    let i = v.get("i").and_then(Value::as_str).ok_or_else(bad)?;
    Ok((t, i.to_string()))
}

pub(crate) async fn list(
    mgr: &TaskManager,
    req: ListTasksRequest,
    caller: &CallerProfile,
) -> Result<ListTasksResponse, A2aError> {
    // Above the maximum: capped at 100 (the Camel guide), not refused.
    let page_size = req.page_size.unwrap_or(DEFAULT_PAGE).min(MAX_PAGE);
    if page_size < 1 {
        return Err(
            A2aError::invalid_params(format!("pageSize must be between 1 and {MAX_PAGE}"))
                .with_meta("field", "pageSize"),
        );
    }
    if req.history_length.is_some_and(|h| h < 0) {
        return Err(
            A2aError::invalid_params("historyLength must not be negative")
                .with_meta("field", "historyLength"),
        );
    }
    let filter = TaskFilter {
        owner: caller.owner_key(),
        context_id: req.context_id.clone().filter(|c| !c.is_empty()),
        state: req.status.filter(|s| *s != TaskState::Unspecified),
        status_timestamp_after: req.status_timestamp_after.clone(),
    };
    let after = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(tok) => Some(decode_token(&filter, tok)?),
    };
    let page = mgr
        .list_page(&filter, after.as_ref(), page_size as usize)
        .await?;
    let include_artifacts = req.include_artifacts.unwrap_or(false);
    let next = match page.tasks.last() {
        Some(last) if page.more => encode_token(&filter, &last.task),
        _ => String::new(),
    };
    let total = page.total;
    let tasks: Vec<Task> = page
        .tasks
        .into_iter()
        .map(|s| {
            let mut t = s.task;
            if !include_artifacts {
                t.artifacts.clear();
            }
            trim_history(t, req.history_length)
        })
        .collect();
    Ok(ListTasksResponse {
        tasks,
        next_page_token: next,
        page_size,
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    })
}

/// The buffer a SendMessage answer is written into starts this large: an echo answer (a task
/// with two history messages) is about 800 bytes, and a buffer grown from less is copied on
/// every regrowth.
pub(crate) const SENT_CAPACITY: usize = 1024;

/// The result of a 1.0 operation.
pub(crate) enum Outcome {
    /// A unary result (1.0 JSON).
    Unary(Value),
    /// The result of a SendMessage, typed: a 1.0 answer serialises it straight to bytes (no
    /// JSON tree); [`Outcome::into_unary`] gives its JSON.
    Sent(Box<crate::model::SendMessageResponse>),
    /// An event stream.
    Stream(Box<crate::tasks::Subscription>),
    /// A stream of exactly one event (a direct message reply).
    Single(Box<crate::model::StreamResponse>),
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
        crate::error::ErrorKind::UnsupportedOperation,
        "streaming is not supported by this agent (capabilities.streaming)",
    )
}

fn ser(v: impl serde::Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(v).map_err(|e| A2aError::internal(e.to_string()))
}

/// The `Last-Event-ID` of a resuming subscriber: an event number this agent sent.
fn last_event_id(h: &axum::http::HeaderMap) -> Result<Option<u64>, A2aError> {
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
    app: &crate::server::App,
    call: &crate::server::Call,
    method: &str,
    params: Value,
    version: crate::edge::version::Version,
) -> Result<Outcome, A2aError> {
    match method {
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => Ok(Outcome::Unary(
            crate::push::op(app, &call.caller, method, params, version).await?,
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
                    crate::error::ErrorKind::UnsupportedOperation,
                    "the extended agent card is not supported by this agent \
                     (capabilities.extendedAgentCard)",
                ));
            }
            match &app.extended_card {
                Some(c) => Ok(Outcome::Unary(c.json().clone())),
                None => Err(A2aError::new(
                    crate::error::ErrorKind::ExtendedAgentCardNotConfigured,
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
                return Err(A2aError::new(
                    crate::error::ErrorKind::PushNotificationNotSupported,
                    "Push Notification is not supported",
                ));
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
            d.settle(&mid).await;
            r
        }
        _ => dispatch(app, call, method, params).await,
    }
}

/// `SendMessage` (or, `streaming`, `SendStreamingMessage`) for `call`. A caller with params read
/// by type calls it directly: such params have no inline push config for [`dispatch_v`].
pub(crate) async fn send_op(
    app: &crate::server::App,
    call: &crate::server::Call,
    streaming: bool,
    params: SendParams,
) -> Result<Outcome, A2aError> {
    if streaming && !app.card.streaming() {
        return Err(streaming_unsupported());
    }
    let knobs = SendKnobs {
        header_override: crate::server::header_bool(&call.headers, "a2a-return-immediately"),
        endpoint_default: app.cfg.return_immediately,
    };
    match send(
        &app.manager,
        params,
        call.caller.clone(),
        call.extensions.clone(),
        knobs,
        streaming,
        crate::handler::Headers::lazy(call.headers.clone(), app.hidden_headers.clone()),
    )
    .await?
    {
        SendOutcome::Task(t) => Ok(Outcome::Sent(Box::new(
            crate::model::SendMessageResponse::Task(t),
        ))),
        SendOutcome::Stream(sub) => Ok(Outcome::Stream(Box::new(sub))),
        SendOutcome::Message(m) if streaming => Ok(Outcome::Single(Box::new(
            crate::model::StreamResponse::Message(m),
        ))),
        SendOutcome::Message(m) => Ok(Outcome::Sent(Box::new(
            crate::model::SendMessageResponse::Message(m),
        ))),
    }
}

/// Run the 1.0 method `method` with `params` for `call`.
pub(crate) async fn dispatch(
    app: &crate::server::App,
    call: &crate::server::Call,
    method: &str,
    params: Value,
) -> Result<Outcome, A2aError> {
    use crate::error::ErrorKind;
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
                serde_json::from_value(params).map_err(|e| {
                    A2aError::invalid_params(format!("invalid ListTasksRequest: {e}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence() {
        let p = json!({"configuration": {"returnImmediately": false, "blocking": false}});
        assert!(!resolve_return_immediately(&p, Some(true), true));
        let p = json!({"configuration": {"blocking": false}});
        assert!(resolve_return_immediately(&p, Some(false), false));
        let p = json!({"configuration": {"blocking": true}});
        assert!(!resolve_return_immediately(&p, Some(true), true));
        let p = json!({"configuration": {}});
        assert!(resolve_return_immediately(&p, Some(true), false));
        assert!(!resolve_return_immediately(&p, Some(false), true));
        assert!(resolve_return_immediately(&p, None, true));
        assert!(!resolve_return_immediately(&json!({}), None, false));
    }
}
