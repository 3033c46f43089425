//! A person's decision on a held hop (docs/gateway/governance.md, "Approval"): [`release`] approves it and
//! sends the held request, after checking again that its session was not killed and its key
//! still stands; [`deny`] refuses it with the approver's reason, which the caller gets.

use serde_json::{Value, json};

use super::approval::internal;
use crate::protocol::ops::Operation;
use crate::store::Agent;
use crate::store::StoreError;
use crate::store::backend::{AuditStore, HoldStore, RegistryStore};
use crate::{
    governance::approval::ApprovalSummary, governance::approval::TASK_PREFIX,
    governance::approval::gateway_task, governance::approval::refusal_value,
};
use crate::{governance::step::Evidence, governance::step::Hop};
use crate::{ids::random_hex, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{tasks::ownership, tasks::ownership::Owner};

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn audit(
    st: &GatewayState,
    a: &ApprovalSummary,
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
        key_id: a.key_id.clone(),
        governance: Some(json!({
            "decisions": [{"step": "approval", "decision": decision, "rule": a.rule}],
            "approval": {"id": a.id, "approver": a.approver, "state": decision},
        })),
        ..Default::default()
    };
    if let Err(e) = st.audit.enqueue(&rec, None) {
        tracing::error!("approval audit write failed: {e}");
    }
}

/// A store error as a decision's answer: 503 while the database cannot be reached (the
/// approval is left as it was: the operator retries), else 500.
fn store_failed(e: StoreError) -> (u16, String) {
    if e.is_unavailable() {
        (503, e.to_string())
    } else {
        (500, e.to_string())
    }
}

/// The approval `id` while it can be decided: a pending one whose hold has not expired. An
/// expired one is marked expired (its gateway task shows REJECTED) and, like any decided one,
/// refused with 409 naming its state; an unknown id is 404.
async fn pending(
    st: &GatewayState,
    workspace: &str,
    id: &str,
) -> Result<ApprovalSummary, (u16, String)> {
    let store = &st.holds;
    let Some(a) = store
        .approval_summary(workspace, id)
        .await
        .map_err(store_failed)?
    else {
        return Err((404, format!("approval {id} not found")));
    };
    if a.state == "pending" && a.is_expired(now()) {
        store
            .decide(workspace, id, "expired", None, None)
            .await
            .map_err(store_failed)?;
        return Err((409, format!("approval {id} is expired")));
    }
    if a.state != "pending" {
        return Err((409, format!("approval {id} is {}", a.state)));
    }
    Ok(a)
}

/// The one rule for an operator's decision (`to`: approved or denied): only a pending approval
/// whose hold has not expired can be decided ([`pending`]). Two operators (or replicas)
/// deciding at once: the store's conditional update lets one win, the other gets 409. Only
/// the approval's facts are read (a denial never reads the held request).
async fn settle(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    to: &str,
    approver: &str,
    reason: Option<&str>,
) -> Result<ApprovalSummary, (u16, String)> {
    let store = &st.holds;
    let mut a = pending(st, workspace, id).await?;
    if !store
        .decide(workspace, id, to, Some(approver), reason)
        .await
        .map_err(store_failed)?
    {
        let state = match store
            .approval_summary(workspace, id)
            .await
            .map_err(store_failed)?
        {
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

/// Why a held send can no longer be sent, checked again at its release: a session kill of its
/// context (the caller's, or the one the gateway made up for the hold), of the task it names, or
/// of its gateway task; or its key revoked or expired since it was held.
async fn recheck(st: &GatewayState, a: &ApprovalSummary, params: &Value) -> Option<Refusal> {
    let gov = &st.governance;
    let gw_task = json!({"id": format!("{TASK_PREFIX}{}", a.id)});
    if let Some(r) = gov
        .killed(&a.workspace_id, params, &[&a.context_id])
        .or_else(|| gov.killed(&a.workspace_id, &gw_task, &[]))
    {
        return Some(r);
    }
    let key = a.key_id.as_deref()?;
    match st.registry.key_standing(key).await {
        Ok(None) => None,
        Ok(Some(why)) => Some(crate::governance::key_watch::refusal(why)),
        Err(e) if e.is_unavailable() => Some(Refusal::store_unavailable()),
        Err(e) => Some(internal(e)),
    }
}

/// Approves a pending approval and sends the held request to the peer (return-immediately);
/// the peer's task is bound to the workspace and becomes what the gateway task goes on as.
///
/// The session-kill and key checks run again first ([`recheck`]): a held send whose session
/// was killed, or whose key was revoked or expired, since it was held is not sent (409). That
/// refusal, or the peer's when the call fails (502), makes the approval `failed`: the caller
/// gets it (the held stream's last event, a blocking send's answer, SubscribeToTask and sends
/// into the gateway task; GetTask shows the task FAILED with its code).
///
/// What the release reads before it decides (the held request, the kills, the key, the
/// agent) is read while the approval is still pending: a database that cannot be reached then
/// answers 503 and leaves it pending, so the operator can approve it again once the database
/// is back (it is not failed for a blip).
pub async fn release(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    approver: &str,
    reason: Option<&str>,
) -> Result<Value, (u16, String)> {
    let store = &st.holds;
    let e500 = |e: StoreError| (500, e.to_string());
    let before = pending(st, workspace, id).await?;
    // The held request, read now that it is to be sent.
    let params = match store.approval(workspace, id).await.map_err(store_failed)? {
        Some(held) => serde_json::from_str::<Value>(&held.params).map_err(internal),
        None => return Err((404, format!("approval {id} not found"))),
    };
    st.governance.cache.load(workspace).await;
    let refused = recheck(st, &before, params.as_ref().unwrap_or(&Value::Null)).await;
    let agent = match &refused {
        Some(r) if r.code == UNAVAILABLE => return Err((503, r.message.clone())),
        Some(_) => None,
        None => match held_agent(st, &before).await {
            Err(r) if r.code == UNAVAILABLE => return Err((503, r.message.clone())),
            a => Some(a),
        },
    };
    let a = settle(st, workspace, id, "approved", approver, reason).await?;
    let r = match (refused, agent, params) {
        (Some(r), _, _) => Err((409, r)),
        (None, Some(Ok(agent)), Ok(p)) => send_held(st, &a, &agent, p).await.map_err(|r| (502, r)),
        (None, Some(Err(r)), _) | (None, _, Err(r)) => Err((502, r)),
        (None, None, _) => Err((502, internal("no agent"))),
    };
    match r {
        Ok(task) => {
            if let Some(t) = &task {
                store.set_peer_task(workspace, id, t).await.map_err(e500)?;
            }
            audit(st, &a, "approved", task.clone(), None);
            Ok(json!({"approval": a, "peerTaskId": task, "task": gateway_task(&a)}))
        }
        Err((status, r)) => {
            store
                .fail(workspace, id, &refusal_value(&r))
                .await
                .map_err(e500)?;
            audit(st, &a, "approved", None, Some(&r));
            Err(match status {
                409 => (409, format!("approval {id} is approved, but not sent: {r}")),
                _ => (status, format!("the peer call failed: {r}")),
            })
        }
    }
}

/// The code of a refusal for a database that cannot be reached.
const UNAVAILABLE: &str = "a2a_store_unavailable";

/// The held hop's agent as registered now.
async fn held_agent(st: &GatewayState, a: &ApprovalSummary) -> Result<Agent, Refusal> {
    st.registry
        .agent(&a.workspace_id, &a.agent_id)
        .await
        .map_err(|e| match e.is_unavailable() {
            true => Refusal::store_unavailable(),
            false => internal(e),
        })?
        .ok_or_else(|| Refusal::agent_not_found(&a.agent_id))
}

async fn send_held(
    st: &GatewayState,
    a: &ApprovalSummary,
    agent: &Agent,
    mut params: Value,
) -> Result<Option<String>, Refusal> {
    let caller = if a.caller_version == "1.0" {
        Version::V1
    } else {
        Version::V03
    };
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
    let (chosen, _) = crate::outbound::choose(st, agent, st.config().limits.max_card_bytes).await?;
    let hop = Hop {
        trace_id: String::new(),
        workspace_id: a.workspace_id.clone(),
        key_id: a.key_id.clone().unwrap_or_default(),
        scopes: Vec::new(),
        target: a.agent_id.clone(),
        operation: Operation::SendMessage,
        version: caller,
        binding: crate::protocol::errors::Binding::JsonRpc,
        card_skills: Vec::new(),
        chain: a.chain.clone(),
    };
    let peer_params =
        crate::outbound::peer_params(Operation::SendMessage, caller, &chosen, &params, false)?;
    let ctx = crate::outbound::PeerCall {
        st,
        agent,
        chosen: &chosen,
        caller,
        traceparent: format!("00-{}-{}-01", random_hex(16), random_hex(8)),
        hops: 1,
        id: json!(random_hex(8)),
        max_resp: st.config().limits.max_response_bytes,
        max_stream: st.config().limits.max_stream_bytes,
        // The held hop's chain goes with it (no governance steps: they already decided).
        gov: Some(std::sync::Arc::new(crate::governance::HopGov {
            chain_header: st.governance.chain_key.sign(&a.chain),
            hop: hop.clone(),
            active: false,
            evidence: std::sync::Mutex::new(Evidence::default()),
        })),
        open: None,
        peer_nanos: Default::default(),
    };
    // The extensions the hop forwarded go with the released call.
    let ext = std::sync::Arc::new(crate::governance::extensions::HopExtensions::forwarding(
        a.extensions.clone(),
    ));
    let answer =
        crate::governance::extensions::scope(ext, ctx.call(Operation::SendMessage, peer_params))
            .await
            .map_err(|r| {
                // The peer's error becomes the caller's answer (the failed approval): it passes
                // the workspace's governance as on the caller's own hop (issue 39).
                let g = crate::governance::HopGov {
                    chain_header: String::new(),
                    active: st.governance.active(&hop),
                    hop: hop.clone(),
                    evidence: std::sync::Mutex::new(Evidence::default()),
                };
                crate::outbound::peer_error::govern(&st.governance, Some(&g), r)
            })?;
    let owner = Owner {
        workspace_id: a.workspace_id.clone(),
        agent_id: a.agent_id.clone(),
    };
    let records = st.records.clone();
    let (_, task) = ownership::bind_answer(records, &agent.endpoint, &owner, answer).await?;
    Ok(task)
}

/// Denies a pending approval (the gateway task shows REJECTED).
pub async fn deny(
    st: &GatewayState,
    workspace: &str,
    id: &str,
    approver: &str,
    reason: Option<&str>,
) -> Result<Value, (u16, String)> {
    let a = settle(st, workspace, id, "denied", approver, reason).await?;
    audit(st, &a, "denied", None, None);
    Ok(json!({"approval": a, "task": gateway_task(&a)}))
}
