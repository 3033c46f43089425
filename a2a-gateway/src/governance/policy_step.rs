//! The policy step: the workspace's compiled [`super::policy::Policy`] decides each request
//! (allow, deny, approve, redact) over [`super::policy::facts`]; the operator's default decides
//! for a workspace without a policy.

use std::sync::Arc;

use serde_json::Value;

use crate::protocol::errors::Refusal;
use crate::{governance::step::Evidence, governance::step::Hop, governance::step::Step};
use crate::{pii::PiiAction, pii::PiiRules};

use super::Cache;
use super::policy::{PolicyDecision, carries_push_config, facts};
use crate::protocol::ops::{GatewayOp, Operation};

/// How strict a decision is: deny > approve > redact > allow.
fn strictness(d: PolicyDecision) -> u8 {
    match d {
        PolicyDecision::Allow => 0,
        PolicyDecision::Redact => 1,
        PolicyDecision::Approve => 2,
        PolicyDecision::Deny => 3,
    }
}

/// The policy step over the governance cache.
pub struct PolicyStep {
    pub(crate) cache: Arc<Cache>,
    /// Decision without a policy or without a matching rule and document default.
    pub(crate) knobs: Arc<super::knobs::Knobs>,
}

impl Step for PolicyStep {
    fn name(&self) -> &'static str {
        "policy"
    }

    fn active(&self, hop: &Hop) -> bool {
        self.knobs.policy_default() != PolicyDecision::Allow
            || self.cache.get(&hop.workspace_id).policy.is_some()
    }

    fn request(&self, hop: &Hop, params: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let entry = self.cache.get(&hop.workspace_id);
        // The facts read the whole request (sizes, parts) and the rules run over them: off the
        // async workers for a large request, like a PII scan (`pii_step::off_workers`).
        let bytes = crate::pii::scanned_bytes(params);
        let request: &Value = params;
        let (f, (mut decision, mut rule, would)) = super::pii_step::off_workers(bytes, || {
            let f = facts(hop, request, ev);
            let d = match &entry.policy {
                Some(p) => p.decide(&f, self.knobs.policy_default()),
                None => (
                    self.knobs.policy_default(),
                    "default".to_owned(),
                    Vec::new(),
                ),
            };
            (f, d)
        });
        for (d, id) in &would {
            ev.decide("policy_dry_run", d.as_str(), Some(id));
        }
        ev.decide("policy", decision.as_str(), Some(&rule));
        // A send with an inline push config also creates one: the rules on
        // CreateTaskPushNotificationConfig apply to it too, and the stricter decision holds.
        if let Some(p) = &entry.policy
            && matches!(
                hop.operation,
                Operation::SendMessage | Operation::SendStreamingMessage
            )
            && carries_push_config(params)
        {
            let mut f = f;
            f["operation"] = Value::from(Operation::CreateTaskPushNotificationConfig.name_10());
            let (d, r, _) = p.decide(&f, self.knobs.policy_default());
            ev.decide("policy_push_config", d.as_str(), Some(&r));
            if strictness(d) > strictness(decision) {
                (decision, rule) = (d, r);
            }
        }
        match decision {
            PolicyDecision::Allow => Ok(()),
            PolicyDecision::Deny => Err(Refusal::policy_denied(&rule)),
            PolicyDecision::Redact => {
                let all = PiiRules {
                    default_action: PiiAction::Redact,
                    ..PiiRules::default()
                };
                let report = super::pii_step::scan(params, &all);
                // Counted once: findings the PII step already recorded were redacted by it or
                // are counted again here only when this scan still finds them.
                ev.pii_redacted += report.redacted;
                Ok(())
            }
            // The approval step holds the hop; without one, a hop needing approval is refused.
            PolicyDecision::Approve => Err(Refusal::approval_pending(&hop.trace_id)),
        }
    }
}
