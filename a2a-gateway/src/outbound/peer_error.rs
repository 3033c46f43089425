//! A peer's error, governed before the caller sees it (issue 39: nothing a peer controls
//! crosses unread).
//!
//! Of a peer's A2A error the caller gets the code and the ErrorInfo `reason`
//! (`Refusal::upstream_error`); the peer's message is never forwarded (the caller reads the
//! gateway's own message for the code). An answer the gateway cannot read or carry
//! (`a2a_upstream_invalid_response`, `a2a_upstream_untranslatable`) or whose content type is
//! not JSON (`a2a_upstream_content_type`) is refused with a message that may quote the peer's
//! value (`bad enum value "..."`, the content type). So each of these passes the hop's
//! governance like an answer (`Governance::error`, over `{"reason", "message"}`): in a
//! workspace with PII rules they are scanned, redacted in place, or the caller gets
//! `a2a_pii_blocked` instead; findings go to the hop's evidence.

use serde_json::{Value, json};

use crate::governance::{Governance, HopGov};
use crate::protocol::errors::Refusal;

/// The refusals whose reason or message carry what a peer wrote.
const PEER_WORDS: [&str; 4] = [
    "a2a_upstream_error",
    "a2a_upstream_invalid_response",
    "a2a_upstream_untranslatable",
    "a2a_upstream_content_type",
];

/// `r` once the hop's governance has read it: unchanged unless it carries a peer's words
/// ([`PEER_WORDS`]) in a hop whose governance is active.
pub(crate) fn govern(governance: &Governance, gov: Option<&HopGov>, mut r: Refusal) -> Refusal {
    if !PEER_WORDS.contains(&r.code.as_str()) {
        return r;
    }
    let Some(g) = gov.filter(|g| g.active) else {
        return r;
    };
    let mut v = json!({ "reason": r.reason, "message": r.message });
    let Ok(mut ev) = g.evidence.lock() else {
        return Refusal::internal("evidence lock");
    };
    if let Err(blocked) = governance.error(&g.hop, &mut v, &mut ev) {
        return blocked;
    }
    if let Some(reason) = v.get("reason").and_then(Value::as_str) {
        r.reason = reason.to_owned();
    }
    if let Some(message) = v.get("message").and_then(Value::as_str) {
        r.message = message.to_owned();
    }
    r
}
