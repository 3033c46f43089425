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

use rusqlite::{OptionalExtension, params};

use crate::store::backend::{APPROVAL_COLS as COLS, approval_summary_row as summary_row};
use crate::{protocol::errors::Origin, protocol::errors::Refusal};
use crate::{store::Store, store::StoreError};

/// Prefix of gateway task ids of held hops.
pub const TASK_PREFIX: &str = "gw-approval-";

pub use crate::store::backend::ApprovalSummary;

/// One held hop with its request: read one at a time, where the whole request is shown or sent
/// ([`ApprovalStore::get`]). Not serialized: the admin API shows [`Approval::summary`] and the
/// request as [`super::approval_view::request_view`] makes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// The approval's facts.
    pub summary: ApprovalSummary,
    /// The request params as they will be sent (after PII redaction), in the caller's version.
    pub params: String,
}

/// Most summaries one [`ApprovalStore::summaries`] call returns.
pub const MAX_PAGE: u32 = 1000;

/// Where approvals are kept (a trait, so that a PostgreSQL store can follow).
///
/// Counts and lists read only the approvals' facts (an index, or rows without the request):
/// the held requests, up to the gateway's request size each, are read one at a time
/// ([`ApprovalStore::get`]), where one is shown whole or sent.
pub trait ApprovalStore: Send + Sync {
    /// Stores a new approval.
    fn create(&self, a: &Approval) -> Result<(), StoreError>;
    /// One approval of `workspace`, with its request.
    fn get(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError>;
    /// One approval of `workspace`, without its request.
    fn summary(&self, workspace: &str, id: &str) -> Result<Option<ApprovalSummary>, StoreError>;
    /// How many approvals of `workspace` are in `state` (an index count: no row is read).
    fn count(&self, workspace: &str, state: &str) -> Result<u64, StoreError>;
    /// The pending approvals of each workspace that has any (one index count per workspace).
    fn pending_by_workspace(&self) -> Result<Vec<(String, u64)>, StoreError>;
    /// A page of `workspace`'s approvals, newest first (then by id), optionally in one state:
    /// at most `limit` (up to [`MAX_PAGE`]), those after the approval `after` in that order.
    /// An `after` that is not an approval of `workspace` is [`StoreError::NotFound`].
    fn summaries(
        &self,
        workspace: &str,
        state: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ApprovalSummary>, StoreError>;
    /// Marks the pending approvals of `workspace` whose hold ended by `now` expired; how many.
    fn expire_due(&self, workspace: &str, now: i64) -> Result<u64, StoreError>;
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

// The SQLite store: the approvals' facts in `gov_approvals`, each held request in
// `gov_approval_requests` (migration 20). A count reads the index
// `gov_approvals_queue(workspace_id, state, created_at, id)` alone; a list reads that index and
// rows of facts (a few hundred bytes and the bounded preview each), never a request, so neither
// grows with the held requests' size (docs/gateway/governance.md, "Approval").

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

impl ApprovalStore for SqliteApprovals {
    fn create(&self, a: &Approval) -> Result<(), StoreError> {
        let s = &a.summary;
        self.store.with(|c| {
            let tx = c.unchecked_transaction()?;
            tx.execute(
                &format!("INSERT INTO gov_approvals({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"),
                params![s.id, s.workspace_id, s.agent_id, s.caller_version,
                    s.preview.to_string(), s.context_id, s.state, s.rule, s.approver, s.reason,
                    s.peer_task_id, s.created_at, s.expires_at,
                    serde_json::to_string(&s.chain).unwrap_or_else(|_| "[]".into()),
                    serde_json::to_string(&s.extensions).unwrap_or_else(|_| "[]".into()),
                    s.key_id, s.refusal.as_ref().map(Value::to_string)],
            )?;
            tx.execute(
                "INSERT INTO gov_approval_requests(id, params) VALUES (?1, ?2)",
                params![s.id, a.params],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn get(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError> {
        let Some(summary) = self.summary(workspace, id)? else {
            return Ok(None);
        };
        let params: Option<String> = self.store.with(|c| {
            Ok(c.query_row(
                "SELECT params FROM gov_approval_requests WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()?)
        })?;
        match params {
            Some(params) => Ok(Some(Approval { summary, params })),
            None => Err(StoreError::NotFound(format!(
                "the held request of approval {id}"
            ))),
        }
    }

    fn summary(&self, workspace: &str, id: &str) -> Result<Option<ApprovalSummary>, StoreError> {
        self.store.with(|c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1 AND id = ?2"
            ))?
            .query_row(params![workspace, id], summary_row)
            .optional()?)
        })
    }

    fn count(&self, workspace: &str, state: &str) -> Result<u64, StoreError> {
        self.store.with(|c| {
            let n: i64 = c
                .prepare_cached(
                    "SELECT COUNT(*) FROM gov_approvals WHERE workspace_id = ?1 AND state = ?2",
                )?
                .query_row(params![workspace, state], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    fn pending_by_workspace(&self) -> Result<Vec<(String, u64)>, StoreError> {
        // Per workspace a count over `gov_approvals_queue`'s (workspace_id, state) range: the
        // decided approvals are never read.
        self.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT w.id, (SELECT COUNT(*) FROM gov_approvals a \
                 WHERE a.workspace_id = w.id AND a.state = 'pending') FROM workspaces w",
            )?;
            let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (ws, n) = row?;
                out.push((ws, u64::try_from(n).unwrap_or(0)));
            }
            Ok(out)
        })
    }

    fn summaries(
        &self,
        workspace: &str,
        state: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ApprovalSummary>, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        self.store.with(|c| {
            // The keyset: the approvals older than `after`, or as old with a smaller id.
            let cursor: Option<(i64, String)> = match after {
                None => None,
                Some(id) => Some(
                    c.prepare_cached(
                        "SELECT created_at, id FROM gov_approvals WHERE workspace_id = ?1 AND id = ?2",
                    )?
                    .query_row(params![workspace, id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound(format!("approval {id}")))?,
                ),
            };
            let sql = format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1{}{}
                 ORDER BY created_at DESC, id DESC LIMIT ?5",
                if state.is_some() { " AND state = ?2" } else { " AND ?2 IS NULL" },
                if cursor.is_some() { " AND (created_at, id) < (?3, ?4)" } else { " AND ?3 IS NULL AND ?4 IS NULL" },
            );
            let (at, id) = cursor.unzip();
            let mut st = c.prepare_cached(&sql)?;
            let rows = st.query_map(params![workspace, state, at, id, limit], summary_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    fn expire_due(&self, workspace: &str, now: i64) -> Result<u64, StoreError> {
        self.store.with(|c| {
            let n = c.execute(
                "UPDATE gov_approvals SET state = 'expired'
                 WHERE workspace_id = ?1 AND state = 'pending' AND expires_at <= ?2",
                params![workspace, now],
            )?;
            Ok(u64::try_from(n).unwrap_or(0))
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
