//! A workspace's session kills: the standing kills (context or task, agent, reason, when) and
//! the form that kills a context or a task (`POST /admin/workspaces/{ws}/kill`); the answer
//! shows what the kill canceled at the peers and which tasks a context kill found; and lift
//! (`DELETE /admin/workspaces/{ws}/kills/{kind}/{id}`).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::{Value, json};

use super::super::backend::{admin, seg};
use super::super::html::{csrf_field, esc, notice, opt, unix};
use super::super::workspaces::Flash;
use super::super::{Operator, admin_refusal, ws_href};
use super::{field, options, pairs, refused_status, require_ws, ws_page};
use crate::state::GatewayState;
use crate::store::backend::{HoldStore, RegistryStore};

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let top = q.notice(&[(
        "lifted",
        "Kill lifted: requests naming it are served again.",
    )]);
    render(&st, &op, &ws, StatusCode::OK, &top).await
}

pub(crate) async fn lift(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let p = pairs(&body);
    let path = format!(
        "/admin/workspaces/{}/kills/{}/{}",
        seg(&ws),
        seg(&field(&p, "kind")),
        seg(&field(&p, "id"))
    );
    match admin(&st, Method::DELETE, &path, None).await {
        Ok(_) => Redirect::to(&format!("{}/kills?ok=lifted", ws_href(&ws))).into_response(),
        Err(r) => render(&st, &op, &ws, refused_status(&r), &admin_refusal(&r)).await,
    }
}

/// The kill request a posted form describes.
pub(crate) fn request_of(body: &[u8]) -> Value {
    let p = pairs(body);
    let opt_field = |name: &str| {
        let v = field(&p, name);
        (!v.is_empty()).then_some(v)
    };
    json!({"kind": field(&p, "kind"), "id": field(&p, "id"),
        "agentId": opt_field("agent"), "reason": opt_field("reason")})
}

pub(crate) async fn kill(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let req = request_of(&body);
    let path = format!("/admin/workspaces/{}/kill", seg(&ws));
    match admin(&st, Method::POST, &path, Some(&req)).await {
        Ok(v) => {
            let mut canceled = String::new();
            for c in v["canceled"].as_array().into_iter().flatten() {
                canceled.push_str(&format!(
                    "<li>task <code>{}</code> at <code>{}</code>: {}</li>",
                    esc(c["taskId"].as_str().unwrap_or_default()),
                    esc(c["agentId"].as_str().unwrap_or_default()),
                    esc(c["outcome"].as_str().unwrap_or_default()),
                ));
            }
            if canceled.is_empty() {
                canceled.push_str("<li>no task was running</li>");
            }
            let top = format!(
                r#"<div class="notice" role="status"><p>Killed {kind} <code>{id}</code>: sends naming it are refused (<code>a2a_session_killed</code>) and its open streams end.</p><p>Canceled at the peers:</p><ul>{canceled}</ul></div>"#,
                kind = esc(req["kind"].as_str().unwrap_or_default()),
                id = esc(req["id"].as_str().unwrap_or_default()),
            );
            render(&st, &op, &ws, StatusCode::CREATED, &top).await
        }
        Err(r) => render(&st, &op, &ws, refused_status(&r), &admin_refusal(&r)).await,
    }
}

async fn render(
    st: &GatewayState,
    op: &Operator,
    ws: &str,
    status: StatusCode,
    top: &str,
) -> Response {
    let title = format!("Session kills of {ws}");
    if let Err(p) = require_ws(st, op, ws, &title).await {
        return p;
    }
    let (kills, agents) = match (st.holds.kills(ws).await, st.registry.list_agents(ws).await) {
        (Ok(k), Ok(a)) => (k, a),
        (Err(e), _) | (_, Err(e)) => {
            return ws_page(
                op,
                ws,
                "Kills",
                &title,
                StatusCode::INTERNAL_SERVER_ERROR,
                &notice(&e.to_string(), true),
            );
        }
    };
    let mut rows = String::new();
    for k in kills.iter().rev() {
        rows.push_str(&format!(
            r#"<tr data-kill="{kind}:{id}"><td>{kind}</td><th scope="row"><code>{id}</code></th><td>{agent}</td><td>{reason}</td><td>{when}</td>
<td><form method="post" action="{h}/kills/lift">{csrf}<input type="hidden" name="kind" value="{kind}"><input type="hidden" name="id" value="{id}"><button type="submit" aria-label="Lift the kill of {kind} {id}">Lift</button></form></td></tr>"#,
            h = esc(&ws_href(ws)),
            csrf = csrf_field(&op.csrf),
            kind = esc(&k.kind),
            id = esc(&k.id),
            agent = opt(k.agent_id.as_deref()),
            reason = opt(k.reason.as_deref()),
            when = unix(k.killed_at),
        ));
    }
    if kills.is_empty() {
        rows.push_str(r#"<tr><td colspan="6">No kills in this workspace.</td></tr>"#);
    }
    let agent_choices: Vec<(&str, &str)> =
        std::iter::once(("", "any (every agent of the workspace)"))
            .chain(
                agents
                    .iter()
                    .map(|a| (a.agent_id.as_str(), a.agent_id.as_str())),
            )
            .collect();
    let body = format!(
        r#"{top}
<div class="scroll"><table id="kills"><caption>Standing kills, newest first ({n})</caption>
<thead><tr><th scope="col">Kind</th><th scope="col">Id</th><th scope="col">Agent</th><th scope="col">Reason</th><th scope="col">Killed at</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
<tbody>{rows}</tbody></table></div>
<p class="hint">Lifting a kill serves requests naming it again; what it ended (streams, canceled tasks) stays ended. A context kill also killed the context's tasks it found: lift those rows too.</p>
<section aria-labelledby="new-kill"><h2 id="new-kill">Kill a session</h2>
<form method="post" action="{h}/kills" class="card" id="kill-form">{csrf}
<label for="kill-kind">Kind</label>
<select id="kill-kind" name="kind">{kinds}</select>
<label for="kill-id">Context id or task id</label>
<input id="kill-id" name="id" required maxlength="1024" class="mono">
<label for="kill-agent">Agent (its task is canceled at the peer)</label>
<select id="kill-agent" name="agent">{agents}</select>
<label for="kill-reason">Reason (recorded)</label>
<input id="kill-reason" name="reason">
<p class="hint">Sends naming the context or task are refused from now on, its open streams end, and its
tasks are canceled at their peers (only this workspace's tasks).</p>
<button type="submit" class="danger">Kill</button></form></section>"#,
        n = kills.len(),
        h = esc(&ws_href(ws)),
        csrf = csrf_field(&op.csrf),
        kinds = options(&[("context", "context"), ("task", "task")], "context"),
        agents = options(&agent_choices, ""),
    );
    ws_page(op, ws, "Kills", &title, status, &body)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_form_becomes_a_kill_request() {
        let v = super::request_of(b"csrf=x&kind=task&id=+t-1+&agent=&reason=runaway");
        assert_eq!(
            v,
            serde_json::json!({"kind": "task", "id": "t-1", "agentId": null, "reason": "runaway"})
        );
    }
}
