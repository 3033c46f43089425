//! Request and response messages of the `A2AService` rpcs (P1), and the push-config types.
//!
//! The JSON-RPC `params` of a 1.0 call is the request message's ProtoJSON; the REST body is the
//! same minus the fields carried in the path.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Message, Metadata, Task, TaskState};
use crate::timestamp::Timestamp;

/// Options of a send call (P1 `SendMessageConfiguration`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// `acceptedOutputModes`: media types the client accepts.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "accepted_output_modes"
    )]
    pub accepted_output_modes: Vec<String>,
    /// `taskPushNotificationConfig`: push config to register for the new task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "task_push_notification_config"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// `historyLength`: unset = no limit, 0 = no messages, N = at most N (S1 §3.2.4).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
    /// `returnImmediately`: return right after the task is created (default false = blocking).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "return_immediately"
    )]
    pub return_immediately: Option<bool>,
}

impl SendMessageConfiguration {
    /// Sets `historyLength`.
    pub fn with_history_length(mut self, n: i32) -> Self {
        self.history_length = Some(n);
        self
    }

    /// Sets `returnImmediately`.
    pub fn with_return_immediately(mut self, yes: bool) -> Self {
        self.return_immediately = Some(yes);
        self
    }

    /// Sets `acceptedOutputModes`.
    pub fn with_accepted_output_modes(mut self, modes: Vec<String>) -> Self {
        self.accepted_output_modes = modes;
        self
    }

    /// Sets `taskPushNotificationConfig`.
    pub fn with_push_config(mut self, config: TaskPushNotificationConfig) -> Self {
        self.task_push_notification_config = Some(config);
        self
    }

    /// `returnImmediately`, absent meaning `false` (blocking).
    pub fn is_return_immediately(&self) -> bool {
        self.return_immediately.unwrap_or(false)
    }
}

/// `SendMessage` / `SendStreamingMessage` request (P1 `SendMessageRequest`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["message"])))]
pub struct SendMessageRequest {
    /// `tenant`: opaque tenant id from the selected interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `message` (REQUIRED).
    pub message: Message,
    /// `configuration`: send options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl SendMessageRequest {
    /// A request sending `message` with no options.
    pub fn new(message: Message) -> Self {
        SendMessageRequest {
            message,
            ..Default::default()
        }
    }

    /// Sets `configuration`.
    pub fn with_configuration(mut self, configuration: SendMessageConfiguration) -> Self {
        self.configuration = Some(configuration);
        self
    }
}

/// `SendMessage` result (P1 `SendMessageResponse`, `oneof payload`): `{"task":..}` or
/// `{"message":..}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// `task`: the task created or continued.
    Task(Task),
    /// `message`: a direct reply without a task.
    Message(Message),
}

crate::macros::oneof_deserialize!(SendMessageResponse {
    "task" => Task(Task),
    "message" => Message(Message),
});

impl From<Task> for SendMessageResponse {
    fn from(t: Task) -> Self {
        SendMessageResponse::Task(t)
    }
}
impl From<Message> for SendMessageResponse {
    fn from(m: Message) -> Self {
        SendMessageResponse::Message(m)
    }
}

/// `GetTask` request (P1 `GetTaskRequest`); the result is a bare [`Task`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id"])))]
pub struct GetTaskRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `id` (REQUIRED): the task id.
    #[serde(default)]
    pub id: String,
    /// `historyLength`: unset = server default, 0 = omit history, N = at most N.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
}

impl GetTaskRequest {
    /// A request for task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        GetTaskRequest {
            id: id.into(),
            ..Default::default()
        }
    }
}

/// `ListTasks` request (P1 `ListTasksRequest`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `contextId`: only tasks of this context.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "context_id")]
    pub context_id: Option<String>,
    /// `status`: only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// `pageSize`: 1..=100, unset = at most 50.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_size")]
    pub page_size: Option<i32>,
    /// `pageToken`: cursor from a previous response.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_token")]
    pub page_token: Option<String>,
    /// `historyLength`: history limit per task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "history_length"
    )]
    pub history_length: Option<i32>,
    /// `statusTimestampAfter`: only tasks whose status timestamp is >= this.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "status_timestamp_after"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    /// `includeArtifacts`: include artifacts (default false).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "include_artifacts"
    )]
    pub include_artifacts: Option<bool>,
}

/// `ListTasks` result (P1 `ListTasksResponse`). Every field is REQUIRED and always serialized;
/// `nextPageToken` is `""` on the last page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["tasks", "nextPageToken", "pageSize", "totalSize"])))]
pub struct ListTasksResponse {
    /// `tasks` (REQUIRED).
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// `nextPageToken` (REQUIRED): `""` when there are no more pages.
    #[serde(default, alias = "next_page_token")]
    pub next_page_token: String,
    /// `pageSize` (REQUIRED): the page size actually used.
    #[serde(default, alias = "page_size")]
    pub page_size: i32,
    /// `totalSize` (REQUIRED): the number of matching tasks before pagination.
    #[serde(default, alias = "total_size")]
    pub total_size: i32,
}

/// `CancelTask` request (P1 `CancelTaskRequest`); the result is a bare [`Task`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id"])))]
pub struct CancelTaskRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `id` (REQUIRED): the task id.
    #[serde(default)]
    pub id: String,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl CancelTaskRequest {
    /// A request cancelling task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        CancelTaskRequest {
            id: id.into(),
            ..Default::default()
        }
    }
}

/// `SubscribeToTask` request (P1 `SubscribeToTaskRequest`); the result is a stream of
/// [`super::StreamResponse`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id"])))]
pub struct SubscribeToTaskRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `id` (REQUIRED): the task id.
    #[serde(default)]
    pub id: String,
}

impl SubscribeToTaskRequest {
    /// A request subscribing to task `id`.
    pub fn new(id: impl Into<String>) -> Self {
        SubscribeToTaskRequest {
            id: id.into(),
            ..Default::default()
        }
    }
}

/// Credentials the agent sends to a push webhook (P1 `AuthenticationInfo`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["scheme"])))]
pub struct AuthenticationInfo {
    /// `scheme` (REQUIRED): IANA HTTP auth scheme (`Bearer`, `Basic`, ...), case-insensitive.
    #[serde(default)]
    pub scheme: String,
    /// `credentials`: the credentials for the scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push notification config for a task (P1 `TaskPushNotificationConfig`, flat in 1.0).
/// It is the `CreateTaskPushNotificationConfig` request and the result of create/get.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["url"])))]
pub struct TaskPushNotificationConfig {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `id`: the config id (server-assigned when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `taskId`: the task (empty inside `SendMessageConfiguration`).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "task_id")]
    pub task_id: Option<String>,
    /// `url` (REQUIRED): the webhook URL.
    #[serde(default)]
    pub url: String,
    /// `token`: a token the agent echoes to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `authentication`: credentials for the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

impl TaskPushNotificationConfig {
    /// A config for `task_id` posting to `url`.
    pub fn new(task_id: impl Into<String>, url: impl Into<String>) -> Self {
        TaskPushNotificationConfig {
            task_id: Some(task_id.into()),
            url: url.into(),
            ..Default::default()
        }
    }
}

/// `GetTaskPushNotificationConfig` request (P1 `GetTaskPushNotificationConfigRequest`).
/// Note: `id` is the **config** id, `taskId` the task (hazard H13).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId", "id"])))]
pub struct GetTaskPushNotificationConfigRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `taskId` (REQUIRED).
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `id` (REQUIRED): the config id.
    #[serde(default)]
    pub id: String,
}

/// `DeleteTaskPushNotificationConfig` request (P1 `DeleteTaskPushNotificationConfigRequest`);
/// the result is [`Empty`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId", "id"])))]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `taskId` (REQUIRED).
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `id` (REQUIRED): the config id.
    #[serde(default)]
    pub id: String,
}

/// `ListTaskPushNotificationConfigs` request (P1 `ListTaskPushNotificationConfigsRequest`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId"])))]
pub struct ListTaskPushNotificationConfigsRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `taskId` (REQUIRED).
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `pageSize`: maximum configs to return.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_size")]
    pub page_size: Option<i32>,
    /// `pageToken`: cursor from a previous response.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "page_token")]
    pub page_token: Option<String>,
}

/// `ListTaskPushNotificationConfigs` result (P1 `ListTaskPushNotificationConfigsResponse`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// `configs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// `nextPageToken`: empty or absent when there are no more results.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "next_page_token"
    )]
    pub next_page_token: Option<String>,
}

/// `GetExtendedAgentCard` request (P1 `GetExtendedAgentCardRequest`); the result is an
/// [`super::AgentCard`]. JSON-RPC callers may omit `params` entirely.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}

/// `google.protobuf.Empty`: serialized as `{}` (the `DeleteTaskPushNotificationConfig` result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Empty {}
