//! The hops view: the hop history newest first (source key, target, operation, versions and
//! bindings, decision, status, latency, trace id), filtered by the query parameters of
//! [`HopQuery`] (card fetches hidden unless asked for), keyset-paged by sequence number, with
//! live updates (`console.js` polls `/console/hops/live`); held hops and the decisions on them
//! read as such; and one hop's page with every audit record of its trace, its governance
//! evidence and, for a held hop or a decision, the story that links them ([`super::story`]).

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::Operator;
use super::backend::seg;
use super::hop_filter::{
    BATCH, BINDINGS, DECISIONS, HopQuery, Kind, OPERATIONS, VERSIONS, kind, scan,
};
use super::html::{esc, html_type, notice, opt, page};
use crate::state::GatewayState;
use crate::store::AuditRecord;
use crate::store::backend::{AuditStore, HoldStore, RegistryStore};

/// Rows per page.
const PAGE: usize = 50;

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

/// The current state of the approvals of the held hops among `rows` (one read of an
/// approval's facts each; never the held request).
async fn held_states(st: &GatewayState, rows: &[AuditRecord]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for r in rows {
        if let (Kind::Held(id), Some(ws)) = (kind(r), r.workspace_id.as_deref())
            && !out.contains_key(&id)
            && let Ok(Some(a)) = st.holds.approval_summary(ws, &id).await
        {
            out.insert(id, a.state);
        }
    }
    out
}

/// What the decision column says of `r`, and its CSS class.
fn decision_of(r: &AuditRecord, states: &HashMap<String, String>) -> (String, String) {
    match kind(r) {
        Kind::Held(id) => {
            let state = states.get(&id).map_or("?", String::as_str);
            (format!("held ({state})"), "held".into())
        }
        Kind::Decision {
            state, approver, ..
        } => {
            let who = if approver.is_empty() { "?" } else { &approver };
            let failed = if r.decision == "refused" {
                ", not sent"
            } else {
                ""
            };
            (format!("{state} by {who}{failed}"), "approval".into())
        }
        _ if r.outcome.is_some() => (format!("{} (incomplete)", r.decision), r.decision.clone()),
        _ => (r.decision.clone(), r.decision.clone()),
    }
}

/// One `<tr>` of the hop list.
fn row(r: &AuditRecord, states: &HashMap<String, String>) -> String {
    let (decision, dclass) = decision_of(r, states);
    let decided = matches!(kind(r), Kind::Decision { .. });
    let dash = || "—".to_owned();
    format!(
        r#"<tr data-seq="{seq}" data-kind="{k}"><th scope="row"><a href="/console/hops/{seq}">{seq}</a></th><td><time datetime="{ts}">{short}</time></td><td>{ws}</td><td><code>{key}</code></td><td>{target}</td><td>{op}</td><td>{ver}</td><td class="decision-{dclass}">{decision}</td><td>{status}{code}</td><td>{lat}</td><td><code class="trace">{trace}</code></td></tr>"#,
        seq = r.seq,
        k = match kind(r) {
            Kind::Held(_) => "held",
            Kind::Decision { .. } => "approval",
            Kind::Card => "card",
            Kind::Stream => "stream",
            Kind::Gateway => "gateway",
            Kind::Hop => "hop",
        },
        ts = esc(&r.ts),
        short = esc(&r.ts.get(..19).unwrap_or(&r.ts).replace('T', " ")),
        ws = opt(r.workspace_id.as_deref()),
        key = opt(r.key_id.as_deref()),
        target = opt(r.target.as_deref()),
        // A decision is not a call of the caller's: its row says what it decided.
        op = if decided {
            format!("approval of {}", opt(r.operation.as_deref()))
        } else {
            opt(r.operation.as_deref())
        },
        ver = if decided { dash() } else { versions(r) },
        dclass = esc(&dclass),
        decision = esc(&decision),
        status = r.status,
        code = r
            .error_code
            .as_deref()
            .map(|c| format!(" <span class=\"muted\">{}</span>", esc(c)))
            .unwrap_or_default(),
        lat = if decided {
            dash()
        } else {
            format!("{} ms", r.latency_ms)
        },
        trace = esc(&r.trace_id),
    )
}

const HEAD: &str = r#"<thead><tr><th scope="col">#</th><th scope="col">Time (UTC)</th><th scope="col">Workspace</th><th scope="col">Source key</th><th scope="col">Target</th><th scope="col">Operation</th><th scope="col">Versions and bindings (caller → peer)</th><th scope="col">Decision</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Trace id</th></tr></thead>"#;

/// `<option>`s of `values` (after an empty one reading `any`), `current` selected.
fn options(values: &[&str], current: &str, any: &str) -> String {
    let mut out = format!(r#"<option value="">{any}</option>"#);
    for v in values {
        let sel = if *v == current { " selected" } else { "" };
        let _ = write!(out, r#"<option value="{v}"{sel}>{v}</option>"#, v = esc(v));
    }
    out
}

async fn filters(st: &GatewayState, q: &HopQuery) -> String {
    let ids: Vec<String> = st
        .registry
        .list_workspaces()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.id)
        .collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let checked = if q.cards() { " checked" } else { "" };
    format!(
        r#"<form method="get" action="/console/hops" class="filters" role="search" aria-label="Filter hops">
<div><label for="f-ws">Workspace</label><select id="f-ws" name="workspace">{ws}</select></div>
<div><label for="f-agent">Agent</label><input id="f-agent" name="agent" value="{agent}" size="12"></div>
<div><label for="f-decision">Decision</label><select id="f-decision" name="decision">{dec}</select></div>
<div><label for="f-code">Error code</label><input id="f-code" name="code" value="{code}" size="18" placeholder="e.g. a2a_policy_denied"></div>
<div><label for="f-op">Operation</label><select id="f-op" name="operation">{ops}</select></div>
<div><label for="f-version">Version</label><select id="f-version" name="version">{ver}</select></div>
<div><label for="f-binding">Binding</label><select id="f-binding" name="binding">{bind}</select></div>
<div><label for="f-trace">Trace id contains</label><input id="f-trace" name="trace" value="{trace}" size="12" inputmode="latin" pattern="[0-9a-fA-F]*"></div>
<div><label for="f-task">Task id</label><input id="f-task" name="task" value="{task}" size="12"></div>
<div><label for="f-since">Since (UTC)</label><input id="f-since" name="since" type="datetime-local" value="{since}"></div>
<div><label for="f-until">Until (UTC)</label><input id="f-until" name="until" type="datetime-local" value="{until}"></div>
<div class="check"><input id="f-cards" name="cards" type="checkbox" value="1"{checked}><label for="f-cards" class="inline">Show card fetches</label></div>
<div class="actions"><button type="submit">Filter</button> <a href="/console/hops">Clear</a></div></form>"#,
        ws = options(&ids, &q.workspace, "all"),
        agent = esc(&q.agent),
        dec = options(&DECISIONS, q.decision.trim(), "any"),
        code = esc(&q.code),
        ops = options(&OPERATIONS, q.operation.trim(), "any"),
        ver = options(&VERSIONS, &q.version, "any"),
        bind = options(&BINDINGS, &q.binding, "any"),
        trace = esc(&q.trace),
        task = esc(&q.task),
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
    let found = match scan(&st, &q, &f, q.before, PAGE).await {
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
    let states = held_states(&st, &found.rows).await;
    let mut body_rows: String = found.rows.iter().map(|r| row(r, &states)).collect();
    if found.rows.is_empty() {
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
    if let Some(next) = found.next {
        let _ = write!(
            paging,
            r#"<a href="/console/hops?{}{amp}before={next}" rel="next">Older</a>"#,
            esc(&query),
        );
        if found.rows.len() < PAGE {
            let _ = write!(
                paging,
                r#" <span class="muted">(looked through {} hops for these filters; Older goes on from hop {next})</span>"#,
                found.scanned
            );
        }
    }
    // Live updates only on the first page (newer rows go on top of it).
    let live = if q.before.is_none() {
        format!(
            r#" data-live="/console/hops/live?{}" data-after="{}""#,
            esc(&query),
            found.newest.unwrap_or(0)
        )
    } else {
        String::new()
    };
    let hidden = if q.cards() || !q.operation.trim().is_empty() {
        String::new()
    } else {
        let mut with = q.clone();
        with.cards = "1".into();
        with.before = None;
        format!(
            r#"<p class="hint">Card fetches are hidden: <a href="/console/hops?{}">show them</a>.</p>"#,
            esc(&with.query())
        )
    };
    let filters = filters(&st, &q).await;
    let body = format!(
        r#"{filters}{hidden}
<p id="live-status" class="muted" role="status" aria-live="polite"></p>
<div class="scroll"><table id="hops"{live}><caption>Hops, newest first</caption>{HEAD}<tbody>{body_rows}</tbody></table></div>
<nav aria-label="Pages" class="paging">{paging}</nav>"#
    );
    page(StatusCode::OK, "Hops", "Hops", &op.csrf, &body)
}

/// Rows newer than `after` (newest first) as HTML `<tr>`s, for `console.js`; the header
/// `x-after` is the newest row looked at (filtered out or not), where the next poll starts.
pub(crate) async fn live(
    State(st): State<Arc<GatewayState>>,
    Query(q): Query<HopQuery>,
) -> Response {
    let Ok(f) = q.filter() else {
        return (StatusCode::BAD_REQUEST, html_type(), "").into_response();
    };
    let after = q.after.unwrap_or(0);
    match st.audit.hops_after(&f, after, BATCH).await {
        Ok(rows) => {
            let newest = rows.first().map_or(after, |r| r.seq);
            let rows: Vec<AuditRecord> = rows.into_iter().filter(|r| q.matches(r)).collect();
            let states = held_states(&st, &rows).await;
            let html: String = rows.iter().map(|r| row(r, &states)).collect();
            let mut resp = (StatusCode::OK, html_type(), html).into_response();
            if let Ok(v) = HeaderValue::from_str(&newest.to_string()) {
                resp.headers_mut().insert("x-after", v);
            }
            resp
        }
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
    let states = held_states(&st, std::slice::from_ref(&rec)).await;
    // An intent record that a later record completes is the hop's first record, not unfinished.
    let rows: String = records
        .iter()
        .map(|r| {
            if records.iter().any(|o| o.intent_seq == Some(r.seq)) {
                row(
                    &AuditRecord {
                        outcome: None,
                        decision: "intent".into(),
                        ..r.clone()
                    },
                    &states,
                )
            } else {
                row(r, &states)
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
    let story = match super::story::assemble(&st, &rec).await {
        Some(s) => format!(
            r#"<section aria-labelledby="story" class="story-box"><h2 id="story">Held for approval: what happened</h2>{}</section>"#,
            super::story::render(&s, rec.seq)
        ),
        None => String::new(),
    };
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
{story}<section aria-labelledby="recs"><h2 id="recs">Audit records of this trace</h2>
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
        dec = esc(&decision_of(&rec, &states).0),
        status = rec.status,
        code = opt(rec.error_code.as_deref()),
        lat = rec.latency_ms,
        task = opt(rec.task_id.as_deref()),
        trace = esc(&rec.trace_id),
    );
    page(StatusCode::OK, &title, "Hops", &op.csrf, &body)
}
