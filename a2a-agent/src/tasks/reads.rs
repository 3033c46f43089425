//! Reading, listing, canceling and subscribing to tasks, each checked against its owner.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::fanout::Events;
use super::live::{Live, LiveState};
use super::send::{Start, Subscription};
use super::{TaskManager, not_cancelable, terminal_subscribe};
use crate::caller::CallerProfile;
use crate::error::A2aError;
use crate::handler::trim_history;
use crate::model::{Task, TaskState};
use crate::store::{PageCursor, StoredTask, TaskFilter, TaskPage};

impl TaskManager {
    pub(super) async fn load_owned(
        &self,
        id: &str,
        caller: &CallerProfile,
    ) -> Result<StoredTask, A2aError> {
        let rec = self
            .writer
            .store
            .get(id)
            .await
            .map_err(|e| A2aError::internal(e.to_string()))?;
        match rec {
            Some(r) if r.owner == caller.owner_key() => Ok(r),
            Some(_) => Err(self.limits().error_table.foreign_task(id)),
            None => Err(A2aError::task_not_found(id)),
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
                return Ok(trim_history(Task::clone(&g.task), history_length));
            }
            return Err(self.limits().error_table.foreign_task(id));
        }
        let rec = self.load_owned(id, caller).await?;
        Ok(trim_history(rec.task, history_length))
    }

    /// Every task of `filter` (newest first).
    pub async fn list_all(&self, filter: &TaskFilter) -> Result<Vec<Task>, A2aError> {
        let v = self
            .writer
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
        after: Option<&PageCursor>,
        limit: usize,
    ) -> Result<TaskPage, A2aError> {
        self.writer
            .store
            .page(filter, after, limit)
            .await
            .map_err(|e| A2aError::internal(e.to_string()))
    }

    /// CancelTask. A task another replica runs is canceled there (see [`super::peers`]); one
    /// no replica runs (waiting for input) is canceled here, its CANCELED event published to
    /// the subscribers of every replica.
    pub async fn cancel(&self, id: &str, caller: &CallerProfile) -> Result<Task, A2aError> {
        for _ in 0..3 {
            if let Some(r) = self.cancel_once(id, caller).await {
                return r;
            }
        }
        Err(A2aError::new(
            crate::error::ErrorKind::TaskNotCancelable,
            "the task kept changing on other replicas; retry",
        )
        .with_meta("taskId", id))
    }

    /// One attempt of [`TaskManager::cancel`]; `None`: another replica continued the task
    /// (waiting for input) meanwhile, try again.
    async fn cancel_once(
        &self,
        id: &str,
        caller: &CallerProfile,
    ) -> Option<Result<Task, A2aError>> {
        let mut seen = None;
        let live = match self.live_get(id) {
            Some(l) if l.running.load(Ordering::SeqCst) => l,
            // Not running here: as stored, it may run on another replica.
            held => {
                let seq = self.last_seq(id).await;
                let rec = match self.load_owned(id, caller).await {
                    Ok(r) => r,
                    Err(e) => return Some(Err(e)),
                };
                let s = rec.task.status.state;
                if s.is_terminal() {
                    return Some(Err(not_cancelable(id, s)));
                }
                if matches!(s, TaskState::Submitted | TaskState::Working)
                    && let Some(r) = self.cancel_remote(id).await
                {
                    return Some(r);
                }
                seen = Some(rec.task.status.clone());
                match held {
                    Some(l) => l,
                    None => self.register(rec.task, rec.owner, seq),
                }
            }
        };
        {
            let g = live.state.lock().await;
            if g.owner != caller.owner_key() {
                return Some(Err(self.limits().error_table.foreign_task(id)));
            }
            if g.task.status.state.is_terminal() {
                return Some(Err(not_cancelable(id, g.task.status.state)));
            }
        }
        if let Some(seen) = seen.filter(|_| self.peers.get().is_some()) {
            // Followed from another replica: numbered after the last event there; and taken
            // as a follow-up is (`begin_turn`), so that a follow-up another replica begins at
            // the same moment and this cancel do not both go ahead.
            self.catch_up(&live).await;
            match self.writer.store.begin_turn(id, &seen).await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(A2aError::internal(e.to_string()))),
            }
        }
        Some(self.cancel_live(id, &live).await)
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
        // A followed task whose follower gave it up (it had no subscriber left) between our
        // finding it and subscribing is looked up again.
        for _ in 0..3 {
            let (sub, live) = self.subscribe_once(id, caller, last_event_id).await?;
            let Some(live) = live else {
                return Ok(sub);
            };
            if !live.abandoned.load(Ordering::SeqCst) {
                if !live.running.load(Ordering::SeqCst) {
                    self.follow(id, &live);
                }
                return Ok(sub);
            }
        }
        Err(A2aError::internal(
            "the task changed hands while subscribing; retry",
        ))
    }

    /// One attempt of [`TaskManager::subscribe_from`]; the live task subscribed to, if any.
    async fn subscribe_once(
        &self,
        id: &str,
        caller: &CallerProfile,
        last_event_id: Option<u64>,
    ) -> Result<(Subscription, Option<Arc<Live>>), A2aError> {
        let live = match self.live_get(id) {
            Some(l) => l,
            None => {
                // The number first: a task stored meanwhile is newer, never older, than it.
                let cur = self.last_seq(id).await;
                let rec = self.load_owned(id, caller).await?;
                if rec.task.status.state.is_terminal() {
                    let Some(after) = last_event_id else {
                        return Err(terminal_subscribe(id));
                    };
                    let sub = Subscription {
                        start: self.start_from(id, after, cur).await,
                        task: rec.task,
                        seq: cur,
                        events: Events::ended(),
                    };
                    return Ok((sub, None));
                }
                // Not live in this process (after a restart, or run by another replica):
                // register it so later turns reach us, and (once subscribed) follow what
                // other replicas publish.
                self.register(rec.task, rec.owner, cur)
            }
        };
        let mut g = live.state.lock().await;
        if g.owner != caller.owner_key() {
            return Err(self.limits().error_table.foreign_task(id));
        }
        let terminal = g.task.status.state.is_terminal();
        let start = match last_event_id {
            None if terminal => return Err(terminal_subscribe(id)),
            None => Start::Snapshot,
            Some(after) => self.start_from(id, after, g.seq).await,
        };
        let followed = self.peers.get().is_some() && !live.running.load(Ordering::SeqCst);
        if !terminal
            && start == Start::Snapshot
            && followed
            && let Some((task, seq, events)) = self.numbered_snapshot(id, &mut g).await
        {
            let sub = Subscription {
                task,
                seq,
                start,
                events,
            };
            drop(g);
            return Ok((sub, Some(live)));
        }
        let events = if terminal {
            Events::ended()
        } else {
            g.fanout.subscribe()
        };
        let sub = Subscription {
            task: Task::clone(&g.task),
            seq: g.seq,
            start,
            events,
        };
        drop(g);
        Ok((sub, (!terminal).then_some(live)))
    }

    /// The snapshot of a task run on another replica, as stored with the number of the last
    /// event it includes, and a subscription to what follows it (lock of the live task held):
    /// the logged events between that number and the last one published here first, or the
    /// live events up to that number skipped. `None` when the store keeps no number (or the
    /// log no longer holds those events): the live task is the snapshot then.
    async fn numbered_snapshot(&self, id: &str, g: &mut LiveState) -> Option<(Task, u64, Events)> {
        let (rec, Some(at)) = self.writer.store.get_numbered(id).await.ok()?? else {
            return None;
        };
        if rec.task.status.state.is_terminal() || at == g.seq {
            return (!rec.task.status.state.is_terminal())
                .then(|| (rec.task, at, g.fanout.subscribe()));
        }
        if at > g.seq {
            // Stored before its event was logged: the event comes live, and is skipped.
            return Some((rec.task, at, g.fanout.subscribe_between(Vec::new(), at)));
        }
        // Logged without a store write (the runtime's WORKING): those events first.
        let mut evs = self.writer.replay().since(id, at).await.ok()?;
        evs.retain(|(n, _)| *n <= g.seq);
        let whole =
            evs.len() as u64 == g.seq - at && evs.first().is_some_and(|(n, _)| *n == at + 1);
        whole.then(|| (rec.task, at, g.fanout.subscribe_between(evs, 0)))
    }
}
