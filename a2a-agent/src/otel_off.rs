//! Trace export left out (a2ars-agent without its `otel` feature): the span helpers of the
//! request path are no-ops and return [`Span::none`], with the signatures of the exporting
//! build (`otel.rs`), so the server code reads the same in both builds.

use tracing::Span;

/// The `tracing` target of the exported spans.
pub const TARGET: &str = "a2a_otel";

/// Whether traces are exported: never in this build.
#[inline]
pub fn enabled() -> bool {
    false
}

/// The trace settings as given (read by the `otel` build; kept so settings parse the same).
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings<'a> {
    /// Base URL of the collector.
    pub endpoint: Option<&'a str>,
    /// `http/protobuf` or `grpc`.
    pub protocol: Option<&'a str>,
    /// Headers sent with each export.
    pub headers: Option<&'a str>,
    /// The `service.name` resource attribute.
    pub service_name: Option<&'a str>,
}

/// The gateway's hop span: [`Span::none`].
pub fn hop_span(_headers: &http::HeaderMap) -> Span {
    Span::none()
}

/// The agent's request span: [`Span::none`].
pub fn request_span(_method: &http::Method, _headers: &http::HeaderMap) -> Span {
    Span::none()
}

/// A child span of `parent`: [`Span::none`].
pub fn step(_parent: &Span, _name: &'static str) -> Span {
    Span::none()
}

/// Records an attribute of the current span: nothing to record.
#[inline]
pub fn note(_field: &'static str, _value: &str) {}

/// The trace id of `span`: `None`.
pub fn trace_id(_span: &Span) -> Option<String> {
    None
}

/// The W3C `traceparent` of `span`: `None`.
pub fn traceparent(_span: &Span) -> Option<String> {
    None
}
