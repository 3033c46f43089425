//! Replicas on one database ([`Peers`]): live events of a task another replica runs, read from
//! the shared replay log, and cancels sent to the replica running a task.
//!
//! **Events.** A subscriber on replica B of a task running on A is a subscriber of B's own
//! live task, as every subscriber is (the same queues and the same SSE encoder): B registers
//! the task and *follows* it. Each event A publishes is in the replay log with its number
//! before it is announced (see `replay_pg`); B's follower, woken by the announcement (or by a
//! poll while its listener is away), reads the log after the last number it delivered and
//! publishes what it finds into the task's fan-out, in order. So no event is missed or
//! delivered twice. A new subscriber's snapshot is the task as stored with the number of the
//! last event it includes (`TaskStore::get_numbered`; `reads::numbered_snapshot`). When the log no longer holds the next number (retention), the followers'
//! subscribers get the stored task as a snapshot, as a slow subscriber does. The follower stops
//! after the event that ends the turn (the task leaves B's registry, as on A), when none of
//! B's subscribers is left (a later one registers the task again), when a turn of the task
//! starts on B itself (B's own events are the task's events then), or at shutdown.
//!
//! **Cancels.** CancelTask on B of a task A runs asks A ([`Peers::request_cancel`]) and waits
//! up to [`REMOTE_CANCEL_WAIT`] for the task to end: A cancels its handler as for a local
//! cancel, and the CANCELED event reaches every subscriber through the log. If A has not ended
//! the task in time, B answers with the task as it stands (not yet CANCELED; the request stays
//! marked, A acts on it when it reads it, and A's lease ends the task if A is gone).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::watch;

use super::live::{Live, LiveState};
use super::{TaskManager, ends_stream, not_cancelable};
use crate::error::A2aError;
use crate::handler::status_change;
use crate::model::{StreamResponse, Task, TaskState};
use crate::store::StoreError;

/// How long CancelTask on one replica waits for the replica running the task to cancel it.
pub(crate) const REMOTE_CANCEL_WAIT: Duration = Duration::from_secs(5);

/// A follower reads the log this often even without an announcement (a missed one costs at
/// most this much delay).
const SAFETY_POLL: Duration = Duration::from_secs(5);

/// What replicas sharing one database tell each other (the PostgreSQL form is
/// `peers_pg::PgPeers`).
#[async_trait]
pub(crate) trait Peers: Send + Sync + 'static {
    /// Wake-ups of task `id`: the watch changes when another replica may have added events of
    /// it to the replay log.
    fn watch(&self, id: &str) -> Watch;
    /// Asks the replica running task `id` to cancel it; `false` when no other replica runs it.
    async fn request_cancel(&self, id: &str) -> Result<bool, StoreError>;
}

/// The wake-ups of the tasks followed in this process, by task id.
#[derive(Default)]
pub(crate) struct Wakes {
    map: Mutex<HashMap<String, (watch::Sender<u64>, usize)>>,
}

/// A follower's wake-ups of one task (unregistered on drop).
pub(crate) struct Watch {
    rx: watch::Receiver<u64>,
    id: String,
    wakes: Arc<Wakes>,
}

impl Watch {
    /// Waits for the next wake-up; `false` once nothing can wake it any more.
    pub(crate) async fn changed(&mut self) -> bool {
        self.rx.changed().await.is_ok()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Ok(mut m) = self.wakes.map.lock()
            && let Some((_, n)) = m.get_mut(&self.id)
        {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.id);
            }
        }
    }
}

// Used by the PostgreSQL peers only.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
impl Wakes {
    /// A watch of task `id`.
    pub(crate) fn watch(self: &Arc<Self>, id: &str) -> Watch {
        let rx = match self.map.lock() {
            Ok(mut m) => {
                let e = m
                    .entry(id.to_owned())
                    .or_insert_with(|| (watch::channel(0).0, 0));
                e.1 += 1;
                e.0.subscribe()
            }
            Err(_) => watch::channel(0).1,
        };
        Watch {
            rx,
            id: id.to_owned(),
            wakes: self.clone(),
        }
    }

    /// Wakes the watches of task `id`.
    pub(crate) fn wake(&self, id: &str) {
        if let Ok(m) = self.map.lock()
            && let Some((tx, _)) = m.get(id)
        {
            tx.send_modify(|n| *n += 1);
        }
    }

    /// Wakes every watch (the listener was away: announcements may have been missed).
    pub(crate) fn wake_all(&self) {
        if let Ok(m) = self.map.lock() {
            for (tx, _) in m.values() {
                tx.send_modify(|n| *n += 1);
            }
        }
    }
}

impl TaskManager {
    /// Take the replicas' channel (the server sets it for a store that replicas share). Only
    /// the first call takes effect.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn set_peers(&self, peers: Arc<dyn Peers>) {
        let _ = self.peers.set(peers);
    }

    /// Follow `live` (registered here, its turns run elsewhere) from the replay log, once.
    pub(super) fn follow(&self, id: &str, live: &Arc<Live>) {
        let Some(peers) = self.peers.get() else {
            return;
        };
        if live.followed.swap(true, Ordering::SeqCst) {
            return;
        }
        let id = id.to_owned();
        let mut watch = peers.watch(&id);
        let me = self.me.clone();
        let live = live.clone();
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            loop {
                let Some(mgr) = me.upgrade() else { break };
                let here = mgr.live_get(&id).is_some_and(|l| Arc::ptr_eq(&l, &live));
                if !here || live.running.load(Ordering::SeqCst) {
                    break;
                }
                if mgr.catch_up(&live).await || !mgr.still_followed(&id, &live).await {
                    mgr.live_remove_if(&id, &live);
                    break;
                }
                drop(mgr);
                tokio::select! {
                    ok = watch.changed() => if !ok { break },
                    _ = tokio::time::sleep(SAFETY_POLL) => {}
                    _ = shutdown.cancelled() => break,
                }
            }
            live.followed.store(false, Ordering::SeqCst);
        });
    }

    /// Whether `live` (followed, not running here) still has a subscriber; without one it
    /// leaves the registry now (a later subscriber registers it again), so that a task whose
    /// subscribers went away is not followed for ever.
    async fn still_followed(&self, id: &str, live: &Arc<Live>) -> bool {
        let mut g = live.state.lock().await;
        if live.running.load(Ordering::SeqCst) || g.fanout.has_subscribers() {
            return true;
        }
        // Under the task's lock: a subscriber joining after this finds it abandoned.
        live.abandoned.store(true, Ordering::SeqCst);
        self.live_remove_if(id, live);
        drop(g);
        false
    }

    /// Publishes the events of `live` that other replicas added to the replay log since the
    /// last one this process has; whether one of them ended the turn. Nothing while a turn of
    /// the task runs here.
    pub(super) async fn catch_up(&self, live: &Live) -> bool {
        if live.running.load(Ordering::SeqCst) {
            return false;
        }
        let mut g = live.state.lock().await;
        if live.running.load(Ordering::SeqCst) {
            return false;
        }
        let id = g.task.id.clone();
        let evs = match self.writer.replay().since(&id, g.seq).await {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!(error = %e, task_id = %id, "following: reading the replay log failed");
                return false;
            }
        };
        let Some(&(first, _)) = evs.first() else {
            return false;
        };
        // The task as stored now: the snapshot of a gap, and what GetTask and new subscribers
        // of this replica read.
        if let Ok(Some(rec)) = self.writer.store.get(&id).await {
            g.task = Arc::new(rec.task);
        }
        let mut ended = false;
        if first != g.seq + 1 {
            // The log no longer holds what follows our last event: the task as it stands.
            let last = evs.last().map_or(g.seq, |(n, _)| *n);
            metrics::counter!("a2a_agent_replay_gaps_total").increment(1);
            g.seq = last;
            let LiveState { fanout, task, .. } = &mut *g;
            fanout.publish(last, &StreamResponse::Task(Task::clone(task)), task);
            ended = task.status.state.is_terminal() || task.status.state.is_interrupted();
        } else {
            for (n, ev) in evs {
                let end = ends_stream(&ev);
                g.seq = n;
                let LiveState { fanout, task, .. } = &mut *g;
                fanout.publish(n, &ev, task);
                if end {
                    ended = true;
                    break;
                }
            }
        }
        live.tell(Some(g.task.status.state), false);
        ended
    }

    /// CancelTask of a task this replica does not run, SUBMITTED or WORKING in the store:
    /// asks the replica running it and waits for the task to end there (see the module doc).
    /// `None`: no other replica runs it (the caller cancels it here).
    pub(super) async fn cancel_remote(&self, id: &str) -> Option<Result<Task, A2aError>> {
        let peers = self.peers.get()?;
        let mut watch = peers.watch(id);
        match peers.request_cancel(id).await {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(Err(A2aError::internal(e.to_string()))),
        }
        let deadline = tokio::time::Instant::now() + REMOTE_CANCEL_WAIT;
        let mut last = None;
        loop {
            match self.writer.store.get(id).await {
                Ok(Some(rec)) => {
                    let s = rec.task.status.state;
                    if s == TaskState::Canceled {
                        return Some(Ok(rec.task));
                    }
                    if s.is_terminal() {
                        return Some(Err(not_cancelable(id, s)));
                    }
                    last = Some(rec.task);
                }
                Ok(None) => return Some(Err(A2aError::task_not_found(id))),
                Err(e) => tracing::debug!(error = %e, "cancel: reading the task failed"),
            }
            tokio::select! {
                _ = watch.changed() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        tracing::warn!(
            task_id = id,
            "cancel: the replica running the task did not cancel it within {} ms",
            REMOTE_CANCEL_WAIT.as_millis()
        );
        Some(last.ok_or_else(|| A2aError::task_not_found(id)))
    }

    /// Another replica asks this one to cancel task `id`: canceled as a local CancelTask does,
    /// if its turn runs here.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) async fn cancel_requested(&self, id: &str) {
        if let Some(live) = self.live_get(id)
            && live.running.load(Ordering::SeqCst)
        {
            let _ = self.cancel_live(id, &live).await;
            tracing::info!(task_id = id, "canceled at another replica's request");
        }
    }

    /// Cancels `live`: the CANCELED event, then the handler's token; the task as it ends.
    pub(super) async fn cancel_live(&self, id: &str, live: &Arc<Live>) -> Result<Task, A2aError> {
        self.writer
            .update(live, |t| Some(status_change(t, TaskState::Canceled, None)))
            .await;
        live.cancel.cancel();
        if !live.running.load(Ordering::SeqCst) {
            self.live_remove(id);
        }
        let g = live.state.lock().await;
        if g.task.status.state != TaskState::Canceled {
            return Err(not_cancelable(id, g.task.status.state));
        }
        Ok(Task::clone(&g.task))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wake_reaches_the_watches_of_its_task_and_a_dropped_watch_is_forgotten() {
        let wakes = Arc::new(Wakes::default());
        let mut a = wakes.watch("t1");
        let mut a2 = wakes.watch("t1");
        let mut b = wakes.watch("t2");
        wakes.wake("t1");
        assert!(a.rx.has_changed().unwrap() && a2.rx.has_changed().unwrap());
        assert!(!b.rx.has_changed().unwrap());
        assert!(a.changed().await && a2.changed().await);
        wakes.wake_all();
        assert!(b.changed().await);
        drop(a);
        assert_eq!(wakes.map.lock().unwrap()["t1"].1, 1, "one watch of t1 left");
        drop(a2);
        assert!(!wakes.map.lock().unwrap().contains_key("t1"));
        wakes.wake("t1");
        assert!(!b.rx.has_changed().unwrap());
    }
}
