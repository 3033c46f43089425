//! The admin audit log (issue 15): every admin action (a change through the admin API, or
//! through `a2a-gateway admin ...` on the database file) is one append-only row with who did
//! it ([`AdminIdentity`]), what (`action`, the route or CLI command), on which workspace, the
//! request's body with secrets redacted, and the outcome.
//!
//! - the admin API writes it from one layer around every mutating admin route ([`layer`]), so
//!   a route added later is covered without code of its own; reads (`GET`, `:explain` dry
//!   runs) are not recorded;
//! - the CLI writes it with [`record_cli`];
//! - `GET /admin/admin-audit` ([`super::audit_read`]) and `a2a-gateway admin admin-audit`
//!   read it.
//!
//! The admin API has one credential today, the admin token, so the identity is
//! `{kind: "admin-token", subject: "admin-token", remote: <client address>}`; an OIDC login
//! would fill `kind: "oidc"` and its subject in the same fields.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::state::GatewayState;
use crate::store::Store;
use crate::store::backend::AuditStore;

pub use crate::store::backend::{AdminAuditRecord, AdminIdentity};

/// Member names whose values are never written to the admin audit (any case; JWK private
/// members only inside an object with `kty`).
fn secret_member(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["credential", "token", "secret", "password", "private"]
        .iter()
        .any(|s| n.contains(s))
        || n == "key"
}

const JWK_PRIVATE: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "k", "oth"];

/// `v` with every secret member replaced by `"[redacted]"`.
pub fn redact(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let jwk = o.contains_key("kty");
            let mut out = Map::new();
            for (k, val) in o {
                let hide = secret_member(k) || (jwk && JWK_PRIVATE.contains(&k.as_str()));
                out.insert(
                    k.clone(),
                    if hide && !val.is_null() {
                        json!("[redacted]")
                    } else {
                        redact(val)
                    },
                );
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(redact).collect()),
        other => other.clone(),
    }
}

/// Largest answer body the layer parses for the record.
const MAX_RECORDED_BODY: usize = 1024 * 1024;

fn is_read(method: &Method, path: &str) -> bool {
    method == Method::GET || method == Method::HEAD || path.ends_with(":explain")
}

/// The workspace an admin API path names (`/admin/workspaces/{ws}/...`).
fn path_workspace(path: &str) -> Option<String> {
    let mut segs = path.trim_start_matches('/').split('/');
    match (segs.next(), segs.next(), segs.next()) {
        (Some("admin"), Some("workspaces"), Some(ws)) if !ws.is_empty() => Some(decode_segment(ws)),
        _ => None,
    }
}

fn decode_segment(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_owned())
}

/// The console operator behind an admin request the console makes in process: its session
/// (a short digest, never the id) and the browser's address. Set as a request extension by the
/// console, read by [`layer`].
#[derive(Debug, Clone)]
pub struct ConsoleActor {
    /// The operator (`admin-token`, or `oidc:` and the provider's name for them): the
    /// subject of the records.
    pub operator: String,
    /// `session:` and the first 16 hex digits of the session id's digest (in the records'
    /// detail).
    pub session: String,
    /// The operator's address, when known.
    pub remote: Option<String>,
}

/// Records a console login attempt (`console login`, `console login-link` or `console
/// login-oidc`) with its outcome and the operator's address; status 200 for a login, 401/403
/// for a refusal. `subject` is `login` while nobody is known, else the operator.
pub(crate) async fn record_console_login(
    st: &GatewayState,
    action: &str,
    status: u16,
    subject: impl Into<String>,
    outcome: impl Into<String>,
    remote: Option<String>,
) {
    let rec = AdminAuditRecord {
        seq: 0,
        ts: String::new(),
        actor: AdminIdentity {
            kind: "console".into(),
            subject: subject.into(),
            remote,
        },
        action: action.to_owned(),
        workspace_id: None,
        status: i64::from(status),
        detail: json!({"outcome": outcome.into()}),
    };
    if let Err(e) = st.audit.append_admin(&rec).await {
        tracing::error!("admin audit write failed: {e}");
    }
}

/// The admin router's audit layer (inside the token check: only authorized actions).
pub(crate) async fn layer(
    State(st): State<Arc<GatewayState>>,
    req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path().to_owned();
    if is_read(req.method(), &path) {
        return next.run(req).await;
    }
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned())
        .unwrap_or_else(|| path.clone());
    let console = req.extensions().get::<ConsoleActor>().cloned();
    let remote = match &console {
        Some(c) => c.remote.clone(),
        None => req
            .extensions()
            .get::<ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0.to_string()),
    };
    let query = req.uri().query().map(str::to_owned);
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, crate::config::MAX_REQUEST_BYTES)
        .await
        .unwrap_or_default();
    let request_body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let resp = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let status = resp.status();
    let (rparts, rbody) = resp.into_parts();
    // Admin answers are small JSON built in memory: read whole (never cut short).
    let rbytes = match axum::body::to_bytes(rbody, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            tracing::error!("admin answer unreadable: {e}");
            axum::body::Bytes::new()
        }
    };
    let answer: Value = if rbytes.len() <= MAX_RECORDED_BODY {
        serde_json::from_slice(&rbytes).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let mut outcome = Map::new();
    if let Some(m) = answer.pointer("/error/message") {
        outcome.insert("error".into(), m.clone());
    }
    if let Some(d) = answer.pointer("/error/details/0/metadata") {
        outcome.insert("errorDetail".into(), redact(d));
    }
    for id in ["keyId", "kid", "approvalId", "id"] {
        if status.is_success()
            && let Some(v) = answer.get(id).filter(|v| v.is_string())
        {
            outcome.insert(id.into(), v.clone());
        }
    }
    let workspace_id = path_workspace(&path).or_else(|| {
        (route == "/admin/workspaces")
            .then(|| {
                request_body
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .flatten()
    });
    let rec = AdminAuditRecord {
        seq: 0,
        ts: String::new(),
        actor: match &console {
            Some(c) => AdminIdentity {
                kind: "console".into(),
                subject: c.operator.clone(),
                remote,
            },
            None => AdminIdentity {
                kind: "admin-token".into(),
                subject: "admin-token".into(),
                remote,
            },
        },
        action: format!("{method} {route}"),
        workspace_id,
        status: i64::from(status.as_u16()),
        detail: json!({
            "path": path,
            "query": query,
            "request": redact(&request_body),
            "outcome": Value::Object(outcome),
            "session": console.as_ref().map(|c| c.session.clone()),
        }),
    };
    if let Err(e) = st.audit.append_admin(&rec).await {
        tracing::error!("admin audit write failed: {e}");
    }
    let mut out = Response::from_parts(rparts, Body::from(rbytes));
    out.headers_mut().remove(header::CONTENT_LENGTH);
    out
}

/// Subcommands of `a2a-gateway admin` that only read (not recorded).
fn cli_is_read(sub: &str) -> bool {
    ["-list", "-get", "-export", "-explain", "admin-audit"]
        .iter()
        .any(|s| sub.ends_with(s))
}

/// Subcommands whose first argument is not a workspace id.
const CLI_NOT_WORKSPACE_FIRST: &[&str] = &["key-revoke"];

/// Records a CLI admin action: `args` are the arguments after `admin` (global flags such as
/// `--database` included), `error` the failure, if any. Reads are not recorded; values of
/// flags named like secrets (`--credential`, `--admin-token` ...) are redacted.
pub fn record_cli(store: &Store, args: &[String], error: Option<&str>) {
    let Some(rec) = cli_record(args, error) else {
        return;
    };
    if let Err(e) = store.append_admin_audit(&rec) {
        eprintln!("warning: the admin audit row was not written: {e}");
    }
}

/// The admin audit row of a CLI action ([`record_cli`]); `None` for a read.
pub(crate) fn cli_record(args: &[String], error: Option<&str>) -> Option<AdminAuditRecord> {
    // The subcommand: the first argument that is not a flag or a flag's value.
    let mut i = 0;
    while i < args.len() && args[i].starts_with("--") {
        i += if args[i].contains('=') { 1 } else { 2 };
    }
    let sub = args.get(i)?;
    if cli_is_read(sub) {
        return None;
    }
    let rest = &args[i + 1..];
    let mut shown = Vec::with_capacity(rest.len());
    let mut hide_next = false;
    let mut first_positional = None;
    let mut after_flag = false;
    for a in rest {
        if hide_next {
            shown.push("[redacted]".to_owned());
            hide_next = false;
            after_flag = false;
            continue;
        }
        if let Some(flag) = a.strip_prefix("--") {
            let name = flag.split('=').next().unwrap_or("");
            if secret_member(name) || name.ends_with("-key") {
                if flag.contains('=') {
                    shown.push(format!("--{name}=[redacted]"));
                } else {
                    shown.push(a.clone());
                    hide_next = true;
                }
                continue;
            }
            after_flag = !flag.contains('=');
            shown.push(a.clone());
            continue;
        }
        if !after_flag && first_positional.is_none() {
            first_positional = Some(a.clone());
        }
        after_flag = false;
        shown.push(a.clone());
    }
    let workspace_id =
        first_positional.filter(|_| !CLI_NOT_WORKSPACE_FIRST.contains(&sub.as_str()));
    let subject = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into());
    Some(AdminAuditRecord {
        seq: 0,
        ts: String::new(),
        actor: AdminIdentity {
            kind: "cli".into(),
            subject,
            remote: None,
        },
        action: format!("cli {sub}"),
        workspace_id,
        status: if error.is_some() { 400 } else { 200 },
        detail: json!({"args": shown, "outcome": match error {
            Some(e) => json!({"error": e}),
            None => json!({}),
        }}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_secrets_and_jwk_private_members() {
        let v = json!({"agentId": "a", "credential": "s3cret", "nested": {"adminToken": "t"},
            "jwk": {"kty": "EC", "x": "pub", "d": "priv"}, "keys": [{"privateKey": "pk"}]});
        let r = redact(&v);
        assert_eq!(r["agentId"], "a");
        assert_eq!(r["credential"], "[redacted]");
        assert_eq!(r["nested"]["adminToken"], "[redacted]");
        assert_eq!(r["jwk"]["x"], "pub");
        assert_eq!(r["jwk"]["d"], "[redacted]");
        assert_eq!(r["keys"][0]["privateKey"], "[redacted]");
        assert!(!r.to_string().contains("s3cret"));
    }

    #[test]
    fn cli_rows_name_the_command_workspace_and_hide_secrets() {
        let s = Store::open_in_memory().unwrap();
        let args: Vec<String> = [
            "--database",
            "x.db",
            "agent-add",
            "ws1",
            "a",
            "http://h",
            "--credential",
            "s3cret",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        record_cli(&s, &args, None);
        record_cli(&s, &["agent-list".to_owned(), "ws1".to_owned()], None);
        record_cli(
            &s,
            &["key-revoke".to_owned(), "k1".to_owned()],
            Some("no such key"),
        );
        let rows = s.admin_audit(None, 0, 10).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0].action, "cli agent-add");
        assert_eq!(rows[0].actor.kind, "cli");
        assert_eq!(rows[0].workspace_id.as_deref(), Some("ws1"));
        assert!(!rows[0].detail.to_string().contains("s3cret"));
        assert_eq!(rows[1].workspace_id, None);
        assert_eq!(rows[1].status, 400);
        assert_eq!(s.admin_audit(Some("ws1"), 0, 10).unwrap().len(), 1);
        assert!(s.execute_raw("DELETE FROM admin_audit").is_err());
    }
}
