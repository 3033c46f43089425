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

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Metadata;
use crate::binary::Base64Bytes;
use crate::macros::proto_enum;
use crate::strict::{self, Violation};
use crate::timestamp::Timestamp;

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

// ---------------------------------------------------------------------------------------------
// Parts
// ---------------------------------------------------------------------------------------------

/// The content of a [`Part`] (P0 `oneof part`): the JSON member name is the discriminator.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// `text`.
    Text(String),
    /// `file`.
    File(FilePart),
    /// `data`.
    Data(DataPart),
}

impl PartContent {
    /// The JSON member name of this variant.
    pub fn member_name(&self) -> &'static str {
        match self {
            PartContent::Text(_) => "text",
            PartContent::File(_) => "file",
            PartContent::Data(_) => "data",
        }
    }
}

/// One piece of content (P0 `Part`).
///
/// `{"text":"hi"}`, `{"file":{"fileWithUri":"https://..","mimeType":"image/png"}}`,
/// `{"data":{"data":{"k":1}}}`. Unknown members are ignored on input; two oneof members are
/// refused. `metadata` is not in P0 @ v0.3.0 but is in the later 0.3 proto that the official
/// SDK (a2a-sdk 0.3.26, field 4) sends, so it is modelled too.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The content (exactly one of text/file/data).
    pub content: PartContent,
    /// `metadata` (later 0.3 proto; absent from P0 @ v0.3.0).
    pub metadata: Option<Metadata>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            content: PartContent::Text(text.into()),
            metadata: None,
        }
    }

    /// A file part.
    pub fn file(file: FilePart) -> Self {
        Part {
            content: PartContent::File(file),
            metadata: None,
        }
    }

    /// A data part.
    pub fn data(data: Metadata) -> Self {
        Part {
            content: PartContent::Data(DataPart { data }),
            metadata: None,
        }
    }

    /// The JSON member name of the content.
    pub fn member_name(&self) -> &'static str {
        self.content.member_name()
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1 + usize::from(self.metadata.is_some())))?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::File(f) => m.serialize_entry("file", f)?,
            PartContent::Data(d) => m.serialize_entry("data", d)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        m.end()
    }
}

/// Records one member of a oneof, refusing a second one.
fn set_oneof<T, E: de::Error>(
    slot: &mut Option<(&'static str, T)>,
    name: &'static str,
    value: T,
    what: &str,
) -> Result<(), E> {
    if let Some((prev, _)) = slot {
        return Err(E::custom(format_args!(
            "{what} has both `{prev}` and `{name}` (oneof allows one)"
        )));
    }
    *slot = Some((name, value));
    Ok(())
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part object with one of text, file, data")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
                let mut content: Option<(&'static str, PartContent)> = None;
                let mut metadata: Option<Option<Metadata>> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "text" => {
                            if let Some(v) = map.next_value::<Option<String>>()? {
                                set_oneof(&mut content, "text", PartContent::Text(v), "Part")?;
                            }
                        }
                        "file" => {
                            if let Some(v) = map.next_value::<Option<FilePart>>()? {
                                set_oneof(&mut content, "file", PartContent::File(v), "Part")?;
                            }
                        }
                        "data" => {
                            if let Some(v) = map.next_value::<Option<DataPart>>()? {
                                set_oneof(&mut content, "data", PartContent::Data(v), "Part")?;
                            }
                        }
                        "metadata" => {
                            if metadata.is_some() {
                                return Err(de::Error::duplicate_field("metadata"));
                            }
                            metadata = Some(map.next_value()?);
                        }
                        _ => {
                            // Unknown members are ignored; the strict validator reports them.
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let (_, content) = content
                    .ok_or_else(|| de::Error::custom("Part needs one of `text`, `file`, `data`"))?;
                Ok(Part {
                    content,
                    metadata: metadata.flatten(),
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl JsonSchema for Part {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "v03.rest.Part".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let file = g.subschema_for::<FilePart>();
        let data = g.subschema_for::<DataPart>();
        schemars::json_schema!({
            "description": "One piece of content (P0 `Part`): exactly one of text, file, data.",
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "Plain text."},
                "file": file,
                "data": data,
                "metadata": {"type": "object", "description": "Part metadata (later 0.3 proto)."}
            },
            "oneOf": [
                {"required": ["text"]},
                {"required": ["file"]},
                {"required": ["data"]}
            ]
        })
    }
}

/// The content of a [`FilePart`] (P0 `oneof file`).
#[derive(Debug, Clone, PartialEq)]
pub enum FileContent {
    /// `fileWithUri`: where the content can be fetched.
    Uri(String),
    /// `fileWithBytes`: the content, base64 text kept verbatim.
    Bytes(Base64Bytes),
}

/// A file (P0 `FilePart`): `{"fileWithUri"|"fileWithBytes":..,"mimeType":..,"name":..}`.
///
/// `name` is not in P0 @ v0.3.0 but is in the later 0.3 proto the official SDK sends (field 4).
#[derive(Debug, Clone, PartialEq)]
pub struct FilePart {
    /// The content, by reference or by value.
    pub file: FileContent,
    /// `mimeType`.
    pub mime_type: Option<String>,
    /// `name` (later 0.3 proto; absent from P0 @ v0.3.0).
    pub name: Option<String>,
}

impl Serialize for FilePart {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 1 + usize::from(self.mime_type.is_some()) + usize::from(self.name.is_some());
        let mut m = s.serialize_map(Some(n))?;
        match &self.file {
            FileContent::Uri(u) => m.serialize_entry("fileWithUri", u)?,
            FileContent::Bytes(b) => m.serialize_entry("fileWithBytes", b)?,
        }
        if let Some(mt) = &self.mime_type {
            m.serialize_entry("mimeType", mt)?;
        }
        if let Some(n) = &self.name {
            m.serialize_entry("name", n)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for FilePart {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FilePart;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a FilePart object with fileWithUri or fileWithBytes")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FilePart, A::Error> {
                let mut file: Option<(&'static str, FileContent)> = None;
                let mut mime_type: Option<Option<String>> = None;
                let mut name: Option<Option<String>> = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "fileWithUri" | "file_with_uri" => {
                            if let Some(v) = map.next_value::<Option<String>>()? {
                                let c = FileContent::Uri(v);
                                set_oneof(&mut file, "fileWithUri", c, "FilePart")?;
                            }
                        }
                        "fileWithBytes" | "file_with_bytes" => {
                            if let Some(v) = map.next_value::<Option<Base64Bytes>>()? {
                                let c = FileContent::Bytes(v);
                                set_oneof(&mut file, "fileWithBytes", c, "FilePart")?;
                            }
                        }
                        "mimeType" | "mime_type" => {
                            if mime_type.is_some() {
                                return Err(de::Error::duplicate_field("mimeType"));
                            }
                            mime_type = Some(map.next_value()?);
                        }
                        "name" => {
                            if name.is_some() {
                                return Err(de::Error::duplicate_field("name"));
                            }
                            name = Some(map.next_value()?);
                        }
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let (_, file) = file.ok_or_else(|| {
                    de::Error::custom("FilePart needs one of `fileWithUri`, `fileWithBytes`")
                })?;
                Ok(FilePart {
                    file,
                    mime_type: mime_type.flatten(),
                    name: name.flatten(),
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl JsonSchema for FilePart {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "v03.rest.FilePart".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A file (P0 `FilePart`): exactly one of fileWithUri, fileWithBytes.",
            "type": "object",
            "properties": {
                "fileWithUri": {"type": "string", "description": "Where the content can be fetched."},
                "fileWithBytes": {"type": "string", "format": "byte", "description": "The content, base64."},
                "mimeType": {"type": "string", "description": "MIME type of the content."},
                "name": {"type": "string", "description": "File name (later 0.3 proto)."}
            },
            "oneOf": [
                {"required": ["fileWithUri"]},
                {"required": ["fileWithBytes"]}
            ]
        })
    }
}

/// Structured content (P0 `DataPart`): `{"data":{..}}`, an object (`google.protobuf.Struct`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.DataPart")]
#[schemars(extend("required" = ["data"]))]
pub struct DataPart {
    /// `data`: the structured content.
    #[serde(default)]
    pub data: Metadata,
}

// ---------------------------------------------------------------------------------------------
// Message, task, events
// ---------------------------------------------------------------------------------------------

/// One communication turn (P0 `Message`): parts are in `content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.Message")]
#[schemars(extend("required" = ["messageId", "role"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.TaskStatus")]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.Task")]
#[schemars(extend("required" = ["id", "contextId", "status"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.Artifact")]
#[schemars(extend("required" = ["artifactId"]))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.TaskStatusUpdateEvent")]
#[schemars(extend("required" = ["taskId", "contextId", "status"]))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.TaskArtifactUpdateEvent")]
#[schemars(extend("required" = ["taskId", "contextId", "artifact"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.PushNotificationConfig")]
#[schemars(extend("required" = ["url"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AuthenticationInfo")]
pub struct AuthenticationInfo {
    /// `schemes`: supported schemes, e.g. `Bearer`.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// `credentials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push config bound to a task by resource name (P0 `TaskPushNotificationConfig`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.TaskPushNotificationConfig")]
#[schemars(extend("required" = ["name", "pushNotificationConfig"]))]
pub struct TaskPushNotificationConfig {
    /// `name`: `tasks/{task id}/pushNotificationConfigs/{config id}` (see [`PushConfigName`]).
    #[serde(default)]
    pub name: String,
    /// `pushNotificationConfig`.
    #[serde(default, alias = "push_notification_config")]
    pub push_notification_config: PushNotificationConfig,
}

// ---------------------------------------------------------------------------------------------
// Requests and responses
// ---------------------------------------------------------------------------------------------

/// Options of a send (P0 `SendMessageConfiguration`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.SendMessageConfiguration")]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.SendMessageRequest")]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.SendMessageResponse")]
pub enum SendMessageResponse {
    /// `task`.
    Task(Task),
    /// `message`.
    #[serde(alias = "msg")]
    Message(Message),
}

/// One event of `message:stream` / `tasks/{id}:subscribe` (P0 `StreamResponse`, `oneof payload`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.StreamResponse")]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.GetTaskRequest")]
#[schemars(extend("required" = ["name"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.CancelTaskRequest")]
#[schemars(extend("required" = ["name"]))]
pub struct CancelTaskRequest {
    /// `name`: `tasks/{id}`.
    #[serde(default)]
    pub name: String,
}

/// `GET /v1/tasks/{id}:subscribe` (P0 `TaskSubscriptionRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.TaskSubscriptionRequest")]
#[schemars(extend("required" = ["name"]))]
pub struct TaskSubscriptionRequest {
    /// `name`: `tasks/{id}`.
    #[serde(default)]
    pub name: String,
}

/// `GET /v1/tasks/{id}/pushNotificationConfigs/{config}` (P0 `GetTaskPushNotificationConfigRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.GetTaskPushNotificationConfigRequest")]
#[schemars(extend("required" = ["name"]))]
pub struct GetTaskPushNotificationConfigRequest {
    /// `name`: `tasks/{id}/pushNotificationConfigs/{config}`.
    #[serde(default)]
    pub name: String,
}

/// `DELETE /v1/tasks/{id}/pushNotificationConfigs/{config}`
/// (P0 `DeleteTaskPushNotificationConfigRequest`); the response is `{}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.DeleteTaskPushNotificationConfigRequest")]
#[schemars(extend("required" = ["name"]))]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// `name`: `tasks/{id}/pushNotificationConfigs/{config}`.
    #[serde(default)]
    pub name: String,
}

/// `POST /v1/tasks/{id}/pushNotificationConfigs` (P0 `CreateTaskPushNotificationConfigRequest`).
///
/// On HTTP the body is `config` only (`body: "config"`); `parent` comes from the path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.CreateTaskPushNotificationConfigRequest")]
#[schemars(extend("required" = ["parent", "configId", "config"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.ListTaskPushNotificationConfigRequest")]
#[schemars(extend("required" = ["parent"]))]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.ListTaskPushNotificationConfigResponse")]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "v03.rest.GetAgentCardRequest")]
pub struct GetAgentCardRequest {}

/// `google.protobuf.Empty`: `{}`, the response of the delete call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "v03.rest.Empty")]
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

// ---------------------------------------------------------------------------------------------
// Agent card (P0 form)
// ---------------------------------------------------------------------------------------------

/// Self-description of an agent in P0 form (P0 `AgentCard`, served by `GET /v1/card`).
///
/// Unlike the JSON-RPC card it has no `stateTransitionHistory`, uses the oneof
/// [`SecurityScheme`] and wraps scopes in [`StringList`]. Unknown members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentCard")]
#[schemars(extend("required" = ["protocolVersion", "name", "description", "url", "version", "capabilities"]))]
pub struct AgentCard {
    /// `protocolVersion`.
    #[serde(default, alias = "protocol_version")]
    pub protocol_version: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `description`.
    #[serde(default)]
    pub description: String,
    /// `url`: the preferred endpoint.
    #[serde(default)]
    pub url: String,
    /// `preferredTransport`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "preferred_transport"
    )]
    pub preferred_transport: Option<String>,
    /// `additionalInterfaces`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "additional_interfaces"
    )]
    pub additional_interfaces: Vec<AgentInterface>,
    /// `provider`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// `version`.
    #[serde(default)]
    pub version: String,
    /// `documentationUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "documentation_url"
    )]
    pub documentation_url: Option<String>,
    /// `iconUrl` (later 0.3 proto, field 18; absent from P0 @ v0.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "icon_url")]
    pub icon_url: Option<String>,
    /// `capabilities`.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// `securitySchemes`.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        alias = "security_schemes"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// `security`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<Security>,
    /// `defaultInputModes`.
    #[serde(default, alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// `defaultOutputModes`.
    #[serde(default, alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// `skills`.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// `supportsAuthenticatedExtendedCard`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "supports_authenticated_extended_card"
    )]
    pub supports_authenticated_extended_card: Option<bool>,
    /// `signatures`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// Members P0 does not define, preserved verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Metadata,
}

/// An endpoint (P0 `AgentInterface`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentInterface")]
#[schemars(extend("required" = ["url", "transport"]))]
pub struct AgentInterface {
    /// `url`.
    #[serde(default)]
    pub url: String,
    /// `transport`: `JSONRPC`, `GRPC`, `HTTP+JSON`.
    #[serde(default)]
    pub transport: String,
}

/// Service provider (P0 `AgentProvider`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentProvider")]
#[schemars(extend("required" = ["url", "organization"]))]
pub struct AgentProvider {
    /// `url`.
    #[serde(default)]
    pub url: String,
    /// `organization`.
    #[serde(default)]
    pub organization: String,
}

/// Optional capabilities (P0 `AgentCapabilities`; no `stateTransitionHistory`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentCapabilities")]
pub struct AgentCapabilities {
    /// `streaming`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// `pushNotifications`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "push_notifications"
    )]
    pub push_notifications: Option<bool>,
    /// `extensions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

/// A supported extension (P0 `AgentExtension`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentExtension")]
#[schemars(extend("required" = ["uri"]))]
pub struct AgentExtension {
    /// `uri`.
    #[serde(default)]
    pub uri: String,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// `params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A skill (P0 `AgentSkill`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentSkill")]
#[schemars(extend("required" = ["id", "name", "description"]))]
pub struct AgentSkill {
    /// `id`.
    #[serde(default)]
    pub id: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `description`.
    #[serde(default)]
    pub description: String,
    /// `tags`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `examples`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// `inputModes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "input_modes")]
    pub input_modes: Vec<String>,
    /// `outputModes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "output_modes")]
    pub output_modes: Vec<String>,
    /// `security`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<Security>,
}

/// A JWS signature of the card (P0 `AgentCardSignature`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AgentCardSignature")]
#[schemars(extend("required" = ["protected", "signature"]))]
pub struct AgentCardSignature {
    /// `protected` (REQUIRED).
    #[serde(default)]
    pub protected: String,
    /// `signature` (REQUIRED).
    #[serde(default)]
    pub signature: String,
    /// `header`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

/// A list of strings (P0 `StringList`): `{"list":[..]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "v03.rest.StringList")]
pub struct StringList {
    /// `list`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// One security requirement (P0 `Security`): `{"schemes":{name:{"list":[scopes]}}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "v03.rest.Security")]
pub struct Security {
    /// `schemes`: scheme name -> required scopes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemes: BTreeMap<String, StringList>,
}

/// An authentication scheme (P0 `SecurityScheme`, `oneof scheme`): the member name is the
/// discriminator, e.g. `{"apiKeySecurityScheme":{"location":"header","name":"X-API-Key"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.SecurityScheme")]
pub enum SecurityScheme {
    /// `apiKeySecurityScheme`.
    #[serde(alias = "api_key_security_scheme")]
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// `httpAuthSecurityScheme`.
    #[serde(alias = "http_auth_security_scheme")]
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// `oauth2SecurityScheme`.
    #[serde(alias = "oauth2_security_scheme")]
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// `openIdConnectSecurityScheme`.
    #[serde(alias = "open_id_connect_security_scheme")]
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// `mtlsSecurityScheme`.
    #[serde(alias = "mtls_security_scheme")]
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

/// API key scheme (P0 `APIKeySecurityScheme`; `location` is `in` in the JSON-RPC dialect).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.APIKeySecurityScheme")]
#[schemars(extend("required" = ["location", "name"]))]
pub struct ApiKeySecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `location`: `query`, `header` or `cookie`.
    #[serde(default)]
    pub location: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
}

/// HTTP auth scheme (P0 `HTTPAuthSecurityScheme`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.HTTPAuthSecurityScheme")]
#[schemars(extend("required" = ["scheme"]))]
pub struct HttpAuthSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `scheme`, e.g. `Bearer`.
    #[serde(default)]
    pub scheme: String,
    /// `bearerFormat`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "bearer_format"
    )]
    pub bearer_format: Option<String>,
}

/// OAuth 2.0 scheme (P0 `OAuth2SecurityScheme`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.OAuth2SecurityScheme")]
pub struct OAuth2SecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `flows`: exactly one flow in P0.
    pub flows: OAuthFlows,
    /// `oauth2MetadataUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "oauth2_metadata_url"
    )]
    pub oauth2_metadata_url: Option<String>,
}

/// OpenID Connect scheme (P0 `OpenIdConnectSecurityScheme`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.OpenIdConnectSecurityScheme")]
#[schemars(extend("required" = ["openIdConnectUrl"]))]
pub struct OpenIdConnectSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `openIdConnectUrl`.
    #[serde(default, alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// Mutual TLS scheme (P0 `MutualTlsSecurityScheme`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.MutualTlsSecurityScheme")]
pub struct MutualTlsSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The flow of an OAuth 2.0 scheme (P0 `OAuthFlows`, `oneof flow`: exactly one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.OAuthFlows")]
pub enum OAuthFlows {
    /// `authorizationCode`.
    #[serde(alias = "authorization_code")]
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// `clientCredentials`.
    #[serde(alias = "client_credentials")]
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// `implicit`.
    Implicit(ImplicitOAuthFlow),
    /// `password`.
    Password(PasswordOAuthFlow),
}

/// Authorization code flow (P0 `AuthorizationCodeOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.AuthorizationCodeOAuthFlow")]
#[schemars(extend("required" = ["authorizationUrl", "tokenUrl"]))]
pub struct AuthorizationCodeOAuthFlow {
    /// `authorizationUrl`.
    #[serde(default, alias = "authorization_url")]
    pub authorization_url: String,
    /// `tokenUrl`.
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`: name -> description.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Client credentials flow (P0 `ClientCredentialsOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.ClientCredentialsOAuthFlow")]
#[schemars(extend("required" = ["tokenUrl"]))]
pub struct ClientCredentialsOAuthFlow {
    /// `tokenUrl`.
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Implicit flow (P0 `ImplicitOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.ImplicitOAuthFlow")]
#[schemars(extend("required" = ["authorizationUrl"]))]
pub struct ImplicitOAuthFlow {
    /// `authorizationUrl`.
    #[serde(default, alias = "authorization_url")]
    pub authorization_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Password flow (P0 `PasswordOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "v03.rest.PasswordOAuthFlow")]
#[schemars(extend("required" = ["tokenUrl"]))]
pub struct PasswordOAuthFlow {
    /// `tokenUrl`.
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}
