//! The approval queue: held hops of every workspace (or one) with their preview (the parts'
//! kind and size, the start of the text), 50 a page per workspace with each workspace's count
//! (lists and counts never read the held requests); each approval's page shows the whole held
//! request as it will be sent, with sizes, and decides it: approve / deny through the admin API
//! (`/admin/workspaces/{ws}/approvals/{id}/approve|deny`), which sends the held request or
//! answers the caller (with the reason written here).

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
use crate::store::backend::{HoldStore, RegistryStore};

const STATES: [&str; 6] = [
    "pending",
    "approved",
    "denied",
    "expired",
    "withdrawn",
    "failed",
];

/// Approvals a queue page shows per workspace (the rest a page further: `after`).
const PAGE: usize = 50;

#[derive(Deserialize, Default)]
pub(crate) struct QueueQuery {
    #[serde(default)]
    workspace: String,
    #[serde(default)]
    state: String,
    /// The last approval of the previous page (one workspace's queue).
    #[serde(default)]
    after: String,
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

/// The queue's link to `ws`'s approvals in `state`, after `after` when given.
fn queue_href(ws: &str, state: &str, after: Option<&str>) -> String {
    let mut h = format!(
        "/console/approvals?workspace={}&state={}",
        seg(ws),
        seg(state)
    );
    if let Some(a) = after {
        let _ = write!(h, "&after={}", seg(a));
    }
    h
}

/// One workspace's line above the queue: its count in the state, what the page shows, and the
/// links to the newest and the older ones.
fn count_line(ws: &str, state: &str, total: u64, list: &[Value], one: bool, paged: bool) -> String {
    let shown = list.len().min(PAGE);
    let more = match list.get(PAGE - 1).and_then(|a| a["id"].as_str()) {
        Some(last) if list.len() > PAGE && one => format!(
            r#" <a id="older" href="{}">Older</a>"#,
            esc(&queue_href(ws, state, Some(last)))
        ),
        Some(_) if list.len() > PAGE => format!(
            r#" <a href="{}">Page through them</a>"#,
            esc(&queue_href(ws, state, None))
        ),
        _ => String::new(),
    };
    let newest = if paged {
        format!(
            r#" <a id="newest" href="{}">Newest</a>"#,
            esc(&queue_href(ws, state, None))
        )
    } else {
        String::new()
    };
    format!(
        "<li><code>{wsh}</code>: {total} {sh}; this page shows {shown}.{newest}{more}</li>",
        wsh = esc(ws),
        sh = esc(state),
    )
}

/// The queue: a page of each workspace's approvals in one state (the admin API's list: facts
/// and previews, never the held requests), and each workspace's count of them (an index
/// count).
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
    let one = !q.workspace.is_empty();
    let workspaces: Vec<String> = if one {
        vec![q.workspace.clone()]
    } else {
        st.registry
            .list_workspaces()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|w| w.id)
            .collect()
    };
    let after = (one && !q.after.is_empty()).then_some(q.after.as_str());
    let mut rows = String::new();
    let mut errors = String::new();
    let mut counts = String::new();
    for ws in &workspaces {
        // One more than a page: whether older ones follow.
        let mut path = format!(
            "/admin/workspaces/{}/approvals?state={}&limit={}",
            seg(ws),
            seg(state),
            PAGE + 1
        );
        if let Some(a) = after {
            let _ = write!(path, "&after={}", seg(a));
        }
        let list = match admin(st, Method::GET, &path, None).await {
            Ok(Value::Array(list)) => list,
            Ok(_) => Vec::new(),
            Err(r) => {
                errors.push_str(&admin_refusal(&r));
                continue;
            }
        };
        for a in list.iter().take(PAGE) {
            rows.push_str(&row(ws, a, op));
        }
        let total = st.holds.approval_count(ws, state).await.unwrap_or(0);
        if total > 0 || after.is_some() {
            counts.push_str(&count_line(ws, state, total, &list, one, after.is_some()));
        }
    }
    if rows.is_empty() {
        let _ = write!(
            rows,
            r#"<tr><td colspan="7">No {} approvals.</td></tr>"#,
            esc(state)
        );
    }
    if !counts.is_empty() {
        counts = format!(
            r#"<ul id="approval-counts" aria-label="Approvals per workspace">{counts}</ul>"#
        );
    }
    let mut ws_opts = String::from(r#"<option value="">all</option>"#);
    for w in st.registry.list_workspaces().await.unwrap_or_default() {
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
{counts}
<div class="scroll"><table id="approvals"><caption>Approvals ({state})</caption>
<thead><tr><th scope="col">Approval</th><th scope="col">Workspace / agent</th><th scope="col">Rule</th><th scope="col">Preview (as it will be sent)</th><th scope="col">Held since / until</th><th scope="col">State</th><th scope="col">Decision</th></tr></thead>
<tbody>{rows}</tbody></table></div>"#,
        state = esc(state),
    );
    page(status, "Approvals", "Approvals", &op.csrf, &body)
}

fn href(ws: &str, id: &str) -> String {
    format!("/console/workspaces/{}/approvals/{}", seg(ws), seg(id))
}

/// The decision cell: the approver and reason once decided; nothing while pending (deciding
/// is on the approval's page, beside the whole request).
fn decision(a: &Value) -> String {
    format!(
        "{} {}",
        opt(a["approver"].as_str()),
        a["reason"]
            .as_str()
            .map(|r| format!("({})", esc(r)))
            .unwrap_or_default()
    )
}

fn row(ws: &str, a: &Value, _op: &Operator) -> String {
    let id = a["id"].as_str().unwrap_or("");
    let state = a["state"].as_str().unwrap_or("");
    let preview = serde_json::to_string_pretty(&a["preview"]).unwrap_or_default();
    let link = if state == "pending" {
        "Review the whole request and decide"
    } else {
        "The whole request"
    };
    format!(
        r#"<tr data-approval="{idh}"><th scope="row"><a href="{href}"><code>{idh}</code></a></th><td>{ws} / {agent}</td><td>{rule}</td><td><pre>{preview}</pre><a class="review" href="{href}">{link}</a></td><td>{from}<br>{to}</td><td>{state}</td><td>{decision}</td></tr>"#,
        idh = esc(id),
        href = esc(&href(ws, id)),
        ws = esc(ws),
        agent = opt(a["agentId"].as_str()),
        rule = opt(a["rule"].as_str()),
        preview = esc(&preview),
        from = unix(a["createdAt"].as_i64().unwrap_or(0)),
        to = unix(a["expiresAt"].as_i64().unwrap_or(0)),
        state = esc(state),
        decision = decision(a),
    )
}

/// One approval: its facts, the whole held request as it will be sent (every part and member,
/// the workspace's PII rules applied), every part's size, and, while pending, the decision.
pub(crate) async fn detail(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, id)): Path<(String, String)>,
) -> Response {
    let path = format!("/admin/workspaces/{}/approvals/{}", seg(&ws), seg(&id));
    let a = match admin(&st, Method::GET, &path, None).await {
        Ok(a) => a,
        Err(r) => {
            let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
            return page(
                status,
                "Approval",
                "Approvals",
                &op.csrf,
                &admin_refusal(&r),
            );
        }
    };
    let state = a["state"].as_str().unwrap_or("");
    let mut sizes = String::new();
    for (i, p) in a["sizes"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let _ = write!(
            sizes,
            "<tr><th scope=\"row\">{i}</th><td>{kind}</td><td>{bytes}</td><td>{media}</td><td>{file}</td></tr>",
            kind = opt(p["kind"].as_str()),
            bytes = p["bytes"].as_u64().unwrap_or(0),
            media = opt(p["mediaType"].as_str()),
            file = opt(p["filename"].as_str()),
        );
    }
    let request = match a.get("request") {
        Some(r) => serde_json::to_string_pretty(r).unwrap_or_default(),
        None => a["requestError"].as_str().unwrap_or("").to_owned(),
    };
    let decide = if state == "pending" && !op.roles.may_approve(&ws) {
        format!(
            "<p>Pending. {} may not decide approvals of this workspace.</p>",
            esc(&op.name)
        )
    } else if state == "pending" {
        let action = |verb: &str, label: &str, class: &str| {
            format!(
                r#"<form method="post" action="{href}/{verb}" class="decide">{csrf}
<p class="hint">Decided as <strong>{who}</strong>.</p>
<label for="{verb}-why-{idh}">Reason (the caller sees it when denied)</label><input id="{verb}-why-{idh}" name="reason">
<button type="submit" class="{class}" aria-label="{label} {idh}">{label}</button></form>"#,
                href = esc(&href(&ws, &id)),
                idh = esc(&id),
                csrf = csrf_field(&op.csrf),
                who = esc(&op.name),
            )
        };
        format!(
            "{}{}",
            action("approve", "Approve", ""),
            action("deny", "Deny", "danger")
        )
    } else {
        format!("<p>{} {}</p>", esc(state), decision(&a))
    };
    let body = format!(
        r#"<section id="approval" data-approval="{idh}" aria-label="Approval {idh}">
<p>Workspace <code>{wsh}</code>, agent {agent}, rule {rule}, key {key}, state <strong>{state}</strong>; held {from}, until {to}. <a href="{story}">The held hop and its story</a>.</p>
<h2>Whole request ({bytes} bytes), as it will be sent</h2>
<div class="scroll"><table id="parts"><caption>Parts</caption>
<thead><tr><th scope="col">#</th><th scope="col">Kind</th><th scope="col">Bytes</th><th scope="col">Media type</th><th scope="col">File name</th></tr></thead>
<tbody>{sizes}</tbody></table></div>
<pre id="request">{request}</pre>
<h2>Decision</h2>{decide}</section>"#,
        idh = esc(&id),
        wsh = esc(&ws),
        story = esc(&format!(
            "/console/hops?workspace={}&agent={}&task={}",
            seg(&ws),
            seg(a["agentId"].as_str().unwrap_or("")),
            seg(&format!("{}{id}", crate::governance::approval::TASK_PREFIX))
        )),
        agent = opt(a["agentId"].as_str()),
        rule = opt(a["rule"].as_str()),
        key = opt(a["keyId"].as_str()),
        state = esc(state),
        from = unix(a["createdAt"].as_i64().unwrap_or(0)),
        to = unix(a["expiresAt"].as_i64().unwrap_or(0)),
        bytes = a["sizes"]["bytes"].as_u64().unwrap_or(0),
        request = esc(&request),
    );
    page(StatusCode::OK, "Approval", "Approvals", &op.csrf, &body)
}

/// An approval's decision form: the reason only; the approver is the logged-in operator.
#[derive(Deserialize)]
pub(crate) struct DecideForm {
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
    let body = json!({"approver": op.name,
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
