//! The approval queue: held hops of every workspace (or one) with their redacted preview, and
//! approve / deny through the admin API (`/admin/workspaces/{ws}/approvals/{id}/approve|deny`),
//! which sends the held request or answers the caller.

use std::fmt::Write;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::backend::{admin, seg};
use super::html::{csrf_field, esc, notice, opt, page, unix};
use super::{Operator, admin_refusal, ok_notice};
use crate::state::GatewayState;

const STATES: [&str; 5] = ["pending", "approved", "denied", "expired", "withdrawn"];

#[derive(Deserialize, Default)]
pub(crate) struct QueueQuery {
    #[serde(default)]
    workspace: String,
    #[serde(default)]
    state: String,
    ok: Option<String>,
}

pub(crate) async fn list(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Query(q): Query<QueueQuery>,
) -> Response {
    let top = ok_notice(q.ok.as_deref());
    render(&st, &op, &q, StatusCode::OK, &top).await
}

async fn render(
    st: &Arc<GatewayState>,
    op: &Operator,
    q: &QueueQuery,
    status: StatusCode,
    top: &str,
) -> Response {
    let state = if q.state.is_empty() {
        "pending"
    } else {
        q.state.as_str()
    };
    let workspaces: Vec<String> = if q.workspace.is_empty() {
        st.store
            .list_workspaces()
            .unwrap_or_default()
            .into_iter()
            .map(|w| w.id)
            .collect()
    } else {
        vec![q.workspace.clone()]
    };
    let mut rows = String::new();
    let mut errors = String::new();
    for ws in &workspaces {
        let path = format!(
            "/admin/workspaces/{}/approvals?state={}",
            seg(ws),
            seg(state)
        );
        match admin(st, Method::GET, &path, None).await {
            Ok(Value::Array(list)) => {
                for a in &list {
                    rows.push_str(&row(ws, a, op));
                }
            }
            Ok(_) => {}
            Err(r) => errors.push_str(&admin_refusal(&r)),
        }
    }
    if rows.is_empty() {
        let _ = write!(
            rows,
            r#"<tr><td colspan="7">No {} approvals.</td></tr>"#,
            esc(state)
        );
    }
    let mut ws_opts = String::from(r#"<option value="">all</option>"#);
    for w in st.store.list_workspaces().unwrap_or_default() {
        let sel = if w.id == q.workspace { " selected" } else { "" };
        let _ = write!(
            ws_opts,
            r#"<option value="{id}"{sel}>{id}</option>"#,
            id = esc(&w.id)
        );
    }
    let mut s_opts = String::new();
    for s in STATES {
        let sel = if s == state { " selected" } else { "" };
        let _ = write!(s_opts, r#"<option value="{s}"{sel}>{s}</option>"#);
    }
    let body = format!(
        r#"{top}{errors}
<form method="get" action="/console/approvals" class="filters" aria-label="Filter approvals">
<div><label for="a-ws">Workspace</label><select id="a-ws" name="workspace">{ws_opts}</select></div>
<div><label for="a-state">State</label><select id="a-state" name="state">{s_opts}</select></div>
<div><button type="submit">Show</button></div></form>
<div class="scroll"><table id="approvals"><caption>Approvals ({state})</caption>
<thead><tr><th scope="col">Approval</th><th scope="col">Workspace / agent</th><th scope="col">Rule</th><th scope="col">Preview (redacted)</th><th scope="col">Held since / until</th><th scope="col">State</th><th scope="col">Decision</th></tr></thead>
<tbody>{rows}</tbody></table></div>"#,
        state = esc(state),
    );
    page(status, "Approvals", "Approvals", &op.csrf, &body)
}

fn row(ws: &str, a: &Value, op: &Operator) -> String {
    let id = a["id"].as_str().unwrap_or("");
    let state = a["state"].as_str().unwrap_or("");
    let preview = serde_json::to_string_pretty(&a["preview"]).unwrap_or_default();
    let decision = if state == "pending" {
        let action = |verb: &str, label: &str, class: &str| {
            format!(
                r#"<form method="post" action="/console/workspaces/{ws}/approvals/{ids}/{verb}" class="decide">{csrf}
<label for="{verb}-by-{idh}">Approver</label><input id="{verb}-by-{idh}" name="approver" required value="console">
<label for="{verb}-why-{idh}">Reason</label><input id="{verb}-why-{idh}" name="reason">
<button type="submit" class="{class}" aria-label="{label} {idh}">{label}</button></form>"#,
                ws = esc(&seg(ws)),
                ids = esc(&seg(id)),
                idh = esc(id),
                csrf = csrf_field(&op.csrf),
            )
        };
        format!(
            "{}{}",
            action("approve", "Approve", ""),
            action("deny", "Deny", "danger")
        )
    } else {
        format!(
            "{} {}",
            opt(a["approver"].as_str()),
            a["reason"]
                .as_str()
                .map(|r| format!("({})", esc(r)))
                .unwrap_or_default()
        )
    };
    format!(
        r#"<tr data-approval="{idh}"><th scope="row"><code>{idh}</code></th><td>{ws} / {agent}</td><td>{rule}</td><td><pre>{preview}</pre></td><td>{from}<br>{to}</td><td>{state}</td><td>{decision}</td></tr>"#,
        idh = esc(id),
        ws = esc(ws),
        agent = opt(a["agentId"].as_str()),
        rule = opt(a["rule"].as_str()),
        preview = esc(&preview),
        from = unix(a["createdAt"].as_i64().unwrap_or(0)),
        to = unix(a["expiresAt"].as_i64().unwrap_or(0)),
        state = esc(state),
    )
}

#[derive(Deserialize)]
pub(crate) struct DecideForm {
    #[serde(default)]
    approver: String,
    #[serde(default)]
    reason: String,
}

pub(crate) async fn decide(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, id, action)): Path<(String, String, String)>,
    axum::Form(f): axum::Form<DecideForm>,
) -> Response {
    let (verb, done) = match action.as_str() {
        "approve" => ("approve", "approved"),
        "deny" => ("deny", "denied"),
        _ => {
            return page(
                StatusCode::NOT_FOUND,
                "Approvals",
                "Approvals",
                &op.csrf,
                &notice("unknown action", true),
            );
        }
    };
    let reason = f.reason.trim();
    let body = json!({"approver": f.approver.trim(),
        "reason": (!reason.is_empty()).then_some(reason)});
    let path = format!(
        "/admin/workspaces/{}/approvals/{}/{verb}",
        seg(&ws),
        seg(&id)
    );
    let q = QueueQuery {
        workspace: ws.clone(),
        ..QueueQuery::default()
    };
    match admin(&st, Method::POST, &path, Some(&body)).await {
        Ok(_) => Redirect::to(&format!("/console/approvals?ok={done}")).into_response(),
        Err(r) => {
            let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
            render(&st, &op, &q, status, &admin_refusal(&r)).await
        }
    }
}
