//! The demo's governance (`a2a-gateway demo`): a small policy, PII rules and one killed context,
//! so that every governance refusal can be seen (and replayed by the conformance fixtures)
//! against the demo's echo agent without any setup.
//!
//! - `metadata.skill = "demo-denied"` → `a2a_policy_denied` (rule `demo-deny-skill`);
//!   `"demo-approval"` → `a2a_approval_pending` (rule `demo-approve-skill`);
//! - e-mail addresses are redacted, secrets (API keys, private keys) blocked (`a2a_pii_blocked`);
//!   a CancelTask carrying that skill needs approval but cannot be held (`a2a_approval_pending`
//!   as an error);
//! - approvals `demo-denied` and `demo-expired` of agent `echo` are already decided: their
//!   gateway tasks (`gw-approval-demo-denied`, `gw-approval-demo-expired`) answer GetTask with
//!   REJECTED and refuse SubscribeToTask and follow-up sends (`a2a_approval_denied`,
//!   `a2a_approval_expired`);
//! - context `demo-killed-context` is killed (`a2a_session_killed`);
//! - delegation chains are signed with [`DEMO_DELEGATION_KEY`] (a fixed, public key: demo only).

use crate::store::StoreError;
use crate::store::backend::{Approval, ApprovalSummary, GovDocStore, HoldStore, Kill};

/// The demo's delegation key (public: never use it outside the demo).
pub const DEMO_DELEGATION_KEY: &str = "a2a-gateway-demo-delegation-key";
/// The demo's killed context.
pub const DEMO_KILLED_CONTEXT: &str = "demo-killed-context";

/// The demo policy document.
pub fn policy() -> serde_json::Value {
    serde_json::json!({"rules": [
        {"id": "demo-deny-skill", "when": "skill == 'demo-denied'", "decision": "deny"},
        {"id": "demo-approve-skill", "when": "skill == 'demo-approval'", "decision": "approve"}
    ]})
}

/// Installs the demo governance for `workspace`: the policy and PII rules in `store`, the
/// killed context in `holds`.
pub async fn install<D: GovDocStore, H: HoldStore>(
    store: &D,
    holds: &H,
    workspace: &str,
) -> Result<(), StoreError> {
    store.put_policy(workspace, &policy().to_string()).await?;
    store
        .put_pii_rules(
            workspace,
            r#"{"default_action":"record","actions":{"EMAIL":"redact","SECRET":"block"}}"#,
        )
        .await?;
    holds
        .add_kill(&Kill {
            workspace_id: workspace.to_owned(),
            kind: "context".into(),
            id: DEMO_KILLED_CONTEXT.into(),
            agent_id: None,
            reason: Some("demo".into()),
            killed_at: 0,
        })
        .await
}

/// The demo's decided approvals: `(id, state)`.
pub const DEMO_APPROVALS: [(&str, &str); 2] =
    [("demo-denied", "denied"), ("demo-expired", "expired")];

/// Stores the demo's decided approvals of `workspace`'s agent `agent` (kept when already there:
/// `--database` may reopen a demo database).
pub async fn install_approvals<H: HoldStore>(
    approvals: &H,
    workspace: &str,
    agent: &str,
) -> Result<(), StoreError> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    for (id, state) in DEMO_APPROVALS {
        if approvals.approval_summary(workspace, id).await?.is_some() {
            continue;
        }
        approvals
            .create_approval(&Approval {
                summary: ApprovalSummary {
                    id: id.into(),
                    workspace_id: workspace.into(),
                    agent_id: agent.into(),
                    caller_version: "1.0".into(),
                    preview: serde_json::json!({"operation": "SendMessage", "text": "demo"}),
                    context_id: format!("{}ctx-{id}", super::approval::TASK_PREFIX),
                    state: state.into(),
                    rule: Some("demo-approve-skill".into()),
                    approver: (state == "denied").then(|| "demo".into()),
                    reason: (state == "denied").then(|| "demo".into()),
                    peer_task_id: None,
                    chain: Vec::new(),
                    extensions: Vec::new(),
                    created_at: now,
                    expires_at: now,
                    key_id: None,
                    refusal: None,
                },
                params: serde_json::json!({"message": {"messageId": id, "role": "ROLE_USER",
                "parts": [{"text": "demo"}]}})
                .to_string(),
            })
            .await?;
    }
    Ok(())
}
