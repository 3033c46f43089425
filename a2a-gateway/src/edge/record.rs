//! Metrics and audit glue: a decided hop becomes one audit row, one metrics sample and one log
//! line; and the `/metrics` handler.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::hop::call::Call;
use crate::metrics::HopLabels;
use crate::protocol::errors::Refusal;
use crate::state::GatewayState;

/// Records the hop (audit + metrics) once it is decided.
pub(crate) fn record(st: &GatewayState, call: &mut Call, refusal: Option<&Refusal>) {
    let latency = call.started.elapsed();
    call.audit.latency_ms = latency.as_millis() as i64;
    // The split the metrics record (peer time and the gateway's own), kept per hop so the
    // console can give it per workspace and for every replica.
    let micros = |d: std::time::Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
    call.audit.peer_us = call.peer.map(micros);
    call.audit.overhead_us = call.peer.map(|p| micros(latency.saturating_sub(p)));
    call.audit.client_version = Some(call.version.as_str().to_owned());
    match refusal {
        Some(r) => {
            call.audit.decision = "refused".into();
            call.audit.status = r.status as i64;
            call.audit.error_code = Some(r.code.clone());
            if let Some(t) = crate::trust::of_refusal(r) {
                call.audit.signature_trust = Some(t);
            }
        }
        None => {
            call.audit.decision = "allowed".into();
            call.audit.status = 200;
            call.audit.error_code = None;
        }
    }
    let op = call
        .audit
        .operation
        .clone()
        .unwrap_or_else(|| "unknown".into());
    let code = refusal.map(|r| r.code.as_str()).unwrap_or("ok");
    st.metrics.hop(
        &HopLabels {
            workspace: call.audit.workspace_id.as_deref(),
            agent: call.audit.target.as_deref().filter(|_| call.target_found),
            operation: &op,
            caller_version: call.audit.client_version.as_deref(),
            decision: &call.audit.decision,
            code,
            jsonrpc_code: refusal.map(|r| r.rpc_code),
        },
        latency,
        call.peer,
    );
    if let Some(ev) = &call.audit.governance {
        st.metrics.decisions(ev);
    }
    if !call.span.is_none() {
        span_attributes(call, refusal);
    }
    // Only authenticated callers get audit rows: refusals before a key was accepted are
    // counted (`a2a_unauthenticated_total`, `a2a_requests_total`) and logged sampled, so that
    // nobody without a key can grow the append-only table.
    if call.audit.workspace_id.is_none() {
        st.metrics.log_unaudited(&call.trace_id, &op, code);
        return;
    }
    let audit = call.step("audit");
    st.audit.write(&call.audit, call.intent.as_ref());
    drop(audit);
    access_line(call, &op, refusal);
}

/// The layer of a gateway whose audit is on PostgreSQL: the records written while a request
/// is answered ([`Audit::write`](crate::store::backend::Audit::write)) are committed before
/// its answer leaves (see [`crate::store::backend::answered`]).
pub(crate) async fn durable_answers(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    crate::store::backend::answered(next.run(req)).await
}

/// The decided hop's attributes on its exported span (docs/operations.md, "Traces").
fn span_attributes(call: &Call, refusal: Option<&Refusal>) {
    let a = &call.audit;
    let s = &call.span;
    s.record("a2a.decision", a.decision.as_str());
    s.record("a2a.caller.version", call.version.as_str());
    s.record("a2a.caller.binding", call.binding.as_str());
    for (field, v) in [
        ("a2a.peer.version", &a.peer_version),
        ("a2a.peer.binding", &a.peer_binding),
        ("a2a.task_id", &a.task_id),
        ("a2a.workspace", &a.workspace_id),
        ("a2a.agent", &a.target),
    ] {
        if let Some(v) = v {
            s.record(field, v.as_str());
        }
    }
    if let Some(r) = refusal {
        s.record("a2a.refusal_code", r.code.as_str());
        if r.status >= 500 {
            s.record("otel.status_code", "ERROR");
        }
    }
    // The HTTP+JSON binding answers with the hop's status (JSON-RPC may answer 200 and gRPC
    // has its own codes).
    if call.binding == crate::protocol::errors::Binding::HttpJson {
        s.record("http.response.status_code", a.status);
    }
}

/// The hop's access line (target `access`, level info: `--log-level warn,access=info` shows
/// these alone): who, what, how it ended and how long it took.
fn access_line(call: &Call, op: &str, refusal: Option<&Refusal>) {
    let a = &call.audit;
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    tracing::info!(
        target: "access",
        trace_id = %call.trace_id,
        workspace = %s(&a.workspace_id),
        agent = %s(&a.target),
        operation = %op,
        caller_version = %s(&a.client_version),
        caller_binding = %s(&a.client_binding),
        peer_version = %s(&a.peer_version),
        peer_binding = %s(&a.peer_binding),
        status = a.status,
        decision = %a.decision,
        code = refusal.map_or("ok", |r| r.code.as_str()),
        latency_ms = a.latency_ms,
        "hop"
    );
}

/// `GET /metrics`: the gauges read at scrape time (open streams; approvals pending, counted
/// from the approvals' index), then the text exposition.
pub(crate) async fn metrics_handler(State(st): State<Arc<GatewayState>>) -> Response {
    let open = st.governance.streams.open_count();
    // On a blocking thread: on SQLite the count runs on the calling thread.
    let holds = st.holds.clone();
    let rt = tokio::runtime::Handle::current();
    let pending = tokio::task::spawn_blocking(move || {
        use crate::store::backend::HoldStore;
        rt.block_on(holds.pending_by_workspace())
    })
    .await
    .ok()
    .and_then(|r| {
        r.inspect_err(|e| tracing::warn!("metrics: approvals pending not read: {e}"))
            .ok()
    })
    .unwrap_or_default();
    st.metrics.set_scraped(open, &pending);
    st.metrics
        .set_listeners(&crate::edge::probes::listeners(&st));
    let mut resp = st.metrics.render().into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    resp
}
