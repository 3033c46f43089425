//! The overview, the console's home after login: the last hour at a glance, fleet-wide or for
//! one workspace: hops per minute, refusals by code, held hops and approvals waiting, hop
//! latency, the gateway overhead and peer time, open streams and the peers with errors. The
//! figures come from [`super::figures`]; the page refreshes its figures by itself
//! (`console.js` fetches `/console/overview/live` and swaps them in), and the "Refresh" link
//! does the same without script.

use std::fmt::Write;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::Operator;
use super::backend::seg;
use super::chart::{Chart, Kind, MINUTES, Series, render};
use super::figures::{Histogram, MAX_HOPS, Window, counter_sum, percentile};
use super::html::{esc, html_type, notice, page};
use crate::metrics::names;
use crate::state::GatewayState;
use crate::store::backend::{HoldStore, RegistryStore};

/// How often the page refreshes its figures (seconds; `console.js` reads it from the page).
const REFRESH_SECS: u32 = 10;

/// The overview's query: one workspace, or the fleet (empty).
#[derive(Deserialize, Default)]
pub(crate) struct OverviewQuery {
    #[serde(default)]
    workspace: String,
}

pub(crate) async fn page_handler(
    State(st): State<Arc<GatewayState>>,
    Extension(op): Extension<Operator>,
    Query(q): Query<OverviewQuery>,
) -> Response {
    let ws = q.workspace.trim();
    let ids: Vec<String> = match st.registry.list_workspaces().await {
        Ok(l) => l.into_iter().map(|w| w.id).collect(),
        Err(e) => {
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Overview",
                "Overview",
                &op.csrf,
                &notice(&e.to_string(), true),
            );
        }
    };
    let mut opts = String::from(r#"<option value="">every workspace (fleet)</option>"#);
    for id in &ids {
        let sel = if id == ws { " selected" } else { "" };
        let _ = write!(
            opts,
            r#"<option value="{id}"{sel}>{id}</option>"#,
            id = esc(id)
        );
    }
    let (status, figures) = match figures(&st, ws, &ids).await {
        Ok(f) => (StatusCode::OK, f),
        Err((status, e)) => (status, notice(&e, true)),
    };
    let query = if ws.is_empty() {
        String::new()
    } else {
        format!("?workspace={}", seg(ws))
    };
    let scope = scope_label(ws);
    let body = format!(
        r#"<form method="get" action="/console/overview" class="filters" aria-label="Choose the workspace">
<div><label for="o-ws">Workspace</label><select id="o-ws" name="workspace">{opts}</select></div>
<div class="actions"><button type="submit">Show</button> <a href="/console/overview{q}">Refresh</a> <a href="/console">All workspaces</a></div></form>
<p class="hint">The last {MINUTES} minutes of {scope}, from the audit log (on PostgreSQL every replica's hops). Figures marked <em>this replica</em> are this gateway process's own, since it started. <span id="overview-status"></span></p>
<div id="overview" data-refresh="/console/overview/live{q}" data-every="{REFRESH_SECS}">{figures}</div>"#,
        q = esc(&query),
    );
    page(status, "Overview", "Overview", &op.csrf, &body)
}

/// The figures alone, for `console.js`.
pub(crate) async fn live(
    State(st): State<Arc<GatewayState>>,
    Query(q): Query<OverviewQuery>,
) -> Response {
    let ids: Vec<String> = st
        .registry
        .list_workspaces()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.id)
        .collect();
    match figures(&st, q.workspace.trim(), &ids).await {
        Ok(f) => (StatusCode::OK, html_type(), f).into_response(),
        Err((status, e)) => (status, html_type(), notice(&e, true)).into_response(),
    }
}

/// What the figures are of, as the page says it: `every workspace` or `workspace ws` (HTML).
fn scope_label(ws: &str) -> String {
    if ws.is_empty() {
        "every workspace".to_owned()
    } else {
        format!("workspace {}", esc(ws))
    }
}

/// A figure: `<div data-figure=name><dt>label</dt><dd>value</dd></div>`.
fn tile(name: &str, label: &str, value: &str, note: &str) -> String {
    format!(
        r#"<div class="tile" data-figure="{name}"><dt>{label}</dt><dd><span class="value">{value}</span>{note}</dd></div>"#,
        note = if note.is_empty() {
            String::new()
        } else {
            format!(r#" <span class="muted">{note}</span>"#)
        }
    )
}

/// Milliseconds with up to one decimal.
fn ms(seconds: Option<f64>) -> String {
    match seconds {
        None => "—".into(),
        Some(s) => {
            let v = s * 1000.0;
            if v >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        }
    }
}

/// The figures of workspace `ws` (`""`: every one of `ids`); an unknown workspace is 404, a
/// store error 500.
async fn figures(
    st: &GatewayState,
    ws: &str,
    ids: &[String],
) -> Result<String, (StatusCode, String)> {
    let failed = |e: crate::store::StoreError| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    if !ws.is_empty() && !ids.iter().any(|i| i == ws) {
        return Err((StatusCode::NOT_FOUND, format!("workspace {ws:?} not found")));
    }
    let now = time::OffsetDateTime::now_utc();
    let scope = (!ws.is_empty()).then_some(ws);
    let w = Window::read(st, scope, now).await.map_err(failed)?;
    // Approvals waiting, counted from the approvals' index as /metrics counts them (those
    // past their hold marked expired first, as the queue does).
    let mut waiting: Vec<(String, u64)> = Vec::new();
    let unix = now.unix_timestamp();
    for id in ids.iter().filter(|i| scope.is_none_or(|w| w == i.as_str())) {
        let _ = st.holds.expire_due(id, unix).await;
        let n = st
            .holds
            .approval_count(id, "pending")
            .await
            .map_err(failed)?;
        if n > 0 {
            waiting.push((id.clone(), n));
        }
    }
    let pending: u64 = waiting.iter().map(|(_, n)| n).sum();
    let text = st.metrics.render();
    // Open streams: this replica's now, plus on PostgreSQL every other live replica's as it
    // last published them (within a second).
    let here: i64 = st
        .governance
        .streams
        .open_by_workspace()
        .iter()
        .filter(|(w, _)| scope.is_none_or(|s| s == w))
        .map(|(_, n)| n)
        .sum();
    let (open, open_note) = match st.replay.shared_store() {
        None => (here as u64, "now"),
        Some(pg) => match pg.others_open_streams(scope).await {
            Ok(n) => (here as u64 + n, "now, every replica"),
            Err(e) => {
                tracing::warn!("open streams of the other replicas not read: {e}");
                (
                    here as u64,
                    "now, this replica only: the others' not readable",
                )
            }
        },
    };
    let unauth = counter_sum(&text, names::UNAUTHENTICATED);
    let overhead = Histogram::parse(&text, names::OVERHEAD).unwrap_or_default();
    let peer = Histogram::parse(&text, names::PEER_DURATION).unwrap_or_default();

    let last_minute = w
        .minutes
        .last()
        .map_or(0, |m| m.allowed + m.refused + m.held);
    let per_min = w.hops as f64 / MINUTES as f64;
    let q = |extra: &str| {
        let mut s = String::from("/console/hops?");
        if !ws.is_empty() {
            s.push_str(&format!("workspace={}&", seg(ws)));
        }
        s.push_str(extra);
        esc(&s)
    };
    let mut out = String::from(r#"<dl class="tiles">"#);
    out.push_str(&tile(
        "hops",
        "Hops",
        &w.hops.to_string(),
        &format!("in {MINUTES} min"),
    ));
    out.push_str(&tile(
        "per-minute",
        "Hops per minute",
        &last_minute.to_string(),
        &format!("this minute; {per_min:.1} on average"),
    ));
    out.push_str(&tile(
        "refused",
        &format!(r#"<a href="{}">Refused</a>"#, q("decision=refused")),
        &w.refused.to_string(),
        &format!("in {MINUTES} min"),
    ));
    out.push_str(&tile(
        "held",
        &format!(r#"<a href="{}">Held for approval</a>"#, q("decision=held")),
        &w.held.to_string(),
        &format!("in {MINUTES} min"),
    ));
    out.push_str(&tile(
        "approvals-waiting",
        &format!(
            r#"<a href="/console/approvals{}">Approvals waiting</a>"#,
            if ws.is_empty() {
                String::new()
            } else {
                esc(&format!("?workspace={}", seg(ws)))
            }
        ),
        &pending.to_string(),
        "now",
    ));
    out.push_str(&tile(
        "open-streams",
        "Open streams",
        &open.to_string(),
        open_note,
    ));
    out.push_str(&tile(
        "unauthenticated",
        "Refused before a key",
        &format!("{unauth}"),
        "this replica since start; not audited",
    ));
    out.push_str("</dl>");
    if w.capped {
        out.push_str(&notice(
            &format!("Busy hour: these figures are of the newest {MAX_HOPS} hops only."),
            false,
        ));
    }

    // Hops per minute: allowed, held and refused, stacked.
    let col = |f: &dyn Fn(&super::figures::Minute) -> u64| -> Vec<Option<f64>> {
        w.minutes
            .iter()
            .map(|m| Some(f(m) as f64).filter(|v| *v > 0.0))
            .collect()
    };
    let hops_chart = render(&Chart {
        id: "ov-hops",
        title: format!(
            "Hops per minute over the last {MINUTES} minutes: {} hops, {} refused, {} held",
            w.hops, w.refused, w.held
        ),
        unit: "hops/min",
        series: vec![
            Series {
                name: "allowed".into(),
                class: "bar",
                kind: Kind::Bar,
                values: col(&|m| m.allowed),
            },
            Series {
                name: "held".into(),
                class: "bar-held",
                kind: Kind::Bar,
                values: col(&|m| m.held),
            },
            Series {
                name: "refused".into(),
                class: "bar-refused",
                kind: Kind::Bar,
                values: col(&|m| m.refused),
            },
        ],
    });
    let mut p50 = Vec::with_capacity(MINUTES);
    let mut p99 = Vec::with_capacity(MINUTES);
    for m in &w.minutes {
        let mut v = m.latency.clone();
        p50.push(percentile(&mut v, 0.5).map(|x| x as f64));
        p99.push(percentile(&mut v, 0.99).map(|x| x as f64));
    }
    let mut all: Vec<i64> = w
        .minutes
        .iter()
        .flat_map(|m| m.latency.iter().copied())
        .collect();
    let (h50, h99) = (percentile(&mut all, 0.5), percentile(&mut all, 0.99));
    let lat_chart = render(&Chart {
        id: "ov-lat",
        title: format!(
            "Hop latency per minute in milliseconds, median and 99th percentile; over the hour {} and {} ms",
            h50.map_or("—".into(), |v| v.to_string()),
            h99.map_or("—".into(), |v| v.to_string())
        ),
        unit: "ms",
        series: vec![
            Series {
                name: "p50".into(),
                class: "line-avg",
                kind: Kind::Line,
                values: p50.clone(),
            },
            Series {
                name: "p99".into(),
                class: "line-max",
                kind: Kind::Line,
                values: p99.clone(),
            },
        ],
    });
    let mut numbers = String::new();
    for (i, m) in w.minutes.iter().enumerate() {
        let n = m.allowed + m.held + m.refused;
        if n == 0 {
            continue;
        }
        let dash = |v: Option<f64>| v.map_or("—".to_owned(), |v| (v as i64).to_string());
        let _ = write!(
            numbers,
            "<tr><td>−{} min</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            MINUTES - 1 - i,
            m.allowed,
            m.held,
            m.refused,
            dash(p50[i]),
            dash(p99[i]),
        );
    }
    if numbers.is_empty() {
        numbers.push_str(r#"<tr><td colspan="6">No hops in the last hour.</td></tr>"#);
    }
    let _ = write!(
        out,
        r#"<div class="charts"><figure class="chart">{hops_chart}<figcaption>Hops per minute: allowed, held for approval and refused (stacked).</figcaption></figure>
<figure class="chart">{lat_chart}<figcaption>Hop latency per minute (ms, as the audit records it): median (p50) and p99. Over the hour: p50 {a} ms, p99 {b} ms.</figcaption></figure></div>
<details><summary>The charts' numbers</summary><div class="scroll"><table><caption>Per minute (minutes with hops)</caption>
<thead><tr><th scope="col">Minute</th><th scope="col">Allowed</th><th scope="col">Held</th><th scope="col">Refused</th><th scope="col">p50 ms</th><th scope="col">p99 ms</th></tr></thead>
<tbody>{numbers}</tbody></table></div></details>"#,
        a = h50.map_or("—".into(), |v| v.to_string()),
        b = h99.map_or("—".into(), |v| v.to_string()),
    );

    // Refusals by code.
    let mut codes: Vec<(&String, &u64)> = w.by_code.iter().collect();
    codes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let max = codes.first().map_or(1, |c| *c.1).max(1);
    let mut rows = String::new();
    for (code, n) in &codes {
        let _ = write!(
            rows,
            r#"<tr data-code="{c}"><th scope="row"><a href="{href}"><code>{c}</code></a></th><td class="num">{n}</td><td class="meter-cell"><meter min="0" max="{max}" value="{n}" aria-label="{n} of {max}">{n}</meter></td></tr>"#,
            c = esc(code),
            href = q(&format!("decision=refused&code={}", seg(code))),
        );
    }
    if codes.is_empty() {
        rows.push_str(r#"<tr><td colspan="3">No refusals in the last hour.</td></tr>"#);
    }
    let _ = write!(
        out,
        r#"<div class="two"><section aria-labelledby="ov-codes"><h2 id="ov-codes">Refusals by code</h2>
<table id="refusals"><caption>Refused hops of the last {MINUTES} minutes by error code</caption><thead><tr><th scope="col">Code</th><th scope="col">Hops</th><th scope="col">Share</th></tr></thead><tbody>{rows}</tbody></table></section>"#
    );

    // Overhead and peer time: every replica's hops of the scope, from the audit; then this
    // replica's histograms, as Prometheus reads them.
    let row = |name: &str, label: &str, p50: Option<f64>, p99: Option<f64>, n: u64| {
        format!(
            r#"<tr data-latency="{name}"><th scope="row">{label}</th><td class="num p50">{}</td><td class="num p99">{}</td><td class="num count">{n}</td></tr>"#,
            ms(p50),
            ms(p99),
        )
    };
    let audited = |v: &[i64], label: &str, name: &str| {
        let mut v = v.to_vec();
        let secs = |us: Option<i64>| us.map(|u| u as f64 / 1e6);
        let (p50, p99) = (percentile(&mut v, 0.5), percentile(&mut v, 0.99));
        row(name, label, secs(p50), secs(p99), v.len() as u64)
    };
    let metric = |h: &Histogram, label: &str, name: &str| {
        row(
            name,
            label,
            h.quantile(0.5),
            h.quantile(0.99),
            h.count() as u64,
        )
    };
    let _ = write!(
        out,
        r#"<section aria-labelledby="ov-lat"><h2 id="ov-lat">Gateway overhead and peer time</h2>
<p class="hint">Of each hop that called its peer in the last {MINUTES} minutes ({scope}, every replica, from the audit): the time it waited for the peer (a stream: for the answer's head) and the gateway's own time (the rest). Below them, this replica's own since it started, every workspace: the <code>a2a_gateway_overhead_seconds</code> and <code>a2a_peer_duration_seconds</code> histograms of <code>/metrics</code> read as <code>histogram_quantile</code> reads them (within a bucket, linear).</p>
<table id="latency"><caption>Overhead and peer time</caption>
<thead><tr><th scope="col">Share of a hop</th><th scope="col">p50 (ms)</th><th scope="col">p99 (ms)</th><th scope="col">Hops measured</th></tr></thead>
<tbody>{}{}{}{}</tbody></table></section></div>"#,
        audited(&w.overhead_us, "Gateway overhead", "overhead"),
        audited(&w.peer_us, "Peer time", "peer"),
        metric(
            &overhead,
            "Gateway overhead, this replica (metrics)",
            "overhead-replica"
        ),
        metric(&peer, "Peer time, this replica (metrics)", "peer-replica"),
        scope = scope_label(ws),
    );

    // Peers with errors, and approvals waiting per workspace.
    let mut peers: Vec<_> = w.peers.iter().collect();
    peers.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    let mut prow = String::new();
    for ((pws, agent), e) in &peers {
        let _ = write!(
            prow,
            r#"<tr data-peer="{a}"><th scope="row"><a href="{href}">{a}</a></th><td>{w}</td><td class="num">{n}</td><td><code>{code}</code></td><td><a href="/console/hops/{seq}">{ts}</a></td></tr>"#,
            a = esc(agent),
            w = esc(pws),
            href = esc(&format!(
                "/console/workspaces/{}/agents/{}",
                seg(pws),
                seg(agent)
            )),
            n = e.count,
            code = esc(&e.last_code),
            seq = e.last_seq,
            ts = esc(&e.last_ts.get(..19).unwrap_or(&e.last_ts).replace('T', " ")),
        );
    }
    if peers.is_empty() {
        prow.push_str(r#"<tr><td colspan="5">No peer errors in the last hour.</td></tr>"#);
    }
    let mut arow = String::new();
    for (id, n) in &waiting {
        let _ = write!(
            arow,
            r#"<tr><th scope="row"><a href="/console/approvals?workspace={}">{}</a></th><td class="num">{n}</td></tr>"#,
            esc(&seg(id)),
            esc(id)
        );
    }
    if waiting.is_empty() {
        arow.push_str(r#"<tr><td colspan="2">None waiting.</td></tr>"#);
    }
    let decided: Vec<String> = w
        .decisions
        .iter()
        .map(|(s, n)| format!("{n} {}", esc(s)))
        .collect();
    let _ = write!(
        out,
        r#"<div class="two"><section aria-labelledby="ov-peers"><h2 id="ov-peers">Peers with recent errors</h2>
<table id="peers"><caption>Agents whose calls failed at the peer (unreachable, timed out, bad answer, card) in the last {MINUTES} minutes</caption><thead><tr><th scope="col">Agent</th><th scope="col">Workspace</th><th scope="col">Errors</th><th scope="col">Last code</th><th scope="col">Last (UTC)</th></tr></thead><tbody>{prow}</tbody></table></section>
<section aria-labelledby="ov-appr"><h2 id="ov-appr">Approvals waiting</h2>
<table id="waiting"><caption>Held hops waiting for a person, by workspace</caption><thead><tr><th scope="col">Workspace</th><th scope="col">Waiting</th></tr></thead><tbody>{arow}</tbody></table>
<p class="hint">Decided in the last {MINUTES} minutes: {d}. <a href="{h}">Decisions in the hop list</a>.</p></section></div>"#,
        d = if decided.is_empty() {
            "none".into()
        } else {
            decided.join(", ")
        },
        h = q("decision=approval"),
    );
    let _ = write!(
        out,
        r#"<p class="muted updated">Figures of <time datetime="{t}">{t}</time>.</p>"#,
        t = esc(&super::html::unix(now.unix_timestamp())),
    );
    Ok(out)
}
