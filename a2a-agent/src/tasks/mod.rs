//! Task lifecycle: creation, the running-task registry, cancellation, timeouts, concurrency and
//! queue limits, event fan-out to subscribers.
//!
//! The [`TaskManager`] (here) owns the live tasks (`live`); a send (`send`) goes through the
//! retry contract ([`idempotency`], its records in `sends`), then a turn (`turn`: the task
//! created or continued; `run`: the handler run and its end). Reads, cancels and subscriptions
//! are in `reads`, the subscribers' queues in [`fanout`], crash recovery in `recovery`, what
//! replicas on one database tell each other (events, cancels, leases) in `peers`.

use crate::bounds::StoreLimits;
use crate::config::OverflowPolicy;
use crate::error::{A2aError, ErrorKind};
use crate::handler::{ExtensionHandler, Handler};
use crate::model::{Task, TaskState};
use crate::push::EventSink;
use crate::replay::ReplayLog;
use crate::store::TaskStore;
use fanout::{Fanout, QueueLimits};
use foldhash::HashMap;
use live::{Live, LiveState, Writer};
use sends::{Claims, MemorySendLog, SendLog};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub mod fanout;
pub mod idempotency;
mod live;
mod peers;
#[cfg(feature = "postgres")]
pub(crate) mod peers_pg;
mod reads;
pub(crate) mod recovery;
mod run;
mod send;
mod sends;
#[cfg(feature = "postgres")]
mod sends_pg;
mod turn;

/// The handler's progress emitter, at home in [`handler`](crate::handler); this path is kept for
/// one release.
pub use crate::handler::Emitter;
pub(crate) use crate::handler::trim_history;
pub(crate) use fanout::ends_stream;
pub(crate) use send::{SendAnswer, SendExtras};
pub use send::{SendInput, SendMode, SendOutcome, Start, Subscription};

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
    pub sse_overflow_policy: OverflowPolicy,
    /// Byte and history bounds of stored tasks.
    pub store: StoreLimits,
    /// A repeated `messageId` within this window answers from the first send (see
    /// [`idempotency`]); zero turns it off.
    pub idempotency_window: Duration,
    /// The error table (`rest_status_table`): with the Camel guide's, the capacity refusal is
    /// named `SERVER_BUSY`, a foreign task is 403 `AuthorizationError`, and a handler's
    /// [`Emitter::emit_message_event`] is a `Message` stream event.
    pub error_table: crate::error::RestStatusTable,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_concurrent_tasks: 0,
            task_queue_size: 0,
            async_timeout: Duration::from_secs(300),
            sse_queue_capacity: 1000,
            sse_queue_max_bytes: 4 * 1024 * 1024,
            sse_overflow_policy: OverflowPolicy::DropNewest,
            store: StoreLimits::default(),
            idempotency_window: Duration::ZERO,
            error_table: crate::error::RestStatusTable::Spec,
        }
    }
}

/// Changes the slots of `sem` from `old` to `new`: free slots are taken at once, the rest as
/// the tasks holding them end.
fn resize(sem: &Arc<Semaphore>, old: usize, new: usize) {
    if new > old {
        sem.add_permits(new - old);
    } else if new < old {
        let want = old - new;
        let rest = want - sem.forget_permits(want);
        if rest > 0 {
            let sem = sem.clone();
            tokio::spawn(async move {
                if let Ok(p) = sem.acquire_many_owned(rest as u32).await {
                    p.forget();
                }
            });
        }
    }
}

/// Owns tasks: creates them, runs the handler, fans events out, cancels.
pub struct TaskManager {
    /// Where the changes of live tasks go (the store among them).
    writer: Arc<Writer>,
    handler: Arc<dyn Handler>,
    ext_handlers: Vec<(Value, Arc<dyn ExtensionHandler>)>,
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// The limits now (a reload replaces them: [`TaskManager::set_limits`]).
    limits: arc_swap::ArcSwap<TaskLimits>,
    permits: Option<Arc<Semaphore>>,
    queued: AtomicUsize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    me: Weak<TaskManager>,
    sends: Arc<dyn SendLog>,
    sends_set: std::sync::OnceLock<Arc<dyn SendLog>>,
    claims: Claims,
    /// The drop warnings of this manager's streams.
    drops: Arc<fanout::DropLog>,
    /// The other replicas on the same database (none: this process owns its store).
    peers: std::sync::OnceLock<Arc<dyn peers::Peers>>,
}

impl TaskManager {
    /// A manager over `store` running `handler`.
    pub fn new(
        store: Arc<dyn TaskStore>,
        handler: Arc<dyn Handler>,
        ext_handlers: Vec<(Value, Arc<dyn ExtensionHandler>)>,
        limits: TaskLimits,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| TaskManager {
            limits: arc_swap::ArcSwap::from_pointee(limits.clone()),
            writer: Arc::new(Writer::new(
                store,
                limits.store.max_history_length,
                limits.error_table.is_camel(),
            )),
            handler,
            ext_handlers,
            live: Mutex::new(HashMap::default()),
            permits: (limits.max_concurrent_tasks > 0)
                .then(|| Arc::new(Semaphore::new(limits.max_concurrent_tasks))),
            queued: AtomicUsize::new(0),
            shutdown: CancellationToken::new(),
            tracker: TaskTracker::new(),
            me: me.clone(),
            sends: Arc::new(MemorySendLog::new(limits.idempotency_window, 100_000)),
            sends_set: std::sync::OnceLock::new(),
            claims: Default::default(),
            drops: Default::default(),
            peers: std::sync::OnceLock::new(),
        })
    }

    /// The limits as they are now.
    #[inline]
    pub(crate) fn limits(&self) -> arc_swap::Guard<Arc<TaskLimits>> {
        self.limits.load()
    }

    /// Takes new limits for what starts from now on (a configuration reload): the concurrency
    /// cap (its slots are added, or taken away as running tasks end), the queue, the run
    /// timeout, the stream queue bounds of tasks made live from now on and the largest task.
    /// The history length and the idempotency window keep the values the manager was built
    /// with, and so does a concurrency cap turned on or off (0): those need a new manager.
    pub fn set_limits(&self, mut new: TaskLimits) {
        let old = self.limits.load_full();
        new.store.max_history_length = old.store.max_history_length;
        new.idempotency_window = old.idempotency_window;
        match &self.permits {
            Some(sem) if new.max_concurrent_tasks > 0 => {
                resize(sem, old.max_concurrent_tasks, new.max_concurrent_tasks);
            }
            _ => new.max_concurrent_tasks = old.max_concurrent_tasks,
        }
        self.limits.store(Arc::new(new));
    }

    /// Keep replayable events in `log` (the server sets its task store's log: the
    /// [`MemoryStore`](crate::MemoryStore) or a [`SqliteReplay`](crate::replay::SqliteReplay)).
    /// Without one, events are numbered but not kept, so a resume gets the task snapshot. Only
    /// the first call takes effect; call it before serving.
    pub fn set_replay_log(&self, log: Arc<dyn ReplayLog>) {
        self.writer.set_replay_log(log);
    }

    /// Number of the last event of `id` (0 when none is known).
    pub(crate) async fn last_seq(&self, id: &str) -> u64 {
        self.writer.replay().last(id).await.unwrap_or_else(|e| {
            tracing::debug!(error = %e, task_id = id, "reading the replay log failed");
            0
        })
    }

    /// How a resume after event `after` starts, when the task's last event is `cur`.
    async fn start_from(&self, id: &str, after: u64, cur: u64) -> Start {
        if after == cur {
            return Start::Resume(Vec::new());
        }
        if after < cur {
            let mut evs = self
                .writer
                .replay()
                .since(id, after)
                .await
                .unwrap_or_default();
            // Those after `cur` come live (another replica may have logged them already).
            evs.retain(|(s, _)| *s <= cur);
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
    pub fn set_event_sink(&self, sink: Arc<dyn EventSink>) {
        let _ = self.writer.sink.set(sink);
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.writer.store
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
            let _ = rx
                .wait_for(|w| w.state.is_terminal() || w.state.is_interrupted())
                .await;
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

    /// Removes task `id` from the registry if `live` is what it holds.
    fn live_remove_if(&self, id: &str, live: &Arc<Live>) {
        if let Ok(mut m) = self.live.lock()
            && m.get(id).is_some_and(|l| Arc::ptr_eq(l, live))
        {
            m.remove(id);
        }
    }

    fn queue_limits(&self) -> QueueLimits {
        let l = self.limits();
        QueueLimits {
            max_events: l.sse_queue_capacity.max(1),
            max_bytes: l.sse_queue_max_bytes,
            policy: l.sse_overflow_policy,
        }
    }

    /// Make `task` live in this process; its last event was number `seq`.
    pub(crate) fn register(
        &self,
        task: impl Into<Arc<Task>>,
        owner: String,
        seq: u64,
    ) -> Arc<Live> {
        let task = task.into();
        let id = task.id.clone();
        let live = Arc::new(Live::new(
            task,
            owner,
            seq,
            Fanout::new(self.queue_limits(), self.drops.clone()),
            Arc::downgrade(&self.writer),
        ));
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

    /// Turns readiness off: the first step of a shutdown ([`TaskManager::shutdown`] does it
    /// too).
    pub fn begin_shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Whether [`TaskManager::shutdown`] has begun (readiness turns false first).
    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Number of tasks live in this process (running or interrupted).
    pub fn live_count(&self) -> usize {
        self.live.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Number of sends waiting for a slot (`task_queue_size` bounds it).
    pub fn queued_count(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
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
