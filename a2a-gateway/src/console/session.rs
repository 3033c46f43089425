//! Console sessions: server-side sessions with expiry, each naming its operator and roles (the
//! admin token's login, a one-time login link, or an OpenID Connect login: `super::oidc`), the
//! session cookie, and the CSRF and Origin checks of every form.
//!
//! A session is a random 256-bit id in an `HttpOnly; SameSite=Strict; Path=/console` cookie;
//! the gateway keeps only its SHA-256, with the session's CSRF token and expiry. Every state
//! changing request (`POST`) must carry the session's CSRF token in its form (synchronizer
//! token) and an `Origin` (or, without one, a `Referer`) naming the host it was sent to.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::roles::Roles;
use crate::keys;
use crate::store::StoreError;
use crate::store::backend::{SessionInfo, SessionStore, Shared};
use crate::{ids::random_hex, state::GatewayState};

/// How long a session lives after login.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// How long a one-time login link is valid.
pub const LINK_TTL: Duration = Duration::from_secs(15 * 60);
/// The login form's double-submit cookie (before there is a session).
pub const LOGIN_COOKIE: &str = "a2a_console_login";

/// The console's server-side sessions and one-time login links, on the backend chosen at
/// start ([`SessionStore`]): on SQLite in the process's memory (a restart logs every operator
/// out), on PostgreSQL shared by every replica (a login on one is valid on all, a logout or
/// an expiry ends it on all). At most [`MAX_SESSIONS`](crate::store::backend::MAX_SESSIONS)
/// are open (the oldest is dropped past it).
pub struct Sessions {
    store: Shared,
}

/// The operator of a login with the admin token or a login link.
pub const ADMIN_TOKEN_OPERATOR: &str = "admin-token";

/// An open console session.
#[derive(Clone, Debug)]
pub struct Session {
    /// The synchronizer token every form of this session carries.
    pub csrf: String,
    /// Who logged in ([`ADMIN_TOKEN_OPERATOR`], or `oidc:` and the provider's name for them).
    pub operator: String,
    /// What they may do.
    pub roles: Roles,
}

impl Sessions {
    /// The sessions of `store`.
    pub fn new(store: Shared) -> Sessions {
        Sessions { store }
    }

    /// Opens a session for `operator` with `roles`; returns the cookie value (the only copy of
    /// the session id: the store keeps its SHA-256).
    pub async fn open(&self, operator: &str, roles: &Roles) -> Result<String, StoreError> {
        let id = random_hex(32);
        let info = SessionInfo {
            csrf: random_hex(32),
            operator: operator.to_owned(),
            roles: roles.stored(),
        };
        self.store
            .open_session(keys::hash(&id), &info, SESSION_TTL)
            .await?;
        Ok(id)
    }

    /// The live session of a cookie value.
    pub async fn get(&self, id: &str) -> Result<Option<Session>, StoreError> {
        Ok(self.store.session(keys::hash(id)).await?.map(|i| Session {
            csrf: i.csrf,
            operator: i.operator,
            roles: Roles::parse(&i.roles),
        }))
    }

    /// Ends a session (logout).
    pub async fn close(&self, id: &str) -> Result<(), StoreError> {
        self.store.close_session(keys::hash(id)).await
    }

    /// A one-time login token, valid for [`LINK_TTL`] (`/console/login/{token}`).
    pub fn login_token(&self) -> String {
        self.store.login_token(LINK_TTL)
    }

    /// Whether `token` is a live login token; it is spent either way.
    pub async fn redeem(&self, token: &str) -> Result<bool, StoreError> {
        self.store.redeem(token).await
    }
}

/// The console's page for a session store that failed: 503 naming `a2a_store_unavailable`
/// when the database cannot be reached (a load balancer may retry elsewhere), else 500.
pub fn store_failed(e: &StoreError) -> Response {
    use axum::response::IntoResponse;
    let (status, text) = if e.is_unavailable() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "The gateway's store cannot be reached (a2a_store_unavailable); retry later.",
        )
    } else {
        tracing::error!("console session store: {e}");
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The console's sessions cannot be read (a2a_internal_error).",
        )
    };
    let mut resp = super::html::page(
        status,
        "Unavailable",
        "",
        "",
        &super::html::notice(text, true),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp.into_response()
}

/// Whether the session cookie gets `Secure` (and the `__Host-` prefix): when `public_url` is
/// https, or the listener is not loopback; on a plain-HTTP loopback listener only when a trusted
/// proxy (`console_trusted_proxy`) says `X-Forwarded-Proto: https`.
pub fn secure(st: &GatewayState, headers: &HeaderMap) -> bool {
    let forwarded_https = st.config().console_trusted_proxy
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let public_https = st
        .config()
        .public_url
        .as_deref()
        .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://"));
    forwarded_https || public_https || !st.config().listen.ip().is_loopback()
}

/// The session cookie's name: `__Host-a2a_console` when `secure`; on plain HTTP it names the
/// port the browser reached (`a2a_console_8080`), since cookies are shared by every port of a
/// host and another local server must not read or overwrite this one.
pub fn cookie_name(secure: bool, headers: &HeaderMap) -> String {
    if secure {
        return "__Host-a2a_console".to_owned();
    }
    let port = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|h| h.rsplit_once(':'))
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .unwrap_or(80);
    format!("a2a_console_{port}")
}

/// A `Set-Cookie` value: `HttpOnly; SameSite=Strict`, `Secure` when `secure`; `max_age` 0
/// deletes it.
pub fn set_cookie(name: &str, value: &str, path: &str, max_age: u64, secure: bool) -> HeaderValue {
    let s = format!(
        "{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    );
    HeaderValue::from_str(&s).unwrap_or_else(|_| HeaderValue::from_static("invalid=; Max-Age=0"))
}

/// The value of cookie `name` in the request.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The session of the request's cookie, with the cookie value.
pub async fn current(
    st: &GatewayState,
    sessions: &Sessions,
    headers: &HeaderMap,
) -> Result<Option<(String, Session)>, StoreError> {
    let Some(id) = cookie(headers, &cookie_name(secure(st, headers), headers)) else {
        return Ok(None);
    };
    Ok(sessions.get(id).await?.map(|s| (id.to_owned(), s)))
}

/// The `Origin` (or, without one, `Referer`) is the console's own: the origin of the configured
/// `public_url` when set (scheme, host and port), else the request's `Host` (or, with
/// `console_trusted_proxy`, a proxy's `X-Forwarded-Host`). A client-sent forwarded header is
/// never trusted otherwise.
pub fn same_origin(st: &GatewayState, headers: &HeaderMap) -> bool {
    origin_matches(
        st.config().public_url.as_deref(),
        st.config().console_trusted_proxy,
        headers,
    )
}

/// [`same_origin`] over the two settings it reads.
pub fn origin_matches(public_url: Option<&str>, trusted_proxy: bool, headers: &HeaderMap) -> bool {
    let source = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok());
    let Some(url) = source.and_then(|s| url::Url::parse(s).ok()) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    if let Some(public) = public_url {
        return url::Url::parse(public).is_ok_and(|p| p.origin() == url.origin());
    }
    let mut names = vec![header::HOST.as_str()];
    if trusted_proxy {
        names.push("x-forwarded-host");
    }
    let origin_host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        _ => return false,
    };
    names
        .iter()
        .filter_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .any(|h| origin_host.eq_ignore_ascii_case(h.trim()))
}

/// Constant-time comparison of two tokens.
pub fn token_eq(a: &str, b: &str) -> bool {
    keys::digest_eq(&keys::hash(a), &keys::hash(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Sessions {
        let store = crate::store::Store::open_in_memory().unwrap();
        Sessions::new(Shared::Sqlite(crate::store::backend::SqliteShared::new(
            store,
        )))
    }

    #[tokio::test]
    async fn sessions_open_expire_and_close() {
        let s = memory();
        let id = s
            .open("oidc:ana@example.com", &Roles::from_names(["viewer"]))
            .await
            .unwrap();
        let sess = s.get(&id).await.unwrap().expect("live");
        assert_eq!(sess.csrf.len(), 64);
        assert_eq!(sess.operator, "oidc:ana@example.com");
        assert_eq!(sess.roles, Roles::from_names(["viewer"]));
        assert!(s.get("other").await.unwrap().is_none());
        s.close(&id).await.unwrap();
        assert!(s.get(&id).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn login_tokens_are_one_time() {
        let s = memory();
        let t = s.login_token();
        assert!(s.redeem(&t).await.unwrap());
        assert!(!s.redeem(&t).await.unwrap());
        assert!(!s.redeem("made-up").await.unwrap());
    }

    #[test]
    fn cookie_flags() {
        let c = set_cookie("__Host-a2a_console", "v", "/", 60, true);
        let c = c.to_str().unwrap();
        for flag in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
            assert!(c.contains(flag), "{c}");
        }
        let plain = set_cookie("a2a_console", "v", "/console", 60, false);
        assert!(!plain.to_str().unwrap().contains("Secure"));
    }

    #[test]
    fn origin_check() {
        let same = |h: &HeaderMap| origin_matches(None, false, h);
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert!(!same(&h), "no Origin nor Referer");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(same(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(!same(&h));
        // A client-sent X-Forwarded-Host counts only behind a trusted proxy.
        h.insert("x-forwarded-host", HeaderValue::from_static("evil.example"));
        assert!(!same(&h), "forwarded host trusted without the setting");
        assert!(origin_matches(None, true, &h), "behind a trusted proxy");
        h.remove("x-forwarded-host");
        h.remove(header::ORIGIN);
        h.insert(
            header::REFERER,
            HeaderValue::from_static("http://127.0.0.1:8080/console/keys"),
        );
        assert!(same(&h));
        // With a public URL, only its origin (scheme, host, port) counts.
        let public = Some("https://console.example");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://console.example"),
        );
        assert!(origin_matches(public, false, &h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://console.example"),
        );
        assert!(!origin_matches(public, false, &h), "scheme differs");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(!origin_matches(public, false, &h), "Host no longer counts");
    }

    #[test]
    fn plain_http_cookie_names_the_port() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8181"));
        assert_eq!(cookie_name(false, &h), "a2a_console_8181");
        assert_eq!(cookie_name(true, &h), "__Host-a2a_console");
    }
}
