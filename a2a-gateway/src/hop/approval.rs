//! The approval flow on the hop: holding a SendMessage ([`hold`]) and answering the caller's
//! task operations on a gateway task ([`follow`]); a person's decision is `super::release`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::hop::call::Call;
use crate::protocol::ops::Operation;
use crate::store::backend::{HoldStore, POLL};
use crate::tasks::ownership;
use crate::{
    governance::approval::Approval, governance::approval::ApprovalSummary,
    governance::approval::TASK_PREFIX, governance::approval::approval_of,
    governance::approval::denied, governance::approval::gateway_task,
    governance::approval::refusal_of,
};
use crate::{
    governance::step::ApprovalEvidence, governance::step::Evidence, governance::step::Hop,
};
use crate::{ids::random_hex, protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

pub(super) fn internal(e: impl std::fmt::Display) -> Refusal {
    Refusal::internal(&format!("approval store: {e}"))
}

/// A store error as the caller's refusal: 503 `a2a_store_unavailable` while the database
/// cannot be reached (retry), else an internal error.
pub(super) fn store_refusal(e: crate::store::StoreError) -> Refusal {
    if e.is_unavailable() {
        Refusal::store_unavailable()
    } else {
        internal(e)
    }
}

/// Whether a SendMessage waits for its answer (1.0: not `returnImmediately`; 0.3: `blocking`
/// true).
fn blocking(params: &Value, v: Version) -> bool {
    let c = params.get("configuration");
    match v {
        Version::V1 => !c
            .and_then(|c| c.get("returnImmediately"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        Version::V03 => c
            .and_then(|c| c.get("blocking"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

/// approval: the policy asked for it; the SendMessage is stored (redacted) and answered with the
/// gateway task; a blocking send waits up to `approval_wait_secs` for the decision first. A
/// SendStreamingMessage is stored the same way and answered with a stream: the gateway task,
/// then one status update when a person decides (WORKING once approved: SubscribeToTask on the
/// gateway task then goes on as the peer's task; REJECTED when denied or expired).
///
/// `claim` is the send's idempotency claim (`crate::hop::idempotency`): completed with the
/// gateway task once the approval is stored, so a retry of the same send is answered by
/// [`repeat`] instead of being held again.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn hold(
    st: &GatewayState,
    call: &mut Call,
    hop: &Hop,
    op: Operation,
    params: &Value,
    p10: &Value,
    ev: &mut Evidence,
    claim: Option<crate::hop::idempotency::Guard>,
) -> Result<Answer, Refusal> {
    let caller = hop.version;
    let facts = crate::governance::policy::facts(hop, p10, ev);
    let id = random_hex(12);
    let context_id = p10
        .get("message")
        .and_then(|m| m.get("contextId"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{TASK_PREFIX}ctx-{id}"));
    let rule = ev
        .decisions
        .iter()
        .rev()
        .find(|d| d.step == "policy")
        .and_then(|d| d.rule.clone());
    let a = ApprovalSummary {
        id: id.clone(),
        workspace_id: hop.workspace_id.clone(),
        agent_id: hop.target.clone(),
        caller_version: caller.as_str().to_owned(),
        preview: crate::governance::approval_view::preview(p10, &facts),
        context_id,
        state: "pending".into(),
        rule,
        approver: None,
        reason: None,
        peer_task_id: None,
        chain: {
            let mut c = hop.chain.clone();
            c.push(crate::governance::loops::member(
                &hop.workspace_id,
                &hop.target,
            ));
            c
        },
        extensions: crate::governance::extensions::HopExtensions::current(),
        created_at: now(),
        expires_at: now()
            .saturating_add(i64::try_from(st.config().approval_ttl_secs).unwrap_or(i64::MAX)),
        key_id: Some(hop.key_id.clone()),
        refusal: None,
    };
    let held = Approval {
        summary: a,
        params: params.to_string(),
    };
    st.holds
        .create_approval(&held)
        .await
        .map_err(store_refusal)?;
    if let Some(g) = claim {
        g.held(&id).await;
    }
    let a = held.summary;
    ev.approval = Some(ApprovalEvidence {
        id: id.clone(),
        approver: String::new(),
        state: "pending".into(),
    });
    call.audit.governance = serde_json::to_value(&*ev).ok();
    call.audit.task_id = Some(format!("{TASK_PREFIX}{id}"));
    held_answer(st, op, caller, params, a).await
}

/// A retry of a send held as approval `id` (the same `messageId` and message, on any replica:
/// `crate::hop::idempotency`): answered as the held send is ([`held_answer`]), from the
/// approval as it stands now, so one approval and at most one peer call exist per send.
pub(crate) async fn repeat(
    st: &GatewayState,
    workspace: &str,
    agent: &str,
    id: &str,
    op: Operation,
    caller: Version,
    params: &Value,
) -> Result<Answer, Refusal> {
    let store = &st.holds;
    let mut a = match store
        .approval_summary(workspace, id)
        .await
        .map_err(store_refusal)?
    {
        Some(a) if a.agent_id == agent => a,
        _ => return Err(ownership::not_found()),
    };
    if a.is_expired(now()) {
        store
            .decide(workspace, id, "expired", None, None)
            .await
            .map_err(store_refusal)?;
        a.state = "expired".into();
    }
    held_answer(st, op, caller, params, a).await
}

/// The answer of a held send (`params` in the caller's form) from its approval `a`: a stream
/// follows it to its outcome; a blocking send still undecided waits up to
/// `approval_wait_secs` for it; then the gateway task as it stands (or the refusal of a
/// release that was not sent).
async fn held_answer(
    st: &GatewayState,
    op: Operation,
    caller: Version,
    params: &Value,
    mut a: ApprovalSummary,
) -> Result<Answer, Refusal> {
    if op == Operation::SendStreamingMessage {
        return Ok(outcome_stream(st, caller, a, held_task(params)));
    }
    if undecided(&a) && blocking(params, caller) && st.config().approval_wait_secs > 0 {
        let until =
            tokio::time::Instant::now() + Duration::from_secs(st.config().approval_wait_secs);
        if let Some(c) = wait_outcome(st, &a.workspace_id, &a.id, until).await? {
            a = c;
        }
    }
    if a.state == "failed" {
        return Err(refusal_of(&a));
    }
    task_answer(Operation::SendMessage, caller, &a)
}

/// Waits until approval `id` has its outcome (see [`undecided`]) or `until` (or shutdown):
/// `None` when it is still undecided (or gone). The decision is awaited through
/// [`HoldStore::decision`], which any replica's decision wakes; an approved one whose held
/// request is on its way to the peer is re-read every [`RELEASING`] until it has the peer's
/// task or failed.
async fn wait_outcome(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    until: tokio::time::Instant,
) -> Result<Option<ApprovalSummary>, Refusal> {
    loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        let cur = tokio::select! {
            _ = st.shutdown.cancelled() => return Ok(None),
            c = st.holds.decision(workspace, id, left) => c.map_err(store_refusal)?,
        };
        match cur {
            Some(c) if c.state == "pending" => return Ok(None),
            Some(c) if undecided(&c) => {
                tokio::select! {
                    _ = st.shutdown.cancelled() => return Ok(None),
                    _ = tokio::time::sleep(RELEASING) => {}
                }
            }
            Some(c) => return Ok(Some(c)),
            None => return Ok(None),
        }
    }
}

/// How often an approved hop's outcome is re-read while its held request is being sent (its
/// decision is heard at once; its peer task is written by the releasing replica right after).
const RELEASING: Duration = Duration::from_millis(100);

/// The stream that follows a held hop to its outcome (a held SendStreamingMessage, or
/// SubscribeToTask on a pending gateway task): the gateway task, then, once a person decides or
/// the hold expires, one status update (WORKING with the peer's task, or REJECTED with the
/// approver's reason), then the end. A release the gateway refused (`failed`), or a session
/// kill of the held request's context or task, ends it with that refusal.
///
/// It waits on the approval's decision ([`HoldStore::decision`], woken by any replica's), then
/// reads its facts, never its request; `held_task` is the task the held request's message
/// names.
fn outcome_stream(
    st: &GatewayState,
    caller: Version,
    a: ApprovalSummary,
    held_task: Option<Value>,
) -> Answer {
    let store = st.holds.clone();
    let shutdown = st.shutdown.clone();
    let open = st.governance.streams.open(
        &a.workspace_id,
        &a.agent_id,
        &json!({"message": {"contextId": a.context_id, "taskId": held_task}}),
    );
    let s = async_stream::stream! {
        let first = crate::protocol::xlate::event(json!({"task": gateway_task(&a)}), Version::V1, caller);
        match first {
            Ok(ev) => yield Ok(ev),
            Err(e) => { yield Err(crate::outbound::map_answer_error(e)); return; }
        }
        let mut releasing = false;
        loop {
            // The decision wakes the wait (whichever replica makes it); an approved one is
            // re-read until the releasing replica wrote its peer task; the hold's expiry is
            // checked at least every second.
            let read = async {
                if releasing {
                    tokio::time::sleep(RELEASING).await;
                    store.approval_summary(&a.workspace_id, &a.id).await
                } else {
                    store.decision(&a.workspace_id, &a.id, POLL).await
                }
            };
            let read = tokio::select! {
                _ = shutdown.cancelled() => { yield Err(crate::protocol::errors::shutting_down()); break; }
                _ = open.token.cancelled() => { yield Err(open.refusal()); break; }
                r = read => r,
            };
            let mut cur = match read {
                Ok(Some(c)) => c,
                Ok(None) => { yield Err(ownership::not_found()); break; }
                // The database away: wait and read again (the stream stays open).
                Err(e) if e.is_unavailable() => {
                    tokio::select! {
                        _ = shutdown.cancelled() => { yield Err(crate::protocol::errors::shutting_down()); break; }
                        _ = open.token.cancelled() => { yield Err(open.refusal()); break; }
                        _ = tokio::time::sleep(POLL) => {}
                    }
                    continue;
                }
                Err(e) => { yield Err(internal(e)); break; }
            };
            if cur.is_expired(now()) {
                let _ = store.decide(&a.workspace_id, &a.id, "expired", None, None).await;
                cur.state = "expired".into();
            }
            if undecided(&cur) {
                releasing = cur.state != "pending";
                continue;
            }
            if cur.state == "failed" {
                yield Err(refusal_of(&cur));
                break;
            }
            let t = gateway_task(&cur);
            let update = json!({"statusUpdate": {"taskId": t["id"], "contextId": t["contextId"],
                "status": t["status"], "metadata": t["metadata"]}});
            match crate::protocol::xlate::event(update, Version::V1, caller) {
                Ok(ev) => yield Ok(ev),
                Err(e) => yield Err(crate::outbound::map_answer_error(e)),
            }
            break;
        }
    };
    Answer::Stream(Box::pin(s))
}

/// The task a (held) request's message names.
fn held_task(params: &Value) -> Option<Value> {
    params.get("message")?.get("taskId").cloned()
}

/// Still waiting: pending, or approved while the held request is on its way to the peer.
pub(super) fn undecided(a: &ApprovalSummary) -> bool {
    a.state == "pending" || (a.state == "approved" && a.peer_task_id.is_none())
}

/// The refusal for acting on a gateway task that can no longer go anywhere: a follow-up send
/// into it, or SubscribeToTask once it is denied (with the approver's reason), withdrawn,
/// expired or failed (the refusal of its release) (GetTask still answers the task itself).
fn closed(a: &ApprovalSummary) -> Refusal {
    match a.state.as_str() {
        "expired" => Refusal::approval_expired(&a.id),
        "pending" | "approved" => Refusal::approval_pending(&a.id),
        "failed" => refusal_of(a),
        _ => denied(a),
    }
}

/// What [`follow`] decided for a task operation on a gateway task.
pub(crate) enum Follow {
    /// Not a gateway task: the pipeline goes on.
    No,
    /// Answered by the gateway.
    Answer(Answer),
    /// Approved: the pipeline goes on with these params (the peer's task id).
    Peer(Value),
}

/// Task operations and follow-up sends on a gateway task (see `docs/gateway/governance.md`, "Approval").
///
/// - GetTask answers the gateway task while it is held or refused (REJECTED when denied or
///   expired), CancelTask withdraws a pending one;
/// - SubscribeToTask on a pending one follows it to its outcome ([`outcome_stream`]); on a
///   denied, withdrawn or expired one it is refused (`a2a_approval_denied` /
///   `a2a_approval_expired`): the task is final;
/// - a send whose `message.taskId` is the gateway task is refused while it is held
///   (`a2a_approval_pending`) and once refused (`a2a_approval_denied` / `_expired`);
/// - once approved, every one of them is made on the peer's task.
///
/// Another workspace's (or agent's) approval answers exactly like a task that does not exist.
pub(crate) async fn follow(
    st: &GatewayState,
    workspace: &str,
    agent: &str,
    op: Operation,
    caller: Version,
    params: &Value,
) -> Result<Follow, Refusal> {
    let send = matches!(op, Operation::SendMessage | Operation::SendStreamingMessage);
    let named = if send {
        params.get("message").and_then(|m| m.get("taskId"))
    } else if matches!(
        op,
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask
    ) {
        params.get("id")
    } else {
        None
    };
    let Some(id) = named.and_then(Value::as_str).and_then(approval_of) else {
        return Ok(Follow::No);
    };
    let store = &st.holds;
    let mut a = match store
        .approval_summary(workspace, id)
        .await
        .map_err(store_refusal)?
    {
        Some(a) if a.agent_id == agent => a,
        _ => return Err(ownership::not_found()),
    };
    if a.is_expired(now()) {
        store
            .decide(workspace, id, "expired", None, None)
            .await
            .map_err(store_refusal)?;
        a.state = "expired".into();
    }
    match (a.state.as_str(), op) {
        ("approved", _) if a.peer_task_id.is_some() => Ok(Follow::Peer(on_peer_task(params, &a))),
        _ if send => Err(closed(&a)),
        ("pending", Operation::CancelTask) => {
            store
                .decide(
                    workspace,
                    id,
                    "withdrawn",
                    None,
                    Some("canceled by the caller"),
                )
                .await
                .map_err(store_refusal)?;
            a.state = "withdrawn".into();
            Ok(Follow::Answer(task_answer(op, caller, &a)?))
        }
        (_, Operation::CancelTask) => Err(Refusal::task_not_cancelable()),
        (_, Operation::SubscribeToTask) if undecided(&a) => {
            // The held request is read once here, for the task it names (a session kill of
            // that task ends the stream).
            let named = match store.approval(workspace, id).await.map_err(store_refusal)? {
                Some(held) => serde_json::from_str::<Value>(&held.params)
                    .ok()
                    .and_then(|p| held_task(&p)),
                None => return Err(ownership::not_found()),
            };
            Ok(Follow::Answer(outcome_stream(st, caller, a, named)))
        }
        (_, Operation::SubscribeToTask) => Err(closed(&a)),
        _ => Ok(Follow::Answer(task_answer(op, caller, &a)?)),
    }
}

/// `params` made on the peer's task of an approved hop: the task id (GetTask, CancelTask,
/// SubscribeToTask) or the message's task id (a follow-up send; a context id the gateway made
/// up for the hold is dropped, the peer's task has its own).
fn on_peer_task(params: &Value, a: &ApprovalSummary) -> Value {
    let mut p = params.clone();
    let peer = json!(a.peer_task_id);
    if let Some(m) = p.get_mut("message").and_then(Value::as_object_mut) {
        m.insert("taskId".into(), peer);
        if m.get("contextId")
            .and_then(Value::as_str)
            .is_some_and(|c| c == a.context_id && c.starts_with(TASK_PREFIX))
        {
            m.remove("contextId");
        }
    } else if let Some(o) = p.as_object_mut() {
        o.insert("id".into(), peer);
    }
    p
}

/// A gateway task answer for `op` (SendMessage: `{task}`; GetTask, CancelTask: the task) in the
/// caller's version.
pub(crate) fn task_answer(
    op: Operation,
    caller: Version,
    a: &ApprovalSummary,
) -> Result<crate::protocol::answer::Answer, Refusal> {
    let task = gateway_task(a);
    let (op, result) = match op {
        Operation::SendMessage => (op, json!({"task": task})),
        _ => (Operation::GetTask, task),
    };
    crate::protocol::xlate::result(op, Version::V1, caller, &result)
        .map(crate::protocol::answer::Answer::Unary)
        .map_err(crate::outbound::map_answer_error)
}
