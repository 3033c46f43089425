//! Admin API of trust (under the admin token, like the rest of `/admin`), and the public key set:
//!
//! - `GET /admin/signing-keys`: the gateway's card signing keys (public parts, state);
//! - `POST /admin/signing-keys` `{}`: a new ES256 key (it signs cards from now on, being the
//!   newest active key); `POST /admin/signing-keys/rotate`: the same, and every other active key
//!   is retired; `POST /admin/signing-keys/{kid}/retire`: retires one key. Retired keys stay in
//!   the key set for `signing_key_grace_secs`. Private keys are never returned.
//! - `GET|PUT /admin/workspaces/{ws}/card-trust` `{requireSignedCards: true|false|null}`: the
//!   workspace's "require signed cards" switch (`null`: the fleet setting decides).
//! - `GET /a2a/.well-known/jwks.json` (no key): the key set the signatures' `jku` names.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;

use crate::state::GatewayState;
use crate::store::StoreError;
use crate::store::backend::{RegistryStore, TrustStore};
use crate::trust::own;

use crate::admin::reply::err;

/// Store errors of the trust routes: an invalid key or state is a conflict (409).
fn store_err(e: StoreError) -> Response {
    match e {
        StoreError::Invalid(m) => err(StatusCode::CONFLICT, &m),
        other => crate::admin::reply::store_err(other),
    }
}

/// The trust admin routes (the caller adds the admin token check).
pub fn routes() -> Router<Arc<GatewayState>> {
    Router::new()
        .route("/admin/signing-keys", get(list).post(create))
        .route("/admin/signing-keys/rotate", post(rotate))
        .route("/admin/signing-keys/{kid}/retire", post(retire))
        .route(
            "/admin/workspaces/{ws}/card-trust",
            get(get_card_trust).put(put_card_trust),
        )
}

async fn list(State(st): State<Arc<GatewayState>>) -> Response {
    match st.shared.signing_keys().await {
        Ok(k) => axum::Json(k).into_response(),
        Err(e) => store_err(e),
    }
}

async fn make(st: &GatewayState, rotate: bool) -> Response {
    match own::create_key_in(&st.shared, st.trust.seal.as_ref(), rotate).await {
        Ok(k) => (StatusCode::CREATED, axum::Json(k)).into_response(),
        Err(e) => store_err(e),
    }
}

async fn create(State(st): State<Arc<GatewayState>>) -> Response {
    make(&st, false).await
}

async fn rotate(State(st): State<Arc<GatewayState>>) -> Response {
    make(&st, true).await
}

async fn retire(State(st): State<Arc<GatewayState>>, Path(kid): Path<String>) -> Response {
    match st.shared.retire_signing_key(&kid).await {
        Ok(()) => match st.shared.signing_keys().await {
            Ok(k) => axum::Json(k.into_iter().find(|k| k.kid == kid)).into_response(),
            Err(e) => store_err(e),
        },
        Err(e) => store_err(e),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CardTrust {
    require_signed_cards: Option<bool>,
}

async fn card_trust_body(st: &GatewayState, ws: &str) -> Response {
    match st.shared.require_signed(ws).await {
        Ok(v) => axum::Json(json!({
            "requireSignedCards": v,
            "fleetRequireSignedCards": st.config().require_signed_cards,
            "effective": st.config().require_signed_cards || v.unwrap_or(false),
        }))
        .into_response(),
        Err(e) => store_err(e),
    }
}

async fn get_card_trust(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    match st.registry.workspace(&ws).await {
        Ok(Some(_)) => card_trust_body(&st, &ws).await,
        Ok(None) => err(StatusCode::NOT_FOUND, &format!("workspace {ws} not found")),
        Err(e) => store_err(e),
    }
}

async fn put_card_trust(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    axum::Json(b): axum::Json<CardTrust>,
) -> Response {
    match st
        .shared
        .set_require_signed(&ws, b.require_signed_cards)
        .await
    {
        Ok(()) => {
            st.trust.forget_switch(&ws);
            card_trust_body(&st, &ws).await
        }
        Err(e) => store_err(e),
    }
}

/// `GET /a2a/.well-known/jwks.json`: the gateway's card signing keys (active, and retired ones
/// within their grace period). No API key.
pub async fn jwks(State(st): State<Arc<GatewayState>>) -> Response {
    let grace = st
        .config()
        .signing_key_grace_secs
        .max(crate::config::MIN_SIGNING_KEY_GRACE_SECS);
    match own::jwks_in(&st.shared, grace).await {
        Ok(set) => {
            let mut r = axum::Json(set).into_response();
            r.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            );
            r
        }
        Err(e) => store_err(e),
    }
}
