//! The admin audit log (`GET /admin/admin-audit`): every admin action, by the console, the admin
//! API or the CLI, filtered by operator, action, time and workspace; oldest first from where the
//! filters start, 100 a page ("Next" continues after the last row shown).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use super::super::Operator;
use super::super::backend::admin;
use super::super::html::{esc, notice, opt, page};
use crate::state::GatewayState;

/// Rows a page shows.
const PAGE: usize = 100;

/// The page's filters (the admin API's names).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct AuditQuery {
    #[serde(default)]
    workspace: String,
    #[serde(default)]
    actor: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
    #[serde(default)]
    after: Option<i64>,
}

/// A time filter as given (`2026-12-07T10:00`, with seconds or a zone), or why it is not one.
fn time_ok(s: &str) -> Result<(), String> {
    let s = s.trim();
    let b = s.as_bytes();
    let shaped = b.len() >= 16
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[..16].iter().filter(|c| c.is_ascii_digit()).count() == 12;
    if s.is_empty() || shaped {
        Ok(())
    } else {
        Err(format!("{s:?} is not a time like 2026-01-31T13:45 (UTC)"))
    }
}

impl AuditQuery {
    /// The filters as a query string (`after` added when given).
    pub(crate) fn query(&self, after: Option<i64>) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("workspace", &self.workspace),
            ("actor", &self.actor),
            ("action", &self.action),
            ("since", &self.since),
            ("until", &self.until),
        ] {
            if !v.trim().is_empty() {
                q.append_pair(k, v.trim());
            }
        }
        if let Some(a) = after {
            q.append_pair("after", &a.to_string());
        }
        q.finish()
    }
}

/// The query of the same filters since an hour ago.
fn last_hour(q: &AuditQuery) -> String {
    let t = time::OffsetDateTime::now_utc() - time::Duration::hours(1);
    let since = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    );
    AuditQuery {
        workspace: q.workspace.clone(),
        actor: q.actor.clone(),
        action: q.action.clone(),
        since,
        until: String::new(),
        after: None,
    }
    .query(None)
}

pub(crate) async fn view(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Query(q): Query<AuditQuery>,
) -> Response {
    let bad = time_ok(&q.since).and(time_ok(&q.until)).err();
    let (status, top, rows) = match bad {
        Some(m) => (StatusCode::BAD_REQUEST, notice(&m, true), Vec::new()),
        None => {
            let path = format!("/admin/admin-audit?limit={PAGE}&{}", q.query(q.after));
            match admin(&st, Method::GET, &path, None).await {
                Ok(Value::Array(rows)) => (StatusCode::OK, String::new(), rows),
                Ok(_) => (StatusCode::OK, String::new(), Vec::new()),
                Err(r) => (
                    StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_GATEWAY),
                    notice(&r.message, true),
                    Vec::new(),
                ),
            }
        }
    };
    let mut body_rows = String::new();
    for r in &rows {
        let actor = &r["actor"];
        let ws = r["workspaceId"].as_str();
        let ws_cell = match ws {
            Some(w) => format!(
                r#"<a href="{}">{}</a>"#,
                esc(&super::super::ws_href(w)),
                esc(w)
            ),
            None => "—".into(),
        };
        let detail = serde_json::to_string_pretty(&r["detail"]).unwrap_or_default();
        let status_code = r["status"].as_i64().unwrap_or(0);
        body_rows.push_str(&format!(
            r#"<tr data-seq="{seq}"><th scope="row">{seq}</th><td>{ts}</td><td>{kind} <code>{subject}</code><br><span class="muted">{remote}</span></td><td><code>{action}</code></td><td>{ws_cell}</td><td class="{cls}">{status_code}</td><td><details><summary>request and outcome</summary><pre>{detail}</pre></details></td></tr>"#,
            seq = r["seq"].as_i64().unwrap_or(0),
            ts = esc(r["ts"].as_str().unwrap_or_default()),
            kind = esc(actor["kind"].as_str().unwrap_or_default()),
            subject = esc(actor["subject"].as_str().unwrap_or_default()),
            remote = opt(actor["remote"].as_str()),
            action = esc(r["action"].as_str().unwrap_or_default()),
            cls = if (200..300).contains(&status_code) {
                "decision-allowed"
            } else {
                "bad"
            },
            detail = esc(&detail),
        ));
    }
    if rows.is_empty() {
        body_rows.push_str(r#"<tr><td colspan="7">No admin action matches.</td></tr>"#);
    }
    let next = match rows.last().and_then(|r| r["seq"].as_i64()) {
        Some(last) if rows.len() >= PAGE => format!(
            r#"<div class="paging"><a href="/console/admin-audit?{}">Next (after {last})</a></div>"#,
            esc(&q.query(Some(last)))
        ),
        _ => String::new(),
    };
    let body = format!(
        r#"{top}<form method="get" action="/console/admin-audit" class="filters" id="audit-filters">
<div><label for="a-workspace">Workspace</label><input id="a-workspace" name="workspace" value="{ws}"></div>
<div><label for="a-actor">Operator (name, kind, address, session)</label><input id="a-actor" name="actor" value="{actor}" placeholder="oidc:alice, admin-token, cli"></div>
<div><label for="a-action">Action contains</label><input id="a-action" name="action" value="{action}" placeholder="policy, kill, cli agent-add"></div>
<div><label for="a-since">Since (UTC)</label><input id="a-since" name="since" type="datetime-local" value="{since}"></div>
<div><label for="a-until">Until (UTC)</label><input id="a-until" name="until" type="datetime-local" value="{until}"></div>
<div><button type="submit">Filter</button></div></form>
<p class="hint">Times are UTC. Recent actions: <a href="/console/admin-audit?{recent}" id="last-hour">the last hour</a>.</p>
<div class="scroll"><table id="admin-audit"><caption>Admin actions, oldest first from the filters' start ({n} shown)</caption>
<thead><tr><th scope="col">#</th><th scope="col">Time (UTC)</th><th scope="col">Operator</th><th scope="col">Action</th><th scope="col">Workspace</th><th scope="col">Status</th><th scope="col">Detail</th></tr></thead>
<tbody>{body_rows}</tbody></table></div>{next}"#,
        ws = esc(&q.workspace),
        actor = esc(&q.actor),
        action = esc(&q.action),
        since = esc(&q.since),
        until = esc(&q.until),
        n = rows.len(),
        recent = esc(&last_hour(&q)),
    );
    page(status, "Admin audit", "Admin audit", &op.csrf, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_queries() {
        assert!(time_ok("").is_ok());
        assert!(time_ok("2026-12-07T10:00").is_ok());
        assert!(time_ok("2026-12-07T10:00:05Z").is_ok());
        assert!(time_ok("yesterday").is_err());
        assert!(time_ok("2026-12-07 10:00").is_err());
        let q = AuditQuery {
            workspace: "a b".into(),
            action: " policy ".into(),
            ..Default::default()
        };
        assert_eq!(q.query(Some(7)), "workspace=a+b&action=policy&after=7");
    }
}
