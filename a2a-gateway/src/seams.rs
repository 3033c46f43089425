//! Seams for part 2 of the gateway: policy, PII, approval, loop detection and card signing.
//!
//! Each is a trait with a permissive default; [`Seams`] holds one of each and the request
//! pipeline calls them at fixed points (after the target is resolved, before anything is sent).

use std::sync::Arc;

use serde_json::Value;

use crate::errors::Refusal;
use crate::ops::Operation;

/// What a seam sees of a hop.
#[derive(Debug, Clone)]
pub struct HopContext<'a> {
    /// Trace id of the hop.
    pub trace_id: &'a str,
    /// Caller's workspace.
    pub workspace_id: &'a str,
    /// Caller's key id.
    pub key_id: &'a str,
    /// Target agent id.
    pub target: &'a str,
    /// Operation.
    pub operation: Operation,
    /// Incoming `traceparent` / hop headers, for loop detection.
    pub hop_count: u32,
}

/// Decides whether a hop may go ahead.
pub trait Policy: Send + Sync {
    /// `Err` refuses the hop (e.g. `a2a_policy_denied`).
    fn check(&self, hop: &HopContext<'_>, params: &Value) -> Result<(), Refusal>;
}

/// Scans (and may redact) message and event content.
pub trait PiiScanner: Send + Sync {
    /// May rewrite `value` in place or refuse.
    fn scan(&self, hop: &HopContext<'_>, value: &mut Value) -> Result<(), Refusal>;
}

/// Asks for human approval of a hop.
pub trait Approval: Send + Sync {
    /// `Err` refuses or parks the hop.
    fn approve(&self, hop: &HopContext<'_>) -> Result<(), Refusal>;
}

/// Detects delegation loops.
pub trait LoopDetector: Send + Sync {
    /// `Err` refuses a looping hop.
    fn check(&self, hop: &HopContext<'_>) -> Result<(), Refusal>;
}

/// Signs the governed card.
pub trait CardSigner: Send + Sync {
    /// Returns the card with `signatures` added (default: unchanged).
    fn sign(&self, card: Value) -> Value;
}

/// Allows everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

impl Policy for AllowAll {
    fn check(&self, _: &HopContext<'_>, _: &Value) -> Result<(), Refusal> {
        Ok(())
    }
}
impl PiiScanner for AllowAll {
    fn scan(&self, _: &HopContext<'_>, _: &mut Value) -> Result<(), Refusal> {
        Ok(())
    }
}
impl Approval for AllowAll {
    fn approve(&self, _: &HopContext<'_>) -> Result<(), Refusal> {
        Ok(())
    }
}
impl LoopDetector for AllowAll {
    fn check(&self, _: &HopContext<'_>) -> Result<(), Refusal> {
        Ok(())
    }
}
impl CardSigner for AllowAll {
    fn sign(&self, card: Value) -> Value {
        card
    }
}

/// One implementation of each seam.
#[derive(Clone)]
pub struct Seams {
    /// Policy.
    pub policy: Arc<dyn Policy>,
    /// PII scanner.
    pub pii: Arc<dyn PiiScanner>,
    /// Approval.
    pub approval: Arc<dyn Approval>,
    /// Loop detection.
    pub loops: Arc<dyn LoopDetector>,
    /// Card signing.
    pub signer: Arc<dyn CardSigner>,
}

impl Default for Seams {
    fn default() -> Self {
        Seams {
            policy: Arc::new(AllowAll),
            pii: Arc::new(AllowAll),
            approval: Arc::new(AllowAll),
            loops: Arc::new(AllowAll),
            signer: Arc::new(AllowAll),
        }
    }
}
