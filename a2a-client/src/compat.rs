//! Reaching 0.3 peers in 1.0 terms through `a2a-translate`.

use a2a_translate::{
    Method, Policy, Untranslatable, V1Request, V1Result, V03Result, to_v1, to_v03,
};
use a2a_types::v03::rest;
use a2a_types::{v1, v03};
use http::Method as Verb;
use serde_json::Value;

use crate::error::{A2aError, ClientError, ErrorKind};
use crate::transport::rest::Call;
use crate::transport::{Request, Response, parse_json};

pub(crate) fn refused(e: Untranslatable) -> ClientError {
    ClientError::Translation {
        version: "0.3",
        message: e.to_string(),
    }
}

/// The 1.0 request as the translator's typed call; `ListTasks` has no 0.3 form (H17).
pub(crate) fn v1_request(request: Request) -> Result<V1Request, ClientError> {
    Ok(match request {
        Request::SendMessage(r) => V1Request::SendMessage(r),
        Request::SendStreamingMessage(r) => V1Request::SendStreamingMessage(r),
        Request::GetTask(r) => V1Request::GetTask(r),
        Request::ListTasks(_) => {
            return Err(A2aError::local(
                ErrorKind::UnsupportedOperation,
                "ListTasks does not exist in A2A 0.3",
            )
            .into());
        }
        Request::CancelTask(r) => V1Request::CancelTask(r),
        Request::SubscribeToTask(r) => V1Request::SubscribeToTask(r),
        Request::CreatePushConfig(r) => V1Request::CreateTaskPushNotificationConfig(r),
        Request::GetPushConfig(r) => V1Request::GetTaskPushNotificationConfig(r),
        Request::ListPushConfigs(r) => V1Request::ListTaskPushNotificationConfigs(r),
        Request::DeletePushConfig(r) => V1Request::DeleteTaskPushNotificationConfig(r),
        Request::GetExtendedCard(r) => V1Request::GetExtendedAgentCard(r),
    })
}

/// The translator's method for a request.
pub(crate) fn method(request: &Request) -> Method {
    match request {
        Request::SendMessage(_) => Method::SendMessage,
        Request::SendStreamingMessage(_) => Method::SendStreamingMessage,
        Request::GetTask(_) => Method::GetTask,
        Request::ListTasks(_) => Method::ListTasks,
        Request::CancelTask(_) => Method::CancelTask,
        Request::SubscribeToTask(_) => Method::SubscribeToTask,
        Request::CreatePushConfig(_) => Method::CreateTaskPushNotificationConfig,
        Request::GetPushConfig(_) => Method::GetTaskPushNotificationConfig,
        Request::ListPushConfigs(_) => Method::ListTaskPushNotificationConfigs,
        Request::DeletePushConfig(_) => Method::DeleteTaskPushNotificationConfig,
        Request::GetExtendedCard(_) => Method::GetExtendedAgentCard,
    }
}

/// A typed 1.0 result as the transport's [`Response`].
pub(crate) fn response(result: V1Result) -> Response {
    match result {
        V1Result::SendMessage(r) => Response::SendMessage(r),
        V1Result::Task(t) => Response::Task(t),
        V1Result::ListTasks(l) => Response::ListTasks(l),
        V1Result::PushConfig(c) => Response::PushConfig(c),
        V1Result::PushConfigList(l) => Response::PushConfigList(l),
        V1Result::Deleted(_) => Response::Deleted,
        V1Result::Card(c) => Response::Card(c),
    }
}

/// The 0.3 JSON-RPC method name and params of a 1.0 request.
pub(crate) fn jsonrpc_request(
    request: Request,
    policy: Policy,
) -> Result<(&'static str, Option<Value>), ClientError> {
    let call = to_v03::request(v1_request(request)?, policy).map_err(refused)?;
    Ok((call.method_name(), call.params()))
}

/// A 0.3 JSON-RPC result as the 1.0 response of `request`.
pub(crate) fn jsonrpc_result(
    request: &Request,
    result: Value,
    policy: Policy,
) -> Result<Response, ClientError> {
    let typed = V03Result::parse(method(request), result)
        .map_err(|e| ClientError::Parse(format!("0.3 {}: {e}", request.name())))?;
    Ok(response(to_v1::result(typed, policy).map_err(refused)?))
}

/// One 0.3 JSON-RPC stream `result` as a 1.0 event.
pub(crate) fn stream_event(result: Value) -> Result<v1::StreamResponse, ClientError> {
    let typed: v03::StreamResult = parse_json("0.3 stream event", result)?;
    to_v1::stream_event(typed).map_err(refused)
}

/// The 0.3 HTTP+JSON exchange of a 1.0 request (paths below `/v1`, bodies in the ProtoJSON of
/// the 0.3 proto, resource names `tasks/{id}[/pushNotificationConfigs/{cid}]`).
pub(crate) fn rest_request(request: Request, policy: Policy) -> Result<Call, ClientError> {
    let to_value = |v: &dyn erased::Ser| v.value();
    // A proto3 reader takes an absent `configuration` as `blocking: false`, while 1.0 (and 0.3
    // JSON-RPC) mean blocking: always send a configuration so `blocking` is written.
    let send_body = |mut r: v1::SendMessageRequest| -> Result<Value, ClientError> {
        r.configuration.get_or_insert_with(Default::default);
        to_value(&to_v03::rest::send_message_request(r, policy).map_err(refused)?)
    };
    Ok(match v1_request(request)? {
        V1Request::SendMessage(r) => Call::new(Verb::POST, &["message:send"]).body(send_body(r)?),
        V1Request::SendStreamingMessage(r) => {
            Call::new(Verb::POST, &["message:stream"]).body(send_body(r)?)
        }
        V1Request::GetTask(r) => {
            let mut query = Vec::new();
            match r.history_length {
                Some(0) if policy.is_strict() => {
                    return Err(ClientError::Translation {
                        version: "0.3",
                        message: "historyLength: A2A 0.3 REST reads 0 as unlimited; 1.0 0 means no history".into(),
                    });
                }
                Some(n) if n > 0 => query.push(("historyLength".to_string(), n.to_string())),
                _ => {}
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
    request: &Request,
    value: Value,
    policy: Policy,
) -> Result<Response, ClientError> {
    Ok(match request {
        Request::SendMessage(_) => {
            let r: rest::SendMessageResponse = parse_json("0.3 REST send result", value)?;
            Response::SendMessage(to_v1::rest::send_message_result(r, policy).map_err(refused)?)
        }
        Request::GetTask(_) | Request::CancelTask(_) => {
            let t: rest::Task = parse_json("0.3 REST task", value)?;
            Response::Task(to_v1::rest::task(t, policy).map_err(refused)?)
        }
        Request::CreatePushConfig(_) | Request::GetPushConfig(_) => {
            let c: rest::TaskPushNotificationConfig = parse_json("0.3 REST push config", value)?;
            Response::PushConfig(to_v1::rest::task_push_config(c, policy).map_err(refused)?)
        }
        Request::ListPushConfigs(_) => {
            // The proto answer is `{configs, nextPageToken}`; accept a bare array as well.
            let list: rest::ListTaskPushNotificationConfigResponse = match value {
                Value::Array(_) => rest::ListTaskPushNotificationConfigResponse {
                    configs: parse_json("0.3 REST push config list", value)?,
                    next_page_token: None,
                },
                Value::Null => Default::default(),
                other => parse_json("0.3 REST push config list", other)?,
            };
            Response::PushConfigList(
                to_v1::rest::list_push_configs_result(list, policy).map_err(refused)?,
            )
        }
        Request::DeletePushConfig(_) => Response::Deleted,
        Request::GetExtendedCard(_) => {
            // The 0.3 proto card; some 0.3 servers answer with the JSON-RPC card shape instead.
            let card = match serde_json::from_value::<rest::AgentCard>(value.clone()) {
                Ok(c) => to_v1::rest::card(c, policy).map_err(refused)?.card,
                Err(_) => {
                    let c: v03::AgentCard = parse_json("0.3 agent card", value)?;
                    to_v1::card(c, policy).map_err(refused)?.card
                }
            };
            Response::Card(Box::new(card))
        }
        Request::ListTasks(_) | Request::SendStreamingMessage(_) | Request::SubscribeToTask(_) => {
            return Err(ClientError::Usage(format!(
                "{} has no unary 0.3 REST result",
                request.name()
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
