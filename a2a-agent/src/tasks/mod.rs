//! Task lifecycle: creation, the running-task registry, cancellation, timeouts, concurrency and
//! queue limits, event fan-out to subscribers.

use crate::caller::CallerProfile;
use crate::error::{A2aError, ErrorKind};
use crate::handler::Handler;
use crate::idempotency::SendLog;
use crate::model::{Message, SendMessageRequest, StreamResponse, Task, TaskState, Timestamp};
use crate::store::{StoredTask, TaskStore};
use foldhash::HashMap;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod emitter;
mod reads;
mod turn;

pub use emitter::Emitter;
pub(crate) use emitter::trim_history;
use emitter::{add_artifact, status_change};

/// Now (UTC, millisecond precision).
pub(crate) fn now_ts() -> Timestamp {
    Timestamp::now()
}

/// Runtime limits of the task manager.
#[derive(Debug, Clone)]
pub struct TaskLimits {
    /// Maximum concurrently running tasks (0 = unlimited).
    pub max_concurrent_tasks: usize,
    /// Pending queue for async requests when every slot is taken (0 = no queue).
    pub task_queue_size: usize,
    /// A task running longer than this fails.
    pub async_timeout: Duration,
    /// Events queued per streaming connection.
    pub sse_queue_capacity: usize,
    /// Bytes queued per streaming connection (0 = unlimited).
    pub sse_queue_max_bytes: usize,
    /// What a slow subscriber loses when its queue is full.
    pub sse_overflow_policy: crate::config::OverflowPolicy,
    /// Byte and history bounds of stored tasks.
    pub store: crate::bounds::StoreLimits,
    /// A repeated `messageId` within this window answers from the first send (see
    /// [`crate::idempotency`]); zero turns it off.
    pub idempotency_window: Duration,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_concurrent_tasks: 0,
            task_queue_size: 0,
            async_timeout: Duration::from_secs(300),
            sse_queue_capacity: 1000,
            sse_queue_max_bytes: 4 * 1024 * 1024,
            sse_overflow_policy: crate::config::OverflowPolicy::DropNewest,
            store: crate::bounds::StoreLimits::default(),
            idempotency_window: Duration::ZERO,
        }
    }
}

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

struct LiveState {
    task: Task,
    owner: String,
    fanout: crate::fanout::Fanout,
    error: Option<A2aError>,
    /// This turn may end with a direct message and no task (a new task nobody has seen yet).
    direct_ok: bool,
    /// The direct message the handler answered with (the task was dropped).
    direct: Option<Message>,
    /// Number of the task's last event (its SSE `id`); the next event gets `seq + 1`.
    seq: u64,
    /// The task has a change the store does not have yet: the runtime's own WORKING, published
    /// at once and stored when the handler first waits (see [`TaskManager::run`]), by the
    /// handler's next update, or at the end of the turn, whichever comes first.
    unstored: bool,
}

pub(crate) struct Live {
    state: tokio::sync::Mutex<LiveState>,
    cancel: CancellationToken,
    watch: watch::Sender<TaskState>,
    /// Set once the task has been shown to the caller (the handler emitted, or the turn ended).
    announced: watch::Sender<bool>,
    running: std::sync::atomic::AtomicBool,
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
    /// The events after the snapshot (bounded per subscriber, see [`crate::fanout`]).
    pub events: crate::fanout::Events,
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
    /// [`crate::handler::visible_headers`]).
    pub headers: http::HeaderMap,
}

/// The lazy forms of a send's raw message and headers (see [`TaskManager::send_with`]).
#[derive(Default)]
pub(crate) struct SendExtras {
    /// The request body holding the message, read into a tree when a handler asks.
    pub raw: Option<crate::typed_send::RawSource>,
    /// The request's headers, filtered when a handler asks.
    pub headers: Option<crate::handler::Headers>,
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

/// Owns tasks: creates them, runs the handler, fans events out, cancels.
pub struct TaskManager {
    store: Arc<dyn TaskStore>,
    handler: Arc<dyn Handler>,
    ext_handlers: Vec<(Value, Arc<dyn crate::handler::ExtensionHandler>)>,
    live: Mutex<HashMap<String, Arc<Live>>>,
    pub(crate) limits: TaskLimits,
    permits: Option<Arc<Semaphore>>,
    queued: AtomicUsize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    me: Weak<TaskManager>,
    sink: std::sync::OnceLock<Arc<dyn crate::push::EventSink>>,
    replay: Arc<dyn crate::replay::ReplayLog>,
    replay_set: std::sync::OnceLock<Arc<dyn crate::replay::ReplayLog>>,
    pub(crate) sends: Arc<dyn SendLog>,
    pub(crate) sends_set: std::sync::OnceLock<Arc<dyn SendLog>>,
    pub(crate) claims: crate::idempotency::Claims,
}

impl TaskManager {
    /// A manager over `store` running `handler`.
    pub fn new(
        store: Arc<dyn TaskStore>,
        handler: Arc<dyn Handler>,
        ext_handlers: Vec<(Value, Arc<dyn crate::handler::ExtensionHandler>)>,
        limits: TaskLimits,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| TaskManager {
            limits: limits.clone(),
            store,
            handler,
            ext_handlers,
            live: Mutex::new(HashMap::default()),
            permits: (limits.max_concurrent_tasks > 0)
                .then(|| Arc::new(Semaphore::new(limits.max_concurrent_tasks))),
            queued: AtomicUsize::new(0),
            shutdown: CancellationToken::new(),
            tracker: TaskTracker::new(),
            me: me.clone(),
            sink: std::sync::OnceLock::new(),
            // Until a log is set: event numbers only, so that numbering never restarts.
            replay: Arc::new(crate::replay::MemoryReplay::new(crate::replay::Retention {
                events_per_task: 0,
                max_bytes: 0,
            })),
            replay_set: std::sync::OnceLock::new(),
            sends: Arc::new(crate::idempotency::MemorySendLog::new(
                limits.idempotency_window,
                100_000,
            )),
            sends_set: std::sync::OnceLock::new(),
            claims: Default::default(),
        })
    }

    /// Keep replayable events in `log` (the server sets its task store's log: the
    /// [`crate::MemoryStore`] or a [`crate::replay::SqliteReplay`]). Without one, events are
    /// numbered but not kept, so a resume gets the task snapshot. Only the first call takes
    /// effect; call it before serving.
    pub fn set_replay_log(&self, log: Arc<dyn crate::replay::ReplayLog>) {
        let _ = self.replay_set.set(log);
    }

    fn replay(&self) -> &Arc<dyn crate::replay::ReplayLog> {
        self.replay_set.get().unwrap_or(&self.replay)
    }

    /// Number of the last event of `id` (0 when none is known).
    pub(crate) async fn last_seq(&self, id: &str) -> u64 {
        self.replay().last(id).await.unwrap_or_else(|e| {
            tracing::debug!(error = %e, task_id = id, "reading the replay log failed");
            0
        })
    }

    /// Number `ev` as the task's next event, queue it for the subscribers, and keep it in the
    /// replay log (which takes it). Called with the task's lock held, so numbers, queues and
    /// the log agree: a resume reads the log under the same lock.
    async fn publish(&self, g: &mut LiveState, ev: StreamResponse) {
        g.seq += 1;
        let LiveState {
            fanout, task, seq, ..
        } = g;
        fanout.publish(*seq, &ev, task);
        if let Err(e) = self.replay().append_owned(&g.task.id, g.seq, ev).await {
            tracing::debug!(error = %e, "keeping an event in the replay log failed");
        }
    }

    /// How a resume after event `after` starts, when the task's last event is `cur`.
    async fn start_from(&self, id: &str, after: u64, cur: u64) -> Start {
        if after == cur {
            return Start::Resume(Vec::new());
        }
        if after < cur {
            let evs = self.replay().since(id, after).await.unwrap_or_default();
            let whole = evs.len() as u64 == cur - after
                && evs.first().is_some_and(|(s, _)| *s == after + 1)
                && evs.last().is_some_and(|(s, _)| *s == cur);
            if whole {
                return Start::Resume(evs);
            }
        }
        metrics::counter!("a2a_agent_replay_gaps_total").increment(1);
        Start::Gap {
            last_event_id: after,
        }
    }

    /// Receive every task event (push notifications). Only the first call takes effect.
    pub fn set_event_sink(&self, sink: Arc<dyn crate::push::EventSink>) {
        let _ = self.sink.set(sink);
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }

    pub(crate) fn handler(&self) -> &Arc<dyn Handler> {
        &self.handler
    }

    fn live_get(&self, id: &str) -> Option<Arc<Live>> {
        self.live.lock().ok().and_then(|m| m.get(id).cloned())
    }

    /// Waits, if task `id` is live, until it reaches a terminal or interrupted state.
    pub(crate) async fn wait_turn(&self, id: &str) {
        if let Some(l) = self.live_get(id) {
            let mut rx = l.watch.subscribe();
            let _ = rx.wait_for(|s| s.is_terminal() || s.is_interrupted()).await;
        }
    }

    /// Whether task `id` is live and its handler running.
    pub(crate) fn is_running(&self, id: &str) -> bool {
        self.live_get(id)
            .is_some_and(|l| l.running.load(Ordering::SeqCst))
    }

    fn live_remove(&self, id: &str) {
        if let Ok(mut m) = self.live.lock() {
            m.remove(id);
        }
    }

    fn queue_limits(&self) -> crate::fanout::QueueLimits {
        crate::fanout::QueueLimits {
            max_events: self.limits.sse_queue_capacity.max(1),
            max_bytes: self.limits.sse_queue_max_bytes,
            policy: self.limits.sse_overflow_policy,
        }
    }

    /// Mutate a live task under its lock, persist it, and publish the event `f` returns.
    /// Does nothing once the task is terminal.
    async fn update(
        &self,
        live: &Arc<Live>,
        f: impl FnOnce(&mut Task) -> Option<StreamResponse>,
    ) -> Option<TaskState> {
        let r = self.update_quiet(live, f).await;
        live.announced.send_replace(true);
        r
    }

    /// [`Self::update`] without announcing the task.
    async fn update_quiet(
        &self,
        live: &Arc<Live>,
        f: impl FnOnce(&mut Task) -> Option<StreamResponse>,
    ) -> Option<TaskState> {
        self.update_with(live, f, true).await
    }

    /// [`Self::update_quiet`]; with `store` false the change is published but only marked for
    /// the store (see [`LiveState::unstored`]).
    async fn update_with(
        &self,
        live: &Arc<Live>,
        f: impl FnOnce(&mut Task) -> Option<StreamResponse>,
        store: bool,
    ) -> Option<TaskState> {
        let mut g = live.state.lock().await;
        if g.task.status.state.is_terminal() {
            return None;
        }
        let ev = f(&mut g.task)?;
        crate::bounds::cap_history(&mut g.task, self.limits.store.max_history_length);
        let state = g.task.status.state;
        if store {
            self.put_live(&mut g).await;
        } else {
            g.unstored = true;
        }
        if let Some(s) = self.sink.get() {
            s.on_event(&g.task, &ev);
        }
        self.publish(&mut g, ev).await;
        live.watch.send_replace(state);
        Some(state)
    }

    /// Store the live task as it stands (called with its lock held). Best effort: a failure to
    /// store progress never fails the handler.
    async fn put_live(&self, g: &mut LiveState) {
        g.unstored = false;
        let rec = StoredTask {
            task: g.task.clone(),
            owner: g.owner.clone(),
        };
        if let Err(e) = self.store.put(rec).await {
            tracing::debug!(error = %e, "storing task progress failed");
        }
    }

    /// Store the live task if it has a change the store does not have yet.
    async fn store_unstored(&self, live: &Live) {
        let mut g = live.state.lock().await;
        if g.unstored {
            self.put_live(&mut g).await;
        }
    }

    /// [`Emitter::update_metadata`]: `f` on the live task's metadata under its lock, stored.
    async fn update_metadata(&self, live: &Arc<Live>, f: impl FnOnce(&mut crate::model::Struct)) {
        let mut g = live.state.lock().await;
        if g.task.status.state.is_terminal() {
            return;
        }
        f(g.task.metadata.get_or_insert_default());
        self.put_live(&mut g).await;
    }

    /// Make `task` live in this process; its last event was number `seq`.
    pub(crate) fn register(&self, task: Task, owner: String, seq: u64) -> Arc<Live> {
        let id = task.id.clone();
        let state = task.status.state;
        let live = Arc::new(Live {
            state: tokio::sync::Mutex::new(LiveState {
                task,
                owner,
                fanout: crate::fanout::Fanout::new(self.queue_limits()),
                error: None,
                direct_ok: false,
                direct: None,
                seq,
                unstored: false,
            }),
            cancel: CancellationToken::new(),
            watch: watch::channel(state).0,
            announced: watch::channel(false).0,
            running: std::sync::atomic::AtomicBool::new(false),
        });
        if let Ok(mut m) = self.live.lock() {
            m.entry(id).or_insert(live).clone()
        } else {
            live
        }
    }

    /// Stop accepting sends; wait up to `grace` for running tasks, then fail the rest.
    pub async fn shutdown(&self, grace: Duration) {
        self.shutdown.cancel();
        self.tracker.close();
        if tokio::time::timeout(grace, self.tracker.wait())
            .await
            .is_err()
        {
            for l in self.lives() {
                l.cancel.cancel();
            }
            let _ = tokio::time::timeout(Duration::from_secs(5), self.tracker.wait()).await;
        }
        // Streams of tasks that are not running (waiting for input, or subscribed after a
        // restart) end too: the task as it stands is their last event.
        for l in self.lives() {
            let mut g = l.state.lock().await;
            let LiveState {
                fanout, task, seq, ..
            } = &mut *g;
            fanout.close_with(*seq, task);
        }
    }

    /// The tasks live in this process, taken out of the registry's lock.
    fn lives(&self) -> Vec<Arc<Live>> {
        self.live
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Number of tasks live in this process (running or interrupted).
    pub fn live_count(&self) -> usize {
        self.live.lock().map(|m| m.len()).unwrap_or(0)
    }
}

/// The status message (and InternalError message) of a task whose handler panicked.
pub const HANDLER_PANICKED: &str = "internal error: the agent's handler panicked";

/// The payload of a caught panic as text (for the log only; never sent to the caller).
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// A message (or the task it would grow) over the per-task byte bound: InvalidParams, refused
/// before anything is stored.
fn too_large(bytes: usize, max: usize) -> A2aError {
    A2aError::invalid_params(format!(
        "message too large: the task would hold {bytes} bytes; the limit is {max} bytes per task"
    ))
    .with_meta("field", "message")
}

fn not_cancelable(id: &str, s: TaskState) -> A2aError {
    A2aError::new(
        ErrorKind::TaskNotCancelable,
        format!("Task cannot be canceled: it is {}", s.as_str()),
    )
    .with_meta("taskId", id)
}

fn terminal_subscribe(id: &str) -> A2aError {
    A2aError::new(
        ErrorKind::UnsupportedOperation,
        "the task is in a terminal state; subscribe is not supported",
    )
    .with_meta("taskId", id)
}

fn terminal_send(id: &str) -> A2aError {
    A2aError::new(
        ErrorKind::UnsupportedOperation,
        "the task is in a terminal state and accepts no more messages",
    )
    .with_meta("taskId", id)
}

/// Whether a stream should close after `ev` (see [`StreamResponse::closes_live_stream`]).
pub(crate) fn ends_stream(ev: &StreamResponse) -> bool {
    ev.closes_live_stream()
}
