//! The JSON-RPC 2.0 binding (both versions): one `POST` per call to the interface URL; streams are
//! SSE whose every `data` is a JSON-RPC response with the request's `id`.
//!
//! 1.0 uses PascalCase methods (`SendMessage`) with the 1.0 request message as `params`; 0.3 uses
//! `message/send` and friends with the 0.3 shapes, produced and read by `a2a-translate`.

use a2a_types::v1;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    EventStream, HttpCore, Transport, V1Request, V1Result, is_event_stream, parse_json, snippet,
};
use crate::compat;
use crate::error::{A2aError, ClientError};
use crate::select::{SelectedInterface, Version};
use crate::sse::SseEvent;

/// JSON-RPC transport for one interface (1.0 or 0.3).
#[derive(Debug, Clone)]
pub struct JsonRpcTransport {
    core: HttpCore,
    interface: SelectedInterface,
}

#[derive(Serialize)]
struct Envelope<'a> {
    jsonrpc: &'static str,
    id: String,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<Value>,
}

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<Value>,
}

impl JsonRpcTransport {
    /// A transport for `interface` (its binding must be JSON-RPC).
    pub fn new(core: HttpCore, interface: SelectedInterface) -> JsonRpcTransport {
        JsonRpcTransport { core, interface }
    }

    fn version(&self) -> Version {
        self.interface.version
    }

    /// The method name and params for `request` in this transport's version.
    fn encode(&self, request: &V1Request) -> Result<(&'static str, Option<Value>), ClientError> {
        match self.version() {
            Version::V03 => compat::jsonrpc_request(request.clone(), self.core.policy),
            // The request message itself; `{}` rather than no params for a bare extended-card call.
            Version::V1 => Ok((
                request.method_name(),
                Some(
                    request
                        .params()
                        .unwrap_or_else(|| Value::Object(Default::default())),
                ),
            )),
        }
    }

    async fn post(
        &self,
        method: &str,
        params: Option<Value>,
        streaming: bool,
    ) -> Result<reqwest::Response, ClientError> {
        let envelope = Envelope {
            jsonrpc: "2.0",
            id: uuid::Uuid::new_v4().to_string(),
            method,
            params,
        };
        let body = serde_json::to_vec(&envelope).map_err(ClientError::parse)?;
        let url = self.interface.url.clone();
        self.core
            .send(self.version(), streaming, |c| {
                c.post(url.clone())
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(body.clone())
            })
            .await
    }

    /// Reads a unary JSON-RPC reply: `Ok(result)` or the A2A error.
    async fn reply(&self, response: reqwest::Response) -> Result<Value, ClientError> {
        let status = response.status();
        let url = response.url().to_string();
        let body = self.core.body(response).await?;
        match serde_json::from_slice::<Reply>(&body) {
            Ok(Reply { error: Some(e), .. }) => {
                let mut err = A2aError::from_jsonrpc(e.code, e.message, e.data);
                if !status.is_success() {
                    err.http_status = Some(status.as_u16());
                }
                Err(err.into())
            }
            // 0.3.26 answers a push-config delete with neither `result` nor `error`: read as null.
            _ if !status.is_success() => Err(ClientError::Http {
                status: status.as_u16(),
                url,
                body: snippet(&body),
            }),
            Ok(Reply { result, .. }) => Ok(result.unwrap_or(Value::Null)),
            Err(e) => Err(ClientError::Parse(format!(
                "not a JSON-RPC response ({e}): {}",
                snippet(&body)
            ))),
        }
    }
}

/// Reads a 1.0 result for `request`.
pub(crate) fn v1_result(request: &V1Request, result: Value) -> Result<V1Result, ClientError> {
    Ok(match request {
        V1Request::SendMessage(_) => {
            V1Result::SendMessage(parse_json("SendMessage result", result)?)
        }
        V1Request::GetTask(_) | V1Request::CancelTask(_) => {
            V1Result::Task(parse_json("Task", result)?)
        }
        V1Request::ListTasks(_) => V1Result::ListTasks(parse_json("ListTasks result", result)?),
        V1Request::CreateTaskPushNotificationConfig(_)
        | V1Request::GetTaskPushNotificationConfig(_) => {
            V1Result::PushConfig(parse_json("TaskPushNotificationConfig", result)?)
        }
        V1Request::ListTaskPushNotificationConfigs(_) => V1Result::PushConfigList(parse_json(
            "ListTaskPushNotificationConfigs result",
            result,
        )?),
        V1Request::DeleteTaskPushNotificationConfig(_) => V1Result::Deleted(v1::Empty {}),
        V1Request::GetExtendedAgentCard(_) => {
            V1Result::Card(Box::new(parse_json("AgentCard", result)?))
        }
        V1Request::SendStreamingMessage(_) | V1Request::SubscribeToTask(_) => {
            return Err(ClientError::Usage(format!(
                "{} is a streaming operation",
                request.method_name()
            )));
        }
    })
}

/// Reads one SSE event of a JSON-RPC stream.
fn stream_event(version: Version, ev: SseEvent) -> Result<Option<v1::StreamResponse>, ClientError> {
    if ev.data.trim().is_empty() {
        return Ok(None);
    }
    let reply: Reply = serde_json::from_str(&ev.data).map_err(|e| {
        ClientError::Parse(format!(
            "stream event is not a JSON-RPC response ({e}): {}",
            snippet(ev.data.as_bytes())
        ))
    })?;
    if let Some(e) = reply.error {
        return Err(A2aError::from_jsonrpc(e.code, e.message, e.data).into());
    }
    let result = reply
        .result
        .ok_or_else(|| ClientError::Parse("stream event has neither result nor error".into()))?;
    match version {
        Version::V1 => parse_json("StreamResponse", result).map(Some),
        Version::V03 => compat::stream_event(result).map(Some),
    }
}

#[async_trait::async_trait]
impl Transport for JsonRpcTransport {
    fn interface(&self) -> &SelectedInterface {
        &self.interface
    }

    fn activated_extensions(&self) -> Option<Vec<String>> {
        self.core.activated_extensions()
    }

    async fn call(&self, request: V1Request) -> Result<V1Result, ClientError> {
        super::expect_streaming(&request, false)?;
        let (method, params) = self.encode(&request)?;
        let response = self.post(method, params, false).await?;
        let result = self.reply(response).await?;
        match self.version() {
            Version::V1 => v1_result(&request, result),
            Version::V03 => compat::jsonrpc_result(&request, result, self.core.policy),
        }
    }

    async fn stream(&self, request: V1Request) -> Result<EventStream, ClientError> {
        super::expect_streaming(&request, true)?;
        let (method, params) = self.encode(&request)?;
        let response = self.post(method, params, true).await?;
        if !is_event_stream(&response) {
            // An error (or a misbehaving server) answered with a plain JSON-RPC reply.
            let result = self.reply(response).await?;
            return Err(ClientError::Parse(format!(
                "expected an event stream, got a JSON reply: {}",
                snippet(result.to_string().as_bytes())
            )));
        }
        let version = self.version();
        Ok(self
            .core
            .events(response, move |ev| stream_event(version, ev)))
    }
}
