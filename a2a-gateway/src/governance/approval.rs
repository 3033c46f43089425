//! Approval: a hop a policy sends for approval is held (nothing sent), listed in the workspace's
//! queue, and released to the peer, denied or expired by a person (docs/gateway/governance.md, "Approval").
//!
//! The caller follows with standard A2A operations: the held SendMessage answers with a gateway
//! task (`gw-approval-<id>`, SUBMITTED); GetTask / SubscribeToTask / CancelTask on it are answered
//! by the gateway while it is held, and go on as the peer's task once it is approved (the call is
//! made on the peer's task id); a denied or expired approval shows the task REJECTED to GetTask,
//! and refuses SubscribeToTask and follow-up sends (`a2a_approval_denied` / `_expired`, with
//! the approver's reason). An approved one the gateway did not send (the session was killed or
//! the key revoked or expired meanwhile, or the peer refused it) is `failed`: the caller gets
//! that refusal.

use serde_json::{Value, json};

use crate::{protocol::errors::Origin, protocol::errors::Refusal};

/// Prefix of gateway task ids of held hops.
pub const TASK_PREFIX: &str = "gw-approval-";

// One definition each, in the store (`store::backend::rows`), where both backends of
// [`HoldStore`](crate::store::backend::HoldStore) keep them.
pub use crate::store::backend::{Approval, ApprovalSummary, MAX_PAGE};

/// A refusal as stored with a `failed` approval (every member, so the caller's answer is the
/// refusal it would have got on its own hop).
pub fn refusal_value(r: &Refusal) -> Value {
    json!({"rpcCode": r.rpc_code, "code": r.code, "reason": r.reason,
        "spec": r.origin == Origin::Spec, "status": r.status, "message": r.message,
        "type": r.type_name, "extra": r.extra, "field": r.field})
}

/// The refusal of a `failed` approval (an internal error when none was stored).
pub fn refusal_of(a: &ApprovalSummary) -> Refusal {
    let Some(v) = &a.refusal else {
        return Refusal::internal(&format!("approval {} failed", a.id));
    };
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Refusal {
        rpc_code: v.get("rpcCode").and_then(Value::as_i64).unwrap_or(-32000),
        code: s("code"),
        reason: s("reason"),
        origin: if v.get("spec").and_then(Value::as_bool) == Some(true) {
            Origin::Spec
        } else {
            Origin::Gateway
        },
        status: v
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(500),
        message: s("message"),
        type_name: s("type"),
        extra: v
            .get("extra")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        field: v.get("field").and_then(Value::as_str).map(str::to_owned),
    }
    .with("approvalId", json!(a.id))
}

/// The refusal of a denied (or withdrawn) approval: `a2a_approval_denied` with the reason the
/// approver wrote, in the message and as `denialReason`.
pub fn denied(a: &ApprovalSummary) -> Refusal {
    let mut r = Refusal::approval_denied(&a.id);
    if let Some(why) = a.reason.as_deref().filter(|w| !w.is_empty()) {
        r.message = format!("{}: {why}", r.message);
        r = r.with("denialReason", json!(why));
    }
    r
}

/// The gateway task of an approval, in 1.0 form.
pub fn gateway_task(a: &ApprovalSummary) -> Value {
    let refused = (a.state == "failed").then(|| refusal_of(a));
    let (state, text, code) = match a.state.as_str() {
        "pending" => (
            "TASK_STATE_SUBMITTED",
            format!("Waiting for approval {}", a.id),
            "a2a_approval_pending",
        ),
        "approved" => (
            "TASK_STATE_WORKING",
            format!(
                "Approved; the work goes on as the agent's task {}",
                a.peer_task_id.as_deref().unwrap_or("")
            ),
            "a2a_approval_approved",
        ),
        "expired" => (
            "TASK_STATE_REJECTED",
            format!("Approval {} expired before anyone decided it", a.id),
            "a2a_approval_expired",
        ),
        "withdrawn" => (
            "TASK_STATE_CANCELED",
            format!("Approval {} was withdrawn", a.id),
            "a2a_approval_denied",
        ),
        "failed" => match &refused {
            Some(r) => ("TASK_STATE_FAILED", r.message.clone(), r.code.as_str()),
            None => ("TASK_STATE_FAILED", String::new(), "a2a_internal_error"),
        },
        _ => (
            "TASK_STATE_REJECTED",
            denied(a).message,
            "a2a_approval_denied",
        ),
    };
    let ts = time::OffsetDateTime::from_unix_timestamp(a.created_at)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    let mut meta = json!({"approvalId": a.id, "approvalState": a.state, "code": code});
    if let Some(m) = meta.as_object_mut() {
        if let Some(t) = &a.peer_task_id {
            m.insert("peerTaskId".into(), json!(t));
        }
        if a.state == "denied"
            && let Some(why) = a.reason.as_deref().filter(|w| !w.is_empty())
        {
            m.insert("denialReason".into(), json!(why));
        }
    }
    json!({
        "id": format!("{TASK_PREFIX}{}", a.id),
        "contextId": a.context_id,
        "status": {
            "state": state,
            "timestamp": ts,
            "message": {"messageId": format!("{}-status", a.id), "role": "ROLE_AGENT",
                "contextId": a.context_id, "taskId": format!("{TASK_PREFIX}{}", a.id),
                "parts": [{"text": text}]},
        },
        "metadata": meta,
    })
}

/// The approval id of a gateway task id.
pub fn approval_of(task_id: &str) -> Option<&str> {
    task_id.strip_prefix(TASK_PREFIX)
}
