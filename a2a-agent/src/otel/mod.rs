//! OpenTelemetry trace export for both binaries (`a2a-agent`, `a2a-gateway`): spans of the
//! `tracing` crate sent over OTLP (HTTP/protobuf or gRPC) when an endpoint is set.
//!
//! Off (no endpoint by setting nor by `OTEL_EXPORTER_OTLP_*`): no exporter, no thread, and the
//! span helpers below return [`Span::none`] after one atomic load, so a request allocates
//! nothing for traces. On: a server span per request (the gateway's hop, the agent's request)
//! continuing the caller's W3C `traceparent`, child spans for its steps, and the attributes of
//! docs/operations.md ("Traces"). Only spans of target [`TARGET`] are exported (log events and
//! other crates' spans are not).
//!
//! The export can be turned on, off or pointed elsewhere while the process runs (a binary's
//! configuration reload): [`Tracing::stage`] and [`Tracing::switch`].

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

mod export;
mod tracer;

pub use export::{Export, Protocol, Settings, parse_headers, take_header_variables};
pub use tracer::{Staged, Tracing, install, process};

/// The `tracing` target of the exported spans (the export layer reads no other).
pub const TARGET: &str = "a2a_otel";

/// Whether spans are exported now (set by [`Tracing::switch`]).
static ON: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported (an export is running in this process).
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// Makes `span` continue the caller's `traceparent` (and `tracestate`), if valid.
fn continue_caller(span: &Span, headers: &http::HeaderMap) {
    let cx = TraceContextPropagator::new().extract(&Headers(headers));
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

/// The gateway's hop span (a server span continuing the caller's `traceparent`), with the
/// A2A attributes recorded later; [`Span::none`] when traces are off.
pub fn hop_span(headers: &http::HeaderMap) -> Span {
    if !enabled() {
        return Span::none();
    }
    let span = tracing::info_span!(
        target: TARGET,
        parent: None,
        "a2a.hop",
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
        a2a.operation = tracing::field::Empty,
        a2a.caller.version = tracing::field::Empty,
        a2a.caller.binding = tracing::field::Empty,
        a2a.peer.version = tracing::field::Empty,
        a2a.peer.binding = tracing::field::Empty,
        a2a.workspace = tracing::field::Empty,
        a2a.agent = tracing::field::Empty,
        a2a.task_id = tracing::field::Empty,
        a2a.context_id = tracing::field::Empty,
        a2a.decision = tracing::field::Empty,
        a2a.refusal_code = tracing::field::Empty,
    );
    continue_caller(&span, headers);
    span
}

/// The agent's request span (a server span continuing the caller's `traceparent`);
/// [`Span::none`] when traces are off.
pub fn request_span(method: &http::Method, headers: &http::HeaderMap) -> Span {
    if !enabled() {
        return Span::none();
    }
    let span = tracing::info_span!(
        target: TARGET,
        parent: None,
        "a2a.request",
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        http.request.method = method.as_str(),
        http.response.status_code = tracing::field::Empty,
        rpc.system = tracing::field::Empty,
        a2a.operation = tracing::field::Empty,
        a2a.caller.version = tracing::field::Empty,
        a2a.caller.binding = tracing::field::Empty,
        a2a.task_id = tracing::field::Empty,
        a2a.context_id = tracing::field::Empty,
        a2a.refusal_code = tracing::field::Empty,
    );
    continue_caller(&span, headers);
    span
}

/// A child span of `parent` named `name` (one of a request's steps); [`Span::none`] when
/// `parent` is (traces off).
pub fn step(parent: &Span, name: &'static str) -> Span {
    if parent.is_none() {
        return Span::none();
    }
    tracing::info_span!(target: TARGET, parent: parent, "a2a.step", otel.name = name)
}

/// Records `value` as attribute `field` of the current span when traces are exported (a
/// no-op after one atomic load otherwise).
#[inline]
pub fn note(field: &'static str, value: &str) {
    if enabled() {
        Span::current().record(field, value);
    }
}

/// The trace id of `span` (32 lowercase hex), `None` when it is not exported.
pub fn trace_id(span: &Span) -> Option<String> {
    if span.is_none() {
        return None;
    }
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| sc.trace_id().to_string())
}

/// The W3C `traceparent` naming `span` as the parent of an outgoing call, `None` when it is
/// not exported.
pub fn traceparent(span: &Span) -> Option<String> {
    if span.is_none() {
        return None;
    }
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_none_when_off() {
        assert!(!enabled());
        let h = http::HeaderMap::new();
        let s = hop_span(&h);
        assert!(s.is_none());
        assert!(step(&s, "edge").is_none());
        assert_eq!(trace_id(&s), None);
        assert_eq!(traceparent(&s), None);
    }
}
