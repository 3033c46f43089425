//! [`Emitter`]: how a handler reports progress on its task, and the task edits behind it.

use std::sync::{Arc, Weak};

use super::{Live, TaskManager, now_ts};
use crate::model::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent, agent_message,
};

/// Emits progress for one task. Emitting on an inactive emitter is a no-op.
#[derive(Clone, Default)]
pub struct Emitter {
    pub(super) inner: Option<(Weak<TaskManager>, Arc<Live>)>,
}

impl Emitter {
    /// An emitter with no task: every emit is a no-op.
    pub fn inactive() -> Self {
        Emitter { inner: None }
    }
    /// Whether there is an active task.
    pub fn is_active(&self) -> bool {
        self.inner.is_some()
    }
    /// WORKING status update with `text`.
    pub async fn emit(&self, text: impl Into<String>) {
        self.emit_state(TaskState::Working, text).await
    }
    /// Status update with `state` and `text`.
    pub async fn emit_state(&self, state: TaskState, text: impl Into<String>) {
        let text = text.into();
        if let Some((mgr, live)) = &self.inner
            && let Some(mgr) = mgr.upgrade()
        {
            let _ = mgr
                .update(live, |t| {
                    let msg = agent_message(
                        vec![Part::text(text)],
                        &t.id,
                        t.context_id.as_deref().unwrap_or(""),
                    );
                    Some(status_change(t, state, Some(msg)))
                })
                .await;
        }
    }
    /// Status update with `state` and an optional agent message (none: a bare state change).
    pub async fn emit_status(&self, state: TaskState, message: Option<Message>) {
        if let Some((mgr, live)) = &self.inner
            && let Some(mgr) = mgr.upgrade()
        {
            let _ = mgr
                .update(live, |t| {
                    let message = message.map(|m| own_message(m, t));
                    Some(status_change(t, state, message))
                })
                .await;
        }
    }
    /// Status update (WORKING) carrying an intermediate agent message.
    pub async fn emit_message(&self, mut message: Message) {
        if let Some((mgr, live)) = &self.inner
            && let Some(mgr) = mgr.upgrade()
        {
            let _ = mgr
                .update(live, |t| {
                    message.task_id = Some(t.id.clone());
                    message.context_id = t.context_id.clone();
                    if message.message_id.is_empty() {
                        message.message_id = uuid::Uuid::new_v4().to_string();
                    }
                    if message.role == Role::Unspecified {
                        message.role = Role::Agent;
                    }
                    Some(status_change(t, TaskState::Working, Some(message)))
                })
                .await;
        }
    }
    /// Change the task's `metadata` with `f` and store it, without sending an event (subscribers
    /// see it in the next snapshot, GetTask in the next read). Does nothing once the task is
    /// terminal, or on an inactive emitter.
    pub async fn update_metadata(&self, f: impl FnOnce(&mut crate::model::Struct)) {
        if let Some((mgr, live)) = &self.inner
            && let Some(mgr) = mgr.upgrade()
        {
            mgr.update_metadata(live, f).await;
        }
    }
    /// Artifact update: stored on the task and sent to subscribers.
    pub async fn emit_artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) {
        if let Some((mgr, live)) = &self.inner
            && let Some(mgr) = mgr.upgrade()
        {
            let _ = mgr
                .update(live, |t| {
                    Some(add_artifact(t, artifact, append, last_chunk))
                })
                .await;
        }
    }
}

/// `m` as an agent message of task `t` (ids filled in).
pub(super) fn own_message(mut m: Message, t: &Task) -> Message {
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

pub(super) fn status_change(
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
        timestamp: Some(now_ts()),
    };
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone().unwrap_or_default(),
        status: t.status.clone(),
        metadata: None,
    })
}

pub(super) fn add_artifact(
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
