//! Every A2A error and its wire forms in both versions (S1 §5.4, §9.5, §10.6, §11.6; S0 §8;
//! digest §5).
//!
//! [`ErrorKind`] knows each error's JSON-RPC code, 1.0 and 0.3 names, `google.rpc.ErrorInfo`
//! reason, HTTP status (the 1.0.1 table) and gRPC status name. [`A2aError`] is an error value
//! with a message and ErrorInfo metadata, and builds:
//!
//! - the 1.0 JSON-RPC error object ([`A2aError::to_jsonrpc_v1`]): `data` = `[ErrorInfo, ...]`;
//! - the 1.0 REST body ([`A2aError::to_rest_body`]): `{"error":{code,status,message,details}}`;
//! - the 0.3 JSON-RPC error object ([`A2aError::to_jsonrpc_v03`]): `data` = an object;
//!
//! and parses each of them back ([`A2aError::from_jsonrpc`], [`A2aError::from_rest_body`]).
//! Clients should key on the ErrorInfo reason, not on the HTTP status, which changed between
//! 1.0.0 and 1.0.1 (digest §12.9).

use std::collections::BTreeMap;
use std::fmt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::jsonrpc::JsonRpcError;

/// ErrorInfo `domain` of every A2A error.
pub const A2A_ERROR_DOMAIN: &str = "a2a-protocol.org";
/// `@type` of `google.rpc.ErrorInfo`.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `@type` of `google.rpc.BadRequest`.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// The kind of an A2A or JSON-RPC error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// -32001 `TaskNotFoundError`.
    TaskNotFound,
    /// -32002 `TaskNotCancelableError`.
    TaskNotCancelable,
    /// -32003 `PushNotificationNotSupportedError`.
    PushNotificationNotSupported,
    /// -32004 `UnsupportedOperationError`.
    UnsupportedOperation,
    /// -32005 `ContentTypeNotSupportedError`.
    ContentTypeNotSupported,
    /// -32006 `InvalidAgentResponseError`.
    InvalidAgentResponse,
    /// -32007 `ExtendedAgentCardNotConfiguredError` (0.3: `AuthenticatedExtendedCardNotConfiguredError`).
    ExtendedAgentCardNotConfigured,
    /// -32008 `ExtensionSupportRequiredError` (1.0 only).
    ExtensionSupportRequired,
    /// -32009 `VersionNotSupportedError` (1.0 only).
    VersionNotSupported,
    /// -32700 `JSONParseError`.
    JsonParse,
    /// -32600 `InvalidRequestError`.
    InvalidRequest,
    /// -32601 `MethodNotFoundError`.
    MethodNotFound,
    /// -32602 `InvalidParamsError`.
    InvalidParams,
    /// -32603 `InternalError`.
    Internal,
    /// Authentication failed (S1 §3.3.2): HTTP 401, gRPC UNAUTHENTICATED, JSON-RPC -32000.
    Unauthenticated,
    /// Authorization failed: HTTP 403, gRPC PERMISSION_DENIED, JSON-RPC -32000.
    PermissionDenied,
    /// Rate or capacity limit: HTTP 429, gRPC RESOURCE_EXHAUSTED, JSON-RPC -32000.
    ResourceExhausted,
    /// Temporarily unavailable (e.g. upstream unreachable): HTTP 503, gRPC UNAVAILABLE, JSON-RPC -32000.
    Unavailable,
    /// Any other code (server-defined, kept as received).
    Other(i64),
}

/// Reason spellings some peers (and earlier versions of this client) send, accepted on input
/// only by [`ErrorKind::from_reason`]; the spec spelling is [`ErrorKind::reason`].
pub const LEGACY_REASONS: &[(&str, ErrorKind)] = &[
    ("PARSE_ERROR", ErrorKind::JsonParse),
    ("INTERNAL_ERROR", ErrorKind::Internal),
    (
        "AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED",
        ErrorKind::ExtendedAgentCardNotConfigured,
    ),
    ("INVALID_ARGUMENT", ErrorKind::InvalidParams),
    ("VALIDATION_ERROR", ErrorKind::InvalidParams),
];

impl ErrorKind {
    /// The A2A-specific kinds and the standard JSON-RPC kinds (not the generic categories).
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::TaskNotFound,
        ErrorKind::TaskNotCancelable,
        ErrorKind::PushNotificationNotSupported,
        ErrorKind::UnsupportedOperation,
        ErrorKind::ContentTypeNotSupported,
        ErrorKind::InvalidAgentResponse,
        ErrorKind::ExtendedAgentCardNotConfigured,
        ErrorKind::ExtensionSupportRequired,
        ErrorKind::VersionNotSupported,
        ErrorKind::JsonParse,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::Unauthenticated,
        ErrorKind::PermissionDenied,
        ErrorKind::ResourceExhausted,
        ErrorKind::Unavailable,
    ];

    /// The JSON-RPC error code.
    pub const fn code(self) -> i64 {
        match self {
            ErrorKind::TaskNotFound => -32001,
            ErrorKind::TaskNotCancelable => -32002,
            ErrorKind::PushNotificationNotSupported => -32003,
            ErrorKind::UnsupportedOperation => -32004,
            ErrorKind::ContentTypeNotSupported => -32005,
            ErrorKind::InvalidAgentResponse => -32006,
            ErrorKind::ExtendedAgentCardNotConfigured => -32007,
            ErrorKind::ExtensionSupportRequired => -32008,
            ErrorKind::VersionNotSupported => -32009,
            ErrorKind::JsonParse => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidParams => -32602,
            ErrorKind::Internal => -32603,
            ErrorKind::Unauthenticated
            | ErrorKind::PermissionDenied
            | ErrorKind::ResourceExhausted
            | ErrorKind::Unavailable => -32000,
            ErrorKind::Other(c) => c,
        }
    }

    /// The kind for a JSON-RPC code. `-32000` (generic server error) maps to `Other(-32000)`.
    pub const fn from_code(code: i64) -> ErrorKind {
        match code {
            -32001 => ErrorKind::TaskNotFound,
            -32002 => ErrorKind::TaskNotCancelable,
            -32003 => ErrorKind::PushNotificationNotSupported,
            -32004 => ErrorKind::UnsupportedOperation,
            -32005 => ErrorKind::ContentTypeNotSupported,
            -32006 => ErrorKind::InvalidAgentResponse,
            -32007 => ErrorKind::ExtendedAgentCardNotConfigured,
            -32008 => ErrorKind::ExtensionSupportRequired,
            -32009 => ErrorKind::VersionNotSupported,
            -32700 => ErrorKind::JsonParse,
            -32600 => ErrorKind::InvalidRequest,
            -32601 => ErrorKind::MethodNotFound,
            -32602 => ErrorKind::InvalidParams,
            -32603 => ErrorKind::Internal,
            c => ErrorKind::Other(c),
        }
    }

    /// The 1.0 error name (`TaskNotFoundError`, ...).
    pub const fn name_v1(self) -> &'static str {
        match self {
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
            ErrorKind::Unauthenticated => "AuthenticationError",
            ErrorKind::PermissionDenied => "AuthorizationError",
            ErrorKind::ResourceExhausted => "ResourceExhaustedError",
            ErrorKind::Unavailable => "UnavailableError",
            ErrorKind::Other(_) => "ServerError",
        }
    }

    /// The 0.3 error name; `None` for the errors 0.3 does not define (-32008, -32009).
    pub const fn name_v03(self) -> Option<&'static str> {
        match self {
            ErrorKind::ExtendedAgentCardNotConfigured => {
                Some("AuthenticatedExtendedCardNotConfiguredError")
            }
            ErrorKind::ExtensionSupportRequired | ErrorKind::VersionNotSupported => None,
            k => Some(k.name_v1()),
        }
    }

    /// The `google.rpc.ErrorInfo` reason: the 1.0 name in UPPER_SNAKE_CASE without `Error`.
    pub const fn reason(self) -> &'static str {
        match self {
            ErrorKind::TaskNotFound => "TASK_NOT_FOUND",
            ErrorKind::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            ErrorKind::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ErrorKind::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            ErrorKind::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            ErrorKind::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            ErrorKind::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ErrorKind::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            ErrorKind::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            ErrorKind::JsonParse => "JSON_PARSE",
            ErrorKind::InvalidRequest => "INVALID_REQUEST",
            ErrorKind::MethodNotFound => "METHOD_NOT_FOUND",
            ErrorKind::InvalidParams => "INVALID_PARAMS",
            ErrorKind::Internal => "INTERNAL",
            ErrorKind::Unauthenticated => "AUTHENTICATION",
            ErrorKind::PermissionDenied => "AUTHORIZATION",
            ErrorKind::ResourceExhausted => "RESOURCE_EXHAUSTED",
            ErrorKind::Unavailable => "UNAVAILABLE",
            ErrorKind::Other(_) => "SERVER_ERROR",
        }
    }

    /// The kind for an ErrorInfo reason, as received from a peer: the spec spelling
    /// ([`Self::reason`]) or one of the [`LEGACY_REASONS`]. Never use a legacy spelling on output.
    pub fn from_reason(reason: &str) -> Option<ErrorKind> {
        ErrorKind::ALL
            .iter()
            .copied()
            .find(|k| k.reason() == reason)
            .or_else(|| {
                LEGACY_REASONS
                    .iter()
                    .find(|(r, _)| *r == reason)
                    .map(|(_, k)| *k)
            })
    }

    /// The HTTP status of the 1.0 HTTP+JSON binding (the S1 §5.4 table of 1.0.1).
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorKind::TaskNotFound | ErrorKind::MethodNotFound => 404,
            ErrorKind::TaskNotCancelable
            | ErrorKind::PushNotificationNotSupported
            | ErrorKind::UnsupportedOperation
            | ErrorKind::ContentTypeNotSupported
            | ErrorKind::ExtendedAgentCardNotConfigured
            | ErrorKind::ExtensionSupportRequired
            | ErrorKind::VersionNotSupported
            | ErrorKind::JsonParse
            | ErrorKind::InvalidRequest
            | ErrorKind::InvalidParams => 400,
            ErrorKind::InvalidAgentResponse | ErrorKind::Internal | ErrorKind::Other(_) => 500,
            ErrorKind::Unauthenticated => 401,
            ErrorKind::PermissionDenied => 403,
            ErrorKind::ResourceExhausted => 429,
            ErrorKind::Unavailable => 503,
        }
    }

    /// The `google.rpc.Code` name (gRPC status and the REST body's `status`).
    pub const fn grpc_status(self) -> &'static str {
        match self {
            ErrorKind::TaskNotFound | ErrorKind::MethodNotFound => "NOT_FOUND",
            ErrorKind::TaskNotCancelable
            | ErrorKind::PushNotificationNotSupported
            | ErrorKind::UnsupportedOperation
            | ErrorKind::ExtendedAgentCardNotConfigured
            | ErrorKind::ExtensionSupportRequired
            | ErrorKind::VersionNotSupported => "FAILED_PRECONDITION",
            ErrorKind::ContentTypeNotSupported
            | ErrorKind::JsonParse
            | ErrorKind::InvalidRequest
            | ErrorKind::InvalidParams => "INVALID_ARGUMENT",
            ErrorKind::InvalidAgentResponse | ErrorKind::Internal | ErrorKind::Other(_) => {
                "INTERNAL"
            }
            ErrorKind::Unauthenticated => "UNAUTHENTICATED",
            ErrorKind::PermissionDenied => "PERMISSION_DENIED",
            ErrorKind::ResourceExhausted => "RESOURCE_EXHAUSTED",
            ErrorKind::Unavailable => "UNAVAILABLE",
        }
    }

    /// The numeric `google.rpc.Code` of [`Self::grpc_status`].
    pub const fn grpc_code(self) -> i32 {
        match self.grpc_status().as_bytes() {
            b"NOT_FOUND" => 5,
            b"FAILED_PRECONDITION" => 9,
            b"INVALID_ARGUMENT" => 3,
            b"UNAUTHENTICATED" => 16,
            b"PERMISSION_DENIED" => 7,
            b"RESOURCE_EXHAUSTED" => 8,
            b"UNAVAILABLE" => 14,
            _ => 13,
        }
    }

    /// The default message (S1 §9.5 table, T0 defaults).
    pub const fn default_message(self) -> &'static str {
        match self {
            ErrorKind::TaskNotFound => "Task not found",
            ErrorKind::TaskNotCancelable => "Task cannot be canceled",
            ErrorKind::PushNotificationNotSupported => "Push Notification is not supported",
            ErrorKind::UnsupportedOperation => "This operation is not supported",
            ErrorKind::ContentTypeNotSupported => "Incompatible content types",
            ErrorKind::InvalidAgentResponse => "Invalid agent response",
            ErrorKind::ExtendedAgentCardNotConfigured => "Extended Agent Card is not configured",
            ErrorKind::ExtensionSupportRequired => "A required extension was not requested",
            ErrorKind::VersionNotSupported => "Protocol version is not supported",
            ErrorKind::JsonParse => "Invalid JSON payload",
            ErrorKind::InvalidRequest => "Request payload validation error",
            ErrorKind::MethodNotFound => "Method not found",
            ErrorKind::InvalidParams => "Invalid parameters",
            ErrorKind::Internal => "Internal error",
            ErrorKind::Unauthenticated => "Authentication required",
            ErrorKind::PermissionDenied => "Permission denied",
            ErrorKind::ResourceExhausted => "Too many requests",
            ErrorKind::Unavailable => "Service unavailable",
            ErrorKind::Other(_) => "Server error",
        }
    }

    /// True for the A2A-specific errors (-32001..=-32009).
    pub const fn is_a2a(self) -> bool {
        matches!(self.code(), -32009..=-32001)
    }

    /// A best-effort kind from an HTTP status (for 0.3 REST peers that send bare bodies).
    pub const fn from_http_status(status: u16) -> ErrorKind {
        match status {
            400 | 422 => ErrorKind::InvalidParams,
            401 => ErrorKind::Unauthenticated,
            403 => ErrorKind::PermissionDenied,
            404 => ErrorKind::TaskNotFound,
            409 => ErrorKind::TaskNotCancelable,
            415 => ErrorKind::ContentTypeNotSupported,
            429 => ErrorKind::ResourceExhausted,
            501 => ErrorKind::UnsupportedOperation,
            502 => ErrorKind::InvalidAgentResponse,
            503 => ErrorKind::Unavailable,
            _ => ErrorKind::Internal,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name_v1())
    }
}

/// `google.rpc.ErrorInfo` as ProtoJSON `Any`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ErrorInfo {
    /// Always [`ERROR_INFO_TYPE`].
    #[serde(rename = "@type")]
    pub type_url: String,
    /// The reason (`TASK_NOT_FOUND`, ...).
    pub reason: String,
    /// The domain ([`A2A_ERROR_DOMAIN`]).
    pub domain: String,
    /// Extra context (string values).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

/// `google.rpc.Status` as JSON (the 1.0 REST error body's `error` member).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct RpcStatus {
    /// The HTTP status code.
    pub code: i32,
    /// The `google.rpc.Code` name.
    #[serde(default)]
    pub status: String,
    /// The message.
    #[serde(default)]
    pub message: String,
    /// `@type` detail objects (ErrorInfo, BadRequest, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Value>,
}

/// The 1.0 REST error body: `{"error": <google.rpc.Status>}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct RestErrorBody {
    /// The status.
    pub error: RpcStatus,
}

/// One field violation of a `google.rpc.BadRequest` detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FieldViolation {
    /// The JSON path of the field.
    pub field: String,
    /// What is wrong.
    pub description: String,
}

/// An A2A error value: kind, message, ErrorInfo metadata and extra details.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aError {
    /// The kind.
    pub kind: ErrorKind,
    /// The human-readable message.
    pub message: String,
    /// ErrorInfo metadata (for example `taskId`).
    pub metadata: BTreeMap<String, String>,
    /// Field violations, sent as a `google.rpc.BadRequest` detail in 1.0.
    pub field_violations: Vec<FieldViolation>,
    /// Other `@type` details received or to send (1.0), kept verbatim.
    pub extra_details: Vec<Value>,
    /// The 0.3 `data` value received, or to send in 0.3 instead of the metadata object.
    pub data_v03: Option<Value>,
}

impl fmt::Display for A2aError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.kind.name_v1(),
            self.kind.code(),
            self.message
        )
    }
}

impl std::error::Error for A2aError {}

impl A2aError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        A2aError {
            kind,
            message: message.into(),
            metadata: BTreeMap::new(),
            field_violations: Vec::new(),
            extra_details: Vec::new(),
            data_v03: None,
        }
    }

    /// An error of `kind` with its default message.
    pub fn of(kind: ErrorKind) -> Self {
        Self::new(kind, kind.default_message())
    }

    /// Adds an ErrorInfo metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Adds a field violation (sent as `google.rpc.BadRequest`).
    pub fn with_field_violation(
        mut self,
        field: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.field_violations.push(FieldViolation {
            field: field.into(),
            description: description.into(),
        });
        self
    }

    /// `TaskNotFoundError` for `task_id` (metadata `taskId`).
    pub fn task_not_found(task_id: &str) -> Self {
        Self::of(ErrorKind::TaskNotFound).with_metadata("taskId", task_id)
    }

    /// `TaskNotCancelableError` for `task_id`.
    pub fn task_not_cancelable(task_id: &str) -> Self {
        Self::of(ErrorKind::TaskNotCancelable).with_metadata("taskId", task_id)
    }

    /// `UnsupportedOperationError` with `message`.
    pub fn unsupported_operation(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedOperation, message)
    }

    /// `InvalidParamsError` with `message`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// `MethodNotFoundError` for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorKind::MethodNotFound,
            format!("Method not found: {method}"),
        )
        .with_metadata("method", method)
    }

    /// `VersionNotSupportedError` for `version`, listing what is supported.
    pub fn version_not_supported(version: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorKind::VersionNotSupported,
            format!("Protocol version {version} is not supported"),
        )
        .with_metadata("requestedVersion", version)
        .with_metadata("supportedVersions", supported.join(","))
    }

    /// `InternalError` with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// The ErrorInfo detail of this error.
    pub fn error_info(&self) -> ErrorInfo {
        ErrorInfo {
            type_url: ERROR_INFO_TYPE.into(),
            reason: self.kind.reason().into(),
            domain: A2A_ERROR_DOMAIN.into(),
            metadata: self.metadata.clone(),
        }
    }

    /// The 1.0 detail list: ErrorInfo, then BadRequest (if any violations), then extras.
    pub fn details_v1(&self) -> Vec<Value> {
        let mut d = vec![serde_json::to_value(self.error_info()).unwrap_or(Value::Null)];
        if !self.field_violations.is_empty() {
            d.push(json!({
                "@type": BAD_REQUEST_TYPE,
                "fieldViolations": self.field_violations,
            }));
        }
        d.extend(self.extra_details.iter().cloned());
        d
    }

    /// The 1.0 JSON-RPC error object: `data` is `[ErrorInfo, ...]` (S1 §9.5).
    pub fn to_jsonrpc_v1(&self) -> JsonRpcError {
        let e = self.bounded();
        JsonRpcError {
            code: e.kind.code(),
            message: e.message.clone(),
            data: Some(Value::Array(e.details_v1())),
        }
    }

    /// The 0.3 JSON-RPC error object: `data` is [`Self::data_v03`] if set, else the metadata
    /// as an object (omitted when empty).
    pub fn to_jsonrpc_v03(&self) -> JsonRpcError {
        let e = self.bounded();
        let data = e.data_v03.clone().or_else(|| {
            let mut m: Map<String, Value> = e
                .metadata
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            if !e.field_violations.is_empty() {
                m.insert(
                    "fieldViolations".into(),
                    serde_json::to_value(&e.field_violations).unwrap_or(Value::Null),
                );
            }
            (!m.is_empty()).then_some(Value::Object(m))
        });
        JsonRpcError {
            code: e.kind.code(),
            message: e.message.clone(),
            data,
        }
    }

    /// The 1.0 HTTP+JSON error body (S1 §11.6); send with [`Self::http_status`].
    pub fn to_rest_body(&self) -> RestErrorBody {
        let e = self.bounded();
        RestErrorBody {
            error: RpcStatus {
                code: i32::from(e.http_status()),
                status: e.kind.grpc_status().into(),
                message: e.message.clone(),
                details: e.details_v1(),
            },
        }
    }

    /// The HTTP status for the REST binding.
    pub fn http_status(&self) -> u16 {
        self.kind.http_status()
    }

    /// Reads a JSON-RPC error object of either version: the kind comes from an A2A ErrorInfo
    /// reason in a 1.0 `data` array, else from the code.
    pub fn from_jsonrpc(e: &JsonRpcError) -> Self {
        let mut err = A2aError::new(ErrorKind::from_code(e.code), e.message.clone());
        match &e.data {
            Some(Value::Array(details)) => err.absorb_details(details),
            Some(other) => {
                if let Value::Object(o) = other {
                    for (k, v) in o {
                        if let Value::String(s) = v {
                            err.metadata.insert(k.clone(), s.clone());
                        }
                    }
                }
                err.data_v03 = Some(other.clone());
            }
            None => {}
        }
        err
    }

    /// Reads a 1.0 REST error body (`{"error":{...}}`); `http_status` is used when the body
    /// has no A2A ErrorInfo. Bare 0.3 bodies (`{"message":..}`) are accepted too.
    pub fn from_rest_body(body: &Value, http_status: u16) -> Self {
        if let Some(status) = body
            .get("error")
            .and_then(|e| serde_json::from_value::<RpcStatus>(e.clone()).ok())
        {
            let kind = ErrorKind::from_http_status(http_status);
            let mut err = A2aError::new(kind, status.message);
            err.absorb_details(&status.details);
            return err;
        }
        let message = body
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| body.get("detail").and_then(Value::as_str))
            .unwrap_or("")
            .to_owned();
        let kind = body
            .get("code")
            .and_then(Value::as_i64)
            .filter(|c| *c < 0)
            .map(ErrorKind::from_code)
            .unwrap_or_else(|| ErrorKind::from_http_status(http_status));
        let mut err = A2aError::new(kind, message);
        err.data_v03 = body.get("data").cloned();
        err
    }

    fn absorb_details(&mut self, details: &[Value]) {
        for d in details {
            match d.get("@type").and_then(Value::as_str) {
                Some(ERROR_INFO_TYPE) => {
                    if let Ok(info) = serde_json::from_value::<ErrorInfo>(d.clone()) {
                        if info.domain == A2A_ERROR_DOMAIN
                            && let Some(k) = ErrorKind::from_reason(&info.reason)
                        {
                            self.kind = k;
                        }
                        self.metadata.extend(info.metadata);
                        continue;
                    }
                    self.extra_details.push(d.clone());
                }
                Some(BAD_REQUEST_TYPE) => {
                    if let Some(v) = d.get("fieldViolations")
                        && let Ok(fv) = serde_json::from_value::<Vec<FieldViolation>>(v.clone())
                    {
                        self.field_violations.extend(fv);
                        continue;
                    }
                    self.extra_details.push(d.clone());
                }
                _ => self.extra_details.push(d.clone()),
            }
        }
    }
}

impl From<A2aError> for JsonRpcError {
    fn from(e: A2aError) -> Self {
        e.to_jsonrpc_v1()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let k = ErrorKind::TaskNotFound;
        assert_eq!(
            (k.code(), k.http_status(), k.grpc_status(), k.reason()),
            (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND")
        );
        assert_eq!(
            ErrorKind::ExtendedAgentCardNotConfigured.name_v03(),
            Some("AuthenticatedExtendedCardNotConfiguredError")
        );
        assert_eq!(ErrorKind::VersionNotSupported.name_v03(), None);
        assert_eq!(ErrorKind::InvalidAgentResponse.http_status(), 500);
        assert_eq!(
            ErrorKind::ContentTypeNotSupported.grpc_status(),
            "INVALID_ARGUMENT"
        );
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_reason(k.reason()), Some(*k));
            if k.code() != -32000 {
                assert_eq!(ErrorKind::from_code(k.code()), *k);
            }
        }
    }

    #[test]
    fn legacy_reasons_are_read_never_written() {
        for (legacy, kind) in LEGACY_REASONS {
            assert_eq!(ErrorKind::from_reason(legacy), Some(*kind));
            assert_eq!(ErrorKind::from_reason(kind.reason()), Some(*kind));
            assert_ne!(kind.reason(), *legacy);
        }
        assert_eq!(ErrorKind::JsonParse.reason(), "JSON_PARSE");
        assert_eq!(ErrorKind::Internal.reason(), "INTERNAL");
        // A peer's legacy reason is read; the error is written back in the spec spelling.
        let j = JsonRpcError {
            code: -32099,
            message: "x".into(),
            data: Some(
                json!([{"@type": ERROR_INFO_TYPE, "reason": "INTERNAL_ERROR",
                               "domain": A2A_ERROR_DOMAIN}]),
            ),
        };
        let e = A2aError::from_jsonrpc(&j);
        assert_eq!(e.kind, ErrorKind::Internal);
        assert_eq!(e.error_info().reason, "INTERNAL");
    }

    #[test]
    fn v1_jsonrpc_form_round_trips() {
        let e = A2aError::task_not_found("t1");
        let j = e.to_jsonrpc_v1();
        assert_eq!(
            serde_json::to_value(&j).unwrap(),
            json!({"code":-32001,"message":"Task not found","data":[{"@type":ERROR_INFO_TYPE,"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]})
        );
        assert_eq!(A2aError::from_jsonrpc(&j), e);
    }

    #[test]
    fn rest_body_round_trips() {
        let e = A2aError::invalid_params("bad")
            .with_field_violation("pageSize", "Must be between 1 and 100 inclusive");
        let b = serde_json::to_value(e.to_rest_body()).unwrap();
        assert_eq!(b["error"]["code"], 400);
        assert_eq!(b["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            b["error"]["details"][1]["fieldViolations"][0]["field"],
            "pageSize"
        );
        assert_eq!(A2aError::from_rest_body(&b, 400), e);
        // Several errors share 400: the reason decides.
        let e = A2aError::of(ErrorKind::VersionNotSupported);
        let b = serde_json::to_value(e.to_rest_body()).unwrap();
        assert_eq!(
            A2aError::from_rest_body(&b, 400).kind,
            ErrorKind::VersionNotSupported
        );
    }

    #[test]
    fn v03_form() {
        let e = A2aError::task_not_found("123");
        let j = e.to_jsonrpc_v03();
        assert_eq!(j.data, Some(json!({"taskId":"123"})));
        let back = A2aError::from_jsonrpc(&j);
        assert_eq!(back.kind, ErrorKind::TaskNotFound);
        assert_eq!(back.metadata.get("taskId").map(String::as_str), Some("123"));
        assert_eq!(
            A2aError::of(ErrorKind::MethodNotFound)
                .to_jsonrpc_v03()
                .data,
            None
        );
    }

    #[test]
    fn bare_v03_rest_bodies() {
        let e = A2aError::from_rest_body(&json!({"message":"Task not found"}), 404);
        assert_eq!(e.kind, ErrorKind::TaskNotFound);
        let e = A2aError::from_rest_body(&json!({"code":-32002,"message":"x","data":{"a":1}}), 409);
        assert_eq!(e.kind, ErrorKind::TaskNotCancelable);
        assert_eq!(e.data_v03, Some(json!({"a":1})));
    }
}
