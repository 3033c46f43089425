//! The type registry: every top-level a2a-types type by dialect (`v1`, `v03`, `v03-rest`) and name, with
//! its default parse + serialize, its strict validation and its JSON Schema.
//!
//! Fixtures, the spec-example test, the schema export and the schema test all go through this table,
//! so a type added here is exercised everywhere. This file depends only on `a2a_types`, `serde`,
//! `serde_json` and `schemars`, so `a2a-types` tests include it with `#[path]`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One registered type.
#[derive(Clone, Copy)]
pub struct Entry {
    /// `v1`, `v03` or `v03-rest`.
    pub dialect: &'static str,
    /// The type's name (the Rust type name).
    pub name: &'static str,
    /// Default (lenient) parse of the JSON text of the value, then serialize back to a JSON value.
    pub round_trip: fn(&Value) -> Result<Value, String>,
    /// Strict validation: every violation as `path: reason`.
    pub strict: fn(&Value) -> Vec<String>,
    /// The type's JSON Schema (draft 2020-12, from schemars).
    pub schema: fn() -> Value,
}

/// The dialects, with the directory name used under `schemas/`.
pub const DIALECTS: &[&str] = &["v1", "v03", "v03-rest"];

/// Types named by fixtures or spec examples that a2a-types does not model yet, with the reason.
/// Nothing may stay here at the end of an issue without a stated reason.
pub const PENDING: &[(&str, &str, &str)] = &[];

/// Parses `v`'s JSON text as `T` (the way a peer's bytes arrive) and serializes it back.
pub fn round_trip_as<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let text = v.to_string();
    let t: T = a2a_types::strict::parse(&text).map_err(|e| e.to_string())?;
    serde_json::to_value(&t).map_err(|e| e.to_string())
}

/// The schemars schema of `T` as a JSON value.
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

macro_rules! entries {
    ($( $dialect:literal => [ $( $name:ident = $ty:ty ),* $(,)? ] ),* $(,)?) => {
        /// Every registered type.
        pub fn entries() -> Vec<Entry> {
            let mut out: Vec<Entry> = vec![
                $( $(
                    Entry {
                        dialect: $dialect,
                        name: stringify!($name),
                        round_trip: round_trip_as::<$ty>,
                        strict: |v| strict_of::<$ty>($dialect, v),
                        schema: schema_of::<$ty>,
                    },
                )* )*
            ];
            out.extend(envelopes());
            out
        }
    };
}

/// The strict-validator options of a dialect: ProtoJSON for `v1` and `v03-rest`, plain JSON for `v03`.
pub fn options(dialect: &str) -> a2a_types::strict::Options {
    if dialect == "v03" {
        a2a_types::strict::Options::JSON
    } else {
        a2a_types::strict::Options::PROTOJSON
    }
}

/// Strict validation of `T` in `dialect`: every violation as `path: reason`.
pub fn strict_of<T: schemars::JsonSchema>(dialect: &str, v: &Value) -> Vec<String> {
    a2a_types::strict::validate_with::<T>(v, options(dialect))
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The strict validator of the params of a 0.3 method (JSON-RPC dialect).
pub fn v03_params(method: a2a_types::jsonrpc::Method) -> Option<a2a_types::strict::Validator> {
    use a2a_types::jsonrpc::{Method, V03Method as M};
    use a2a_types::strict::Validator;
    use a2a_types::v03;
    let Method::V03(m) = method else {
        return None;
    };
    let v = match m {
        M::MessageSend | M::MessageStream => Validator::for_type::<v03::MessageSendParams>(),
        M::TasksGet => Validator::for_type::<v03::TaskQueryParams>(),
        M::TasksCancel | M::TasksResubscribe => Validator::for_type::<v03::TaskIdParams>(),
        M::PushConfigSet => Validator::for_type::<v03::TaskPushNotificationConfig>(),
        M::PushConfigGet => Validator::for_type::<v03::GetTaskPushNotificationConfigParams>(),
        M::PushConfigList => Validator::for_type::<v03::ListTaskPushNotificationConfigParams>(),
        M::PushConfigDelete => Validator::for_type::<v03::DeleteTaskPushNotificationConfigParams>(),
        M::GetAuthenticatedExtendedCard => return None,
    };
    Some(v.with_options(a2a_types::strict::Options::JSON))
}

fn strict_request(version: a2a_types::version::ProtocolVersion, v: &Value) -> Vec<String> {
    a2a_types::strict::validate_jsonrpc_request(v, Some(version), Some(&v03_params))
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The JSON-RPC envelopes (and the 1.0 REST error body): version-independent types registered
/// under both JSON-RPC dialects; a request's strict check dispatches its params by method.
fn envelopes() -> Vec<Entry> {
    use a2a_types::jsonrpc::{JsonRpcRequest, JsonRpcResponse};
    use a2a_types::version::ProtocolVersion;
    vec![
        Entry {
            dialect: "v1",
            name: "JsonRpcRequest",
            round_trip: round_trip_as::<JsonRpcRequest>,
            strict: |v| strict_request(ProtocolVersion::V1_0, v),
            schema: schema_of::<JsonRpcRequest>,
        },
        Entry {
            dialect: "v03",
            name: "JsonRpcRequest",
            round_trip: round_trip_as::<JsonRpcRequest>,
            strict: |v| strict_request(ProtocolVersion::V0_3, v),
            schema: schema_of::<JsonRpcRequest>,
        },
        Entry {
            dialect: "v1",
            name: "JsonRpcResponse",
            round_trip: round_trip_as::<JsonRpcResponse>,
            strict: |v| strict_of::<JsonRpcResponse>("v1", v),
            schema: schema_of::<JsonRpcResponse>,
        },
        Entry {
            dialect: "v03",
            name: "JsonRpcResponse",
            round_trip: round_trip_as::<JsonRpcResponse>,
            strict: |v| strict_of::<JsonRpcResponse>("v03", v),
            schema: schema_of::<JsonRpcResponse>,
        },
        Entry {
            dialect: "v1",
            name: "RestErrorBody",
            round_trip: round_trip_as::<a2a_types::error::RestErrorBody>,
            strict: |v| strict_of::<a2a_types::error::RestErrorBody>("v1", v),
            schema: schema_of::<a2a_types::error::RestErrorBody>,
        },
    ]
}

entries! {
    "v1" => [
        Message = a2a_types::v1::Message,
        Part = a2a_types::v1::Part,
        Task = a2a_types::v1::Task,
        TaskStatus = a2a_types::v1::TaskStatus,
        Artifact = a2a_types::v1::Artifact,
        TaskStatusUpdateEvent = a2a_types::v1::TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent = a2a_types::v1::TaskArtifactUpdateEvent,
        StreamResponse = a2a_types::v1::StreamResponse,
        SendMessageConfiguration = a2a_types::v1::SendMessageConfiguration,
        SendMessageRequest = a2a_types::v1::SendMessageRequest,
        SendMessageResponse = a2a_types::v1::SendMessageResponse,
        GetTaskRequest = a2a_types::v1::GetTaskRequest,
        ListTasksRequest = a2a_types::v1::ListTasksRequest,
        ListTasksResponse = a2a_types::v1::ListTasksResponse,
        CancelTaskRequest = a2a_types::v1::CancelTaskRequest,
        SubscribeToTaskRequest = a2a_types::v1::SubscribeToTaskRequest,
        AuthenticationInfo = a2a_types::v1::AuthenticationInfo,
        TaskPushNotificationConfig = a2a_types::v1::TaskPushNotificationConfig,
        GetTaskPushNotificationConfigRequest = a2a_types::v1::GetTaskPushNotificationConfigRequest,
        DeleteTaskPushNotificationConfigRequest = a2a_types::v1::DeleteTaskPushNotificationConfigRequest,
        ListTaskPushNotificationConfigsRequest = a2a_types::v1::ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse = a2a_types::v1::ListTaskPushNotificationConfigsResponse,
        GetExtendedAgentCardRequest = a2a_types::v1::GetExtendedAgentCardRequest,
        Empty = a2a_types::v1::Empty,
        AgentCard = a2a_types::v1::AgentCard,
        AgentInterface = a2a_types::v1::AgentInterface,
        AgentProvider = a2a_types::v1::AgentProvider,
        AgentCapabilities = a2a_types::v1::AgentCapabilities,
        AgentExtension = a2a_types::v1::AgentExtension,
        AgentSkill = a2a_types::v1::AgentSkill,
        AgentCardSignature = a2a_types::v1::AgentCardSignature,
        SecurityScheme = a2a_types::v1::SecurityScheme,
        OAuthFlows = a2a_types::v1::OAuthFlows,
        SecurityRequirement = a2a_types::v1::SecurityRequirement,
    ],
    "v03" => [
        Message = a2a_types::v03::Message,
        Part = a2a_types::v03::Part,
        TextPart = a2a_types::v03::TextPart,
        FilePart = a2a_types::v03::FilePart,
        DataPart = a2a_types::v03::DataPart,
        Task = a2a_types::v03::Task,
        TaskStatus = a2a_types::v03::TaskStatus,
        Artifact = a2a_types::v03::Artifact,
        TaskStatusUpdateEvent = a2a_types::v03::TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent = a2a_types::v03::TaskArtifactUpdateEvent,
        SendMessageResult = a2a_types::v03::SendMessageResult,
        StreamResult = a2a_types::v03::StreamResult,
        MessageSendParams = a2a_types::v03::MessageSendParams,
        MessageSendConfiguration = a2a_types::v03::MessageSendConfiguration,
        TaskQueryParams = a2a_types::v03::TaskQueryParams,
        TaskIdParams = a2a_types::v03::TaskIdParams,
        PushNotificationConfig = a2a_types::v03::PushNotificationConfig,
        PushNotificationAuthenticationInfo = a2a_types::v03::PushNotificationAuthenticationInfo,
        TaskPushNotificationConfig = a2a_types::v03::TaskPushNotificationConfig,
        GetTaskPushNotificationConfigParams = a2a_types::v03::GetTaskPushNotificationConfigParams,
        ListTaskPushNotificationConfigParams = a2a_types::v03::ListTaskPushNotificationConfigParams,
        DeleteTaskPushNotificationConfigParams = a2a_types::v03::DeleteTaskPushNotificationConfigParams,
        ListTaskPushNotificationConfigResult = a2a_types::v03::ListTaskPushNotificationConfigResult,
        AgentCard = a2a_types::v03::AgentCard,
        AgentInterface = a2a_types::v03::AgentInterface,
        AgentProvider = a2a_types::v03::AgentProvider,
        AgentCapabilities = a2a_types::v03::AgentCapabilities,
        AgentExtension = a2a_types::v03::AgentExtension,
        AgentSkill = a2a_types::v03::AgentSkill,
        AgentCardSignature = a2a_types::v03::AgentCardSignature,
        SecurityScheme = a2a_types::v03::SecurityScheme,
        OAuthFlows = a2a_types::v03::OAuthFlows,
        SecurityRequirement = a2a_types::v03::SecurityRequirement,
    ],
    "v03-rest" => [
        Message = a2a_types::v03::rest::Message,
        Part = a2a_types::v03::rest::Part,
        Task = a2a_types::v03::rest::Task,
        TaskStatus = a2a_types::v03::rest::TaskStatus,
        Artifact = a2a_types::v03::rest::Artifact,
        TaskStatusUpdateEvent = a2a_types::v03::rest::TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent = a2a_types::v03::rest::TaskArtifactUpdateEvent,
        PushNotificationConfig = a2a_types::v03::rest::PushNotificationConfig,
        AuthenticationInfo = a2a_types::v03::rest::AuthenticationInfo,
        TaskPushNotificationConfig = a2a_types::v03::rest::TaskPushNotificationConfig,
        SendMessageConfiguration = a2a_types::v03::rest::SendMessageConfiguration,
        SendMessageRequest = a2a_types::v03::rest::SendMessageRequest,
        SendMessageResponse = a2a_types::v03::rest::SendMessageResponse,
        StreamResponse = a2a_types::v03::rest::StreamResponse,
        GetTaskRequest = a2a_types::v03::rest::GetTaskRequest,
        CancelTaskRequest = a2a_types::v03::rest::CancelTaskRequest,
        TaskSubscriptionRequest = a2a_types::v03::rest::TaskSubscriptionRequest,
        GetTaskPushNotificationConfigRequest = a2a_types::v03::rest::GetTaskPushNotificationConfigRequest,
        DeleteTaskPushNotificationConfigRequest = a2a_types::v03::rest::DeleteTaskPushNotificationConfigRequest,
        CreateTaskPushNotificationConfigRequest = a2a_types::v03::rest::CreateTaskPushNotificationConfigRequest,
        ListTaskPushNotificationConfigRequest = a2a_types::v03::rest::ListTaskPushNotificationConfigRequest,
        ListTaskPushNotificationConfigResponse = a2a_types::v03::rest::ListTaskPushNotificationConfigResponse,
        AgentCard = a2a_types::v03::rest::AgentCard,
        AgentInterface = a2a_types::v03::rest::AgentInterface,
        AgentProvider = a2a_types::v03::rest::AgentProvider,
        AgentCapabilities = a2a_types::v03::rest::AgentCapabilities,
        AgentExtension = a2a_types::v03::rest::AgentExtension,
        AgentSkill = a2a_types::v03::rest::AgentSkill,
        AgentCardSignature = a2a_types::v03::rest::AgentCardSignature,
        SecurityScheme = a2a_types::v03::rest::SecurityScheme,
        OAuthFlows = a2a_types::v03::rest::OAuthFlows,
        Security = a2a_types::v03::rest::Security,
    ],
}

/// Finds a registered type.
pub fn find(dialect: &str, name: &str) -> Option<Entry> {
    entries()
        .into_iter()
        .find(|e| e.dialect == dialect && e.name == name)
}

/// Why a type is not registered yet, if it is listed in [`PENDING`].
pub fn pending_reason(dialect: &str, name: &str) -> Option<&'static str> {
    PENDING
        .iter()
        .find(|(d, n, _)| *d == dialect && *n == name)
        .map(|(_, _, r)| *r)
}
