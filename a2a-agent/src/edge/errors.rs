//! An A2A error in the form of the caller's version: the JSON-RPC `error` member and the
//! HTTP+JSON error body (methods of [`A2aError`]).

use serde_json::Value;

use super::version::Version;
use crate::error::A2aError;

impl A2aError {
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
