//! A task live in this process ([`Live`]: its state under one lock, its cancel token and
//! watchers) and the [`Writer`] that stores and publishes its changes; a live task is the sink a
//! handler's emitter writes through.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock, Weak};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::fanout::Fanout;
use crate::error::A2aError;
use crate::handler::{Edit, MetadataFuture, MetadataGuard, SinkFuture, TaskSink};
use crate::model::{Message, StreamResponse, Struct, Task, TaskState, Timestamp};
use crate::push::EventSink;
use crate::replay::{MemoryReplay, ReplayLog, Retention};
use crate::store::{Notice, TaskStore};

/// Now (UTC, millisecond precision).
pub(crate) fn now_ts() -> Timestamp {
    Timestamp::now()
}

pub(crate) struct LiveState {
    /// The task, shared with the store that keeps it in memory (`TaskStore::put_shared`): a
    /// change copies it first when the store still holds it (`Arc::make_mut`).
    pub(super) task: Arc<Task>,
    pub(super) owner: String,
    pub(super) fanout: Fanout,
    pub(super) error: Option<A2aError>,
    /// This turn may end with a direct message and no task (a new task nobody has seen yet).
    pub(super) direct_ok: bool,
    /// The direct message the handler answered with (the task was dropped).
    pub(super) direct: Option<Message>,
    /// Number of the task's last event (its SSE `id`); the next event gets `seq + 1`.
    pub(super) seq: u64,
    /// The task has a change the store does not have yet: the runtime's own WORKING, published
    /// at once and stored when the handler first waits (see `TaskManager::run`), by the
    /// handler's next update, or at the end of the turn, whichever comes first.
    pub(super) unstored: bool,
    /// The store refused a write of it: another replica took it over (this one lost the
    /// database for longer than its lease). Nothing more of it is stored or published here.
    pub(super) fenced: bool,
}

/// What the waiters of a live task watch (one channel: one notification per change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Watched {
    /// Its state.
    pub(super) state: TaskState,
    /// Set once the task has been shown to the caller (the handler emitted, or the turn ended).
    pub(super) announced: bool,
}

pub(crate) struct Live {
    pub(super) state: tokio::sync::Mutex<LiveState>,
    pub(super) cancel: CancellationToken,
    pub(super) watch: watch::Sender<Watched>,
    pub(super) running: AtomicBool,
    /// A follower reads what other replicas publish of it (`peers`).
    pub(super) followed: AtomicBool,
    /// Its follower gave it up (no subscriber was left): it left the registry.
    pub(super) abandoned: AtomicBool,
    /// Where its changes go (held weakly: an emitter that outlives the manager changes nothing).
    pub(super) writer: Weak<Writer>,
}

impl Live {
    /// `task` live, its last event number `seq`, its subscribers' queues bounded by `fanout`.
    pub(super) fn new(
        task: Arc<Task>,
        owner: String,
        seq: u64,
        fanout: Fanout,
        writer: Weak<Writer>,
    ) -> Self {
        let state = task.status.state;
        Live {
            state: tokio::sync::Mutex::new(LiveState {
                task,
                owner,
                fanout,
                error: None,
                direct_ok: false,
                direct: None,
                seq,
                unstored: false,
                fenced: false,
            }),
            cancel: CancellationToken::new(),
            watch: watch::channel(Watched {
                state,
                announced: false,
            })
            .0,
            running: AtomicBool::new(false),
            followed: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            writer,
        }
    }
}

impl Live {
    /// Tell the task's waiters its `state` (None: unchanged) and, with `announce`, that it has
    /// been shown to the caller, in one notification (none when there is nothing to tell).
    pub(super) fn tell(&self, state: Option<TaskState>, announce: bool) {
        if state.is_none() && !announce {
            return;
        }
        self.watch.send_modify(|w| {
            if let Some(s) = state {
                w.state = s;
            }
            w.announced |= announce;
        });
    }
}

/// A handler's emitter writes to its live task (`Emitter::update_metadata` and the emits).
impl TaskSink for Live {
    fn update<'a>(&'a self, edit: Edit<'a>) -> SinkFuture<'a> {
        Box::pin(async move {
            if let Some(w) = self.writer.upgrade() {
                let _ = w.update(self, edit).await;
            }
        })
    }

    fn lock_metadata(&self) -> MetadataFuture<'_> {
        Box::pin(async move {
            let writer = self.writer.upgrade()?;
            let g = self.state.lock().await;
            if g.task.status.state.is_terminal() {
                return None;
            }
            Some(Box::new(LockedMetadata { writer, g }) as Box<dyn MetadataGuard<'_> + '_>)
        })
    }

    fn message_events(&self) -> bool {
        self.writer.upgrade().is_some_and(|w| w.message_events)
    }
}

/// A live task locked for a change of its metadata (`Emitter::update_metadata`).
struct LockedMetadata<'a> {
    writer: Arc<Writer>,
    g: tokio::sync::MutexGuard<'a, LiveState>,
}

impl<'a> MetadataGuard<'a> for LockedMetadata<'a> {
    fn metadata(&mut self) -> &mut Struct {
        Arc::make_mut(&mut self.g.task)
            .metadata
            .get_or_insert_default()
    }

    fn store(self: Box<Self>) -> SinkFuture<'a> {
        Box::pin(async move {
            let LockedMetadata { writer, mut g } = *self;
            writer.put_live(&mut g).await;
        })
    }
}

/// Where the changes of live tasks go: the task store, the push sink, the subscribers (through
/// each task's fan-out) and the replay log.
pub(crate) struct Writer {
    pub(super) store: Arc<dyn TaskStore>,
    pub(super) sink: OnceLock<Arc<dyn EventSink>>,
    replay: Arc<dyn ReplayLog>,
    replay_set: OnceLock<Arc<dyn ReplayLog>>,
    /// Most messages kept in a task's history (0 = unlimited).
    max_history_length: usize,
    /// An intermediate message may be a `Message` event (the Camel table).
    pub(super) message_events: bool,
}

impl Writer {
    /// A writer to `store`, keeping at most `max_history_length` messages of a task's history;
    /// with `message_events`, an intermediate message may be a `Message` event.
    pub(super) fn new(
        store: Arc<dyn TaskStore>,
        max_history_length: usize,
        message_events: bool,
    ) -> Self {
        Writer {
            store,
            sink: OnceLock::new(),
            // Until a log is set: event numbers only, so that numbering never restarts.
            replay: Arc::new(MemoryReplay::new(Retention {
                events_per_task: 0,
                max_bytes: 0,
            })),
            replay_set: OnceLock::new(),
            max_history_length,
            message_events,
        }
    }

    /// Keep replayable events in `log` (only the first call takes effect).
    pub(super) fn set_replay_log(&self, log: Arc<dyn ReplayLog>) {
        let _ = self.replay_set.set(log);
    }

    pub(super) fn replay(&self) -> &Arc<dyn ReplayLog> {
        self.replay_set.get().unwrap_or(&self.replay)
    }

    /// Number `ev` as the task's next event, queue it for the subscribers, and keep it in the
    /// replay log (which takes it). Called with the task's lock held, so numbers, queues and
    /// the log agree: a resume reads the log under the same lock.
    pub(super) async fn publish(&self, g: &mut LiveState, ev: StreamResponse) {
        if g.fenced {
            return;
        }
        g.seq += 1;
        let LiveState {
            fanout, task, seq, ..
        } = g;
        fanout.publish(*seq, &ev, task);
        if let Err(e) = self.replay().append_owned(&g.task.id, g.seq, ev).await {
            tracing::debug!(error = %e, "keeping an event in the replay log failed");
        }
    }

    /// Mutate a live task under its lock, persist it, and publish the event `f` returns.
    /// Does nothing once the task is terminal.
    pub(super) async fn update(
        &self,
        live: &Live,
        f: impl FnOnce(&mut Task) -> Option<StreamResponse>,
    ) -> Option<TaskState> {
        self.update_as(live, f, true, true).await
    }

    /// [`Self::update`] without announcing the task; with `store` false the change is published
    /// but only marked for the store (see [`LiveState::unstored`]).
    pub(super) async fn update_with(
        &self,
        live: &Live,
        f: impl FnOnce(&mut Task) -> Option<StreamResponse>,
        store: bool,
    ) -> Option<TaskState> {
        self.update_as(live, f, store, false).await
    }

    /// [`Self::update_with`]; with `announce`, the task is also marked shown to the caller
    /// (told with its new state, in one notification), whether or not it changed.
    async fn update_as(
        &self,
        live: &Live,
        f: impl FnOnce(&mut Task) -> Option<StreamResponse>,
        store: bool,
        announce: bool,
    ) -> Option<TaskState> {
        let mut g = live.state.lock().await;
        let ev = if g.task.status.state.is_terminal() || g.fenced {
            None
        } else {
            f(Arc::make_mut(&mut g.task))
        };
        let Some(ev) = ev else {
            drop(g);
            live.tell(None, announce);
            return None;
        };
        crate::bounds::cap_history(Arc::make_mut(&mut g.task), self.max_history_length);
        let state = g.task.status.state;
        self.record(&mut g, &ev, store).await;
        if g.fenced {
            // The handler's task ends here (as a cancel does); the state is the survivor's.
            live.cancel.cancel();
            live.tell(Some(g.task.status.state), announce);
            return None;
        }
        self.publish(&mut g, ev).await;
        live.tell(Some(state), announce);
        Some(state)
    }

    /// Hand the change `ev` of the live task (lock held) to the store and the push sink: the
    /// push notifications it owes are recorded in the store's outbox with the change (`store`
    /// false: alone, the change only marked for the store), then queued for delivery.
    pub(super) async fn record(&self, g: &mut LiveState, ev: &StreamResponse, store: bool) {
        let out = match self.sink.get() {
            Some(s) => s.notices(&g.task, ev).await,
            None => Vec::new(),
        };
        let notices: Vec<Notice> = out.iter().map(|o| o.notice.clone()).collect();
        let seqs = if store {
            // The stored task includes `ev`, numbered next by `publish`.
            let next = g.seq + 1;
            self.put_live_with(g, notices, next).await
        } else {
            g.unstored = true;
            if notices.is_empty() {
                Vec::new()
            } else {
                self.store
                    .record_notices(notices)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "recording push notifications failed");
                        Vec::new()
                    })
            }
        };
        if let (Some(s), false) = (self.sink.get(), out.is_empty()) {
            s.dispatch(out, seqs);
        }
    }

    /// Store the live task as it stands (called with its lock held). Best effort: a failure to
    /// store progress never fails the handler.
    pub(super) async fn put_live(&self, g: &mut LiveState) {
        let seq = g.seq;
        self.put_live_with(g, Vec::new(), seq).await;
    }

    /// [`Self::put_live`], recording `notices` in the store's outbox with it; their numbers.
    async fn put_live_with(&self, g: &mut LiveState, notices: Vec<Notice>, seq: u64) -> Vec<i64> {
        g.unstored = false;
        let put = self
            .store
            .put_numbered_shared(&g.task, &g.owner, notices, seq)
            .await;
        match put {
            Ok(seqs) => seqs,
            Err(e) if e.is_fenced() => {
                self.fence(g, &e).await;
                Vec::new()
            }
            Err(e) => {
                tracing::debug!(error = %e, "storing task progress failed");
                Vec::new()
            }
        }
    }

    /// The store refused a write of the live task (lock held; see [`LiveState::fenced`]): take
    /// the task as the replica that took it over stored it, and show its status to this
    /// replica's own subscribers (not to the replay log: that replica logged it).
    async fn fence(&self, g: &mut LiveState, e: &crate::store::StoreError) {
        tracing::warn!(task_id = %g.task.id, error = %e,
            "another replica took this task over: its handler is stopped here");
        metrics::counter!("a2a_agent_fenced_writes_total").increment(1);
        g.fenced = true;
        let Ok(Some(stored)) = self.store.get(&g.task.id).await else {
            return;
        };
        g.task = Arc::new(stored.task);
        let ev = StreamResponse::StatusUpdate(crate::model::TaskStatusUpdateEvent {
            task_id: g.task.id.clone(),
            context_id: g.task.context_id.clone().unwrap_or_default(),
            status: g.task.status.clone(),
            metadata: None,
        });
        g.seq += 1;
        let LiveState {
            fanout, task, seq, ..
        } = g;
        fanout.publish(*seq, &ev, task);
    }

    /// Store the live task if it has a change the store does not have yet.
    pub(super) async fn store_unstored(&self, live: &Live) {
        let mut g = live.state.lock().await;
        if g.unstored {
            self.put_live(&mut g).await;
        }
    }
}
