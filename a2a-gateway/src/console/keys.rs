//! A workspace's API keys: the list (id, label, scopes, created, expiry, state), the form that
//! creates one (the secret is shown once, in the answer to that form, never again) and revoke.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::json;

use super::backend::{admin, seg};
use super::html::{csrf_field, esc, notice, opt, page, unix};
use super::workspaces::Flash;
use super::{Operator, admin_refusal, ok_notice, ws_href, ws_tabs};
use crate::state::GatewayState;
use crate::store::backend::RegistryStore;

pub(crate) async fn list(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    render(&st, &op, &ws, StatusCode::OK, &ok_notice(q.ok())).await
}

async fn render(
    st: &GatewayState,
    op: &Operator,
    ws: &str,
    status: StatusCode,
    top: &str,
) -> Response {
    let title = format!("Keys of {ws}");
    let keys = match st.registry.workspace(ws).await {
        Ok(Some(_)) => st.registry.list_keys(ws).await,
        Ok(None) => {
            return page(
                StatusCode::NOT_FOUND,
                &title,
                "Workspaces",
                &op.csrf,
                &notice(&format!("workspace {ws} not found"), true),
            );
        }
        Err(e) => Err(e),
    };
    let keys = match keys {
        Ok(k) => k,
        Err(e) => {
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                &title,
                "Workspaces",
                &op.csrf,
                &notice(&e.to_string(), true),
            );
        }
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut rows = String::new();
    for k in &keys {
        let state = if k.revoked_at.is_some() {
            "revoked"
        } else if k.expires_at.is_some_and(|e| e <= now) {
            "expired"
        } else {
            "active"
        };
        let scopes = if k.scopes.is_empty() {
            "all (unscoped)".to_owned()
        } else {
            crate::keys::scopes_to_string(&k.scopes)
        };
        let action = if state == "active" {
            format!(
                r#"<form method="post" action="{h}/keys/{id}/revoke">{csrf}<button type="submit" class="danger" aria-label="Revoke key {kid}">Revoke</button></form>"#,
                h = esc(&ws_href(ws)),
                id = esc(&seg(&k.key_id)),
                kid = esc(&k.key_id),
                csrf = csrf_field(&op.csrf),
            )
        } else {
            String::new()
        };
        rows.push_str(&format!(
            r#"<tr data-key="{id}"><th scope="row"><code>{id}</code></th><td>{label}</td><td>{scopes}</td><td>{created}</td><td>{expires}</td><td class="state-{state}">{state}</td><td>{action}</td></tr>"#,
            id = esc(&k.key_id),
            label = opt(k.label.as_deref()),
            scopes = esc(&scopes),
            created = unix(k.created_at),
            expires = k.expires_at.map_or_else(|| "never".to_owned(), unix),
        ));
    }
    if keys.is_empty() {
        rows.push_str(r#"<tr><td colspan="7">No keys yet.</td></tr>"#);
    }
    let body = format!(
        r#"{tabs}{top}
<div class="scroll"><table><caption>Keys (the secrets are never shown here)</caption>
<thead><tr><th scope="col">Key id</th><th scope="col">Label</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
<tbody>{rows}</tbody></table></div>
<section aria-labelledby="new-key"><h2 id="new-key">New key</h2>
<form method="post" action="{h}/keys" class="card">{csrf}
<label for="key-label">Label</label><input id="key-label" name="label">
<fieldset><legend>Scopes (none checked: unscoped)</legend>
<label class="inline"><input type="checkbox" name="scope" value="a2a:read"> a2a:read</label>
<label class="inline"><input type="checkbox" name="scope" value="a2a:send"> a2a:send</label>
</fieldset>
<label for="key-days">Expires after (days, empty: never)</label><input id="key-days" name="days" type="number" min="1" max="3650" inputmode="numeric">
<button type="submit">Create key</button></form></section>"#,
        tabs = ws_tabs(ws, "Keys"),
        h = esc(&ws_href(ws)),
        csrf = csrf_field(&op.csrf),
    );
    page(status, &title, "Workspaces", &op.csrf, &body)
}

pub(crate) async fn create(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    // Repeated `scope` fields: read the pairs rather than a struct.
    let mut label = String::new();
    let mut scopes = Vec::new();
    let mut days = String::new();
    for (k, v) in url::form_urlencoded::parse(&body) {
        match &*k {
            "label" => label = v.trim().to_owned(),
            "scope" => scopes.push(v.into_owned()),
            "days" => days = v.trim().to_owned(),
            _ => {}
        }
    }
    let expires_at = if days.is_empty() {
        None
    } else {
        match days.parse::<i64>() {
            Ok(d) if (1..=3650).contains(&d) => {
                Some(time::OffsetDateTime::now_utc().unix_timestamp() + d * 86_400)
            }
            _ => {
                return render(
                    &st,
                    &op,
                    &ws,
                    StatusCode::BAD_REQUEST,
                    &notice("Expiry: a whole number of days from 1 to 3650.", true),
                )
                .await;
            }
        }
    };
    let req = json!({"scopes": scopes, "label": (!label.is_empty()).then_some(label),
        "expiresAt": expires_at});
    let path = format!("/admin/workspaces/{}/keys", seg(&ws));
    match admin(&st, Method::POST, &path, Some(&req)).await {
        Ok(v) => {
            let secret = v["key"].as_str().unwrap_or("");
            let id = v["keyId"].as_str().unwrap_or("");
            let shown = format!(
                r#"<div class="secret" role="status"><p>Key <code>{id}</code> created. Copy the key now: <strong>it is shown only this once</strong>.</p>
<label for="new-secret">Key</label><input id="new-secret" readonly value="{secret}" class="mono"></div>"#,
                id = esc(id),
                secret = esc(secret),
            );
            render(&st, &op, &ws, StatusCode::CREATED, &shown).await
        }
        Err(r) => {
            render(
                &st,
                &op,
                &ws,
                StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
                &admin_refusal(&r),
            )
            .await
        }
    }
}

pub(crate) async fn revoke(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, key)): Path<(String, String)>,
) -> Response {
    // The admin API revokes by key id alone: check the key is this workspace's first.
    let owned = st
        .registry
        .list_keys(&ws)
        .await
        .map(|l| l.iter().any(|k| k.key_id == key))
        .unwrap_or(false);
    if !owned {
        return render(
            &st,
            &op,
            &ws,
            StatusCode::NOT_FOUND,
            &notice(&format!("key {key} not found in workspace {ws}"), true),
        )
        .await;
    }
    let path = format!("/admin/keys/{}/revoke", seg(&key));
    match admin(&st, Method::POST, &path, None).await {
        Ok(_) => Redirect::to(&format!("{}/keys?ok=key-revoked", ws_href(&ws))).into_response(),
        Err(r) => {
            render(
                &st,
                &op,
                &ws,
                StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
                &admin_refusal(&r),
            )
            .await
        }
    }
}
