//! The handler API: what user code implements ([`Handler`], [`ExtensionHandler`]), what a
//! handler receives ([`RequestContext`]) and what it returns ([`Reply`], [`HandlerError`]).

use super::emitter::Emitter;
use crate::caller::CallerProfile;
use crate::error::{A2aError, ErrorKind};
use crate::model::{Artifact, Message, Part, Role, Struct, Task, TaskState};
use async_trait::async_trait;
use serde_json::Value;
use std::future::Future;
use tokio_util::sync::CancellationToken;

/// The caller's message JSON behind [`RequestContext::raw`]: a tree already built, or read from
/// the request body only when a handler asks for it (the echo path never does).
#[derive(Clone, Debug)]
pub(crate) struct RawMessage {
    source: Option<crate::typed_send::RawSource>,
    value: std::sync::OnceLock<Value>,
}

impl RawMessage {
    /// A message tree already built.
    pub(crate) fn tree(v: Value) -> Self {
        RawMessage {
            source: None,
            value: std::sync::OnceLock::from(v),
        }
    }

    /// The message of a request body read by type.
    pub(crate) fn body(source: crate::typed_send::RawSource) -> Self {
        RawMessage {
            source: Some(source),
            value: std::sync::OnceLock::new(),
        }
    }

    /// The message as a JSON tree (the same tree the request body's parse gives).
    pub(crate) fn get(&self) -> &Value {
        self.value.get_or_init(|| {
            self.source
                .as_ref()
                .and_then(|s| s.message())
                .unwrap_or(Value::Null)
        })
    }
}

/// The request headers behind [`RequestContext::headers`]: already filtered, or the request's
/// own headers (shared, not copied) filtered by [`visible_headers`] when a handler first asks
/// for them (the echo path never does).
#[derive(Clone, Debug)]
pub(crate) struct Headers {
    source: Option<(std::sync::Arc<http::HeaderMap>, std::sync::Arc<Vec<String>>)>,
    visible: std::sync::OnceLock<http::HeaderMap>,
}

impl Headers {
    /// Headers already filtered.
    pub(crate) fn filtered(h: http::HeaderMap) -> Self {
        Headers {
            source: None,
            visible: std::sync::OnceLock::from(h),
        }
    }

    /// The request's headers, to be filtered (with `also_hidden`) when first read.
    pub(crate) fn lazy(
        all: std::sync::Arc<http::HeaderMap>,
        also_hidden: std::sync::Arc<Vec<String>>,
    ) -> Self {
        Headers {
            source: Some((all, also_hidden)),
            visible: std::sync::OnceLock::new(),
        }
    }

    /// The headers a handler may see.
    pub(crate) fn get(&self) -> &http::HeaderMap {
        self.visible.get_or_init(|| match &self.source {
            Some((all, hidden)) => visible_headers(all, hidden),
            None => http::HeaderMap::new(),
        })
    }
}

/// What a handler receives for one message.
#[derive(Clone)]
pub struct RequestContext {
    pub(crate) message: Message,
    pub(crate) raw: RawMessage,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    pub(crate) caller: CallerProfile,
    pub(crate) extensions: Vec<String>,
    pub(crate) metadata: Option<Struct>,
    pub(crate) configuration: Option<Value>,
    pub(crate) task: Option<Task>,
    pub(crate) headers: Headers,
    pub(crate) emitter: Emitter,
    pub(crate) cancel: CancellationToken,
}

impl RequestContext {
    /// The text of the message: its text parts joined by newlines (the `PAYLOAD` view).
    pub fn text(&self) -> String {
        // `join("\n")` without the list of parts in between.
        let mut texts = self.message.parts.iter().filter_map(|p| p.as_text());
        let mut s = texts.next().map(str::to_owned).unwrap_or_default();
        for t in texts {
            s.push('\n');
            s.push_str(t);
        }
        s
    }
    /// The typed 1.0 message (the `POJO` view).
    pub fn message(&self) -> &Message {
        &self.message
    }
    /// The message as raw JSON, as the caller sent it (the `RAW` view).
    pub fn raw(&self) -> &Value {
        self.raw.get()
    }
    /// The task id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }
    /// The context id.
    pub fn context_id(&self) -> &str {
        &self.context_id
    }
    /// Who is calling.
    pub fn caller(&self) -> &CallerProfile {
        &self.caller
    }
    /// The negotiated (accepted) extension URIs.
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }
    /// The request `metadata`.
    pub fn metadata(&self) -> Option<&Struct> {
        self.metadata.as_ref()
    }
    /// The request's `configuration` (`SendMessageConfiguration`) as the caller sent it, members
    /// this runtime does not know included (protocol extensions, later A2A options); `None` when
    /// the request has none. In 1.0 terms: a 0.3 request's is translated (`blocking` as
    /// `returnImmediately`, `pushNotificationConfig` as `taskPushNotificationConfig`), the
    /// members 0.3 does not define kept.
    ///
    /// ```
    /// # use a2a_agent::prelude::*;
    /// # async fn h(ctx: RequestContext) -> Result<Reply, HandlerError> {
    /// // {"configuration": {"historyLength": 2, "x-tone": "formal"}, "message": ...}
    /// let tone = ctx
    ///     .configuration()
    ///     .and_then(|c| c.get("x-tone"))
    ///     .and_then(|t| t.as_str())
    ///     .unwrap_or("plain");
    /// Ok(Reply::text(format!("answering in a {tone} tone")))
    /// # }
    /// ```
    pub fn configuration(&self) -> Option<&Value> {
        self.configuration.as_ref()
    }
    /// The whole result of validating the caller's OAuth 2.0 / OIDC token (JWT header and
    /// claims, or the introspection response), when a token identified the caller: the Camel
    /// guide's `CamelOAuthTokenValidationResult`. Same as `caller().token`.
    pub fn token_validation(&self) -> Option<&crate::caller::TokenValidation> {
        self.caller.token.as_deref()
    }
    /// The task this message continues, as it stood when the message arrived (state, e.g.
    /// INPUT_REQUIRED; history; artifacts), on a follow-up turn; `None` on the first turn of a
    /// new task. The new message itself is [`Self::message`].
    pub fn task(&self) -> Option<&Task> {
        self.task.as_ref()
    }
    /// The request headers the handler may see: every header except the hop-by-hop ones and
    /// credentials (see [`visible_headers`] for the list removed).
    pub fn headers(&self) -> &http::HeaderMap {
        self.headers.get()
    }
    /// Resolves when the task is canceled (or the server gives up on it).
    pub fn cancelled(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }
    /// Whether the task was canceled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
    /// The progress emitter of this task.
    pub fn emitter(&self) -> &Emitter {
        &self.emitter
    }
    /// Emit a WORKING status update with `text`.
    pub async fn emit(&self, text: impl Into<String>) {
        self.emitter.emit(text).await
    }
    /// Emit a status update with `state` and an optional agent message (`None`: a bare state
    /// change, e.g. `emit_status(TaskState::Working, None)`).
    pub async fn emit_status(&self, state: TaskState, message: Option<Message>) {
        self.emitter.emit_status(state, message).await
    }
    /// Emit a status update with `state` and `text`.
    pub async fn emit_state(&self, state: TaskState, text: impl Into<String>) {
        self.emitter.emit_state(state, text).await
    }
    /// Emit an artifact update.
    pub async fn emit_artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) {
        self.emitter
            .emit_artifact(artifact, append, last_chunk)
            .await
    }
    /// Emit an intermediate agent message (a WORKING status update carrying it).
    pub async fn emit_message(&self, message: Message) {
        self.emitter.emit_message(message).await
    }
    /// Emit an intermediate agent message as a `Message` stream event, not a status update (the
    /// Camel guide's `A2AProgress.emitMessage`), with the Camel table (`rest_status_table =
    /// "camel"`); with the spec's table, whose task streams carry only task, status and artifact
    /// events, it is sent as [`Self::emit_message`] sends it (a WORKING status update carrying
    /// it). Either way it joins the task's history.
    ///
    /// ```
    /// # use a2a_agent::prelude::*;
    /// # async fn h(ctx: RequestContext) -> Result<Reply, HandlerError> {
    /// let finding = Message::agent_text("Intermediate finding...");
    /// ctx.emit_message_event(finding).await;
    /// Ok(Reply::text("Final answer"))
    /// # }
    /// ```
    pub async fn emit_message_event(&self, message: Message) {
        self.emitter.emit_message_event(message).await
    }
}

/// What a handler returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A text answer: the task completes with an agent message holding it.
    Text(String),
    /// Parts of the answer message.
    Parts(Vec<Part>),
    /// A full agent message.
    Message(Message),
    /// Artifacts: the task completes with these artifacts.
    Artifacts(Vec<Artifact>),
    /// End the turn in `state` (for example INPUT_REQUIRED) with an optional text.
    State(TaskState, Option<String>),
    /// Nothing more: the task completes, or stays in the interrupted state last emitted.
    Empty,
    /// A direct agent message and no task (spec 1.0 §3.1.1: SendMessage returns a Message).
    /// It applies to the first turn of a blocking send (the task is dropped) and of a stream
    /// when the handler declares [`Handler::may_reply_directly`] (the stream is exactly one
    /// Message event). Anywhere else (the caller already saw the task: return-immediately, a
    /// follow-up turn, after an emit) the task completes with this message, like
    /// [`Reply::Message`].
    Direct(Message),
}

impl Reply {
    /// A text reply.
    pub fn text(t: impl Into<String>) -> Self {
        Reply::Text(t.into())
    }
    /// A direct agent message with `text` and no task (see [`Reply::Direct`]).
    pub fn direct_text(t: impl Into<String>) -> Self {
        Reply::Direct(Message {
            message_id: uuid::Uuid::new_v4().to_string(),
            role: Role::Agent,
            parts: vec![Part::text(t.into())],
            ..Default::default()
        })
    }
    /// Ask the caller for more input.
    pub fn input_required(t: impl Into<String>) -> Self {
        Reply::State(TaskState::InputRequired, Some(t.into()))
    }
}

impl From<String> for Reply {
    fn from(s: String) -> Self {
        Reply::Text(s)
    }
}
impl From<&str> for Reply {
    fn from(s: &str) -> Self {
        Reply::Text(s.to_string())
    }
}

/// A handler failure.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerError {
    /// The reason, shown in the FAILED status message.
    pub message: String,
    /// When set, a blocking caller gets this A2A error instead of the FAILED task.
    pub a2a: Option<A2aError>,
}

impl HandlerError {
    /// The task fails with `message`; callers see a FAILED task.
    pub fn failed(message: impl Into<String>) -> Self {
        HandlerError {
            message: message.into(),
            a2a: None,
        }
    }
    /// The task fails and a blocking caller gets an A2A error of `kind`.
    pub fn a2a(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        HandlerError {
            a2a: Some(A2aError::new(kind, message.clone())),
            message,
        }
    }
    /// The A2A error a blocking caller gets, if any.
    pub fn to_a2a(&self) -> Option<A2aError> {
        self.a2a.clone()
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for HandlerError {}

impl From<anyhow::Error> for HandlerError {
    fn from(e: anyhow::Error) -> Self {
        HandlerError::failed(e.to_string())
    }
}

/// An agent: receives a message in context and returns a reply.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Handle one message of a task.
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError>;

    /// Called on start for each task a previous process left SUBMITTED or WORKING (a
    /// persistent store, e.g. after a crash). `None` (the default: "cannot resume") fails the
    /// task with "the agent restarted before this task finished"; `Some(outcome)` ends the task
    /// with that outcome as if [`Handler::handle`] had returned it.
    async fn resume(&self, _task: &crate::model::Task) -> Option<Result<Reply, HandlerError>> {
        None
    }

    /// Whether this handler may answer a stream's first turn with [`Reply::Direct`]. When true,
    /// a new task's stream starts only once the handler emits something or returns (as the
    /// official SDK servers do), so that a direct reply can be a stream of exactly one Message.
    /// Default: false (the stream starts with the SUBMITTED task at once).
    fn may_reply_directly(&self) -> bool {
        false
    }
}

/// Header names a handler never sees in [`RequestContext::headers`]: the hop-by-hop headers of
/// RFC 9110 §7.6.1 (`Connection`, `Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`,
/// `Transfer-Encoding`, `Upgrade`), `Host`, `Content-Length`, and credentials
/// (`Authorization`, `Proxy-Authorization`, `Cookie`, `X-API-Key`, `API-Key`, any header named
/// by the card's `apiKey` schemes, and any name containing `api-key`, `apikey`, `token` or `secret`).
pub const HIDDEN_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
];

/// The request headers a handler may see: `headers` without [`HIDDEN_HEADERS`], the names
/// listed in `Connection`, the extra credential names in `also_hidden` (the card's API-key
/// header names), and any name containing `api-key`, `apikey`, `token` or `secret`.
pub fn visible_headers(headers: &http::HeaderMap, also_hidden: &[String]) -> http::HeaderMap {
    let connection = headers.get_all(http::header::CONNECTION);
    let listed = |n: &str| {
        connection
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|l| l.trim().eq_ignore_ascii_case(n))
    };
    let mut out = http::HeaderMap::with_capacity(headers.len());
    for (k, v) in headers {
        // Header names are lowercase (`http` lowercases them).
        let n = k.as_str();
        if HIDDEN_HEADERS.contains(&n)
            || names_a_secret(n.as_bytes())
            || also_hidden.iter().any(|h| h.eq_ignore_ascii_case(n))
            || listed(n)
        {
            continue;
        }
        out.append(k.clone(), v.clone());
    }
    out
}

/// Whether a (lowercase) header name contains `api-key`, `apikey`, `token` or `secret`.
fn names_a_secret(n: &[u8]) -> bool {
    const WORDS: [&[u8]; 4] = [b"api-key", b"apikey", b"token", b"secret"];
    // Each word starts with `a`, `t` or `s`: only those positions are compared.
    (0..n.len())
        .any(|i| matches!(n[i], b'a' | b't' | b's') && WORDS.iter().any(|w| n[i..].starts_with(w)))
}

/// A [`Handler`] made from an async closure; see [`handler_fn`].
pub struct FnHandler<F>(F, bool);

impl<F> FnHandler<F> {
    /// Declare that the closure may answer a stream with [`Reply::Direct`]
    /// ([`Handler::may_reply_directly`]).
    pub fn direct_replies(mut self) -> Self {
        self.1 = true;
        self
    }
}

/// Make a [`Handler`] from an async closure.
pub fn handler_fn<F, Fut>(f: F) -> FnHandler<F>
where
    F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Reply, HandlerError>> + Send + 'static,
{
    FnHandler(f, false)
}

#[async_trait]
impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Reply, HandlerError>> + Send + 'static,
{
    async fn handle(&self, ctx: RequestContext) -> Result<Reply, HandlerError> {
        (self.0)(ctx).await
    }
    fn may_reply_directly(&self) -> bool {
        self.1
    }
}

/// An extension handler: invoked before and after the handler when its URI is negotiated.
#[async_trait]
pub trait ExtensionHandler: Send + Sync + 'static {
    /// The extension URI this handler serves.
    fn uri(&self) -> &str;
    /// Called before the handler with the card's extension declaration (including `params`).
    async fn before(
        &self,
        _declaration: &Value,
        _ctx: &RequestContext,
    ) -> Result<(), HandlerError> {
        Ok(())
    }
    /// Called after the handler with its outcome, which it may change.
    async fn after(
        &self,
        _declaration: &Value,
        _ctx: &RequestContext,
        _outcome: &mut Result<Reply, HandlerError>,
    ) {
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secret_words_are_found_anywhere_in_a_name() {
        for n in [
            "api-key",
            "x-api-key-2",
            "apikey",
            "x-auth-token",
            "tokens",
            "secret",
            "x-client-secret",
            "aaapi-key",
            "sstoken",
        ] {
            assert!(super::names_a_secret(n.as_bytes()), "{n}");
        }
        for n in [
            "",
            "accept",
            "x-api",
            "api-ke",
            "toke",
            "secre",
            "a2a-version",
            "tsa",
        ] {
            assert!(!super::names_a_secret(n.as_bytes()), "{n}");
        }
    }
}
