//! The gateway's side of the shared protocol edge ([`a2a_agent::listen`]): its 408/503 edge
//! refusals in the caller's form, and the `a2a_shutting_down` refusal that ends open streams and
//! waiting calls when the shutdown grace period is over.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::errors::{Origin, Refusal};

fn refusal(status: u16, code: &str, message: String) -> Refusal {
    Refusal {
        rpc_code: -32000,
        code: code.to_owned(),
        reason: code.to_ascii_uppercase(),
        origin: Origin::Gateway,
        status,
        message,
        type_name: "a2a_error".to_owned(),
        extra: Map::new(),
    }
}

/// The gateway is shutting down: the final event of a stream, the answer of a waiting call.
pub fn shutting_down() -> Refusal {
    refusal(
        503,
        "a2a_shutting_down",
        "The gateway is shutting down; retry against another instance or later".to_owned(),
    )
}

/// Renders an edge refusal (slow body 408, connection cap 503) in the caller's binding and
/// version form: `/a2a/{agent}/v1/...` is HTTP+JSON (`google.rpc.Status`), the rest JSON-RPC.
pub fn edge_refusal(
    serve_v1: bool,
    parts: &axum::http::request::Parts,
    why: a2a_agent::listen::EdgeRefusal,
) -> Response {
    use a2a_agent::listen::EdgeRefusal;
    let code = match why {
        EdgeRefusal::BodyTimeout(_) => "a2a_request_timeout",
        EdgeRefusal::Overloaded => "a2a_overloaded",
    };
    let status = why.status();
    let r = refusal(status.as_u16(), code, why.message());
    let trace = crate::server::random_hex(16);
    let requested = parts
        .headers
        .get("a2a-version")
        .and_then(|v| v.to_str().ok());
    let version = match crate::server::negotiate(requested, serve_v1) {
        Ok(v) => v,
        Err((_, form)) => form,
    };
    let segs: Vec<&str> = parts.uri.path().trim_matches('/').split('/').collect();
    let rest = segs.first() == Some(&"a2a") && segs.get(2) == Some(&"v1");
    let body: Value = if rest {
        r.status_body(&trace)
    } else {
        r.jsonrpc_response(version, &Value::Null, &trace)
    };
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    debug_assert!(status != StatusCode::OK);
    resp
}

/// When a peer stream last delivered bytes, shared between the byte stream and the stall timer.
#[derive(Clone)]
pub(crate) struct Liveness {
    start: std::time::Instant,
    last_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Liveness {
    pub(crate) fn new() -> Liveness {
        Liveness {
            start: std::time::Instant::now(),
            last_ms: std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0)),
        }
    }

    /// Bytes arrived now.
    pub(crate) fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// How long since the last bytes (or since the stream began).
    pub(crate) fn silent_for(&self) -> std::time::Duration {
        let last = std::time::Duration::from_millis(
            self.last_ms.load(std::sync::atomic::Ordering::Relaxed),
        );
        self.start.elapsed().saturating_sub(last)
    }
}
