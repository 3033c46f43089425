//! [`ErrorKind`]: each error's code, names, reason, HTTP and gRPC status (the tables).

use std::fmt;

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
