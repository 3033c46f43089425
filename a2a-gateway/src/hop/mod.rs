//! The request pipeline in one place: [`STEPS`] names every check a request goes through, in
//! order, and `execute` runs the hop's part of it (the edge part runs in the binding's entry,
//! `jsonrpc.rs` or `rest.rs`, before the operation is known).
//!
//! The order is the "Order of checks" of `docs/gateway/calls.md` (a test holds the two together). The
//! governance steps (session kill, delegation chain, PII, policy) run as one entry, "governance",
//! in [`crate::governance`]'s order, on the request in its 1.0 form.

pub(crate) mod approval;
pub(crate) mod auth;
pub(crate) mod call;
pub(crate) mod forms;
pub(crate) mod idempotency;
pub mod list_tasks;
pub(crate) mod listing;
pub(crate) mod release;
pub(crate) mod repeat;
pub mod v03_peer;

use std::sync::Arc;

use serde_json::Value;

use crate::hop::call::Call;
use crate::keys;
use crate::protocol::history;
use crate::protocol::ops::GatewayOp;
use crate::protocol::ops::Operation;
use crate::protocol::xlate;
use crate::push;
use crate::store::Principal;
use crate::store::backend::RegistryStore;
use crate::{governance::step::Evidence, governance::step::Hop};
use crate::{hop::auth::effective_limits, hop::auth::lookup_agent};
use crate::{outbound, outbound::PeerCall};
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};
use crate::{tasks::ownership, tasks::ownership::Owner};

/// Every step of a request, in order, named as in `docs/gateway/calls.md` ("Order of checks").
///
/// The first seven are the caller edge (in the binding's entry: HTTP+JSON has no envelope and
/// reads the method from the path); the rest are `execute`.
pub const STEPS: &[&str] = &[
    // The caller edge.
    "version",
    "content type",
    "key",
    "JSON",
    "envelope",
    "message text limit",
    "method",
    // The hop.
    "scope",
    "target",
    "streaming switch",
    "request validation in the caller's version",
    "approval follow-up",
    "delegation chain",
    "ownership",
    "webhook check",
    "registered endpoint checks",
    "peer card",
    "card trust",
    "interface",
    "chosen URL checks",
    "extensions",
    "governance",
    "gateway paging",
    "sealing",
    "translation to the peer's version",
    "idempotent sends",
    "intent record",
    "peer call",
    "answer checks and translation",
    "ownership of new tasks",
    "unsealing",
];

/// The hop's steps (from "scope" on, see [`STEPS`]) once the edge has named the operation.
pub(crate) async fn execute(
    st: &Arc<GatewayState>,
    call: &mut Call,
    agent_id: &str,
    principal: &Principal,
    op: Operation,
    params: Value,
) -> Result<Answer, Refusal> {
    // The hop's extensions reach its peer calls (headers) and its answer (lists, header).
    let ext = Arc::new(crate::governance::extensions::HopExtensions::default());
    // Boxed: the steps' state (several KB) is allocated once instead of being moved through
    // every wrapper future (task locals, span, axum's box) on the way in.
    let answer = crate::governance::extensions::scope(
        ext.clone(),
        Box::pin(steps(st, call, agent_id, principal, op, params)),
    )
    .await?;
    call.ext_activated = ext.activated();
    let answer = crate::governance::extensions::answer(&ext, answer);
    // A stream ends with the key's refusal once the key is revoked or expires.
    Ok(st
        .governance
        .keys
        .guard(&st.registry, &st.shutdown, &principal.key_id, answer))
}

async fn steps(
    st: &Arc<GatewayState>,
    call: &mut Call,
    agent_id: &str,
    principal: &Principal,
    op: Operation,
    params: Value,
) -> Result<Answer, Refusal> {
    // scope
    if !keys::allows(&principal.scopes, op.scope()) {
        return Err(Refusal::scope_denied(op.scope().as_str()));
    }
    // target
    let agent = lookup_agent(st, principal, agent_id).await?;
    call.target_found = true;
    // streaming switch
    if op.is_streaming() && !st.config().streaming_enabled {
        return Err(Refusal::streaming_disabled());
    }
    // request validation in the caller's version: before anything reads the params, and into
    // one spelling (proto names such as `task_id` become `taskId`), so every later check and
    // the request sent to the peer read the same members.
    let mut params = params;
    xlate::normalize_request(op, call.version, &mut params)?;
    call.note_context(&params);
    // approval follow-up: task operations on a gateway task of a held hop.
    let params = match crate::hop::approval::follow(
        st,
        &principal.workspace_id,
        agent_id,
        op,
        call.version,
        &params,
    )
    .await?
    {
        crate::hop::approval::Follow::No => params,
        crate::hop::approval::Follow::Answer(a) => return Ok(a),
        crate::hop::approval::Follow::Peer(p) => p,
    };
    // The workspace's governance (policies, PII rules, kills) as of now, for the steps below.
    st.governance.cache.load(&principal.workspace_id).await;
    // delegation chain: the signed chain the hop arrived with (a peer delegating again).
    let chain = match &call.chain {
        Some(h) => st.governance.chain_key.verify(h)?,
        None => Vec::new(),
    };
    let ws = match st
        .registry
        .workspace_seen(&principal.workspace_id, principal.registry_version)
        .await
    {
        Ok(ws) => ws,
        Err(e) if e.is_unavailable() => return Err(Refusal::store_unavailable()),
        Err(_) => None,
    };
    // The request in its two forms: the caller's, and 1.0 made from it once (see `forms`).
    let mut req = forms::Forms::new(op, call.version, params);
    // ownership: a task of another owner answers exactly like one that never existed.
    let owner = Owner {
        workspace_id: principal.workspace_id.clone(),
        agent_id: agent_id.to_owned(),
    };
    call.audit.task_id = ownership::check(
        &st.records,
        &agent.endpoint,
        &owner,
        op,
        call.version,
        req.caller(),
    )
    .await?;
    // webhook check (and the workspace's push delivery mode)
    let push_mode =
        push::hop::check(st, &principal.workspace_id, op, call.version, req.caller()).await?;
    // registered endpoint checks, peer card, interface, chosen URL checks
    let (max_resp, max_stream, max_card) = effective_limits(st, ws.as_ref());
    let (chosen, card) = outbound::choose(st, &agent, max_card).await?;
    call.audit.peer_version = Some(chosen.version.as_str().to_owned());
    call.audit.peer_binding = Some(chosen.binding.as_str().to_owned());
    call.audit.signature_trust = chosen.signature_trust.map(str::to_owned);
    // extensions: the DVARA table for required ones; what is forwarded; the request's lists.
    let settings = st
        .registry
        .workspace_settings_seen(&principal.workspace_id, principal.registry_version)
        .await
        .map_err(|e| Refusal::store("workspace settings", &e))?;
    crate::governance::extensions::step(
        &call.ext_requested,
        &settings,
        &card.body,
        req.caller_mut(),
    )?;
    // governance: kill, loops, PII, policy on the request in its 1.0 form.
    let mut hop_facts = Hop {
        chain,
        ..Hop::of_caller(
            &call.trace_id,
            principal,
            agent_id,
            op,
            call.version,
            call.binding,
        )
    };
    let governance = call.step("governance");
    let active = st.governance.active(&hop_facts);
    let mut evidence = Evidence::default();
    if active {
        hop_facts.card_skills = outbound::card_skills(&card, &agent);
        let p10 = req.v1()?;
        let before = p10.clone();
        let r = st.governance.request(&hop_facts, p10, &mut evidence);
        // Written back even on a refusal: a hop held for approval keeps the redacted request.
        if *p10 != before {
            req.v1_edited().or_else(|e| r.clone().and(Err(e)))?;
        }
        if let Err(r) = r {
            if r.code == "a2a_approval_pending"
                && matches!(op, Operation::SendMessage | Operation::SendStreamingMessage)
            {
                let p10 = req.v1()?.clone();
                // A retry of a send already held (or sent) is answered from its first claim.
                let claim = match crate::hop::idempotency::claim(st, &owner, op, &p10).await? {
                    crate::hop::idempotency::Claim::Off => None,
                    crate::hop::idempotency::Claim::First(g) => Some(g),
                    repeat => {
                        call.audit.governance = serde_json::to_value(&evidence).ok();
                        call.audit.decision = "duplicate".into();
                        return crate::hop::repeat::held_repeat(
                            st,
                            call,
                            &owner,
                            &agent,
                            &chosen,
                            (max_resp, max_stream),
                            req.caller(),
                            op,
                            repeat,
                        )
                        .await;
                    }
                };
                return crate::hop::approval::hold(
                    st,
                    call,
                    &hop_facts,
                    op,
                    req.caller(),
                    &p10,
                    &mut evidence,
                    claim,
                )
                .await;
            }
            call.audit.governance = serde_json::to_value(&evidence).ok();
            if r.code == "a2a_approval_pending" {
                return Err(Refusal::approval_not_holdable(op.name_10()));
            }
            return Err(r);
        }
    }
    drop(governance);
    let mut out_chain = hop_facts.chain.clone();
    out_chain.push(crate::governance::loops::member(
        &principal.workspace_id,
        agent_id,
    ));
    evidence.chain = out_chain.clone();
    let gov = Arc::new(crate::governance::HopGov {
        chain_header: st.governance.chain_key.sign(&out_chain),
        hop: hop_facts,
        active,
        evidence: std::sync::Mutex::new(evidence),
    });
    let open = op.is_streaming().then(|| {
        st.governance
            .streams
            .open(&principal.workspace_id, agent_id, req.caller())
    });
    // gateway paging (push config lists of 0.3 peers for 1.0 callers)
    let page = listing::push_page(st, op, chosen.version, call.version, req.caller())?;
    // sealing
    let sealed = match push_mode {
        Some(_) => {
            push::hop::seal(
                st,
                push_mode.as_ref(),
                op,
                &principal.workspace_id,
                agent_id,
                call.version,
                call.push_as.unwrap_or(call.version),
                chosen.version,
                req.caller_mut(),
            )
            .await?
        }
        None => None,
    };
    // translation to the peer's version (ListTasks is served from the gateway's records)
    let listed_here = op == Operation::ListTasks;
    let translation = call.step("translation");
    let peer_params = if listed_here {
        Value::Null
    } else {
        outbound::peer_form(&chosen, req.for_peer(chosen.version)?, page.is_some())
    };
    drop(translation);
    let peer_method = op.name(chosen.version);
    call.audit.peer_method = Some(match chosen.binding {
        Binding::JsonRpc => peer_method.to_owned(),
        Binding::HttpJson => format!("HTTP+JSON {}", op.path()),
        Binding::Grpc => format!("GRPC {}", op.name(Version::V1)),
    });
    // The peer call's step span: the peer's traceparent names it.
    let peer_step = call.step("peer call");
    let ctx = PeerCall {
        st,
        agent: &agent,
        chosen: &chosen,
        caller: call.version,
        traceparent: call.traceparent_of(&peer_step),
        hops: call.hops.saturating_add(1),
        // The caller's id when a JSON value carries it exactly, else one of the gateway's own.
        id: call
            .id
            .to_exact_value()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| serde_json::json!(crate::ids::id_hex(8))),
        max_resp,
        max_stream,
        gov: Some(gov.clone()),
        open,
        peer_nanos: Default::default(),
    };
    // idempotent sends: a repeated messageId is answered from the first send's record.
    let first_send = if crate::hop::idempotency::applies(st, op) {
        let p10 = req.v1()?;
        match crate::hop::idempotency::check(st, &ctx, &owner, op, call.version, p10).await? {
            crate::hop::idempotency::Check::Off => None,
            crate::hop::idempotency::Check::First(g) => Some(g),
            crate::hop::idempotency::Check::Answer(a) => {
                call.audit.decision = "duplicate".into();
                return Ok(a);
            }
            crate::hop::idempotency::Check::Held(id) => {
                call.audit.decision = "duplicate".into();
                call.audit.task_id =
                    Some(format!("{}{id}", crate::governance::approval::TASK_PREFIX));
                return crate::hop::approval::repeat(
                    st,
                    &principal.workspace_id,
                    agent_id,
                    &id,
                    op,
                    call.version,
                    req.caller(),
                )
                .await;
            }
        }
    } else {
        None
    };
    let params = req.into_caller();
    // intent record: written before the peer is called, completed by `record`.
    call.audit.decision = "allowed".into();
    call.audit.client_version = Some(call.version.as_str().to_owned());
    call.intent = Some(
        crate::store::backend::AuditStore::intent(&st.audit, &call.audit)
            .await
            .map_err(|e| Refusal::internal(&format!("audit intent not written: {e}")))?,
    );
    // peer call, answer checks and translation
    let mut answer = if listed_here {
        list_tasks::list(st, &ctx, &st.records, &agent.endpoint, &owner, &params).await?
    } else if let Some(events) =
        crate::tasks::replay::local(&st.replay, op, &owner, call.version, &params).await
    {
        // A resume from this gateway's own buffer (a peer that numbers no events).
        Answer::Stream(events)
    } else {
        // A 1.0 subscribe starts with the Task, which a 0.3 peer does not send (a resume
        // goes on from the caller's last event instead).
        let called = if op == Operation::SubscribeToTask
            && chosen.version == Version::V03
            && call.version == Version::V1
            && crate::tasks::resume::upstream().is_none()
        {
            v03_peer::subscribe(st, &ctx, peer_params).await
        } else {
            // The peer's answer passes through as text when no step below edits it.
            let limit = history::history_limit(op, call.version, &params);
            let pass = crate::protocol::passed::passable(
                op,
                (call.push_as.unwrap_or(call.version), call.binding),
                (chosen.version, chosen.binding),
                active || limit.is_some() || push_mode.is_some() || page.is_some(),
            );
            ctx.call_passing(op, peer_params, pass).await
        };
        call.peer = ctx.peer_time();
        match called {
            Ok(a) => a,
            Err(r) => {
                if let Ok(ev) = gov.evidence.lock() {
                    call.audit.governance = serde_json::to_value(&*ev).ok();
                }
                return Err(r);
            }
        }
    };
    drop(peer_step);
    if let Ok(ev) = gov.evidence.lock() {
        call.audit.governance = serde_json::to_value(&*ev).ok();
    }
    if let Answer::Unary(res) = &answer {
        call.note_context(res);
    }
    // History lengths mean what the caller's version says, whatever the peer's.
    let limit = history::history_limit(op, call.version, &params);
    if let Answer::Unary(res) = &mut answer {
        history::trim_history(op, limit, res);
    }
    let mut answer = history::trim_stream(answer, limit);
    // ownership of new tasks (and the status each answer and event shows, which ListTasks
    // is answered from)
    if matches!(op, Operation::SendMessage | Operation::SendStreamingMessage) {
        let records = st.records.clone();
        let (a, task) = ownership::bind_answer(records, &agent.endpoint, &owner, answer).await?;
        answer = a;
        // An ended task answered as the peer wrote it is what a listing would read.
        if let Answer::Passed(p) = &answer
            && let (Some(id), Some(text)) = (p.task_id(), p.ended_task())
        {
            let (ws, agent_id) = (&owner.workspace_id, &owner.agent_id);
            st.terminal
                .put_answered(&agent.endpoint, ws, agent_id, id, text);
        }
        if task.is_some() {
            call.audit.task_id = task;
        }
    } else if matches!(
        op,
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask
    ) {
        answer =
            ownership::record_answer(st.records.clone(), &agent.endpoint, &owner, answer).await;
    }
    if let Some(g) = first_send {
        answer = g.finish(op, call.version, answer).await;
    }
    // unsealing (and the push config steps over what the peer wrote in a push config answer)
    if push_mode.is_some()
        && let Answer::Unary(res) = &mut answer
    {
        let r = push::hop::unseal(
            st,
            &gov,
            sealed.as_deref(),
            op,
            &principal.workspace_id,
            agent_id,
            call.version,
            &params,
            res,
        )
        .await;
        if let Ok(ev) = gov.evidence.lock() {
            call.audit.governance = serde_json::to_value(&*ev).ok();
        }
        r?;
    }
    // A canceled task's open streams end with its final state (issue 16).
    crate::outbound::cancel_end::after_cancel(
        st,
        &principal.workspace_id,
        agent_id,
        op,
        call.version,
        &answer,
    );
    // gateway paging: the caller's page of the whole list
    if let (Some(page), Answer::Unary(res)) = (&page, &answer) {
        return Ok(Answer::Unary(listing::push_page_slice(st, page, res)));
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::STEPS;

    /// `docs/gateway/calls.md` lists the steps in the order of [`STEPS`] (and no others).
    #[test]
    fn docs_order_of_checks_matches_steps() {
        let doc = include_str!("../../../docs/gateway/calls.md");
        let start = doc
            .find("### Order of checks")
            .expect("docs/gateway/calls.md has an Order of checks section");
        let para: String = doc[start..]
            .lines()
            .skip(1)
            .skip_while(|l| l.trim().is_empty())
            .take_while(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let named: Vec<String> = para
            .split('→')
            .map(|s| {
                // "key (401)" -> "key"; "**message text limit** (413 ...)" -> "message text limit"
                let s = s.replace("**", "");
                let s = s.trim().trim_end_matches('.').trim();
                match s.find(" (") {
                    Some(i) if s.ends_with(')') => s[..i].to_owned(),
                    _ => s.to_owned(),
                }
            })
            .collect();
        assert_eq!(
            named, STEPS,
            "docs/gateway/calls.md Order of checks vs pipeline::STEPS"
        );
    }
}
