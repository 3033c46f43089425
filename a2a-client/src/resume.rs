//! Streams that survive a dropped connection.
//!
//! When the agent numbers its SSE events (`id:` lines, as `a2a-agent` does) and a stream breaks
//! before the task's turn ended (the connection drops, the body fails, or the server closes
//! early), the client subscribes again with `Last-Event-ID` set to the last event it read and
//! goes on from there: bounded retries with exponential backoff, no duplicate and no missing
//! event reaching the caller. A stream that breaks before its first event is opened again (the
//! send again with the same `messageId`, when [`crate::retry::Retry::idempotent_sends`] allows,
//! or the subscribe again). If the agent cannot replay what was missed it starts the resumed
//! stream with the task snapshot, so after a resume a `Task` event means "state replaced". A
//! stream without event ids, an A2A error (other than the `UnavailableError` and
//! `ResourceExhausted` that [`crate::retry`] also retries) or an idle timeout is passed to the
//! caller as before. When the reconnections are spent the stream ends with
//! [`ClientError::RetriesExhausted`].

use crate::error::ClientError;
use crate::transport::EventStream;
use a2a_types::v1;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Per stream: the `Last-Event-ID` to send and the id of the last event read.
#[derive(Clone, Default)]
pub(crate) struct ResumeCtx {
    /// Sent as `Last-Event-ID` when set.
    pub(crate) last_event_id: Option<String>,
    /// The id of the newest SSE event the transport has read.
    pub(crate) seen: Arc<Mutex<Option<String>>>,
}

tokio::task_local! {
    /// Set around a transport's `stream` call: the transport sends `last_event_id` and records
    /// the ids it reads into `seen`.
    pub(crate) static RESUME: ResumeCtx;
}

/// The `Last-Event-ID` of the stream being opened, if any.
pub(crate) fn last_event_id() -> Option<String> {
    RESUME.try_with(|c| c.last_event_id.clone()).ok().flatten()
}

/// Where the stream being opened records the ids it reads.
pub(crate) fn id_sink() -> Option<Arc<Mutex<Option<String>>>> {
    RESUME.try_with(|c| c.seen.clone()).ok()
}

/// Called before each resume with the attempt number and the last event id (empty when a stream
/// that broke before its first event is opened again).
pub type OnReconnect = Arc<dyn Fn(u32, &str) + Send + Sync>;

/// Reconnection settings of a client's streams.
#[derive(Clone)]
pub struct Reconnect {
    /// Resumes at most this many times in a row without an event in between (0 = never).
    pub retries: u32,
    /// Wait before the first retry; doubled each time, up to 5 s; each wait is drawn between
    /// half and all of that (jitter).
    pub backoff: Duration,
    /// Called before each resume with the attempt number and the last event id (the `a2a` CLI
    /// prints a line).
    pub on_reconnect: Option<OnReconnect>,
}

impl std::fmt::Debug for Reconnect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnect")
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .finish_non_exhaustive()
    }
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            retries: 3,
            backoff: Duration::from_millis(200),
            on_reconnect: None,
        }
    }
}

/// Whether `e` is a broken connection (worth a resume) rather than an answer.
fn broken(e: &ClientError) -> bool {
    crate::retry::classify(e) != crate::retry::Failure::Final
}

/// Wraps `first` (opened with `ctx`) so that it resumes through `reopen(Some(task id), ctx)`;
/// with `restartable`, a stream that breaks before its first event is opened again from the start
/// through `reopen(None, ctx)` (the request again: nothing was delivered, nothing can repeat).
pub(crate) fn resuming<F, Fut>(
    first: EventStream,
    ctx: ResumeCtx,
    settings: Reconnect,
    restartable: bool,
    reopen: F,
) -> EventStream
where
    F: Fn(Option<String>, ResumeCtx) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<EventStream, ClientError>> + Send,
{
    if settings.retries == 0 {
        return first;
    }
    let state = Resuming {
        current: first,
        ctx,
        task: None,
        delivered: false,
        attempts: 0,
        over: false,
        settings,
        restartable,
        reopen,
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        if st.over {
            return None;
        }
        let item = st.step().await?;
        Some((item, st))
    }))
}

/// The state of a [`resuming`] stream between two of its items.
struct Resuming<F> {
    current: EventStream,
    ctx: ResumeCtx,
    /// The task id, from the first event that names one.
    task: Option<String>,
    /// Whether an event reached the caller.
    delivered: bool,
    /// Reconnections in a row without an event in between.
    attempts: u32,
    /// Set with the last item: the stream ends after it.
    over: bool,
    settings: Reconnect,
    restartable: bool,
    reopen: F,
}

impl<F, Fut> Resuming<F>
where
    F: Fn(Option<String>, ResumeCtx) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<EventStream, ClientError>> + Send,
{
    /// The next item for the caller (None: the stream ends), reconnecting as needed.
    async fn step(&mut self) -> Option<Result<v1::StreamResponse, ClientError>> {
        use futures_util::StreamExt;
        loop {
            let failure = match self.current.next().await {
                Some(Ok(ev)) => {
                    self.attempts = 0;
                    self.delivered = true;
                    if self.task.is_none() {
                        self.task = ev.task_id().filter(|t| !t.is_empty()).map(str::to_owned);
                    }
                    self.over = ev.closes_live_stream();
                    return Some(Ok(ev));
                }
                Some(Err(e)) if broken(&e) => Some(e),
                Some(Err(e)) => return self.last(e),
                None => None,
            };
            // The stream broke (or ended early): resume after the last event read, if the agent
            // numbers its events; or start again if it broke before delivering anything.
            let last = self.ctx.seen.lock().ok().and_then(|s| s.clone());
            let (task_id, last) = match (self.task.clone(), last) {
                (Some(task_id), Some(last)) => (Some(task_id), last),
                _ if self.restartable && !self.delivered && failure.is_some() => {
                    (None, String::new())
                }
                _ => return failure.and_then(|e| self.last(e)),
            };
            let mut reopened = None;
            let mut error = failure;
            while self.attempts < self.settings.retries {
                self.attempts += 1;
                if let Some(cb) = &self.settings.on_reconnect {
                    cb(self.attempts, &last);
                }
                let wait = crate::retry::backoff(
                    self.settings.backoff,
                    Duration::from_secs(5),
                    self.attempts,
                );
                tokio::time::sleep(wait).await;
                let next = ResumeCtx {
                    last_event_id: task_id.as_ref().map(|_| last.clone()),
                    seen: Arc::new(Mutex::new(task_id.as_ref().map(|_| last.clone()))),
                };
                match (self.reopen)(task_id.clone(), next.clone()).await {
                    Ok(s) => {
                        self.ctx = next;
                        reopened = Some(s);
                        break;
                    }
                    Err(e) if broken(&e) => error = Some(e),
                    Err(e) => return self.last(e),
                }
            }
            match reopened {
                Some(s) => self.current = s,
                None => {
                    let what = match &task_id {
                        Some(t) => {
                            format!("reconnecting the stream of task {t} after event {last}")
                        }
                        None => "opening the stream again".to_string(),
                    };
                    let last_error = error.unwrap_or_else(|| {
                        ClientError::Parse("the stream ended before the task's turn did".into())
                    });
                    return self.last(ClientError::RetriesExhausted {
                        what,
                        attempts: self.attempts,
                        last: Box::new(last_error),
                    });
                }
            }
        }
    }

    /// `e` as the stream's last item.
    fn last(&mut self, e: ClientError) -> Option<Result<v1::StreamResponse, ClientError>> {
        self.over = true;
        Some(Err(e))
    }
}
