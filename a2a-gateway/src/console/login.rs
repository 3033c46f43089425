//! The console's logins: the admin token's form, one-time login links, logout, and the session
//! each opens ([`start_session`]); the OpenID Connect login is [`super::oidc`]. Every attempt
//! is recorded in the admin audit.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::html::{self, csrf_field, notice, page};
use super::roles::Roles;
use super::session::{self, ADMIN_TOKEN_OPERATOR, Sessions};
use super::{refused, remote_of};
use crate::state::GatewayState;

pub(crate) fn login_page(
    st: &GatewayState,
    status: StatusCode,
    headers: &HeaderMap,
    error: Option<&str>,
) -> Response {
    let token = crate::ids::random_hex(16);
    let sso = if st
        .config()
        .console_oidc_issuer
        .as_deref()
        .is_some_and(|s| !s.trim().is_empty())
    {
        r#"<section class="card" aria-labelledby="sso-h"><h2 id="sso-h">Single sign-on</h2>
<p><a class="button" id="sso" href="/console/oidc/start">Log in with your identity provider</a></p>
<p class="hint">Your roles (viewer, approver, admin) come from the provider.</p></section>
<h2>Or with the admin token</h2>"#
    } else {
        ""
    };
    let body = format!(
        r#"{err}{sso}<form method="post" action="/console/login" class="card">
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

pub(crate) async fn login_form(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    headers: HeaderMap,
) -> Response {
    match session::current(&st, &sessions, &headers).await {
        Ok(Some(_)) => return Redirect::to(super::HOME).into_response(),
        Ok(None) => {}
        Err(e) => return session::store_failed(&e),
    }
    login_page(&st, StatusCode::OK, &headers, None)
}

#[derive(serde::Deserialize)]
pub(crate) struct LoginForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    token: String,
}

pub(crate) async fn login(
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
            if status == 200 {
                ADMIN_TOKEN_OPERATOR
            } else {
                "login"
            },
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
    start_session(
        &st,
        &sessions,
        &headers,
        false,
        ADMIN_TOKEN_OPERATOR,
        &Roles::admin(),
    )
    .await
}

/// Opens a session for `operator` with `roles` and sends the browser to the console with its
/// cookie: a redirect after the login form, or (`landing`) a page that moves on by itself, for
/// a login link opened from elsewhere or the OpenID Connect provider's redirect back (a
/// navigation started on another site would not send the `SameSite=Strict` cookie along a
/// redirect).
pub(crate) async fn start_session(
    st: &GatewayState,
    sessions: &Sessions,
    headers: &HeaderMap,
    landing: bool,
    operator: &str,
    roles: &Roles,
) -> Response {
    let id = match sessions.open(operator, roles).await {
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
        Redirect::to(super::HOME).into_response()
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

pub(crate) async fn login_link_handler(
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
            ADMIN_TOKEN_OPERATOR,
            "logged in",
            remote,
        )
        .await;
        return start_session(
            &st,
            &sessions,
            &headers,
            true,
            ADMIN_TOKEN_OPERATOR,
            &Roles::admin(),
        )
        .await;
    }
    crate::admin::audit::record_console_login(
        &st,
        "console login-link",
        401,
        "login",
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

pub(crate) async fn logout(
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
