//! [`parse_request`]: a request body checked and classified as -32700 or -32600 before dispatch.

use std::fmt;

use serde_json::Value;

use super::envelope::{JSONRPC_VERSION, JsonRpcRequest};
use super::id::Id;

/// Why a JSON-RPC request body was refused before dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestParseError {
    /// The id to answer with (`null` if it could not be read).
    pub id: Id,
    /// `-32700` (not JSON) or `-32600` (not a valid request object).
    pub code: i64,
    /// A description naming what was wrong.
    pub message: String,
}

impl RequestParseError {
    /// True for `-32700` (the body is not JSON).
    pub fn is_parse_error(&self) -> bool {
        self.code == crate::error::ErrorKind::JsonParse.code()
    }

    /// The matching A2A error.
    pub fn to_a2a_error(&self) -> crate::error::A2aError {
        crate::error::A2aError::new(
            crate::error::ErrorKind::from_code(self.code),
            self.message.clone(),
        )
    }
}

impl fmt::Display for RequestParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RequestParseError {}

/// Parses a JSON-RPC request body: invalid JSON is `-32700`; a non-object, `jsonrpc` other than
/// `"2.0"`, a missing or non-string `method`, an id that is not string/number/null, or `params`
/// that is not an object or array is `-32600`.
pub fn parse_request(body: &[u8]) -> Result<JsonRpcRequest<Value>, RequestParseError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| RequestParseError {
        id: Id::Null,
        code: crate::error::ErrorKind::JsonParse.code(),
        message: format!("invalid JSON: {e}"),
    })?;
    request_from_value(v)
}

/// [`parse_request`] for an already parsed JSON value.
pub fn request_from_value(v: Value) -> Result<JsonRpcRequest<Value>, RequestParseError> {
    let invalid = |id: &Id, m: String| RequestParseError {
        id: id.clone(),
        code: crate::error::ErrorKind::InvalidRequest.code(),
        message: m,
    };
    let Value::Object(mut o) = v else {
        return Err(invalid(&Id::Null, "request must be a JSON object".into()));
    };
    let id = match o.remove("id") {
        None => None,
        Some(v) => match Id::from_value(&v) {
            Some(id) => Some(id),
            None => {
                return Err(invalid(
                    &Id::Null,
                    "id: must be a string, number or null".into(),
                ));
            }
        },
    };
    let rid = id.clone().unwrap_or(Id::Null);
    match o.get("jsonrpc") {
        Some(Value::String(s)) if s == JSONRPC_VERSION => {}
        Some(other) => {
            return Err(invalid(
                &rid,
                format!("jsonrpc: must be \"2.0\", got {other}"),
            ));
        }
        None => return Err(invalid(&rid, "missing required member jsonrpc".into())),
    }
    let method = match o.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(invalid(&rid, "method: must be a string".into())),
        None => return Err(invalid(&rid, "missing required member method".into())),
    };
    let params = match o.remove("params") {
        None => None,
        Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
        Some(Value::Null) => None,
        Some(_) => {
            return Err(invalid(
                &rid,
                "params: must be an object or an array".into(),
            ));
        }
    };
    Ok(JsonRpcRequest {
        jsonrpc: JSONRPC_VERSION.into(),
        id,
        method,
        params,
    })
}
