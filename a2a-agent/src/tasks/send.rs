//! What a send is and what it gives: the input, how the caller waits ([`SendMode`]), the outcome
//! and, for a stream, the [`Subscription`] and how it starts ([`Start`]).

use std::sync::Arc;

use serde_json::Value;

use super::fanout::Events;
use crate::caller::CallerProfile;
use crate::handler::Headers;
use crate::model::{Message, SendMessageRequest, StreamResponse, Task};
use crate::typed_send::RawSource;

/// How the caller waits for the outcome of a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// Wait for a terminal or interrupted state.
    Blocking,
    /// Return right after creating the task (SUBMITTED).
    ReturnImmediately,
    /// Stream the events.
    Stream,
}

/// A subscription: the current task first (or, on a resume, the events missed), then every
/// event until the task ends its turn.
pub struct Subscription {
    /// The task snapshot (the first stream event, unless [`Start::Resume`]).
    pub task: Task,
    /// Number of the last event the snapshot includes (its SSE `id`).
    pub seq: u64,
    /// How the stream starts.
    pub start: Start,
    /// The events after the snapshot (bounded per subscriber, see [`super::fanout`]).
    pub events: Events,
}

/// How a stream starts.
///
/// A subscriber that comes back with `Last-Event-ID: N` gets the events numbered above `N`
/// from the replay log, then the live ones: no gap, no duplicate, and no snapshot (it already
/// has the task up to `N`). When the log no longer holds every event after `N` (retention,
/// or an `N` this agent never sent), it gets [`Start::Gap`]: an SSE comment
/// `: a2a-replay-gap last-event-id=N` and then the task snapshot, as a fresh subscriber does.
/// A stream's first `Task` event after a resume therefore always means "state replaced".
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// A new subscriber: the snapshot first.
    Snapshot,
    /// A resume: these events (numbered, in order), then the live ones.
    Resume(Vec<(u64, StreamResponse)>),
    /// A resume the log cannot serve without a gap: the marker, then the snapshot.
    Gap {
        /// The `Last-Event-ID` the subscriber sent.
        last_event_id: u64,
    },
}

/// Everything one send needs besides the request.
pub struct SendInput {
    /// The 1.0 request.
    pub request: SendMessageRequest,
    /// The message JSON as the caller sent it.
    pub raw_message: Value,
    /// The caller.
    pub caller: CallerProfile,
    /// Accepted extensions.
    pub extensions: Vec<String>,
    /// How the caller waits.
    pub mode: SendMode,
    /// The request headers the handler may see (already filtered, see
    /// [`visible_headers`](crate::handler::visible_headers)).
    pub headers: http::HeaderMap,
}

/// The lazy forms of a send's raw message and headers (see
/// [`TaskManager::send_with`](super::TaskManager::send_with)).
#[derive(Default)]
pub(crate) struct SendExtras {
    /// The request body holding the message, read into a tree when a handler asks.
    pub raw: Option<RawSource>,
    /// The request's headers, filtered when a handler asks.
    pub headers: Option<Headers>,
    /// The request's `configuration` as sent (unknown members kept), for the handler.
    pub configuration: Option<Value>,
}

/// The outcome of a send.
pub enum SendOutcome {
    /// The task (blocking or return-immediately).
    Task(Task),
    /// A stream.
    Stream(Subscription),
    /// The handler answered with a direct message: no task.
    Message(Message),
}

/// [`SendOutcome`] as the runtime answers its own bindings: the task is the live task's, shared
/// (with the store that keeps it in memory), and is serialised without a copy.
pub(crate) enum SendAnswer {
    /// The task (blocking or return-immediately).
    Task(Arc<Task>),
    /// A stream.
    Stream(Box<Subscription>),
    /// The handler answered with a direct message: no task.
    Message(Message),
}

impl From<SendAnswer> for SendOutcome {
    fn from(a: SendAnswer) -> Self {
        match a {
            SendAnswer::Task(t) => SendOutcome::Task(Arc::unwrap_or_clone(t)),
            SendAnswer::Stream(s) => SendOutcome::Stream(*s),
            SendAnswer::Message(m) => SendOutcome::Message(m),
        }
    }
}
