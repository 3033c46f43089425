//! Idempotent sends: the retry contract for clients.
//!
//! A SendMessage (or SendStreamingMessage) whose `messageId` a caller already used within the
//! window (`idempotency_window`) does not run the handler again: it gets the same task (a
//! blocking send waits for it as the first one did; a stream gets the task, live if it still
//! runs) or the same direct message. The same `messageId` with a different message (parts,
//! metadata, task, context...) is refused with InvalidParams. Records are per caller (owner
//! key), so two callers never see each other's sends; they are kept by a [`SendLog`] (in
//! memory, or in the SQLite file with `sqlite_path` so that a retry after a restart is still
//! recognised). Within one process, concurrent sends of one `messageId` are serialised: the
//! first runs, the others wait for its task and answer from it. [`TaskManager::send`] is the
//! entry point.

use super::TaskManager;
use super::fanout::Events;
use super::send::{SendAnswer, SendExtras, SendInput, SendMode, SendOutcome, Start, Subscription};
#[cfg(feature = "sqlite")]
pub use super::sends::SqliteSendLog;
use super::sends::{Claim, Idem};
pub use super::sends::{MemorySendLog, SendLog, SendRecord, SendTarget, digest, now_ms};
#[cfg(feature = "postgres")]
pub use super::sends_pg::PgSendLog;
use crate::caller::CallerProfile;
use crate::error::A2aError;
use std::sync::Arc;

fn reused_message_id(id: &str) -> A2aError {
    A2aError::invalid_params(format!(
        "messageId {id:?} was already used for a different message; \
         a retry must repeat the message exactly, a new message needs a new messageId"
    ))
    .with_meta("field", "message.messageId")
}

impl TaskManager {
    /// Remember accepted sends in `log` instead of memory (e.g. a [`SqliteSendLog`], so that a
    /// retry after a restart is recognised). Only the first call takes effect; call it before
    /// serving.
    pub fn set_send_log(&self, log: Arc<dyn SendLog>) {
        let _ = self.sends_set.set(log);
    }

    fn sends(&self) -> &Arc<dyn SendLog> {
        self.sends_set.get().unwrap_or(&self.sends)
    }

    /// Records that the send `i` became `target`.
    pub(crate) async fn keep_send(&self, i: &Idem, target: SendTarget) {
        let rec = SendRecord {
            digest: i.digest.clone(),
            target,
            at_ms: now_ms(),
        };
        if let Err(e) = self.sends().put(&i.owner, &i.message_id, rec).await {
            tracing::warn!(error = %e, "keeping an accepted send failed: a retry may run again");
        }
    }

    /// SendMessage / SendStreamingMessage. A `messageId` the caller already used within the
    /// idempotency window answers from that send without running the handler again.
    pub async fn send(&self, input: SendInput) -> Result<SendOutcome, A2aError> {
        self.send_with(input, SendExtras::default())
            .await
            .map(SendOutcome::from)
    }

    /// [`TaskManager::send`], with the handler's raw message and headers given in the lazy forms
    /// of `extras` where set (then `input.raw_message` and `input.headers` are not used).
    pub(crate) async fn send_with(
        &self,
        input: SendInput,
        extras: SendExtras,
    ) -> Result<SendAnswer, A2aError> {
        let mut extras = Some(extras);
        let window = self.limits().idempotency_window;
        if window.is_zero() || input.request.message.message_id.is_empty() {
            // Boxed: the send's future is large, and every caller up to the HTTP handler would
            // otherwise hold (and move) a copy of its whole size.
            return Box::pin(self.send_once(input, extras.take().unwrap_or_default(), None)).await;
        }
        let idem = Idem {
            owner: input.caller.owner_key(),
            message_id: input.request.message.message_id.clone(),
            digest: digest(&input.request.message),
        };
        let since = now_ms() - i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
        let history_length = input
            .request
            .configuration
            .as_ref()
            .and_then(|c| c.history_length);
        loop {
            let rec = self
                .sends()
                .get(&idem.owner, &idem.message_id, since)
                .await
                .map_err(|e| A2aError::internal(e.to_string()))?;
            if let Some(rec) = rec {
                if rec.digest != idem.digest {
                    return Err(reused_message_id(&idem.message_id));
                }
                metrics::counter!("a2a_agent_repeated_sends_total").increment(1);
                return self
                    .again(rec.target, input.mode, history_length, &input.caller)
                    .await;
            }
            match self
                .claims
                .claim(&idem.owner, &idem.message_id, &idem.digest)
            {
                Claim::Conflict => return Err(reused_message_id(&idem.message_id)),
                Claim::Wait(mut rx) => {
                    let _ = rx.wait_for(|done| *done).await;
                }
                Claim::First(tx) => {
                    let r = Box::pin(self.send_once(
                        input,
                        extras.take().unwrap_or_default(),
                        Some(&idem),
                    ))
                    .await;
                    if let Ok(SendAnswer::Message(m)) = &r {
                        self.keep_send(&idem, SendTarget::Message(Box::new(m.clone())))
                            .await;
                    }
                    self.claims.release(&idem.owner, &idem.message_id, tx);
                    return r;
                }
            }
        }
    }

    /// The answer to a repeated send, from what the first one became.
    async fn again(
        &self,
        target: SendTarget,
        mode: SendMode,
        history_length: Option<i32>,
        caller: &CallerProfile,
    ) -> Result<SendAnswer, A2aError> {
        let id = match target {
            SendTarget::Message(m) => return Ok(SendAnswer::Message(*m)),
            SendTarget::Task(id) => id,
        };
        match mode {
            SendMode::ReturnImmediately => {}
            SendMode::Blocking => self.wait_turn(&id).await,
            SendMode::Stream => {
                if self.is_running(&id) {
                    return Ok(SendAnswer::Stream(Box::new(
                        self.subscribe(&id, caller).await?,
                    )));
                }
                let task = self.get(&id, history_length, caller).await?;
                return Ok(SendAnswer::Stream(Box::new(Subscription {
                    task,
                    seq: self.last_seq(&id).await,
                    start: Start::Snapshot,
                    events: Events::ended(),
                })));
            }
        }
        Ok(SendAnswer::Task(Arc::new(
            self.get(&id, history_length, caller).await?,
        )))
    }
}
