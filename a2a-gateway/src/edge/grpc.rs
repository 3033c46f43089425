//! The gRPC caller binding (A2A 1.0 `lf.a2a.v1.A2AService`, setting `serve_grpc`): an HTTP/2
//! request with `content-type: application/grpc*` on the gateway's port comes here, whatever its
//! path (see the hook in [`crate::app`]).
//!
//! gRPC paths are fixed, so the target agent is the request's `tenant` field (the governed 1.0
//! card lists a `GRPC` interface with `tenant: <agentId>`); the tenant is removed before the
//! request goes on. Each rpc is then the same call as the 1.0 JSON-RPC method of the same name:
//! the edge steps of [`crate::hop::STEPS`] (version from `a2a-version` metadata, 1.0 only;
//! the key from `authorization` / API key metadata; the message text limit), then
//! [`crate::hop::execute`], audited with `client_binding` `GRPC`. Answers and stream events
//! are encoded back to protobuf by the shared edge ([`a2a_agent::edge::grpc`]); refusals are
//! `google.rpc.Status` with the refusal's `ErrorInfo` ([`Refusal::grpc_status`]).

use std::sync::Arc;

use a2a_agent::edge::grpc::{Answer as GrpcAnswer, Reply, serve, status_response, unknown_method};
use a2a_types::grpc::Rpc;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;
use tracing::Instrument;

use crate::edge::record::record;
use crate::hop::auth::authenticate;
use crate::hop::call::Call;
use crate::hop::execute;
use crate::protocol::ops::GatewayOp;
use crate::store::Principal;
use crate::{config::MAX_REQUEST_BYTES, protocol::answer::Answer, state::GatewayState};
use crate::{edge::negotiate_on, edge::requested_version};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

/// Serves one gRPC call.
pub(crate) async fn handle(st: Arc<GatewayState>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let Some(rpc) = Rpc::of_path(&path) else {
        return unknown_method(&path, "this gateway");
    };
    let headers = req.headers().clone();
    // The pipeline runs as for a 1.0 JSON-RPC caller; policies and the audit see `GRPC`.
    let mut call = Call::new(&headers, Binding::Grpc);
    call.audit.client_method = Some(rpc.name.to_owned());
    call.version = Version::V1;
    let principal = match admit(&st, &mut call, &headers).await {
        Ok(p) => p,
        Err(r) => return refused(&st, &mut call, r),
    };
    serve(rpc, req, MAX_REQUEST_BYTES, move |params| async move {
        match run(&st, &mut call, &principal, rpc, params).await {
            Ok(reply) => Ok(reply),
            Err(r) => {
                record(&st, &mut call, Some(&r));
                Err(r.grpc_status(&call.trace_id))
            }
        }
    })
    .await
}

/// The edge before the message is read: version (none = 1.0, the service's own; 0.3 is
/// refused with VersionNotSupported), then the key.
async fn admit(
    st: &GatewayState,
    call: &mut Call,
    headers: &HeaderMap,
) -> Result<Principal, Refusal> {
    if let Some(r) = requested_version(headers, None) {
        negotiate_on(Some(&r), &[Version::V1], None).map_err(|(r, _)| r)?;
    }
    let key = call.step("key");
    let principal = authenticate(st, headers).await;
    drop(key);
    let principal = principal?;
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    Ok(principal)
}

fn refused(st: &GatewayState, call: &mut Call, r: Refusal) -> Response {
    record(st, call, Some(&r));
    status_response(r.grpc_status(&call.trace_id))
}

/// The agent a request names: its `tenant`, taken out of the params.
fn take_tenant(params: &mut Value) -> Result<String, Refusal> {
    let tenant = params
        .as_object_mut()
        .and_then(|o| o.remove("tenant"))
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|t| !t.is_empty());
    tenant.ok_or_else(|| {
        let mut r = Refusal::agent_not_found("");
        r.message = "The request names no agent: over gRPC, set the request's tenant to the \
                     agent id (the governed card's GRPC interface lists it)"
            .to_owned();
        r
    })
}

async fn run(
    st: &Arc<GatewayState>,
    call: &mut Call,
    principal: &Principal,
    rpc: &Rpc,
    mut params: Value,
) -> Result<Reply, Refusal> {
    let op = crate::protocol::ops::from_method(rpc.name, Version::V1)?;
    call.audit.operation = Some(op.name_03().to_owned());
    let agent = take_tenant(&mut params)?;
    call.audit.target = Some(agent.clone());
    let limit = st.config().limits.max_message_chars;
    let chars = crate::protocol::xlate::message_text_chars(&params);
    if chars > limit {
        return Err(Refusal::message_too_large(chars, limit));
    }
    let span = call.hop_span(op, &agent, &principal.workspace_id);
    let answer = execute(st, call, &agent, principal, op, params)
        .instrument(span)
        .await?;
    record(st, call, None);
    let answer = match answer {
        Answer::Unary(v) => GrpcAnswer::Unary(v),
        Answer::Passed(p) => GrpcAnswer::Unary(p.into_value()),
        Answer::Stream(events) => {
            let trace = call.trace_id.clone();
            GrpcAnswer::Stream(Box::pin(events.filter_map(move |item| {
                futures::future::ready(match item {
                    // gRPC has no resume: the ids and gap markers of SSE are dropped.
                    Ok(ev) => crate::tasks::resume::untag(ev).0.map(Ok),
                    Err(r) => Some(Err(r.grpc_status(&trace))),
                })
            })))
        }
    };
    let mut reply = Reply::new(answer);
    call.extension_headers(&mut reply.headers);
    if let Some(t) = call.audit.signature_trust.as_deref()
        && let Ok(v) = HeaderValue::from_str(t)
    {
        reply.headers.insert(crate::trust::TRUST_HEADER, v);
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tenant_names_the_agent_and_is_removed() {
        let mut p = json!({"tenant": "echo", "id": "t-1"});
        assert_eq!(take_tenant(&mut p).expect("tenant"), "echo");
        assert_eq!(p, json!({"id": "t-1"}));
        for mut p in [json!({"id": "t-1"}), json!({"tenant": ""})] {
            let r = take_tenant(&mut p).expect_err("no tenant");
            assert_eq!(r.code, "a2a_agent_not_found");
            let s = r.grpc_status("t");
            assert_eq!(s.code(), tonic::Code::NotFound);
        }
    }
}
