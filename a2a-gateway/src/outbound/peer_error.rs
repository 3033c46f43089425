//! A peer's error, governed before the caller sees it (issue 39: nothing a peer controls
//! crosses unread).
//!
//! Of a peer's A2A error the caller gets the code and the ErrorInfo `reason`
//! (`Refusal::upstream_error`); the peer's message is never forwarded (the caller reads the
//! gateway's own message for the code). So the reason passes the hop's governance like an
//! answer (`Governance::error`): in a workspace with PII rules it is scanned, redacted in place,
//! or the caller gets `a2a_pii_blocked` instead of the error; findings go to the hop's evidence.

use serde_json::{Value, json};

use crate::governance::{Governance, HopGov};
use crate::protocol::errors::Refusal;

/// `r` once the hop's governance has read it: unchanged unless it is a peer's error in a hop
/// whose governance is active.
pub(crate) fn govern(governance: &Governance, gov: Option<&HopGov>, mut r: Refusal) -> Refusal {
    if r.code != "a2a_upstream_error" {
        return r;
    }
    let Some(g) = gov.filter(|g| g.active) else {
        return r;
    };
    let mut v = json!({ "reason": r.reason });
    let Ok(mut ev) = g.evidence.lock() else {
        return Refusal::internal("evidence lock");
    };
    if let Err(blocked) = governance.error(&g.hop, &mut v, &mut ev) {
        return blocked;
    }
    if let Some(reason) = v.get("reason").and_then(Value::as_str) {
        r.reason = reason.to_owned();
    }
    r
}
