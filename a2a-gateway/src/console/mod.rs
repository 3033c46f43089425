//! The operator console at `/console` (docs/console.md): server-rendered HTML pages over the
//! admin API's operations, served only when the admin API is on, behind a login with the
//! admin token.
//!
//! - [`session`]: login, sessions, cookies, CSRF and Origin checks;
//! - [`backend`]: every change is one admin API request answered in process;
//! - `overview` (with `figures`), `workspaces`, `agents`, `keys`, `hops` (with `hop_filter`
//!   and `story`), `approvals`, `chart`: one file per view;
//! - `assets/`: the stylesheet and the small script (live hops and overview), embedded.
//!
//! Every answer carries a strict Content-Security-Policy ([`html::CSP`]); there is no inline
//! script or style, and nothing is loaded from anywhere but the gateway.

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::state::GatewayState;

mod agents;
mod approvals;
pub mod backend;
mod chart;
mod figures;
mod hop_filter;
mod hops;
pub mod html;
mod keys;
mod overview;
pub mod session;
mod story;
mod workspaces;

pub use session::Sessions;

use html::{csrf_field, esc, notice, page};

/// The console's home after login: the overview.
pub(crate) const HOME: &str = "/console/overview";

/// Largest console form body.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// The logged-in operator of a request (its session's CSRF token).
#[derive(Clone, Debug)]
pub struct Operator {
    /// The session's synchronizer token, put in every form.
    pub csrf: String,
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
        .route("/console/logout", post(logout))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_session,
        ));
    Router::new()
        .route(
            "/console/",
            get(|| async { Redirect::permanent("/console") }),
        )
        .route("/console/login", get(login_form).post(login))
        .route("/console/login/{token}", get(login_link_handler))
        .route("/console/assets/{file}", get(asset))
        .merge(protected)
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .layer(axum::middleware::map_response(html::security_headers))
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

/// Lets a request through only with a live session; a `POST` also needs the same origin and
/// the session's CSRF token in its form.
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
    req.extensions_mut().insert(Operator { csrf: sess.csrf });
    let actor = crate::admin::audit::ConsoleActor {
        session: format!(
            "session:{}",
            crate::keys::hash(&sid)[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        ),
        remote: remote_of(req.extensions()),
    };
    OPERATOR.scope(actor, next.run(req)).await
}

fn refused(why: &str) -> Response {
    page(StatusCode::FORBIDDEN, "Refused", "", "", &notice(why, true))
}

fn login_page(
    st: &GatewayState,
    status: StatusCode,
    headers: &HeaderMap,
    error: Option<&str>,
) -> Response {
    let token = crate::ids::random_hex(16);
    let body = format!(
        r#"{err}<form method="post" action="/console/login" class="card">
{csrf}
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<p class="hint">The gateway's <code>admin_token</code> (workspace API keys cannot open the console).</p>
<button type="submit">Log in</button>
</form>"#,
        err = error.map(|e| notice(e, true)).unwrap_or_default(),
        csrf = csrf_field(&token),
    );
    let mut resp = page(status, "Log in", "", "", &body);
    let secure = session::secure(st, headers);
    resp.headers_mut().append(
        header::SET_COOKIE,
        session::set_cookie(session::LOGIN_COOKIE, &token, "/console/login", 900, secure),
    );
    resp
}

async fn login_form(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    headers: HeaderMap,
) -> Response {
    match session::current(&st, &sessions, &headers).await {
        Ok(Some(_)) => return Redirect::to(HOME).into_response(),
        Ok(None) => {}
        Err(e) => return session::store_failed(&e),
    }
    login_page(&st, StatusCode::OK, &headers, None)
}

#[derive(serde::Deserialize)]
struct LoginForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    token: String,
}

async fn login(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    headers: HeaderMap,
    ext: axum::http::Extensions,
    axum::Form(f): axum::Form<LoginForm>,
) -> Response {
    let audit = |status: u16, outcome: &'static str| {
        crate::admin::audit::record_console_login(
            &st,
            "console login",
            status,
            outcome,
            remote_of(&ext),
        )
    };
    if !session::same_origin(&st, &headers) {
        audit(403, "refused: Origin check").await;
        return refused("The request did not come from this console (Origin check).");
    }
    let expected = session::cookie(&headers, session::LOGIN_COOKIE).unwrap_or("");
    if expected.is_empty() || !session::token_eq(expected, &f.csrf) {
        audit(403, "refused: CSRF check").await;
        return login_page(
            &st,
            StatusCode::FORBIDDEN,
            &headers,
            Some("The login form expired (CSRF check); try again."),
        );
    }
    if !crate::admin::token_matches(&st, &f.token) {
        let why = if crate::keys::key_id_of(f.token.trim()).is_some() {
            "That is a workspace API key; the console needs the admin token."
        } else {
            "That is not the admin token."
        };
        audit(401, "refused: wrong token").await;
        return login_page(&st, StatusCode::UNAUTHORIZED, &headers, Some(why));
    }
    audit(200, "logged in").await;
    start_session(&st, &sessions, &headers, false).await
}

/// Opens a session and sends the browser to the console with its cookie: a redirect after the
/// login form, or (`landing`) a page that moves on by itself, for a login link opened from
/// elsewhere (a navigation started on another site would not send the `SameSite=Strict` cookie
/// along a redirect).
async fn start_session(
    st: &GatewayState,
    sessions: &Sessions,
    headers: &HeaderMap,
    landing: bool,
) -> Response {
    let id = match sessions.open().await {
        Ok(id) => id,
        Err(e) => return session::store_failed(&e),
    };
    let secure = session::secure(st, headers);
    let path = if secure { "/" } else { "/console" };
    let mut resp = if landing {
        let html = r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=/console/overview"><title>Logged in · a2a-gateway console</title>
<link rel="stylesheet" href="/console/assets/console.css"></head>
<body><main id="main"><h1>Logged in</h1><p><a href="/console/overview">Continue to the console</a></p></main></body></html>"#;
        (StatusCode::OK, html::html_type(), html).into_response()
    } else {
        Redirect::to(HOME).into_response()
    };
    let h = resp.headers_mut();
    h.append(
        header::SET_COOKIE,
        session::set_cookie(
            &session::cookie_name(secure, headers),
            &id,
            path,
            session::SESSION_TTL.as_secs(),
            secure,
        ),
    );
    h.append(
        header::SET_COOKIE,
        session::set_cookie(session::LOGIN_COOKIE, "", "/console/login", 0, secure),
    );
    resp
}

async fn login_link_handler(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    headers: HeaderMap,
    ext: axum::http::Extensions,
    Path(token): Path<String>,
) -> Response {
    let remote = remote_of(&ext);
    let redeemed = match sessions.redeem(&token).await {
        Ok(r) => r,
        Err(e) => return session::store_failed(&e),
    };
    if redeemed {
        crate::admin::audit::record_console_login(
            &st,
            "console login-link",
            200,
            "logged in",
            remote,
        )
        .await;
        return start_session(&st, &sessions, &headers, true).await;
    }
    crate::admin::audit::record_console_login(
        &st,
        "console login-link",
        401,
        "refused: used or expired link",
        remote,
    )
    .await;
    login_page(
        &st,
        StatusCode::UNAUTHORIZED,
        &headers,
        Some("This login link was already used or has expired; log in with the admin token."),
    )
}

async fn logout(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    headers: HeaderMap,
) -> Response {
    let closed = match session::current(&st, &sessions, &headers).await {
        Ok(Some((id, _))) => sessions.close(&id).await,
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = closed {
        return session::store_failed(&e);
    }
    let secure = session::secure(&st, &headers);
    let path = if secure { "/" } else { "/console" };
    let mut resp = Redirect::to("/console/login").into_response();
    resp.headers_mut().append(
        header::SET_COOKIE,
        session::set_cookie(&session::cookie_name(secure, &headers), "", path, 0, secure),
    );
    resp
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
        (
            "Overview",
            format!("/console/overview?workspace={}", backend::seg(ws)),
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
