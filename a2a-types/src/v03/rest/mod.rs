//! A2A 0.3 in its HTTP+JSON (REST) dialect: ProtoJSON of the 0.3 proto (P0, package `a2a.v1`).
//!
//! The official SDKs feed 0.3 REST bodies through protobuf `json_format`, so they are **not** the
//! JSON-RPC shapes of [`super`] (digest §0, hazard H1). The differences that matter:
//! - [`Message`] carries its parts in `content` (not `parts`) and has no `kind` and no
//!   `referenceTaskIds`; roles are `ROLE_USER` / `ROLE_AGENT`;
//! - [`Part`] is a oneof: `{"text":..}`, `{"file":{"fileWithUri"|"fileWithBytes":..,"mimeType":..}}`,
//!   `{"data":{"data":{..}}}`; P0 @ v0.3.0 has no part metadata, no file name and no card
//!   `iconUrl`, but the later 0.3 proto that the official SDK (a2a-sdk 0.3.26) sends has them,
//!   so they are modelled as optional members;
//! - [`TaskState`] values are `TASK_STATE_*`, and canceled is spelled `TASK_STATE_CANCELLED`;
//! - [`TaskStatus`] names its message field `update` in the proto, with JSON name `message`;
//! - [`SendMessageConfiguration`] uses `pushNotification`; send and stream results are wrapped
//!   ([`SendMessageResponse`], [`StreamResponse`]);
//! - requests address tasks and configs by AIP resource names (`tasks/{id}`,
//!   `tasks/{id}/pushNotificationConfigs/{config}`; see [`TaskName`] and [`PushConfigName`]);
//! - the agent card uses the oneof [`SecurityScheme`] and `security: [{"schemes":{name:{"list":[..]}}}]`.
//!
//! Conventions (the same as [`crate::v1`]): members are lowerCamelCase and the proto's snake_case
//! names are accepted on input; enums are parsed from their names or numbers; fields that the 0.3
//! model requires are plain and always serialized (ProtoJSON emitters omit default values, so
//! they default when absent); other scalars are `Option` so a value the peer sent survives a
//! round trip; other lists are omitted when empty.
//!
//! Strict validation ([`validate`]) reports a missing member only where the proto default is not
//! a legitimate value (`messageId`, `role`, ids, URLs, resource names, message-typed members such
//! as `status`); members whose default is meaningful (`final: false`, empty `content`/`parts`/
//! `skills`/`scopes`, `TASK_STATE_UNSPECIFIED`) may be omitted, as `json_format` does.
//!
//! ```
//! use a2a_types::v03::rest::{Message, Part, Role, SendMessageRequest};
//!
//! let body = r#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}"#;
//! let req: SendMessageRequest = serde_json::from_str(body).unwrap();
//! assert_eq!(req.message.role, Role::User);
//! assert_eq!(req.message.content[0].as_text(), Some("hi"));
//! ```

#[cfg(feature = "schema")]
use schemars::JsonSchema;
#[cfg(feature = "schema")]
use serde_json::Value;

use super::Metadata;
use crate::macros::proto_enum;
#[cfg(feature = "schema")]
use crate::strict::{self, Violation};

/// Strictly validates `value` as the HTTP+JSON dialect type `T` (ProtoJSON rules:
/// snake_case spellings accepted, `Z` timestamps): every unknown member, missing required
/// member, bad enum value, oneof violation, non-object `data` and bad base64, with JSON paths.
///
/// ```
/// use a2a_types::v03::rest;
/// use serde_json::json;
///
/// let doc = json!({"messageId": "m", "role": "user", "content": [{"text": "hi"}]});
/// let shown: Vec<String> =
///     rest::validate::<rest::Message>(&doc).iter().map(|v| v.to_string()).collect();
/// assert_eq!(shown, [r#"role: bad enum value "user""#]);
/// ```
#[cfg(feature = "schema")]
pub fn validate<T: JsonSchema>(value: &Value) -> Vec<Violation> {
    strict::validate::<T>(value)
}

proto_enum! {
    /// Sender of a message (P0 `Role`).
    pub enum Role: "v03.Role" {
        /// `ROLE_UNSPECIFIED` (0).
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        /// `ROLE_USER` (1): the client.
        User = 1 => "ROLE_USER",
        /// `ROLE_AGENT` (2): the agent.
        Agent = 2 => "ROLE_AGENT",
    }
}

proto_enum! {
    /// Lifecycle state of a task (P0 `TaskState`; note `TASK_STATE_CANCELLED` with double L).
    pub enum TaskState: "v03.TaskState" {
        /// `TASK_STATE_UNSPECIFIED` (0), the JSON-RPC dialect's `unknown`.
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        /// `TASK_STATE_SUBMITTED` (1).
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        /// `TASK_STATE_WORKING` (2).
        Working = 2 => "TASK_STATE_WORKING",
        /// `TASK_STATE_COMPLETED` (3), terminal.
        Completed = 3 => "TASK_STATE_COMPLETED",
        /// `TASK_STATE_FAILED` (4), terminal.
        Failed = 4 => "TASK_STATE_FAILED",
        /// `TASK_STATE_CANCELLED` (5), terminal.
        Cancelled = 5 => "TASK_STATE_CANCELLED",
        /// `TASK_STATE_INPUT_REQUIRED` (6), interrupted.
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        /// `TASK_STATE_REJECTED` (7), terminal.
        Rejected = 7 => "TASK_STATE_REJECTED",
        /// `TASK_STATE_AUTH_REQUIRED` (8).
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl TaskState {
    /// `COMPLETED`, `FAILED`, `CANCELLED` or `REJECTED`.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Cancelled | TaskState::Rejected
        )
    }

    /// The JSON-RPC dialect's spelling of this state.
    pub const fn to_jsonrpc(self) -> super::TaskState {
        match self {
            TaskState::Unspecified => super::TaskState::Unknown,
            TaskState::Submitted => super::TaskState::Submitted,
            TaskState::Working => super::TaskState::Working,
            TaskState::Completed => super::TaskState::Completed,
            TaskState::Failed => super::TaskState::Failed,
            TaskState::Cancelled => super::TaskState::Canceled,
            TaskState::InputRequired => super::TaskState::InputRequired,
            TaskState::Rejected => super::TaskState::Rejected,
            TaskState::AuthRequired => super::TaskState::AuthRequired,
        }
    }

    /// This dialect's spelling of a JSON-RPC dialect state.
    pub const fn from_jsonrpc(state: super::TaskState) -> Self {
        match state {
            super::TaskState::Unknown => TaskState::Unspecified,
            super::TaskState::Submitted => TaskState::Submitted,
            super::TaskState::Working => TaskState::Working,
            super::TaskState::Completed => TaskState::Completed,
            super::TaskState::Failed => TaskState::Failed,
            super::TaskState::Canceled => TaskState::Cancelled,
            super::TaskState::InputRequired => TaskState::InputRequired,
            super::TaskState::Rejected => TaskState::Rejected,
            super::TaskState::AuthRequired => TaskState::AuthRequired,
        }
    }
}

mod card;
mod parts;
mod requests;
mod task;

pub use card::*;
pub use parts::*;
pub use requests::*;
pub use task::*;
