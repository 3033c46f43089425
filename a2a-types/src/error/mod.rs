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

use serde_json::{Map, Value, json};

use crate::jsonrpc::JsonRpcError;

mod kind;
#[cfg(test)]
mod tests;
mod wire;

pub use kind::{ErrorKind, LEGACY_REASONS};
pub use wire::{
    A2A_ERROR_DOMAIN, BAD_REQUEST_TYPE, ERROR_INFO_TYPE, ErrorInfo, FieldViolation, RestErrorBody,
    RpcStatus,
};

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
