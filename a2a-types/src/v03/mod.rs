//! A2A 0.3 in its JSON-RPC dialect: the `types.ts` model (J0 `specification/json/a2a.json` @ v0.3.0).
//!
//! Every object that the 0.3 JSON-RPC binding puts on the wire has a type here, with the exact member
//! names, `required` lists and enum strings of J0:
//! - `kind` discriminators (`"message"`, `"task"`, `"status-update"`, `"artifact-update"`, and
//!   `"text"`/`"file"`/`"data"` on parts) are always emitted; on parse a wrong one is refused
//!   and a missing one is inferred (the 0.3 spec examples and the Python SDK omit it), while
//!   [`validate`] reports it;
//! - [`TaskState`] is kebab-case and includes `unknown`;
//! - push-notification configs are nested ([`TaskPushNotificationConfig`]), and the push-config
//!   params use `id` for the **task** id (see [`GetTaskPushNotificationConfigParams`]);
//! - the agent card uses OpenAPI-style [`SecurityScheme`]s and `security: [{name: [scopes]}]`.
//!
//! Timestamps are kept as the exact text the peer sent ([`TaskStatus::timestamp`]), because 0.3
//! peers send naive ISO 8601 (`"2025-04-02T16:59:25.331844"`) and a parse/serialize round trip
//! must not rewrite them; [`TaskStatus::timestamp_utc`] interprets them.
//!
//! Strict validation ([`validate`], [`validate_request`], [`params_validator`],
//! [`result_validator`]) uses the schemas derived from these types with [`crate::strict`] and
//! reports every unknown member, missing required member, bad enum or `kind` value, non-object
//! `data`, bad base64 and unparseable timestamp with its JSON path.
//!
//! The HTTP+JSON dialect of 0.3 (ProtoJSON of the 0.3 proto) is a different JSON shape and lives in
//! [`rest`].
//!
//! ```
//! use a2a_types::v03::{Message, MessageSendParams, Part, SendMessageResult};
//!
//! let params: MessageSendParams = serde_json::from_str(
//!     r#"{"message":{"kind":"message","messageId":"m1","role":"user",
//!         "parts":[{"kind":"text","text":"hi"}]}}"#,
//! )
//! .unwrap();
//! assert_eq!(params.message.parts[0].as_text(), Some("hi"));
//!
//! let reply = SendMessageResult::Message(Message::agent_text("m2", "hello"));
//! let json = serde_json::to_value(&reply).unwrap();
//! assert_eq!(json["kind"], "message");
//! assert_eq!(json["role"], "agent");
//! ```

pub mod rest;

// ---------------------------------------------------------------------------------------------
// Strict validation
// ---------------------------------------------------------------------------------------------

/// Strictly validates `value` as the JSON-RPC dialect type `T`: every member 0.3 does not
/// define, every missing required member (`kind` included), every bad enum or `kind` value,
/// non-object `data`, bad base64 and unparseable timestamps, each with its JSON path.
///
/// Uses [`strict`] with [`Options::JSON`] (exact member names, any ISO 8601 timestamp).
///
/// ```
/// use a2a_types::v03;
/// use serde_json::json;
///
/// let doc = json!({"kind": "message", "messageId": "m", "role": "user",
///     "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": [1]}]});
/// let shown: Vec<String> = v03::validate::<v03::Message>(&doc).iter().map(|v| v.to_string()).collect();
/// assert_eq!(shown, ["parts[1].data: wrong type: expected object, found array"]);
/// ```
pub fn validate<T: JsonSchema>(value: &Value) -> Vec<Violation> {
    strict::validate_with::<T>(value, Options::JSON)
}

/// The strict validator of a 0.3 method's `params`; `None` for a method without params
/// (`agent/getAuthenticatedExtendedCard`).
pub fn params_validator(method: V03Method) -> Option<Validator> {
    let v = match method {
        V03Method::MessageSend | V03Method::MessageStream => {
            Validator::for_type::<MessageSendParams>()
        }
        V03Method::TasksGet => Validator::for_type::<TaskQueryParams>(),
        V03Method::TasksCancel | V03Method::TasksResubscribe => {
            Validator::for_type::<TaskIdParams>()
        }
        V03Method::PushConfigSet => Validator::for_type::<TaskPushNotificationConfig>(),
        V03Method::PushConfigGet => Validator::for_type::<GetTaskPushNotificationConfigParams>(),
        V03Method::PushConfigList => Validator::for_type::<ListTaskPushNotificationConfigParams>(),
        V03Method::PushConfigDelete => {
            Validator::for_type::<DeleteTaskPushNotificationConfigParams>()
        }
        V03Method::GetAuthenticatedExtendedCard => return None,
    };
    Some(v.with_options(Options::JSON))
}

/// The strict validator of a 0.3 method's successful `result`; `None` where the result is
/// `null` (`tasks/pushNotificationConfig/delete`).
pub fn result_validator(method: V03Method) -> Option<Validator> {
    let v = match method {
        V03Method::MessageSend => Validator::for_type::<SendMessageResult>(),
        V03Method::MessageStream | V03Method::TasksResubscribe => {
            Validator::for_type::<StreamResult>()
        }
        V03Method::TasksGet | V03Method::TasksCancel => Validator::for_type::<Task>(),
        V03Method::PushConfigSet | V03Method::PushConfigGet => {
            Validator::for_type::<TaskPushNotificationConfig>()
        }
        V03Method::PushConfigList => Validator::for_type::<ListTaskPushNotificationConfigResult>(),
        V03Method::PushConfigDelete => return None,
        V03Method::GetAuthenticatedExtendedCard => Validator::for_type::<AgentCard>(),
    };
    Some(v.with_options(Options::JSON))
}

/// Strictly validates a whole 0.3 JSON-RPC request: the envelope, the method (a 1.0 method is
/// reported) and the params of the method, paths starting at the request (`params.message...`).
pub fn validate_request(request: &Value) -> Vec<Violation> {
    let resolver = |m: crate::jsonrpc::Method| match m {
        crate::jsonrpc::Method::V03(m) => params_validator(m),
        crate::jsonrpc::Method::V1(_) => None,
    };
    strict::validate_jsonrpc_request(
        request,
        Some(crate::version::ProtocolVersion::V0_3),
        Some(&resolver),
    )
}

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, de::Error as _};
use serde_json::Value;

use crate::binary::{Base64Bytes, Base64Error};
use crate::jsonrpc::V03Method;
use crate::strict::{self, Options, Validator, Violation};
use crate::timestamp::{Timestamp, TimestampError};

/// Free-form metadata object (`{ [key: string]: any }` in T0).
pub type Metadata = serde_json::Map<String, Value>;

/// Defines a zero-sized marker type that serializes as one fixed string and only parses that string.
///
/// Used for the `kind` discriminators that J0 declares with `const`.
macro_rules! kind_marker {
    ($(#[$doc:meta])* $name:ident, $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The discriminator string this marker stands for.
            pub const VALUE: &'static str = $value;
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        // Parsed through `deserialize_option`, so an absent member (serde's missing-field
        // deserializer answers `none`) or `null` reads as the marker: the lenient parse accepts
        // a missing `kind`, while the schema (no `serde(default)`) still lists it as required.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("\"", $value, "\""))
                    }
                    fn visit_none<E: serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name)
                    }
                    fn visit_unit<E: serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name)
                    }
                    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<$name, D2::Error> {
                        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                        if s == $value {
                            Ok($name)
                        } else {
                            Err(D2::Error::invalid_value(
                                serde::de::Unexpected::Str(&s),
                                &concat!("\"", $value, "\""),
                            ))
                        }
                    }
                }
                d.deserialize_option(V)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "const": $value })
            }
        }
    };
}

kind_marker!(
    /// The `kind: "message"` discriminator of [`Message`].
    MessageKind,
    "message"
);
kind_marker!(
    /// The `kind: "task"` discriminator of [`Task`].
    TaskKind,
    "task"
);
kind_marker!(
    /// The `kind: "status-update"` discriminator of [`TaskStatusUpdateEvent`].
    StatusUpdateKind,
    "status-update"
);
kind_marker!(
    /// The `kind: "artifact-update"` discriminator of [`TaskArtifactUpdateEvent`].
    ArtifactUpdateKind,
    "artifact-update"
);

// ---------------------------------------------------------------------------------------------
// Message and parts
// ---------------------------------------------------------------------------------------------

/// Who sent a [`Message`] (T0 `role: "agent" | "user"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Sent by the client on behalf of a user (`"user"`).
    User,
    /// Sent by the remote agent (`"agent"`).
    Agent,
}

/// One communication turn between client and agent (T0 `Message`, `kind: "message"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Always `"message"`. Required by J0 and always emitted; a missing `kind` is accepted on
    /// parse (the 0.3 spec examples omit it, and so do some peers) and reported by strict validation.
    pub kind: MessageKind,
    /// Unique identifier of the message, generated by the sender.
    pub message_id: String,
    /// Sender of the message.
    pub role: Role,
    /// Content of the message.
    pub parts: Vec<Part>,
    /// Context the message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Task the message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Other tasks this message refers to, as context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<String>>,
    /// URIs of the extensions that contributed to this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Message {
    /// A message with the given role, id and parts, and nothing else set.
    pub fn new(role: Role, message_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Message {
            kind: MessageKind,
            message_id: message_id.into(),
            role,
            parts,
            context_id: None,
            task_id: None,
            reference_task_ids: None,
            extensions: None,
            metadata: None,
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

    /// Sets the context id (builder style).
    pub fn with_context_id(mut self, context_id: impl Into<String>) -> Self {
        self.context_id = Some(context_id.into());
        self
    }

    /// Sets the task id (builder style).
    pub fn with_task_id(mut self, task_id: impl Into<String>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }

    /// The concatenation of all text parts, separated by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.parts.iter().filter_map(Part::as_text).collect();
        texts.join("\n")
    }
}

/// A piece of content: text, file or structured data, discriminated by `kind` (T0 `Part`).
///
/// Parsing is single-pass (no buffering). A missing `kind` is inferred from the content member
/// (`text`, `file` or `data`), as the official Python SDK does; strict validation reports it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Part {
    /// `{"kind":"text","text":..}`.
    Text(TextPart),
    /// `{"kind":"file","file":{..}}`.
    File(FilePart),
    /// `{"kind":"data","data":{..}}`; `data` is always a JSON object in 0.3.
    Data(DataPart),
}

impl Part {
    /// A text part without metadata.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text(TextPart {
            text: text.into(),
            metadata: None,
        })
    }

    /// A data part without metadata.
    pub fn data(data: Metadata) -> Self {
        Part::Data(DataPart {
            data,
            metadata: None,
        })
    }

    /// A file part referring to a URI.
    pub fn file_uri(uri: impl Into<String>, mime_type: Option<String>) -> Self {
        Part::File(FilePart {
            file: FileContent::Uri(FileWithUri {
                uri: uri.into(),
                name: None,
                mime_type,
            }),
            metadata: None,
        })
    }

    /// A file part carrying bytes (encoded here with standard, padded base64).
    pub fn file_bytes(bytes: &[u8], name: Option<String>, mime_type: Option<String>) -> Self {
        Part::File(FilePart {
            file: FileContent::Bytes(FileWithBytes {
                bytes: Base64Bytes::encode(bytes).into_string(),
                name,
                mime_type,
            }),
            metadata: None,
        })
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Part::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The metadata of any part.
    pub fn metadata(&self) -> Option<&Metadata> {
        match self {
            Part::Text(p) => p.metadata.as_ref(),
            Part::File(p) => p.metadata.as_ref(),
            Part::Data(p) => p.metadata.as_ref(),
        }
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// Every member any part kind may carry; unknown members are ignored.
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            kind: Option<String>,
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            file: Option<FileContent>,
            #[serde(default)]
            data: Option<Value>,
            #[serde(default)]
            metadata: Option<Metadata>,
        }
        let raw = Raw::deserialize(d)?;
        let kind = match raw.kind.as_deref() {
            Some(k) => k,
            None if raw.text.is_some() => "text",
            None if raw.file.is_some() => "file",
            None if raw.data.is_some() => "data",
            None => return Err(D::Error::missing_field("kind")),
        };
        let metadata = raw.metadata;
        match kind {
            "text" => {
                let text = raw.text.ok_or_else(|| D::Error::missing_field("text"))?;
                Ok(Part::Text(TextPart { text, metadata }))
            }
            "file" => {
                let file = raw.file.ok_or_else(|| D::Error::missing_field("file"))?;
                Ok(Part::File(FilePart { file, metadata }))
            }
            "data" => match raw.data {
                Some(Value::Object(data)) => Ok(Part::Data(DataPart { data, metadata })),
                Some(_) => Err(D::Error::custom(
                    "`data` of a 0.3 data part must be a JSON object",
                )),
                None => Err(D::Error::missing_field("data")),
            },
            other => Err(D::Error::unknown_variant(other, &["text", "file", "data"])),
        }
    }
}

/// A text part (T0 `TextPart`, without its `kind`, which [`Part`] carries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextPart {
    /// The text content.
    pub text: String,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A file part (T0 `FilePart`, without its `kind`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilePart {
    /// The file, by value (`bytes`) or by reference (`uri`).
    pub file: FileContent,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A structured-data part (T0 `DataPart`, without its `kind`). `data` MUST be a JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataPart {
    /// The structured content (always an object in 0.3).
    pub data: Metadata,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The `file` of a [`FilePart`]: `FileWithBytes | FileWithUri` (mutually exclusive `bytes`/`uri`).
///
/// Parsing rejects an object carrying both `bytes` and `uri`, or neither.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FileContent {
    /// The file content inline, base64 encoded.
    Bytes(FileWithBytes),
    /// The file content at a URI.
    Uri(FileWithUri),
}

impl FileContent {
    /// The file name, if given.
    pub fn name(&self) -> Option<&str> {
        match self {
            FileContent::Bytes(f) => f.name.as_deref(),
            FileContent::Uri(f) => f.name.as_deref(),
        }
    }

    /// The MIME type, if given.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            FileContent::Bytes(f) => f.mime_type.as_deref(),
            FileContent::Uri(f) => f.mime_type.as_deref(),
        }
    }
}

impl<'de> Deserialize<'de> for FileContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Raw {
            #[serde(default)]
            bytes: Option<String>,
            #[serde(default)]
            uri: Option<String>,
            #[serde(default)]
            name: Option<String>,
            #[serde(default)]
            mime_type: Option<String>,
        }
        let raw = Raw::deserialize(d)?;
        match (raw.bytes, raw.uri) {
            (Some(bytes), None) => Ok(FileContent::Bytes(FileWithBytes {
                bytes,
                name: raw.name,
                mime_type: raw.mime_type,
            })),
            (None, Some(uri)) => Ok(FileContent::Uri(FileWithUri {
                uri,
                name: raw.name,
                mime_type: raw.mime_type,
            })),
            (Some(_), Some(_)) => Err(D::Error::custom(
                "file has both `bytes` and `uri`; they are mutually exclusive",
            )),
            (None, None) => Err(D::Error::custom("file needs either `bytes` or `uri`")),
        }
    }
}

/// A file given inline (T0 `FileWithBytes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileWithBytes {
    /// Base64-encoded content, kept as the exact text received (see [`FileWithBytes::decode`]).
    #[schemars(extend("format" = "byte"))]
    pub bytes: String,
    /// File name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// MIME type of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl FileWithBytes {
    /// Decodes `bytes` (standard or URL-safe alphabet, padding optional; see [`Base64Bytes`]).
    pub fn decode(&self) -> Result<Vec<u8>, Base64Error> {
        Base64Bytes::new(self.bytes.as_str())?.decode()
    }
}

/// A file given by reference (T0 `FileWithUri`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileWithUri {
    /// Where the content can be fetched.
    pub uri: String,
    /// File name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// MIME type of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Task
// ---------------------------------------------------------------------------------------------

/// Lifecycle state of a task (T0 `TaskState`, kebab-case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    /// `submitted`.
    Submitted,
    /// `working`.
    Working,
    /// `input-required` (interrupted).
    InputRequired,
    /// `completed` (terminal).
    Completed,
    /// `canceled` (terminal).
    Canceled,
    /// `failed` (terminal).
    Failed,
    /// `rejected` (terminal).
    Rejected,
    /// `auth-required` (interrupted).
    AuthRequired,
    /// `unknown`.
    Unknown,
}

impl TaskState {
    /// Every state, in J0 order.
    pub const ALL: [TaskState; 9] = [
        TaskState::Submitted,
        TaskState::Working,
        TaskState::InputRequired,
        TaskState::Completed,
        TaskState::Canceled,
        TaskState::Failed,
        TaskState::Rejected,
        TaskState::AuthRequired,
        TaskState::Unknown,
    ];

    /// The wire string (`"input-required"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Canceled => "canceled",
            TaskState::Failed => "failed",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
            TaskState::Unknown => "unknown",
        }
    }

    /// `completed`, `canceled`, `failed` or `rejected`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Canceled | TaskState::Failed | TaskState::Rejected
        )
    }

    /// `input-required` or `auth-required`.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Current status of a task (T0 `TaskStatus`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// An optional message from the agent about this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// ISO 8601 date-time of the status, kept verbatim (0.3 peers send naive times without zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A status with only its state set.
    pub fn new(state: TaskState) -> Self {
        TaskStatus {
            state,
            message: None,
            timestamp: None,
        }
    }

    /// The timestamp as a UTC instant ([`Timestamp`] accepts naive ISO 8601, taken as UTC, and
    /// normalizes offsets). `None` if absent.
    pub fn timestamp_utc(&self) -> Option<Result<Timestamp, TimestampError>> {
        self.timestamp.as_deref().map(Timestamp::parse)
    }
}

/// A unit of work (T0 `Task`, `kind: "task"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Always `"task"`.
    pub kind: TaskKind,
    /// Server-generated task id.
    pub id: String,
    /// Server-generated context id (required in 0.3).
    pub context_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Output artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// Message history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Task {
    /// A task with the given ids and state, nothing else set.
    pub fn new(id: impl Into<String>, context_id: impl Into<String>, state: TaskState) -> Self {
        Task {
            kind: TaskKind,
            id: id.into(),
            context_id: context_id.into(),
            status: TaskStatus::new(state),
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    /// A completed task carrying one artifact with a single text part.
    pub fn completed_with_text(
        id: impl Into<String>,
        context_id: impl Into<String>,
        artifact_id: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let mut task = Self::new(id, context_id, TaskState::Completed);
        task.artifacts = Some(vec![Artifact::new(artifact_id, vec![Part::text(text)])]);
        task
    }
}

/// An output of a task (T0 `Artifact`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Id, unique within the task.
    pub artifact_id: String,
    /// Content.
    pub parts: Vec<Part>,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// URIs of the extensions that contributed to this artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Artifact {
    /// An artifact with the given id and parts.
    pub fn new(artifact_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Artifact {
            artifact_id: artifact_id.into(),
            parts,
            name: None,
            description: None,
            extensions: None,
            metadata: None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming events
// ---------------------------------------------------------------------------------------------

/// A status change of a task, sent on streams and push (T0 `TaskStatusUpdateEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// Always `"status-update"`.
    pub kind: StatusUpdateKind,
    /// Task id.
    pub task_id: String,
    /// Context id.
    pub context_id: String,
    /// New status.
    pub status: TaskStatus,
    /// `true` on the last event of the stream.
    #[serde(rename = "final")]
    pub is_final: bool,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskStatusUpdateEvent {
    /// A status event with no message or metadata.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        status: TaskStatus,
        is_final: bool,
    ) -> Self {
        TaskStatusUpdateEvent {
            kind: StatusUpdateKind,
            task_id: task_id.into(),
            context_id: context_id.into(),
            status,
            is_final,
            metadata: None,
        }
    }
}

/// A new or updated artifact, sent on streams and push (T0 `TaskArtifactUpdateEvent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// Always `"artifact-update"`.
    pub kind: ArtifactUpdateKind,
    /// Task id.
    pub task_id: String,
    /// Context id.
    pub context_id: String,
    /// The artifact (or chunk of it).
    pub artifact: Artifact,
    /// Append to the previously sent artifact with the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// This is the final chunk of the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskArtifactUpdateEvent {
    /// An artifact event with `append`/`lastChunk` unset.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        artifact: Artifact,
    ) -> Self {
        TaskArtifactUpdateEvent {
            kind: ArtifactUpdateKind,
            task_id: task_id.into(),
            context_id: context_id.into(),
            artifact,
            append: None,
            last_chunk: None,
            metadata: None,
        }
    }
}

/// Every member of the four `kind`-discriminated result objects, read in one pass (no buffering).
/// Members the selected variant does not define are dropped, as in the lenient parse of each
/// type; since they are parsed with their types first, a malformed one (say a task with
/// `"role": 5`) is refused.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnyResult {
    #[serde(default)]
    kind: Option<String>,
    // Task
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    context_id: Option<String>,
    #[serde(default)]
    status: Option<TaskStatus>,
    #[serde(default)]
    artifacts: Option<Vec<Artifact>>,
    #[serde(default)]
    history: Option<Vec<Message>>,
    #[serde(default)]
    metadata: Option<Metadata>,
    // Message
    #[serde(default)]
    message_id: Option<String>,
    #[serde(default)]
    role: Option<Role>,
    #[serde(default)]
    parts: Option<Vec<Part>>,
    #[serde(default)]
    task_id: Option<String>,
    #[serde(default)]
    reference_task_ids: Option<Vec<String>>,
    #[serde(default)]
    extensions: Option<Vec<String>>,
    // events
    #[serde(default, rename = "final")]
    is_final: Option<bool>,
    #[serde(default)]
    artifact: Option<Artifact>,
    #[serde(default)]
    append: Option<bool>,
    #[serde(default)]
    last_chunk: Option<bool>,
}

fn need<T, E: serde::de::Error>(v: Option<T>, field: &'static str) -> Result<T, E> {
    v.ok_or_else(|| E::missing_field(field))
}

impl AnyResult {
    /// The `kind`, or when absent the one inferred from the members only one variant requires
    /// (`messageId`: message; `artifact`: artifact-update; `final`: status-update; `status`:
    /// task), matching the leniency of the official SDKs; strict validation reports it.
    fn kind<E: serde::de::Error>(&self) -> Result<String, E> {
        if let Some(k) = &self.kind {
            return Ok(k.clone());
        }
        let k = if self.message_id.is_some() {
            MessageKind::VALUE
        } else if self.artifact.is_some() {
            ArtifactUpdateKind::VALUE
        } else if self.is_final.is_some() {
            StatusUpdateKind::VALUE
        } else if self.status.is_some() {
            TaskKind::VALUE
        } else {
            return Err(E::missing_field("kind"));
        };
        Ok(k.to_owned())
    }

    fn into_task<E: serde::de::Error>(self) -> Result<Task, E> {
        Ok(Task {
            kind: TaskKind,
            id: need(self.id, "id")?,
            context_id: need(self.context_id, "contextId")?,
            status: need(self.status, "status")?,
            artifacts: self.artifacts,
            history: self.history,
            metadata: self.metadata,
        })
    }

    fn into_message<E: serde::de::Error>(self) -> Result<Message, E> {
        Ok(Message {
            kind: MessageKind,
            message_id: need(self.message_id, "messageId")?,
            role: need(self.role, "role")?,
            parts: need(self.parts, "parts")?,
            context_id: self.context_id,
            task_id: self.task_id,
            reference_task_ids: self.reference_task_ids,
            extensions: self.extensions,
            metadata: self.metadata,
        })
    }

    fn into_status_update<E: serde::de::Error>(self) -> Result<TaskStatusUpdateEvent, E> {
        Ok(TaskStatusUpdateEvent {
            kind: StatusUpdateKind,
            task_id: need(self.task_id, "taskId")?,
            context_id: need(self.context_id, "contextId")?,
            status: need(self.status, "status")?,
            is_final: need(self.is_final, "final")?,
            metadata: self.metadata,
        })
    }

    fn into_artifact_update<E: serde::de::Error>(self) -> Result<TaskArtifactUpdateEvent, E> {
        Ok(TaskArtifactUpdateEvent {
            kind: ArtifactUpdateKind,
            task_id: need(self.task_id, "taskId")?,
            context_id: need(self.context_id, "contextId")?,
            artifact: need(self.artifact, "artifact")?,
            append: self.append,
            last_chunk: self.last_chunk,
            metadata: self.metadata,
        })
    }
}

/// The result of `message/send`: a bare [`Task`] or [`Message`], discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SendMessageResult {
    /// `kind: "task"`.
    Task(Task),
    /// `kind: "message"`.
    Message(Message),
}

impl<'de> Deserialize<'de> for SendMessageResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = AnyResult::deserialize(d)?;
        match raw.kind::<D::Error>()?.as_str() {
            "task" => raw.into_task().map(SendMessageResult::Task),
            "message" => raw.into_message().map(SendMessageResult::Message),
            other => Err(D::Error::unknown_variant(other, &["task", "message"])),
        }
    }
}

/// One result of `message/stream` / `tasks/resubscribe`: a bare object discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StreamResult {
    /// `kind: "task"`.
    Task(Task),
    /// `kind: "message"`.
    Message(Message),
    /// `kind: "status-update"`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `kind: "artifact-update"`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl<'de> Deserialize<'de> for StreamResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = AnyResult::deserialize(d)?;
        match raw.kind::<D::Error>()?.as_str() {
            "task" => raw.into_task().map(StreamResult::Task),
            "message" => raw.into_message().map(StreamResult::Message),
            "status-update" => raw.into_status_update().map(StreamResult::StatusUpdate),
            "artifact-update" => raw.into_artifact_update().map(StreamResult::ArtifactUpdate),
            other => Err(D::Error::unknown_variant(
                other,
                &["task", "message", "status-update", "artifact-update"],
            )),
        }
    }
}

impl From<SendMessageResult> for StreamResult {
    fn from(r: SendMessageResult) -> Self {
        match r {
            SendMessageResult::Task(t) => StreamResult::Task(t),
            SendMessageResult::Message(m) => StreamResult::Message(m),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Request params
// ---------------------------------------------------------------------------------------------

/// Params of `message/send` and `message/stream` (T0 `MessageSendParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigParams {
    /// Task id.
    pub id: String,
    /// Extension metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/delete` (T0 `DeleteTaskPushNotificationConfigParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

// ---------------------------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------------------------

/// Transport names of 0.3 (`preferredTransport`, `AgentInterface.transport`).
pub mod transport {
    /// JSON-RPC 2.0 over HTTP.
    pub const JSONRPC: &str = "JSONRPC";
    /// gRPC.
    pub const GRPC: &str = "GRPC";
    /// HTTP+JSON (REST).
    pub const HTTP_JSON: &str = "HTTP+JSON";
}

/// Self-description of an agent (T0 `AgentCard`), served at `/.well-known/agent-card.json`.
///
/// Members this version does not define are kept in [`AgentCard::extra`], so a parse/serialize
/// round trip loses nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("required" = [
    "protocolVersion", "name", "description", "url", "version", "capabilities",
    "defaultInputModes", "defaultOutputModes", "skills"
]))]
pub struct AgentCard {
    /// A2A version the agent implements. Required by J0, with the default `"0.3.0"`, which the
    /// lenient parse applies when a (pre-0.2.6) card omits it; strict validation reports it.
    #[serde(default = "default_protocol_version")]
    pub protocol_version: String,
    /// Human-readable name.
    pub name: String,
    /// Human-readable description.
    pub description: String,
    /// URL of the preferred endpoint.
    pub url: String,
    /// Transport of `url` (T0 default `"JSONRPC"`; see [`transport`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<String>,
    /// Further endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_interfaces: Option<Vec<AgentInterface>>,
    /// Icon URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// Service provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// Version of the agent (not of the protocol).
    pub version: String,
    /// Documentation URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Optional capabilities.
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Security requirements: OR of ANDs of `{scheme name: [scopes]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<SecurityRequirement>>,
    /// Default input media types.
    pub default_input_modes: Vec<String>,
    /// Default output media types.
    pub default_output_modes: Vec<String>,
    /// Skills.
    pub skills: Vec<AgentSkill>,
    /// An extended card is served to authenticated clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    /// JWS signatures of the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<AgentCardSignature>>,
    /// Members 0.3 does not define, preserved verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Metadata,
}

impl AgentCard {
    /// A minimal card: JSON-RPC at `url`, no skills, no capabilities, text in and out.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        url: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        AgentCard {
            protocol_version: "0.3.0".into(),
            name: name.into(),
            description: description.into(),
            url: url.into(),
            preferred_transport: Some(transport::JSONRPC.into()),
            additional_interfaces: None,
            icon_url: None,
            provider: None,
            version: version.into(),
            documentation_url: None,
            capabilities: AgentCapabilities::default(),
            security_schemes: None,
            security: None,
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["text/plain".into()],
            skills: Vec::new(),
            supports_authenticated_extended_card: None,
            signatures: None,
            extra: Metadata::new(),
        }
    }

    /// `preferredTransport`, with the T0 default `"JSONRPC"` applied.
    pub fn preferred_transport(&self) -> &str {
        self.preferred_transport
            .as_deref()
            .unwrap_or(transport::JSONRPC)
    }
}

/// The J0 default of `AgentCard.protocolVersion`.
fn default_protocol_version() -> String {
    "0.3.0".into()
}

/// One security requirement: scheme name -> required scopes (all must be satisfied).
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

/// An endpoint of the agent (T0 `AgentInterface`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL.
    pub url: String,
    /// Transport name (see [`transport`]).
    pub transport: String,
}

/// Service provider of the agent (T0 `AgentProvider`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// Organization name.
    pub organization: String,
    /// Organization URL.
    pub url: String,
}

/// Optional capabilities (T0 `AgentCapabilities`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Supports `message/stream` and `tasks/resubscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Supports push notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Exposes the history of state transitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    /// Supported extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<AgentExtension>>,
    /// Members 0.3 does not define, preserved verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Metadata,
}

/// An extension the agent supports (T0 `AgentExtension`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// Extension URI.
    pub uri: String,
    /// How the agent uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Clients must understand it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A skill of the agent (T0 `AgentSkill`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Skill id.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    /// Input media types (overrides the card default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modes: Option<Vec<String>>,
    /// Output media types (overrides the card default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_modes: Option<Vec<String>>,
    /// Security requirements of this skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<SecurityRequirement>>,
    /// Members 0.3 does not define, preserved verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Metadata,
}

impl AgentSkill {
    /// A skill with the required members only.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        tags: Vec<String>,
    ) -> Self {
        AgentSkill {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags,
            examples: None,
            input_modes: None,
            output_modes: None,
            security: None,
            extra: Metadata::new(),
        }
    }
}

/// A JWS signature of the card (T0 `AgentCardSignature`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// Base64url-encoded protected JWS header.
    pub protected: String,
    /// Base64url-encoded signature.
    pub signature: String,
    /// Unprotected JWS header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

/// An authentication scheme, OpenAPI 3.0 style, discriminated by `type` (T0 `SecurityScheme`).
#[allow(clippy::large_enum_variant)] // wire model: boxing would only make matching noisier
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum SecurityScheme {
    /// `{"type":"apiKey","in":..,"name":..}`.
    #[serde(rename = "apiKey")]
    ApiKey(ApiKeySecurityScheme),
    /// `{"type":"http","scheme":..}`.
    #[serde(rename = "http")]
    Http(HttpAuthSecurityScheme),
    /// `{"type":"oauth2","flows":{..}}`.
    #[serde(rename = "oauth2")]
    OAuth2(OAuth2SecurityScheme),
    /// `{"type":"openIdConnect","openIdConnectUrl":..}`.
    #[serde(rename = "openIdConnect")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// `{"type":"mutualTLS"}`.
    #[serde(rename = "mutualTLS")]
    MutualTls(MutualTlsSecurityScheme),
}

/// Where an API key is sent (T0 `APIKeySecurityScheme.in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyLocation {
    /// `"cookie"`.
    Cookie,
    /// `"header"`.
    Header,
    /// `"query"`.
    Query,
}

/// API key scheme (T0 `APIKeySecurityScheme`, without its `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// Where the key goes.
    #[serde(rename = "in")]
    pub location: ApiKeyLocation,
    /// Header, query or cookie name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// HTTP authentication scheme (T0 `HTTPAuthSecurityScheme`, without its `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// RFC 7235 scheme name, e.g. `bearer`.
    pub scheme: String,
    /// Token format hint, e.g. `JWT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_format: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// OAuth 2.0 scheme (T0 `OAuth2SecurityScheme`, without its `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Supported flows (several at once are allowed in 0.3).
    pub flows: OAuthFlows,
    /// RFC 8414 metadata URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2_metadata_url: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// OpenID Connect scheme (T0 `OpenIdConnectSecurityScheme`, without its `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Discovery document URL.
    pub open_id_connect_url: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Mutual TLS scheme (T0 `MutualTLSSecurityScheme`, without its `type`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The OAuth flows of a scheme; any subset may be present (T0 `OAuthFlows`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlows {
    /// Authorization code flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<AuthorizationCodeOAuthFlow>,
    /// Client credentials flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentialsOAuthFlow>,
    /// Implicit flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<ImplicitOAuthFlow>,
    /// Resource owner password flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordOAuthFlow>,
}

/// Scope name -> description.
pub type Scopes = BTreeMap<String, String>;

/// Authorization code flow (T0 `AuthorizationCodeOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// Authorization endpoint.
    pub authorization_url: String,
    /// Token endpoint.
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes.
    pub scopes: Scopes,
}

/// Client credentials flow (T0 `ClientCredentialsOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// Token endpoint.
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes.
    pub scopes: Scopes,
}

/// Implicit flow (T0 `ImplicitOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization endpoint.
    pub authorization_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes.
    pub scopes: Scopes,
}

/// Password flow (T0 `PasswordOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Token endpoint.
    pub token_url: String,
    /// Refresh endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// Available scopes.
    pub scopes: Scopes,
}
