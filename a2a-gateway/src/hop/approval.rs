//! The approval flow on the hop: holding a SendMessage ([`hold`]), answering the caller's task
//! operations on a gateway task ([`follow`]), and a person's decision ([`release`], [`deny`]).

use std::time::Duration;

use serde_json::{Value, json};

use crate::hop::call::Call;
use crate::protocol::ops::Operation;
use crate::{
    governance::approval::Approval, governance::approval::TASK_PREFIX,
    governance::approval::approval_of, governance::approval::gateway_task,
    governance::approval::preview,
};
use crate::{
    governance::step::ApprovalEvidence, governance::step::Evidence, governance::step::Hop,
};
use crate::{ids::random_hex, protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{tasks::ownership, tasks::ownership::Owner};

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn internal(e: impl std::fmt::Display) -> Refusal {
    Refusal::internal(&format!("approval store: {e}"))
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
pub(crate) async fn hold(
    st: &GatewayState,
    call: &mut Call,
    hop: &Hop,
    op: Operation,
    params: &Value,
    p10: &Value,
    ev: &mut Evidence,
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
    let a = Approval {
        id: id.clone(),
        workspace_id: hop.workspace_id.clone(),
        agent_id: hop.target.clone(),
        caller_version: caller.as_str().to_owned(),
        params: params.to_string(),
        preview: preview(p10, &facts),
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
            .saturating_add(i64::try_from(st.config.approval_ttl_secs).unwrap_or(i64::MAX)),
    };
    st.governance.approvals.create(&a).map_err(internal)?;
    ev.approval = Some(ApprovalEvidence {
        id: id.clone(),
        approver: String::new(),
        state: "pending".into(),
    });
    call.audit.governance = serde_json::to_value(&*ev).ok();
    call.audit.task_id = Some(format!("{TASK_PREFIX}{id}"));
    if op == Operation::SendStreamingMessage {
        return Ok(outcome_stream(st, caller, a));
    }
    if blocking(params, caller) && st.config.approval_wait_secs > 0 {
        let until = tokio::time::Instant::now() + Duration::from_secs(st.config.approval_wait_secs);
        while tokio::time::Instant::now() < until {
            tokio::select! {
                _ = st.shutdown.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
            let cur = st
                .governance
                .approvals
                .get(&hop.workspace_id, &id)
                .map_err(internal)?;
            match cur {
                Some(c) if undecided(&c) => continue,
                Some(c) => return task_answer(Operation::SendMessage, caller, &c),
                None => break,
            }
        }
    }
    task_answer(Operation::SendMessage, caller, &a)
}

/// The stream that follows a held hop to its outcome (a held SendStreamingMessage, or
/// SubscribeToTask on a pending gateway task): the gateway task, then, once a person decides or
/// the hold expires, one status update (WORKING with the peer's task, or REJECTED), then the end.
fn outcome_stream(st: &GatewayState, caller: Version, a: Approval) -> Answer {
    let store = st.governance.approvals.clone();
    let shutdown = st.shutdown.clone();
    let s = async_stream::stream! {
        let first = crate::protocol::xlate::event(json!({"task": gateway_task(&a)}), Version::V1, caller);
        match first {
            Ok(ev) => yield Ok(ev),
            Err(e) => { yield Err(crate::outbound::map_answer_error(e)); return; }
        }
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => { yield Err(crate::protocol::errors::shutting_down()); break; }
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
            let mut cur = match store.get(&a.workspace_id, &a.id) {
                Ok(Some(c)) => c,
                Ok(None) => { yield Err(ownership::not_found()); break; }
                Err(e) => { yield Err(internal(e)); break; }
            };
            if cur.is_expired(now()) {
                let _ = store.decide(&a.workspace_id, &a.id, "expired", None, None);
                cur.state = "expired".into();
            }
            if undecided(&cur) {
                continue;
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

/// Still waiting: pending, or approved while the held request is on its way to the peer.
fn undecided(a: &Approval) -> bool {
    a.state == "pending" || (a.state == "approved" && a.peer_task_id.is_none())
}

/// The refusal for acting on a gateway task that can no longer go anywhere: a follow-up send
/// into it, or SubscribeToTask once it is denied, withdrawn or expired (GetTask still answers
/// the task itself).
fn closed(a: &Approval) -> Refusal {
    match a.state.as_str() {
        "expired" => Refusal::approval_expired(&a.id),
        "pending" | "approved" => Refusal::approval_pending(&a.id),
        _ => Refusal::approval_denied(&a.id),
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

/// Task operations and follow-up sends on a gateway task (see `docs/gateway.md`, "Approval").
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
pub(crate) fn follow(
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
    let store = &st.governance.approvals;
    let mut a = match store.get(workspace, id).map_err(internal)? {
        Some(a) if a.agent_id == agent => a,
        _ => return Err(ownership::not_found()),
    };
    if a.is_expired(now()) {
        store
            .decide(workspace, id, "expired", None, None)
            .map_err(internal)?;
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
                .map_err(internal)?;
            a.state = "withdrawn".into();
            Ok(Follow::Answer(task_answer(op, caller, &a)?))
        }
        (_, Operation::CancelTask) => Err(Refusal::task_not_cancelable()),
        (_, Operation::SubscribeToTask) if undecided(&a) => {
            Ok(Follow::Answer(outcome_stream(st, caller, a)))
        }
        (_, Operation::SubscribeToTask) => Err(closed(&a)),
        _ => Ok(Follow::Answer(task_answer(op, caller, &a)?)),
    }
}

/// `params` made on the peer's task of an approved hop: the task id (GetTask, CancelTask,
/// SubscribeToTask) or the message's task id (a follow-up send; a context id the gateway made
/// up for the hold is dropped, the peer's task has its own).
fn on_peer_task(params: &Value, a: &Approval) -> Value {
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

fn audit(
    st: &GatewayState,
    a: &Approval,
    decision: &str,
    task: Option<String>,
    err: Option<&Refusal>,
) {
    let rec = crate::store::AuditRecord {
        trace_id: random_hex(16),
        workspace_id: Some(a.workspace_id.clone()),
        target: Some(a.agent_id.clone()),
        operation: Some("message/send".into()),
        client_method: Some(format!("approval:{decision}")),
        client_version: Some(a.caller_version.clone()),
        decision: if err.is_some() {
            "refused".into()
        } else {
            "allowed".into()
        },
        status: err.map(|r| i64::from(r.status)).unwrap_or(200),
        error_code: err.map(|r| r.code.clone()),
        task_id: task,
        governance: Some(json!({
            "decisions": [{"step": "approval", "decision": decision, "rule": a.rule}],
            "approval": {"id": a.id, "approver": a.approver, "state": decision},
        })),
        ..Default::default()
    };
    if let Err(e) = st.store.append_audit_queued(&rec, None) {
        tracing::error!("approval audit write failed: {e}");
    }
}

/// The one rule for an operator's decision (`to`: approved or denied): only a pending approval
/// whose hold has not expired can be decided. An expired one is marked expired (its gateway task
/// shows REJECTED) and, like any decided one, refused with 409 naming its state; an unknown id
/// is 404. Two operators deciding at once: the store's conditional update lets one win.
fn settle(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    to: &str,
    approver: &str,
    reason: Option<&str>,
) -> Result<Approval, (u16, String)> {
    let store = &st.governance.approvals;
    let e500 = |e: crate::store::StoreError| (500, e.to_string());
    let Some(mut a) = store.get(workspace, id).map_err(e500)? else {
        return Err((404, format!("approval {id} not found")));
    };
    if a.state == "pending" && a.is_expired(now()) {
        store
            .decide(workspace, id, "expired", None, None)
            .map_err(e500)?;
    }
    if !store
        .decide(workspace, id, to, Some(approver), reason)
        .map_err(e500)?
    {
        let state = match store.get(workspace, id).map_err(e500)? {
            Some(cur) => cur.state,
            None => a.state,
        };
        return Err((409, format!("approval {id} is {state}")));
    }
    a.state = to.into();
    a.approver = Some(approver.to_owned());
    a.reason = reason.map(str::to_owned);
    Ok(a)
}

/// Approves a pending approval and sends the held request to the peer (return-immediately);
/// the peer's task is bound to the workspace and becomes what the gateway task goes on as.
pub async fn release(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    approver: &str,
    reason: Option<&str>,
) -> Result<Value, (u16, String)> {
    let store = &st.governance.approvals;
    let e500 = |e: crate::store::StoreError| (500, e.to_string());
    let a = settle(st, workspace, id, "approved", approver, reason)?;
    let r = send_held(st, &a).await;
    match r {
        Ok(task) => {
            if let Some(t) = &task {
                store.set_peer_task(workspace, id, t).map_err(e500)?;
            }
            audit(st, &a, "approved", task.clone(), None);
            Ok(json!({"approval": a, "peerTaskId": task, "task": gateway_task(&a)}))
        }
        Err(r) => {
            audit(st, &a, "approved", None, Some(&r));
            Err((502, format!("the peer call failed: {r}")))
        }
    }
}

async fn send_held(st: &GatewayState, a: &Approval) -> Result<Option<String>, Refusal> {
    let caller = if a.caller_version == "1.0" {
        Version::V1
    } else {
        Version::V03
    };
    let agent = st
        .store
        .agent(&a.workspace_id, &a.agent_id)
        .map_err(internal)?
        .ok_or_else(|| Refusal::agent_not_found(&a.agent_id))?;
    let mut params: Value = serde_json::from_str(&a.params).map_err(internal)?;
    // The caller already has its answer (the gateway task): the peer is asked not to block.
    if let Some(o) = params.as_object_mut() {
        let c = o.entry("configuration").or_insert_with(|| json!({}));
        if let Some(c) = c.as_object_mut() {
            match caller {
                Version::V1 => c.insert("returnImmediately".into(), json!(true)),
                Version::V03 => c.insert("blocking".into(), json!(false)),
            };
        }
    }
    let (chosen, _) = crate::outbound::choose(st, &agent, st.config.limits.max_card_bytes).await?;
    let peer_params =
        crate::outbound::peer_params(Operation::SendMessage, caller, &chosen, &params, false)?;
    let ctx = crate::outbound::PeerCall {
        st,
        agent: &agent,
        chosen: &chosen,
        caller,
        traceparent: format!("00-{}-{}-01", random_hex(16), random_hex(8)),
        hops: 1,
        id: json!(random_hex(8)),
        max_resp: st.config.limits.max_response_bytes,
        max_stream: st.config.limits.max_stream_bytes,
        // The held hop's chain goes with it (no governance steps: they already decided).
        gov: Some(std::sync::Arc::new(crate::governance::HopGov {
            chain_header: st.governance.chain_key.sign(&a.chain),
            hop: Hop {
                trace_id: String::new(),
                workspace_id: a.workspace_id.clone(),
                key_id: String::new(),
                scopes: Vec::new(),
                target: a.agent_id.clone(),
                operation: Operation::SendMessage,
                version: caller,
                binding: crate::protocol::errors::Binding::JsonRpc,
                card_skills: Vec::new(),
                chain: a.chain.clone(),
            },
            active: false,
            evidence: std::sync::Mutex::new(Evidence::default()),
        })),
        open: None,
    };
    // The extensions the hop forwarded go with the released call.
    let ext = std::sync::Arc::new(crate::governance::extensions::HopExtensions::forwarding(
        a.extensions.clone(),
    ));
    let answer =
        crate::governance::extensions::scope(ext, ctx.call(Operation::SendMessage, peer_params))
            .await?;
    let owners: std::sync::Arc<dyn ownership::OwnershipStore> =
        std::sync::Arc::new(ownership::SqliteOwnership::new(st.store.clone()));
    let owner = Owner {
        workspace_id: a.workspace_id.clone(),
        agent_id: a.agent_id.clone(),
    };
    let (_, task) = ownership::bind_answer(owners, &agent.endpoint, &owner, answer)?;
    Ok(task)
}

/// Denies a pending approval (the gateway task shows REJECTED).
pub fn deny(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    approver: &str,
    reason: Option<&str>,
) -> Result<Value, (u16, String)> {
    let a = settle(st, workspace, id, "denied", approver, reason)?;
    audit(st, &a, "denied", None, None);
    Ok(json!({"approval": a, "task": gateway_task(&a)}))
}

/// A gateway task answer for `op` (SendMessage: `{task}`; GetTask, CancelTask: the task) in the
/// caller's version.
pub(crate) fn task_answer(
    op: Operation,
    caller: Version,
    a: &Approval,
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
