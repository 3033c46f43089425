//! A2A 1.0 wire models: ProtoJSON of `a2a.proto` (package `lf.a2a.v1`).
//!
//! Conventions (ProtoJSON, ADR-001):
//! - Members are lowerCamelCase; the original snake_case names are accepted on input.
//! - Enums serialize as their proto names (`"TASK_STATE_COMPLETED"`); integers are accepted on input.
//! - `oneof`s are Rust enums (or a content enum inside [`Part`]); the JSON member name is the discriminator.
//! - REQUIRED fields are plain (non-`Option`) and always serialized. REQUIRED scalars and lists
//!   default when absent on input, because ProtoJSON emitters omit default values; the strict
//!   validator ([`crate::strict`]) reports them as missing. REQUIRED message-typed fields
//!   (`Task.status`, `SendMessageRequest.message`, ...) must be present.
//! - Non-REQUIRED singular fields are `Option`: `None` is omitted, a value the peer sent is kept
//!   even when it is the proto default, so a parse/serialize round trip is exact.
//! - Non-REQUIRED lists are `Vec`, omitted when empty.
//! - `google.protobuf.Struct` is [`Metadata`] (a JSON object); `Value` is [`serde_json::Value`];
//!   `bytes` is [`crate::binary::Base64Bytes`]; `Timestamp` is [`crate::timestamp::Timestamp`].
//! - Unknown members are ignored by the default parse, except on the agent card types, which keep
//!   them (`extra`) so a card round trip loses nothing.

mod card;
mod message;
mod requests;
mod security;
mod task;

pub use card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill,
};
pub use message::{Message, Part, PartContent, Role};
pub use requests::{
    AuthenticationInfo, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Empty,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, SubscribeToTaskRequest, TaskPushNotificationConfig,
};
pub use security::{
    ApiKeySecurityScheme, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow, MutualTlsSecurityScheme,
    OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme, PasswordOAuthFlow,
    SecurityRequirement, SecurityScheme, StringList,
};
pub use task::{
    Artifact, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

/// `google.protobuf.Struct`: a free-form JSON object (metadata, params, headers).
pub type Metadata = serde_json::Map<String, serde_json::Value>;
