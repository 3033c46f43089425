//! The approval flow on the hop: holding a SendMessage ([`hold`]), answering the caller's task
//! operations on a gateway task ([`follow`]), and a person's decision ([`release`], [`deny`]).

use std::time::Duration;

use serde_json::{Value, json};

use super::approval::{Approval, TASK_PREFIX, approval_of, gateway_task, preview, task_answer};
use crate::call::Call;
use crate::errors::{Refusal, Version};
use crate::ops::Operation;
use crate::ownership::{self, Owner};
use crate::seams::{ApprovalEvidence, Evidence, Hop};
use crate::server::{Answer, GatewayState, random_hex};

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
        Version::V10 => !c
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
    ev: &mut Evidence,
) -> Result<Answer, Refusal> {
    let caller = hop.version;
    let p10 = crate::xlate::request(op, caller, Version::V10, params)?;
    let facts = super::policy::facts(hop, &p10, ev);
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
        preview: preview(&p10, &facts),
        context_id,
        state: "pending".into(),
        rule,
        approver: None,
        reason: None,
        peer_task_id: None,
        chain: {
            let mut c = hop.chain.clone();
            c.push(super::loops::member(&hop.workspace_id, &hop.target));
            c
        },
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
        return Ok(held_stream(st, caller, a));
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
                Some(c) if c.state == "pending" => continue,
                Some(c) if c.state == "approved" && c.peer_task_id.is_none() => continue,
                Some(c) => return decided_answer(caller, &c),
                None => break,
            }
        }
    }
    task_answer(Operation::SendMessage, caller, &a)
}

/// The stream of a held SendStreamingMessage: the gateway task, then its decision.
fn held_stream(st: &GatewayState, caller: Version, a: Approval) -> Answer {
    let store = st.governance.approvals.clone();
    let shutdown = st.shutdown.clone();
    let s = async_stream::stream! {
        let first = crate::xlate::event(&json!({"task": gateway_task(&a)}), Version::V10, caller);
        match first {
            Ok(ev) => yield Ok(ev),
            Err(e) => { yield Err(crate::hop::map_answer_error(e)); return; }
        }
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => { yield Err(crate::edge::shutting_down()); break; }
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
            if cur.state == "pending" || (cur.state == "approved" && cur.peer_task_id.is_none()) {
                continue;
            }
            let t = gateway_task(&cur);
            let update = json!({"statusUpdate": {"taskId": t["id"], "contextId": t["contextId"],
                "status": t["status"], "metadata": t["metadata"]}});
            match crate::xlate::event(&update, Version::V10, caller) {
                Ok(ev) => yield Ok(ev),
                Err(e) => yield Err(crate::hop::map_answer_error(e)),
            }
            break;
        }
    };
    Answer::Stream(Box::pin(s))
}

/// A decided approval as a SendMessage answer: the gateway task (denied, expired) or a pointer
/// to the peer's task (approved: the caller goes on with GetTask).
fn decided_answer(caller: Version, a: &Approval) -> Result<Answer, Refusal> {
    task_answer(Operation::SendMessage, caller, a)
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

/// GetTask / CancelTask / SubscribeToTask on a gateway task: answered from the approval while it
/// is held or refused, and on the peer's task once approved. Another workspace's (or agent's)
/// approval answers exactly like a task that does not exist.
pub(crate) fn follow(
    st: &GatewayState,
    workspace: &str,
    agent: &str,
    op: Operation,
    caller: Version,
    params: &Value,
) -> Result<Follow, Refusal> {
    if !matches!(
        op,
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask
    ) {
        return Ok(Follow::No);
    }
    let Some(id) = params
        .get("id")
        .and_then(Value::as_str)
        .and_then(approval_of)
    else {
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
        ("approved", _) if a.peer_task_id.is_some() => {
            let mut p = params.clone();
            if let Some(o) = p.as_object_mut() {
                o.insert("id".into(), json!(a.peer_task_id));
            }
            Ok(Follow::Peer(p))
        }
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
        (_, Operation::CancelTask) => Err(Refusal::upstream_error(-32002, None)),
        _ => Ok(Follow::Answer(task_answer(op, caller, &a)?)),
    }
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
        Version::V10
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
                Version::V10 => c.insert("returnImmediately".into(), json!(true)),
                Version::V03 => c.insert("blocking".into(), json!(false)),
            };
        }
    }
    let (chosen, _) = crate::hop::choose(st, &agent, st.config.limits.max_card_bytes).await?;
    let peer_params =
        crate::hop::peer_params(Operation::SendMessage, caller, &chosen, &params, false)?;
    let ctx = crate::hop::PeerCall {
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
        gov: Some(std::sync::Arc::new(super::HopGov {
            chain_header: st.governance.chain_key.sign(&a.chain),
            hop: Hop {
                trace_id: String::new(),
                workspace_id: a.workspace_id.clone(),
                key_id: String::new(),
                scopes: Vec::new(),
                target: a.agent_id.clone(),
                operation: Operation::SendMessage,
                version: caller,
                binding: crate::errors::Binding::JsonRpc,
                card_skills: Vec::new(),
                chain: a.chain.clone(),
            },
            active: false,
            evidence: std::sync::Mutex::new(Evidence::default()),
        })),
        open: None,
    };
    let answer = ctx.call(Operation::SendMessage, peer_params).await?;
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
