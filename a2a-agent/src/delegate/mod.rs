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

mod child;
mod pump;

use std::time::Duration;

use a2a_client::ClientBuilder;

pub use child::{Child, DELEGATIONS_KEY, DelegateError, FORWARDED_KEY};

use crate::handler::RequestContext;
use crate::model::{Message, SendMessageRequest};

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
        // With traces exported, the request's `traceparent` names its span (see
        // `crate::server`), so the child's spans join the same trace.
        let traceparent = crate::otel::enabled()
            .then(|| self.ctx.headers().get(&crate::edge::names::TRACEPARENT))
            .flatten()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let job = pump::Job {
            emitter: self.ctx.emitter.clone(),
            parent: cancel.clone(),
            chain,
            traceparent,
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
