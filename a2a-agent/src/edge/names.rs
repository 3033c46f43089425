//! The A2A header names the request path reads and writes, built once: a lookup or insert by a
//! `&str` name parses and validates the name on every call (about 300 instructions each, a
//! dozen per echo request; docs/benchmarks.md, "Fewer instructions per echo request").

use http::HeaderName;

/// `A2A-Version`.
pub(crate) const A2A_VERSION: HeaderName = HeaderName::from_static("a2a-version");
/// `A2A-Extensions`.
pub(crate) const A2A_EXTENSIONS: HeaderName = HeaderName::from_static("a2a-extensions");
/// `X-A2A-Extensions` (the older spelling, still read and answered).
pub(crate) const X_A2A_EXTENSIONS: HeaderName = HeaderName::from_static("x-a2a-extensions");
/// `A2A-Return-Immediately`: the per-request override of a send's `returnImmediately`.
pub(crate) const A2A_RETURN_IMMEDIATELY: HeaderName =
    HeaderName::from_static("a2a-return-immediately");
/// `X-Request-Id`: the caller's request id, answered as [`X_TRACE_ID`].
pub(crate) const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// `X-Trace-Id`: the request's trace id on every answer.
pub(crate) const X_TRACE_ID: HeaderName = HeaderName::from_static("x-trace-id");
/// `traceparent` (W3C trace context).
pub(crate) const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
