//! Error forms at the edge of the router: every error the gateway writes is JSON in the caller's
//! A2A form, including the ones no handler decides.
//!
//! [`guard`] wraps the whole router:
//! - a path whose segments are not valid percent-encoded UTF-8 is refused (400, `a2a_bad_path`);
//! - a declared `Content-Length` over the limit is refused at once, before the body is read
//!   (413 `a2a_payload_too_large`, `Connection: close`);
//! - any other error response that is not JSON (axum's 404/405 with empty bodies, its
//!   text/plain 400/413/415/422 rejections) is rewritten into the same status in A2A form.
//!
//! The form follows the path and the version: the JSON-RPC endpoints (`/a2a/{agent}`,
//! `/a2a/{agent}/{op}`) get a JSON-RPC error object with `id: null` in the requested version's
//! form; the HTTP+JSON routes under `/a2a/{agent}/v1/` get the 1.0 `google.rpc.Status` body,
//! or the 0.3 error object (`{code, message, data}`) for a 0.3 caller (no `A2A-Version`, or
//! 0.x); everything else (cards, push callbacks, `/admin`, unknown paths) gets the 1.0
//! `google.rpc.Status` body.

use std::sync::Arc;

use a2a_types::envelope::{Envelope, EnvelopeError, EnvelopeErrorKind, RawId, parse_envelope};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use serde_json::{Value, json};

use crate::edge::negotiate;
use crate::protocol::ops::GatewayOp;
use crate::protocol::ops::Operation;
use crate::protocol::xlate;
use crate::{config::MAX_REQUEST_BYTES, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
// Kept here as well for one release (their previous path).
pub use crate::{
    protocol::render::Form, protocol::render::json_text_response, protocol::render::render,
};

/// The error form of `path` (see the module documentation).
pub fn form_of(path: &str, headers: &HeaderMap, query: Option<&str>, serve_v1: bool) -> Form {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (rpc, rest) = match segs.as_slice() {
        ["a2a", ".well-known", ..] => (false, false),
        ["a2a", _] => (true, false),
        ["a2a", _, op] => (
            *op != "v1" && *op != ".well-known" && *op != "push:notify",
            *op == "v1",
        ),
        ["a2a", _, "v1", ..] => (false, true),
        _ => (false, false),
    };
    if !rpc && !rest {
        return Form::Rest;
    }
    // The version the caller named (none = 0.3), or the form its refusal would take.
    let requested = crate::edge::requested_version(headers, query);
    let version = match negotiate(requested.as_deref(), serve_v1) {
        Ok(v) => v,
        Err((_, v)) => v,
    };
    match (rpc, version) {
        (true, v) => Form::Rpc(v),
        (false, Version::V03) => Form::Rest03,
        (false, Version::V1) => Form::Rest,
    }
}

/// Renders an edge refusal (slow body 408, connection cap 503, a request head hyper could not
/// read) in the form the path and version imply ([`crate::edge::wire::form_of`]).
pub fn edge_refusal(
    serve_v1: bool,
    parts: &axum::http::request::Parts,
    why: a2a_agent::listen::EdgeRefusal,
) -> Response {
    use a2a_agent::listen::EdgeRefusal;
    let code = match why {
        EdgeRefusal::BodyTimeout(_) => "a2a_request_timeout",
        EdgeRefusal::Overloaded => "a2a_overloaded",
        EdgeRefusal::BadRequest => "a2a_bad_request",
        EdgeRefusal::UriTooLong => "a2a_uri_too_long",
        EdgeRefusal::HeadersTooLarge => "a2a_headers_too_large",
    };
    let status = why.status();
    let r = Refusal::gateway(status.as_u16(), code, why.message());
    let resp = edge_refusal_parts(serve_v1, parts, &r);
    debug_assert!(a2a_agent::edge::grpc::is_grpc(&parts.headers) || resp.status() == status);
    resp
}

/// A refusal decided before any handler ran, in the form the path and version imply; a gRPC
/// call (a slow body, the connection cap, a refused header) gets a status, not a JSON body.
pub fn edge_refusal_parts(
    serve_v1: bool,
    parts: &axum::http::request::Parts,
    r: &Refusal,
) -> Response {
    if a2a_agent::edge::grpc::is_grpc(&parts.headers) {
        let trace = crate::ids::id_hex(16);
        return a2a_agent::edge::grpc::status_response(r.grpc_status(&trace));
    }
    let form = form_of(
        parts.uri.path(),
        &parts.headers,
        parts.uri.query(),
        serve_v1,
    );
    render(form, r)
}

/// The refusal of an envelope the JSON-RPC endpoints cannot read.
pub fn envelope_refusal(e: &EnvelopeError) -> Refusal {
    match e.kind {
        EnvelopeErrorKind::NotJson => Refusal::parse_error(&e.detail),
        _ => Refusal::invalid_request(&e.detail),
    }
}

/// The body limit of `path` in bytes.
fn body_limit(st: &GatewayState, path: &str) -> u64 {
    if path.contains("/push:notify/") {
        st.config().limits.max_push_bytes
    } else {
        MAX_REQUEST_BYTES as u64
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|c| {
            let base = c.split(';').next().unwrap_or("").trim();
            base.eq_ignore_ascii_case("application/json")
                || base.eq_ignore_ascii_case("application/a2a+json")
        })
        .unwrap_or(false)
}

/// The router-wide middleware (see the module documentation).
pub async fn guard(State(st): State<Arc<GatewayState>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let form = form_of(
        &path,
        req.headers(),
        req.uri().query(),
        st.config().serve_v1,
    );
    if let Err(e) = a2a_types::path::check_path(&path) {
        return render(form, &Refusal::bad_path(&e.to_string()));
    }
    let limit = body_limit(&st, &path);
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let too_large = if path.contains("/push:notify/") {
        Refusal::push_too_large(limit)
    } else {
        Refusal::payload_too_large(limit)
    };
    if declared.is_some_and(|n| n > limit) {
        let mut r = render(form, &too_large);
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return r;
    }
    let resp = next.run(req).await;
    if resp.status().as_u16() < 400 || is_json(resp.headers()) {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, 16 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let mut refusal = match parts.status {
        StatusCode::NOT_FOUND => Refusal::route_not_found(method.as_str(), &path),
        StatusCode::METHOD_NOT_ALLOWED => Refusal::method_not_allowed(method.as_str(), &path),
        StatusCode::PAYLOAD_TOO_LARGE => too_large,
        s => Refusal::http(
            s.as_u16(),
            if text.is_empty() {
                s.canonical_reason().unwrap_or("error")
            } else {
                &text
            },
        ),
    };
    // The rewritten answer keeps the original status and headers (such as `Allow`).
    refusal.status = parts.status.as_u16();
    let mut out = render(form, &refusal);
    for (k, v) in &parts.headers {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            out.headers_mut().insert(k.clone(), v.clone());
        }
    }
    if parts.status == StatusCode::PAYLOAD_TOO_LARGE {
        out.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    out
}

/// A JSON-RPC request the gateway can execute.
#[derive(Debug, Clone)]
pub struct RpcRequest {
    /// The caller's id, exactly.
    pub id: RawId,
    /// The operation (from the path, the method, or both agreeing).
    pub op: Operation,
    /// The params (`{}` when absent).
    pub params: Value,
}

/// The JSON-RPC edge after authentication: envelope, `jsonrpc`, the message limit (before any
/// other inspection of the message), the operation named by the path and/or `method`.
pub fn parse_rpc(
    envelope: Result<Envelope, EnvelopeError>,
    path_op: Option<&str>,
    version: Version,
    max_message_chars: usize,
) -> Result<RpcRequest, Refusal> {
    let envelope = envelope.map_err(|e| envelope_refusal(&e))?;
    let env = &envelope.members;
    if env.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Refusal::invalid_request("jsonrpc must be \"2.0\""));
    }
    let params = env.get("params").cloned().unwrap_or_else(|| json!({}));
    let chars = xlate::message_text_chars(&params);
    if chars > max_message_chars {
        return Err(Refusal::message_too_large(chars, max_message_chars));
    }
    let path_operation = match path_op {
        Some(p) => Some(Operation::from_path(p).ok_or_else(|| {
            Refusal::method_not_found(&format!("{p} is not an operation path of the gateway"))
        })?),
        None => None,
    };
    let op = match (path_operation, env.get("method")) {
        (_, Some(m)) if !m.is_string() => {
            return Err(Refusal::invalid_request("method must be a string"));
        }
        (None, None) => return Err(Refusal::invalid_request("no method")),
        (Some(p), None) => p,
        (p, Some(m)) => {
            let m = m.as_str().unwrap_or("");
            let op = crate::protocol::ops::from_method(m, version)?;
            if let Some(p) = p
                && p != op
            {
                return Err(Refusal::invalid_request(&format!(
                    "method {m} does not match the path {}",
                    p.path()
                )));
            }
            op
        }
    };
    Ok(RpcRequest {
        id: envelope.id,
        op,
        params,
    })
}

/// The whole JSON-RPC request parser from bytes (what the fuzz target drives): the path's
/// bytes, then the body as [`parse_rpc`] reads it, then strict validation of the params in the
/// caller's version. A refusal comes with the id to answer with.
pub fn parse_rpc_bytes(
    path: &str,
    body: &[u8],
    version: Version,
    max_message_chars: usize,
) -> Result<RpcRequest, (RawId, Refusal)> {
    a2a_types::path::check_path(path)
        .map_err(|e| (RawId::null(), Refusal::bad_path(&e.to_string())))?;
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let path_op = match segs.as_slice() {
        ["a2a", _, op] => Some(*op),
        _ => None,
    };
    let envelope = parse_envelope(body);
    let id = envelope.as_ref().map(|e| e.id.clone()).unwrap_or_default();
    let r =
        parse_rpc(envelope, path_op, version, max_message_chars).map_err(|r| (id.clone(), r))?;
    xlate::request(r.op, version, version, &r.params).map_err(|e| (id, e))?;
    Ok(r)
}

/// The HTTP+JSON request body parser (what `rest_entry` and the fuzz target use): an object or
/// nothing, merged with the members taken from the path and query, then the message limit.
pub fn parse_rest_body(
    body: Option<&[u8]>,
    from_path: &Value,
    max_message_chars: usize,
) -> Result<Value, Refusal> {
    let mut params = match body {
        Some(b) if !b.is_empty() => match serde_json::from_slice::<Value>(b) {
            Ok(v) if v.is_object() => v,
            Ok(_) => return Err(Refusal::invalid_params("body: must be an object")),
            Err(e) => return Err(Refusal::parse_error(&e.to_string())),
        },
        _ => json!({}),
    };
    if let (Some(p), Some(extra)) = (params.as_object_mut(), from_path.as_object()) {
        for (k, v) in extra {
            p.insert(k.clone(), v.clone());
        }
    }
    let chars = xlate::message_text_chars(&params);
    if chars > max_message_chars {
        return Err(Refusal::message_too_large(chars, max_message_chars));
    }
    Ok(params)
}
