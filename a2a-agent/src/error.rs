//! A2A errors raised by the runtime, rendered in the caller's version and binding through
//! `a2a_types::error`.
//!
//! The HTTP statuses of the HTTP+JSON binding follow the behaviour reference (the Camel guide's
//! error table: 409 for a terminal cancel, 405 for disabled streaming/push, 415 for a wrong
//! content type, 413 for an oversized body) where it is more specific than the 1.0.1 spec table,
//! which maps all of these to 400; the `google.rpc.ErrorInfo` reason still identifies the error.

use crate::negotiate::Version;
pub use a2a_types::error::ErrorKind;
use serde_json::Value;

/// An A2A error with its message, optional HTTP status override and ErrorInfo metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aError {
    /// Which error.
    pub kind: ErrorKind,
    /// Human readable message.
    pub message: String,
    /// HTTP status on HTTP+JSON when it differs from the kind's default (413, 400 for empty bodies).
    pub status: Option<u16>,
    /// `ErrorInfo.metadata` (1.0) / `data` (0.3).
    pub metadata: std::collections::BTreeMap<String, String>,
}

impl std::fmt::Display for A2aError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.name_v1(), self.message)
    }
}

impl std::error::Error for A2aError {}

/// The HTTP+JSON status of `kind` in the behaviour reference's table.
pub fn seed_http_status(kind: ErrorKind) -> u16 {
    match kind {
        ErrorKind::TaskNotCancelable => 409,
        ErrorKind::UnsupportedOperation | ErrorKind::PushNotificationNotSupported => 405,
        ErrorKind::ContentTypeNotSupported => 415,
        ErrorKind::InvalidAgentResponse => 502,
        k => k.http_status(),
    }
}

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
        self.metadata.insert(k.into(), v.into());
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
        self.status.unwrap_or_else(|| seed_http_status(self.kind))
    }

    /// The shared model's error value.
    pub fn to_types(&self) -> a2a_types::error::A2aError {
        let mut e = a2a_types::error::A2aError::new(self.kind, self.message.clone());
        e.metadata = self.metadata.clone();
        e
    }

    /// The JSON-RPC `error` member in the form of `version`.
    pub fn jsonrpc_error(&self, version: Version) -> Value {
        let e = match version {
            Version::V1 => self.to_types().to_jsonrpc_v1(),
            Version::V03 => self.to_types().to_jsonrpc_v03(),
        };
        serde_json::to_value(e).unwrap_or(Value::Null)
    }

    /// The HTTP+JSON error body in the form of `version`.
    pub fn rest_body(&self, version: Version) -> Value {
        match version {
            Version::V1 => {
                let mut v =
                    serde_json::to_value(self.to_types().to_rest_body()).unwrap_or(Value::Null);
                v["error"]["code"] = Value::from(self.http_status());
                v
            }
            // 0.3 REST has no normative error body; a2a-js expects `{code, message, data?}`.
            Version::V03 => self.jsonrpc_error(Version::V03),
        }
    }
}

impl From<a2a_types::error::A2aError> for A2aError {
    fn from(e: a2a_types::error::A2aError) -> Self {
        A2aError {
            kind: e.kind,
            message: e.message,
            status: None,
            metadata: e.metadata,
        }
    }
}
