//! A turn's handler run and its end: waiting for a slot, the runtime's WORKING, the handler and
//! its extension hooks (a panic fails the task), the timeout and cancel, and the final state
//! written (completed, failed, or a direct reply that drops the task).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::live::{Live, LiveState};
use super::{HANDLER_PANICKED, TaskManager, panic_text};
use crate::error::{A2aError, ErrorKind};
use crate::handler::{HandlerError, Reply, RequestContext, add_artifact, status_change};
use crate::model::{Message, Part, Role, TaskState, agent_message};

impl TaskManager {
    pub(super) async fn run(
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
            .writer
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
        let work = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(work));
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
        if let std::task::Poll::Ready(r) = futures_util::poll!(work.as_mut()) {
            return Some(r);
        }
        let timeout = self.limits().async_timeout;
        // Boxed again (the timer is not movable): only a turn that waits pays for it.
        let mut work = Box::pin(tokio::time::timeout(timeout, work));
        let store = self.writer.store_unstored(live);
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
            self.writer.put_live(&mut g).await;
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
        self.writer
            .update(live, |t| {
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
            self.writer
                .update(live, |t| Some(add_artifact(t, a, false, true)))
                .await;
        }
        self.writer
            .update(live, |t| {
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
        if !g.direct_ok || live.watch.borrow().announced || g.task.status.state.is_terminal() {
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
        Arc::make_mut(&mut g.task).status.state = TaskState::Completed;
        // The task leaves the store: nothing of it is to be stored any more.
        g.unstored = false;
        let id = g.task.id.clone();
        let LiveState {
            fanout, task, seq, ..
        } = &mut *g;
        fanout.close_with(*seq, task);
        drop(g);
        if let Err(e) = self.writer.store.delete(&id).await {
            tracing::debug!(error = %e, "dropping the task of a direct reply failed");
        }
        live.tell(Some(TaskState::Completed), true);
        None
    }
}
