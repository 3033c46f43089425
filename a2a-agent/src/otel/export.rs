//! Where traces go: the settings as given ([`Settings`]) resolved against the standard
//! `OTEL_EXPORTER_OTLP_*` variables into an [`Export`].

use std::str::FromStr;
use std::sync::OnceLock;

/// The OTLP header variables removed from the environment ([`take_header_variables`]), with
/// their values.
static TAKEN: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// Removes `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` from the
/// process: the exporter library reads them too and would add them to the headers
/// [`Export::resolve`] chose (the `otlp_headers` setting wins over them). Their values stay
/// readable by [`Export::from_env`] (a reload that turns the export on reads them).
///
/// # Safety
///
/// No other thread may read or write the environment meanwhile: call it at the start of
/// `main`, before the async runtime (or any other thread) starts.
pub unsafe fn take_header_variables() {
    let mut taken = Vec::new();
    for k in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Ok(v) = std::env::var(k) {
            taken.push((k.to_owned(), v));
        }
        if std::env::var_os(k).is_some() {
            // SAFETY: the caller's promise (single-threaded process).
            unsafe { std::env::remove_var(k) };
        }
    }
    let _ = TAKEN.set(taken);
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

    /// [`Export::resolve`] from the process environment (the header variables as they were
    /// before [`take_header_variables`] removed them: a reload reads them again).
    pub fn from_env(s: &Settings<'_>, default_service: &str) -> Result<Option<Export>, String> {
        Export::resolve(s, default_service, &|k| {
            let taken = TAKEN.get().and_then(|t| t.iter().find(|(n, _)| n == k));
            match taken {
                Some((_, v)) => Some(v.clone()),
                None => std::env::var(k).ok(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

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
}
