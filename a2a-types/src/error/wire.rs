//! The `google.rpc` shapes of an error on the wire: ErrorInfo, Status, the REST body, BadRequest.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// ErrorInfo `domain` of every A2A error.
pub const A2A_ERROR_DOMAIN: &str = "a2a-protocol.org";
/// `@type` of `google.rpc.ErrorInfo`.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `@type` of `google.rpc.BadRequest`.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

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
