//! The edge's request parsers as pure functions (no server state), for the fuzz targets in
//! `fuzz/` and for tests: bytes (+ path, version) in, the parsed request or the A2A error out.

use super::jsonrpc;
use super::respond::{Binding, error_response};
use crate::edge::routes::{Op, parse_route};
use crate::edge::version::{Version, parse_version};
use crate::error::{A2aError, ErrorKind};
use serde_json::Value;

fn version(v: Option<&str>) -> Result<Option<Version>, A2aError> {
    match v {
        Some(v) => parse_version(v),
        None => Ok(None),
    }
}

/// The JSON-RPC request parser: `(1.0 method, 1.0 params)`, or the full JSON-RPC error response
/// as text (the caller's id written exactly).
pub fn jsonrpc(body: &[u8], a2a_version: Option<&str>) -> Result<(String, Value), String> {
    let explicit = version(a2a_version).map_err(|e| {
        a2a_types::envelope::RawId::null().error_text(&e.jsonrpc_error(Version::V1))
    })?;
    match jsonrpc::parse(body, explicit) {
        Ok(p) => Ok((p.method, p.params)),
        Err((id, e, v)) => Err(id.error_text(&e.jsonrpc_error(v))),
    }
}

/// The HTTP+JSON request parser: the path (bytes, route, tenant) and, for `message:send` /
/// `message:stream`, the body in the route's version. `Ok` is a description of the route; `Err`
/// is the HTTP status and the error body.
pub fn rest(path: &str, a2a_version: Option<&str>, body: &[u8]) -> Result<String, (u16, Value)> {
    let fail = |e: A2aError, v: Version| {
        let r = error_response(&e, v, Binding::HttpJson);
        (r.status().as_u16(), e.rest_body(v))
    };
    let explicit = version(a2a_version).map_err(|e| fail(e, Version::V1))?;
    a2a_types::path::check_path(path).map_err(|e| {
        fail(
            A2aError::new(
                ErrorKind::InvalidRequest,
                format!("Invalid request path: {e}"),
            )
            .with_status(400),
            Version::V1,
        )
    })?;
    let route = parse_route(path, explicit).ok_or_else(|| {
        fail(
            A2aError::new(ErrorKind::MethodNotFound, format!("no route for {path}")),
            explicit.unwrap_or(Version::V1),
        )
    })?;
    if matches!(route.op, Op::Send | Op::Stream) {
        let v: Value = serde_json::from_slice(body).map_err(|e| {
            fail(
                A2aError::new(ErrorKind::JsonParse, format!("Invalid JSON payload: {e}")),
                route.version,
            )
        })?;
        match route.version {
            Version::V03 => {
                crate::edge::v03_rest_send(v).map_err(|e| fail(e, route.version))?;
            }
            Version::V1 => {
                a2a_types::strict::parse_value::<a2a_types::v1::SendMessageRequest>(v)
                    .map_err(|e| fail(A2aError::invalid_params(e.to_string()), route.version))?;
            }
        }
    }
    Ok(format!("{route:?}"))
}
