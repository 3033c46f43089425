//! A send's turn, up to its handler: the task created or continued (capacity, ownership,
//! bounds), the subscription of a stream, the handler's context, the handler started (inline
//! first, then on its own task: `run`), and the answer in the caller's [`SendMode`].

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::live::now_ts;
use super::send::{SendAnswer, SendExtras, SendInput, SendMode, Start, Subscription};
use super::sends::{Idem, SendTarget};
use super::{TaskManager, terminal_send, too_large};
use crate::error::{A2aError, ErrorKind};
use crate::handler::{
    Emitter, Headers, RawMessage, RequestContext, status_change, trim_history, trim_shared,
};
use crate::model::{Role, Task, TaskState, TaskStatus};

/// A follow-up to a task whose previous message is still being handled.
fn still_working() -> A2aError {
    A2aError::new(
        ErrorKind::UnsupportedOperation,
        "the task is still working on a previous message",
    )
}

impl TaskManager {
    /// One send, the handler run once; with `idem`, the send is recorded for retries as soon as
    /// its task is known (see [`super::idempotency`]).
    pub(crate) async fn send_once(
        &self,
        input: SendInput,
        extras: SendExtras,
        idem: Option<&Idem>,
    ) -> Result<SendAnswer, A2aError> {
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
        let max_task = self.limits().store.max_task_bytes;
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
                                (q < self.limits().task_queue_size).then_some(q + 1)
                            })
                            .is_ok()
                    {
                        queued_slot = true;
                        None
                    } else {
                        return Err(self
                            .limits()
                            .error_table
                            .capacity_refusal("server busy: agent capacity reached; retry later"));
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
        let (live, first_turn) = match message.task_id.clone() {
            Some(tid) => {
                let live = match self.live_get(&tid) {
                    Some(l) => {
                        if l.followed.load(Ordering::SeqCst) {
                            // Numbered after what other replicas published of it.
                            self.catch_up(&l).await;
                        }
                        l
                    }
                    None => match self.load_owned(&tid, &caller).await {
                        Ok(rec) => {
                            if rec.task.status.state.is_terminal() {
                                release_queue(queued_slot);
                                return Err(terminal_send(&tid));
                            }
                            // Stored as submitted or working, yet not running here: another
                            // replica on the same database runs it (a store one process owns
                            // has none such once recovery ran).
                            if matches!(
                                rec.task.status.state,
                                TaskState::Submitted | TaskState::Working
                            ) {
                                release_queue(queued_slot);
                                return Err(still_working());
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
                    Some(self.limits().error_table.foreign_task(&tid))
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
                    Some(still_working())
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
                // Of two replicas continuing this task at once, one may (the store compares
                // what each continues from; a store one process owns always agrees).
                let err = match err {
                    Some(e) => Some(e),
                    None => match self.writer.store.begin_turn(&tid, &g.task.status).await {
                        Ok(true) => None,
                        Ok(false) => {
                            // What this process holds is out of date: read it again next time.
                            if !live.running.load(Ordering::SeqCst) {
                                self.live_remove(&tid);
                            }
                            Some(still_working())
                        }
                        Err(e) => Some(A2aError::internal(e.to_string())),
                    },
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
                live.tell(None, true);
                // The task as it stood when this message arrived (for the handler).
                prior = Some(Task::clone(&g.task));
                let snapshot_msg = message.clone();
                let t = Arc::make_mut(&mut g.task);
                let ev = status_change(t, TaskState::Submitted, None);
                t.history.push(snapshot_msg);
                crate::bounds::cap_history(t, self.limits().store.max_history_length);
                if let Some(s) = self.writer.sink.get() {
                    s.on_task_started(&g.task, &g.owner).await;
                }
                self.writer.record(&mut g, &ev, true).await;
                self.writer.publish(&mut g, ev).await;
                live.tell(Some(TaskState::Submitted), false);
                drop(g);
                // A continued task is not a first turn (`direct_ok` was cleared above).
                (live, false)
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
                // Shared with a store that keeps it in memory: the live task is copied at its
                // next change, not here.
                let task = Arc::new(task);
                if let Err(e) = self.writer.store.put_shared(&task, &owner).await {
                    release_queue(queued_slot);
                    if e.is_full() {
                        return Err(self.limits().error_table.capacity_refusal(
                            "server busy: the agent's task store is full; retry later",
                        ));
                    }
                    return Err(A2aError::internal(e.to_string()));
                }
                if let Some(s) = self.writer.sink.get() {
                    s.on_task_started(&task, &owner).await;
                }
                let live = self.register(task, owner, 0);
                live.running.store(true, Ordering::SeqCst);
                // A new task nobody has seen: a blocking send, or a stream of a handler that
                // may answer directly, can still end with a message and no task.
                let direct_ok = mode == SendMode::Blocking
                    || (mode == SendMode::Stream && self.handler.may_reply_directly());
                live.state.lock().await.direct_ok = direct_ok;
                (live, direct_ok)
            }
        };
        // Both ways above left the task's id in `message.task_id` (a continued task is the one
        // the message names) and told whether this is a first turn: no lock taken again here.
        // Kept before the handler runs: a retry after a crash finds the task.
        if let Some(i) = idem {
            let id = message.task_id.clone().unwrap_or_default();
            self.keep_send(i, SendTarget::Task(id)).await;
        }
        // One receiver for both waits below: `wait_for` looks at the current value first.
        let mut watch_rx = live.watch.subscribe();

        // Subscribe before the run starts so no event is missed.
        let sub = if mode == SendMode::Stream {
            let mut g = live.state.lock().await;
            let rx = g.fanout.subscribe();
            Some(Subscription {
                task: trim_history(Task::clone(&g.task), history_length),
                seq: g.seq,
                start: Start::Snapshot,
                events: rx,
            })
        } else {
            None
        };

        let ctx_id = message.context_id.clone().unwrap_or_default();
        let task_id = message.task_id.clone().unwrap_or_default();
        let me = self.me.clone();
        let ctx = RequestContext {
            message,
            raw: match extras.raw {
                Some(s) => RawMessage::body(s),
                None => RawMessage::tree(raw_message),
            },
            task_id,
            context_id: ctx_id,
            caller,
            extensions,
            metadata: request.metadata,
            configuration: extras.configuration,
            task: prior,
            headers: extras.headers.unwrap_or_else(|| Headers::filtered(headers)),
            emitter: Emitter::to(live.clone()),
            // The task's own token, shared: nothing cancels a context's token but the task's
            // cancel, so a child token (a node linked into the task's token and unlinked again
            // per turn) would tell the handler nothing more.
            cancel: live.cancel.clone(),
        };
        let live2 = live.clone();
        let turn = async move {
            if let Some(mgr) = me.upgrade() {
                mgr.run(live2, ctx, permit, queued_slot).await;
            }
        };
        if mode == SendMode::ReturnImmediately {
            self.tracker.spawn(turn);
        } else {
            // A stream too: its subscription above already queues every event, so a turn that
            // ends at once leaves them all queued for the response, in order.
            self.run_inline_first(Box::pin(turn)).await;
        }

        match mode {
            SendMode::Stream => {
                if first_turn {
                    // Announce the stream only once the handler has emitted or ended.
                    let _ = watch_rx.wait_for(|w| w.announced).await;
                    if let Some(m) = live.state.lock().await.direct.take() {
                        return Ok(SendAnswer::Message(m));
                    }
                }
                match sub {
                    Some(s) => Ok(SendAnswer::Stream(Box::new(s))),
                    None => Err(A2aError::internal("stream subscription missing")),
                }
            }
            SendMode::ReturnImmediately => {
                let g = live.state.lock().await;
                Ok(SendAnswer::Task(trim_shared(
                    g.task.clone(),
                    history_length,
                )))
            }
            SendMode::Blocking => {
                let _ = watch_rx
                    .wait_for(|w| w.state.is_terminal() || w.state.is_interrupted())
                    .await;
                let mut g = live.state.lock().await;
                if let Some(m) = g.direct.take() {
                    return Ok(SendAnswer::Message(m));
                }
                if let Some(e) = &g.error {
                    return Err(e.clone());
                }
                // The live task itself, shared (with the store too): no copy for the answer.
                Ok(SendAnswer::Task(trim_shared(
                    g.task.clone(),
                    history_length,
                )))
            }
        }
    }

    /// Run a blocking send's or a stream's turn on the caller's own task as long as it does not
    /// wait: a handler that answers at once (the echo agent) costs no task spawn and no wake-up
    /// of another task or worker thread. At its first wait the turn moves, as it is, to a task of
    /// its own (tracked for shutdown, like every turn), so a caller that goes away while the
    /// handler waits never cuts the turn short. Sound because a spawned task is always polled
    /// once: the moved turn registers the new task's wakers in that first poll.
    async fn run_inline_first(
        &self,
        mut turn: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ) {
        // Shutdown waits for this turn while it runs here, as for a spawned one.
        let token = self.tracker.token();
        if futures_util::poll!(turn.as_mut()).is_pending() {
            self.tracker.spawn(async move {
                turn.await;
                drop(token);
            });
        }
    }
}
