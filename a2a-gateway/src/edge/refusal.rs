//! Every refusal a caller gets, in one place: the hop's record is completed, then the refusal is
//! rendered in the caller's binding and version ([`crate::protocol::render`] writes the bodies):
//! JSON-RPC ([`rpc_refusal`], one SSE event for 0.3 streaming methods: [`rpc_op_refusal`]),
//! HTTP+JSON 1.0 ([`rest_refusal`]) and 0.3 ([`rest03_refusal`]), the card routes
//! ([`card_refusal`]) (what the edge refuses before a handler runs is `crate::edge::edge_refusal`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::config::ErrorStatusMode;
use crate::edge::record::record;
use crate::hop::call::Call;
use crate::state::GatewayState;
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{
    protocol::render::accept_header, protocol::render::json_response,
    protocol::render::json_text_response,
};

/// A JSON-RPC refusal: 200 (or the refusal's status in `refusal` mode); 401, an unsupported
/// content type (415, -32005) and an unreachable store (503 `a2a_store_unavailable`, so a load
/// balancer may retry elsewhere) keep their status. A refused version is 200 too (the official SDK
/// clients read -32009 only from a 200 answer); the DVARA API's 400 is the `refusal` mode's.
pub(crate) fn rpc_refusal(st: &GatewayState, call: &mut Call, r: Refusal) -> Response {
    let own = st.config().json_rpc_error_status == ErrorStatusMode::Refusal;
    rpc_refusal_as(st, call, r, own)
}

/// [`rpc_refusal`] with the refusal's own status (`own`) or 200.
fn rpc_refusal_as(st: &GatewayState, call: &mut Call, r: Refusal, own: bool) -> Response {
    record(st, call, Some(&r));
    let status = match r.code.as_str() {
        // The spec's table says 400 for -32005; a JSON-RPC caller has always had HTTP's 415.
        "a2a_unsupported_media_type" => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "a2a_unauthorized" | "a2a_store_unavailable" => {
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_GATEWAY)
        }
        _ if own => StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_GATEWAY),
        _ => StatusCode::OK,
    };
    let body = r.jsonrpc_text(call.version, &call.id, &call.trace_id);
    let mut resp = json_text_response(status, call.json_content_type(), body);
    refusal_headers(&mut resp, &r);
    resp
}

/// The headers a refusal's answer carries in every form: `Accept` for an unsupported content
/// type, `WWW-Authenticate` for a missing or refused key, `Retry-After` for an unreachable
/// store.
fn refusal_headers(resp: &mut Response, r: &Refusal) {
    match r.code.as_str() {
        "a2a_unsupported_media_type" => accept_header(resp),
        "a2a_unauthorized" => {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        "a2a_store_unavailable" => {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        _ => {}
    }
}

/// A refused JSON-RPC call of `op`: a 0.3 streaming method (`message/stream`,
/// `tasks/resubscribe`) answers one SSE event carrying the JSON-RPC error, as the official SDK
/// servers and the agent do (the 0.3 SDK client reads only `text/event-stream` there); in the
/// `refusal` status mode, and for everything else, [`rpc_refusal`]. In the `refusal` mode a
/// refused stream keeps 200 (and the 0.3 event) with `stream_refusal_status = "ok"`, as the
/// DVARA API keeps it.
pub(crate) fn rpc_op_refusal(
    st: &GatewayState,
    call: &mut Call,
    op: crate::protocol::ops::Operation,
    r: Refusal,
) -> Response {
    let config = st.config();
    let own = config.json_rpc_error_status == ErrorStatusMode::Refusal
        && !(op.is_streaming() && config.stream_refusal_status == ErrorStatusMode::Ok);
    drop(config);
    if call.version != Version::V03 || !op.is_streaming() || own {
        return rpc_refusal_as(st, call, r, own);
    }
    record(st, call, Some(&r));
    a2a_agent::edge::sse::single(r.jsonrpc_text(call.version, &call.id, &call.trace_id))
}

/// An HTTP+JSON refusal: `google.rpc.Status` with the refusal's status.
pub(crate) fn rest_refusal(st: &GatewayState, call: &mut Call, r: Refusal) -> Response {
    record(st, call, Some(&r));
    let status = StatusCode::from_u16(r.rest_status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut resp = json_response(
        status,
        call.json_content_type(),
        &r.status_body(&call.trace_id),
    );
    refusal_headers(&mut resp, &r);
    resp
}

/// A refusal to a 0.3 REST caller: the refusal's HTTP status, the 0.3 error object.
pub(crate) fn rest03_refusal(st: &GatewayState, call: &mut Call, r: Refusal) -> Response {
    call.audit.client_version = Some("0.3".into());
    record(st, call, Some(&r));
    let status = StatusCode::from_u16(r.rest_status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut resp = json_response(
        status,
        "application/json",
        &r.jsonrpc_error(Version::V03, &call.trace_id),
    );
    refusal_headers(&mut resp, &r);
    resp
}

pub(crate) fn card_refusal(
    st: &GatewayState,
    call: &mut Call,
    form: Option<Version>,
    r: Refusal,
) -> Response {
    record(st, call, Some(&r));
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = match form {
        Some(Version::V1) => r.status_body(&call.trace_id),
        _ => r.legacy_body(&call.trace_id),
    };
    let mut resp = json_response(status, "application/json", &body);
    refusal_headers(&mut resp, &r);
    resp
}
