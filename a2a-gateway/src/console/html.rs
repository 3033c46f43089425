//! The console's HTML: escaping, the page layout (landmarks, navigation, the operator and the
//! logout form), the forms a role may not send left out ([`PAGE_OPERATOR`]), the security
//! headers of every console answer, and small formatting helpers.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::roles::Roles;

tokio::task_local! {
    /// The logged-in operator's name and roles while a console request's handler runs (set by
    /// the session check): [`page`] names the operator and leaves out every form whose target
    /// the operator may not send ([`Roles::may_post`], the rule the server enforces).
    pub(crate) static PAGE_OPERATOR: (String, Roles);
}

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
    ("Admin audit", "/console/admin-audit"),
];

/// A full console page: `title` as its `<h1>`, `active` the navigation entry it belongs to,
/// `csrf` the session's token (for the logout form; empty on the login page).
pub fn page(status: StatusCode, title: &str, active: &str, csrf: &str, body: &str) -> Response {
    let operator = PAGE_OPERATOR.try_with(Clone::clone).ok();
    let body = match &operator {
        Some((name, roles)) => allowed_forms(body, roles, name),
        None => body.to_owned(),
    };
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
        let who = operator.as_ref().map_or_else(String::new, |(name, roles)| {
            format!(
                r#"<p class="operator">Logged in as <strong>{}</strong> ({})</p>"#,
                esc(name),
                esc(&roles.stored())
            )
        });
        nav.push_str(&format!(
            r#"</ul>{who}<form method="post" action="/console/logout" class="logout">{}<button type="submit">Log out</button></form></nav>"#,
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

/// `body` with every `POST` form `roles` may not send replaced by a note naming `who` (one
/// pass over the page).
fn allowed_forms(body: &str, roles: &Roles, who: &str) -> String {
    const OPEN: &str = r#"<form method="post" action=""#;
    const CLOSE: &str = "</form>";
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find(OPEN) {
        let after = &rest[at + OPEN.len()..];
        let action = after.split('"').next().unwrap_or("").replace("&amp;", "&");
        let Some(end) = after.find(CLOSE) else {
            break;
        };
        out.push_str(&rest[..at]);
        if roles.may_post(&action) {
            out.push_str(&rest[at..at + OPEN.len() + end + CLOSE.len()]);
        } else {
            out.push_str(&format!(
                r#"<p class="hint read-only">Read only: {} may not change this.</p>"#,
                esc(who)
            ));
        }
        rest = &after[end + CLOSE.len()..];
    }
    out.push_str(rest);
    out
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

    #[test]
    fn forms_a_role_may_not_send_are_left_out() {
        let body = concat!(
            r#"<p>a</p><form method="post" action="/console/workspaces/ws1/keys">k</form>"#,
            r#"<form method="post" action="/console/workspaces/ws1/approvals/ap/approve">d</form>"#,
            r#"<p>b</p>"#
        );
        let approver = Roles::from_names(["approver:ws1"]);
        let out = allowed_forms(body, &approver, "oidc:ana");
        assert!(!out.contains(">k</form>"), "{out}");
        assert!(out.contains(">d</form>"), "{out}");
        assert!(
            out.contains("Read only: oidc:ana") && out.ends_with("<p>b</p>"),
            "{out}"
        );
        let viewer = allowed_forms(body, &Roles::from_names(["viewer"]), "v");
        assert!(!viewer.contains("<form"), "{viewer}");
        assert_eq!(allowed_forms(body, &Roles::admin(), "admin-token"), body);
    }
}
