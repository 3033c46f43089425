//! The console's HTML: escaping, the page layout (landmarks, navigation, logout form), the
//! security headers of every console answer, and small formatting helpers.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The Content-Security-Policy of every console answer: only the console's own script, style
/// and fetches; no inline script or style, no frames, forms only to the console.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
    connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Escapes text for HTML element content and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// [`esc`] of an optional value, `—` when absent.
pub fn opt(s: Option<&str>) -> String {
    s.map_or_else(|| "—".to_owned(), esc)
}

/// Unix seconds as `YYYY-MM-DD HH:MM:SSZ`.
pub fn unix(t: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(t)
        .map(|d| {
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}Z",
                d.year(),
                u8::from(d.month()),
                d.day(),
                d.hour(),
                d.minute(),
                d.second()
            )
        })
        .unwrap_or_else(|_| t.to_string())
}

/// The hidden CSRF field of a form.
pub fn csrf_field(csrf: &str) -> String {
    format!(r#"<input type="hidden" name="csrf" value="{}">"#, esc(csrf))
}

/// The sections of the main navigation.
const NAV: &[(&str, &str)] = &[
    ("Overview", "/console/overview"),
    ("Workspaces", "/console"),
    ("Hops", "/console/hops"),
    ("Approvals", "/console/approvals"),
];

/// A full console page: `title` as its `<h1>`, `active` the navigation entry it belongs to,
/// `csrf` the session's token (for the logout form; empty on the login page).
pub fn page(status: StatusCode, title: &str, active: &str, csrf: &str, body: &str) -> Response {
    let mut nav = String::new();
    if !csrf.is_empty() {
        nav.push_str(r#"<nav aria-label="Main"><ul>"#);
        for &(name, href) in NAV {
            let current = if name == active {
                r#" aria-current="page""#
            } else {
                ""
            };
            nav.push_str(&format!(r#"<li><a href="{href}"{current}>{name}</a></li>"#));
        }
        nav.push_str(&format!(
            r#"</ul><form method="post" action="/console/logout" class="logout">{}<button type="submit">Log out</button></form></nav>"#,
            csrf_field(csrf)
        ));
    }
    let html = format!(
        r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{t} · a2a-gateway console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><p class="brand">a2a-gateway console</p>{nav}</header>
<main id="main" tabindex="-1"><h1>{t}</h1>
{body}
</main></body></html>"##,
        t = esc(title)
    );
    (status, html_type(), html).into_response()
}

/// `Content-Type: text/html; charset=utf-8`.
pub fn html_type() -> [(header::HeaderName, HeaderValue); 1] {
    [(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    )]
}

/// A notice box (`role="status"`), or an error box (`role="alert"`) when `error`.
pub fn notice(text: &str, error: bool) -> String {
    if error {
        format!(r#"<div class="error" role="alert">{}</div>"#, esc(text))
    } else {
        format!(r#"<div class="notice" role="status">{}</div>"#, esc(text))
    }
}

/// Adds the security headers to every console answer.
pub async fn security_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(opt(None), "—");
        assert_eq!(unix(0), "1970-01-01 00:00:00Z");
    }
}
