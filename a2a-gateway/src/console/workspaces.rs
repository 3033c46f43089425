//! The workspaces view: every workspace with its agent, key and pending-approval counts (an
//! index count: held requests are never read), and the form that creates one
//! (`POST /admin/workspaces`).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::json;

use super::backend::{Refused, admin};
use super::html::{csrf_field, esc, notice, page};
use super::{Operator, admin_refusal, ok_notice, ws_href};
use crate::state::GatewayState;
use crate::store::backend::{HoldStore, RegistryStore};

/// `?ok=` after a redirect.
#[derive(Deserialize, Default)]
pub(crate) struct Flash {
    ok: Option<String>,
}

impl Flash {
    /// The notice's code.
    pub(crate) fn ok(&self) -> Option<&str> {
        self.ok.as_deref()
    }

    /// The notice of this code among a page's `(code, text)` pairs (none for another code).
    pub(crate) fn notice(&self, texts: &[(&str, &str)]) -> String {
        texts
            .iter()
            .find(|(code, _)| self.ok() == Some(*code))
            .map(|(_, text)| super::html::notice(text, false))
            .unwrap_or_default()
    }
}

pub(crate) async fn index(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Query(q): Query<Flash>,
) -> Response {
    render(&st, &op, StatusCode::OK, &ok_notice(q.ok()), "", "").await
}

async fn render(
    st: &GatewayState,
    op: &Operator,
    status: StatusCode,
    message: &str,
    id: &str,
    name: &str,
) -> Response {
    let list = match st.registry.list_workspaces().await {
        Ok(l) => l,
        Err(e) => {
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Workspaces",
                "Workspaces",
                &op.csrf,
                &notice(&e.to_string(), true),
            );
        }
    };
    let mut rows = String::new();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    for w in &list {
        let agents = st
            .registry
            .list_agents(&w.id)
            .await
            .map(|a| a.len())
            .unwrap_or(0);
        let keys = st
            .registry
            .list_keys(&w.id)
            .await
            .map(|k| k.iter().filter(|k| k.revoked_at.is_none()).count())
            .unwrap_or(0);
        // An index count (the held requests are never read); those past their hold are
        // marked expired first, as the queue does.
        let approvals = &st.holds;
        let _ = approvals.expire_due(&w.id, now).await;
        let pending = approvals
            .approval_count(&w.id, "pending")
            .await
            .unwrap_or(0);
        let href = ws_href(&w.id);
        rows.push_str(&format!(
            r#"<tr><th scope="row"><a href="{h}">{id}</a></th><td>{name}</td><td>{agents}</td><td><a href="{h}/keys">{keys}</a></td><td>{pending}</td></tr>"#,
            h = esc(&href),
            id = esc(&w.id),
            name = esc(&w.name),
        ));
    }
    if list.is_empty() {
        rows.push_str(r#"<tr><td colspan="5">No workspaces yet.</td></tr>"#);
    }
    let body = format!(
        r#"{message}
<div class="scroll"><table><caption>Workspaces</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Agents</th><th scope="col">Active keys</th><th scope="col">Pending approvals</th></tr></thead>
<tbody>{rows}</tbody></table></div>
<section aria-labelledby="new-ws"><h2 id="new-ws">New workspace</h2>
<form method="post" action="/console/workspaces" class="card">{csrf}
<label for="ws-id">Id</label><input id="ws-id" name="id" required value="{id}">
<label for="ws-name">Name</label><input id="ws-name" name="name" value="{name}">
<button type="submit">Create workspace</button></form></section>"#,
        csrf = csrf_field(&op.csrf),
        id = esc(id),
        name = esc(name),
    );
    page(status, "Workspaces", "Workspaces", &op.csrf, &body)
}

#[derive(Deserialize)]
pub(crate) struct NewWs {
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: String,
}

pub(crate) async fn create(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    axum::Form(f): axum::Form<NewWs>,
) -> Response {
    let name = if f.name.trim().is_empty() {
        None
    } else {
        Some(f.name.trim())
    };
    let body = json!({"id": f.id.trim(), "name": name});
    match admin(&st, Method::POST, "/admin/workspaces", Some(&body)).await {
        Ok(_) => Redirect::to("/console?ok=ws-created").into_response(),
        Err(r @ Refused { .. }) => {
            render(
                &st,
                &op,
                StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
                &admin_refusal(&r),
                &f.id,
                &f.name,
            )
            .await
        }
    }
}
