//! A2A errors raised by the runtime, rendered through `a2a_types::error` (in the form of the
//! caller's version by the edge, `edge::errors`, which knows the versions).
//!
//! The HTTP statuses of the HTTP+JSON binding follow the spec 1.0 table by default (400 for a
//! terminal cancel, an operation on a terminal task, disabled streaming/push and a wrong content
//! type). [`RestStatusTable::Camel`] selects the Camel guide's table instead (409 for a terminal
//! cancel, 405 for unsupported operations and push, 415 for a wrong content type), for callers
//! migrating from it. Either way the `google.rpc.ErrorInfo` reason identifies the error, and an
//! explicit status (413 for an oversized body, 405 for a wrong HTTP method) is kept.
//!
//! The Camel table also names three errors as the Camel guide does, on JSON-RPC and HTTP+JSON
//! alike ([`RestStatusTable::capacity_refusal`], [`RestStatusTable::foreign_task`],
//! [`RestStatusTable::push_not_supported`]): the capacity refusal's ErrorInfo reason is
//! `SERVER_BUSY` (`ServerBusyError`), a task of another caller is 403 `AuthorizationError`
//! (the spec's default: 404 `TaskNotFoundError`, which does not tell that the task exists), and
//! a push operation on an agent without push support is `UnsupportedOperationError`.

pub use a2a_types::error::ErrorKind;

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
    /// The 1.0 `ErrorInfo.reason` when it is not the kind's own (the Camel table's
    /// `SERVER_BUSY`); JSON-RPC and HTTP+JSON only.
    pub reason: Option<&'static str>,
}

impl std::fmt::Display for A2aError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.name_v1(), self.message)
    }
}

impl std::error::Error for A2aError {}

/// Which HTTP+JSON status table errors follow (`rest_status_table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestStatusTable {
    /// The spec 1.0 table (`ErrorKind::http_status`). The default.
    #[default]
    Spec,
    /// The Camel guide's table ([`camel_http_status`]).
    Camel,
}

impl std::str::FromStr for RestStatusTable {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "spec" => Ok(RestStatusTable::Spec),
            "camel" => Ok(RestStatusTable::Camel),
            o => Err(format!(
                "rest_status_table must be \"spec\" or \"camel\", not {o:?}"
            )),
        }
    }
}

impl std::fmt::Display for RestStatusTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RestStatusTable::Spec => "spec",
            RestStatusTable::Camel => "camel",
        })
    }
}

impl RestStatusTable {
    /// The HTTP+JSON status of `kind` in this table.
    pub fn status(self, kind: ErrorKind) -> u16 {
        match self {
            RestStatusTable::Spec => kind.http_status(),
            RestStatusTable::Camel => camel_http_status(kind),
        }
    }
}

/// The ErrorInfo reason of the Camel guide's `ServerBusyError` (the capacity refusal).
pub const SERVER_BUSY: &str = "SERVER_BUSY";

impl RestStatusTable {
    /// Whether this is the Camel guide's table.
    pub fn is_camel(self) -> bool {
        self == RestStatusTable::Camel
    }

    /// The capacity refusal (`max_concurrent_tasks`, `task_queue_size`, a full task store):
    /// `ResourceExhaustedError` (429, -32000) with `message`; in the Camel table its ErrorInfo
    /// reason is [`SERVER_BUSY`], the Camel guide's `ServerBusyError`.
    pub fn capacity_refusal(self, message: impl Into<String>) -> A2aError {
        let e = A2aError::new(ErrorKind::ResourceExhausted, message);
        match self {
            RestStatusTable::Spec => e,
            RestStatusTable::Camel => A2aError {
                reason: Some(SERVER_BUSY),
                ..e
            },
        }
    }

    /// A task that exists but belongs to another caller: `TaskNotFoundError` (404, -32001) as
    /// the spec asks (it does not tell that the task exists); in the Camel table
    /// `AuthorizationError` (403, -32000), as the Camel guide's table says.
    pub fn foreign_task(self, id: &str) -> A2aError {
        match self {
            RestStatusTable::Spec => A2aError::task_not_found(id),
            RestStatusTable::Camel => A2aError::new(
                ErrorKind::PermissionDenied,
                "the authenticated caller is not authorized for this task",
            )
            .with_meta("taskId", id),
        }
    }

    /// A push notification operation on an agent without push support:
    /// `PushNotificationNotSupportedError` (-32003); in the Camel table
    /// `UnsupportedOperationError` (-32004, 405 on HTTP+JSON), as the Camel guide's table says.
    pub fn push_not_supported(self) -> A2aError {
        let kind = match self {
            RestStatusTable::Spec => ErrorKind::PushNotificationNotSupported,
            RestStatusTable::Camel => ErrorKind::UnsupportedOperation,
        };
        A2aError::new(kind, "Push Notification is not supported")
    }
}

/// The HTTP+JSON status of `kind` in the Camel guide's table.
pub fn camel_http_status(kind: ErrorKind) -> u16 {
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
            reason: None,
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
    /// Invalid params for `params` that do not read as a `T` (`what`, e.g. `SendMessageRequest`):
    /// the message and the `field` metadata name the path of the first failure (found by a
    /// second, path-keeping read, only on this error path); `e` is the first read's error.
    pub fn invalid_as<T: serde::de::DeserializeOwned>(
        what: &str,
        params: &serde_json::Value,
        e: impl std::fmt::Display,
    ) -> Self {
        match a2a_types::strict::parse_value_ref::<T>(params) {
            Err(p) if p.path != "$" => {
                Self::invalid_params(format!("invalid {what}: {}: {}", p.path, p.message))
                    .with_meta("field", p.path)
            }
            _ => Self::invalid_params(format!("invalid {what}: {e}")),
        }
    }
    /// HTTP status on the HTTP+JSON binding (the spec table unless a status was set).
    pub fn http_status(&self) -> u16 {
        self.status.unwrap_or_else(|| self.kind.http_status())
    }

    /// Fix the HTTP status from `table` (an explicit status is kept).
    pub fn in_table(mut self, table: RestStatusTable) -> Self {
        if self.status.is_none() {
            self.status = Some(table.status(self.kind));
        }
        self
    }

    /// The shared model's error value.
    pub fn to_types(&self) -> a2a_types::error::A2aError {
        let mut e = a2a_types::error::A2aError::new(self.kind, self.message.clone());
        e.metadata = self.metadata.clone();
        e
    }
}

impl From<a2a_types::error::A2aError> for A2aError {
    fn from(e: a2a_types::error::A2aError) -> Self {
        A2aError {
            kind: e.kind,
            message: e.message,
            status: None,
            metadata: e.metadata,
            reason: None,
        }
    }
}
