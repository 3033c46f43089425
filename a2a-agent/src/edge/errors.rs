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
        let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
        if version == Version::V1 {
            self.own_reason(v.get_mut("data"));
        }
        v
    }

    /// Put [`A2aError::reason`], when set, in the ErrorInfo of `details` (1.0: the first one).
    fn own_reason(&self, details: Option<&mut Value>) {
        if let (Some(r), Some(Value::Array(d))) = (self.reason, details)
            && let Some(info) = d.first_mut().and_then(Value::as_object_mut)
        {
            info.insert("reason".into(), Value::from(r));
        }
    }

    /// The HTTP+JSON error body in the form of `version`.
    pub fn rest_body(&self, version: Version) -> Value {
        match version {
            Version::V1 => {
                let mut v =
                    serde_json::to_value(self.to_types().to_rest_body()).unwrap_or(Value::Null);
                v["error"]["code"] = Value::from(self.http_status());
                self.own_reason(v.get_mut("error").and_then(|e| e.get_mut("details")));
                v
            }
            // 0.3 REST has no normative error body; a2a-js expects `{code, message, data?}`.
            Version::V03 => self.jsonrpc_error(Version::V03),
        }
    }
}
