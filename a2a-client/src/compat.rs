//! Reaching 0.3 peers in 1.0 terms through `a2a-translate`.

use a2a_translate::{Policy, Untranslatable, V1Request, V1Result, V03Result, to_v1, to_v03};
use a2a_types::v03::rest;
use a2a_types::{v1, v03};
use http::Method as Verb;
use serde_json::Value;

use crate::error::{A2aError, ClientError, ErrorKind};
use crate::transport::parse_json;
use crate::transport::rest::Call;

pub(crate) fn refused(e: Untranslatable) -> ClientError {
    ClientError::Translation {
        version: "0.3",
        message: e.to_string(),
    }
}

/// Refuses what has no 0.3 form: `ListTasks` (H17).
fn exists_in_v03(request: &V1Request) -> Result<(), ClientError> {
    if let V1Request::ListTasks(_) = request {
        return Err(A2aError::local(
            ErrorKind::UnsupportedOperation,
            "ListTasks does not exist in A2A 0.3",
        )
        .into());
    }
    Ok(())
}

/// Whether `request` asks for no history (1.0 `historyLength: 0`), which 0.3 cannot say: 0.3
/// reads `0` as no limit.
fn asks_no_history(request: &V1Request) -> bool {
    let h = match request {
        V1Request::GetTask(r) => r.history_length,
        V1Request::SendMessage(r) | V1Request::SendStreamingMessage(r) => {
            r.configuration.as_ref().and_then(|c| c.history_length)
        }
        _ => None,
    };
    h == Some(0)
}

/// The request as sent to a 0.3 agent: a 1.0 `historyLength: 0` is asked as the smallest 0.3
/// limit ([`to_v03::history_request`]) and the answer trimmed by [`trim_history`] (H20).
fn ask_history(mut request: V1Request) -> V1Request {
    match &mut request {
        V1Request::GetTask(r) => r.history_length = to_v03::history_request(r.history_length),
        V1Request::SendMessage(r) | V1Request::SendStreamingMessage(r) => {
            if let Some(c) = r.configuration.as_mut() {
                c.history_length = to_v03::history_request(c.history_length);
            }
        }
        _ => {}
    }
    request
}

/// Trims a 0.3 agent's answer to what a 1.0 `historyLength: 0` asked for: no history.
fn trim_history(request: &V1Request, mut result: V1Result) -> V1Result {
    if asks_no_history(request) {
        match &mut result {
            V1Result::Task(t) | V1Result::SendMessage(v1::SendMessageResponse::Task(t)) => {
                t.history.clear()
            }
            _ => {}
        }
    }
    result
}

/// The 0.3 JSON-RPC method name and params of a 1.0 request.
pub(crate) fn jsonrpc_request(
    request: V1Request,
    policy: Policy,
) -> Result<(&'static str, Option<Value>), ClientError> {
    exists_in_v03(&request)?;
    let call = to_v03::request(ask_history(request), policy).map_err(refused)?;
    Ok((call.method_name(), call.params()))
}

/// A 0.3 JSON-RPC result as the 1.0 response of `request`.
pub(crate) fn jsonrpc_result(
    request: &V1Request,
    result: Value,
    policy: Policy,
) -> Result<V1Result, ClientError> {
    let typed = V03Result::parse(request.method(), result)
        .map_err(|e| ClientError::Parse(format!("0.3 {}: {e}", request.method_name())))?;
    let result = to_v1::result(typed, policy).map_err(refused)?;
    Ok(trim_history(request, result))
}

/// One 0.3 JSON-RPC stream `result` as a 1.0 event.
pub(crate) fn stream_event(result: Value) -> Result<v1::StreamResponse, ClientError> {
    let typed: v03::StreamResult = parse_json("0.3 stream event", result)?;
    to_v1::stream_event(typed).map_err(refused)
}

/// The 0.3 HTTP+JSON exchange of a 1.0 request (paths below `/v1`, bodies in the ProtoJSON of
/// the 0.3 proto, resource names `tasks/{id}[/pushNotificationConfigs/{cid}]`).
pub(crate) fn rest_request(request: V1Request, policy: Policy) -> Result<Call, ClientError> {
    let request = ask_history(request);
    let to_value = |v: &dyn erased::Ser| v.value();
    // A proto3 reader takes an absent `configuration` as `blocking: false`, while 1.0 (and 0.3
    // JSON-RPC) mean blocking: always send a configuration so `blocking` is written.
    let send_body = |mut r: v1::SendMessageRequest| -> Result<Value, ClientError> {
        r.configuration.get_or_insert_with(Default::default);
        to_value(&to_v03::rest::send_message_request(r, policy).map_err(refused)?)
    };
    Ok(match request {
        V1Request::SendMessage(r) => Call::new(Verb::POST, &["message:send"]).body(send_body(r)?),
        V1Request::SendStreamingMessage(r) => {
            Call::new(Verb::POST, &["message:stream"]).body(send_body(r)?)
        }
        V1Request::GetTask(r) => {
            let mut query = Vec::new();
            // (a 1.0 `0` was asked as 1 by `ask_history`; 0.3 REST would read 0 as no limit)
            if let Some(n) = r.history_length.filter(|n| *n > 0) {
                query.push(("historyLength".to_string(), n.to_string()));
            }
            no_tenant(&r.tenant, policy)?;
            Call::new(Verb::GET, &["tasks", &r.id]).query(query)
        }
        V1Request::CancelTask(r) => {
            no_tenant(&r.tenant, policy)?;
            if r.metadata.is_some() && policy.is_strict() {
                return Err(ClientError::Translation {
                    version: "0.3",
                    message: "metadata: the A2A 0.3 REST CancelTask request has no metadata".into(),
                });
            }
            let body = rest::CancelTaskRequest {
                name: format!("tasks/{}", r.id),
            };
            Call::new(Verb::POST, &["tasks", &format!("{}:cancel", r.id)]).body(to_value(&body)?)
        }
        V1Request::SubscribeToTask(r) => {
            no_tenant(&r.tenant, policy)?;
            Call::new(Verb::GET, &["tasks", &format!("{}:subscribe", r.id)])
        }
        V1Request::CreateTaskPushNotificationConfig(c) => {
            let task_id = c
                .task_id
                .clone()
                .ok_or_else(|| ClientError::Usage("push config needs a taskId".into()))?;
            let config_id = c.id.clone().unwrap_or_default();
            let config = to_v03::rest::task_push_config(c, policy).map_err(refused)?;
            let body = rest::CreateTaskPushNotificationConfigRequest {
                parent: format!("tasks/{task_id}"),
                config_id,
                config,
            };
            Call::new(Verb::POST, &["tasks", &task_id, "pushNotificationConfigs"])
                .body(to_value(&body)?)
        }
        V1Request::GetTaskPushNotificationConfig(r) => {
            no_tenant(&r.tenant, policy)?;
            Call::new(
                Verb::GET,
                &["tasks", &r.task_id, "pushNotificationConfigs", &r.id],
            )
        }
        V1Request::ListTaskPushNotificationConfigs(r) => {
            no_tenant(&r.tenant, policy)?;
            let mut query = Vec::new();
            if let Some(n) = r.page_size {
                query.push(("pageSize".to_string(), n.to_string()));
            }
            if let Some(t) = &r.page_token {
                query.push(("pageToken".to_string(), t.clone()));
            }
            Call::new(Verb::GET, &["tasks", &r.task_id, "pushNotificationConfigs"]).query(query)
        }
        V1Request::DeleteTaskPushNotificationConfig(r) => {
            no_tenant(&r.tenant, policy)?;
            Call::new(
                Verb::DELETE,
                &["tasks", &r.task_id, "pushNotificationConfigs", &r.id],
            )
        }
        V1Request::GetExtendedAgentCard(r) => {
            no_tenant(&r.tenant, policy)?;
            Call::new(Verb::GET, &["card"])
        }
        V1Request::ListTasks(_) => {
            return Err(A2aError::local(
                ErrorKind::UnsupportedOperation,
                "ListTasks does not exist in A2A 0.3",
            )
            .into());
        }
    })
}

fn no_tenant(tenant: &Option<String>, policy: Policy) -> Result<(), ClientError> {
    if tenant.is_some() && policy.is_strict() {
        return Err(ClientError::Translation {
            version: "0.3",
            message: "tenant: A2A 0.3 has no tenant".into(),
        });
    }
    Ok(())
}

/// Serialization to a JSON value without naming the type (the REST bodies differ per call).
mod erased {
    use super::ClientError;

    pub(crate) trait Ser {
        fn value(&self) -> Result<serde_json::Value, ClientError>;
    }

    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> Result<serde_json::Value, ClientError> {
            serde_json::to_value(self).map_err(ClientError::parse)
        }
    }
}

/// A 0.3 HTTP+JSON result as the 1.0 response of `request`.
pub(crate) fn rest_result(
    request: &V1Request,
    value: Value,
    policy: Policy,
) -> Result<V1Result, ClientError> {
    rest_result_untrimmed(request, value, policy).map(|r| trim_history(request, r))
}

fn rest_result_untrimmed(
    request: &V1Request,
    value: Value,
    policy: Policy,
) -> Result<V1Result, ClientError> {
    Ok(match request {
        V1Request::SendMessage(_) => {
            let r: rest::SendMessageResponse = parse_json("0.3 REST send result", value)?;
            V1Result::SendMessage(to_v1::rest::send_message_result(r, policy).map_err(refused)?)
        }
        V1Request::GetTask(_) | V1Request::CancelTask(_) => {
            let t: rest::Task = parse_json("0.3 REST task", value)?;
            V1Result::Task(to_v1::rest::task(t, policy).map_err(refused)?)
        }
        V1Request::CreateTaskPushNotificationConfig(_)
        | V1Request::GetTaskPushNotificationConfig(_) => {
            let c: rest::TaskPushNotificationConfig = parse_json("0.3 REST push config", value)?;
            V1Result::PushConfig(to_v1::rest::task_push_config(c, policy).map_err(refused)?)
        }
        V1Request::ListTaskPushNotificationConfigs(_) => {
            // The proto answer is `{configs, nextPageToken}`; accept a bare array as well.
            let list: rest::ListTaskPushNotificationConfigResponse = match value {
                Value::Array(_) => rest::ListTaskPushNotificationConfigResponse {
                    configs: parse_json("0.3 REST push config list", value)?,
                    next_page_token: None,
                },
                Value::Null => Default::default(),
                other => parse_json("0.3 REST push config list", other)?,
            };
            V1Result::PushConfigList(
                to_v1::rest::list_push_configs_result(list, policy).map_err(refused)?,
            )
        }
        V1Request::DeleteTaskPushNotificationConfig(_) => V1Result::Deleted(v1::Empty {}),
        V1Request::GetExtendedAgentCard(_) => {
            // The 0.3 proto card; some 0.3 servers answer with the JSON-RPC card shape instead.
            let card = match serde_json::from_value::<rest::AgentCard>(value.clone()) {
                Ok(c) => to_v1::rest::card(c, policy).map_err(refused)?.card,
                Err(_) => {
                    let c: v03::AgentCard = parse_json("0.3 agent card", value)?;
                    to_v1::card(c, policy).map_err(refused)?.card
                }
            };
            V1Result::Card(Box::new(card))
        }
        V1Request::ListTasks(_)
        | V1Request::SendStreamingMessage(_)
        | V1Request::SubscribeToTask(_) => {
            return Err(ClientError::Usage(format!(
                "{} has no unary 0.3 REST result",
                request.method_name()
            )));
        }
    })
}

/// One 0.3 HTTP+JSON stream event (a wrapped P0 `StreamResponse`) as a 1.0 event.
pub(crate) fn rest_stream_event(
    value: Value,
    policy: Policy,
) -> Result<v1::StreamResponse, ClientError> {
    let e: rest::StreamResponse = parse_json("0.3 REST stream event", value)?;
    to_v1::rest::stream_event(e, policy).map_err(refused)
}
