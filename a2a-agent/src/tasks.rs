//! Task lifecycle: creation, the running-task registry, cancellation, timeouts, concurrency and
//! queue limits, event fan-out to subscribers.

use crate::auth::CallerProfile;
use crate::error::{A2aError, ErrorKind};
use crate::handler::{Handler, HandlerError, Reply, RequestContext, agent_message};
use crate::idempotency::{SendLog, SendTarget};
use crate::model::{
    Artifact, Message, Part, Role, SendMessageRequest, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use crate::store::{StoredTask, TaskFilter, TaskStore};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

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
    pub sse_overflow_policy: crate::fanout::OverflowPolicy,
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
            sse_overflow_policy: crate::fanout::OverflowPolicy::DropNewest,
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

/// Emits progress for one task. Emitting on an inactive emitter is a no-op.
#[derive(Clone, Default)]
pub struct Emitter {
    inner: Option<(Weak<TaskManager>, Arc<Live>)>,
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
fn own_message(mut m: Message, t: &Task) -> Message {
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

fn status_change(t: &mut Task, state: TaskState, message: Option<Message>) -> StreamResponse {
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

fn add_artifact(
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
            live: Mutex::new(HashMap::new()),
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

    /// Number `ev` as the task's next event, keep it in the replay log, and queue it for the
    /// subscribers. Called with the task's lock held, so numbers and queues agree.
    async fn publish(&self, g: &mut LiveState, ev: &StreamResponse) {
        g.seq += 1;
        if let Err(e) = self.replay().append(&g.task.id, g.seq, ev).await {
            tracing::debug!(error = %e, "keeping an event in the replay log failed");
        }
        let LiveState {
            fanout, task, seq, ..
        } = g;
        fanout.publish(*seq, ev, task);
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
        self.publish(&mut g, &ev).await;
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

    async fn load_owned(&self, id: &str, caller: &CallerProfile) -> Result<StoredTask, A2aError> {
        let rec = self
            .store
            .get(id)
            .await
            .map_err(|e| A2aError::internal(e.to_string()))?;
        match rec {
            Some(r) if r.owner == caller.owner_key() => Ok(r),
            _ => Err(A2aError::task_not_found(id)),
        }
    }

    /// GetTask.
    pub async fn get(
        &self,
        id: &str,
        history_length: Option<i32>,
        caller: &CallerProfile,
    ) -> Result<Task, A2aError> {
        if history_length.is_some_and(|h| h < 0) {
            return Err(A2aError::invalid_params(
                "historyLength must not be negative",
            ));
        }
        if let Some(live) = self.live_get(id) {
            let g = live.state.lock().await;
            if g.owner == caller.owner_key() {
                return Ok(trim_history(g.task.clone(), history_length));
            }
            return Err(A2aError::task_not_found(id));
        }
        let rec = self.load_owned(id, caller).await?;
        Ok(trim_history(rec.task, history_length))
    }

    /// Every task of `filter` (newest first).
    pub async fn list_all(&self, filter: &TaskFilter) -> Result<Vec<Task>, A2aError> {
        let v = self
            .store
            .list(filter)
            .await
            .map_err(|e| A2aError::internal(e.to_string()))?;
        Ok(v.into_iter().map(|s| s.task).collect())
    }

    /// One page of `filter`'s matches (newest first) after `after`, with the total count.
    pub async fn list_page(
        &self,
        filter: &TaskFilter,
        after: Option<&crate::store::PageCursor>,
        limit: usize,
    ) -> Result<crate::store::TaskPage, A2aError> {
        self.store
            .page(filter, after, limit)
            .await
            .map_err(|e| A2aError::internal(e.to_string()))
    }

    /// CancelTask.
    pub async fn cancel(&self, id: &str, caller: &CallerProfile) -> Result<Task, A2aError> {
        if let Some(live) = self.live_get(id) {
            {
                let g = live.state.lock().await;
                if g.owner != caller.owner_key() {
                    return Err(A2aError::task_not_found(id));
                }
                if g.task.status.state.is_terminal() {
                    return Err(not_cancelable(id, g.task.status.state));
                }
            }
            self.update(&live, |t| Some(status_change(t, TaskState::Canceled, None)))
                .await;
            live.cancel.cancel();
            if !live.running.load(Ordering::SeqCst) {
                self.live_remove(id);
            }
            let g = live.state.lock().await;
            if g.task.status.state != TaskState::Canceled {
                return Err(not_cancelable(id, g.task.status.state));
            }
            return Ok(g.task.clone());
        }
        let mut rec = self.load_owned(id, caller).await?;
        if rec.task.status.state.is_terminal() {
            return Err(not_cancelable(id, rec.task.status.state));
        }
        status_change(&mut rec.task, TaskState::Canceled, None);
        let task = rec.task.clone();
        self.store
            .put(rec)
            .await
            .map_err(|e| A2aError::internal(e.to_string()))?;
        Ok(task)
    }

    /// SubscribeToTask.
    pub async fn subscribe(
        &self,
        id: &str,
        caller: &CallerProfile,
    ) -> Result<Subscription, A2aError> {
        self.subscribe_from(id, caller, None).await
    }

    /// SubscribeToTask, resuming after event `last_event_id` when given (see [`Start`]). A
    /// resume of a task that has ended replays what is left and ends, where a plain subscribe
    /// to it is refused.
    pub async fn subscribe_from(
        &self,
        id: &str,
        caller: &CallerProfile,
        last_event_id: Option<u64>,
    ) -> Result<Subscription, A2aError> {
        let live = match self.live_get(id) {
            Some(l) => l,
            None => {
                let rec = self.load_owned(id, caller).await?;
                let cur = self.last_seq(id).await;
                if rec.task.status.state.is_terminal() {
                    let Some(after) = last_event_id else {
                        return Err(terminal_subscribe(id));
                    };
                    return Ok(Subscription {
                        start: self.start_from(id, after, cur).await,
                        task: rec.task,
                        seq: cur,
                        events: crate::fanout::Events::ended(),
                    });
                }
                // Not live in this process (e.g. after a restart): register it so later turns
                // reach us.
                self.register(rec.task, rec.owner, cur)
            }
        };
        let mut g = live.state.lock().await;
        if g.owner != caller.owner_key() {
            return Err(A2aError::task_not_found(id));
        }
        let terminal = g.task.status.state.is_terminal();
        let start = match last_event_id {
            None if terminal => return Err(terminal_subscribe(id)),
            None => Start::Snapshot,
            Some(after) => self.start_from(id, after, g.seq).await,
        };
        let events = if terminal {
            crate::fanout::Events::ended()
        } else {
            g.fanout.subscribe()
        };
        Ok(Subscription {
            task: g.task.clone(),
            seq: g.seq,
            start,
            events,
        })
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

    /// One send, the handler run once; with `idem`, the send is recorded for retries as soon as
    /// its task is known (see [`crate::idempotency`]).
    pub(crate) async fn send_once(
        &self,
        input: SendInput,
        idem: Option<&crate::idempotency::Idem>,
    ) -> Result<SendOutcome, A2aError> {
        let SendInput {
            request,
            raw_message,
            caller,
            extensions,
            mode,
            headers,
        } = input;
        let history_length = request
            .configuration
            .as_ref()
            .and_then(|c| c.history_length);
        if history_length.is_some_and(|h| h < 0) {
            return Err(A2aError::invalid_params(
                "historyLength must not be negative",
            ));
        }
        let mut message = request.message;
        if message.parts.is_empty() {
            return Err(A2aError::invalid_params("message.parts must not be empty")
                .with_meta("field", "message.parts"));
        }
        if message.message_id.is_empty() {
            return Err(A2aError::invalid_params("message.messageId is required")
                .with_meta("field", "message.messageId"));
        }
        if message.role == Role::Unspecified {
            message.role = Role::User;
        }
        let msg_bytes = crate::bounds::message_bytes(&message);
        let max_task = self.limits.store.max_task_bytes;
        if max_task > 0 && msg_bytes > max_task {
            return Err(too_large(msg_bytes, max_task));
        }
        if self.shutdown.is_cancelled() {
            return Err(A2aError::new(
                ErrorKind::ResourceExhausted,
                "server is shutting down",
            ));
        }

        // Capacity: a shared semaphore governs every path.
        let mut queued_slot = false;
        let permit = match &self.permits {
            None => None,
            Some(sem) => match sem.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => {
                    if mode == SendMode::ReturnImmediately
                        && self
                            .queued
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |q| {
                                (q < self.limits.task_queue_size).then_some(q + 1)
                            })
                            .is_ok()
                    {
                        queued_slot = true;
                        None
                    } else {
                        return Err(A2aError::new(
                            ErrorKind::ResourceExhausted,
                            "server busy: agent capacity reached; retry later",
                        ));
                    }
                }
            },
        };
        let release_queue = |q: bool| {
            if q {
                self.queued.fetch_sub(1, Ordering::SeqCst);
            }
        };

        // Resume an existing task (multi-turn) or create one.
        let mut prior: Option<Task> = None;
        let live = match message.task_id.clone() {
            Some(tid) => {
                let live = match self.live_get(&tid) {
                    Some(l) => l,
                    None => match self.load_owned(&tid, &caller).await {
                        Ok(rec) => {
                            if rec.task.status.state.is_terminal() {
                                release_queue(queued_slot);
                                return Err(terminal_send(&tid));
                            }
                            let seq = self.last_seq(&tid).await;
                            self.register(rec.task, rec.owner, seq)
                        }
                        Err(e) => {
                            release_queue(queued_slot);
                            return Err(e);
                        }
                    },
                };
                let mut g = live.state.lock().await;
                let err = if g.owner != caller.owner_key() {
                    Some(A2aError::task_not_found(&tid))
                } else if g.task.status.state.is_terminal() {
                    Some(terminal_send(&tid))
                } else if max_task > 0
                    && crate::bounds::task_bytes(&g.task).saturating_add(msg_bytes) > max_task
                {
                    Some(too_large(
                        crate::bounds::task_bytes(&g.task).saturating_add(msg_bytes),
                        max_task,
                    ))
                } else if live.running.load(Ordering::SeqCst) {
                    Some(A2aError::new(
                        ErrorKind::UnsupportedOperation,
                        "the task is still working on a previous message",
                    ))
                } else if message
                    .context_id
                    .as_ref()
                    .is_some_and(|c| Some(c) != g.task.context_id.as_ref())
                {
                    Some(A2aError::invalid_params(
                        "message.contextId does not match the task's contextId",
                    ))
                } else {
                    None
                };
                if let Some(e) = err {
                    drop(g);
                    release_queue(queued_slot);
                    return Err(e);
                }
                message.context_id = g.task.context_id.clone();
                live.running.store(true, Ordering::SeqCst);
                g.error = None;
                g.direct_ok = false;
                g.direct = None;
                live.announced.send_replace(true);
                // The task as it stood when this message arrived (for the handler).
                prior = Some(g.task.clone());
                let snapshot_msg = message.clone();
                let ev = status_change(&mut g.task, TaskState::Submitted, None);
                g.task.history.push(snapshot_msg);
                crate::bounds::cap_history(&mut g.task, self.limits.store.max_history_length);
                let rec = StoredTask {
                    task: g.task.clone(),
                    owner: g.owner.clone(),
                };
                let _ = self.store.put(rec).await;
                if let Some(s) = self.sink.get() {
                    s.on_task_started(&g.task, &g.owner);
                    s.on_event(&g.task, &ev);
                }
                self.publish(&mut g, &ev).await;
                live.watch.send_replace(TaskState::Submitted);
                drop(g);
                live
            }
            None => {
                let id = uuid::Uuid::new_v4().to_string();
                let ctx = message
                    .context_id
                    .clone()
                    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
                message.task_id = Some(id.clone());
                message.context_id = Some(ctx.clone());
                let task = Task {
                    id: id.clone(),
                    context_id: Some(ctx),
                    status: TaskStatus {
                        state: TaskState::Submitted,
                        message: None,
                        timestamp: Some(now_ts()),
                    },
                    history: vec![message.clone()],
                    ..Default::default()
                };
                let owner = caller.owner_key();
                if let Err(e) = self
                    .store
                    .put(StoredTask {
                        task: task.clone(),
                        owner: owner.clone(),
                    })
                    .await
                {
                    release_queue(queued_slot);
                    if e.is_full() {
                        return Err(A2aError::new(
                            ErrorKind::ResourceExhausted,
                            "server busy: the agent's task store is full; retry later",
                        ));
                    }
                    return Err(A2aError::internal(e.to_string()));
                }
                if let Some(s) = self.sink.get() {
                    s.on_task_started(&task, &owner);
                }
                let live = self.register(task, owner, 0);
                live.running.store(true, Ordering::SeqCst);
                // A new task nobody has seen: a blocking send, or a stream of a handler that
                // may answer directly, can still end with a message and no task.
                let direct_ok = mode == SendMode::Blocking
                    || (mode == SendMode::Stream && self.handler.may_reply_directly());
                live.state.lock().await.direct_ok = direct_ok;
                live
            }
        };
        let first_turn = {
            let g = live.state.lock().await;
            message.task_id = Some(g.task.id.clone());
            g.direct_ok
        };
        // Kept before the handler runs: a retry after a crash finds the task.
        self.keep_send(
            idem,
            SendTarget::Task(live.state.lock().await.task.id.clone()),
        )
        .await;
        let mut announced_rx = live.announced.subscribe();

        // Subscribe before the run starts so no event is missed.
        let sub = if mode == SendMode::Stream {
            let mut g = live.state.lock().await;
            let rx = g.fanout.subscribe();
            Some(Subscription {
                task: trim_history(g.task.clone(), history_length),
                seq: g.seq,
                start: Start::Snapshot,
                events: rx,
            })
        } else {
            None
        };
        let mut watch_rx = live.watch.subscribe();
        watch_rx.mark_unchanged();

        let ctx_id = message.context_id.clone().unwrap_or_default();
        let task_id = message.task_id.clone().unwrap_or_default();
        let me = self.me.clone();
        let ctx = RequestContext {
            message,
            raw: raw_message,
            task_id,
            context_id: ctx_id,
            caller,
            extensions,
            metadata: request.metadata,
            task: prior,
            headers,
            emitter: Emitter {
                inner: Some((me.clone(), live.clone())),
            },
            cancel: live.cancel.child_token(),
        };
        let live2 = live.clone();
        let turn = async move {
            if let Some(mgr) = me.upgrade() {
                mgr.run(live2, ctx, permit, queued_slot).await;
            }
        };
        if mode == SendMode::Blocking {
            self.run_inline_first(Box::pin(turn)).await;
        } else {
            self.tracker.spawn(turn);
        }

        match mode {
            SendMode::Stream => {
                if first_turn {
                    // Announce the stream only once the handler has emitted or ended.
                    let _ = announced_rx.wait_for(|a| *a).await;
                    if let Some(m) = live.state.lock().await.direct.take() {
                        return Ok(SendOutcome::Message(m));
                    }
                }
                match sub {
                    Some(s) => Ok(SendOutcome::Stream(s)),
                    None => Err(A2aError::internal("stream subscription missing")),
                }
            }
            SendMode::ReturnImmediately => {
                let g = live.state.lock().await;
                Ok(SendOutcome::Task(trim_history(
                    g.task.clone(),
                    history_length,
                )))
            }
            SendMode::Blocking => {
                let _ = watch_rx
                    .wait_for(|s| s.is_terminal() || s.is_interrupted())
                    .await;
                let mut g = live.state.lock().await;
                if let Some(m) = g.direct.take() {
                    return Ok(SendOutcome::Message(m));
                }
                if let Some(e) = &g.error {
                    return Err(e.clone());
                }
                // Nobody else holds the live task (it left the registry when its turn ended and
                // no emitter outlived the handler): answer with it instead of a copy.
                let task = if Arc::strong_count(&live) == 1 {
                    std::mem::take(&mut g.task)
                } else {
                    g.task.clone()
                };
                Ok(SendOutcome::Task(trim_history(task, history_length)))
            }
        }
    }

    /// Run a blocking send's turn on the caller's own task as long as it does not wait: a
    /// handler that answers at once (the echo agent) costs no task spawn and no wake-up of
    /// another task or worker thread. At its first wait the turn moves, as it is, to a task of
    /// its own (tracked for shutdown, like every turn), so a caller that goes away while the
    /// handler waits never cuts the turn short. Sound because a spawned task is always polled
    /// once: the moved turn registers the new task's wakers in that first poll.
    async fn run_inline_first(
        &self,
        mut turn: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ) {
        // Shutdown waits for this turn while it runs here, as for a spawned one.
        let token = self.tracker.token();
        if futures::poll!(turn.as_mut()).is_pending() {
            self.tracker.spawn(async move {
                turn.await;
                drop(token);
            });
        }
    }

    async fn run(
        &self,
        live: Arc<Live>,
        ctx: RequestContext,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
        queued: bool,
    ) {
        let task_id = ctx.task_id.clone();
        // Queued: wait for a slot (or shutdown / cancel).
        let _permit = if queued {
            let sem = self.permits.clone();
            let got = match sem {
                Some(sem) => tokio::select! {
                    p = sem.acquire_owned() => p.ok(),
                    _ = self.shutdown.cancelled() => None,
                    _ = live.cancel.cancelled() => None,
                },
                None => None,
            };
            self.queued.fetch_sub(1, Ordering::SeqCst);
            if got.is_none() {
                let reason = if self.shutdown.is_cancelled() {
                    "server shut down before the task started"
                } else {
                    "task canceled while queued"
                };
                self.fail(&live, reason, None).await;
                self.finish(&live, &task_id).await;
                return;
            }
            got
        } else {
            permit
        };

        // WORKING is published now and stored once the handler waits (see `drive`): a handler
        // that answers at once (the echo agent) costs one store write less.
        if self
            .update_with(
                &live,
                |t| Some(status_change(t, TaskState::Working, None)),
                false,
            )
            .await
            .is_none()
        {
            // Canceled before it started: the handler never runs.
            self.finish(&live, &task_id).await;
            return;
        }

        let handler = self.handler.clone();
        let exts: Vec<_> = self
            .ext_handlers
            .iter()
            .filter(|(d, _)| {
                d.get("uri")
                    .and_then(Value::as_str)
                    .is_some_and(|u| ctx.extensions.iter().any(|e| e == u))
            })
            .cloned()
            .collect();
        let work = async {
            if exts.is_empty() {
                // No hook sees the context after the handler: no copy of it.
                return handler.handle(ctx).await;
            }
            for (decl, h) in &exts {
                h.before(decl, &ctx).await?;
            }
            let mut out = handler.handle(ctx.clone()).await;
            for (decl, h) in &exts {
                h.after(decl, &ctx, &mut out).await;
            }
            out
        };
        // A panicking handler (or extension hook) fails its task instead of leaving it WORKING.
        let work = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(work));
        let work = async {
            match work.await {
                Ok(r) => r,
                Err(panic) => {
                    let what = panic_text(panic.as_ref());
                    tracing::error!(task_id = %task_id, panic = %what, "the agent's handler panicked");
                    metrics::counter!("a2a_agent_handler_panics_total").increment(1);
                    Err(HandlerError::a2a(ErrorKind::Internal, HANDLER_PANICKED))
                }
            }
        };
        let outcome = self.drive(&live, Box::pin(work)).await;
        match outcome {
            None => {
                // Canceled by the client (already CANCELED) or by shutdown.
                self.fail(&live, "server shut down while the task was running", None)
                    .await;
            }
            Some(Ok(reply)) => self.complete(&live, reply).await,
            Some(Err(e)) => {
                let msg = e.message.clone();
                self.fail(&live, &msg, e.to_a2a()).await;
            }
        }
        self.finish(&live, &task_id).await;
    }

    /// Run the handler's `work` to its end (None: canceled, or shut down), storing the
    /// runtime's WORKING status once the work first waits.
    ///
    /// The deferred store waits for the live task's lock, which the handler's own update holds
    /// across its store write and publish: a handler suspended inside an update releases the
    /// lock only when it is polled again. So the store is driven beside the work, in one
    /// select loop that keeps polling the work, and never awaited alone while the work waits
    /// (awaiting it alone deadlocked such a turn; see
    /// `blocking::a_handler_waiting_inside_an_update_is_not_deadlocked`).
    async fn drive<W: std::future::Future<Output = Result<Reply, HandlerError>>>(
        &self,
        live: &Live,
        // Boxed: kept across its first poll and the wait, the work would otherwise be copied
        // with every move of the turn future.
        mut work: std::pin::Pin<Box<W>>,
    ) -> Option<Result<Reply, HandlerError>> {
        if let std::task::Poll::Ready(r) = futures::poll!(work.as_mut()) {
            return Some(r);
        }
        let timeout = self.limits.async_timeout;
        // Boxed again (the timer is not movable): only a turn that waits pays for it.
        let mut work = Box::pin(tokio::time::timeout(timeout, work));
        let store = self.store_unstored(live);
        tokio::pin!(store);
        let mut stored = false;
        let outcome = loop {
            // Biased towards the work: a handler watching `ctx.cancelled()` gets to see the
            // cancel and stop cleanly before the task is given up.
            tokio::select! {
                biased;
                r = &mut work => break Some(r.unwrap_or_else(|_| {
                    Err(HandlerError::failed(format!(
                        "task timed out after {} ms",
                        timeout.as_millis()
                    )))
                })),
                () = &mut store, if !stored => stored = true,
                _ = live.cancel.cancelled() => break None,
            }
        };
        // A deferred store still under way ends before the turn's final write starts, so that
        // a store writing on another thread never puts WORKING after the final state. The work
        // goes first: given up inside an update, it would hold the lock the store waits for.
        drop(work);
        if !stored {
            store.await;
        }
        outcome
    }

    pub(crate) async fn finish(&self, live: &Arc<Live>, task_id: &str) {
        live.running.store(false, Ordering::SeqCst);
        let mut g = live.state.lock().await;
        if g.unstored {
            self.put_live(&mut g).await;
        }
        metrics::counter!("a2a_agent_task_turns_total", "state" => g.task.status.state.as_str())
            .increment(1);
        // Terminal tasks leave the registry; so do interrupted ones (their streams have ended;
        // the next turn or a subscriber registers them again from the store), which keeps the
        // registry bounded by the running tasks.
        if g.task.status.state.is_terminal() || g.task.status.state.is_interrupted() {
            drop(g);
            self.live_remove(task_id);
        }
    }

    pub(crate) async fn fail(&self, live: &Arc<Live>, reason: &str, err: Option<A2aError>) {
        {
            let mut g = live.state.lock().await;
            if g.task.status.state.is_terminal() {
                return;
            }
            g.error = err;
        }
        let reason = reason.to_string();
        self.update(live, |t| {
            let m = agent_message(
                vec![Part::text(reason)],
                &t.id,
                t.context_id.as_deref().unwrap_or(""),
            );
            Some(status_change(t, TaskState::Failed, Some(m)))
        })
        .await;
    }

    pub(crate) async fn complete(&self, live: &Arc<Live>, reply: Reply) {
        let reply = match reply {
            Reply::Direct(m) => match self.answer_directly(live, m).await {
                None => return,
                Some(m) => Reply::Message(m),
            },
            r => r,
        };
        let (parts, artifacts, state, message) = match reply {
            Reply::Text(t) => (vec![Part::text(t)], vec![], TaskState::Completed, None),
            Reply::Parts(p) => (p, vec![], TaskState::Completed, None),
            Reply::Message(m) => (vec![], vec![], TaskState::Completed, Some(m)),
            Reply::Artifacts(a) => (vec![], a, TaskState::Completed, None),
            Reply::State(s, t) => (
                t.map(|t| vec![Part::text(t)]).unwrap_or_default(),
                vec![],
                s,
                None,
            ),
            Reply::Direct(m) => (vec![], vec![], TaskState::Completed, Some(m)),
            Reply::Empty => {
                let cur = live.state.lock().await.task.status.state;
                let s = if cur.is_interrupted() {
                    cur
                } else {
                    TaskState::Completed
                };
                if s == cur {
                    // Already in its final interrupted state: nothing to publish.
                    return;
                }
                (vec![], vec![], s, None)
            }
        };
        for a in artifacts {
            self.update(live, |t| Some(add_artifact(t, a, false, true)))
                .await;
        }
        self.update(live, |t| {
            let msg = match message {
                Some(mut m) => {
                    m.task_id = Some(t.id.clone());
                    m.context_id = t.context_id.clone();
                    if m.message_id.is_empty() {
                        m.message_id = uuid::Uuid::new_v4().to_string();
                    }
                    m.role = Role::Agent;
                    Some(m)
                }
                None if parts.is_empty() => None,
                None => Some(agent_message(
                    parts,
                    &t.id,
                    t.context_id.as_deref().unwrap_or(""),
                )),
            };
            Some(status_change(t, state, msg))
        })
        .await;
    }

    /// End a turn with a direct message and no task when nobody has seen the task yet (the task
    /// is dropped from the store); otherwise give the message back (the task completes with it).
    async fn answer_directly(&self, live: &Arc<Live>, mut m: Message) -> Option<Message> {
        let mut g = live.state.lock().await;
        if !g.direct_ok || *live.announced.borrow() || g.task.status.state.is_terminal() {
            return Some(m);
        }
        m.task_id = None;
        if m.context_id.is_none() {
            m.context_id = g.task.context_id.clone();
        }
        if m.message_id.is_empty() {
            m.message_id = uuid::Uuid::new_v4().to_string();
        }
        m.role = Role::Agent;
        g.direct = Some(m);
        g.task.status.state = TaskState::Completed;
        // The task leaves the store: nothing of it is to be stored any more.
        g.unstored = false;
        let id = g.task.id.clone();
        let LiveState {
            fanout, task, seq, ..
        } = &mut *g;
        fanout.close_with(*seq, task);
        drop(g);
        if let Err(e) = self.store.delete(&id).await {
            tracing::debug!(error = %e, "dropping the task of a direct reply failed");
        }
        live.watch.send_replace(TaskState::Completed);
        live.announced.send_replace(true);
        None
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
