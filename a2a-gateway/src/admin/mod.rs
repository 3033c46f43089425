//! Admin API (bearer admin token from the configuration; off when no token is set).
//!
//! - `POST /admin/workspaces` `{id, name}`; `GET /admin/workspaces`;
//!   `PUT /admin/workspaces/{ws}/limits` `{maxResponseBytes?, maxStreamBytes?, maxCardBytes?}`
//! - `POST /admin/workspaces/{ws}/agents` (an [`Agent`]), `GET` lists,
//!   `DELETE /admin/workspaces/{ws}/agents/{agentId}`
//! - `POST /admin/workspaces/{ws}/keys` `{scopes?, label?, expiresAt?}` -> `{keyId, key, ...}`
//!   (the key is shown only here), `GET` lists, `POST /admin/keys/{keyId}/revoke`
//!   (the card is checked first, [`crate::admin::registration`]; `?force=true` saves a refused one)
//! - `GET /admin/audit?workspace=` JSON lines; `GET /admin/hops?workspace=&agent=&after=&limit=`
//!   the hop history as a JSON list; `GET /admin/admin-audit?workspace=&after=&limit=&actor=&action=&since=&until=`
//!   the admin actions ([`crate::admin::audit`], written for every change made here; filters:
//!   [`crate::admin::audit_read`]);
//! - `GET|PATCH /admin/workspaces/{ws}/settings` ([`crate::admin::settings`]).
//!
//! The token is checked before the body is read or parsed (401 for any body); errors are 1.0
//! `google.rpc.Status` bodies (bad bodies: axum's rejection status, rewritten by [`crate::edge::wire`]).

pub mod approvals;
pub mod audit;
pub(crate) mod audit_read;
pub mod governance;
pub mod registration;
pub mod settings;
pub mod trust;

pub(crate) mod reply;
use crate::store::backend::{AuditStore, RegistryStore};
use reply::{err, store_err};

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::keys;
use crate::state::GatewayState;
use crate::store::Agent;

/// Checks the admin token before any extractor runs, so a bad token is 401 whatever the body.
async fn require_token(
    State(st): State<Arc<GatewayState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match authorized(&st, req.headers()) {
        Ok(()) => next.run(req).await,
        Err(r) => r,
    }
}

/// Whether `presented` is the configured admin token (constant time; never with no token).
pub(crate) fn token_matches(st: &GatewayState, presented: &str) -> bool {
    st.config()
        .admin_token
        .as_deref()
        .filter(|t| !t.is_empty())
        .is_some_and(|t| keys::digest_eq(&keys::hash(presented), &keys::hash(t)))
}

fn authorized(st: &GatewayState, headers: &HeaderMap) -> Result<(), Response> {
    if st.config().admin_token.as_deref().is_none_or(str::is_empty) {
        return Err(err(
            StatusCode::NOT_FOUND,
            "the admin API is disabled (no admin token configured)",
        ));
    };
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if token_matches(st, presented) {
        Ok(())
    } else {
        let mut r = err(StatusCode::UNAUTHORIZED, "admin token required");
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        Err(r)
    }
}

macro_rules! guard {
    ($st:expr, $h:expr) => {
        if let Err(r) = authorized(&$st, &$h) {
            return r;
        }
    };
}

/// The admin routes.
pub fn router(state: Arc<GatewayState>) -> Router {
    Router::new()
        .route("/admin/workspaces", post(create_ws).get(list_ws))
        .route("/admin/workspaces/{ws}/limits", put(set_limits))
        .route(
            "/admin/workspaces/{ws}/agents",
            post(upsert_agent).get(list_agents),
        )
        .route(
            "/admin/workspaces/{ws}/agents/{agent}",
            delete(delete_agent),
        )
        .route(
            "/admin/workspaces/{ws}/keys",
            post(create_key).get(list_keys),
        )
        .route("/admin/keys/{key}/revoke", post(revoke_key))
        .route("/admin/audit", get(audit_export))
        .route("/admin/hops", get(hops))
        .route("/admin/admin-audit", get(audit_read::export))
        .merge(governance::routes())
        .merge(approvals::routes())
        .merge(trust::routes())
        .merge(settings::routes())
        // Inside the token check: every authorized change is recorded with its admin. Only the
        // routes added above are covered: add admin routes before this layer.
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            audit::layer,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_token,
        ))
        .with_state(state)
}

#[derive(Deserialize)]
struct NewWs {
    id: String,
    #[serde(default)]
    name: Option<String>,
}

async fn create_ws(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    axum::Json(b): axum::Json<NewWs>,
) -> Response {
    guard!(st, h);
    match st
        .registry
        .create_workspace(&b.id, b.name.as_deref().unwrap_or(&b.id))
        .await
    {
        Ok(w) => (StatusCode::CREATED, axum::Json(w)).into_response(),
        Err(e) => store_err(e),
    }
}

async fn list_ws(State(st): State<Arc<GatewayState>>, h: HeaderMap) -> Response {
    guard!(st, h);
    match st.registry.list_workspaces().await {
        Ok(w) => axum::Json(w).into_response(),
        Err(e) => store_err(e),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LimitsBody {
    max_response_bytes: Option<u64>,
    max_stream_bytes: Option<u64>,
    max_card_bytes: Option<u64>,
}

async fn set_limits(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path(ws): Path<String>,
    axum::Json(b): axum::Json<LimitsBody>,
) -> Response {
    guard!(st, h);
    let (resp, stream, card) = (b.max_response_bytes, b.max_stream_bytes, b.max_card_bytes);
    match st
        .registry
        .set_workspace_limits(&ws, resp, stream, card)
        .await
    {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => store_err(e),
    }
}

/// `?force=true` (or `"force": true` in the body) saves a registration the card check refuses.
#[derive(Deserialize)]
struct ForceQuery {
    #[serde(default)]
    force: bool,
}

async fn upsert_agent(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path(ws): Path<String>,
    Query(q): Query<ForceQuery>,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    guard!(st, h);
    let force = q.force || body.get("force").and_then(Value::as_bool) == Some(true);
    let mut a: Agent = match serde_json::from_value(body) {
        Ok(a) => a,
        Err(e) => return err(StatusCode::UNPROCESSABLE_ENTITY, &format!("agent: {e}")),
    };
    a.workspace_id = ws;
    let check = registration::check(&st, &a).await;
    if let registration::Check::Refused { passed_over } = &check
        && !force
    {
        return registration::refused_response(passed_over);
    }
    match st.registry.upsert_agent(&a).await {
        Ok(()) => {
            let mut v = serde_json::to_value(&a).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("registrationCheck".into(), json!(check));
                o.insert("forced".into(), json!(force));
            }
            (StatusCode::CREATED, axum::Json(v)).into_response()
        }
        Err(e) => store_err(e),
    }
}

async fn list_agents(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path(ws): Path<String>,
) -> Response {
    guard!(st, h);
    match st.registry.list_agents(&ws).await {
        Ok(a) => axum::Json(a).into_response(),
        Err(e) => store_err(e),
    }
}

async fn delete_agent(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path((ws, agent)): Path<(String, String)>,
) -> Response {
    guard!(st, h);
    match st.registry.delete_agent(&ws, &agent).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => store_err(e),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewKey {
    #[serde(default)]
    scopes: Vec<String>,
    label: Option<String>,
    /// Unix seconds.
    expires_at: Option<i64>,
}

async fn create_key(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path(ws): Path<String>,
    axum::Json(b): axum::Json<NewKey>,
) -> Response {
    guard!(st, h);
    let scopes = match keys::parse_scopes(&b.scopes.join(" ")) {
        Ok(s) => s,
        Err(e) => return err(StatusCode::BAD_REQUEST, &e),
    };
    match st
        .registry
        .create_key(&ws, &scopes, b.label.as_deref(), b.expires_at)
        .await
    {
        Ok((info, secret)) => {
            let mut v = serde_json::to_value(&info).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("key".into(), json!(secret));
            }
            (StatusCode::CREATED, axum::Json(v)).into_response()
        }
        Err(e) => store_err(e),
    }
}

async fn list_keys(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path(ws): Path<String>,
) -> Response {
    guard!(st, h);
    match st.registry.list_keys(&ws).await {
        Ok(k) => axum::Json(k).into_response(),
        Err(e) => store_err(e),
    }
}

async fn revoke_key(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Path(key): Path<String>,
) -> Response {
    guard!(st, h);
    match st.registry.revoke_key(&key).await {
        Ok(()) => {
            // Its open streams end now (the sweeper would within `key_watch::SWEEP`).
            let why = crate::governance::key_watch::refusal(crate::store::KeyRejection::Revoked);
            st.governance.keys.end_key(&key, &why);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => store_err(e),
    }
}

#[derive(Deserialize)]
struct AuditQuery {
    workspace: Option<String>,
    agent: Option<String>,
    after: Option<i64>,
    limit: Option<i64>,
}

async fn audit_export(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Query(q): Query<AuditQuery>,
) -> Response {
    guard!(st, h);
    let mut out = Vec::new();
    match crate::store::backend::export_jsonl(
        &st.audit,
        q.workspace.as_deref(),
        q.after.unwrap_or(0),
        &mut out,
    )
    .await
    {
        Ok(_) => {
            let mut r = (StatusCode::OK, out).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-ndjson"),
            );
            r
        }
        Err(e) => store_err(e),
    }
}

async fn hops(
    State(st): State<Arc<GatewayState>>,
    h: HeaderMap,
    Query(q): Query<AuditQuery>,
) -> Response {
    guard!(st, h);
    match st
        .audit
        .records(
            q.workspace.as_deref(),
            q.agent.as_deref(),
            q.after.unwrap_or(0),
            q.limit.unwrap_or(100).clamp(1, 1000),
        )
        .await
    {
        Ok(r) => axum::Json(r).into_response(),
        Err(e) => store_err(e),
    }
}
