//! Console sessions: the admin-token login, server-side sessions with expiry, one-time login
//! links, the session cookie, and the CSRF and Origin checks of every form.
//!
//! A session is a random 256-bit id in an `HttpOnly; SameSite=Strict; Path=/console` cookie;
//! the gateway keeps only its SHA-256, with the session's CSRF token and expiry. Every state
//! changing request (`POST`) must carry the session's CSRF token in its form (synchronizer
//! token) and an `Origin` (or, without one, a `Referer`) naming the host it was sent to.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, header};

use crate::keys;
use crate::{ids::random_hex, state::GatewayState};

/// How long a session lives after login.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// How long a one-time login link is valid.
pub const LINK_TTL: Duration = Duration::from_secs(15 * 60);
/// Open sessions kept at most (the oldest is dropped past it).
const MAX_SESSIONS: usize = 256;
/// The login form's double-submit cookie (before there is a session).
pub const LOGIN_COOKIE: &str = "a2a_console_login";

/// The console's server-side sessions and one-time login links (per gateway, in memory: a
/// restart logs every operator out).
#[derive(Default)]
pub struct Sessions {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<[u8; 32], Session>,
    links: HashMap<[u8; 32], Instant>,
}

/// An open console session.
#[derive(Clone, Debug)]
pub struct Session {
    /// The synchronizer token every form of this session carries.
    pub csrf: String,
    expires: Instant,
}

impl Sessions {
    /// Opens a session; returns the cookie value (the only copy of the session id).
    pub fn open(&self) -> String {
        let id = random_hex(32);
        let now = Instant::now();
        if let Ok(mut m) = self.inner.lock() {
            m.sessions.retain(|_, s| s.expires > now);
            if m.sessions.len() >= MAX_SESSIONS
                && let Some(oldest) = m
                    .sessions
                    .iter()
                    .min_by_key(|(_, s)| s.expires)
                    .map(|(k, _)| *k)
            {
                m.sessions.remove(&oldest);
            }
            m.sessions.insert(
                keys::hash(&id),
                Session {
                    csrf: random_hex(32),
                    expires: now + SESSION_TTL,
                },
            );
        }
        id
    }

    /// The live session of a cookie value.
    pub fn get(&self, id: &str) -> Option<Session> {
        let m = self.inner.lock().ok()?;
        m.sessions
            .get(&keys::hash(id))
            .filter(|s| s.expires > Instant::now())
            .cloned()
    }

    /// Ends a session (logout).
    pub fn close(&self, id: &str) {
        if let Ok(mut m) = self.inner.lock() {
            m.sessions.remove(&keys::hash(id));
        }
    }

    /// A one-time login token, valid for [`LINK_TTL`] (`/console/login/{token}`).
    pub fn login_token(&self) -> String {
        let token = random_hex(32);
        if let Ok(mut m) = self.inner.lock() {
            let now = Instant::now();
            m.links.retain(|_, t| *t > now);
            m.links.insert(keys::hash(&token), now + LINK_TTL);
        }
        token
    }

    /// Whether `token` is a live login token; it is spent either way.
    pub fn redeem(&self, token: &str) -> bool {
        let Ok(mut m) = self.inner.lock() else {
            return false;
        };
        m.links
            .remove(&keys::hash(token))
            .is_some_and(|t| t > Instant::now())
    }
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
pub fn current(
    st: &GatewayState,
    sessions: &Sessions,
    headers: &HeaderMap,
) -> Option<(String, Session)> {
    let id = cookie(headers, &cookie_name(secure(st, headers), headers))?;
    sessions.get(id).map(|s| (id.to_owned(), s))
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

    #[test]
    fn sessions_open_expire_and_close() {
        let s = Sessions::default();
        let id = s.open();
        let sess = s.get(&id).expect("live");
        assert_eq!(sess.csrf.len(), 64);
        assert!(s.get("other").is_none());
        s.close(&id);
        assert!(s.get(&id).is_none());
    }

    #[test]
    fn login_tokens_are_one_time() {
        let s = Sessions::default();
        let t = s.login_token();
        assert!(s.redeem(&t));
        assert!(!s.redeem(&t));
        assert!(!s.redeem("made-up"));
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
