//! The operator console at `/console` (docs/console.md): server-rendered HTML pages over the
//! admin API's operations, served only when the admin API is on, behind a login with the
//! admin token or, when set up, an OpenID Connect provider.
//!
//! - [`session`]: sessions, cookies, CSRF and Origin checks; `login`: the admin token's login,
//!   login links, logout; `oidc`: the OpenID Connect login; [`roles`]: what each operator may
//!   change (checked here, for every request, in [`require_session`]);
//! - [`backend`]: every change is one admin API request answered in process;
//! - `overview` (with `figures`), `workspaces`, `agents`, `keys`, `hops` (with `hop_filter`
//!   and `story`), `approvals`, `chart`: one file per view;
//! - `governance/`: a workspace's policy, PII, kills, settings and trust pages, the admin audit;
//! - `assets/`: the stylesheet and the small script (live hops and overview), embedded.
//!
//! Every answer carries a strict Content-Security-Policy ([`html::CSP`]); there is no inline
//! script or style, and nothing is loaded from anywhere but the gateway.

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::state::GatewayState;

mod agents;
mod approvals;
pub mod backend;
mod chart;
mod figures;
mod governance;
mod hop_filter;
mod hops;
pub mod html;
mod keys;
mod login;
mod oidc;
mod overview;
pub mod roles;
pub mod session;
mod story;
mod workspaces;

pub use session::Sessions;

use html::{esc, notice, page};

/// The console's home after login: the overview.
pub(crate) const HOME: &str = "/console/overview";

/// Largest console form body.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// The logged-in operator of a request.
#[derive(Clone, Debug)]
pub struct Operator {
    /// The session's synchronizer token, put in every form.
    pub csrf: String,
    /// Who (`admin-token`, or `oidc:` and the provider's name for them).
    pub name: String,
    /// What they may change: pages leave out the forms a role may not send.
    pub roles: roles::Roles,
}

/// A one-time login link (`{base}/console/login/{token}`, valid for
/// [`session::LINK_TTL`]), for `a2a-gateway demo`.
pub fn login_link(sessions: &Sessions, base: &str) -> String {
    format!(
        "{}/console/login/{}",
        base.trim_end_matches('/'),
        sessions.login_token()
    )
}

/// Whether the console is served: exactly when the admin API is on (an admin token is set).
pub fn enabled(config: &crate::config::Config) -> bool {
    config.admin_token.as_deref().is_some_and(|t| !t.is_empty())
}

/// The console's routes; the gateway mounts them only when the admin API is on.
/// `sessions` are the console's logins, owned by the composition root (`crate::app`).
pub fn router(state: Arc<GatewayState>, sessions: Arc<Sessions>) -> Router {
    let protected = Router::new()
        .route("/console", get(workspaces::index))
        .route("/console/workspaces", post(workspaces::create))
        .route("/console/workspaces/{ws}", get(agents::list))
        .route("/console/workspaces/{ws}/agents", post(agents::save))
        .route("/console/workspaces/{ws}/agents/new", get(agents::new_form))
        .route(
            "/console/workspaces/{ws}/agents/{agent}",
            get(agents::detail),
        )
        .route(
            "/console/workspaces/{ws}/agents/{agent}/delete",
            post(agents::delete),
        )
        .route(
            "/console/workspaces/{ws}/keys",
            get(keys::list).post(keys::create),
        )
        .route(
            "/console/workspaces/{ws}/keys/{key}/revoke",
            post(keys::revoke),
        )
        .route(
            "/console/workspaces/{ws}/approvals/{id}",
            get(approvals::detail),
        )
        .route(
            "/console/workspaces/{ws}/approvals/{id}/{action}",
            post(approvals::decide),
        )
        .route("/console/approvals", get(approvals::list))
        .route("/console/overview", get(overview::page_handler))
        .route("/console/overview/live", get(overview::live))
        .route("/console/hops", get(hops::list))
        .route("/console/hops/live", get(hops::live))
        .route("/console/hops/{seq}", get(hops::detail))
        .route("/console/logout", post(login::logout))
        .merge(governance::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_session,
        ));
    Router::new()
        .route(
            "/console/",
            get(|| async { Redirect::permanent("/console") }),
        )
        .route("/console/login", get(login::login_form).post(login::login))
        .route("/console/login/{token}", get(login::login_link_handler))
        .route("/console/oidc/start", get(oidc::start))
        .route("/console/oidc/callback", get(oidc::callback))
        .route("/console/assets/{file}", get(asset))
        .merge(protected)
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .layer(axum::middleware::map_response(html::security_headers))
        .layer(axum::Extension(oidc::Provider::from_config(
            &state.config(),
        )))
        .with_state(state)
        .layer(axum::Extension(sessions))
}

tokio::task_local! {
    /// The operator a console request acts for, while its handler runs: the admin requests
    /// the console makes ([`backend::admin`]) carry it to the admin audit.
    pub(crate) static OPERATOR: crate::admin::audit::ConsoleActor;
}

/// The client's address of a request, when the listener recorded it.
fn remote_of(ext: &axum::http::Extensions) -> Option<String> {
    ext.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.to_string())
}

/// Lets a request through only with a live session; a `POST` also needs the same origin, the
/// session's CSRF token in its form, and a role that may send it ([`roles::Roles::may_post`]).
async fn require_session(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    req: Request,
    next: Next,
) -> Response {
    let current = match session::current(&st, &sessions, req.headers()).await {
        Ok(c) => c,
        Err(e) => return session::store_failed(&e),
    };
    let Some((sid, sess)) = current else {
        if req.method() == Method::GET && !req.uri().path().ends_with("/live") {
            return Redirect::to("/console/login").into_response();
        }
        return page(
            StatusCode::UNAUTHORIZED,
            "Log in first",
            "",
            "",
            r#"<p><a href="/console/login">Log in</a> with the admin token.</p>"#,
        );
    };
    let mut req = req;
    if req.method() != Method::GET && req.method() != Method::HEAD {
        if !sess.roles.may_post(req.uri().path()) {
            return refused(&format!(
                "{} may not do this (roles: {}).",
                sess.operator,
                none_if_empty(&sess.roles.stored())
            ));
        }
        if !session::same_origin(&st, req.headers()) {
            return refused("The request did not come from this console (Origin check).");
        }
        let (parts, body) = req.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, MAX_FORM_BYTES).await else {
            return refused("The form is too large.");
        };
        let presented = url::form_urlencoded::parse(&bytes)
            .find(|(k, _)| k == "csrf")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        if !session::token_eq(&presented, &sess.csrf) {
            return refused("The form's CSRF token is missing or wrong; reload the page.");
        }
        req = Request::from_parts(parts, axum::body::Body::from(bytes));
    }
    let actor = crate::admin::audit::ConsoleActor {
        operator: sess.operator.clone(),
        session: format!(
            "session:{}",
            crate::keys::hash(&sid)[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        ),
        remote: remote_of(req.extensions()),
    };
    let shown = (sess.operator.clone(), sess.roles.clone());
    req.extensions_mut().insert(Operator {
        csrf: sess.csrf,
        name: sess.operator,
        roles: sess.roles,
    });
    html::PAGE_OPERATOR
        .scope(shown, OPERATOR.scope(actor, next.run(req)))
        .await
}

fn none_if_empty(s: &str) -> &str {
    if s.is_empty() { "none" } else { s }
}

fn refused(why: &str) -> Response {
    page(StatusCode::FORBIDDEN, "Refused", "", "", &notice(why, true))
}

async fn asset(Path(file): Path<String>) -> Response {
    let (body, ty) = match file.as_str() {
        "console.css" => (
            include_str!("assets/console.css"),
            "text/css; charset=utf-8",
        ),
        "console.js" => (
            include_str!("assets/console.js"),
            "text/javascript; charset=utf-8",
        ),
        _ => return (StatusCode::NOT_FOUND, "no such asset").into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(ty)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=300"),
            ),
        ],
        body,
    )
        .into_response()
}

/// A page's answer to a refused admin request: the message verbatim, in an alert.
pub(crate) fn admin_refusal(r: &backend::Refused) -> String {
    notice(&r.message, true)
}

/// `?ok=...` notices after a redirect (fixed texts: nothing from the URL is echoed).
pub(crate) fn ok_notice(code: Option<&str>) -> String {
    let text = match code {
        Some("ws-created") => "Workspace created.",
        Some("agent-saved") => "Agent saved.",
        Some("agent-deleted") => "Agent removed.",
        Some("key-revoked") => "Key revoked.",
        Some("approved") => "Approved: the held hop was sent.",
        Some("denied") => "Denied: the held hop was not sent.",
        _ => return String::new(),
    };
    notice(text, false)
}

/// A link to a workspace page.
pub(crate) fn ws_href(ws: &str) -> String {
    format!("/console/workspaces/{}", backend::seg(ws))
}

/// The tabs of a workspace's pages.
pub(crate) fn ws_tabs(ws: &str, active: &str) -> String {
    let base = ws_href(ws);
    let mut out = String::from(r#"<nav aria-label="Workspace" class="tabs"><ul>"#);
    for (name, href) in [
        ("Agents", base.clone()),
        ("Keys", format!("{base}/keys")),
        (
            "Approvals",
            format!("/console/approvals?workspace={}", backend::seg(ws)),
        ),
        (
            "Hops",
            format!("/console/hops?workspace={}", backend::seg(ws)),
        ),
        ("Policy", format!("{base}/policy")),
        ("PII", format!("{base}/pii")),
        ("Kills", format!("{base}/kills")),
        ("Settings", format!("{base}/settings")),
        ("Trust", format!("{base}/trust")),
        (
            "Admin audit",
            format!("/console/admin-audit?workspace={}", backend::seg(ws)),
        ),
    ] {
        let cur = if name == active {
            r#" aria-current="page""#
        } else {
            ""
        };
        out.push_str(&format!(
            r#"<li><a href="{}"{cur}>{name}</a></li>"#,
            esc(&href)
        ));
    }
    out.push_str("</ul></nav>");
    out
}
