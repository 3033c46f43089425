//! The demo's governance (`a2a-gateway demo`): a small policy, PII rules and one killed context,
//! so that every governance refusal can be seen (and replayed by the conformance fixtures)
//! against the demo's echo agent without any setup.
//!
//! - `metadata.skill = "demo-denied"` → `a2a_policy_denied` (rule `demo-deny-skill`);
//!   `"demo-approval"` → `a2a_approval_pending` (rule `demo-approve-skill`);
//! - e-mail addresses are redacted, secrets (API keys, private keys) blocked (`a2a_pii_blocked`);
//! - context `demo-killed-context` is killed (`a2a_session_killed`);
//! - delegation chains are signed with [`DEMO_DELEGATION_KEY`] (a fixed, public key: demo only).

use super::store::{GovStore, Kill};
use crate::store::StoreError;

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

/// Installs the demo governance for `workspace`.
pub fn install(store: &dyn GovStore, workspace: &str) -> Result<(), StoreError> {
    store.put_policy(workspace, &policy().to_string())?;
    store.put_pii_rules(
        workspace,
        r#"{"default_action":"record","actions":{"EMAIL":"redact","SECRET":"block"}}"#,
    )?;
    store.add_kill(&Kill {
        workspace_id: workspace.to_owned(),
        kind: "context".into(),
        id: DEMO_KILLED_CONTEXT.into(),
        agent_id: None,
        reason: Some("demo".into()),
        killed_at: 0,
    })
}
