//! The HTTP+JSON (REST) binding.
//!
//! 1.0 (spec §11, proto HTTP annotations): `POST /message:send`, `POST /message:stream`,
//! `GET /tasks/{id}`, `GET /tasks`, `POST /tasks/{id}:cancel`, `GET /tasks/{id}:subscribe`,
//! `POST|GET|DELETE /tasks/{taskId}/pushNotificationConfigs[/{id}]`, `GET /extendedAgentCard`,
//! all under `/{tenant}` when the interface has a tenant. Request bodies are the request message
//! without its path fields; GET parameters go in the query with camelCase names. Streams are SSE
//! with a bare `StreamResponse` per event. Errors are `google.rpc.Status` bodies classified by
//! their `ErrorInfo.reason`.
//!
//! Subscribe uses `GET`, as the normative proto annotation says (the prose says `POST`; the
//! official SDK servers accept both).
//!
//! 0.3 (ProtoJSON of the 0.3 proto, `/v1/...` paths) goes through `a2a-translate`'s REST dialect
//! functions (module `compat`).

use a2a_types::v1;
use http::Method;
use serde_json::Value;
use url::Url;

use super::{
    EventStream, HttpCore, Transport, V1Request, V1Result, is_event_stream, parse_json, snippet,
};
use crate::compat;
use crate::error::{A2aError, ClientError};
use crate::select::{SelectedInterface, Version};
use crate::sse::SseEvent;

/// HTTP+JSON transport for one interface (1.0 or 0.3).
#[derive(Debug, Clone)]
pub struct RestTransport {
    core: HttpCore,
    interface: SelectedInterface,
}

/// One HTTP exchange to perform.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub method: Method,
    /// Path segments below the base URL (and tenant), unencoded.
    pub path: Vec<String>,
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Call {
    pub(crate) fn new(method: Method, path: &[&str]) -> Call {
        Call {
            method,
            path: path.iter().map(|s| s.to_string()).collect(),
            query: Vec::new(),
            body: None,
        }
    }

    pub(crate) fn body(mut self, body: Value) -> Call {
        self.body = Some(body);
        self
    }

    pub(crate) fn query(mut self, query: Vec<(String, String)>) -> Call {
        self.query = query;
        self
    }
}

/// A serializable value as JSON without its `tenant` member (carried in the path instead).
pub(crate) fn body_without_tenant<T: serde::Serialize>(value: &T) -> Result<Value, ClientError> {
    let mut v = serde_json::to_value(value).map_err(ClientError::parse)?;
    if let Some(obj) = v.as_object_mut() {
        obj.remove("tenant");
    }
    Ok(v)
}

/// A request message as query parameters (spec §11.5: camelCase names, enums by name, booleans
/// as `true`/`false`, repeated fields repeated), leaving out `skip` members.
pub(crate) fn query_of<T: serde::Serialize>(
    value: &T,
    skip: &[&str],
) -> Result<Vec<(String, String)>, ClientError> {
    let v = serde_json::to_value(value).map_err(ClientError::parse)?;
    let mut out = Vec::new();
    if let Value::Object(obj) = v {
        for (k, v) in obj {
            if skip.contains(&k.as_str()) {
                continue;
            }
            match v {
                Value::Null => {}
                Value::String(s) => out.push((k, s)),
                Value::Array(items) => {
                    for item in items {
                        out.push((k.clone(), scalar(&item)?));
                    }
                }
                other => out.push((k, scalar(&other)?)),
            }
        }
    }
    Ok(out)
}

fn scalar(v: &Value) -> Result<String, ClientError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(ClientError::Usage(
            "nested values cannot be sent as query parameters".into(),
        )),
    }
}

impl RestTransport {
    /// A transport for `interface` (its binding must be HTTP+JSON).
    pub fn new(core: HttpCore, interface: SelectedInterface) -> RestTransport {
        RestTransport { core, interface }
    }

    fn version(&self) -> Version {
        self.interface.version
    }

    fn url(&self, call: &Call) -> Result<Url, ClientError> {
        let mut url = self.interface.url.clone();
        {
            let mut segs = url.path_segments_mut().map_err(|_| {
                ClientError::Usage(format!("{} cannot be a base URL", self.interface.url))
            })?;
            segs.pop_if_empty();
            if self.version() == Version::V1
                && let Some(tenant) = &self.interface.tenant
            {
                segs.push(tenant);
            }
            if self.version() == Version::V03 {
                segs.push("v1");
            }
            for s in &call.path {
                segs.push(s);
            }
        }
        Ok(url)
    }

    async fn send(&self, call: &Call, streaming: bool) -> Result<reqwest::Response, ClientError> {
        let mut url = self.url(call)?;
        if !call.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&call.query);
        }
        let body = match &call.body {
            Some(b) => Some(serde_json::to_vec(b).map_err(ClientError::parse)?),
            None => None,
        };
        let content_type = match self.version() {
            Version::V1 => "application/a2a+json",
            Version::V03 => "application/json",
        };
        self.core
            .send(self.version(), streaming, |c| {
                let mut rb = c.request(call.method.clone(), url.clone());
                if let Some(body) = &body {
                    rb = rb
                        .header(http::header::CONTENT_TYPE, content_type)
                        .body(body.clone());
                }
                rb
            })
            .await
    }

    /// Reads a unary response: the JSON body on success, the A2A error otherwise.
    async fn reply(&self, response: reqwest::Response) -> Result<Value, ClientError> {
        let status = response.status();
        let url = response.url().to_string();
        let body = self.core.body(response).await?;
        if !status.is_success() {
            return Err(
                match A2aError::from_rest_body(
                    status.as_u16(),
                    &body,
                    self.version() == Version::V03,
                ) {
                    Some(e) => e.into(),
                    None => ClientError::Http {
                        status: status.as_u16(),
                        url,
                        body: snippet(&body),
                    },
                },
            );
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&body).map_err(|e| {
            ClientError::Parse(format!("response is not JSON ({e}): {}", snippet(&body)))
        })
    }

    fn v1_call(&self, request: &V1Request) -> Result<Call, ClientError> {
        Ok(match request {
            V1Request::SendMessage(r) => {
                Call::new(Method::POST, &["message:send"]).body(body_without_tenant(r)?)
            }
            V1Request::SendStreamingMessage(r) => {
                Call::new(Method::POST, &["message:stream"]).body(body_without_tenant(r)?)
            }
            V1Request::GetTask(r) => {
                Call::new(Method::GET, &["tasks", &r.id]).query(query_of(r, &["tenant", "id"])?)
            }
            V1Request::ListTasks(r) => {
                Call::new(Method::GET, &["tasks"]).query(query_of(r, &["tenant"])?)
            }
            V1Request::CancelTask(r) => Call::new(Method::POST, &[&format!("{}:cancel", r.id)])
                .body(body_without_tenant(r)?)
                .under_tasks(),
            V1Request::SubscribeToTask(r) => {
                Call::new(Method::GET, &[&format!("{}:subscribe", r.id)]).under_tasks()
            }
            V1Request::CreateTaskPushNotificationConfig(r) => {
                let task_id = r
                    .task_id
                    .as_deref()
                    .ok_or_else(|| ClientError::Usage("push config needs a taskId".into()))?;
                Call::new(Method::POST, &["tasks", task_id, "pushNotificationConfigs"])
                    .body(body_without_tenant(r)?)
            }
            V1Request::GetTaskPushNotificationConfig(r) => Call::new(
                Method::GET,
                &["tasks", &r.task_id, "pushNotificationConfigs", &r.id],
            ),
            V1Request::ListTaskPushNotificationConfigs(r) => Call::new(
                Method::GET,
                &["tasks", &r.task_id, "pushNotificationConfigs"],
            )
            .query(query_of(r, &["tenant", "taskId"])?),
            V1Request::DeleteTaskPushNotificationConfig(r) => Call::new(
                Method::DELETE,
                &["tasks", &r.task_id, "pushNotificationConfigs", &r.id],
            ),
            V1Request::GetExtendedAgentCard(_) => Call::new(Method::GET, &["extendedAgentCard"]),
        })
    }

    fn encode(&self, request: &V1Request) -> Result<Call, ClientError> {
        match self.version() {
            Version::V1 => self.v1_call(request),
            Version::V03 => compat::rest_request(request.clone(), self.core.policy),
        }
    }
}

impl Call {
    /// Prefixes the path with `tasks` (for `{id}:verb` segments).
    fn under_tasks(mut self) -> Call {
        self.path.insert(0, "tasks".to_string());
        self
    }
}

/// Reads one SSE event of an HTTP+JSON stream.
fn stream_event(
    version: Version,
    policy: a2a_translate::Policy,
    ev: SseEvent,
) -> Result<Option<v1::StreamResponse>, ClientError> {
    if ev.data.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(&ev.data).map_err(|e| {
        ClientError::Parse(format!(
            "stream event is not JSON ({e}): {}",
            snippet(ev.data.as_bytes())
        ))
    })?;
    let is_error = ev.event.as_deref() == Some("error") || value.get("error").is_some();
    if is_error {
        let err = A2aError::from_rest_body(200, ev.data.as_bytes(), version == Version::V03)
            .unwrap_or_else(|| A2aError::from_jsonrpc(0, snippet(ev.data.as_bytes()), None));
        return Err(err.into());
    }
    match version {
        Version::V1 => parse_json("StreamResponse", value).map(Some),
        Version::V03 => compat::rest_stream_event(value, policy).map(Some),
    }
}

#[async_trait::async_trait]
impl Transport for RestTransport {
    fn interface(&self) -> &SelectedInterface {
        &self.interface
    }

    fn activated_extensions(&self) -> Option<Vec<String>> {
        self.core.activated_extensions()
    }

    async fn call(&self, request: V1Request) -> Result<V1Result, ClientError> {
        super::expect_streaming(&request, false)?;
        let call = self.encode(&request)?;
        let response = self.send(&call, false).await?;
        let value = self.reply(response).await?;
        match self.version() {
            Version::V1 => super::jsonrpc::v1_result(&request, value),
            Version::V03 => compat::rest_result(&request, value, self.core.policy),
        }
    }

    async fn stream(&self, request: V1Request) -> Result<EventStream, ClientError> {
        super::expect_streaming(&request, true)?;
        let call = self.encode(&request)?;
        let response = self.send(&call, true).await?;
        if !response.status().is_success() || !is_event_stream(&response) {
            let value = self.reply(response).await?;
            return Err(ClientError::Parse(format!(
                "expected an event stream, got: {}",
                snippet(value.to_string().as_bytes())
            )));
        }
        let version = self.version();
        let policy = self.core.policy;
        Ok(self
            .core
            .events(response, move |ev| stream_event(version, policy, ev)))
    }
}
