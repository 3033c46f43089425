//! `Task`, `TaskStatus`, `TaskState`, `Artifact`, the streaming events and `StreamResponse`.

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Message, Metadata, Part};
use crate::macros::proto_enum;
use crate::timestamp::Timestamp;

proto_enum! {
    /// The lifecycle state of a task (P1 `TaskState`).
    pub enum TaskState: "TaskState" {
        /// `TASK_STATE_UNSPECIFIED` (0): unknown.
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        /// `TASK_STATE_SUBMITTED` (1): acknowledged, not yet processing.
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        /// `TASK_STATE_WORKING` (2): being processed.
        Working = 2 => "TASK_STATE_WORKING",
        /// `TASK_STATE_COMPLETED` (3): terminal, success.
        Completed = 3 => "TASK_STATE_COMPLETED",
        /// `TASK_STATE_FAILED` (4): terminal, error.
        Failed = 4 => "TASK_STATE_FAILED",
        /// `TASK_STATE_CANCELED` (5): terminal, canceled.
        Canceled = 5 => "TASK_STATE_CANCELED",
        /// `TASK_STATE_INPUT_REQUIRED` (6): interrupted, waiting for the user.
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        /// `TASK_STATE_REJECTED` (7): terminal, the agent refused.
        Rejected = 7 => "TASK_STATE_REJECTED",
        /// `TASK_STATE_AUTH_REQUIRED` (8): interrupted, waiting for authentication.
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl TaskState {
    /// Terminal: COMPLETED, FAILED, CANCELED, REJECTED (S1 §3.1.6).
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// Interrupted: INPUT_REQUIRED, AUTH_REQUIRED.
    pub const fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }
}

/// The status of a task at a point in time (P1 `TaskStatus`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["state"])))]
pub struct TaskStatus {
    /// `state` (REQUIRED).
    #[serde(default)]
    pub state: TaskState,
    /// `message`: a message associated with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// `timestamp`: when this status was recorded (UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn new(state: TaskState) -> Self {
        TaskStatus {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// Sets the status message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

/// A unit of work (P1 `Task`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id", "status"])))]
pub struct Task {
    /// `id` (REQUIRED): server-generated task id.
    #[serde(default)]
    pub id: String,
    /// `contextId`: the conversation context.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "context_id")]
    pub context_id: Option<String>,
    /// `status` (REQUIRED): the current status.
    pub status: TaskStatus,
    /// `artifacts`: outputs produced so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// `history`: messages exchanged so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Task {
    /// A task with a fresh id and context id in `state`.
    pub fn new(state: TaskState) -> Self {
        Task {
            id: crate::new_id(),
            context_id: Some(crate::new_id()),
            status: TaskStatus::new(state),
            ..Default::default()
        }
    }

    /// A submitted task with a fresh id and context id.
    pub fn submitted() -> Self {
        Self::new(TaskState::Submitted)
    }

    /// A completed task with one artifact holding `parts`.
    pub fn completed(parts: Vec<Part>) -> Self {
        let mut t = Self::new(TaskState::Completed);
        t.artifacts.push(Artifact::new(parts));
        t
    }

    /// Sets `id`.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Sets `contextId`.
    pub fn with_context_id(mut self, id: impl Into<String>) -> Self {
        self.context_id = Some(id.into());
        self
    }

    /// Sets `status`.
    pub fn with_status(mut self, status: TaskStatus) -> Self {
        self.status = status;
        self
    }

    /// Appends an artifact.
    pub fn with_artifact(mut self, artifact: Artifact) -> Self {
        self.artifacts.push(artifact);
        self
    }

    /// Appends a history message.
    pub fn with_history(mut self, message: Message) -> Self {
        self.history.push(message);
        self
    }

    /// The current state.
    pub fn state(&self) -> TaskState {
        self.status.state
    }
}

/// An output of a task (P1 `Artifact`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["artifactId", "parts"])))]
pub struct Artifact {
    /// `artifactId` (REQUIRED): unique within the task.
    #[serde(default, alias = "artifact_id")]
    pub artifact_id: String,
    /// `name`: human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `description`: human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `parts` (REQUIRED, at least one): the content.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub parts: Vec<Part>,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// `extensions`: URIs of extensions present in this artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with a fresh id holding `parts`.
    pub fn new(parts: Vec<Part>) -> Self {
        Artifact {
            artifact_id: crate::new_id(),
            parts,
            ..Default::default()
        }
    }

    /// An artifact with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![Part::text(text)])
    }

    /// Sets `artifactId`.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.artifact_id = id.into();
        self
    }

    /// Sets `name`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A task status change, sent on streams and push (P1 `TaskStatusUpdateEvent`).
/// There is no `final` flag in 1.0: stream closure replaces it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId", "contextId", "status"])))]
pub struct TaskStatusUpdateEvent {
    /// `taskId` (REQUIRED).
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `contextId` (REQUIRED).
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// `status` (REQUIRED): the new status.
    pub status: TaskStatus,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskStatusUpdateEvent {
    /// An event for `task_id`/`context_id` with `status`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        status: TaskStatus,
    ) -> Self {
        TaskStatusUpdateEvent {
            task_id: task_id.into(),
            context_id: context_id.into(),
            status,
            metadata: None,
        }
    }
}

/// A new or updated artifact, sent on streams and push (P1 `TaskArtifactUpdateEvent`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["taskId", "contextId", "artifact"])))]
pub struct TaskArtifactUpdateEvent {
    /// `taskId` (REQUIRED).
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// `contextId` (REQUIRED).
    #[serde(default, alias = "context_id")]
    pub context_id: String,
    /// `artifact` (REQUIRED).
    pub artifact: Artifact,
    /// `append`: append to a previously sent artifact with the same id.
    /// Proto3 `bool` without presence; kept as sent (absent vs `false`), see hazard H40.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// `lastChunk`: this is the final chunk of the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "last_chunk")]
    pub last_chunk: Option<bool>,
    /// `metadata`: free-form extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskArtifactUpdateEvent {
    /// An event carrying `artifact` for `task_id`/`context_id`.
    pub fn new(
        task_id: impl Into<String>,
        context_id: impl Into<String>,
        artifact: Artifact,
    ) -> Self {
        TaskArtifactUpdateEvent {
            task_id: task_id.into(),
            context_id: context_id.into(),
            artifact,
            ..Default::default()
        }
    }

    /// `append`, absent meaning `false`.
    pub fn is_append(&self) -> bool {
        self.append.unwrap_or(false)
    }

    /// `lastChunk`, absent meaning `false`.
    pub fn is_last_chunk(&self) -> bool {
        self.last_chunk.unwrap_or(false)
    }
}

/// One event of a stream or push delivery (P1 `StreamResponse`, `oneof payload`):
/// `{"task":..}`, `{"message":..}`, `{"statusUpdate":..}` or `{"artifactUpdate":..}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// `task`: a task snapshot.
    Task(Task),
    /// `message`: a direct message.
    Message(Message),
    /// `statusUpdate`: a status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `artifactUpdate`: an artifact change.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

crate::macros::oneof_deserialize!(StreamResponse {
    "task" => Task(Task),
    "message" => Message(Message),
    "statusUpdate" | "status_update" => StatusUpdate(TaskStatusUpdateEvent),
    "artifactUpdate" | "artifact_update" => ArtifactUpdate(TaskArtifactUpdateEvent),
});

impl StreamResponse {
    /// The task state this event reports: the task's state for a task snapshot or a status
    /// update; `None` for messages and artifact updates.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            StreamResponse::Task(t) => Some(t.status.state),
            StreamResponse::StatusUpdate(e) => Some(e.status.state),
            _ => None,
        }
    }

    /// True if this event ends a stream: a direct message, or a terminal or interrupted state
    /// (S1 §3.1.2, §11.7).
    pub fn ends_stream(&self) -> bool {
        match self {
            StreamResponse::Message(_) => true,
            _ => self
                .state()
                .is_some_and(|s| s.is_terminal() || s.is_interrupted()),
        }
    }

    /// True if a live stream closes after this event: as [`StreamResponse::ends_stream`], except
    /// that a `Task` snapshot in an interrupted state does not close it (a subscription to a
    /// task waiting for input goes on with the next turn's events).
    pub fn closes_live_stream(&self) -> bool {
        match self {
            StreamResponse::Task(t) => t.status.state.is_terminal(),
            _ => self.ends_stream(),
        }
    }

    /// The task id this event is about, if any.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            StreamResponse::Task(t) => Some(&t.id),
            StreamResponse::Message(m) => m.task_id.as_deref(),
            StreamResponse::StatusUpdate(e) => Some(&e.task_id),
            StreamResponse::ArtifactUpdate(e) => Some(&e.task_id),
        }
    }
}

impl From<Task> for StreamResponse {
    fn from(t: Task) -> Self {
        StreamResponse::Task(t)
    }
}
impl From<Message> for StreamResponse {
    fn from(m: Message) -> Self {
        StreamResponse::Message(m)
    }
}
impl From<TaskStatusUpdateEvent> for StreamResponse {
    fn from(e: TaskStatusUpdateEvent) -> Self {
        StreamResponse::StatusUpdate(e)
    }
}
impl From<TaskArtifactUpdateEvent> for StreamResponse {
    fn from(e: TaskArtifactUpdateEvent) -> Self {
        StreamResponse::ArtifactUpdate(e)
    }
}
