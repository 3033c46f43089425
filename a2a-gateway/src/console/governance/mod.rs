//! A workspace's governance pages (issue 35): policy rules with explain and dry-run results,
//! PII rules, session kills, settings and limits, card trust and signing keys, and the admin
//! audit. Each change is one admin API request ([`super::backend::admin`]), so the page runs
//! the admin API's checks, shows its refusal verbatim and leaves its admin-audit row.
//!
//! One file per page: `policy` (with `policy_form` and `policy_view`), `pii`, `kills`,
//! `settings`, `trust`, `audit`.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};

use super::Operator;
use super::html::{notice, page};
use crate::state::GatewayState;
use crate::store::backend::RegistryStore;

mod audit;
mod kills;
mod pii;
mod policy;
mod policy_form;
mod policy_view;
mod settings;
mod trust;

/// The governance pages' routes (the console adds the session check around them).
pub(crate) fn routes() -> Router<Arc<GatewayState>> {
    Router::new()
        .route(
            "/console/workspaces/{ws}/policy",
            get(policy::view).post(policy::submit),
        )
        .route(
            "/console/workspaces/{ws}/policy/delete",
            post(policy::delete),
        )
        .route(
            "/console/workspaces/{ws}/pii",
            get(pii::view).post(pii::save),
        )
        .route("/console/workspaces/{ws}/pii/delete", post(pii::delete))
        .route(
            "/console/workspaces/{ws}/kills",
            get(kills::view).post(kills::kill),
        )
        .route("/console/workspaces/{ws}/kills/lift", post(kills::lift))
        .route(
            "/console/workspaces/{ws}/settings",
            get(settings::view).post(settings::save),
        )
        .route(
            "/console/workspaces/{ws}/settings/limits",
            post(settings::limits),
        )
        .route("/console/workspaces/{ws}/trust", get(trust::view))
        .route(
            "/console/workspaces/{ws}/trust/card-trust",
            post(trust::card_trust),
        )
        .route(
            "/console/workspaces/{ws}/trust/agents/{agent}/pin",
            post(trust::pin),
        )
        .route(
            "/console/workspaces/{ws}/trust/signing-keys",
            post(trust::new_key),
        )
        .route(
            "/console/workspaces/{ws}/trust/signing-keys/rotate",
            post(trust::rotate),
        )
        .route(
            "/console/workspaces/{ws}/trust/signing-keys/{kid}/retire",
            post(trust::retire),
        )
        .route("/console/admin-audit", get(audit::view))
}

/// A governance page of `ws`: the workspace tabs with `tab` current, then `body`.
fn ws_page(
    op: &Operator,
    ws: &str,
    tab: &str,
    title: &str,
    status: StatusCode,
    body: &str,
) -> Response {
    let html = format!("{}{body}", super::ws_tabs(ws, tab));
    page(status, title, "Workspaces", &op.csrf, &html)
}

/// `Err(page)` when `ws` is not a workspace (or the registry cannot be read).
async fn require_ws(
    st: &GatewayState,
    op: &Operator,
    ws: &str,
    title: &str,
) -> Result<(), Response> {
    let (status, why) = match st.registry.workspace(ws).await {
        Ok(Some(_)) => return Ok(()),
        Ok(None) => (StatusCode::NOT_FOUND, format!("workspace {ws} not found")),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    Err(page(
        status,
        title,
        "Workspaces",
        &op.csrf,
        &notice(&why, true),
    ))
}

/// The status of a page that shows a refused admin request.
fn refused_status(r: &super::backend::Refused) -> StatusCode {
    StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST)
}

/// The value of form field `name` (the last one given), trimmed; empty when absent.
fn field(pairs: &[(String, String)], name: &str) -> String {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default()
}

/// A form body as its (name, value) pairs, in order.
fn pairs(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// `<option>`s of `choices` (value, label), `current` selected.
fn options(choices: &[(&str, &str)], current: &str) -> String {
    choices
        .iter()
        .map(|(v, label)| {
            let sel = if *v == current { " selected" } else { "" };
            format!(
                r#"<option value="{}"{sel}>{}</option>"#,
                super::html::esc(v),
                super::html::esc(label)
            )
        })
        .collect()
}
