//! Authentication: who is calling (the workspace API key), which registered agent the caller
//! reaches, and the limits of the caller's workspace.

use axum::http::{HeaderMap, header};

use crate::protocol::errors::Refusal;
use crate::state::GatewayState;
use crate::store::backend::RegistryStore;
use crate::{store::Agent, store::KeyRejection, store::Principal, store::Workspace};

pub(crate) async fn authenticate(
    st: &GatewayState,
    headers: &HeaderMap,
) -> Result<Principal, Refusal> {
    let refused = |reason: &'static str, detail: &str| {
        st.metrics.unauthenticated(reason);
        Err(Refusal::unauthorized(detail))
    };
    let Some(auth) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return refused("missing", "missing: send Authorization: Bearer <key>");
    };
    let token = auth
        .strip_prefix("Bearer ")
        .or_else(|| auth.strip_prefix("bearer "))
        .unwrap_or("")
        .trim();
    match st.registry.authenticate(token).await {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(KeyRejection::Invalid)) => refused("invalid", "is not valid"),
        Ok(Err(KeyRejection::Expired)) => refused("expired", "has expired"),
        Ok(Err(KeyRejection::Revoked)) => refused("revoked", "was revoked"),
        Err(e) => Err(Refusal::store("", &e)),
    }
}

pub(crate) fn effective_limits(st: &GatewayState, ws: Option<&Workspace>) -> (u64, u64, u64) {
    let l = &st.config().limits;
    (
        ws.and_then(|w| w.max_response_bytes)
            .unwrap_or(l.max_response_bytes),
        ws.and_then(|w| w.max_stream_bytes)
            .unwrap_or(l.max_stream_bytes),
        ws.and_then(|w| w.max_card_bytes)
            .unwrap_or(l.max_card_bytes),
    )
}

pub(crate) async fn lookup_agent(
    st: &GatewayState,
    principal: &Principal,
    agent: &str,
) -> Result<Agent, Refusal> {
    match st
        .registry
        .agent_seen(&principal.workspace_id, agent, principal.registry_version)
        .await
    {
        Ok(Some(a)) => Ok(a),
        Ok(None) => Err(Refusal::agent_not_found(agent)),
        Err(e) => Err(Refusal::store("", &e)),
    }
}
