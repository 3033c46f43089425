//! Admin API of workspace settings (under the admin token; stored by
//! [`crate::store::WorkspaceSettings`]):
//!
//! - `GET /admin/workspaces/{ws}/settings`: the settings, with their defaults;
//! - `PATCH /admin/workspaces/{ws}/settings` `{"a2a.extensions.allowed": [uri...],
//!   "a2a.push.delivery": "direct" | "gateway"}`: changes the members given (`null` resets one
//!   to its default); the answer is the new settings.
//!
//! A running gateway uses a change from its next request on.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

use crate::state::GatewayState;
use crate::store::backend::RegistryStore;
use crate::{store::PushDelivery, store::WorkspaceSettings};

use crate::{admin::reply::err, admin::reply::store_err};

/// The settings routes (the caller adds the admin token check).
pub fn routes() -> Router<Arc<GatewayState>> {
    Router::new().route(
        "/admin/workspaces/{ws}/settings",
        get(get_settings).patch(patch_settings),
    )
}

/// The settings as shown: every member, defaults included, and where push delivery comes from.
pub fn shown(st: &GatewayState, ws: &str, s: &WorkspaceSettings) -> Value {
    let delivery = crate::push::delivery(st, ws, s);
    json!({
        "a2a.extensions.allowed": s.extensions_allowed,
        "a2a.push.delivery": delivery,
        "a2a.push.delivery.source": if s.push_delivery.is_some() {
            "workspace"
        } else if delivery == Some(PushDelivery::Direct) {
            "push_direct_workspaces (deprecated)"
        } else {
            "default"
        },
    })
}

async fn get_settings(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    match st.registry.workspace(&ws).await {
        Ok(Some(_)) => {}
        Ok(None) => return err(StatusCode::NOT_FOUND, &format!("workspace {ws} not found")),
        Err(e) => return store_err(e),
    }
    match st.registry.workspace_settings(&ws).await {
        Ok(s) => axum::Json(shown(&st, &ws, &s)).into_response(),
        Err(e) => store_err(e),
    }
}

/// Applies a PATCH document to `s`.
pub fn apply_patch(s: &mut WorkspaceSettings, patch: &Map<String, Value>) -> Result<(), String> {
    for (k, v) in patch {
        match k.as_str() {
            "a2a.extensions.allowed" => {
                s.extensions_allowed = if v.is_null() {
                    Vec::new()
                } else {
                    let list: Vec<String> = serde_json::from_value(v.clone())
                        .map_err(|_| format!("{k} must be a list of extension URIs"))?;
                    let mut out: Vec<String> = Vec::new();
                    for u in list {
                        if !out.contains(&u) {
                            out.push(u);
                        }
                    }
                    out
                };
            }
            "a2a.push.delivery" => {
                s.push_delivery = if v.is_null() {
                    None
                } else {
                    Some(
                        serde_json::from_value(v.clone())
                            .map_err(|_| format!("{k} must be \"direct\" or \"gateway\""))?,
                    )
                };
            }
            other => return Err(format!("unknown setting {other:?}")),
        }
    }
    Ok(())
}

async fn patch_settings(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let Some(patch) = body.as_object() else {
        return err(
            StatusCode::BAD_REQUEST,
            "the settings must be a JSON object",
        );
    };
    let mut s = match st.registry.workspace_settings(&ws).await {
        Ok(s) => s,
        Err(e) => return store_err(e),
    };
    if let Err(m) = apply_patch(&mut s, patch) {
        return err(StatusCode::BAD_REQUEST, &m);
    }
    match st.registry.put_workspace_settings(&ws, &s).await {
        Ok(()) => axum::Json(shown(&st, &ws, &s)).into_response(),
        Err(e) => store_err(e),
    }
}
