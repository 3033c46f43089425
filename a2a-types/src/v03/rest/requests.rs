//! HTTP+JSON 0.3 requests, responses and resource names (`tasks/{id}`, `.../pushNotificationConfigs/{id}`).

use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Message, Metadata, PushNotificationConfig, Task, TaskArtifactUpdateEvent,
    TaskPushNotificationConfig, TaskStatusUpdateEvent,
};

// ---------------------------------------------------------------------------------------------
// Requests and responses
// ---------------------------------------------------------------------------------------------

/// Options of a send (P0 `SendMessageConfiguration`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.SendMessageConfiguration")
)]
pub struct SendMessageConfiguration {
    /// `acceptedOutputModes`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "accepted_output_modes"
    )]
    pub accepted_output_modes: Vec<String>,
    /// `pushNotification` (the JSON-RPC dialect calls it `pushNotificationConfig`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "push_notification"
    )]
    pub push_notification: Option<PushNotificationConfig>,
    /// `historyLength` (P0 comment: 0 means unlimited).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
    /// `blocking`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
}

/// Body of `POST /v1/message:send` and `POST /v1/message:stream` (P0 `SendMessageRequest`).
///
/// The proto field is `request`, with JSON name `message` (both accepted on input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.SendMessageRequest"))]
pub struct SendMessageRequest {
    /// `message` (REQUIRED).
    #[serde(alias = "request")]
    pub message: Message,
    /// `configuration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// `metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl SendMessageRequest {
    /// A request carrying just a message.
    pub fn new(message: Message) -> Self {
        SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
        }
    }
}

/// Result of `message:send` (P0 `SendMessageResponse`, `oneof payload`): `{"task":..}` or
/// `{"message":..}` (proto field `msg`, also accepted on input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.SendMessageResponse"))]
pub enum SendMessageResponse {
    /// `task`.
    Task(Task),
    /// `message`.
    #[serde(alias = "msg")]
    Message(Message),
}

/// One event of `message:stream` / `tasks/{id}:subscribe` (P0 `StreamResponse`, `oneof payload`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.StreamResponse"))]
pub enum StreamResponse {
    /// `task`.
    Task(Task),
    /// `message` (proto field `msg`).
    #[serde(alias = "msg")]
    Message(Message),
    /// `statusUpdate`.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// `artifactUpdate`.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl From<SendMessageResponse> for StreamResponse {
    fn from(r: SendMessageResponse) -> Self {
        match r {
            SendMessageResponse::Task(t) => StreamResponse::Task(t),
            SendMessageResponse::Message(m) => StreamResponse::Message(m),
        }
    }
}

/// `GET /v1/tasks/{id}` (P0 `GetTaskRequest`); on HTTP `name` is the path and `historyLength`
/// a query parameter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.GetTaskRequest"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name"])))]
pub struct GetTaskRequest {
    /// `name` (REQUIRED): `tasks/{id}`.
    #[serde(default)]
    pub name: String,
    /// `historyLength`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
}

/// `POST /v1/tasks/{id}:cancel` (P0 `CancelTaskRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.CancelTaskRequest"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name"])))]
pub struct CancelTaskRequest {
    /// `name`: `tasks/{id}`.
    #[serde(default)]
    pub name: String,
}

/// `GET /v1/tasks/{id}:subscribe` (P0 `TaskSubscriptionRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.TaskSubscriptionRequest")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name"])))]
pub struct TaskSubscriptionRequest {
    /// `name`: `tasks/{id}`.
    #[serde(default)]
    pub name: String,
}

/// `GET /v1/tasks/{id}/pushNotificationConfigs/{config}` (P0 `GetTaskPushNotificationConfigRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.GetTaskPushNotificationConfigRequest")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name"])))]
pub struct GetTaskPushNotificationConfigRequest {
    /// `name`: `tasks/{id}/pushNotificationConfigs/{config}`.
    #[serde(default)]
    pub name: String,
}

/// `DELETE /v1/tasks/{id}/pushNotificationConfigs/{config}`
/// (P0 `DeleteTaskPushNotificationConfigRequest`); the response is `{}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.DeleteTaskPushNotificationConfigRequest")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name"])))]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// `name`: `tasks/{id}/pushNotificationConfigs/{config}`.
    #[serde(default)]
    pub name: String,
}

/// `POST /v1/tasks/{id}/pushNotificationConfigs` (P0 `CreateTaskPushNotificationConfigRequest`).
///
/// On HTTP the body is `config` only (`body: "config"`); `parent` comes from the path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.CreateTaskPushNotificationConfigRequest")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["parent", "configId", "config"])))]
pub struct CreateTaskPushNotificationConfigRequest {
    /// `parent` (REQUIRED): `tasks/{id}`.
    #[serde(default)]
    pub parent: String,
    /// `configId` (REQUIRED).
    #[serde(default, alias = "config_id")]
    pub config_id: String,
    /// `config` (REQUIRED).
    pub config: TaskPushNotificationConfig,
}

/// `GET /v1/tasks/{id}/pushNotificationConfigs` (P0 `ListTaskPushNotificationConfigRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.ListTaskPushNotificationConfigRequest")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["parent"])))]
pub struct ListTaskPushNotificationConfigRequest {
    /// `parent`: `tasks/{id}`.
    #[serde(default)]
    pub parent: String,
    /// `pageSize`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_size")]
    pub page_size: Option<i32>,
    /// `pageToken`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_token")]
    pub page_token: Option<String>,
}

/// Result of listing push configs (P0 `ListTaskPushNotificationConfigResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.ListTaskPushNotificationConfigResponse")
)]
pub struct ListTaskPushNotificationConfigResponse {
    /// `configs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// `nextPageToken`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "next_page_token"
    )]
    pub next_page_token: Option<String>,
}

/// `GET /v1/card` (P0 `GetAgentCardRequest`): no fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.GetAgentCardRequest"))]
pub struct GetAgentCardRequest {}

/// `google.protobuf.Empty`: `{}`, the response of the delete call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.Empty"))]
pub struct Empty {}

// ---------------------------------------------------------------------------------------------
// Resource names
// ---------------------------------------------------------------------------------------------

/// A task resource name, `tasks/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TaskName {
    /// The task id.
    pub task_id: String,
}

impl TaskName {
    /// Parses `tasks/{id}` (the id must be non-empty and contain no `/`).
    pub fn parse(name: &str) -> Option<Self> {
        let id = name.strip_prefix("tasks/")?;
        (!id.is_empty() && !id.contains('/')).then(|| TaskName {
            task_id: id.to_owned(),
        })
    }
}

impl fmt::Display for TaskName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tasks/{}", self.task_id)
    }
}

/// A push config resource name, `tasks/{id}/pushNotificationConfigs/{config}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PushConfigName {
    /// The task id.
    pub task_id: String,
    /// The config id.
    pub config_id: String,
}

impl PushConfigName {
    /// Parses `tasks/{id}/pushNotificationConfigs/{config}`.
    pub fn parse(name: &str) -> Option<Self> {
        let rest = name.strip_prefix("tasks/")?;
        let (task, config) = rest.split_once("/pushNotificationConfigs/")?;
        let ok = |s: &str| !s.is_empty() && !s.contains('/');
        (ok(task) && ok(config)).then(|| PushConfigName {
            task_id: task.to_owned(),
            config_id: config.to_owned(),
        })
    }
}

impl fmt::Display for PushConfigName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tasks/{}/pushNotificationConfigs/{}",
            self.task_id, self.config_id
        )
    }
}
