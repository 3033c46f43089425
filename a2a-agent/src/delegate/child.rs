//! What a delegation ends with ([`Child`], or a [`DelegateError`] that fails the parent with a
//! reason fit for its caller), and the parent's metadata it leaves: the [`DELEGATIONS_KEY`]
//! links and the [`FORWARDED_KEY`] of forwarded messages.

use a2a_client::ClientError;
use serde_json::{Value, json};

use crate::handler::HandlerError;
use crate::model::{Artifact, Message, Task, TaskState};

/// The parent task's metadata key listing its child tasks (an array of
/// `{"agent", "taskId", "contextId", "state"}`).
pub const DELEGATIONS_KEY: &str = "a2a-rs.dev/delegations";

/// The metadata key on a forwarded status message: `{"agent", "taskId"}` of the child it
/// came from.
pub const FORWARDED_KEY: &str = "a2a-rs.dev/delegatedFrom";

/// The end of a child's turn that the handler can go on with.
#[derive(Debug, Clone, PartialEq)]
pub struct Child {
    /// The child's name (see [`Delegate::name`](super::Delegate::name)).
    pub agent: String,
    /// The child task as it stood at the end of its turn (COMPLETED, INPUT_REQUIRED or
    /// AUTH_REQUIRED); `None` when the child answered with a direct message.
    pub task: Option<Task>,
    /// The direct reply, or the task's final status message.
    pub message: Option<Message>,
}

impl Child {
    /// The child task's state (`None` for a direct reply).
    pub fn state(&self) -> Option<TaskState> {
        self.task.as_ref().map(|t| t.status.state)
    }
    /// The child task's id (`None` for a direct reply).
    pub fn task_id(&self) -> Option<&str> {
        self.task.as_ref().map(|t| t.id.as_str())
    }
    /// The child's artifacts.
    pub fn artifacts(&self) -> &[Artifact] {
        self.task.as_ref().map(|t| &t.artifacts[..]).unwrap_or(&[])
    }
    /// The answer as text: the message's text, else the artifacts' text parts joined by newlines.
    pub fn text(&self) -> String {
        if let Some(m) = &self.message {
            let t = m.text();
            if !t.is_empty() {
                return t;
            }
        }
        self.artifacts()
            .iter()
            .flat_map(|a| a.parts.iter().filter_map(|p| p.as_text()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why a delegation did not give a [`Child`].
#[derive(Debug, thiserror::Error)]
pub enum DelegateError {
    /// The child agent could not be reached, or refused the request (an A2A error, an HTTP
    /// error, a discovery or selection failure).
    #[error("delegation to {agent}: {source}")]
    Client {
        /// The child's name, or its URL when its card was not read.
        agent: String,
        /// What the client saw.
        #[source]
        source: ClientError,
    },
    /// The child task ended FAILED or REJECTED.
    #[error("the delegated task of {agent} {}: {reason}",
        if task.status.state == TaskState::Rejected { "was rejected" } else { "failed" })]
    Failed {
        /// The child's name.
        agent: String,
        /// The child task at its end.
        task: Box<Task>,
        /// The text of its final status message.
        reason: String,
    },
    /// The child task was canceled: because the parent was (`by_parent`), or by someone else.
    #[error("the delegated task of {agent} was canceled{}", if *by_parent { " with its parent" } else { "" })]
    Canceled {
        /// The child's name.
        agent: String,
        /// The child task at its end, when it was seen.
        task: Option<Box<Task>>,
        /// The parent task was canceled (or the handler was dropped) while the child ran.
        by_parent: bool,
    },
    /// The child's stream ended before its turn did.
    #[error("the stream of {agent} ended before the delegated task's turn did")]
    Incomplete {
        /// The child's name.
        agent: String,
        /// The child task as last seen.
        task: Option<Box<Task>>,
    },
}

impl DelegateError {
    /// The child task, when it is known.
    pub fn task(&self) -> Option<&Task> {
        match self {
            DelegateError::Client { .. } => None,
            DelegateError::Failed { task, .. } => Some(task),
            DelegateError::Canceled { task, .. } | DelegateError::Incomplete { task, .. } => {
                task.as_deref()
            }
        }
    }
}

/// The parent fails with a reason fit for its caller: the child's name and what happened, never
/// the child's URL or a transport error's details (those are in the agent's log).
impl From<DelegateError> for HandlerError {
    fn from(e: DelegateError) -> Self {
        let message = match &e {
            DelegateError::Client { agent, source } => {
                tracing::warn!(error = %e, "delegation failed");
                // `agent` is the URL when there is no name and the card was not read.
                let what = match source {
                    ClientError::A2a(a) => format!("refused the request: {}", a.message),
                    _ => "could not be reached".to_string(),
                };
                if agent.contains("://") {
                    format!("the delegated agent {what}")
                } else {
                    format!("the delegated agent {agent} {what}")
                }
            }
            other => other.to_string(),
        };
        HandlerError::failed(message)
    }
}

/// The entry of [`DELEGATIONS_KEY`] for `task`.
pub(super) fn link(agent: &str, task: &Task) -> Value {
    json!({
        "agent": agent,
        "taskId": task.id,
        "contextId": task.context_id,
        "state": task.status.state.as_str(),
    })
}
