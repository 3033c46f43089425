//! The governance steps' interface: what a step sees of a hop ([`Hop`]), what it records
//! ([`Evidence`]), and the traits a step implements ([`Step`], [`StreamStep`]).
//!
//! Every caller request, peer answer, stream event, push notification, push config answer and
//! governed card is read into its A2A form before the steps run (whatever the caller's and the
//! peer's version and binding), and passes the steps in their order (`crate::governance::Pipeline`). The gateway's own steps are
//! in [`crate::governance`]; another implementation of any of them is one more `Step`.
//! [`CardSigner`] signs the governed card.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::pii::PiiReport;
use crate::protocol::ops::Operation;
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

/// What a step sees of a hop.
#[derive(Debug, Clone)]
pub struct Hop {
    /// Trace id of the hop.
    pub trace_id: String,
    /// Caller's workspace.
    pub workspace_id: String,
    /// Caller's key id (empty for push notifications, which carry no key).
    pub key_id: String,
    /// The key's scopes (`a2a:read`, `a2a:send`; empty = unrestricted).
    pub scopes: Vec<String>,
    /// Target agent id.
    pub target: String,
    /// Operation.
    pub operation: Operation,
    /// The caller's A2A version.
    pub version: Version,
    /// The caller's binding.
    pub binding: Binding,
    /// The skills of the target's (governed) card.
    pub card_skills: Vec<String>,
    /// The delegation chain the hop arrived with (agents already visited, oldest first).
    pub chain: Vec<String>,
}

impl Hop {
    /// The hop of a caller's call with `principal`'s key to `target`: no card skills read yet,
    /// no delegation chain.
    pub fn of_caller(
        trace_id: &str,
        principal: &crate::store::Principal,
        target: &str,
        operation: Operation,
        version: Version,
        binding: Binding,
    ) -> Hop {
        Hop {
            trace_id: trace_id.to_owned(),
            workspace_id: principal.workspace_id.clone(),
            key_id: principal.key_id.clone(),
            scopes: principal
                .scopes
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            target: target.to_owned(),
            operation,
            version,
            binding,
            card_skills: Vec::new(),
            chain: Vec::new(),
        }
    }
}

/// Where a value being governed comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The caller's request params.
    Request,
    /// A peer's unary answer.
    Answer,
    /// One event of a stream.
    Event,
    /// A push notification.
    Push,
}

/// One step's decision, as audited.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Decision {
    /// The step (`policy`, `pii`, `loops`, `kill`, `approval`, ...).
    pub step: String,
    /// What it decided (`allow`, `deny`, `redact`, `block`, `record`, `approve`, ...).
    pub decision: String,
    /// The deciding rule's id, when a rule decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// The evidence of a hop's governance, stored with its audit record: never the content itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// Decisions, in step order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// PII findings by type and count (never the PII), over every phase of the hop.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pii: BTreeMap<String, u32>,
    /// PII findings replaced by placeholders.
    #[serde(skip_serializing_if = "is_zero")]
    pub pii_redacted: u32,
    /// The delegation chain the hop was sent on (agents, oldest first, the target last).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<String>,
    /// Approval id and who decided it, when a person approved or denied the hop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalEvidence>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An approval's audit evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalEvidence {
    /// Approval id.
    pub id: String,
    /// Who decided (empty while pending).
    pub approver: String,
    /// `pending`, `approved`, `denied` or `expired`.
    pub state: String,
}

impl Evidence {
    /// Records a step's decision.
    pub fn decide(&mut self, step: &str, decision: &str, rule: Option<&str>) {
        self.decisions.push(Decision {
            step: step.to_owned(),
            decision: decision.to_owned(),
            rule: rule.map(str::to_owned),
        });
    }

    /// Adds a PII report's counts.
    pub fn add_pii(&mut self, report: &PiiReport) {
        for (kind, n) in &report.counts {
            *self.pii.entry(kind.name().to_owned()).or_default() += n;
        }
        self.pii_redacted += report.redacted;
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.decisions.is_empty()
            && self.pii.is_empty()
            && self.chain.is_empty()
            && self.approval.is_none()
    }

    /// The JSON text stored in the audit record (`None` when empty).
    pub fn to_audit(&self) -> Option<String> {
        if self.is_empty() {
            None
        } else {
            serde_json::to_string(self).ok()
        }
    }
}

/// One governance step. Each method receives the value in its A2A 1.0 form and may rewrite it
/// in place (redaction) or refuse it; the defaults let everything through.
pub trait Step: Send + Sync {
    /// The step's name in audit evidence.
    fn name(&self) -> &'static str;

    /// Whether the step has anything to do for this hop (a cheap, in-memory answer): when no
    /// step is active the gateway does not read values into their 1.0 form for governance.
    fn active(&self, hop: &Hop) -> bool;

    /// The caller's request params (1.0 form). `Err` refuses the hop; the peer is not called.
    fn request(&self, hop: &Hop, params: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let _ = (hop, params, ev);
        Ok(())
    }

    /// A peer's unary answer (1.0 form). `Err` refuses it; the caller gets the refusal.
    fn answer(&self, hop: &Hop, result: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let _ = (hop, result, ev);
        Ok(())
    }

    /// A peer's error (1.0 terms: `{"reason": ...}`, what of it reaches the caller). `Err`
    /// replaces it; the step may rewrite it in place (redaction).
    fn error(&self, hop: &Hop, error: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let _ = (hop, error, ev);
        Ok(())
    }

    /// The governed card a caller reads (in the form it is served, 1.0 or 0.3), with the
    /// gateway's own members (its interfaces and URLs) taken out: what is left came from the
    /// peer (names, descriptions, skills, provider, extensions, security schemes). `Err`
    /// refuses the card; the step may rewrite it in place (redaction).
    fn card(&self, hop: &Hop, card: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let _ = (hop, card, ev);
        Ok(())
    }

    /// A peer's answer to a push config operation (Create, Get or List), in the caller's form,
    /// once the gateway has written the caller's own values back into it: the members it
    /// restored from its records (a sealed config's `url`, `token` and `authentication`) are
    /// taken out, and tokens and credentials read `[REDACTED]`; what is left came from the peer
    /// (a URL or scheme of its making, members of no version). `Err` refuses it; the step may
    /// rewrite it in place (redaction).
    fn push_config(&self, hop: &Hop, answer: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let _ = (hop, answer, ev);
        Ok(())
    }

    /// The step's state for one stream (`None`: the step does not look at streams).
    fn stream(&self, hop: &Hop) -> Option<Box<dyn StreamStep>> {
        let _ = hop;
        None
    }

    /// A push notification (1.0 `StreamResponse` form). `Err`: it is not delivered.
    fn push(&self, hop: &Hop, payload: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let _ = (hop, payload, ev);
        Ok(())
    }
}

/// A step's state over one stream.
pub trait StreamStep: Send {
    /// One event (1.0 `StreamResponse` form), in order. `Err` ends the stream with that error
    /// event. May rewrite the event in place.
    fn event(&mut self, event: &mut Value, ev: &mut Evidence) -> Result<(), Refusal>;

    /// The stream ended: events still owed (1.0 form), sent before the end.
    fn finish(&mut self, ev: &mut Evidence) -> Result<Vec<Value>, Refusal> {
        let _ = ev;
        Ok(Vec::new())
    }
}

/// Signs the governed card.
pub trait CardSigner: Send + Sync {
    /// Returns the card with `signatures` added (default: unchanged).
    fn sign(&self, card: Value) -> Value;
}

/// Leaves the card unsigned.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unsigned;

impl CardSigner for Unsigned {
    fn sign(&self, card: Value) -> Value {
        card
    }
}
