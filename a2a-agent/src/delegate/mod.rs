//! Delegation from a handler: call another A2A agent through `a2a-client`, as a child of the
//! handler's task.
//!
//! [`RequestContext::delegate`] starts a [`Delegate`]; [`Delegate::send`] runs the child's turn
//! and gives back a [`Child`] (the child's task at the end of its turn, or its direct reply) or
//! a typed [`DelegateError`] (the child failed, was rejected or canceled, or could not be
//! reached). While it runs:
//!
//! - **Link.** The child is recorded in the parent task's metadata under [`DELEGATIONS_KEY`]:
//!   one entry `{"agent", "taskId", "contextId", "state"}` per child task, `state` being the
//!   child's last state seen while the parent was running. `agent` is [`Delegate::name`], else
//!   the child card's name: never its URL, which the parent's caller has no need to learn.
//! - **Progress (opt-in).** With [`Delegate::forward_progress`] (or [`Delegate::forward_status`]
//!   / [`Delegate::forward_artifacts`]) the child's WORKING status messages become the parent's
//!   WORKING status messages (with [`FORWARDED_KEY`] in their metadata) and the child's artifact
//!   updates become the parent's (same artifact id, append and last-chunk flags).
//! - **Cancel.** Canceling the parent cancels the child (CancelTask on the child agent), also
//!   when the runtime drops the handler while it waits: the child is driven by a task of its own
//!   that watches the parent. Dropping the [`Delegate::send`] future before the child's turn ends
//!   (a handler timeout, a `select!` that gives up) cancels the child too. Once `send` has
//!   returned, the child is the handler's (one left INPUT_REQUIRED is not canceled later).
//! - **Chain.** The delegation chain this request arrived with
//!   ([`RequestContext::delegation_chain`]) is sent on to the child. The chain is signed by the
//!   gateway that issued it; the gateway adds the next hop when the call goes through it (an
//!   agent cannot sign it), so a chain of agents behind a gateway grows by one at each hop.
//!   The caller's credentials are never passed on: give the child's in [`Delegate::client`].
//!
//! The child's turn is read as a stream (SendStreamingMessage, resumed by the client after a
//! dropped connection); a child whose card says `capabilities.streaming: false` gets a
//! return-immediately send and is polled with GetTask ([`Delegate::poll_interval`]), where only
//! status messages and artifacts seen at a poll are forwarded.
//!
//! ```no_run
//! use a2a_agent::{Reply, RequestContext, handler_fn};
//! use a2a_types::v1::Message;
//!
//! let handler = handler_fn(|ctx: RequestContext| async move {
//!     let child = ctx
//!         .delegate("http://127.0.0.1:9000")
//!         .forward_progress()
//!         .send(Message::user_text(ctx.text()))
//!         .await?; // a failed, rejected or canceled child is a `DelegateError`
//!     Ok(Reply::text(format!("the specialist said: {}", child.text())))
//! });
//! # let _ = handler;
//! ```

mod pump;

use std::time::Duration;

use a2a_client::{ClientBuilder, ClientError};
use serde_json::{Value, json};

use crate::handler::{HandlerError, RequestContext};
use crate::model::{Artifact, Message, SendMessageRequest, Task, TaskState};

/// The parent task's metadata key listing its child tasks (an array of
/// `{"agent", "taskId", "contextId", "state"}`).
pub const DELEGATIONS_KEY: &str = "a2a-rs.dev/delegations";

/// The metadata key on a forwarded status message: `{"agent", "taskId"}` of the child it
/// came from.
pub const FORWARDED_KEY: &str = "a2a-rs.dev/delegatedFrom";

/// How long a stopping delegation (parent canceled, or the handler gone) waits to learn the
/// child's task id and to see the child end after CancelTask.
const STOP_GRACE: Duration = Duration::from_secs(10);

impl RequestContext {
    /// A delegation of this task's work to the agent at `agent_url` (its card is fetched from
    /// there). See [`crate::delegate`].
    pub fn delegate(&self, agent_url: impl Into<String>) -> Delegate {
        Delegate {
            ctx: self.clone(),
            url: agent_url.into(),
            builder: ClientBuilder::default(),
            name: None,
            forward_status: false,
            forward_artifacts: false,
            poll_interval: Duration::from_millis(250),
        }
    }
}

/// A delegation being configured: the child agent, the client settings, what to forward.
#[must_use = "a delegation does nothing until `send`"]
pub struct Delegate {
    ctx: RequestContext,
    url: String,
    builder: ClientBuilder,
    name: Option<String>,
    forward_status: bool,
    forward_artifacts: bool,
    poll_interval: Duration,
}

impl Delegate {
    /// Client settings for the child agent (credentials, binding, version, timeouts). The
    /// delegation chain header is added to them.
    pub fn client(mut self, builder: ClientBuilder) -> Self {
        self.builder = builder;
        self
    }
    /// The child's name in the parent's metadata and in errors (default: its card's `name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Forward the child's WORKING status messages and artifact updates to the parent.
    pub fn forward_progress(self) -> Self {
        self.forward_status().forward_artifacts()
    }
    /// Forward the child's WORKING status messages as the parent's.
    pub fn forward_status(mut self) -> Self {
        self.forward_status = true;
        self
    }
    /// Forward the child's artifact updates as the parent's.
    pub fn forward_artifacts(mut self) -> Self {
        self.forward_artifacts = true;
        self
    }
    /// How often a child that cannot stream is polled (default 250 ms).
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every.max(Duration::from_millis(10));
        self
    }

    /// Send `message` to the child and wait for the end of its turn. Set `message.task_id` (and
    /// `context_id`) to continue a child task that asked for input.
    pub async fn send(self, message: Message) -> Result<Child, DelegateError> {
        self.send_request(SendMessageRequest::new(message)).await
    }

    /// [`Delegate::send`] with a whole request (configuration, metadata).
    pub async fn send_request(self, request: SendMessageRequest) -> Result<Child, DelegateError> {
        let cancel = self.ctx.cancel.clone();
        let label = self.name.clone().unwrap_or_else(|| self.url.clone());
        let chain = self.ctx.delegation_chain().map(str::to_owned);
        let job = pump::Job {
            emitter: self.ctx.emitter.clone(),
            parent: cancel.clone(),
            chain,
            url: self.url,
            builder: self.builder,
            name: self.name,
            forward_status: self.forward_status,
            forward_artifacts: self.forward_artifacts,
            poll_interval: self.poll_interval,
            request,
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        // Its own task: it outlives this future, so a parent cancel that drops the handler
        // still reaches the child.
        tokio::spawn(pump::run(job, tx));
        match rx.await {
            Ok(r) => r,
            // The driving task ended without an answer (it panicked, or the runtime stopped).
            Err(_) => Err(DelegateError::Canceled {
                agent: label,
                task: None,
                by_parent: cancel.is_cancelled(),
            }),
        }
    }
}

/// The end of a child's turn that the handler can go on with.
#[derive(Debug, Clone, PartialEq)]
pub struct Child {
    /// The child's name (see [`Delegate::name`]).
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
fn link(agent: &str, task: &Task) -> Value {
    json!({
        "agent": agent,
        "taskId": task.id,
        "contextId": task.context_id,
        "state": task.status.state.as_str(),
    })
}
