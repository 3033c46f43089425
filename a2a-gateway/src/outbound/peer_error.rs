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
//!
//! The readers of a peer's error ([`from_rpc`], [`from_status`], [`map_answer_error`]) live
//! here too: what the refusal says is decided in one place.

use serde_json::{Value, json};

use crate::governance::{Governance, HopGov};
use crate::protocol::errors::Version;
use crate::protocol::errors::{Refusal, spec_reason};
use crate::protocol::xlate::AnswerError;

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

/// The refusal for an answer the gateway could not read or carry.
pub(crate) fn map_answer_error(e: AnswerError) -> Refusal {
    match e {
        AnswerError::Invalid(m) => Refusal::upstream_invalid_response(&m),
        AnswerError::Untranslatable(m) => Refusal::upstream_untranslatable(&m),
    }
}

/// The spec's JSON-RPC code whose ErrorInfo reason is `reason`.
pub(crate) fn reason_code(reason: &str) -> Option<i64> {
    [
        -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32700, -32600,
        -32601, -32602, -32603,
    ]
    .into_iter()
    .find(|c| spec_reason(*c) == Some(reason))
}

/// The refusal for a peer's JSON-RPC `error` member (peer `agent_id`, spoken to in `version`).
pub(crate) fn from_rpc(err: &Value, agent_id: &str, version: Version) -> Refusal {
    let Some(code) = err.get("code").and_then(Value::as_i64) else {
        return Refusal::upstream_invalid_response("error.code is not a number");
    };
    if code == -32009 {
        return Refusal::peer_version_not_supported(agent_id, version.as_str());
    }
    let reason = err
        .get("data")
        .and_then(Value::as_array)
        .and_then(|d| {
            d.iter().find(|i| {
                i.get("domain").and_then(Value::as_str)
                    == Some(crate::protocol::errors::SPEC_DOMAIN)
            })
        })
        .and_then(|i| i.get("reason"))
        .and_then(Value::as_str);
    Refusal::upstream_error(code, reason)
}

/// The refusal for a peer's HTTP+JSON error answer (`status`, its JSON `body`).
pub(crate) fn from_status(status: u16, body: &Value, agent_id: &str, version: Version) -> Refusal {
    let reason = body
        .get("error")
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .and_then(|d| {
            d.iter()
                .find_map(|i| i.get("reason").and_then(Value::as_str))
        });
    if reason == Some("VERSION_NOT_SUPPORTED") {
        return Refusal::peer_version_not_supported(agent_id, version.as_str());
    }
    match reason.and_then(reason_code) {
        Some(code) => Refusal::upstream_error(code, reason),
        None => Refusal::upstream_error(
            match status {
                404 => -32001,
                400 => -32602,
                _ => -32603,
            },
            None,
        ),
    }
}
