//! A2A 0.3 request params and push-notification configs.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Message, Metadata};

// ---------------------------------------------------------------------------------------------
// Request params
// ---------------------------------------------------------------------------------------------

/// Params of `message/send` and `message/stream` (T0 `MessageSendParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessageSendParams {
    /// The message to send.
    pub message: Message,
    /// Send options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl MessageSendParams {
    /// Params carrying just a message.
    pub fn new(message: Message) -> Self {
        MessageSendParams {
            message,
            configuration: None,
            metadata: None,
        }
    }
}

/// Options of a send (T0 `MessageSendConfiguration`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    /// Output media types the client accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_output_modes: Option<Vec<String>>,
    /// Wait for the task to complete (absent is treated as blocking by the SDKs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
    /// Number of most recent history messages to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Where to push updates of the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<PushNotificationConfig>,
}

/// Params of `tasks/get` (T0 `TaskQueryParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    /// Task id.
    pub id: String,
    /// Number of most recent history messages to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/cancel` and `tasks/resubscribe` (T0 `TaskIdParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// Task id.
    pub id: String,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

// ---------------------------------------------------------------------------------------------
// Push notifications
// ---------------------------------------------------------------------------------------------

/// Where and how to push task updates (T0 `PushNotificationConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// Webhook URL.
    pub url: String,
    /// Config id (a task may have several configs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Token the agent sends back (conventionally in `X-A2A-Notification-Token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How the agent authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
}

impl PushNotificationConfig {
    /// A config with only its URL set.
    pub fn new(url: impl Into<String>) -> Self {
        PushNotificationConfig {
            url: url.into(),
            id: None,
            token: None,
            authentication: None,
        }
    }
}

/// Authentication the agent uses towards a webhook (T0 `PushNotificationAuthenticationInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    /// Supported auth schemes (e.g. `Bearer`).
    pub schemes: Vec<String>,
    /// Credentials, format scheme-specific.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push config bound to a task (T0 `TaskPushNotificationConfig`): params and result of
/// `tasks/pushNotificationConfig/set`, result of `.../get`, element of the `.../list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Task id.
    pub task_id: String,
    /// The config.
    pub push_notification_config: PushNotificationConfig,
}

/// Params of `tasks/pushNotificationConfig/get` (T0 `GetTaskPushNotificationConfigParams`).
///
/// Hazard: `id` is the **task** id; the config id is `pushNotificationConfigId`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigParams {
    /// Task id.
    pub id: String,
    /// Config id (absent: the task's only/default config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/list` (T0 `ListTaskPushNotificationConfigParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigParams {
    /// Task id.
    pub id: String,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/delete` (T0 `DeleteTaskPushNotificationConfigParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigParams {
    /// Task id.
    pub id: String,
    /// Config id.
    pub push_notification_config_id: String,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The result of `tasks/pushNotificationConfig/list`: a bare array.
pub type ListTaskPushNotificationConfigResult = Vec<TaskPushNotificationConfig>;
