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

impl TaskManager {
    /// End every task a previous process left unfinished; returns how many were ended.
    /// Called once by the server before it accepts requests.
    pub async fn recover(&self) -> usize {
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
                None => self.fail(&live, RESTARTED, None).await,
                Some(Ok(reply)) => self.complete(&live, reply).await,
                Some(Err(e)) => self.fail(&live, &e.message, None).await,
            }
            self.finish(&live, &id).await;
            tracing::info!(task_id = %id, "recovery: ended a task left unfinished by a previous run");
        }
        if n > 0 {
            metrics::counter!("a2a_agent_recovered_tasks_total").increment(n as u64);
        }
        n
    }
}
