//! A workspace's agents: the list (endpoint, the peer's card summary, the interface the gateway
//! chose, trust state, last error), an agent's page (its card, latency and throughput chart,
//! edit form) and register / edit / remove through the admin API, whose refusal reasons are
//! shown verbatim.

use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::backend::{admin, seg};
use super::html::{csrf_field, esc, notice, opt, page};
use super::workspaces::Flash;
use super::{Operator, admin_refusal, ok_notice, ws_href, ws_tabs};
use crate::peer;
use crate::state::GatewayState;
use crate::store::Agent;
use crate::store::backend::RegistryStore;

/// How long a page waits for one peer card.
const CARD_WAIT: Duration = Duration::from_secs(3);

/// What the console shows of a registered agent's peer.
pub(super) struct PeerView {
    /// The card, or why it could not be read.
    pub(super) card: Result<Value, String>,
    /// `binding version at url` of the interface the gateway would call, or why none.
    pub(super) interface: Result<String, String>,
    /// The card's signature trust as a hop would see it (`crate::trust::TrustState::check_card`).
    pub(super) trust: String,
}

/// Reads the peer's card the way a hop does (address checks, the card cache), checks its
/// signatures the way a hop does, and picks the interface.
pub(super) async fn peer_view(st: &GatewayState, agent: &Agent) -> PeerView {
    let fetch = async {
        let ws = st
            .registry
            .workspace(&agent.workspace_id)
            .await
            .ok()
            .flatten();
        let (_, _, max_card) = crate::hop::auth::effective_limits(st, ws.as_ref());
        let (_, card) = crate::outbound::registered_card(st, agent, max_card)
            .await
            .map_err(|r| r.message)?;
        let trust = match st.trust.check_card(agent, &card).await {
            Ok(t) => t.as_str().to_owned(),
            Err(refusal) => crate::trust::of_refusal(&refusal)
                .map(|t| format!("{t}: {}", refusal.message))
                .unwrap_or(refusal.message),
        };
        Ok::<_, String>((peer::card_json(&card).map_err(|r| r.message)?, trust))
    };
    let (card, trust) = match tokio::time::timeout(CARD_WAIT, fetch).await {
        Ok(Ok((card, trust))) => (Ok(card), trust),
        Ok(Err(e)) => (Err(e), "unknown (no card)".to_owned()),
        Err(_) => (
            Err("the peer card did not arrive in 3 s".into()),
            "unknown (no card)".to_owned(),
        ),
    };
    let registered = url::Url::parse(&agent.endpoint).ok();
    let interface = match &card {
        Ok(c) => peer::select_interface_with(
            c,
            &peer::Prefs {
                registered: registered.as_ref(),
                ..peer::Prefs::of(&st.config())
            },
        )
        .map(|ch| {
            format!(
                "{} {} at {}",
                ch.binding.as_str(),
                ch.version.as_str(),
                ch.url
            )
        })
        .map_err(|r| r.message),
        Err(_) => Err("no card".into()),
    };
    PeerView {
        card,
        interface,
        trust,
    }
}

fn card_summary(card: &Result<Value, String>) -> String {
    match card {
        Ok(c) => {
            let skills: Vec<&str> = c["skills"]
                .as_array()
                .map(|s| s.iter().filter_map(|k| k["id"].as_str()).collect())
                .unwrap_or_default();
            format!(
                "<strong>{}</strong> {}<br><span class=\"muted\">{}</span><br>skills: {}",
                opt(c["name"].as_str()),
                opt(c["version"].as_str()),
                opt(c["description"].as_str()),
                if skills.is_empty() {
                    "none".to_owned()
                } else {
                    esc(&skills.join(", "))
                }
            )
        }
        Err(e) => format!(r#"<span class="bad">card unavailable: {}</span>"#, esc(e)),
    }
}

async fn last_error(st: &GatewayState, ws: &str, agent: &str) -> String {
    use crate::store::backend::AuditStore;
    match st.audit.last_refusal(ws, agent).await {
        Ok(Some(r)) => format!(
            r#"<a href="/console/hops/{}">{} {}</a> <span class="muted">{}</span>"#,
            r.seq,
            opt(r.error_code.as_deref()),
            r.status,
            esc(&r.ts)
        ),
        Ok(None) => "none".into(),
        Err(e) => esc(&e.to_string()),
    }
}

fn not_found(op: &Operator, title: &str, what: &str) -> Response {
    page(
        StatusCode::NOT_FOUND,
        title,
        "Workspaces",
        &op.csrf,
        &notice(&format!("{what} not found"), true),
    )
}

pub(crate) async fn list(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    Query(q): Query<Flash>,
) -> Response {
    let title = format!("Workspace {ws}");
    let agents = match st.registry.workspace(&ws).await {
        Ok(Some(_)) => st.registry.list_agents(&ws).await.unwrap_or_default(),
        _ => return not_found(&op, &title, &format!("workspace {ws}")),
    };
    let views = futures::future::join_all(agents.iter().map(|a| peer_view(&st, a))).await;
    let mut rows = String::new();
    for (a, v) in agents.iter().zip(&views) {
        let href = format!("{}/agents/{}", ws_href(&ws), seg(&a.agent_id));
        rows.push_str(&format!(
            r#"<tr><th scope="row"><a href="{href}">{id}</a></th><td class="wrap">{ep}</td><td>{card}</td><td class="wrap">{iface}</td><td>{trust}</td><td>{err}</td></tr>"#,
            href = esc(&href),
            id = esc(&a.agent_id),
            ep = esc(&a.endpoint),
            card = card_summary(&v.card),
            iface = match &v.interface {
                Ok(i) => esc(i),
                Err(e) => format!(r#"<span class="bad">{}</span>"#, esc(e)),
            },
            trust = esc(&v.trust),
            err = last_error(&st, &ws, &a.agent_id).await,
        ));
    }
    if agents.is_empty() {
        rows.push_str(r#"<tr><td colspan="6">No agents registered.</td></tr>"#);
    }
    let body = format!(
        r#"{tabs}{ok}
<p><a class="button" href="{h}/agents/new">Register an agent</a></p>
<div class="scroll"><table><caption>Agents</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Endpoint</th><th scope="col">Peer card</th><th scope="col">Chosen interface</th><th scope="col">Trust</th><th scope="col">Last error</th></tr></thead>
<tbody>{rows}</tbody></table></div>"#,
        tabs = ws_tabs(&ws, "Agents"),
        ok = ok_notice(q.ok()),
        h = esc(&ws_href(&ws)),
    );
    page(StatusCode::OK, &title, "Workspaces", &op.csrf, &body)
}

/// The register / edit form, prefilled from `a` (a new agent when `a.agent_id` is empty).
fn form(ws: &str, op: &Operator, a: &AgentForm, editing: bool) -> String {
    let id_field = if editing {
        format!(
            r#"<input type="hidden" name="agent_id" value="{}"><p>Agent id: <code>{}</code></p>"#,
            esc(&a.agent_id),
            esc(&a.agent_id)
        )
    } else {
        format!(
            r#"<label for="agent-id">Agent id</label><input id="agent-id" name="agent_id" required value="{}">"#,
            esc(&a.agent_id)
        )
    };
    format!(
        r#"<form method="post" action="{h}/agents" class="card">{csrf}{id_field}
<label for="agent-endpoint">Endpoint (the peer's A2A base URL)</label><input id="agent-endpoint" name="endpoint" inputmode="url" required value="{ep}">
<label for="agent-credential">Outbound credential (sent as a bearer token; {cred_hint})</label><input id="agent-credential" name="credential" type="password" autocomplete="off">
<label for="agent-skills">Allowed skills (comma-separated; empty: every skill of the card)</label><input id="agent-skills" name="skills" value="{skills}">
<label for="agent-pin">Pinned card key</label><input id="agent-pin" name="pinned_card_key" value="{pin}">
<button type="submit">{verb}</button></form>"#,
        h = esc(&ws_href(ws)),
        csrf = csrf_field(&op.csrf),
        ep = esc(&a.endpoint),
        cred_hint = if editing {
            "empty keeps the current one"
        } else {
            "optional"
        },
        skills = esc(&a.skills),
        pin = esc(&a.pinned_card_key),
        verb = if editing {
            "Save agent"
        } else {
            "Register agent"
        },
    )
}

pub(crate) async fn new_form(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
) -> Response {
    let title = format!("Register an agent in {ws}");
    if !matches!(st.registry.workspace(&ws).await, Ok(Some(_))) {
        return not_found(&op, &title, &format!("workspace {ws}"));
    }
    let body = format!(
        "{}{}",
        ws_tabs(&ws, "Agents"),
        form(&ws, &op, &AgentForm::default(), false)
    );
    page(StatusCode::OK, &title, "Workspaces", &op.csrf, &body)
}

pub(crate) async fn detail(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, id)): Path<(String, String)>,
    Query(q): Query<Flash>,
) -> Response {
    let title = format!("Agent {id}");
    let Ok(Some(a)) = st.registry.agent(&ws, &id).await else {
        return not_found(&op, &title, &format!("agent {id} in workspace {ws}"));
    };
    let v = peer_view(&st, &a).await;
    let edit = AgentForm {
        agent_id: a.agent_id.clone(),
        endpoint: a.endpoint.clone(),
        skills: a.skills.as_ref().map(|s| s.join(", ")).unwrap_or_default(),
        pinned_card_key: a.pinned_card_key.clone().unwrap_or_default(),
        ..AgentForm::default()
    };
    let body = format!(
        r#"{tabs}{ok}
<dl class="facts"><dt>Endpoint</dt><dd class="wrap">{ep}</dd>
<dt>Peer card</dt><dd>{card}</dd>
<dt>Chosen interface</dt><dd class="wrap">{iface}</dd>
<dt>Trust</dt><dd>{trust}</dd>
<dt>Last error</dt><dd>{err}</dd>
<dt>Hops</dt><dd><a href="/console/hops?workspace={wsq}&amp;agent={idq}">this agent's hops</a></dd></dl>
<section aria-labelledby="chart-h"><h2 id="chart-h">Latency and throughput (last hour)</h2>{chart}</section>
<section aria-labelledby="edit-h"><h2 id="edit-h">Edit</h2>{form}</section>
<section aria-labelledby="rm-h"><h2 id="rm-h">Remove</h2>
<form method="post" action="{h}/agents/{ids}/delete">{csrf}<button type="submit" class="danger">Remove agent {idh}</button></form></section>"#,
        tabs = ws_tabs(&ws, "Agents"),
        ok = ok_notice(q.ok()),
        ep = esc(&a.endpoint),
        card = card_summary(&v.card),
        iface = match &v.interface {
            Ok(i) => esc(i),
            Err(e) => format!(r#"<span class="bad">{}</span>"#, esc(e)),
        },
        trust = esc(&v.trust),
        err = last_error(&st, &ws, &id).await,
        wsq = esc(&seg(&ws)),
        idq = esc(&seg(&id)),
        chart = super::chart::agent_chart(&st, &ws, &id).await,
        form = form(&ws, &op, &edit, true),
        h = esc(&ws_href(&ws)),
        ids = esc(&seg(&id)),
        idh = esc(&id),
        csrf = csrf_field(&op.csrf),
    );
    page(StatusCode::OK, &title, "Workspaces", &op.csrf, &body)
}

/// The register / edit form's fields.
#[derive(Deserialize, Default)]
pub(crate) struct AgentForm {
    #[serde(default)]
    agent_id: String,
    #[serde(default)]
    endpoint: String,
    #[serde(default)]
    credential: String,
    #[serde(default)]
    skills: String,
    #[serde(default)]
    pinned_card_key: String,
}

pub(crate) async fn save(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(ws): Path<String>,
    axum::Form(f): axum::Form<AgentForm>,
) -> Response {
    let existing = st
        .registry
        .agent(&ws, f.agent_id.trim())
        .await
        .ok()
        .flatten();
    // An empty credential field keeps the stored one (it is never sent back to the browser).
    let credential = if f.credential.is_empty() {
        existing.as_ref().and_then(|a| a.credential.clone())
    } else {
        Some(f.credential.clone())
    };
    let skills: Vec<&str> = f
        .skills
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let body = json!({
        "agentId": f.agent_id.trim(),
        "endpoint": f.endpoint.trim(),
        "credential": credential,
        "skills": (!skills.is_empty()).then_some(skills),
        "pinnedCardKey": (!f.pinned_card_key.trim().is_empty()).then(|| f.pinned_card_key.trim()),
    });
    let path = format!("/admin/workspaces/{}/agents", seg(&ws));
    match admin(&st, Method::POST, &path, Some(&body)).await {
        Ok(_) => Redirect::to(&format!(
            "{}/agents/{}?ok=agent-saved",
            ws_href(&ws),
            seg(f.agent_id.trim())
        ))
        .into_response(),
        Err(r) => {
            let editing = existing.is_some();
            let title = if editing {
                format!("Agent {}", f.agent_id)
            } else {
                format!("Register an agent in {ws}")
            };
            let html = format!(
                "{}<p>The admin API refused the registration:</p>{}{}",
                ws_tabs(&ws, "Agents"),
                admin_refusal(&r),
                form(&ws, &op, &f, editing)
            );
            page(
                StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
                &title,
                "Workspaces",
                &op.csrf,
                &html,
            )
        }
    }
}

pub(crate) async fn delete(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path((ws, id)): Path<(String, String)>,
) -> Response {
    let path = format!("/admin/workspaces/{}/agents/{}", seg(&ws), seg(&id));
    match admin(&st, Method::DELETE, &path, None).await {
        Ok(_) => Redirect::to(&format!("{}?ok=agent-deleted", ws_href(&ws))).into_response(),
        Err(r) => page(
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
            &format!("Agent {id}"),
            "Workspaces",
            &op.csrf,
            &admin_refusal(&r),
        ),
    }
}
