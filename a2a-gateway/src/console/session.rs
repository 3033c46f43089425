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

/// Whether the session cookie gets `Secure` (and the `__Host-` prefix): always, unless the
/// request reached a loopback listener over plain HTTP (local and dev use; behind a TLS proxy on
/// the same host, the proxy's `X-Forwarded-Proto: https` turns it back on).
pub fn secure(st: &GatewayState, headers: &HeaderMap) -> bool {
    let forwarded_https = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    forwarded_https || !st.config.listen.ip().is_loopback()
}

/// The session cookie's name.
pub fn cookie_name(secure: bool) -> &'static str {
    if secure {
        "__Host-a2a_console"
    } else {
        "a2a_console"
    }
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
    let id = cookie(headers, cookie_name(secure(st, headers)))?;
    sessions.get(id).map(|s| (id.to_owned(), s))
}

/// The `Origin` (or, without one, `Referer`) names the host the request was sent to: its
/// `Host`, or the `X-Forwarded-Host` of a proxy that rewrites `Host` (a cross-site form cannot
/// set that header).
pub fn same_origin(headers: &HeaderMap) -> bool {
    let hosts: Vec<&str> = [header::HOST.as_str(), "x-forwarded-host"]
        .iter()
        .filter_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .collect();
    if hosts.is_empty() {
        return false;
    }
    let source = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok());
    let Some(url) = source.and_then(|s| url::Url::parse(s).ok()) else {
        return false;
    };
    let origin_host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        _ => return false,
    };
    matches!(url.scheme(), "http" | "https")
        && hosts
            .iter()
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
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert!(!same_origin(&h), "no Origin nor Referer");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(same_origin(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(!same_origin(&h));
        h.insert(
            "x-forwarded-host",
            HeaderValue::from_static("console.example"),
        );
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://console.example"),
        );
        assert!(same_origin(&h), "behind a proxy that rewrites Host");
        h.remove("x-forwarded-host");
        h.remove(header::ORIGIN);
        h.insert(
            header::REFERER,
            HeaderValue::from_static("http://127.0.0.1:8080/console/keys"),
        );
        assert!(same_origin(&h));
    }
}
