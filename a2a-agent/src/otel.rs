//! OpenTelemetry trace export for both binaries (`a2a-agent`, `a2a-gateway`): spans of the
//! `tracing` crate sent over OTLP (HTTP/protobuf or gRPC) when an endpoint is set.
//!
//! Off (no endpoint by setting nor by `OTEL_EXPORTER_OTLP_*`): no exporter, no thread, and the
//! span helpers below return [`Span::none`] after one atomic load, so a request allocates
//! nothing for traces. On: a server span per request (the gateway's hop, the agent's request)
//! continuing the caller's W3C `traceparent`, child spans for its steps, and the attributes of
//! docs/operations.md ("Traces"). Only spans of target [`TARGET`] are exported (log events and
//! other crates' spans are not).

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `tracing` target of the exported spans (the export layer reads no other).
pub const TARGET: &str = "a2a_otel";

static ON: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported (an exporter was started in this process).
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: `POST {endpoint}/v1/traces` with a protobuf body (the default).
    HttpProtobuf,
    /// `grpc`: the collector's `TraceService/Export` over HTTP/2 (plaintext `http://` only).
    Grpc,
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s.trim() {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "grpc" => Ok(Protocol::Grpc),
            other => Err(format!(
                "OTLP protocol {other:?}: expected http/protobuf or grpc"
            )),
        }
    }
}

/// The trace settings as given (each `None` when not set); the binaries fill it from their
/// TOML / env / flag settings `otlp_endpoint`, `otlp_protocol`, `otlp_headers`, `service_name`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings<'a> {
    /// Base URL of the collector (`http://host:4318`; `/v1/traces` is added for HTTP).
    pub endpoint: Option<&'a str>,
    /// `http/protobuf` or `grpc`.
    pub protocol: Option<&'a str>,
    /// Headers sent with each export, `k=v,k2=v2` (values percent-decoded).
    pub headers: Option<&'a str>,
    /// The `service.name` resource attribute.
    pub service_name: Option<&'a str>,
}

/// Where and how traces go: each value from its setting, else the standard variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// The URL exported to (for HTTP, the full `/v1/traces` URL).
    pub endpoint: String,
    /// The transport.
    pub protocol: Protocol,
    /// Headers of each export request.
    pub headers: Vec<(String, String)>,
    /// `service.name`.
    pub service_name: String,
}

fn given(v: Option<&str>) -> Option<String> {
    v.map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// `base` with `/v1/traces` added (unless it already ends so).
fn traces_url(base: &str) -> String {
    let b = base.trim_end_matches('/');
    if b.ends_with("/v1/traces") {
        b.to_owned()
    } else {
        format!("{b}/v1/traces")
    }
}

/// Parses `k=v,k2=v2` (W3C baggage-like: entries trimmed, values percent-decoded).
pub fn parse_headers(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((k, v)) = entry.split_once('=') else {
            return Err(format!("OTLP header {entry:?}: expected key=value"));
        };
        let k = k.trim();
        if k.is_empty() || http::HeaderName::from_str(k).is_err() {
            return Err(format!("OTLP header name {k:?} is not a header name"));
        }
        let v = percent_decode(v.trim())
            .ok_or_else(|| format!("OTLP header {k:?}: bad percent-encoding"))?;
        out.push((k.to_ascii_lowercase(), v));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl Export {
    /// The export of `s` (a setting wins over its variable, read through `env`), or `None`
    /// when no endpoint is set anywhere (traces off). `default_service` names the binary.
    pub fn resolve(
        s: &Settings<'_>,
        default_service: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Export>, String> {
        let var = |k: &str| given(env(k).as_deref());
        let protocol = match given(s.protocol)
            .or_else(|| var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        {
            Some(p) => p.parse()?,
            None => Protocol::HttpProtobuf,
        };
        let http = protocol == Protocol::HttpProtobuf;
        let endpoint = if let Some(e) = given(s.endpoint) {
            if http { traces_url(&e) } else { e }
        } else if let Some(e) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            e
        } else if let Some(e) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            if http { traces_url(&e) } else { e }
        } else {
            return Ok(None);
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(format!(
                "OTLP endpoint {endpoint:?}: expected an http:// or https:// URL"
            ));
        }
        if !http && endpoint.starts_with("https://") {
            return Err(format!(
                "OTLP endpoint {endpoint:?}: the grpc protocol is served over plaintext \
                 http:// only (use http/protobuf for https)"
            ));
        }
        let headers = match given(s.headers)
            .or_else(|| var("OTEL_EXPORTER_OTLP_TRACES_HEADERS"))
            .or_else(|| var("OTEL_EXPORTER_OTLP_HEADERS"))
        {
            Some(h) => parse_headers(&h)?,
            None => Vec::new(),
        };
        let service_name = given(s.service_name)
            .or_else(|| var("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| default_service.to_owned());
        Ok(Some(Export {
            endpoint,
            protocol,
            headers,
            service_name,
        }))
    }

    /// [`Export::resolve`] from the process environment.
    pub fn from_env(s: &Settings<'_>, default_service: &str) -> Result<Option<Export>, String> {
        Export::resolve(s, default_service, &|k| std::env::var(k).ok())
    }
}

/// The running exporter; [`Tracing::shutdown`] sends what is still queued.
#[derive(Debug)]
pub struct Tracing {
    provider: SdkTracerProvider,
}

impl Tracing {
    /// Removes `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` from the
    /// process: the exporter library reads them too and would add them to the headers
    /// [`Export::resolve`] chose (the `otlp_headers` setting wins over them).
    ///
    /// # Safety
    ///
    /// No other thread may read or write the environment meanwhile: call it at the start of
    /// `main`, before the async runtime (or any other thread) starts.
    pub unsafe fn take_header_variables() {
        for k in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if std::env::var_os(k).is_some() {
                // SAFETY: the caller's promise (single-threaded process).
                unsafe { std::env::remove_var(k) };
            }
        }
    }

    /// Starts the exporter and its batch processor (a thread of its own). Call it inside the
    /// Tokio runtime (the gRPC channel lives there), after [`Tracing::take_header_variables`].
    pub fn start(e: &Export) -> Result<Tracing, String> {
        let exporter = match e.protocol {
            Protocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(e.endpoint.clone())
                .with_headers(e.headers.iter().cloned().collect::<HashMap<_, _>>())
                .build(),
            Protocol::Grpc => {
                let mut md = tonic::metadata::MetadataMap::new();
                for (k, v) in &e.headers {
                    let key = tonic::metadata::AsciiMetadataKey::from_bytes(k.as_bytes())
                        .map_err(|_| format!("OTLP header name {k:?} is not a header name"))?;
                    let value = tonic::metadata::AsciiMetadataValue::try_from(v.as_str())
                        .map_err(|_| format!("OTLP header {k:?}: not a header value"))?;
                    md.insert(key, value);
                }
                opentelemetry_otlp::SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(e.endpoint.clone())
                    .with_metadata(md)
                    .build()
            }
        }
        .map_err(|err| format!("OTLP exporter ({}): {err}", e.endpoint))?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(e.service_name.clone())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        ON.store(true, Ordering::Relaxed);
        Ok(Tracing { provider })
    }

    /// The `tracing` layer exporting the spans of target [`TARGET`].
    pub fn layer<S>(&self) -> impl tracing_subscriber::Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        use tracing_subscriber::Layer as _;
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("a2a-rs"))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_target(false)
            .with_filter(tracing_subscriber::filter::filter_fn(|m| {
                m.target() == TARGET
            }))
    }

    /// Sends the spans still queued and stops the exporter (the binaries' SIGTERM path). Call
    /// it outside the runtime's worker threads, while the runtime still runs.
    pub fn shutdown(self) {
        ON.store(false, Ordering::Relaxed);
        if let Err(e) = self.provider.shutdown() {
            eprintln!("OTLP exporter shutdown: {e}");
        }
    }
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

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn unset_everywhere_is_off() {
        let r = Export::resolve(&Settings::default(), "a2a-agent", &env(&[])).unwrap();
        assert_eq!(r, None);
    }

    #[test]
    fn settings_win_over_variables() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=env"),
            ("OTEL_SERVICE_NAME", "env-name"),
        ]);
        let s = Settings {
            endpoint: Some("http://set:4318/"),
            protocol: Some("http/protobuf"),
            headers: Some("a=set%20x, b = 2"),
            service_name: Some("set-name"),
        };
        let r = Export::resolve(&s, "a2a-gateway", &e).unwrap().unwrap();
        assert_eq!(r.endpoint, "http://set:4318/v1/traces");
        assert_eq!(r.protocol, Protocol::HttpProtobuf);
        assert_eq!(
            r.headers,
            vec![("a".into(), "set x".into()), ("b".into(), "2".into())]
        );
        assert_eq!(r.service_name, "set-name");
    }

    #[test]
    fn variables_apply_when_settings_are_unset() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "k=v"),
        ]);
        let r = Export::resolve(&Settings::default(), "a2a-gateway", &e)
            .unwrap()
            .unwrap();
        // gRPC endpoints are used as given; the name defaults to the binary's.
        assert_eq!(r.endpoint, "http://env:4317");
        assert_eq!(r.protocol, Protocol::Grpc);
        assert_eq!(r.headers, vec![("k".into(), "v".into())]);
        assert_eq!(r.service_name, "a2a-gateway");
        // The signal's own endpoint variable is used as it is, before the general one.
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
        ]);
        let r = Export::resolve(&Settings::default(), "x", &e)
            .unwrap()
            .unwrap();
        assert_eq!(r.endpoint, "http://t:1/custom");
    }

    #[test]
    fn bad_values_are_errors_naming_them() {
        let s = Settings {
            endpoint: Some("http://h:1"),
            protocol: Some("http/json"),
            ..Settings::default()
        };
        let err = Export::resolve(&s, "x", &env(&[])).unwrap_err();
        assert!(err.contains("http/json"), "{err}");
        let s = Settings {
            endpoint: Some("http://h:1"),
            headers: Some("novalue"),
            ..Settings::default()
        };
        let err = Export::resolve(&s, "x", &env(&[])).unwrap_err();
        assert!(err.contains("novalue"), "{err}");
        let s = Settings {
            endpoint: Some("h:1"),
            ..Settings::default()
        };
        assert!(Export::resolve(&s, "x", &env(&[])).is_err());
    }

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
