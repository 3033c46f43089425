//! Typed client errors.
//!
//! An error the agent returns in the A2A error model is an [`A2aError`], classified into an
//! [`ErrorKind`] by the `google.rpc.ErrorInfo` `reason` when there is one, else by the JSON-RPC
//! code. The HTTP status is kept for information but is **not** used to classify a 1.0 error: peers
//! built on 1.0.0 and 1.0.1 use different statuses for the same error (spec digest §12.9). Only a
//! 0.3 HTTP+JSON peer, whose error bodies have no normative format (`{"message": ..}`), is
//! classified by status, following the 0.3 SDK's mapping.

use std::fmt;

use serde_json::Value;

use crate::auth::AuthError;
use crate::discovery::DiscoveryError;
use crate::select::NoUsableInterface;
use crate::sse::SseError;

/// The kind of an A2A (or JSON-RPC) error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `TaskNotFoundError` (-32001, `TASK_NOT_FOUND`).
    TaskNotFound,
    /// `TaskNotCancelableError` (-32002, `TASK_NOT_CANCELABLE`).
    TaskNotCancelable,
    /// `PushNotificationNotSupportedError` (-32003).
    PushNotificationNotSupported,
    /// `UnsupportedOperationError` (-32004).
    UnsupportedOperation,
    /// `ContentTypeNotSupportedError` (-32005).
    ContentTypeNotSupported,
    /// `InvalidAgentResponseError` (-32006).
    InvalidAgentResponse,
    /// `ExtendedAgentCardNotConfiguredError` (-32007; 0.3 `AuthenticatedExtendedCardNotConfiguredError`).
    ExtendedAgentCardNotConfigured,
    /// `ExtensionSupportRequiredError` (-32008, 1.0 only).
    ExtensionSupportRequired,
    /// `VersionNotSupportedError` (-32009, 1.0 only).
    VersionNotSupported,
    /// JSON-RPC parse error (-32700).
    JsonParse,
    /// JSON-RPC invalid request (-32600).
    InvalidRequest,
    /// JSON-RPC method not found (-32601).
    MethodNotFound,
    /// JSON-RPC invalid params (-32602) / validation error.
    InvalidParams,
    /// JSON-RPC internal error (-32603).
    Internal,
    /// Anything else (a code or reason this client does not know).
    Other,
}

/// `(kind, JSON-RPC code, ErrorInfo reason)` for every known error.
const TABLE: &[(ErrorKind, i64, &str)] = &[
    (ErrorKind::TaskNotFound, -32001, "TASK_NOT_FOUND"),
    (ErrorKind::TaskNotCancelable, -32002, "TASK_NOT_CANCELABLE"),
    (
        ErrorKind::PushNotificationNotSupported,
        -32003,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    (
        ErrorKind::UnsupportedOperation,
        -32004,
        "UNSUPPORTED_OPERATION",
    ),
    (
        ErrorKind::ContentTypeNotSupported,
        -32005,
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    (
        ErrorKind::InvalidAgentResponse,
        -32006,
        "INVALID_AGENT_RESPONSE",
    ),
    (
        ErrorKind::ExtendedAgentCardNotConfigured,
        -32007,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    (
        ErrorKind::ExtensionSupportRequired,
        -32008,
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    (
        ErrorKind::VersionNotSupported,
        -32009,
        "VERSION_NOT_SUPPORTED",
    ),
    (ErrorKind::JsonParse, -32700, "PARSE_ERROR"),
    (ErrorKind::InvalidRequest, -32600, "INVALID_REQUEST"),
    (ErrorKind::MethodNotFound, -32601, "METHOD_NOT_FOUND"),
    (ErrorKind::InvalidParams, -32602, "INVALID_PARAMS"),
    (ErrorKind::Internal, -32603, "INTERNAL_ERROR"),
];

impl ErrorKind {
    /// The kind of a JSON-RPC error code.
    pub fn from_code(code: i64) -> ErrorKind {
        TABLE
            .iter()
            .find(|(_, c, _)| *c == code)
            .map_or(ErrorKind::Other, |(k, _, _)| *k)
    }

    /// The kind of an `ErrorInfo.reason` (also accepts 0.3's
    /// `AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED` and `INTERNAL`).
    pub fn from_reason(reason: &str) -> ErrorKind {
        match reason {
            "AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED" => {
                ErrorKind::ExtendedAgentCardNotConfigured
            }
            "INTERNAL" => ErrorKind::Internal,
            "INVALID_ARGUMENT" | "VALIDATION_ERROR" => ErrorKind::InvalidParams,
            _ => TABLE
                .iter()
                .find(|(_, _, r)| *r == reason)
                .map_or(ErrorKind::Other, |(k, _, _)| *k),
        }
    }

    /// The JSON-RPC code of this kind (`None` for [`ErrorKind::Other`]).
    pub fn code(self) -> Option<i64> {
        TABLE
            .iter()
            .find(|(k, _, _)| *k == self)
            .map(|(_, c, _)| *c)
    }

    /// The `ErrorInfo.reason` of this kind (`None` for [`ErrorKind::Other`]).
    pub fn reason(self) -> Option<&'static str> {
        TABLE
            .iter()
            .find(|(k, _, _)| *k == self)
            .map(|(_, _, r)| *r)
    }

    /// The 0.3 HTTP+JSON status mapping of the 0.3 Python SDK (`{"message": ..}` bodies only).
    pub fn from_v03_rest_status(status: u16) -> ErrorKind {
        match status {
            404 => ErrorKind::TaskNotFound,
            409 => ErrorKind::TaskNotCancelable,
            415 => ErrorKind::ContentTypeNotSupported,
            501 => ErrorKind::UnsupportedOperation,
            502 => ErrorKind::InvalidAgentResponse,
            400 | 422 => ErrorKind::InvalidParams,
            500 => ErrorKind::Internal,
            _ => ErrorKind::Other,
        }
    }
}

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
            code: kind.code(),
            reason: kind.reason().map(str::to_string),
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
            .map(ErrorKind::from_reason)
            .filter(|k| *k != ErrorKind::Other)
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
            let kind = reason
                .as_deref()
                .map(ErrorKind::from_reason)
                .unwrap_or(ErrorKind::Other);
            let kind = if kind == ErrorKind::Other && v03 {
                ErrorKind::from_v03_rest_status(status)
            } else {
                kind
            };
            return Some(A2aError {
                kind,
                code: kind.code(),
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
            return Some(e);
        }
        if !v03 {
            // A bare `{"message": ..}` is not the 1.0 error model (e.g. a proxy or auth layer).
            return None;
        }
        let kind = ErrorKind::from_v03_rest_status(status);
        Some(A2aError {
            kind,
            code: kind.code(),
            reason: None,
            message,
            http_status: Some(status),
            details: None,
            local: false,
        })
    }
}

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
            ErrorKind::Other => "A2A error",
            ErrorKind::TaskNotFound => "TaskNotFoundError",
            ErrorKind::TaskNotCancelable => "TaskNotCancelableError",
            ErrorKind::PushNotificationNotSupported => "PushNotificationNotSupportedError",
            ErrorKind::UnsupportedOperation => "UnsupportedOperationError",
            ErrorKind::ContentTypeNotSupported => "ContentTypeNotSupportedError",
            ErrorKind::InvalidAgentResponse => "InvalidAgentResponseError",
            ErrorKind::ExtendedAgentCardNotConfigured => "ExtendedAgentCardNotConfiguredError",
            ErrorKind::ExtensionSupportRequired => "ExtensionSupportRequiredError",
            ErrorKind::VersionNotSupported => "VersionNotSupportedError",
            ErrorKind::JsonParse => "JSONParseError",
            ErrorKind::InvalidRequest => "InvalidRequestError",
            ErrorKind::MethodNotFound => "MethodNotFoundError",
            ErrorKind::InvalidParams => "InvalidParamsError",
            ErrorKind::Internal => "InternalError",
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
    /// The A2A error, if this is one.
    pub fn a2a(&self) -> Option<&A2aError> {
        match self {
            ClientError::A2a(e) => Some(e.as_ref()),
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
        assert_eq!(e.kind, ErrorKind::Other);
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
