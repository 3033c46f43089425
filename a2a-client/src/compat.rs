//! Reaching 0.3 peers in 1.0 terms through `a2a-translate`.

use a2a_translate::{
    Method, Policy, Untranslatable, V1Request, V1Result, V03Result, to_v1, to_v03,
};
use a2a_types::{v1, v03};
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

/// The 0.3 HTTP+JSON exchange of a 1.0 request.
pub(crate) fn rest_request(request: Request, _policy: Policy) -> Result<Call, ClientError> {
    let _ = v1_request(request)?;
    Err(ClientError::Usage(
        "0.3 HTTP+JSON is not available yet in this client".into(),
    ))
}

/// A 0.3 HTTP+JSON result as the 1.0 response of `request`.
pub(crate) fn rest_result(
    request: &Request,
    _value: Value,
    _policy: Policy,
) -> Result<Response, ClientError> {
    Err(ClientError::Usage(format!(
        "0.3 HTTP+JSON {} is not available yet in this client",
        request.name()
    )))
}

/// One 0.3 HTTP+JSON stream event as a 1.0 event.
pub(crate) fn rest_stream_event(_value: Value) -> Result<v1::StreamResponse, ClientError> {
    Err(ClientError::Usage(
        "0.3 HTTP+JSON streams are not available yet in this client".into(),
    ))
}
