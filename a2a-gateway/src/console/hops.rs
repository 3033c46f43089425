//! The hops view: the hop history newest first (source key, target, operation, versions and
//! bindings, decision, status, latency, trace id), filtered by workspace, agent, decision and
//! time, keyset-paged by sequence number, with live updates (`console.js` polls
//! `/console/hops/live`); and one hop's page with every audit record of its trace and its
//! governance evidence.

use std::fmt::Write;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::Operator;
use super::backend::seg;
use super::html::{esc, html_type, notice, opt, page};
use crate::state::GatewayState;
use crate::store::backend::{AuditStore, RegistryStore};
use crate::{store::AuditRecord, store::HopFilter};

/// Rows per page.
const PAGE: i64 = 50;
/// Decisions offered in the filter.
const DECISIONS: [&str; 5] = ["allowed", "refused", "killed", "duplicate", "stream"];

/// The query string of the hop list.
#[derive(Deserialize, Default)]
pub(crate) struct HopQuery {
    #[serde(default)]
    workspace: String,
    #[serde(default)]
    agent: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
    before: Option<i64>,
    after: Option<i64>,
}

/// A `datetime-local` value (`YYYY-MM-DDTHH:MM[:SS]`, read as UTC) or nothing.
fn time_bound(s: &str) -> Result<Option<String>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let ok = s.len() >= 16
        && s.len() <= 19
        && s.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            _ => b.is_ascii_digit(),
        });
    if ok {
        Ok(Some(s.to_owned()))
    } else {
        Err(format!("{s:?} is not a time like 2026-01-31T13:45 (UTC)"))
    }
}

impl HopQuery {
    fn filter(&self) -> Result<HopFilter, String> {
        let some = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
        Ok(HopFilter {
            workspace: some(&self.workspace),
            agent: some(&self.agent),
            decision: some(&self.decision),
            since: time_bound(&self.since)?,
            until: time_bound(&self.until)?,
        })
    }

    /// The filters as a query string (for paging links and live updates).
    fn query(&self) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("workspace", &self.workspace),
            ("agent", &self.agent),
            ("decision", &self.decision),
            ("since", &self.since),
            ("until", &self.until),
        ] {
            if !v.is_empty() {
                q.append_pair(k, v);
            }
        }
        q.finish()
    }
}

fn versions(r: &AuditRecord) -> String {
    let side = |v: &Option<String>, b: &Option<String>| match (v, b) {
        (None, None) => "—".to_owned(),
        (v, b) => format!(
            "{} {}",
            v.as_deref().unwrap_or("?"),
            b.as_deref().unwrap_or("?")
        ),
    };
    format!(
        "{} → {}",
        esc(&side(&r.client_version, &r.client_binding)),
        esc(&side(&r.peer_version, &r.peer_binding))
    )
}

/// One `<tr>` of the hop list.
fn row(r: &AuditRecord) -> String {
    let decision = if r.outcome.is_some() {
        format!("{} (incomplete)", r.decision)
    } else {
        r.decision.clone()
    };
    format!(
        r#"<tr data-seq="{seq}"><th scope="row"><a href="/console/hops/{seq}">{seq}</a></th><td><time datetime="{ts}">{short}</time></td><td>{ws}</td><td><code>{key}</code></td><td>{target}</td><td>{op}</td><td>{ver}</td><td class="decision-{dclass}">{decision}</td><td>{status}{code}</td><td>{lat} ms</td><td><code class="trace">{trace}</code></td></tr>"#,
        seq = r.seq,
        ts = esc(&r.ts),
        short = esc(&r.ts.get(..19).unwrap_or(&r.ts).replace('T', " ")),
        ws = opt(r.workspace_id.as_deref()),
        key = opt(r.key_id.as_deref()),
        target = opt(r.target.as_deref()),
        op = opt(r.operation.as_deref()),
        ver = versions(r),
        dclass = esc(&r.decision),
        decision = esc(&decision),
        status = r.status,
        code = r
            .error_code
            .as_deref()
            .map(|c| format!(" <span class=\"muted\">{}</span>", esc(c)))
            .unwrap_or_default(),
        lat = r.latency_ms,
        trace = esc(&r.trace_id),
    )
}

const HEAD: &str = r#"<thead><tr><th scope="col">#</th><th scope="col">Time (UTC)</th><th scope="col">Workspace</th><th scope="col">Source key</th><th scope="col">Target</th><th scope="col">Operation</th><th scope="col">Versions and bindings (caller → peer)</th><th scope="col">Decision</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Trace id</th></tr></thead>"#;

async fn filters(st: &GatewayState, q: &HopQuery) -> String {
    let mut ws_opts = String::from(r#"<option value="">all</option>"#);
    for w in st.registry.list_workspaces().await.unwrap_or_default() {
        let sel = if w.id == q.workspace { " selected" } else { "" };
        let _ = write!(
            ws_opts,
            r#"<option value="{id}"{sel}>{id}</option>"#,
            id = esc(&w.id)
        );
    }
    let mut d_opts = String::from(r#"<option value="">any</option>"#);
    for d in DECISIONS {
        let sel = if d == q.decision { " selected" } else { "" };
        let _ = write!(d_opts, r#"<option value="{d}"{sel}>{d}</option>"#);
    }
    format!(
        r#"<form method="get" action="/console/hops" class="filters" role="search" aria-label="Filter hops">
<div><label for="f-ws">Workspace</label><select id="f-ws" name="workspace">{ws_opts}</select></div>
<div><label for="f-agent">Agent</label><input id="f-agent" name="agent" value="{agent}"></div>
<div><label for="f-decision">Decision</label><select id="f-decision" name="decision">{d_opts}</select></div>
<div><label for="f-since">Since (UTC)</label><input id="f-since" name="since" type="datetime-local" value="{since}"></div>
<div><label for="f-until">Until (UTC)</label><input id="f-until" name="until" type="datetime-local" value="{until}"></div>
<div><button type="submit">Filter</button> <a href="/console/hops">Clear</a></div></form>"#,
        agent = esc(&q.agent),
        since = esc(&q.since),
        until = esc(&q.until),
    )
}

pub(crate) async fn list(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Query(q): Query<HopQuery>,
) -> Response {
    let f = match q.filter() {
        Ok(f) => f,
        Err(e) => {
            let filters = filters(&st, &q).await;
            let body = format!("{filters}{}", notice(&e, true));
            return page(StatusCode::BAD_REQUEST, "Hops", "Hops", &op.csrf, &body);
        }
    };
    let rows = match st.audit.hop_page(&f, q.before, PAGE).await {
        Ok(r) => r,
        Err(e) => {
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Hops",
                "Hops",
                &op.csrf,
                &notice(&e.to_string(), true),
            );
        }
    };
    let mut body_rows: String = rows.iter().map(row).collect();
    if rows.is_empty() {
        body_rows.push_str(r#"<tr class="empty"><td colspan="11">No hops match.</td></tr>"#);
    }
    let query = q.query();
    let amp = if query.is_empty() { "" } else { "&amp;" };
    let mut paging = String::new();
    if q.before.is_some() {
        let _ = write!(
            paging,
            r#"<a href="/console/hops?{}">Newest</a> "#,
            esc(&query)
        );
    }
    if rows.len() as i64 == PAGE
        && let Some(last) = rows.last()
    {
        let _ = write!(
            paging,
            r#"<a href="/console/hops?{}{amp}before={}" rel="next">Older</a>"#,
            esc(&query),
            last.seq
        );
    }
    // Live updates only on the first page (newer rows go on top of it).
    let live = if q.before.is_none() {
        format!(
            r#" data-live="/console/hops/live?{}" data-after="{}""#,
            esc(&query),
            rows.first().map_or(0, |r| r.seq)
        )
    } else {
        String::new()
    };
    let filters = filters(&st, &q).await;
    let body = format!(
        r#"{filters}
<p id="live-status" class="muted" role="status" aria-live="polite"></p>
<div class="scroll"><table id="hops"{live}><caption>Hops, newest first</caption>{HEAD}<tbody>{body_rows}</tbody></table></div>
<nav aria-label="Pages" class="paging">{paging}</nav>"#
    );
    page(StatusCode::OK, "Hops", "Hops", &op.csrf, &body)
}

/// Rows newer than `after` (newest first) as HTML `<tr>`s, for `console.js`.
pub(crate) async fn live(
    State(st): State<Arc<GatewayState>>,
    Query(q): Query<HopQuery>,
) -> Response {
    let Ok(f) = q.filter() else {
        return (StatusCode::BAD_REQUEST, html_type(), "").into_response();
    };
    match st.audit.hops_after(&f, q.after.unwrap_or(0), PAGE).await {
        Ok(rows) => (
            StatusCode::OK,
            html_type(),
            rows.iter().map(row).collect::<String>(),
        )
            .into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, html_type(), "").into_response(),
    }
}

pub(crate) async fn detail(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Path(seq): Path<i64>,
) -> Response {
    let title = format!("Hop {seq}");
    let rec = match st.audit.record(seq).await {
        Ok(Some(r)) => r,
        _ => {
            return page(
                StatusCode::NOT_FOUND,
                &title,
                "Hops",
                &op.csrf,
                &notice(&format!("hop {seq} not found"), true),
            );
        }
    };
    let records = st
        .audit
        .trace_records(&rec.trace_id)
        .await
        .unwrap_or_default();
    // An intent record that a later record completes is the hop's first record, not unfinished.
    let rows: String = records
        .iter()
        .map(|r| {
            if records.iter().any(|o| o.intent_seq == Some(r.seq)) {
                row(&AuditRecord {
                    outcome: None,
                    decision: "intent".into(),
                    ..r.clone()
                })
            } else {
                row(r)
            }
        })
        .collect();
    let mut evidence = String::new();
    for r in records.iter().filter(|r| r.governance.is_some()) {
        let pretty = r
            .governance
            .as_ref()
            .and_then(|g| serde_json::to_string_pretty(g).ok())
            .unwrap_or_default();
        let _ = write!(
            evidence,
            "<h3>Record {}</h3><pre>{}</pre>",
            r.seq,
            esc(&pretty)
        );
    }
    if evidence.is_empty() {
        evidence = "<p>No governance step recorded evidence for this hop.</p>".into();
    }
    let ws_link = rec.workspace_id.as_deref().map_or(String::new(), |w| {
        format!(
            r#" · <a href="/console/hops?workspace={}">hops of {}</a>"#,
            esc(&seg(w)),
            esc(w)
        )
    });
    let body = format!(
        r#"<p><a href="/console/hops">All hops</a>{ws_link}</p>
<dl class="facts"><dt>Time</dt><dd>{ts}</dd><dt>Workspace</dt><dd>{ws}</dd><dt>Source key</dt><dd><code>{key}</code></dd>
<dt>Target</dt><dd>{target}</dd><dt>Operation</dt><dd>{op} <span class="muted">(caller method {cm}, peer method {pm})</span></dd>
<dt>Versions and bindings</dt><dd>{ver}</dd><dt>Decision</dt><dd>{dec}</dd><dt>Status</dt><dd>{status} {code}</dd>
<dt>Latency</dt><dd>{lat} ms</dd><dt>Task</dt><dd>{task}</dd><dt>Trace id</dt><dd><code>{trace}</code></dd></dl>
<section aria-labelledby="recs"><h2 id="recs">Audit records of this trace</h2>
<div class="scroll"><table><caption>Records</caption>{HEAD}<tbody>{rows}</tbody></table></div></section>
<section aria-labelledby="gov"><h2 id="gov">Governance evidence</h2>{evidence}</section>"#,
        ts = esc(&rec.ts),
        ws = opt(rec.workspace_id.as_deref()),
        key = opt(rec.key_id.as_deref()),
        target = opt(rec.target.as_deref()),
        op = opt(rec.operation.as_deref()),
        cm = opt(rec.client_method.as_deref()),
        pm = opt(rec.peer_method.as_deref()),
        ver = versions(&rec),
        dec = esc(&rec.decision),
        status = rec.status,
        code = opt(rec.error_code.as_deref()),
        lat = rec.latency_ms,
        task = opt(rec.task_id.as_deref()),
        trace = esc(&rec.trace_id),
    );
    page(StatusCode::OK, &title, "Hops", &op.csrf, &body)
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_bounds() {
        assert_eq!(
            super::time_bound("2026-01-31T13:45").unwrap().as_deref(),
            Some("2026-01-31T13:45")
        );
        assert_eq!(super::time_bound(" ").unwrap(), None);
        assert!(super::time_bound("yesterday").is_err());
        assert!(super::time_bound("2026-01-31 13:45").is_err());
    }
}
