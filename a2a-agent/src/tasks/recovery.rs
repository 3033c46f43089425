//! Crash recovery: on start, tasks a previous process left SUBMITTED or WORKING (a persistent
//! store after a crash or `kill -9`) are ended, so none stays unfinished forever.
//!
//! Each such task is offered to [`crate::Handler::resume`]; by default the handler cannot
//! resume it and the task fails with [`RESTARTED`]. Either way the final status goes through
//! the normal event path, so push webhooks registered for the task receive it.

use super::{HANDLER_PANICKED, TaskManager};
use crate::error::ErrorKind;
use crate::handler::HandlerError;

/// The status message of a task failed because the agent restarted while it ran.
pub const RESTARTED: &str = "the agent restarted before this task finished";

/// The status message of a task failed by another replica because the replica running it
/// stopped renewing its lease (it died, or lost the database) before the task finished.
pub const REPLICA_LOST: &str =
    "the agent replica running this task stopped (its lease expired) before the task finished";

impl TaskManager {
    /// End every task a previous process left unfinished; returns how many were ended.
    /// Called once by the server before it accepts requests.
    pub async fn recover(&self) -> usize {
        self.recover_with(RESTARTED).await
    }

    /// [`TaskManager::recover`], a task the handler does not resume failed with `reason`
    /// (replicas: also every third of the lease time, for the tasks of replicas whose lease
    /// ended, with [`REPLICA_LOST`]).
    pub(crate) async fn recover_with(&self, reason: &str) -> usize {
        let recs = match self.store().unfinished().await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "recovery: reading unfinished tasks failed");
                return 0;
            }
        };
        let n = recs.len();
        for rec in recs {
            let id = rec.task.id.clone();
            let seq = self.last_seq(&id).await;
            let live = self.register(rec.task.clone(), rec.owner, seq);
            // Followed here (a subscriber of this replica): numbered after its last event.
            self.catch_up(&live).await;
            if let Some(s) = self.writer.sink.get() {
                s.refresh(&id).await;
            }
            let resumed = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
                self.handler().resume(&rec.task),
            ))
            .await
            .unwrap_or_else(|_| {
                tracing::error!(task_id = %id, "the agent's handler panicked resuming a task");
                Some(Err(HandlerError::a2a(
                    ErrorKind::Internal,
                    HANDLER_PANICKED,
                )))
            });
            match resumed {
                None => self.fail(&live, reason, None).await,
                Some(Ok(reply)) => self.complete(&live, reply).await,
                Some(Err(e)) => self.fail(&live, &e.message, None).await,
            }
            self.finish(&live, &id).await;
            tracing::info!(task_id = %id, reason, "recovery: ended a task left unfinished by a replica that is gone");
        }
        if n > 0 {
            metrics::counter!("a2a_agent_recovered_tasks_total").increment(n as u64);
        }
        n
    }
}
