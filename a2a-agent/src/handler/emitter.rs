//! [`Emitter`]: how a handler reports progress on its task, the [`TaskSink`] it writes through
//! (the runtime's live task), and the task edits behind it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::model::{
    Artifact, Message, Part, Role, StreamResponse, Struct, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp, agent_message,
};

/// A change of a task made under its lock; it returns the event to publish (`None`: none).
pub(crate) type Edit<'a> = Box<dyn FnOnce(&mut Task) -> Option<StreamResponse> + Send + 'a>;

/// The future of a [`TaskSink`] write.
pub(crate) type SinkFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// The future of [`TaskSink::lock_metadata`].
pub(crate) type MetadataFuture<'a> =
    Pin<Box<dyn Future<Output = Option<Box<dyn MetadataGuard<'a> + 'a>>> + Send + 'a>>;

/// A task's metadata held under the task's lock: change it, then store it.
pub(crate) trait MetadataGuard<'a>: Send {
    /// The metadata (made empty when the task has none).
    fn metadata(&mut self) -> &mut Struct;
    /// Store the task with the change (no event), and let the lock go.
    fn store(self: Box<Self>) -> SinkFuture<'a>;
}

/// Where an [`Emitter`] writes: the task as the runtime holds it while it is live (the runtime's
/// `tasks::Live` implements it). The runtime hands each turn's handler one, as the official Rust
/// SDK hands its executor a queue.
pub(crate) trait TaskSink: Send + Sync {
    /// Apply `edit` to the task under its lock, store the task, publish the event `edit`
    /// returns and show the task to the caller. Nothing changes once the task is terminal.
    fn update<'a>(&'a self, edit: Edit<'a>) -> SinkFuture<'a>;

    /// The task's metadata under the task's lock, to change and store without an event;
    /// `None` once the task is terminal.
    fn lock_metadata(&self) -> MetadataFuture<'_>;

    /// Whether an intermediate message may be a `Message` stream event (the Camel table);
    /// otherwise a status update carries it.
    fn message_events(&self) -> bool;
}

/// Emits progress for one task. Emitting on an inactive emitter is a no-op.
#[derive(Clone, Default)]
pub struct Emitter {
    sink: Option<Arc<dyn TaskSink>>,
}

impl Emitter {
    /// An emitter writing to `sink` (the runtime's live task of a turn).
    pub(crate) fn to(sink: Arc<dyn TaskSink>) -> Self {
        Emitter { sink: Some(sink) }
    }
    /// An emitter with no task: every emit is a no-op.
    pub fn inactive() -> Self {
        Emitter { sink: None }
    }
    /// Whether there is an active task.
    pub fn is_active(&self) -> bool {
        self.sink.is_some()
    }
    /// WORKING status update with `text`.
    pub async fn emit(&self, text: impl Into<String>) {
        self.emit_state(TaskState::Working, text).await
    }
    /// Status update with `state` and `text`.
    pub async fn emit_state(&self, state: TaskState, text: impl Into<String>) {
        let text = text.into();
        self.update(move |t| {
            let msg = agent_message(
                vec![Part::text(text)],
                &t.id,
                t.context_id.as_deref().unwrap_or(""),
            );
            Some(status_change(t, state, Some(msg)))
        })
        .await
    }
    /// Status update with `state` and an optional agent message (none: a bare state change).
    pub async fn emit_status(&self, state: TaskState, message: Option<Message>) {
        self.update(move |t| {
            let message = message.map(|m| own_message(m, t));
            Some(status_change(t, state, message))
        })
        .await
    }
    /// Status update (WORKING) carrying an intermediate agent message.
    pub async fn emit_message(&self, message: Message) {
        self.update(move |t| {
            let message = own_message(message, t);
            Some(status_change(t, TaskState::Working, Some(message)))
        })
        .await
    }
    /// An intermediate agent message as a `Message` stream event (added to the task's history,
    /// the status unchanged) where the sink allows it (the Camel table), else as
    /// [`Self::emit_message`].
    pub async fn emit_message_event(&self, message: Message) {
        if !self.sink.as_ref().is_some_and(|s| s.message_events()) {
            return self.emit_message(message).await;
        }
        self.update(move |t| {
            let message = own_message(message, t);
            t.history.push(message.clone());
            Some(StreamResponse::Message(message))
        })
        .await
    }
    /// Change the task's `metadata` with `f` and store it, without sending an event (subscribers
    /// see it in the next snapshot, GetTask in the next read). Does nothing once the task is
    /// terminal, or on an inactive emitter.
    pub async fn update_metadata(&self, f: impl FnOnce(&mut Struct)) {
        if let Some(sink) = &self.sink
            && let Some(mut g) = sink.lock_metadata().await
        {
            f(g.metadata());
            g.store().await;
        }
    }
    /// Artifact update: stored on the task and sent to subscribers.
    pub async fn emit_artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) {
        self.update(move |t| Some(add_artifact(t, artifact, append, last_chunk)))
            .await
    }

    /// `edit` through the sink, if there is one.
    async fn update(
        &self,
        edit: impl FnOnce(&mut Task) -> Option<StreamResponse> + Send + 'static,
    ) {
        if let Some(sink) = &self.sink {
            sink.update(Box::new(edit)).await;
        }
    }
}

/// `m` as an agent message of task `t` (ids filled in).
fn own_message(mut m: Message, t: &Task) -> Message {
    m.task_id = Some(t.id.clone());
    m.context_id = t.context_id.clone();
    if m.message_id.is_empty() {
        m.message_id = uuid::Uuid::new_v4().to_string();
    }
    if m.role == Role::Unspecified {
        m.role = Role::Agent;
    }
    m
}

/// Put `t` in `state` (with `message`, added to its history): the status update event.
pub(crate) fn status_change(
    t: &mut Task,
    state: TaskState,
    message: Option<Message>,
) -> StreamResponse {
    if let Some(m) = &message {
        t.history.push(m.clone());
    }
    t.status = TaskStatus {
        state,
        message,
        timestamp: Some(Timestamp::now()),
    };
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone().unwrap_or_default(),
        status: t.status.clone(),
        metadata: None,
    })
}

/// Add `artifact` to `t` (appended to the artifact of its id with `append`, else replacing it):
/// the artifact update event.
pub(crate) fn add_artifact(
    t: &mut Task,
    artifact: Artifact,
    append: bool,
    last_chunk: bool,
) -> StreamResponse {
    match t
        .artifacts
        .iter_mut()
        .find(|a| a.artifact_id == artifact.artifact_id)
    {
        Some(existing) if append => existing.parts.extend(artifact.parts.iter().cloned()),
        Some(existing) => *existing = artifact.clone(),
        None => t.artifacts.push(artifact.clone()),
    }
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone().unwrap_or_default(),
        artifact,
        append: Some(append),
        last_chunk: Some(last_chunk),
        metadata: None,
    })
}

/// [`trim_history`] of a shared task: copied only when it loses history.
pub(crate) fn trim_shared(t: Arc<Task>, history_length: Option<i32>) -> Arc<Task> {
    match history_length {
        Some(n) if t.history.len() > n.max(0) as usize => {
            Arc::new(trim_history(Arc::unwrap_or_clone(t), history_length))
        }
        _ => t,
    }
}

/// Apply `historyLength` (None: all; 0: none; N: the N most recent).
pub(crate) fn trim_history(mut t: Task, history_length: Option<i32>) -> Task {
    if let Some(n) = history_length {
        let n = n.max(0) as usize;
        if t.history.len() > n {
            t.history.drain(..t.history.len() - n);
        }
    }
    t
}
