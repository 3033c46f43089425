//! Rendering a [`Refusal`] in the caller's form: the JSON-RPC error of either version, the 1.0
//! `google.rpc.Status` of HTTP+JSON, and the legacy card body.

use a2a_types::envelope::RawId;
use serde_json::{Map, Value, json};

use crate::errors::{GATEWAY_DOMAIN, Origin, Refusal, SPEC_DOMAIN, Version, spec_default};

impl Refusal {
    /// The JSON-RPC `error` object in the caller's version.
    pub fn jsonrpc_error(&self, version: Version, trace_id: &str) -> Value {
        match version {
            Version::V03 => {
                let mut data = Map::new();
                data.insert("type".into(), json!(self.type_name));
                for (k, v) in &self.extra {
                    data.insert(k.clone(), v.clone());
                }
                data.insert("code".into(), json!(self.code));
                data.insert("trace_id".into(), json!(trace_id));
                json!({"code": self.rpc_code, "message": self.message, "data": Value::Object(data)})
            }
            Version::V10 => {
                json!({"code": self.rpc_code, "message": self.message, "data": [self.error_info(trace_id)]})
            }
        }
    }

    /// A full JSON-RPC error response.
    pub fn jsonrpc_response(&self, version: Version, id: &Value, trace_id: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "error": self.jsonrpc_error(version, trace_id)})
    }

    /// A full JSON-RPC error response as text, the id written exactly as the caller sent it.
    pub fn jsonrpc_text(&self, version: Version, id: &RawId, trace_id: &str) -> String {
        id.error_text(&self.jsonrpc_error(version, trace_id))
    }

    /// The 1.0 `google.rpc.ErrorInfo`.
    pub fn error_info(&self, trace_id: &str) -> Value {
        let mut meta = Map::new();
        meta.insert("code".into(), json!(self.code));
        meta.insert("traceId".into(), json!(trace_id));
        for (k, v) in &self.extra {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| i.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            meta.insert(k.clone(), json!(s));
        }
        json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.reason,
            "domain": match self.origin { Origin::Gateway => GATEWAY_DOMAIN, Origin::Spec => SPEC_DOMAIN },
            "metadata": Value::Object(meta),
        })
    }

    /// The HTTP status of this refusal on the 1.0 HTTP+JSON binding.
    pub fn rest_status(&self) -> u16 {
        if self.code == "a2a_upstream_error" {
            return spec_default(self.rpc_code).0;
        }
        self.status
    }

    /// A `google.rpc.Status` body (HTTP+JSON 1.0, 1.0 card requests).
    pub fn status_body(&self, trace_id: &str) -> Value {
        let status = self.rest_status();
        json!({"error": {
            "code": status,
            "status": grpc_status_name(status, self.rpc_code),
            "message": self.message,
            "details": [self.error_info(trace_id)],
        }})
    }

    /// The legacy body of a card refusal for a caller that names no version.
    pub fn legacy_body(&self, trace_id: &str) -> Value {
        json!({"error": {"code": self.code, "message": self.message, "trace_id": trace_id}})
    }
}

fn grpc_status_name(status: u16, rpc_code: i64) -> &'static str {
    match (status, rpc_code) {
        (_, -32002 | -32003 | -32004 | -32007 | -32008 | -32009) => "FAILED_PRECONDITION",
        (400 | 413 | 415, _) => "INVALID_ARGUMENT",
        (401, _) => "UNAUTHENTICATED",
        (405, _) => "UNIMPLEMENTED",
        (403, _) => "PERMISSION_DENIED",
        (404, _) => "NOT_FOUND",
        (409, _) => "ABORTED",
        (429, _) => "RESOURCE_EXHAUSTED",
        (502..=504, _) => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}
