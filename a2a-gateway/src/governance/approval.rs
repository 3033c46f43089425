//! Approval: a hop a policy sends for approval is held (nothing sent), listed in the workspace's
//! queue, and released to the peer, denied or expired by a person (docs/gateway.md, "Approval").
//!
//! The caller follows with standard A2A operations: the held SendMessage answers with a gateway
//! task (`gw-approval-<id>`, SUBMITTED); GetTask / SubscribeToTask / CancelTask on it are answered
//! by the gateway while it is held, and go on as the peer's task once it is approved (the call is
//! made on the peer's task id); a denied or expired approval shows the task REJECTED to GetTask,
//! and refuses SubscribeToTask and follow-up sends (`a2a_approval_denied` / `_expired`, with
//! the approver's reason). An approved one the gateway did not send (the session was killed or
//! the key revoked or expired meanwhile, or the peer refused it) is `failed`: the caller gets
//! that refusal.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use rusqlite::{OptionalExtension, params};

use crate::{protocol::errors::Origin, protocol::errors::Refusal};
use crate::{store::Store, store::StoreError};

/// Prefix of gateway task ids of held hops.
pub const TASK_PREFIX: &str = "gw-approval-";

/// One held hop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// Approval id.
    pub id: String,
    /// Workspace.
    pub workspace_id: String,
    /// Target agent.
    pub agent_id: String,
    /// The caller's version (`0.3`/`1.0`): the stored request is in it.
    pub caller_version: String,
    /// The request params as they will be sent (after PII redaction). Not shown in lists.
    #[serde(skip_serializing)]
    pub params: String,
    /// What an approver sees in the queue: operation, skill, sizes, every part's kind and size,
    /// PII counts, the start of the text (as it will be sent: the workspace's PII rules
    /// applied). The whole request is [`super::approval_view::request_view`].
    pub preview: Value,
    /// The gateway task's context id.
    pub context_id: String,
    /// `pending`, `approved`, `denied`, `expired`, `withdrawn` or `failed` (approved, not sent
    /// or refused by the peer: [`Approval::refusal`]).
    pub state: String,
    /// The policy rule that asked for approval.
    pub rule: Option<String>,
    /// Who decided.
    pub approver: Option<String>,
    /// Their reason.
    pub reason: Option<String>,
    /// The peer's task once approved.
    pub peer_task_id: Option<String>,
    /// The delegation chain the held hop is sent on (the target last): the released call
    /// carries it, so an approval cannot be used to start a fresh chain.
    #[serde(default)]
    pub chain: Vec<String>,
    /// The extension URIs the held hop forwards (`crate::governance::extensions`): the released call sends
    /// them, as the hop would have.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds; a pending approval expires then.
    pub expires_at: i64,
    /// The key the held hop came with (its id): releasing it checks the key still stands.
    /// `None` for a hop held before the gateway recorded it.
    #[serde(default)]
    pub key_id: Option<String>,
    /// A `failed` approval's refusal (the caller's answer), as [`refusal_value`] writes it.
    #[serde(default)]
    pub refusal: Option<Value>,
}

impl Approval {
    /// Pending, but past its expiry.
    pub fn is_expired(&self, now: i64) -> bool {
        self.state == "pending" && now >= self.expires_at
    }
}

/// Where approvals are kept (a trait, so that a PostgreSQL store can follow).
pub trait ApprovalStore: Send + Sync {
    /// Stores a new approval.
    fn create(&self, a: &Approval) -> Result<(), StoreError>;
    /// One approval of `workspace`.
    fn get(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError>;
    /// The approvals of `workspace` (newest first), optionally in one state.
    fn list(&self, workspace: &str, state: Option<&str>) -> Result<Vec<Approval>, StoreError>;
    /// Moves a pending approval to `state`; false when it was not pending.
    fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError>;
    /// Records the peer's task of an approved hop.
    fn set_peer_task(&self, workspace: &str, id: &str, task: &str) -> Result<(), StoreError>;
    /// Moves an approved approval that has no peer task yet to `failed` with `refusal`; false
    /// when it was not in that state.
    fn fail(&self, workspace: &str, id: &str, refusal: &Value) -> Result<bool, StoreError>;
}

/// [`ApprovalStore`] in the gateway's SQLite database.
#[derive(Clone)]
pub struct SqliteApprovals {
    store: Store,
}

impl SqliteApprovals {
    /// Approvals in `store`'s database.
    pub fn new(store: Store) -> SqliteApprovals {
        SqliteApprovals { store }
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Approval> {
    let preview: String = r.get(5)?;
    Ok(Approval {
        id: r.get(0)?,
        workspace_id: r.get(1)?,
        agent_id: r.get(2)?,
        caller_version: r.get(3)?,
        params: r.get(4)?,
        preview: serde_json::from_str(&preview).unwrap_or(Value::Null),
        context_id: r.get(6)?,
        state: r.get(7)?,
        rule: r.get(8)?,
        approver: r.get(9)?,
        reason: r.get(10)?,
        peer_task_id: r.get(11)?,
        created_at: r.get(12)?,
        expires_at: r.get(13)?,
        chain: r
            .get::<_, String>(14)
            .ok()
            .and_then(|c| serde_json::from_str(&c).ok())
            .unwrap_or_default(),
        extensions: r
            .get::<_, String>(15)
            .ok()
            .and_then(|c| serde_json::from_str(&c).ok())
            .unwrap_or_default(),
        key_id: r.get(16)?,
        refusal: r
            .get::<_, Option<String>>(17)?
            .and_then(|c| serde_json::from_str(&c).ok()),
    })
}

const COLS: &str = "id, workspace_id, agent_id, caller_version, params, preview, context_id, state, rule, approver, reason, peer_task_id, created_at, expires_at, chain, extensions, key_id, refusal";

impl ApprovalStore for SqliteApprovals {
    fn create(&self, a: &Approval) -> Result<(), StoreError> {
        self.store.with(|c| {
            c.execute(
                &format!("INSERT INTO gov_approvals({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"),
                params![a.id, a.workspace_id, a.agent_id, a.caller_version, a.params,
                    a.preview.to_string(), a.context_id, a.state, a.rule, a.approver, a.reason,
                    a.peer_task_id, a.created_at, a.expires_at,
                    serde_json::to_string(&a.chain).unwrap_or_else(|_| "[]".into()),
                    serde_json::to_string(&a.extensions).unwrap_or_else(|_| "[]".into()),
                    a.key_id, a.refusal.as_ref().map(Value::to_string)],
            )?;
            Ok(())
        })
    }

    fn get(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError> {
        self.store.with(|c| {
            Ok(c.query_row(
                &format!("SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1 AND id = ?2"),
                params![workspace, id],
                row,
            )
            .optional()?)
        })
    }

    fn list(&self, workspace: &str, state: Option<&str>) -> Result<Vec<Approval>, StoreError> {
        self.store.with(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1 AND (?2 IS NULL OR state = ?2)
                 ORDER BY created_at DESC, id LIMIT 1000"
            ))?;
            let rows = st.query_map(params![workspace, state], row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = ?3, approver = ?4, reason = ?5
                 WHERE workspace_id = ?1 AND id = ?2 AND state = 'pending'",
                params![workspace, id, state, approver, reason],
            )? > 0)
        })
    }

    fn set_peer_task(&self, workspace: &str, id: &str, task: &str) -> Result<(), StoreError> {
        self.store.with(|c| {
            c.execute(
                "UPDATE gov_approvals SET peer_task_id = ?3 WHERE workspace_id = ?1 AND id = ?2",
                params![workspace, id, task],
            )?;
            Ok(())
        })
    }

    fn fail(&self, workspace: &str, id: &str, refusal: &Value) -> Result<bool, StoreError> {
        self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = 'failed', refusal = ?3
                 WHERE workspace_id = ?1 AND id = ?2 AND state = 'approved' AND peer_task_id IS NULL",
                params![workspace, id, refusal.to_string()],
            )? > 0)
        })
    }
}

/// A refusal as stored with a `failed` approval (every member, so the caller's answer is the
/// refusal it would have got on its own hop).
pub fn refusal_value(r: &Refusal) -> Value {
    json!({"rpcCode": r.rpc_code, "code": r.code, "reason": r.reason,
        "spec": r.origin == Origin::Spec, "status": r.status, "message": r.message,
        "type": r.type_name, "extra": r.extra, "field": r.field})
}

/// The refusal of a `failed` approval (an internal error when none was stored).
pub fn refusal_of(a: &Approval) -> Refusal {
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
pub fn denied(a: &Approval) -> Refusal {
    let mut r = Refusal::approval_denied(&a.id);
    if let Some(why) = a.reason.as_deref().filter(|w| !w.is_empty()) {
        r.message = format!("{}: {why}", r.message);
        r = r.with("denialReason", json!(why));
    }
    r
}

/// The gateway task of an approval, in 1.0 form.
pub fn gateway_task(a: &Approval) -> Value {
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
