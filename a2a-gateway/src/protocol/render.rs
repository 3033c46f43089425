//! Rendering a [`Refusal`] in the caller's form: the JSON-RPC error of either version, the 1.0
//! `google.rpc.Status` of HTTP+JSON, and the legacy card body.

use std::borrow::Cow;
use std::collections::HashMap;

use a2a_types::elide::{self, elide};
use a2a_types::envelope::RawId;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tonic::Code;
use tonic_types::{ErrorDetails, StatusExt};

use crate::{
    protocol::errors::GATEWAY_DOMAIN, protocol::errors::Origin, protocol::errors::Refusal,
    protocol::errors::SPEC_DOMAIN, protocol::errors::Version, protocol::errors::gateway_domain,
    protocol::errors::spec_default,
};

/// Which error form a path's callers expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A JSON-RPC error response in this version's form.
    Rpc(Version),
    /// A 1.0 `google.rpc.Status` body.
    Rest,
    /// The 0.3 HTTP+JSON error object (`{code, message, data}`, the 0.3 JSON-RPC error's
    /// members) of a 0.3 caller of the HTTP+JSON routes.
    Rest03,
}

/// A JSON response from text.
pub fn json_text_response(
    status: StatusCode,
    content_type: &'static str,
    body: String,
) -> Response {
    let mut resp = (status, body).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// `r` in `form` with its own HTTP status (not audited: nothing reached a handler).
pub fn render(form: Form, r: &Refusal) -> Response {
    let trace = crate::ids::id_hex(16);
    let status = StatusCode::from_u16(r.rest_status()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = match form {
        Form::Rpc(v) => r.jsonrpc_text(v, &RawId::null(), &trace),
        Form::Rest => r.status_body(&trace).to_string(),
        Form::Rest03 => r.jsonrpc_error(Version::V03, &trace).to_string(),
    };
    let mut resp = json_text_response(status, "application/json", body);
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}

pub(crate) fn json_response(
    status: StatusCode,
    content_type: &'static str,
    body: &Value,
) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

pub(crate) fn accept_header(resp: &mut Response) {
    resp.headers_mut().insert(
        header::ACCEPT,
        HeaderValue::from_static(a2a_agent::edge::media::ACCEPTED_TYPES),
    );
}

/// An extra member as it may be written: its text elided ([`a2a_types::elide`]).
fn bounded(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(elide(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(bounded).collect()),
        other => other.clone(),
    }
}

impl Refusal {
    /// The message as it may be written: caller values in it elided ([`a2a_types::elide`]).
    pub fn bounded_message(&self) -> Cow<'_, str> {
        elide::message(&self.message)
    }

    /// The JSON-RPC `error` object in the caller's version.
    pub fn jsonrpc_error(&self, version: Version, trace_id: &str) -> Value {
        let message = self.bounded_message();
        match version {
            Version::V03 => {
                let mut data = Map::new();
                data.insert("type".into(), json!(self.type_name));
                for (k, v) in &self.extra {
                    data.insert(k.clone(), bounded(v));
                }
                data.insert("code".into(), json!(self.code));
                data.insert("trace_id".into(), json!(trace_id));
                json!({"code": self.rpc_code, "message": message, "data": Value::Object(data)})
            }
            Version::V1 => {
                json!({"code": self.rpc_code, "message": message, "data": [self.error_info(trace_id)]})
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
            meta.insert(k.clone(), json!(elide(&s)));
        }
        json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": self.reason,
            "domain": match self.origin { Origin::Gateway => gateway_domain(), Origin::Spec => SPEC_DOMAIN.into() },
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
            "message": self.bounded_message(),
            "details": [self.error_info(trace_id)],
        }})
    }

    /// The refusal as a gRPC status: the code of its `google.rpc.Status` body, the message, and
    /// the same `ErrorInfo` in `grpc-status-details-bin`.
    pub fn grpc_status(&self, trace_id: &str) -> tonic::Status {
        let info = self.error_info(trace_id);
        let metadata: HashMap<String, String> = info
            .get("metadata")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
        let domain = info
            .get("domain")
            .and_then(Value::as_str)
            .unwrap_or(GATEWAY_DOMAIN);
        let mut details = ErrorDetails::with_error_info(self.reason.clone(), domain, metadata);
        if let Some(f) = &self.field {
            details.add_bad_request_violation(elide(f), self.bounded_message());
        }
        let code = match self.rpc_code {
            -32601 => Code::Unimplemented,
            c => grpc_code(self.rest_status(), c),
        };
        tonic::Status::with_error_details(code, self.bounded_message(), details)
    }

    /// The legacy body of a card refusal for a caller that names no version.
    pub fn legacy_body(&self, trace_id: &str) -> Value {
        json!({"error": {"code": self.code, "message": self.bounded_message(), "trace_id": trace_id}})
    }
}

/// The gRPC code of a refusal by its HTTP status (A2A errors by their JSON-RPC code): one table
/// for the `status` name of HTTP+JSON bodies and the code of gRPC answers.
fn grpc_code(status: u16, rpc_code: i64) -> Code {
    match (status, rpc_code) {
        (_, -32002 | -32003 | -32004 | -32007 | -32008 | -32009) => Code::FailedPrecondition,
        (400 | 413 | 415, _) => Code::InvalidArgument,
        (401, _) => Code::Unauthenticated,
        (405, _) => Code::Unimplemented,
        (403, _) => Code::PermissionDenied,
        (404, _) => Code::NotFound,
        (408, _) => Code::DeadlineExceeded,
        (409, _) => Code::Aborted,
        (429, _) => Code::ResourceExhausted,
        (502..=504, _) => Code::Unavailable,
        _ => Code::Internal,
    }
}

fn grpc_status_name(status: u16, rpc_code: i64) -> &'static str {
    match grpc_code(status, rpc_code) {
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::Unauthenticated => "UNAUTHENTICATED",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::NotFound => "NOT_FOUND",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::Aborted => "ABORTED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::Unavailable => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}
