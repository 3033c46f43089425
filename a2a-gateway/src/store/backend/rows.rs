//! The rows of the admin audit, the approvals and the kills as the store traits hand them out
//! ([`super::AuditStore`], [`super::HoldStore`]).
//!
//! The one definition of each: `admin::audit` (the admin audit's rows), `governance::approval`
//! (`Approval`, `ApprovalSummary`, `MAX_PAGE`) and `governance::store` (`Kill`) re-export them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who performed an admin action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminIdentity {
    /// How the admin authenticated: `admin-token` (the admin API's bearer token), `console`
    /// (a console session; its actions reach the admin API in process) or `cli` (direct access
    /// to the database file).
    pub kind: String,
    /// Who: `admin-token` for the shared token, the OS user for the CLI.
    pub subject: String,
    /// The client's address (admin API), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// One admin action (a row of the admin audit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminAuditRecord {
    /// Sequence number (assigned on insert).
    #[serde(default)]
    pub seq: i64,
    /// RFC 3339 time (assigned on insert).
    #[serde(default)]
    pub ts: String,
    /// Who.
    pub actor: AdminIdentity,
    /// What: `POST /admin/workspaces/{ws}/agents`, or `cli agent-add`.
    pub action: String,
    /// The workspace concerned, when the action names one.
    pub workspace_id: Option<String>,
    /// HTTP status of the answer (the CLI: 200 done, 400 failed).
    pub status: i64,
    /// The request (path parameters, body or arguments; secrets redacted) and the outcome.
    pub detail: Value,
}

/// Everything about a held hop but the request itself: what counts, lists, the gateway task
/// and the caller's follow-ups read. Its size is bounded (the preview), whatever the size of
/// the held request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalSummary {
    /// Approval id.
    pub id: String,
    /// Workspace.
    pub workspace_id: String,
    /// Target agent.
    pub agent_id: String,
    /// The caller's version (`0.3`/`1.0`): the stored request is in it.
    pub caller_version: String,
    /// What an approver sees in the queue: operation, skill, sizes, the first parts' kind and
    /// size, PII counts, the start of the text (as it will be sent: the workspace's PII rules
    /// applied; the whole request is `governance::approval_view::request_view`).
    pub preview: Value,
    /// The gateway task's context id.
    pub context_id: String,
    /// `pending`, `approved`, `denied`, `expired`, `withdrawn` or `failed` (approved, not sent
    /// or refused by the peer: [`ApprovalSummary::refusal`]).
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
    /// The extension URIs the held hop forwards (`crate::governance::extensions`): the
    /// released call sends them, as the hop would have.
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
    /// A `failed` approval's refusal (the caller's answer).
    #[serde(default)]
    pub refusal: Option<Value>,
}

impl ApprovalSummary {
    /// Pending, but past its expiry.
    pub fn is_expired(&self, now: i64) -> bool {
        self.state == "pending" && now >= self.expires_at
    }

    /// Whether the approval was decided (no longer `pending`).
    pub fn is_decided(&self) -> bool {
        self.state != "pending"
    }
}

/// One held hop with its request, read one at a time where the whole request is shown or sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// The approval's facts.
    pub summary: ApprovalSummary,
    /// The request params as they will be sent (after PII redaction), in the caller's version.
    pub params: String,
}

/// Most summaries one [`super::HoldStore::summaries`] call returns.
pub const MAX_PAGE: u32 = 1000;

/// A killed context or task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kill {
    /// Workspace.
    pub workspace_id: String,
    /// `context` or `task`.
    pub kind: String,
    /// The context id or task id.
    pub id: String,
    /// The agent the task runs at (for canceling it), when known.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The operator's reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Unix seconds (0 on a new kill: the store sets the time).
    #[serde(default)]
    pub killed_at: i64,
}

/// The columns of `gov_approvals` that make an [`ApprovalSummary`], in the order both backends'
/// row readers take them.
pub(crate) const APPROVAL_COLS: &str = "id, workspace_id, agent_id, caller_version, preview,
    context_id, state, rule, approver, reason, peer_task_id, created_at, expires_at, chain,
    extensions, key_id, refusal";
