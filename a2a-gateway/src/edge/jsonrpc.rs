//! The JSON-RPC caller binding (`POST /a2a/{agent}` and `POST /a2a/{agent}/{op}`): the edge steps
//! of [`crate::hop::STEPS`] for JSON-RPC, then one [`Operation`] handed to
//! [`crate::hop::execute`], and the answer (unary or SSE) in the caller's version.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use tracing::Instrument;

use a2a_types::envelope::parse_envelope;

use crate::edge::record::record;
use crate::hop::auth::authenticate;
use crate::hop::call::Call;
use crate::hop::execute;
use crate::protocol::errors::Binding;
use crate::protocol::ops::GatewayOp;
use crate::{
    edge::content_type_ok, edge::negotiate, edge::refusal::rpc_op_refusal,
    edge::refusal::rpc_refusal, edge::requested_version,
};
use crate::{edge::wire::RpcRequest, protocol::render::json_text_response};
use crate::{protocol::answer::Answer, state::GatewayState};

pub(crate) async fn rpc_root(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc(st, agent, None, headers, q, body).await
}

pub(crate) async fn rpc_path(
    State(st): State<Arc<GatewayState>>,
    Path((agent, op)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc(st, agent, Some(op), headers, q, body).await
}

pub(crate) async fn rpc(
    st: Arc<GatewayState>,
    agent: String,
    path_op: Option<String>,
    headers: HeaderMap,
    query: Option<String>,
    body: Bytes,
) -> Response {
    let mut call = Call::new(&headers, Binding::JsonRpc);
    call.audit.target = Some(agent.clone());
    let requested = requested_version(&headers, query.as_deref());
    match negotiate(requested.as_deref(), st.config().serve_v1) {
        Ok(v) => call.version = v,
        Err((r, form)) => {
            call.version = form;
            return rpc_refusal(&st, &mut call, r);
        }
    }
    if let Err(r) = content_type_ok(&headers) {
        return rpc_refusal(&st, &mut call, r);
    }
    // The id is kept as the caller's exact text; bad ids and batches are refused below.
    let parsed = parse_envelope(&body);
    if let Ok(env) = &parsed {
        call.id = env.id.clone();
        call.audit.client_method = env.method().map(str::to_owned);
    }
    if let Some(p) = &path_op
        && call.audit.client_method.is_none()
    {
        call.audit.client_method = Some(p.clone());
    }
    let key = call.step("key");
    let principal = authenticate(&st, &headers).await;
    drop(key);
    let principal = match principal {
        Ok(p) => p,
        Err(r) => return rpc_refusal(&st, &mut call, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    let RpcRequest { op, params, .. } = match crate::edge::wire::parse_rpc(
        parsed,
        path_op.as_deref(),
        call.version,
        st.config().limits.max_message_chars,
    ) {
        Ok(r) => r,
        Err(r) => return rpc_refusal(&st, &mut call, r),
    };
    call.audit.operation = Some(op.name_03().to_owned());
    let span = call.hop_span(op, &agent, &principal.workspace_id);
    let upstream = match crate::tasks::resume::subscribe_from(op, &headers) {
        Ok(u) => u,
        Err(r) => return rpc_op_refusal(&st, &mut call, op, r),
    };
    let run = execute(&st, &mut call, &agent, &principal, op, params).instrument(span);
    let answer = crate::tasks::resume::with_upstream(upstream, run).await;
    let answered = answer.is_ok();
    let mut resp = match answer {
        Err(r) => rpc_op_refusal(&st, &mut call, op, r),
        Ok(Answer::Unary(result)) => {
            record(&st, &mut call, None);
            let body = call.id.result_text(&result);
            json_text_response(StatusCode::OK, call.json_content_type(), body)
        }
        Ok(Answer::Passed(p)) => {
            record(&st, &mut call, None);
            // The peer's checked result text, written as it is (`crate::protocol::passed`).
            let body = call.id.result_text_raw(p.text());
            json_text_response(StatusCode::OK, call.json_content_type(), body)
        }
        Ok(Answer::Stream(events)) => {
            record(&st, &mut call, None);
            let id = call.id.clone();
            let version = call.version;
            let trace = call.trace_id.clone();
            let mapped = events.flat_map(move |item| {
                let out = match item {
                    Ok(ev) => {
                        let (ev, sse_id, gap) = crate::tasks::resume::untag(ev);
                        crate::tasks::resume::sse_events(
                            ev.map(|e| id.result_text(&e)),
                            sse_id,
                            gap,
                        )
                    }
                    Err(r) => vec![a2a_agent::edge::sse::data(
                        r.jsonrpc_text(version, &id, &trace),
                    )],
                };
                futures::stream::iter(out)
            });
            a2a_agent::edge::sse::response(mapped, None)
        }
    };
    if answered {
        call.extension_headers(resp.headers_mut());
    }
    crate::trust::stamp(resp, call.audit.signature_trust.as_deref())
}
