//! HTTP+JSON 0.3 messages, tasks, streaming events and push-notification configs.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::PushConfigName; // named in a doc link (and so in the schema's description)
use super::{Metadata, Part, Role, TaskState};
use crate::timestamp::Timestamp;

// ---------------------------------------------------------------------------------------------
// Message, task, events
// ---------------------------------------------------------------------------------------------

/// One communication turn (P0 `Message`): parts are in `content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.Message"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["messageId", "role"])))]
pub struct Message {
    /// `messageId`: unique id, created by the sender.
    #[serde(default, alias = "message_id")]
    pub message_id: String,
    /// `contextId`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "context_id")]
    pub context_id: Option<String>,
    /// `taskId`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "task_id")]
    pub task_id: Option<String>,
    /// `role`.
    #[serde(default)]
    pub role: Role,
    /// `content`: the parts of the message.
    #[serde(default)]
    pub content: Vec<Part>,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// `extensions`: URIs of the extensions present in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

impl Message {
    /// A message with the given role, id and content.
    pub fn new(role: Role, message_id: impl Into<String>, content: Vec<Part>) -> Self {
        Message {
            message_id: message_id.into(),
            role,
            content,
            ..Default::default()
        }
    }

    /// A user message with one text part.
    pub fn user_text(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(Role::User, message_id, vec![Part::text(text)])
    }

    /// An agent message with one text part.
    pub fn agent_text(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(Role::Agent, message_id, vec![Part::text(text)])
    }
}

/// Status of a task (P0 `TaskStatus`): the proto field `update` has the JSON name `message`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.TaskStatus"))]
pub struct TaskStatus {
    /// `state`.
    #[serde(default)]
    pub state: TaskState,
    /// `message` (proto field `update`, also accepted on input).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "update")]
    pub message: Option<Message>,
    /// `timestamp`: RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status with only its state set.
    pub fn new(state: TaskState) -> Self {
        TaskStatus {
            state,
            ..Default::default()
        }
    }
}

/// A unit of work (P0 `Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.Task"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id", "contextId", "status"])))]
pub struct Task {
    /// `id`.
    #[serde(default)]
    pub id: String,
    /// `contextId`.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// `status`.
    pub status: TaskStatus,
    /// `artifacts`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// `history`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Task {
    /// A task with the given ids and state.
    pub fn new(id: impl Into<String>, context_id: impl Into<String>, state: TaskState) -> Self {
        Task {
            id: id.into(),
            context_id: context_id.into(),
            status: TaskStatus::new(state),
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata: None,
        }
    }
}

/// An output of a task (P0 `Artifact`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.Artifact"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["artifactId"])))]
pub struct Artifact {
    /// `artifactId`.
    #[serde(default, alias = "artifact_id")]
    pub artifact_id: String,
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `parts`.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// `extensions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// A status change (P0 `TaskStatusUpdateEvent`), with the 0.3 `final` flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.TaskStatusUpdateEvent")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId", "contextId", "status"])))]
pub struct TaskStatusUpdateEvent {
    /// `taskId`.
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `contextId`.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// `status`.
    pub status: TaskStatus,
    /// `final`: the last event of the stream (absent means `false`).
    #[serde(default, rename = "final")]
    pub is_final: bool,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A new or updated artifact (P0 `TaskArtifactUpdateEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.TaskArtifactUpdateEvent")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId", "contextId", "artifact"])))]
pub struct TaskArtifactUpdateEvent {
    /// `taskId`.
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `contextId`.
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// `artifact`.
    pub artifact: Artifact,
    /// `append`: append to the previously sent artifact with the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// `lastChunk`: the final chunk of the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "last_chunk")]
    pub last_chunk: Option<bool>,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------------------
// Push notification configs
// ---------------------------------------------------------------------------------------------

/// Where and how to push task updates (P0 `PushNotificationConfig`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.PushNotificationConfig")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["url"])))]
pub struct PushNotificationConfig {
    /// `id`: config id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `url`: the webhook.
    #[serde(default)]
    pub url: String,
    /// `token`: echoed to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `authentication`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// How the agent authenticates to a webhook (P0 `AuthenticationInfo`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AuthenticationInfo"))]
pub struct AuthenticationInfo {
    /// `schemes`: supported schemes, e.g. `Bearer`.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// `credentials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push config bound to a task by resource name (P0 `TaskPushNotificationConfig`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.TaskPushNotificationConfig")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name", "pushNotificationConfig"])))]
pub struct TaskPushNotificationConfig {
    /// `name`: `tasks/{task id}/pushNotificationConfigs/{config id}` (see [`PushConfigName`]).
    #[serde(default)]
    pub name: String,
    /// `pushNotificationConfig`.
    #[serde(default, alias = "push_notification_config")]
    pub push_notification_config: PushNotificationConfig,
}
