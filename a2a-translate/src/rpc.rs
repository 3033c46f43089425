//! Typed JSON-RPC calls and results of both versions, keyed by method.
//!
//! A request's `params` (or a response's `result`) is parsed **once** into the typed model
//! of its method ([`V03Request::parse`], [`V1Request::parse`], [`V03Result::parse`],
//! [`V1Result::parse`]); translation then works on the typed values.

use a2a_types::{v1, v03};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A 1.0 operation, with its method names in both versions: the types' one operation table.
pub use a2a_types::jsonrpc::V1Method as Method;

/// Why a request or result could not be parsed into its typed model.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The method name belongs to neither set.
    #[error("unknown method {0:?}")]
    UnknownMethod(String),
    /// The params/result do not match the method's model.
    #[error("invalid {what}: {source}")]
    Invalid {
        /// `params` or `result`.
        what: &'static str,
        /// The serde error, with its position.
        #[source]
        source: serde_json::Error,
    },
}

fn from<T: for<'de> Deserialize<'de>>(what: &'static str, v: impl Input) -> Result<T, ParseError> {
    v.read(what)
}

/// A JSON value to read a typed result from: owned (moved into the model) or borrowed (read in
/// place, for a caller that keeps the value).
pub trait Input {
    /// Reads `T` from the value (`what` names it in the error).
    fn read<T: for<'de> Deserialize<'de>>(self, what: &'static str) -> Result<T, ParseError>;
}

impl Input for Value {
    fn read<T: for<'de> Deserialize<'de>>(self, what: &'static str) -> Result<T, ParseError> {
        serde_json::from_value(self).map_err(|source| ParseError::Invalid { what, source })
    }
}

impl Input for &Value {
    fn read<T: for<'de> Deserialize<'de>>(self, what: &'static str) -> Result<T, ParseError> {
        T::deserialize(self).map_err(|source| ParseError::Invalid { what, source })
    }
}

fn to(v: impl Serialize) -> Value {
    // The models serialize infallibly (string keys, no non-finite floats by construction).
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A 0.3 JSON-RPC call: the method and its typed `params`.
#[derive(Debug, Clone, PartialEq)]
pub enum V03Request {
    /// `message/send`.
    SendMessage(v03::MessageSendParams),
    /// `message/stream`.
    SendStreamingMessage(v03::MessageSendParams),
    /// `tasks/get`.
    GetTask(v03::TaskQueryParams),
    /// `tasks/cancel`.
    CancelTask(v03::TaskIdParams),
    /// `tasks/resubscribe`.
    Resubscribe(v03::TaskIdParams),
    /// `tasks/pushNotificationConfig/set`.
    SetTaskPushNotificationConfig(v03::TaskPushNotificationConfig),
    /// `tasks/pushNotificationConfig/get` (`id` = task id).
    GetTaskPushNotificationConfig(v03::GetTaskPushNotificationConfigParams),
    /// `tasks/pushNotificationConfig/list` (`id` = task id).
    ListTaskPushNotificationConfig(v03::ListTaskPushNotificationConfigParams),
    /// `tasks/pushNotificationConfig/delete` (`id` = task id).
    DeleteTaskPushNotificationConfig(v03::DeleteTaskPushNotificationConfigParams),
    /// `agent/getAuthenticatedExtendedCard` (no params).
    GetAuthenticatedExtendedCard,
}

impl V03Request {
    /// Parses `params` for the 0.3 `method`.
    pub fn parse(method: &str, params: Option<Value>) -> Result<Self, ParseError> {
        let m = Method::from_v03_name(method)
            .ok_or_else(|| ParseError::UnknownMethod(method.into()))?;
        let p = params.unwrap_or(Value::Null);
        Ok(match m {
            Method::SendMessage => V03Request::SendMessage(from("params", p)?),
            Method::SendStreamingMessage => V03Request::SendStreamingMessage(from("params", p)?),
            Method::GetTask => V03Request::GetTask(from("params", p)?),
            Method::CancelTask => V03Request::CancelTask(from("params", p)?),
            Method::SubscribeToTask => V03Request::Resubscribe(from("params", p)?),
            Method::CreateTaskPushNotificationConfig => {
                V03Request::SetTaskPushNotificationConfig(from("params", p)?)
            }
            Method::GetTaskPushNotificationConfig => {
                V03Request::GetTaskPushNotificationConfig(from("params", p)?)
            }
            Method::ListTaskPushNotificationConfigs => {
                V03Request::ListTaskPushNotificationConfig(from("params", p)?)
            }
            Method::DeleteTaskPushNotificationConfig => {
                V03Request::DeleteTaskPushNotificationConfig(from("params", p)?)
            }
            Method::GetExtendedAgentCard => V03Request::GetAuthenticatedExtendedCard,
            Method::ListTasks => return Err(ParseError::UnknownMethod(method.into())),
        })
    }

    /// The operation.
    pub fn method(&self) -> Method {
        match self {
            V03Request::SendMessage(_) => Method::SendMessage,
            V03Request::SendStreamingMessage(_) => Method::SendStreamingMessage,
            V03Request::GetTask(_) => Method::GetTask,
            V03Request::CancelTask(_) => Method::CancelTask,
            V03Request::Resubscribe(_) => Method::SubscribeToTask,
            V03Request::SetTaskPushNotificationConfig(_) => {
                Method::CreateTaskPushNotificationConfig
            }
            V03Request::GetTaskPushNotificationConfig(_) => Method::GetTaskPushNotificationConfig,
            V03Request::ListTaskPushNotificationConfig(_) => {
                Method::ListTaskPushNotificationConfigs
            }
            V03Request::DeleteTaskPushNotificationConfig(_) => {
                Method::DeleteTaskPushNotificationConfig
            }
            V03Request::GetAuthenticatedExtendedCard => Method::GetExtendedAgentCard,
        }
    }

    /// The 0.3 method name.
    pub fn method_name(&self) -> &'static str {
        self.method().v03_name().unwrap_or_default()
    }

    /// The `params` JSON (`None` for the extended-card call, which takes none).
    pub fn params(&self) -> Option<Value> {
        Some(match self {
            V03Request::SendMessage(p) | V03Request::SendStreamingMessage(p) => to(p),
            V03Request::GetTask(p) => to(p),
            V03Request::CancelTask(p) | V03Request::Resubscribe(p) => to(p),
            V03Request::SetTaskPushNotificationConfig(p) => to(p),
            V03Request::GetTaskPushNotificationConfig(p) => to(p),
            V03Request::ListTaskPushNotificationConfig(p) => to(p),
            V03Request::DeleteTaskPushNotificationConfig(p) => to(p),
            V03Request::GetAuthenticatedExtendedCard => return None,
        })
    }
}

/// A 1.0 JSON-RPC call: the method and its typed `params` (the request message).
#[derive(Debug, Clone, PartialEq)]
pub enum V1Request {
    /// `SendMessage`.
    SendMessage(v1::SendMessageRequest),
    /// `SendStreamingMessage`.
    SendStreamingMessage(v1::SendMessageRequest),
    /// `GetTask`.
    GetTask(v1::GetTaskRequest),
    /// `ListTasks`.
    ListTasks(v1::ListTasksRequest),
    /// `CancelTask`.
    CancelTask(v1::CancelTaskRequest),
    /// `SubscribeToTask`.
    SubscribeToTask(v1::SubscribeToTaskRequest),
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig(v1::TaskPushNotificationConfig),
    /// `GetTaskPushNotificationConfig` (`id` = config id).
    GetTaskPushNotificationConfig(v1::GetTaskPushNotificationConfigRequest),
    /// `ListTaskPushNotificationConfigs`.
    ListTaskPushNotificationConfigs(v1::ListTaskPushNotificationConfigsRequest),
    /// `DeleteTaskPushNotificationConfig` (`id` = config id).
    DeleteTaskPushNotificationConfig(v1::DeleteTaskPushNotificationConfigRequest),
    /// `GetExtendedAgentCard`.
    GetExtendedAgentCard(v1::GetExtendedAgentCardRequest),
}

impl V1Request {
    /// Parses `params` for the 1.0 `method` (absent params read as `{}`).
    pub fn parse(method: &str, params: Option<Value>) -> Result<Self, ParseError> {
        let m =
            Method::from_v1_name(method).ok_or_else(|| ParseError::UnknownMethod(method.into()))?;
        let p = params.unwrap_or_else(|| Value::Object(Default::default()));
        Ok(match m {
            Method::SendMessage => V1Request::SendMessage(from("params", p)?),
            Method::SendStreamingMessage => V1Request::SendStreamingMessage(from("params", p)?),
            Method::GetTask => V1Request::GetTask(from("params", p)?),
            Method::ListTasks => V1Request::ListTasks(from("params", p)?),
            Method::CancelTask => V1Request::CancelTask(from("params", p)?),
            Method::SubscribeToTask => V1Request::SubscribeToTask(from("params", p)?),
            Method::CreateTaskPushNotificationConfig => {
                V1Request::CreateTaskPushNotificationConfig(from("params", p)?)
            }
            Method::GetTaskPushNotificationConfig => {
                V1Request::GetTaskPushNotificationConfig(from("params", p)?)
            }
            Method::ListTaskPushNotificationConfigs => {
                V1Request::ListTaskPushNotificationConfigs(from("params", p)?)
            }
            Method::DeleteTaskPushNotificationConfig => {
                V1Request::DeleteTaskPushNotificationConfig(from("params", p)?)
            }
            Method::GetExtendedAgentCard => V1Request::GetExtendedAgentCard(from("params", p)?),
        })
    }

    /// The operation.
    pub fn method(&self) -> Method {
        match self {
            V1Request::SendMessage(_) => Method::SendMessage,
            V1Request::SendStreamingMessage(_) => Method::SendStreamingMessage,
            V1Request::GetTask(_) => Method::GetTask,
            V1Request::ListTasks(_) => Method::ListTasks,
            V1Request::CancelTask(_) => Method::CancelTask,
            V1Request::SubscribeToTask(_) => Method::SubscribeToTask,
            V1Request::CreateTaskPushNotificationConfig(_) => {
                Method::CreateTaskPushNotificationConfig
            }
            V1Request::GetTaskPushNotificationConfig(_) => Method::GetTaskPushNotificationConfig,
            V1Request::ListTaskPushNotificationConfigs(_) => {
                Method::ListTaskPushNotificationConfigs
            }
            V1Request::DeleteTaskPushNotificationConfig(_) => {
                Method::DeleteTaskPushNotificationConfig
            }
            V1Request::GetExtendedAgentCard(_) => Method::GetExtendedAgentCard,
        }
    }

    /// The 1.0 method name.
    pub fn method_name(&self) -> &'static str {
        self.method().v1_name()
    }

    /// Whether the call is answered with a stream.
    pub fn is_streaming(&self) -> bool {
        self.method().is_streaming()
    }

    /// Sets the `tenant` member of the request message.
    pub fn set_tenant(&mut self, tenant: Option<String>) {
        let slot = match self {
            V1Request::SendMessage(r) | V1Request::SendStreamingMessage(r) => &mut r.tenant,
            V1Request::GetTask(r) => &mut r.tenant,
            V1Request::ListTasks(r) => &mut r.tenant,
            V1Request::CancelTask(r) => &mut r.tenant,
            V1Request::SubscribeToTask(r) => &mut r.tenant,
            V1Request::CreateTaskPushNotificationConfig(r) => &mut r.tenant,
            V1Request::GetTaskPushNotificationConfig(r) => &mut r.tenant,
            V1Request::ListTaskPushNotificationConfigs(r) => &mut r.tenant,
            V1Request::DeleteTaskPushNotificationConfig(r) => &mut r.tenant,
            V1Request::GetExtendedAgentCard(r) => &mut r.tenant,
        };
        *slot = tenant;
    }

    /// The `params` JSON (`None` for a `GetExtendedAgentCard` without a tenant).
    pub fn params(&self) -> Option<Value> {
        Some(match self {
            V1Request::SendMessage(p) | V1Request::SendStreamingMessage(p) => to(p),
            V1Request::GetTask(p) => to(p),
            V1Request::ListTasks(p) => to(p),
            V1Request::CancelTask(p) => to(p),
            V1Request::SubscribeToTask(p) => to(p),
            V1Request::CreateTaskPushNotificationConfig(p) => to(p),
            V1Request::GetTaskPushNotificationConfig(p) => to(p),
            V1Request::ListTaskPushNotificationConfigs(p) => to(p),
            V1Request::DeleteTaskPushNotificationConfig(p) => to(p),
            V1Request::GetExtendedAgentCard(p) if p.tenant.is_none() => return None,
            V1Request::GetExtendedAgentCard(p) => to(p),
        })
    }
}

/// A 0.3 JSON-RPC `result`, typed by the method that produced it.
#[derive(Debug, Clone, PartialEq)]
pub enum V03Result {
    /// `message/send`: a bare `Task` or `Message` (`kind`-discriminated).
    SendMessage(v03::SendMessageResult),
    /// `tasks/get`, `tasks/cancel`: a `Task`.
    Task(v03::Task),
    /// `tasks/pushNotificationConfig/set` and `/get`.
    PushConfig(v03::TaskPushNotificationConfig),
    /// `tasks/pushNotificationConfig/list`: a bare array.
    PushConfigList(Vec<v03::TaskPushNotificationConfig>),
    /// `tasks/pushNotificationConfig/delete`: `null`.
    Deleted,
    /// `agent/getAuthenticatedExtendedCard`.
    Card(Box<v03::AgentCard>),
}

impl V03Result {
    /// Parses the `result` of `method` (streaming methods have per-event results: use
    /// [`v03::StreamResult`] directly). `result` is a [`Value`] or a `&Value`.
    pub fn parse(method: Method, result: impl Input) -> Result<Self, ParseError> {
        Ok(match method {
            Method::SendMessage => V03Result::SendMessage(from("result", result)?),
            Method::GetTask | Method::CancelTask => V03Result::Task(from("result", result)?),
            Method::CreateTaskPushNotificationConfig | Method::GetTaskPushNotificationConfig => {
                V03Result::PushConfig(from("result", result)?)
            }
            Method::ListTaskPushNotificationConfigs => {
                V03Result::PushConfigList(from("result", result)?)
            }
            Method::DeleteTaskPushNotificationConfig => V03Result::Deleted,
            Method::GetExtendedAgentCard => V03Result::Card(Box::new(from("result", result)?)),
            Method::SendStreamingMessage | Method::SubscribeToTask | Method::ListTasks => {
                return Err(ParseError::UnknownMethod(method.v1_name().into()));
            }
        })
    }

    /// The `result` JSON.
    pub fn to_value(&self) -> Value {
        match self {
            V03Result::SendMessage(r) => to(r),
            V03Result::Task(t) => to(t),
            V03Result::PushConfig(c) => to(c),
            V03Result::PushConfigList(l) => to(l),
            V03Result::Deleted => Value::Null,
            V03Result::Card(c) => to(c),
        }
    }
}

/// A 1.0 JSON-RPC `result`, typed by the method that produced it.
#[derive(Debug, Clone, PartialEq)]
pub enum V1Result {
    /// `SendMessage`: `{"task":..}` or `{"message":..}`.
    SendMessage(v1::SendMessageResponse),
    /// `GetTask`, `CancelTask`: a bare `Task`.
    Task(v1::Task),
    /// `ListTasks`.
    ListTasks(v1::ListTasksResponse),
    /// `CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig`.
    PushConfig(v1::TaskPushNotificationConfig),
    /// `ListTaskPushNotificationConfigs`: `{configs, nextPageToken}`.
    PushConfigList(v1::ListTaskPushNotificationConfigsResponse),
    /// `DeleteTaskPushNotificationConfig`: `{}`.
    Deleted(v1::Empty),
    /// `GetExtendedAgentCard`.
    Card(Box<v1::AgentCard>),
}

impl V1Result {
    /// Parses the `result` of `method` (streaming methods: use [`v1::StreamResponse`]).
    /// `result` is a [`Value`] or a `&Value`.
    pub fn parse(method: Method, result: impl Input) -> Result<Self, ParseError> {
        Ok(match method {
            Method::SendMessage => V1Result::SendMessage(from("result", result)?),
            Method::GetTask | Method::CancelTask => V1Result::Task(from("result", result)?),
            Method::ListTasks => V1Result::ListTasks(from("result", result)?),
            Method::CreateTaskPushNotificationConfig | Method::GetTaskPushNotificationConfig => {
                V1Result::PushConfig(from("result", result)?)
            }
            Method::ListTaskPushNotificationConfigs => {
                V1Result::PushConfigList(from("result", result)?)
            }
            Method::DeleteTaskPushNotificationConfig => V1Result::Deleted(v1::Empty {}),
            Method::GetExtendedAgentCard => V1Result::Card(Box::new(from("result", result)?)),
            Method::SendStreamingMessage | Method::SubscribeToTask => {
                return Err(ParseError::UnknownMethod(method.v1_name().into()));
            }
        })
    }

    /// The `result` JSON.
    pub fn to_value(&self) -> Value {
        match self {
            V1Result::SendMessage(r) => to(r),
            V1Result::Task(t) => to(t),
            V1Result::ListTasks(l) => to(l),
            V1Result::PushConfig(c) => to(c),
            V1Result::PushConfigList(l) => to(l),
            V1Result::Deleted(e) => to(e),
            V1Result::Card(c) => to(c),
        }
    }
}

/// A JSON-RPC `error` object, either version: `{code, message, data?}` (the `a2a-types` model;
/// 0.3 `data` is any JSON value, 1.0 `data` is an array of `google.protobuf.Any` objects).
pub type ErrorObject = a2a_types::jsonrpc::JsonRpcError;
