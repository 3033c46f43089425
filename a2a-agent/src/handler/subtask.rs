//! [`SubTask`]: a scoped piece of a handler's work with progress messages before it, after it
//! (fixed or computed from the work's result) and on its error (computed from the error), and a
//! stable id (the Camel guide's `a2aSubTask`).

use std::borrow::Cow;
use std::future::Future;
use std::panic::Location;

use super::api::{HandlerError, RequestContext};
use super::emitter::Emitter;
use crate::model::{Message, Part, Role, Struct, TaskState};
use tracing::Instrument;

/// The metadata key of a sub-task's progress messages that names its id ([`SubTask::id`]).
pub const SUB_TASK_ID_KEY: &str = "subTaskId";

type After<T> = Box<dyn Fn(&T) -> String + Send + Sync>;
type OnError = Box<dyn Fn(&HandlerError) -> String + Send + Sync>;

/// A scoped sub-task of a handler's work (`T`: what the work returns): optional WORKING
/// progress messages before the work, after it succeeds and when it fails.
///
/// ```
/// use a2a_agent::prelude::*;
///
/// async fn search(ctx: &RequestContext) -> Result<Vec<String>, HandlerError> {
///     let scope = SubTask::new()
///         .id("search-docs-progress")
///         .before("Searching docs...")
///         .after_with(|docs: &Vec<String>| format!("Docs found: {}", docs.len()))
///         .on_error(|e| format!("Error searching docs: {e}"));
///     ctx.sub_task(scope, async { Ok(vec!["a2a.md".to_string()]) }).await
/// }
/// ```
pub struct SubTask<T = ()> {
    id: Option<String>,
    at: &'static Location<'static>,
    before: Option<String>,
    after: Option<After<T>>,
    on_error: Option<OnError>,
    fail_if_no_task: bool,
}

impl<T> Default for SubTask<T> {
    #[track_caller]
    fn default() -> Self {
        SubTask {
            id: None,
            at: Location::caller(),
            before: None,
            after: None,
            on_error: None,
            fail_if_no_task: false,
        }
    }
}

impl<T> SubTask<T> {
    /// A scope with no messages; its id, until [`Self::id`] names one, is where `new` is called.
    #[track_caller]
    pub fn new() -> Self {
        Self::default()
    }
    /// Name the sub-task with a stable `id` (the Camel guide's `id`): its progress messages
    /// carry it as the metadata `subTaskId`, and its tracing span (`a2a.sub_task`) as `id`.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
    /// The sub-task's id: the one [`Self::id`] gave, else `file:line:column` of the
    /// [`Self::new`] call (stable from run to run of one build).
    pub fn stable_id(&self) -> Cow<'_, str> {
        match &self.id {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned(format!(
                "{}:{}:{}",
                self.at.file(),
                self.at.line(),
                self.at.column()
            )),
        }
    }
    /// Emit `text` before the work.
    pub fn before(mut self, text: impl Into<String>) -> Self {
        self.before = Some(text.into());
        self
    }
    /// Emit `text` after the work succeeds.
    pub fn after(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.after = Some(Box::new(move |_: &T| text.clone()));
        self
    }
    /// Emit a message computed from the work's result after it succeeds (the Camel guide's
    /// `emitAfter: "Docs found: ${body.size()}"`).
    pub fn after_with(mut self, f: impl Fn(&T) -> String + Send + Sync + 'static) -> Self {
        self.after = Some(Box::new(f));
        self
    }
    /// Emit a message computed from the error when the work fails (the Camel guide's
    /// `emitOnError: "... ${exception.message}"`); the error itself propagates unchanged.
    pub fn on_error(mut self, f: impl Fn(&HandlerError) -> String + Send + Sync + 'static) -> Self {
        self.on_error = Some(Box::new(f));
        self
    }
    /// Fail (with an internal error) when there is no active task.
    pub fn fail_if_no_task(mut self, yes: bool) -> Self {
        self.fail_if_no_task = yes;
        self
    }
    /// Run `work` in this scope with `emitter`. Progress delivery is best effort: it never
    /// fails the work.
    pub async fn run<F>(self, emitter: &Emitter, work: F) -> Result<T, HandlerError>
    where
        F: Future<Output = Result<T, HandlerError>>,
    {
        if self.fail_if_no_task && !emitter.is_active() {
            return Err(HandlerError::failed("no active A2A task context"));
        }
        let span = tracing::debug_span!("a2a.sub_task", id = %self.stable_id());
        async {
            if let Some(b) = &self.before {
                self.progress(emitter, b.clone()).await;
            }
            let out = work.await;
            match (&out, &self.after, &self.on_error) {
                (Ok(v), Some(f), _) => self.progress(emitter, f(v)).await,
                (Err(e), _, Some(f)) => self.progress(emitter, f(e)).await,
                _ => {}
            }
            out
        }
        .instrument(span)
        .await
    }

    /// A WORKING status update with `text`, naming the sub-task when it has an id.
    async fn progress(&self, emitter: &Emitter, text: String) {
        let metadata = self.id.as_ref().map(|id| {
            let mut m = Struct::new();
            m.insert(SUB_TASK_ID_KEY.into(), id.clone().into());
            m
        });
        let message = Message {
            role: Role::Agent,
            parts: vec![Part::text(text)],
            metadata,
            ..Default::default()
        };
        emitter.emit_status(TaskState::Working, Some(message)).await;
    }
}

impl RequestContext {
    /// Run `work` as a scoped sub-task with optional before/after/on-error progress messages
    /// (texts fixed or computed from the work's result or error; see [`SubTask`]).
    ///
    /// Progress delivery is best effort: it never fails the work. The original error of `work`
    /// propagates unchanged. With [`SubTask::fail_if_no_task`] the scope fails when the context has
    /// no active task.
    pub async fn sub_task<T, F>(&self, scope: SubTask<T>, work: F) -> Result<T, HandlerError>
    where
        F: Future<Output = Result<T, HandlerError>>,
    {
        scope.run(&self.emitter, work).await
    }
}
