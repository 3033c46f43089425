//! A2A 0.3 tasks, their streaming events and the results that carry either.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, de::Error as _};

use super::{
    ArtifactUpdateKind, Message, MessageKind, Metadata, Part, Role, StatusUpdateKind, TaskKind,
};
use crate::timestamp::{Timestamp, TimestampError};

// ---------------------------------------------------------------------------------------------
// Task
// ---------------------------------------------------------------------------------------------

/// Lifecycle state of a task (T0 `TaskState`, kebab-case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// An optional message from the agent about this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// ISO 8601 date-time of the status, kept verbatim (0.3 peers send naive times without zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(extend("format" = "date-time")))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
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
