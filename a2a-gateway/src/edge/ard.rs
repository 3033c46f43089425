//! `GET /a2a/.well-known/ard.json` (issue 15; experimental, off unless `ard_enabled`): the
//! agents the caller's key may use, as an ARD manifest.
//!
//! The DVARA API names the endpoint "an ARD manifest" and gives no shape. ARD (Agentic Resource
//! Discovery) publishes its manifests in the AI Catalog format (`application/ai-catalog+json`,
//! served at `/.well-known/ai-catalog.json` on a domain): `{specVersion: "1.0", host:
//! {displayName, identifier}, entries: [{identifier, displayName, type, url}]}`, one entry per
//! artifact, `type` its media type (`application/a2a-agent-card+json` for an A2A Agent Card) and
//! `url` where to fetch it. This endpoint writes that shape: one entry per agent of the key's
//! workspace, `url` its governed card, `identifier` `urn:air:<gateway host>:agent:<agentId>`.
//! Drafts before the `type` rename called the member `mediaType`; both are written.
//!
//! The list is read from the registry only (no peer is called): every agent registered in the
//! caller's workspace, never another workspace's. The cards themselves still need the key.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::edge::record::record;
use crate::edge::refusal::card_refusal;
use crate::hop::auth::authenticate;
use crate::hop::call::Call;
use crate::state::GatewayState;
use crate::store::backend::RegistryStore;
use crate::{edge::requested_version, protocol::render::json_response};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

/// Media type of an A2A Agent Card in an AI Catalog.
pub const A2A_CARD_TYPE: &str = "application/a2a-agent-card+json";

/// The manifest of `agents` (ids) served at `base` (the gateway's public base URL).
pub fn manifest(base: &str, agents: &[String]) -> Value {
    let host = url::Url::parse(base)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "localhost".to_owned());
    let entries: Vec<Value> = agents
        .iter()
        .map(|id| {
            json!({
                "identifier": format!("urn:air:{host}:agent:{id}"),
                "displayName": id,
                "type": A2A_CARD_TYPE,
                "mediaType": A2A_CARD_TYPE,
                "url": format!("{base}/a2a/{id}/.well-known/agent-card.json"),
            })
        })
        .collect();
    json!({
        "specVersion": "1.0",
        "host": {"displayName": "A2A gateway", "identifier": base},
        "entries": entries,
    })
}

/// The handler (404 while `ard_enabled` is off, as if the route did not exist).
pub(crate) async fn handler(State(st): State<Arc<GatewayState>>, headers: HeaderMap) -> Response {
    if !st.config().ard_enabled {
        return StatusCode::NOT_FOUND.into_response();
    }
    let mut call = Call::new(&headers, Binding::JsonRpc);
    call.audit.operation = Some("ard".into());
    call.audit.client_method = Some("GET ard.json".into());
    let form = requested_version(&headers, None).map(|r| {
        if r.starts_with("0.") {
            Version::V03
        } else {
            Version::V1
        }
    });
    let principal = match authenticate(&st, &headers).await {
        Ok(p) => p,
        Err(r) => return card_refusal(&st, &mut call, form, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    let agents = match st.registry.list_agents(&principal.workspace_id).await {
        Ok(a) => a,
        Err(e) => {
            let r = Refusal::store("agents", &e);
            return card_refusal(&st, &mut call, form, r);
        }
    };
    let ids: Vec<String> = agents.into_iter().map(|a| a.agent_id).collect();
    let body = manifest(&st.config().public_base(), &ids);
    record(&st, &mut call, None);
    let mut resp = json_response(StatusCode::OK, "application/json", &body);
    let h = resp.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=60"),
    );
    h.insert(header::VARY, HeaderValue::from_static("Authorization"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_shape() {
        let m = manifest("https://gw.example.com", &["a".into(), "b".into()]);
        assert_eq!(m["specVersion"], "1.0");
        assert_eq!(m["entries"].as_array().unwrap().len(), 2);
        let e = &m["entries"][0];
        assert_eq!(e["identifier"], "urn:air:gw.example.com:agent:a");
        assert_eq!(e["type"], A2A_CARD_TYPE);
        assert_eq!(
            e["url"],
            "https://gw.example.com/a2a/a/.well-known/agent-card.json"
        );
    }
}
