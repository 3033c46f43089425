//! Typed client errors.
//!
//! An error the agent returns in the A2A error model is an [`A2aError`], classified into an
//! [`ErrorKind`] (re-exported from `a2a_types::error`) by the `google.rpc.ErrorInfo` `reason`
//! when there is one, else by the JSON-RPC code. The HTTP status is kept for information but is **not** used to classify a 1.0 error: peers
//! built on 1.0.0 and 1.0.1 use different statuses for the same error (spec digest §12.9). Only a
//! 0.3 HTTP+JSON peer, whose error bodies have no normative format (`{"message": ..}`), is
//! classified by status, following the 0.3 SDK's mapping.

use std::fmt;

use serde_json::Value;

use crate::auth::AuthError;
use crate::discovery::DiscoveryError;
use crate::select::NoUsableInterface;
use crate::sse::SseError;

/// The kind of an A2A (or JSON-RPC) error: the one table in `a2a-types` (code, reason, names).
/// Reasons are read with [`ErrorKind::from_reason`], which also accepts the legacy spellings
/// (`PARSE_ERROR`, `INTERNAL_ERROR`, ...) some peers send; [`ErrorKind::reason`] gives the spec's.
pub use a2a_types::error::ErrorKind;

/// An error in the A2A error model, as returned by the agent (or produced locally when an
/// operation cannot exist for the peer's version, e.g. `ListTasks` on 0.3).
#[derive(Debug, Clone, PartialEq)]
pub struct A2aError {
    /// What kind of error (from `reason`, else `code`).
    pub kind: ErrorKind,
    /// The JSON-RPC code as sent, or the kind's code for HTTP+JSON errors.
    pub code: Option<i64>,
    /// The `ErrorInfo.reason`, when the peer sent one.
    pub reason: Option<String>,
    /// The human-readable message.
    pub message: String,
    /// The HTTP status (HTTP+JSON), informational only.
    pub http_status: Option<u16>,
    /// `data` (JSON-RPC) or `details` (HTTP+JSON) as sent, for pass-through.
    pub details: Option<Value>,
    /// True when this client produced the error without asking the agent.
    pub local: bool,
}

impl A2aError {
    /// A locally produced error of `kind`.
    pub fn local(kind: ErrorKind, message: impl Into<String>) -> A2aError {
        A2aError {
            kind,
            code: Some(kind.code()),
            reason: Some(kind.reason().to_string()),
            message: message.into(),
            http_status: None,
            details: None,
            local: true,
        }
    }

    /// Builds from a JSON-RPC error object `{code, message, data}` (both versions).
    pub fn from_jsonrpc(code: i64, message: String, data: Option<Value>) -> A2aError {
        let reason = data.as_ref().and_then(error_info_reason);
        let kind = reason
            .as_deref()
            .and_then(ErrorKind::from_reason)
            .unwrap_or_else(|| ErrorKind::from_code(code));
        A2aError {
            kind,
            code: Some(code),
            reason,
            message,
            http_status: None,
            details: data.filter(|d| !d.is_null()),
            local: false,
        }
    }

    /// Builds from an HTTP+JSON error body. Recognised shapes: the 1.0 `google.rpc.Status`
    /// (`{"error": {code, status, message, details}}`), a bare `{code, message, data}` (a2a-js),
    /// and the 0.3 SDK's `{"message": ..}` (classified by status, 0.3 only).
    /// Returns `None` when the body is none of these.
    pub fn from_rest_body(status: u16, body: &[u8], v03: bool) -> Option<A2aError> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let obj = value.as_object()?;
        if let Some(err) = obj.get("error").and_then(Value::as_object) {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let details = err.get("details").cloned();
            let reason = details.as_ref().and_then(error_info_reason);
            // 1.0: the reason decides, never the status; 0.3 bodies may lack one.
            let kind = reason
                .as_deref()
                .and_then(ErrorKind::from_reason)
                .or_else(|| v03.then(|| ErrorKind::from_http_status(status)));
            return Some(A2aError {
                kind: kind.unwrap_or(ErrorKind::Other(GENERIC_SERVER_ERROR)),
                code: kind.map(ErrorKind::code),
                reason,
                message,
                http_status: Some(status),
                details,
                local: false,
            });
        }
        let message = obj.get("message").and_then(Value::as_str)?.to_string();
        if let Some(code) = obj.get("code").and_then(Value::as_i64)
            && (-32768..=-32000).contains(&code)
        {
            let mut e = A2aError::from_jsonrpc(code, message, obj.get("data").cloned());
            e.http_status = Some(status);
            // 0.3 has no code for "busy" or "unavailable": its generic -32000 is read by status.
            if v03
                && e.kind == ErrorKind::Other(GENERIC_SERVER_ERROR)
                && matches!(status, 429 | 503)
            {
                e.kind = ErrorKind::from_http_status(status);
            }
            return Some(e);
        }
        if !v03 {
            // A bare `{"message": ..}` is not the 1.0 error model (e.g. a proxy or auth layer).
            return None;
        }
        let kind = ErrorKind::from_http_status(status);
        Some(A2aError {
            kind,
            code: Some(kind.code()),
            reason: None,
            message,
            http_status: Some(status),
            details: None,
            local: false,
        })
    }
}

/// JSON-RPC's generic server error code, the kind of a 1.0 error body without a known reason.
const GENERIC_SERVER_ERROR: i64 = -32000;

/// The `reason` of the first `google.rpc.ErrorInfo` in a details array (or a single object).
fn error_info_reason(details: &Value) -> Option<String> {
    let items: Vec<&Value> = match details {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![details],
        _ => return None,
    };
    items.into_iter().find_map(|d| {
        let is_info = d
            .get("@type")
            .and_then(Value::as_str)
            .is_none_or(|t| t.ends_with("google.rpc.ErrorInfo"));
        if !is_info {
            return None;
        }
        d.get("reason").and_then(Value::as_str).map(str::to_string)
    })
}

impl fmt::Display for A2aError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            ErrorKind::Other(_) => "A2A error",
            kind => kind.name_v1(),
        };
        write!(f, "{name}")?;
        if let Some(code) = self.code {
            write!(f, " ({code})")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        if let Some(status) = self.http_status {
            write!(f, " [HTTP {status}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for A2aError {}

/// Every way a client call can fail.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The agent answered with an A2A error.
    #[error(transparent)]
    A2a(Box<A2aError>),
    /// The agent answered with an HTTP error that is not in the A2A error model (401, 403, 502 from
    /// a proxy, ...).
    #[error("HTTP {status} from {url}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Http {
        /// The HTTP status.
        status: u16,
        /// The request URL.
        url: String,
        /// The start of the body (lossy UTF-8).
        body: String,
    },
    /// Connecting, sending, receiving or a timeout.
    #[error("transport error: {0}")]
    Transport(#[source] reqwest::Error),
    /// A response that is not what the protocol says.
    #[error("invalid response from agent: {0}")]
    Parse(String),
    /// Card discovery failed.
    #[error(transparent)]
    Discovery(Box<DiscoveryError>),
    /// No interface of the card fits.
    #[error(transparent)]
    Selection(Box<NoUsableInterface>),
    /// A credential could not be obtained.
    #[error(transparent)]
    Auth(Box<AuthError>),
    /// The event stream could not be read.
    #[error(transparent)]
    Sse(#[from] SseError),
    /// The request or response cannot be carried by the peer's protocol version.
    #[error("cannot translate for A2A {version}: {message}")]
    Translation {
        /// The peer's version.
        version: &'static str,
        /// The translator's explanation (with a JSON path).
        message: String,
    },
    /// The event stream was idle longer than the configured limit.
    #[error("no event for {0:?}")]
    StreamIdle(std::time::Duration),
    /// The caller asked for something invalid.
    #[error("invalid request: {0}")]
    Usage(String),
    /// Retries ([`crate::retry`]) or stream reconnections ([`crate::resume`]) were spent; `last`
    /// is the error of the last attempt.
    #[error("{what}: gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted {
        /// What was attempted (the operation, or the stream being resumed).
        what: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        last: Box<ClientError>,
    },
}

impl From<A2aError> for ClientError {
    fn from(e: A2aError) -> Self {
        ClientError::A2a(Box::new(e))
    }
}

impl From<DiscoveryError> for ClientError {
    fn from(e: DiscoveryError) -> Self {
        ClientError::Discovery(Box::new(e))
    }
}

impl From<NoUsableInterface> for ClientError {
    fn from(e: NoUsableInterface) -> Self {
        ClientError::Selection(Box::new(e))
    }
}

impl From<AuthError> for ClientError {
    fn from(e: AuthError) -> Self {
        ClientError::Auth(Box::new(e))
    }
}

impl ClientError {
    /// The A2A error, if this is one (or the last attempt of spent retries ended with one).
    pub fn a2a(&self) -> Option<&A2aError> {
        match self {
            ClientError::A2a(e) => Some(e.as_ref()),
            ClientError::RetriesExhausted { last, .. } => last.a2a(),
            _ => None,
        }
    }

    /// The A2A error kind, if this is an A2A error.
    pub fn kind(&self) -> Option<ErrorKind> {
        self.a2a().map(|e| e.kind)
    }

    pub(crate) fn parse(what: impl fmt::Display) -> ClientError {
        ClientError::Parse(what.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reason_wins_over_code() {
        let data = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org"}]);
        let e = A2aError::from_jsonrpc(-32099, "x".into(), Some(data));
        assert_eq!(e.kind, ErrorKind::VersionNotSupported);
        assert_eq!(e.code, Some(-32099));
        let e = A2aError::from_jsonrpc(-32001, "x".into(), None);
        assert_eq!(e.kind, ErrorKind::TaskNotFound);
        let e = A2aError::from_jsonrpc(-32001, "x".into(), Some(json!({"taskId": "1"})));
        assert_eq!(e.kind, ErrorKind::TaskNotFound);
    }

    #[test]
    fn rest_status_is_ignored_for_1_0() {
        // Same error, two statuses (1.0.0 sent 409, 1.0.1 sends 400): same kind.
        for status in [400, 409] {
            let body = json!({"error": {"code": status, "status": "FAILED_PRECONDITION", "message": "no",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_CANCELABLE"}]}});
            let e = A2aError::from_rest_body(status, body.to_string().as_bytes(), false).unwrap();
            assert_eq!(e.kind, ErrorKind::TaskNotCancelable);
            assert_eq!(e.http_status, Some(status));
        }
        let body = json!({"error": {"code": 404, "message": "gone"}});
        let e = A2aError::from_rest_body(404, body.to_string().as_bytes(), false).unwrap();
        assert_eq!(e.kind, ErrorKind::Other(GENERIC_SERVER_ERROR));
        assert_eq!(e.code, None);
    }

    #[test]
    fn legacy_and_spec_reasons_parse_alike() {
        for (legacy, spec, kind) in [
            ("PARSE_ERROR", "JSON_PARSE", ErrorKind::JsonParse),
            ("INTERNAL_ERROR", "INTERNAL", ErrorKind::Internal),
            (
                "AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED",
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                ErrorKind::ExtendedAgentCardNotConfigured,
            ),
        ] {
            for reason in [legacy, spec] {
                let info = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                   "reason": reason, "domain": "a2a-protocol.org"}]);
                let e = A2aError::from_jsonrpc(-32099, "x".into(), Some(info.clone()));
                assert_eq!(e.kind, kind, "JSON-RPC {reason}");
                let body = json!({"error": {"code": 500, "status": "INTERNAL", "message": "x",
                                            "details": info}});
                let e = A2aError::from_rest_body(500, body.to_string().as_bytes(), false).unwrap();
                assert_eq!(e.kind, kind, "REST {reason}");
            }
            // Rendering always gives the spec spelling.
            assert_eq!(kind.reason(), spec);
            assert_eq!(A2aError::local(kind, "x").reason.as_deref(), Some(spec));
        }
    }

    #[test]
    fn v03_rest_bodies() {
        let e = A2aError::from_rest_body(404, br#"{"message":"Task not found"}"#, true).unwrap();
        assert_eq!(e.kind, ErrorKind::TaskNotFound);
        let e = A2aError::from_rest_body(409, br#"{"message":"no"}"#, true).unwrap();
        assert_eq!(e.kind, ErrorKind::TaskNotCancelable);
        let e =
            A2aError::from_rest_body(400, br#"{"code":-32004,"message":"nope"}"#, true).unwrap();
        assert_eq!(e.kind, ErrorKind::UnsupportedOperation);
        assert!(A2aError::from_rest_body(500, b"<html>", true).is_none());
        // The generic -32000 of a busy or unavailable 0.3 agent is read by status.
        let busy = br#"{"code":-32000,"message":"server busy"}"#;
        let e = A2aError::from_rest_body(429, busy, true).unwrap();
        assert_eq!(e.kind, ErrorKind::ResourceExhausted);
        let e = A2aError::from_rest_body(500, busy, true).unwrap();
        assert_eq!(e.kind, ErrorKind::Other(GENERIC_SERVER_ERROR));
        // 1.0: a bare message body (auth layer, proxy) is not an A2A error.
        assert!(A2aError::from_rest_body(401, br#"{"message":"no"}"#, false).is_none());
    }

    #[test]
    fn display_names_the_error() {
        let e = A2aError::local(ErrorKind::UnsupportedOperation, "ListTasks is not in 0.3");
        assert_eq!(
            e.to_string(),
            "UnsupportedOperationError (-32004): ListTasks is not in 0.3"
        );
    }
}
