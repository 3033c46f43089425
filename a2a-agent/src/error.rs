//! A2A errors raised by the runtime, rendered in the caller's version and binding.

use crate::negotiate::Version;
use serde_json::{Value, json};

/// The kind of an A2A error (the rows of the runtime's error table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `-32700`: the body is not JSON.
    Parse,
    /// `-32600`: not a JSON-RPC request.
    InvalidRequest,
    /// `-32601`: unknown method or path.
    MethodNotFound,
    /// `-32602`: invalid parameters.
    InvalidParams,
    /// `-32603`: internal error.
    Internal,
    /// `-32001`.
    TaskNotFound,
    /// `-32002`.
    TaskNotCancelable,
    /// `-32003`.
    PushNotificationNotSupported,
    /// `-32004`.
    UnsupportedOperation,
    /// `-32005`.
    ContentTypeNotSupported,
    /// `-32006`.
    InvalidAgentResponse,
    /// `-32008`.
    ExtensionSupportRequired,
    /// `-32009`.
    VersionNotSupported,
    /// `-32000`, HTTP 401.
    Authentication,
    /// `-32000`, HTTP 403.
    Authorization,
    /// `-32000`, HTTP 429.
    ServerBusy,
}

impl ErrorKind {
    /// JSON-RPC error code.
    pub fn code(self) -> i64 {
        match self {
            ErrorKind::Parse => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::Internal => -32603,
            ErrorKind::TaskNotFound => -32001,
            ErrorKind::TaskNotCancelable => -32002,
            ErrorKind::PushNotificationNotSupported => -32003,
            ErrorKind::UnsupportedOperation => -32004,
            ErrorKind::ContentTypeNotSupported => -32005,
            ErrorKind::InvalidAgentResponse => -32006,
            ErrorKind::ExtensionSupportRequired => -32008,
            ErrorKind::VersionNotSupported => -32009,
            ErrorKind::Authentication | ErrorKind::Authorization | ErrorKind::ServerBusy => -32000,
        }
    }

    /// Default HTTP status on the HTTP+JSON binding (the seed's table).
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::Parse | ErrorKind::InvalidRequest | ErrorKind::InvalidParams => 400,
            ErrorKind::MethodNotFound => 404,
            ErrorKind::Internal => 500,
            ErrorKind::TaskNotFound => 404,
            ErrorKind::TaskNotCancelable => 409,
            ErrorKind::PushNotificationNotSupported => 405,
            ErrorKind::UnsupportedOperation => 405,
            ErrorKind::ContentTypeNotSupported => 415,
            ErrorKind::InvalidAgentResponse => 502,
            ErrorKind::ExtensionSupportRequired => 400,
            ErrorKind::VersionNotSupported => 400,
            ErrorKind::Authentication => 401,
            ErrorKind::Authorization => 403,
            ErrorKind::ServerBusy => 429,
        }
    }

    /// `google.rpc.ErrorInfo` reason.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorKind::Parse => "PARSE_ERROR",
            ErrorKind::InvalidRequest => "INVALID_REQUEST",
            ErrorKind::MethodNotFound => "METHOD_NOT_FOUND",
            ErrorKind::InvalidParams => "INVALID_PARAMS",
            ErrorKind::Internal => "INTERNAL_ERROR",
            ErrorKind::TaskNotFound => "TASK_NOT_FOUND",
            ErrorKind::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            ErrorKind::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ErrorKind::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            ErrorKind::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            ErrorKind::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            ErrorKind::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            ErrorKind::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            ErrorKind::Authentication => "AUTHENTICATION",
            ErrorKind::Authorization => "AUTHORIZATION",
            ErrorKind::ServerBusy => "SERVER_BUSY",
        }
    }

    /// The error name (`TaskNotFoundError`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Parse => "JSONParseError",
            ErrorKind::InvalidRequest => "InvalidRequestError",
            ErrorKind::MethodNotFound => "MethodNotFoundError",
            ErrorKind::InvalidParams => "InvalidParamsError",
            ErrorKind::Internal => "InternalError",
            ErrorKind::TaskNotFound => "TaskNotFoundError",
            ErrorKind::TaskNotCancelable => "TaskNotCancelableError",
            ErrorKind::PushNotificationNotSupported => "PushNotificationNotSupportedError",
            ErrorKind::UnsupportedOperation => "UnsupportedOperationError",
            ErrorKind::ContentTypeNotSupported => "ContentTypeNotSupportedError",
            ErrorKind::InvalidAgentResponse => "InvalidAgentResponseError",
            ErrorKind::ExtensionSupportRequired => "ExtensionSupportRequiredError",
            ErrorKind::VersionNotSupported => "VersionNotSupportedError",
            ErrorKind::Authentication => "AuthenticationError",
            ErrorKind::Authorization => "AuthorizationError",
            ErrorKind::ServerBusy => "ServerBusyError",
        }
    }
}

/// An A2A error with its message, optional HTTP status override and ErrorInfo metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aError {
    /// Which error.
    pub kind: ErrorKind,
    /// Human readable message.
    pub message: String,
    /// HTTP status on HTTP+JSON when it differs from the kind's default (413, 400 for empty bodies).
    pub status: Option<u16>,
    /// `ErrorInfo.metadata` (1.0) / `data` (0.3), string values only.
    pub metadata: serde_json::Map<String, Value>,
}

impl std::fmt::Display for A2aError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for A2aError {}

impl A2aError {
    /// A new error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        A2aError {
            kind,
            message: message.into(),
            status: None,
            metadata: Default::default(),
        }
    }
    /// Override the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
    /// Add an ErrorInfo metadata entry.
    pub fn with_meta(mut self, k: &str, v: impl Into<String>) -> Self {
        self.metadata.insert(k.into(), Value::String(v.into()));
        self
    }
    /// Task not found.
    pub fn task_not_found(id: &str) -> Self {
        Self::new(ErrorKind::TaskNotFound, "Task not found").with_meta("taskId", id)
    }
    /// Invalid params.
    pub fn invalid_params(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, msg)
    }
    /// Internal error.
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, msg)
    }
    /// HTTP status on the HTTP+JSON binding.
    pub fn http_status(&self) -> u16 {
        self.status.unwrap_or_else(|| self.kind.http_status())
    }

    fn error_info(&self) -> Value {
        json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.kind.reason(),
            "domain": "a2a-protocol.org",
            "metadata": self.metadata,
        })
    }

    /// The JSON-RPC `error` member in the form of `version`.
    pub fn jsonrpc_error(&self, version: Version) -> Value {
        match version {
            Version::V1 => json!({
                "code": self.kind.code(),
                "message": self.message,
                "data": [self.error_info()],
            }),
            Version::V03 => {
                let mut e = json!({"code": self.kind.code(), "message": self.message});
                if !self.metadata.is_empty() {
                    e["data"] = Value::Object(self.metadata.clone());
                }
                e
            }
        }
    }

    /// The HTTP+JSON error body in the form of `version`.
    pub fn rest_body(&self, version: Version) -> Value {
        let status = self.http_status();
        match version {
            Version::V1 => json!({
                "error": {
                    "code": status,
                    "status": grpc_status_name(status),
                    "message": self.message,
                    "details": [self.error_info()],
                }
            }),
            Version::V03 => self.jsonrpc_error(Version::V03),
        }
    }
}

fn grpc_status_name(http: u16) -> &'static str {
    match http {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        405 => "UNIMPLEMENTED",
        409 => "FAILED_PRECONDITION",
        413 => "OUT_OF_RANGE",
        415 => "INVALID_ARGUMENT",
        429 => "RESOURCE_EXHAUSTED",
        502 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}
