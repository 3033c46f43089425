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
    Box::pin(async_stream::stream! {
        use futures::StreamExt;
        let mut current = first;
        let mut ctx = ctx;
        let mut task: Option<String> = None;
        let mut delivered = false;
        let mut attempts = 0u32;
        loop {
            let failure = match current.next().await {
                Some(Ok(ev)) => {
                    attempts = 0;
                    delivered = true;
                    if task.is_none() {
                        task = ev.task_id().filter(|t| !t.is_empty()).map(str::to_owned);
                    }
                    let end = ev.closes_live_stream();
                    yield Ok(ev);
                    if end {
                        return;
                    }
                    continue;
                }
                Some(Err(e)) if broken(&e) => Some(e),
                Some(Err(e)) => {
                    yield Err(e);
                    return;
                }
                None => None,
            };
            // The stream broke (or ended early): resume after the last event read, if the agent
            // numbers its events; or start again if it broke before delivering anything.
            let last = ctx.seen.lock().ok().and_then(|s| s.clone());
            let (task_id, last) = match (task.clone(), last) {
                (Some(task_id), Some(last)) => (Some(task_id), last),
                _ if restartable && !delivered && failure.is_some() => (None, String::new()),
                _ => {
                    if let Some(e) = failure {
                        yield Err(e);
                    }
                    return;
                }
            };
            let mut reopened = None;
            let mut error = failure;
            while attempts < settings.retries {
                attempts += 1;
                if let Some(cb) = &settings.on_reconnect {
                    cb(attempts, &last);
                }
                let wait = crate::retry::backoff(settings.backoff, Duration::from_secs(5), attempts);
                tokio::time::sleep(wait).await;
                let next = ResumeCtx {
                    last_event_id: task_id.as_ref().map(|_| last.clone()),
                    seen: Arc::new(Mutex::new(task_id.as_ref().map(|_| last.clone()))),
                };
                match reopen(task_id.clone(), next.clone()).await {
                    Ok(s) => {
                        ctx = next;
                        reopened = Some(s);
                        break;
                    }
                    Err(e) if broken(&e) => error = Some(e),
                    Err(e) => {
                        yield Err(e);
                        return;
                    }
                }
            }
            match reopened {
                Some(s) => current = s,
                None => {
                    let what = match &task_id {
                        Some(t) => format!("reconnecting the stream of task {t} after event {last}"),
                        None => "opening the stream again".to_string(),
                    };
                    let last_error = error.unwrap_or_else(|| {
                        ClientError::Parse("the stream ended before the task's turn did".into())
                    });
                    yield Err(ClientError::RetriesExhausted {
                        what,
                        attempts,
                        last: Box::new(last_error),
                    });
                    return;
                }
            }
        }
    })
}
