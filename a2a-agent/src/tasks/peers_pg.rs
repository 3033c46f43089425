//! [`Peers`] on PostgreSQL: one listener per replica (`a2a_pg::Listener`) on the events,
//! cancels and push-config channels of [`crate::store::PostgresStore`], the wake-ups of the
//! tasks this replica follows, the cancel requests meant for it, new push configs (the push
//! sink reads them again), and the reaper that ends the tasks of replicas whose lease ended
//! and resends the push notifications they left due.
//!
//! While the listener is away (it says so) the announcements are replaced by a poll every
//! [`POLL`]: every followed task reads the log, and the cancel marks of this replica's tasks
//! are read; after it reconnects both happen once, for what was missed.

use std::sync::{Arc, Weak};
use std::time::Duration;

use a2a_pg::{Event, Listener};
use async_trait::async_trait;
use tokio::sync::broadcast::error::RecvError;

use super::TaskManager;
use super::peers::{Peers, Wakes, Watch};
use super::recovery::REPLICA_LOST;
use crate::store::{
    CANCELS_CHANNEL, EVENTS_CHANNEL, PUSH_CONFIGS_CHANNEL, PostgresStore, StoreError, renew_every,
};

/// How often the log and the cancel marks are read while the listener is away.
pub(crate) const POLL: Duration = Duration::from_millis(250);

/// How soon a lost listener connection is tried again.
const RECONNECT: Duration = Duration::from_millis(500);

/// The replicas of one database, seen from this one.
pub(crate) struct PgPeers {
    store: PostgresStore,
    wakes: Arc<Wakes>,
}

#[async_trait]
impl Peers for PgPeers {
    fn watch(&self, id: &str) -> Watch {
        self.wakes.watch(id)
    }

    async fn request_cancel(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.store.request_cancel(id).await?.is_some())
    }
}

/// Starts listening for `mgr` on `store`'s database, and the reaper (both stop when `mgr`
/// shuts down or is dropped); sets the peers on `mgr`.
pub(crate) fn start(store: PostgresStore, mgr: &Arc<TaskManager>) -> Result<(), StoreError> {
    let listener = Listener::start(
        store.pg_config().clone(),
        &[EVENTS_CHANNEL, CANCELS_CHANNEL, PUSH_CONFIGS_CHANNEL],
        RECONNECT,
    )
    .map_err(|e| StoreError(e.to_string()))?;
    let wakes = Arc::new(Wakes::default());
    mgr.set_peers(Arc::new(PgPeers {
        store: store.clone(),
        wakes: wakes.clone(),
    }));
    let weak = Arc::downgrade(mgr);
    let shutdown = mgr.shutdown.clone();
    tokio::spawn(listen(
        listener,
        store.clone(),
        wakes,
        weak.clone(),
        shutdown.clone(),
    ));
    tokio::spawn(reap(store, weak, shutdown));
    Ok(())
}

/// Hands the announcements out: events wake their followers, cancel requests reach the task.
async fn listen(
    listener: Listener,
    store: PostgresStore,
    wakes: Arc<Wakes>,
    mgr: Weak<TaskManager>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let mut rx = listener.subscribe();
    let mut poll = tokio::time::interval(POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let missed = tokio::select! {
            _ = shutdown.cancelled() => return,
            ev = rx.recv() => match ev {
                Ok(Event::Notification { channel, payload }) => {
                    if channel == EVENTS_CHANNEL {
                        match payload.split_once(' ') {
                            Some((_, id)) => wakes.wake(id),
                            None => wakes.wake_all(),
                        }
                    } else if channel == CANCELS_CHANNEL {
                        cancel(&mgr, payload);
                    } else if channel == PUSH_CONFIGS_CHANNEL {
                        push_config(&mgr, Some(payload));
                    }
                    false
                }
                Ok(Event::Connected) | Err(RecvError::Lagged(_)) => true,
                Err(RecvError::Closed) => return,
            },
            _ = poll.tick(), if !listener.is_connected() => true,
        };
        if missed {
            metrics::counter!("a2a_agent_replica_polls_total").increment(1);
            wakes.wake_all();
            push_config(&mgr, None);
            match store.cancel_requests().await {
                Ok(ids) => {
                    for id in ids {
                        cancel(&mgr, id);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "reading the cancel requests failed"),
            }
        }
    }
}

/// Cancels task `id` here, on its own task (the listener goes on).
fn cancel(mgr: &Weak<TaskManager>, id: String) {
    if let Some(m) = mgr.upgrade() {
        tokio::spawn(async move { m.cancel_requested(&id).await });
    }
}

/// Another replica stored a push config of task `id` (`None`: of tasks unknown, the
/// announcements may have been missed): the push sink reads them again, on its own task.
fn push_config(mgr: &Weak<TaskManager>, id: Option<String>) {
    let Some(sink) = mgr.upgrade().and_then(|m| m.writer.sink.get().cloned()) else {
        return;
    };
    tokio::spawn(async move {
        match id {
            Some(id) => sink.refresh(&id).await,
            None => sink.refresh_all().await,
        }
    });
}

/// Every third of the lease time: ends (or re-runs) the tasks of replicas whose lease ended.
async fn reap(
    store: PostgresStore,
    mgr: Weak<TaskManager>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(renew_every(store.lease())) => {}
        }
        let Some(m) = mgr.upgrade() else { return };
        let n = m.recover_with(REPLICA_LOST).await;
        if n > 0 {
            tracing::warn!(
                tasks = n,
                "ended the tasks of a replica whose lease expired"
            );
        }
        if let Some(sink) = m.writer.sink.get() {
            sink.take_over().await;
        }
    }
}
