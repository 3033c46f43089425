//! Answers in the caller's form: errors in its version and [`Binding`], JSON bodies.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;

use crate::edge::version::Version;
use crate::error::{A2aError, ErrorKind};
use a2a_types::envelope::RawId;

/// `application/a2a+json` (the types' [`a2a_types::version::APPLICATION_A2A_JSON`]).
pub const A2A_JSON: &str = a2a_types::version::APPLICATION_A2A_JSON;

/// Which binding a request reached (the HTTP pipeline's are JSON-RPC and HTTP+JSON; the gRPC
/// binding writes its own errors).
pub(crate) use a2a_types::version::Binding;

/// An error answer (without a JSON-RPC id).
pub(crate) fn error_response(e: &A2aError, version: Version, binding: Binding) -> Response {
    jsonrpc_or_rest_error(e, version, binding, &RawId::null())
}

/// An error answer; on JSON-RPC it carries `id` (the caller's, when the body could be read).
pub(crate) fn jsonrpc_or_rest_error(
    e: &A2aError,
    version: Version,
    binding: Binding,
    id: &RawId,
) -> Response {
    crate::otel::note("a2a.refusal_code", e.kind.name_v1());
    match binding {
        Binding::JsonRpc => {
            // Transport-level refusals keep their status; authentication failures are 401 (the
            // Camel guide); other A2A errors are 200.
            let status = match e.status {
                Some(413) => StatusCode::PAYLOAD_TOO_LARGE,
                Some(405) if e.kind == ErrorKind::MethodNotFound => StatusCode::METHOD_NOT_ALLOWED,
                _ if e.kind == ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
                _ => StatusCode::OK,
            };
            let mut r = Response::new(Body::from(id.error_text(&e.jsonrpc_error(version))));
            *r.status_mut() = status;
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            if e.kind == ErrorKind::Unauthenticated {
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            r
        }
        Binding::HttpJson | Binding::Grpc => {
            let status =
                StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let ct = if version == Version::V1 {
                A2A_JSON
            } else {
                "application/json"
            };
            let mut r = json_response(status, ct, &e.rest_body(version));
            if e.kind == ErrorKind::Unauthenticated {
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            r
        }
    }
}

/// The id of a JSON-RPC body, `null` when it cannot be read.
pub(crate) fn peek_id(body: &[u8]) -> RawId {
    a2a_types::envelope::parse_envelope(body)
        .map(|e| e.id)
        .unwrap_or_else(|_| RawId::null())
}

pub(crate) fn json_response(status: StatusCode, ct: &'static str, v: &Value) -> Response {
    json_bytes_response(status, ct, serde_json::to_vec(v).unwrap_or_default())
}

/// A response of JSON bytes already serialised.
pub(crate) fn json_bytes_response(status: StatusCode, ct: &'static str, body: Vec<u8>) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    r
}

impl IntoResponse for A2aError {
    fn into_response(self) -> Response {
        error_response(&self, Version::V1, Binding::HttpJson)
    }
}
