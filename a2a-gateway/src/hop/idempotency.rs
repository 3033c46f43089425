//! Idempotent sends at the gateway, per workspace: a SendMessage or SendStreamingMessage that
//! repeats a `messageId` the same workspace already sent to the same agent within
//! `idempotency_window_secs` is answered from the first send's record and never reaches the
//! peer again: the same task (read from the peer with GetTask, as it stands now) or the same
//! direct message. The same `messageId` with a different message is InvalidParams. Concurrent
//! duplicates wait for the first (bounded by the peer timeout): the peer is called once.
//! Records are kept by the gateway's [`crate::store::backend::SendStore`] (`GatewayState::records`),
//! scoped by workspace and agent, so two workspaces' `messageId`s never meet.
//!
//! Which store does what (on the SQLite file, `SqliteRecords` picks one per call):
//! - [`crate::store::sends_memory::JournaledSends`], the embedded default of the serving process (`serve` holds
//!   the database's intent journal, so it is the only process deciding claims): a claim lives
//!   in memory, since it only matters while this process calls the peer; the completed record
//!   goes to the intent journal (one `write(2)`, safe against `kill -9`) and is committed to
//!   `gateway_sends` in the audit writer's next batch, like intents and task bindings. Nothing
//!   on the request path commits to SQLite (issue 11: the claim's and the completion's commits
//!   were about 7 % of a hop's instructions and its file syscalls); a repeat is answered from
//!   memory until the batch commits, then from SQLite (one indexed read). After a crash the
//!   journaled records are recovered on start; a claim in flight is abandoned at once (the
//!   process that would have completed it is gone; the first retry is a new send).
//! - [`crate::store::sends::SqliteSends`], every claim and completion a SQLite transaction: stores without
//!   a journal (in-memory stores, a process that does not serve).
//! - `PgRecords` on PostgreSQL: replicas claim in the shared database (a claim in one
//!   replica's memory is invisible to the others), one statement per claim; a retry on
//!   another replica finds the first send's claim or answer.
//!
//! A store that cannot be reached refuses the send with 503 `a2a_store_unavailable` before the
//! peer is called.
//!
//! A send held for approval claims its `messageId` too, and its record is completed at once
//! with the gateway task (`gw-approval-<id>`): a retry of it, on any replica, is answered as the
//! held send is ([`Check::Held`], `crate::hop::approval::repeat`), never held a second time.

use std::time::Duration;

use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};

use crate::governance::approval::{TASK_PREFIX, approval_of};
use crate::protocol::ops::Operation;
use crate::protocol::xlate;
use crate::store::backend::{Records, SendStore};
use crate::tasks::ownership::Owner;
use crate::{outbound, outbound::PeerCall};
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{store::sends::Claimed, store::sends::Outcome, store::sends::SendKey};

/// Seconds past the peer timeout after which a claim never completed is taken over.
const ABANDON_MARGIN_SECS: u64 = 10;
/// How often a duplicate looks whether the first send finished.
const POLL: Duration = Duration::from_millis(25);

/// What the idempotency step decided for a request.
pub(crate) enum Check {
    /// Not a send, or the window is 0.
    Off,
    /// The first send of its `messageId`: call the peer, then [`Guard::finish`].
    First(Guard),
    /// A repeat: the answer from the first send's record.
    Answer(Answer),
    /// A repeat of a send held for approval (the approval's id): answered as the held send is.
    Held(String),
}

/// What [`claim`] found for a send.
pub(crate) enum Claim {
    /// Not a send, the window is 0, or the message has no id.
    Off,
    /// The first send of its `messageId`.
    First(Guard),
    /// A repeat of a send held for approval (the approval's id).
    Held(String),
    /// A repeat of a send that reached the peer: what it became.
    Done(Outcome),
}

/// A claimed send; dropped without an outcome, the claim is released (a retry may try again).
pub(crate) struct Guard {
    records: Records,
    key: SendKey,
    done: bool,
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn secs(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}

/// The `messageId` and digest of a send's message (read in its 1.0 form, so that a retry in
/// the other version or binding is the same message).
fn message_digest(p10: &Value) -> Result<(String, String), Refusal> {
    let m: a2a_types::v1::Message = p10
        .get("message")
        .and_then(|m| serde::Deserialize::deserialize(m).ok())
        .ok_or_else(|| Refusal::invalid_params("params.message: not a message"))?;
    let bytes = serde_json::to_vec(&m).map_err(|e| Refusal::internal(&e.to_string()))?;
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &bytes);
    let hex = crate::ids::hex(d.as_ref());
    Ok((m.message_id, hex))
}

/// Whether the idempotency step looks at `op`: sends, with a window.
pub(crate) fn applies(st: &GatewayState, op: Operation) -> bool {
    st.config().idempotency_window_secs > 0
        && matches!(op, Operation::SendMessage | Operation::SendStreamingMessage)
}

/// The idempotency step of a send of `owner` (see the module docs); `p10` is the request in its
/// 1.0 form (`crate::hop::forms`), answers are given in `caller`'s version.
pub(crate) async fn check(
    st: &GatewayState,
    ctx: &PeerCall<'_>,
    owner: &Owner,
    op: Operation,
    caller: Version,
    p10: &Value,
) -> Result<Check, Refusal> {
    Ok(match claim(st, owner, op, p10).await? {
        Claim::Off => Check::Off,
        Claim::First(g) => Check::First(g),
        Claim::Held(id) => Check::Held(id),
        Claim::Done(outcome) => Check::Answer(answer(ctx, op, caller, outcome).await?),
    })
}

/// Claims the `messageId` of a send of `owner` (`p10`: the request in its 1.0 form), waiting
/// while a first send of it is in flight (bounded by the peer timeout).
pub(crate) async fn claim(
    st: &GatewayState,
    owner: &Owner,
    op: Operation,
    p10: &Value,
) -> Result<Claim, Refusal> {
    let window = st.config().idempotency_window_secs;
    if !applies(st, op) {
        return Ok(Claim::Off);
    }
    let (message_id, digest) = message_digest(p10)?;
    if message_id.is_empty() {
        return Ok(Claim::Off);
    }
    let records = st.records.clone();
    let key = SendKey {
        workspace_id: owner.workspace_id.clone(),
        agent_id: owner.agent_id.clone(),
        message_id,
    };
    let abandon_after = secs(st.config().peer_timeout_secs.max(1) + ABANDON_MARGIN_SECS);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(abandon_after as u64 + 1);
    loop {
        let t = now();
        let claimed = records
            .claim(&key, &digest, t, t - secs(window), t - abandon_after)
            .await
            .map_err(|e| Refusal::store("send records", &e))?;
        match claimed {
            Claimed::First => {
                return Ok(Claim::First(Guard {
                    records,
                    key,
                    done: false,
                }));
            }
            Claimed::Conflict => {
                return Err(Refusal::invalid_params(&format!(
                    "message.messageId: {:?} was already used for a different message",
                    key.message_id
                )));
            }
            Claimed::Done(outcome) => {
                if let Outcome::Task(t) = &outcome
                    && let Some(id) = approval_of(t)
                {
                    return Ok(Claim::Held(id.to_owned()));
                }
                return Ok(Claim::Done(outcome));
            }
            Claimed::Pending if tokio::time::Instant::now() < deadline => {
                tokio::select! {
                    _ = st.shutdown.cancelled() => return Err(crate::protocol::errors::shutting_down()),
                    _ = tokio::time::sleep(POLL) => {}
                }
            }
            Claimed::Pending => return Err(Refusal::peer_timeout(st.config().peer_timeout_secs)),
        }
    }
}

/// A repeat's answer in the caller's version: the task as the peer has it now, or the message.
pub(crate) async fn answer(
    ctx: &PeerCall<'_>,
    op: Operation,
    caller: Version,
    outcome: Outcome,
) -> Result<Answer, Refusal> {
    let result = match outcome {
        Outcome::Task(id) => {
            let p = outbound::peer_params(
                Operation::GetTask,
                Version::V1,
                ctx.chosen,
                &json!({ "id": id }),
                false,
            )?;
            let Answer::Unary(task) = ctx.call(Operation::GetTask, p).await? else {
                return Err(Refusal::upstream_invalid_response("expected a task"));
            };
            // A 0.3 send result (and stream event) is the Task itself; a 1.0 one wraps it.
            match caller {
                Version::V03 => task,
                Version::V1 => json!({ "task": task }),
            }
        }
        Outcome::Message(m) => xlate::result(
            Operation::SendMessage,
            Version::V1,
            caller,
            &json!({ "message": m }),
        )
        .map_err(outbound::map_answer_error)?,
    };
    Ok(match op {
        Operation::SendStreamingMessage => {
            Answer::Stream(Box::pin(futures::stream::once(async move { Ok(result) })))
        }
        _ => Answer::Unary(result),
    })
}

/// What a send's answer (or first stream event) in `caller`'s version says it became.
fn outcome_of(op: Operation, caller: Version, v: &Value) -> Option<Outcome> {
    // A 1.0 answer was checked by the hop already: read it as it is.
    let translated;
    let v10 = match caller {
        Version::V1 => v,
        Version::V03 => {
            translated = xlate::result(op, caller, Version::V1, v).ok()?;
            &translated
        }
    };
    if let Some(m) = v10.get("message") {
        return Some(Outcome::Message(m.clone()));
    }
    let id = v10
        .pointer("/task/id")
        .or_else(|| v10.pointer("/statusUpdate/taskId"))
        .or_else(|| v10.pointer("/artifactUpdate/taskId"))?;
    id.as_str().map(|s| Outcome::Task(s.to_owned()))
}

impl Guard {
    async fn complete(&mut self, outcome: &Outcome) {
        match self.records.complete(&self.key, outcome).await {
            Ok(()) => self.done = true,
            Err(e) => tracing::error!("send record not completed: {e}"),
        }
    }

    /// Records that the first send was held for approval `approval`: a retry is answered as
    /// the held send is (the record names the gateway task). Committed before the held caller
    /// waits: on PostgreSQL a completion inside a request is otherwise awaited only with its
    /// answer, and a replica killed while its caller waits would leave the claim open, so a
    /// retry on another replica would wait on it. Run on a task of its own, outside the
    /// request's answered layer, so it is committed (and awaited) now.
    pub(crate) async fn held(mut self, approval: &str) {
        let outcome = Outcome::Task(format!("{TASK_PREFIX}{approval}"));
        let (records, key) = (self.records.clone(), self.key.clone());
        match tokio::spawn(async move { records.complete(&key, &outcome).await }).await {
            Ok(Ok(())) => self.done = true,
            Ok(Err(e)) => tracing::error!("send record not completed: {e}"),
            Err(e) => tracing::error!("send record not completed: {e}"),
        }
    }

    /// Records what the first send became from its `answer` (for a stream: its first event
    /// naming a task or message) and passes the answer on.
    pub(crate) async fn finish(mut self, op: Operation, caller: Version, answer: Answer) -> Answer {
        match answer {
            Answer::Unary(v) => {
                if let Some(o) = outcome_of(op, caller, &v) {
                    self.complete(&o).await;
                }
                Answer::Unary(v)
            }
            Answer::Passed(p) => {
                // What `outcome_of` reads from the same answer as a `Value`.
                let o = match p.message() {
                    Some(m) => Some(Outcome::Message(m)),
                    None => p.task_id().map(|t| Outcome::Task(t.to_owned())),
                };
                if let Some(o) = o {
                    self.complete(&o).await;
                }
                Answer::Passed(p)
            }
            Answer::Stream(mut events) => {
                let mut guard = Some(self);
                Answer::Stream(Box::pin(async_stream::stream! {
                    while let Some(item) = events.next().await {
                        if let (Some(g), Ok(ev)) = (guard.as_mut(), &item)
                            && let Some(o) = outcome_of(op, caller, ev)
                        {
                            g.complete(&o).await;
                            guard = None;
                        }
                        yield item;
                    }
                }))
            }
        }
    }
}

impl Drop for Guard {
    /// Releases a claim never completed: at once where the store answers without waiting
    /// (SQLite), else on a task of its own.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let (records, key) = (self.records.clone(), self.key.clone());
        let mut release = Box::pin(async move {
            if let Err(e) = records.release(&key).await {
                tracing::error!("send record not released: {e}");
            }
        });
        if (&mut release).now_or_never().is_none()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(release);
        }
    }
}
