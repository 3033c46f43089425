//! A send's turn: the task created or continued, the handler run (inline first, then on its
//! own task), its updates stored and published, the final state written.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::{
    Emitter, HANDLER_PANICKED, Live, LiveState, SendInput, SendMode, SendOutcome, Start,
    Subscription, TaskManager, add_artifact, now_ts, panic_text, status_change, terminal_send,
    too_large, trim_history,
};
use crate::error::{A2aError, ErrorKind};
use crate::handler::{HandlerError, Headers, RawMessage, Reply, RequestContext};
use crate::idempotency::SendTarget;
use crate::model::{Message, Part, Role, Task, TaskState, TaskStatus, agent_message};
use crate::store::StoredTask;

impl TaskManager {
    /// One send, the handler run once; with `idem`, the send is recorded for retries as soon as
    /// its task is known (see [`crate::idempotency`]).
    pub(crate) async fn send_once(
        &self,
        input: SendInput,
        extras: super::SendExtras,
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
                self.publish(&mut g, ev).await;
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
            raw: match extras.raw {
                Some(s) => RawMessage::body(s),
                None => RawMessage::tree(raw_message),
            },
            task_id,
            context_id: ctx_id,
            caller,
            extensions,
            metadata: request.metadata,
            task: prior,
            headers: extras.headers.unwrap_or_else(|| Headers::filtered(headers)),
            emitter: Emitter {
                inner: Some((me.clone(), live.clone())),
            },
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
    /// `tests/turn_store.rs`, `a_handler_waiting_inside_an_update_is_not_deadlocked`).
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
}
