//! The 0.3 translation edge: one function per direction between the 0.3 wire forms (JSON-RPC dialect and
//! HTTP+JSON dialect) and the runtime's 1.0 model, all through `a2a-translate`.
//!
//! The translation policy is SDK-compatible: a 0.3 caller gets what 0.3 can carry rather than a
//! refusal for members it never sent.
//!
//! Also here: the HTTP+JSON push config requests of both versions read as 1.0 methods
//! ([`rest_push_request`]; 0.3 wraps the config), and their 1.0 results in the 0.3 form.

use super::version::Version;
use crate::error::{A2aError, ErrorKind};
use crate::model::{SendMessageResponse, StreamResponse, Task};
use a2a_translate::rpc::ParseError;
use a2a_translate::{Method, Policy, StreamTranslator, Untranslatable, V1Result, V03Request};
use a2a_types::v1::{ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig};
use a2a_types::v03;
use serde_json::{Value, json};

const POLICY: Policy = Policy::SdkCompatible;

fn untranslatable(e: Untranslatable) -> A2aError {
    A2aError::new(ErrorKind::UnsupportedOperation, e.to_string()).with_meta("path", e.path.clone())
}

fn ser(v: impl serde::Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(v).map_err(|e| A2aError::internal(e.to_string()))
}

/// A 0.3 JSON-RPC request -> the 1.0 method name and params.
pub(crate) fn v03_jsonrpc_request(
    method: &str,
    params: Value,
) -> Result<(&'static str, Value), A2aError> {
    let unknown = unknown_config(&params);
    let p = (!params.is_null()).then_some(params);
    let req = V03Request::parse(method, p).map_err(|e| match e {
        ParseError::UnknownMethod(m) => {
            A2aError::new(ErrorKind::MethodNotFound, format!("Method not found: {m}"))
        }
        ParseError::Invalid { source, .. } => {
            A2aError::invalid_params(format!("Invalid parameters: {source}"))
        }
    })?;
    let v1 = a2a_translate::to_v1::request(req, POLICY).map_err(untranslatable)?;
    let name = v1.method_name();
    let mut params = v1.params().unwrap_or_else(|| json!({}));
    keep_config(&mut params, unknown);
    Ok((name, params))
}

/// The members of a 0.3 send's `configuration` that 0.3 does not define (protocol extensions),
/// which the translation drops: kept for the handler (`RequestContext::configuration`).
fn unknown_config(params: &Value) -> Option<serde_json::Map<String, Value>> {
    // Every spelling the two 0.3 dialects read (JSON-RPC, HTTP+JSON; camelCase and snake_case).
    const KNOWN: [&str; 9] = [
        "acceptedOutputModes",
        "accepted_output_modes",
        "blocking",
        "historyLength",
        "history_length",
        "pushNotificationConfig",
        "push_notification_config",
        "pushNotification",
        "push_notification",
    ];
    let c = params.get("configuration")?.as_object()?;
    let rest: serde_json::Map<String, Value> = c
        .iter()
        .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!rest.is_empty()).then_some(rest)
}

/// Put `unknown` (from [`unknown_config`]) into the 1.0 `configuration` of `params`.
fn keep_config(params: &mut Value, unknown: Option<serde_json::Map<String, Value>>) {
    let (Some(unknown), Some(p)) = (unknown, params.as_object_mut()) else {
        return;
    };
    let c = p
        .entry("configuration")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(c) = c.as_object_mut() {
        for (k, v) in unknown {
            c.entry(k).or_insert(v);
        }
    }
}

/// A 1.0 JSON-RPC result of `method` -> the 0.3 result.
pub(crate) fn v03_result(method: &str, v1: Value) -> Result<Value, A2aError> {
    let m = Method::from_v1_name(method)
        .ok_or_else(|| A2aError::internal(format!("no 0.3 form for {method}")))?;
    if m == Method::ListTasks {
        // 0.3 JSON-RPC has no ListTasks; the 1.0 shape with 0.3 tasks is the nearest.
        return v03_list(v1, false);
    }
    let r = V1Result::parse(m, v1).map_err(|e| A2aError::internal(e.to_string()))?;
    let r = a2a_translate::to_v03::result(r, POLICY).map_err(untranslatable)?;
    Ok(r.to_value())
}

fn v03_list(v1: Value, rest: bool) -> Result<Value, A2aError> {
    let mut out = v1;
    let tasks: Vec<Task> = serde_json::from_value(out["tasks"].take())
        .map_err(|e| A2aError::internal(e.to_string()))?;
    let mut conv = Vec::with_capacity(tasks.len());
    for t in tasks {
        conv.push(if rest {
            ser(a2a_translate::to_v03::rest::task(t, POLICY).map_err(untranslatable)?)?
        } else {
            ser(a2a_translate::to_v03::task(t, POLICY).map_err(untranslatable)?)?
        });
    }
    out["tasks"] = Value::Array(conv);
    Ok(out)
}

/// Translates a 1.0 event stream for a 0.3 caller (JSON-RPC results or REST events).
pub struct V03Stream {
    tr: StreamTranslator,
    rest: bool,
}

impl V03Stream {
    /// A translator for the JSON-RPC (`rest = false`) or HTTP+JSON dialect.
    pub fn new(rest: bool) -> Self {
        V03Stream {
            tr: StreamTranslator::new(POLICY),
            rest,
        }
    }

    /// The 0.3 events for `ev`; `last` flushes the translator (the stream ends after `ev`).
    pub fn push(&mut self, ev: StreamResponse, last: bool) -> Vec<Result<Value, A2aError>> {
        let mut out = Vec::new();
        if self.rest {
            match self.tr.push_rest(ev) {
                Ok(v) => out.extend(v.into_iter().map(ser)),
                Err(e) => out.push(Err(untranslatable(e))),
            }
            if last {
                match self.tr.finish_rest() {
                    Ok(Some(e)) => out.push(ser(e)),
                    Ok(None) => {}
                    Err(e) => out.push(Err(untranslatable(e))),
                }
            }
        } else {
            match self.tr.push(ev) {
                Ok(v) => out.extend(v.map(ser)),
                Err(e) => out.push(Err(untranslatable(e))),
            }
            if last && let Some(e) = self.tr.finish() {
                out.push(ser(e));
            }
        }
        out
    }
}

/// A 0.3 REST send body -> 1.0 `SendMessageRequest` JSON.
pub fn v03_rest_send(body: Value) -> Result<Value, A2aError> {
    let unknown = unknown_config(&body);
    let r: v03::rest::SendMessageRequest = serde_json::from_value(body)
        .map_err(|e| A2aError::invalid_params(format!("invalid SendMessageRequest: {e}")))?;
    let v1 = a2a_translate::to_v1::rest::send_message_request(r, POLICY).map_err(untranslatable)?;
    let mut v = ser(v1)?;
    keep_config(&mut v, unknown);
    Ok(v)
}

/// A 1.0 send response -> 0.3 REST `SendMessageResponse`.
pub(crate) fn v03_rest_send_response(r: SendMessageResponse) -> Result<Value, A2aError> {
    ser(a2a_translate::to_v03::rest::send_message_result(r, POLICY).map_err(untranslatable)?)
}

/// A 1.0 `ListTasksResponse` -> 0.3 REST list body (1.0 shape, 0.3 tasks).
pub(crate) fn v03_rest_list(v: Value) -> Result<Value, A2aError> {
    v03_list(v, true)
}

/// A 1.0 task -> 0.3 REST task.
pub(crate) fn v03_rest_task(t: Task) -> Result<Value, A2aError> {
    ser(a2a_translate::to_v03::rest::task(t, POLICY).map_err(untranslatable)?)
}

/// A 1.0 card -> a 0.3 card (through a2a-translate; a minimal mapping if it refuses).
pub(crate) fn card_to_v03(card: &Value) -> Value {
    if let Ok(c) = serde_json::from_value::<a2a_types::v1::AgentCard>(card.clone())
        && let Ok(t) = a2a_translate::to_v03::card(c, POLICY)
        && let Ok(v) = serde_json::to_value(t.card)
    {
        return v;
    }
    minimal_card(card)
}

fn minimal_card(card: &Value) -> Value {
    let ifaces = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let pick = ifaces
        .iter()
        .find(|i| i.get("protocolVersion").and_then(Value::as_str) == Some("0.3"))
        .or_else(|| ifaces.first());
    json!({
        "protocolVersion": "0.3.0",
        "name": card.get("name").cloned().unwrap_or_default(),
        "description": card.get("description").cloned().unwrap_or_default(),
        "version": card.get("version").cloned().unwrap_or_default(),
        "url": pick.and_then(|i| i.get("url")).cloned().unwrap_or_default(),
        "preferredTransport": pick.and_then(|i| i.get("protocolBinding")).cloned().unwrap_or(json!("JSONRPC")),
        "capabilities": card.get("capabilities").cloned().unwrap_or(json!({})),
        "defaultInputModes": card.get("defaultInputModes").cloned().unwrap_or(json!([])),
        "defaultOutputModes": card.get("defaultOutputModes").cloned().unwrap_or(json!([])),
        "skills": card.get("skills").cloned().unwrap_or(json!([])),
    })
}

/// A 1.0 unary result of `method` (a 1.0 method name) -> the 0.3 HTTP+JSON body.
pub fn v03_rest_result(method: &str, r: Value) -> Result<Value, A2aError> {
    fn typed<T: serde::de::DeserializeOwned>(r: Value) -> Result<T, A2aError> {
        serde_json::from_value(r).map_err(|e| A2aError::internal(e.to_string()))
    }
    match method {
        "SendMessage" => v03_rest_send_response(typed(r)?),
        "ListTasks" => v03_rest_list(r),
        "GetExtendedAgentCard" => Ok(card_to_v03(&r)),
        m if m.contains("PushNotificationConfig") => rest_v03_push_result(m, r),
        _ => v03_rest_task(typed(r)?),
    }
}

/// The 1.0 method and params of a 0.3 HTTP+JSON push config request
/// (`/v1/tasks/{taskId}/pushNotificationConfigs[/{configId}]`).
pub fn v03_rest_push_request(
    method: &http::Method,
    task_id: &str,
    config_id: Option<&str>,
    query: Option<&str>,
    body: &bytes::Bytes,
) -> Result<(&'static str, Value), A2aError> {
    rest_push_request(method, Version::V03, task_id, config_id, query, body)
}

fn parse<T: serde::de::DeserializeOwned>(params: Value, what: &str) -> Result<T, A2aError> {
    serde_json::from_value(params)
        .map_err(|e| A2aError::invalid_params(format!("invalid {what}: {e}")))
}

fn rest_json(body: &bytes::Bytes) -> Result<Value, A2aError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(body)
        .map_err(|e| A2aError::new(ErrorKind::JsonParse, format!("Invalid JSON payload: {e}")))
}

/// The 1.0 method and params of a REST push config request
/// (`/tasks/{taskId}/pushNotificationConfigs[/{configId}]`).
pub(crate) fn rest_push_request(
    method: &http::Method,
    version: Version,
    task_id: &str,
    config_id: Option<&str>,
    query: Option<&str>,
    body: &bytes::Bytes,
) -> Result<(&'static str, Value), A2aError> {
    use http::Method as M;
    let wrong = || {
        A2aError::new(
            ErrorKind::MethodNotFound,
            "HTTP method not allowed on this path",
        )
        .with_status(405)
    };
    match (method, config_id) {
        (m, None) if m == M::POST => {
            let mut b = rest_json(body)?;
            // 0.3 REST sends `{name?, pushNotificationConfig: {...}}` (optionally wrapped in
            // `{parent, configId, config}`, the 0.3 proto's request); 1.0 sends the flat config.
            // Proto-JSON parsers accept the proto field names too (a2a-sdk 1.x's 0.3 client
            // sends `config_id`, `push_notification_config`).
            let config_id = ["configId", "config_id"]
                .iter()
                .find_map(|k| b.get(*k).and_then(Value::as_str).map(str::to_string));
            if let Some(c) = b.get_mut("config").map(Value::take) {
                b = c;
            }
            let inner = ["pushNotificationConfig", "push_notification_config"]
                .iter()
                .find_map(|k| b.get(*k).cloned());
            let mut c: TaskPushNotificationConfig = if let Some(mut inner) = inner {
                if let (Some(id), Some(o)) = (config_id, inner.as_object_mut()) {
                    o.entry("id").or_insert(Value::String(id));
                }
                let inner: a2a_types::v03::PushNotificationConfig =
                    parse(inner, "pushNotificationConfig")?;
                a2a_translate::to_v1::push_notification_config(
                    inner,
                    a2a_translate::Policy::SdkCompatible,
                )
                .map_err(|e| A2aError::invalid_params(e.to_string()))?
            } else {
                parse(b, "TaskPushNotificationConfig")?
            };
            let _ = version;
            c.task_id = Some(task_id.to_string());
            Ok(("CreateTaskPushNotificationConfig", ser(c)?))
        }
        (m, None) if m == M::GET => {
            let mut req = serde_json::json!({"taskId": task_id});
            for (k, val) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
                match k.as_ref() {
                    "pageSize" | "page_size" => {
                        let n: i32 = val.parse().map_err(|_| {
                            A2aError::invalid_params("pageSize must be an integer")
                                .with_meta("field", "pageSize")
                        })?;
                        req["pageSize"] = n.into();
                    }
                    "pageToken" | "page_token" => req["pageToken"] = val.as_ref().into(),
                    _ => {}
                }
            }
            Ok(("ListTaskPushNotificationConfigs", req))
        }
        (m, Some(c)) if m == M::GET => Ok((
            "GetTaskPushNotificationConfig",
            serde_json::json!({"taskId": task_id, "id": c}),
        )),
        (m, Some(c)) if m == M::DELETE => Ok((
            "DeleteTaskPushNotificationConfig",
            serde_json::json!({"taskId": task_id, "id": c}),
        )),
        _ => Err(wrong()),
    }
}

/// A 1.0 push config result as the 0.3 HTTP+JSON result.
fn rest_v03_push_result(method: &str, v1: Value) -> Result<Value, A2aError> {
    let p = a2a_translate::Policy::SdkCompatible;
    let tr = |e: a2a_translate::Untranslatable| A2aError::internal(e.to_string());
    match method {
        "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => {
            let c: TaskPushNotificationConfig = parse(v1, "config")?;
            ser(a2a_translate::to_v03::rest::task_push_config(c, p).map_err(tr)?)
        }
        "ListTaskPushNotificationConfigs" => {
            let l: ListTaskPushNotificationConfigsResponse = parse(v1, "list")?;
            ser(a2a_translate::to_v03::rest::list_push_configs_result(l, p).map_err(tr)?)
        }
        _ => Ok(Value::Object(Default::default())),
    }
}
