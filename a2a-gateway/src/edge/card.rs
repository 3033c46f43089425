//! The governed card (`GET /a2a/{agent}/.well-known/agent-card.json`): the peer's card with the
//! gateway's interfaces, its key scheme and the workspace's skill allow-list, per version, what
//! came from the peer through the workspace's governance (PII rules), with an ETag and a `Last-Modified` (`If-None-Match` and `If-Modified-Since` answer 304).

use crate::edge::refusal::card_refusal;
use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use url::Url;

use crate::config::Config;
use crate::edge::record::record;
use crate::hop::call::Call;
use crate::keys;
use crate::peer;
use crate::protocol::xlate;
use crate::state::GatewayState;
use crate::store::Agent;
use crate::store::backend::RegistryStore;
use crate::{edge::negotiate, edge::requested_version, protocol::render::json_response};
use crate::{hop::auth::authenticate, hop::auth::effective_limits, hop::auth::lookup_agent};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

/// Builds the governed 1.0 card (without the 0.3 compatibility fields).
pub fn governed_card_v1(config: &Config, agent: &Agent, peer_card: &Value) -> Value {
    let c1 = xlate::card_to_v1(peer_card);
    let base = format!("{}/a2a/{}", config.public_base(), agent.agent_id);
    let mut out = serde_json::Map::new();
    for k in [
        "name",
        "description",
        "version",
        "provider",
        "iconUrl",
        "documentationUrl",
        "defaultInputModes",
        "defaultOutputModes",
    ] {
        if let Some(v) = c1.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    let mut ifaces = vec![];
    if config.serve_v1 {
        ifaces.push(json!({"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}));
    }
    ifaces.push(json!({"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}));
    // `card_bindings = "jsonrpc"`: JSON-RPC only, as the DVARA API's card.
    let all = config.card_bindings == crate::config::CardBindings::All;
    if all && config.serve_v1 {
        ifaces.push(json!({"url": format!("{base}/v1"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}));
    }
    // 0.3 HTTP+JSON: its `/v1/...` paths under `base` are the 1.0 routes (`crate::edge::rest03`).
    if all {
        ifaces.push(json!({"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}));
    }
    // gRPC paths name no agent: the interface's tenant does (`crate::edge::grpc`).
    if all && config.serve_v1 && config.serve_grpc {
        let at = a2a_agent::edge::grpc::authority(&config.public_base(), config.listen);
        ifaces.push(json!({"url": at, "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": agent.agent_id}));
    }
    out.insert("supportedInterfaces".into(), Value::Array(ifaces));
    let peer_caps = c1.get("capabilities").cloned().unwrap_or_else(|| json!({}));
    let streaming = peer_caps
        .get("streaming")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        && config.streaming_enabled;
    let push = peer_caps
        .get("pushNotifications")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    out.insert(
        "capabilities".into(),
        json!({"streaming": streaming, "pushNotifications": push, "extendedAgentCard": false}),
    );
    let mut schemes = c1
        .get("securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    schemes.insert(
        "a2aGatewayKey".into(),
        json!({"httpAuthSecurityScheme": {"scheme": "bearer", "description": "Workspace API key of the A2A gateway"}}),
    );
    out.insert("securitySchemes".into(), Value::Object(schemes));
    out.insert(
        "securityRequirements".into(),
        json!([{"schemes": {"a2aGatewayKey": {"list": []}}}]),
    );
    let skills: Vec<Value> = c1
        .get("skills")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| match &agent.skills {
            None => true,
            Some(allow) => s
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| allow.iter().any(|a| a == id)),
        })
        .collect();
    out.insert("skills".into(), Value::Array(skills));
    for k in ["name", "description", "version"] {
        out.entry(k).or_insert_with(|| json!(""));
    }
    for k in ["defaultInputModes", "defaultOutputModes"] {
        out.entry(k).or_insert_with(|| json!(["text/plain"]));
    }
    Value::Object(out)
}

/// The 0.3 card's `additionalInterfaces`: JSON-RPC and HTTP+JSON at the same base URL
/// (JSON-RPC alone with `card_bindings = "jsonrpc"`).
fn additional_v03(config: &Config, base: &str) -> Value {
    match config.card_bindings {
        crate::config::CardBindings::All => {
            json!([{"url": base, "transport": "JSONRPC"}, {"url": base, "transport": "HTTP+JSON"}])
        }
        crate::config::CardBindings::Jsonrpc => json!([{"url": base, "transport": "JSONRPC"}]),
    }
}

/// The governed card in `version`: for 1.0 the header-less form, which carries the 0.3 address
/// fields too (`url`, `preferredTransport`, `protocolVersion`, `additionalInterfaces`); a caller
/// that names 1.0 gets [`governed_card_v1`], a pure 1.0 card.
pub fn governed_card(config: &Config, agent: &Agent, peer_card: &Value, version: Version) -> Value {
    let v1 = governed_card_v1(config, agent, peer_card);
    let base = format!("{}/a2a/{}", config.public_base(), agent.agent_id);
    match version {
        Version::V1 => {
            let mut m = v1.as_object().cloned().unwrap_or_default();
            m.insert("url".into(), json!(base));
            m.insert("preferredTransport".into(), json!("JSONRPC"));
            m.insert("protocolVersion".into(), json!("0.3"));
            m.insert("additionalInterfaces".into(), additional_v03(config, &base));
            Value::Object(m)
        }
        Version::V03 => {
            let (c, omitted) = xlate::card_v1_to_v03(&v1);
            let mut m = c.as_object().cloned().unwrap_or_default();
            m.insert("url".into(), json!(base));
            m.insert("preferredTransport".into(), json!("JSONRPC"));
            m.insert("protocolVersion".into(), json!("0.3"));
            m.insert("additionalInterfaces".into(), additional_v03(config, &base));
            m.insert("supportsAuthenticatedExtendedCard".into(), json!(false));
            if !omitted.is_empty() {
                // Under DVARA's name too with `dvara_headers`.
                if config.dvara_headers {
                    m.insert(
                        "x-dvara-security-schemes-omitted".into(),
                        Value::Array(omitted.clone()),
                    );
                }
                m.insert(
                    "x-a2a-security-schemes-omitted".into(),
                    Value::Array(omitted),
                );
            }
            Value::Object(m)
        }
    }
}

/// The card steps of the caller's workspace over `card` (`crate::governance::Governance::card`),
/// their evidence in the card's audit record.
fn govern(
    st: &GatewayState,
    call: &mut Call,
    principal: &crate::store::Principal,
    agent_id: &str,
    version: Version,
    card: &mut Value,
) -> Result<(), Refusal> {
    // The card read, named by the vocabulary's one card operation.
    let hop = crate::governance::step::Hop::of_caller(
        &call.trace_id,
        principal,
        agent_id,
        crate::protocol::ops::Operation::GetExtendedAgentCard,
        version,
        call.binding,
    );
    if !st.governance.active(&hop) {
        return Ok(());
    }
    let mut ev = crate::governance::step::Evidence::default();
    let r = st.governance.card(&hop, card, &mut ev);
    if !ev.is_empty() {
        call.audit.governance = serde_json::to_value(&ev).ok();
    }
    r
}

pub(crate) async fn card_handler(
    State(st): State<Arc<GatewayState>>,
    Path(agent_id): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let mut call = Call::new(&headers, Binding::JsonRpc);
    call.audit.target = Some(agent_id.clone());
    call.audit.operation = Some("agent/card".into());
    call.audit.client_method = Some("GET agent-card.json".into());
    // Only the header picks the card's version; none = the 1.0 card.
    let requested = requested_version(&headers, None);
    let requested = requested.as_deref();
    let form = requested.map(|r| {
        if r.starts_with("0.") {
            Version::V03
        } else {
            Version::V1
        }
    });
    let version = match requested {
        None if st.config().serve_v1 => Version::V1,
        None => Version::V03,
        Some(r) => match negotiate(Some(r), st.config().serve_v1) {
            Ok(v) => v,
            Err((r, f)) => {
                call.version = f;
                return card_refusal(&st, &mut call, Some(f), r);
            }
        },
    };
    call.version = version;
    let principal = match authenticate(&st, &headers).await {
        Ok(p) => p,
        Err(r) => return card_refusal(&st, &mut call, form, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    let agent = match lookup_agent(&st, &principal, &agent_id).await {
        Ok(a) => a,
        Err(r) => return card_refusal(&st, &mut call, form, r),
    };
    call.target_found = true;
    let refresh = q
        .as_deref()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes()).any(|(k, v)| k == "refresh" && v == "true")
        })
        .unwrap_or(false);
    let ws = match st.registry.workspace(&principal.workspace_id).await {
        Ok(ws) => ws,
        Err(e) if e.is_unavailable() => {
            return card_refusal(&st, &mut call, form, Refusal::store_unavailable());
        }
        Err(_) => None,
    };
    let (_, _, max_card) = effective_limits(&st, ws.as_ref());
    let peer_card = async {
        let registered = Url::parse(&agent.endpoint)
            .map_err(|e| Refusal::peer_url_refused(&format!("registered endpoint: {e}")))?;
        peer::check_url(&registered, &registered, st.config().dev_mode)?;
        peer::check_resolved(&registered, st.config().dev_mode).await?;
        peer::peer_card(
            &st.peer_clients.load_full().cards,
            &registered,
            agent.credential.as_deref(),
            max_card,
            refresh,
        )
        .await
    }
    .await;
    st.metrics.card_fetch(peer::fetch_result(&peer_card));
    // card trust: the peer card's signature state (`crate::trust`), in a header and the audit.
    let peer_card = match peer_card {
        Ok(c) => st
            .trust
            .check_card(&agent, &c)
            .await
            .map(|t| {
                call.audit.signature_trust = Some(t.as_str().to_owned());
                c
            })
            .and_then(|c| peer::card_json(&c)),
        Err(r) => Err(r),
    };
    let peer_card = match peer_card {
        Ok(c) => c,
        Err(r) => {
            let resp = card_refusal(&st, &mut call, form, r);
            return crate::trust::stamp(resp, call.audit.signature_trust.as_deref());
        }
    };
    let card = if requested.is_some() && version == Version::V1 {
        governed_card_v1(&st.config(), &agent, &peer_card)
    } else {
        governed_card(&st.config(), &agent, &peer_card, version)
    };
    let mut card = card;
    match st
        .registry
        .workspace_settings(&principal.workspace_id)
        .await
    {
        Ok(s) => crate::governance::extensions::govern_card(&mut card, &peer_card, &s),
        Err(e) => {
            let r = Refusal::store("workspace settings", &e);
            return card_refusal(&st, &mut call, form, r);
        }
    }
    // governance: what of the card came from the peer passes the workspace's steps (PII
    // redacted, or the card refused), as its answers do.
    st.governance.cache.load(&principal.workspace_id).await;
    if let Err(r) = govern(
        &st,
        &mut call,
        &principal,
        &agent.agent_id,
        version,
        &mut card,
    ) {
        let resp = card_refusal(&st, &mut call, form, r);
        return crate::trust::stamp(resp, call.audit.signature_trust.as_deref());
    }
    let card = st.signer.sign(card);
    let body = card.to_string();
    let digest = keys::hash(&body);
    let etag = format!(
        "\"{}\"",
        digest[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    record(&st, &mut call, None);
    // The card's date: the second its ETag was first served (`crate::peer::modified`).
    let form = match (requested.is_some(), version) {
        (true, Version::V1) => "1.0",
        (false, Version::V1) => "1.0+0.3",
        (_, Version::V03) => "0.3",
    };
    let key = format!("{}\n{}\n{form}", principal.workspace_id, agent.agent_id);
    let modified = st
        .card_dates
        .modified(&key, &etag, std::time::SystemTime::now());
    // If-Modified-Since counts only without If-None-Match (RFC 9110 §13.1.3).
    let not_modified = match headers.get(header::IF_NONE_MATCH) {
        Some(inm) => inm
            .to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*")),
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::peer::modified::parse_http_date)
            .is_some_and(|since| modified.unchanged_since(since)),
    };
    let mut resp = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        json_response(StatusCode::OK, "application/json", &card)
    };
    let h = resp.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=60"),
    );
    h.insert(
        header::VARY,
        HeaderValue::from_static(
            "Authorization, X-A2A-Delegated-Authorization, X-Dvara-Delegated-Authorization, A2A-Version",
        ),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    if let Some(v) =
        crate::peer::modified::http_date(modified.at).and_then(|d| HeaderValue::from_str(&d).ok())
    {
        h.insert(header::LAST_MODIFIED, v);
    }
    crate::trust::stamp(resp, call.audit.signature_trust.as_deref())
}
