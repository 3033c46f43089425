//! The console's changes go through the admin API itself: each form becomes one admin request,
//! answered by [`crate::admin::router`] in process with the configured admin token, so the
//! console runs the same checks (registration checks, scopes, approvals) and shows the admin
//! API's refusal message verbatim.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, header};
use serde_json::Value;
use tower::ServiceExt;

use crate::state::GatewayState;

/// Largest admin answer the console reads: one approval's answer carries its whole held
/// request, up to the largest request the gateway reads (and its sizes).
const MAX_ANSWER: usize = 2 * crate::config::MAX_REQUEST_BYTES;

/// A refused admin request: its HTTP status and `error.message`.
#[derive(Debug, Clone)]
pub struct Refused {
    /// HTTP status.
    pub status: u16,
    /// The admin API's message, verbatim.
    pub message: String,
}

/// Sends one admin request (`path` under `/admin`, JSON `body`) and returns the JSON answer
/// (`Null` for an empty one).
pub async fn admin(
    st: &Arc<GatewayState>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<Value, Refused> {
    let token = st.config().admin_token.clone().unwrap_or_default();
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .map_err(|e| Refused {
            status: 500,
            message: e.to_string(),
        })?;
    // The operator the console is acting for, for the admin audit.
    if let Ok(actor) = super::OPERATOR.try_with(Clone::clone) {
        req.extensions_mut().insert(actor);
    }
    let resp = match crate::admin::router(st.clone()).oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    };
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), MAX_ANSWER)
        .await
        .map_err(|e| Refused {
            status: 500,
            message: e.to_string(),
        })?;
    let json: Value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    if (200..300).contains(&status) {
        return Ok(json);
    }
    let message = json["error"]["message"]
        .as_str()
        .or(json["message"].as_str())
        .or(json.as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("HTTP {status}"));
    Err(Refused { status, message })
}

/// `s` as one URL path segment (every byte but the unreserved ones percent-encoded).
pub fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn segments_are_encoded() {
        assert_eq!(super::seg("a b/c?d"), "a%20b%2Fc%3Fd");
        assert_eq!(super::seg("echo-1.x_~"), "echo-1.x_~");
    }
}
