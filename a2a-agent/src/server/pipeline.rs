//! The request pipeline: edge checks (method, content type, version, extensions, body size),
//! authentication, admission, then dispatch to the binding.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;

use super::admit::admit;
#[cfg(feature = "grpc")]
use super::grpc;
use super::respond::{Binding, error_response, jsonrpc_or_rest_error, peek_id};
use super::{jsonrpc, rest};
use crate::caller::CallerProfile;
use crate::card::etag;
use crate::edge::media::check_content_type;
use crate::edge::names;
use crate::edge::version::{Version, requested_version};
use crate::error::{A2aError, ErrorKind};
use crate::listen::EdgeRefusal;
use crate::state::{App, Call};
use a2a_types::envelope::RawId;

impl App {
    fn card_response(&self, headers: &HeaderMap, query: Option<&str>) -> Response {
        let version = match requested_version(headers, query) {
            Ok(v) => v,
            Err(e) => return error_response(&e, Version::V1, Binding::HttpJson),
        };
        let body = serde_json::to_vec(&self.card.render(version)).unwrap_or_default();
        let tag = etag(&body);
        let inm = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
        // If-Modified-Since counts only without If-None-Match (RFC 9110 §13.1.3).
        let ims = headers.get(header::IF_NONE_MATCH).is_none()
            && headers
                .get(header::IF_MODIFIED_SINCE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim() == self.card_modified);
        let mut r = if inm || ims {
            let mut r = Response::new(Body::empty());
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            r
        } else {
            let mut r = Response::new(Body::from(body));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r
        };
        let h = r.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&tag) {
            h.insert(header::ETAG, v);
        }
        if let Ok(v) = HeaderValue::from_str(&format!(
            "public, max-age={}",
            self.cfg().card_max_age.get().as_secs()
        )) {
            h.insert(header::CACHE_CONTROL, v);
        }
        h.insert(header::VARY, HeaderValue::from_static("A2A-Version"));
        if let Ok(v) = HeaderValue::from_str(&self.card_modified) {
            h.insert(header::LAST_MODIFIED, v);
        }
        r
    }
}

/// The 408 / 503 the edge answers itself, and the 400 / 414 / 431 of a request head hyper could
/// not read, in the caller's binding and version.
pub(super) fn edge_refusal(base: &str, parts: &http::request::Parts, why: EdgeRefusal) -> Response {
    let version = requested_version(&parts.headers, parts.uri.query())
        .ok()
        .flatten()
        .unwrap_or(Version::V03);
    let rel = parts.uri.path().strip_prefix(base).unwrap_or("");
    let binding = if rel.is_empty() || rel == "/" {
        Binding::JsonRpc
    } else {
        Binding::HttpJson
    };
    let kind = match why {
        EdgeRefusal::Overloaded => ErrorKind::Unavailable,
        EdgeRefusal::BodyTimeout(_)
        | EdgeRefusal::BadRequest
        | EdgeRefusal::UriTooLong
        | EdgeRefusal::HeadersTooLarge => ErrorKind::InvalidRequest,
    };
    let e = A2aError::new(kind, why.message()).with_status(why.status().as_u16());
    // A gRPC call (a slow body, the connection cap) gets a status, not a JSON body.
    #[cfg(feature = "grpc")]
    if grpc::is_grpc(&parts.headers) {
        return grpc::refused(&e);
    }
    let mut r = error_response(&e, version, binding);
    *r.status_mut() = why.status();
    r
}

/// Read the body under the payload limit; 413 as soon as the limit is passed.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, A2aError> {
    let too_big = || {
        A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            format!("request body exceeds maxPayloadSize ({limit} bytes)"),
        )
        .with_status(413)
    };
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                Err(too_big())
            } else {
                Err(A2aError::invalid_params(format!(
                    "cannot read request body: {e}"
                )))
            }
        }
    }
}

/// A body's content type: JSON (either media type) or none at all (see [`check_content_type`]).
fn content_type_ok(headers: &HeaderMap) -> bool {
    !matches!(check_content_type(headers), Err(Some(_)))
}

/// The router's fallback handler (with CORS on; see [`Direct`]).
pub(super) async fn entry(State(app): State<Arc<App>>, req: Request) -> Response {
    serve_request(app, req).await
}

/// The server as a plain service: every request goes to [`serve_request`], and the answer is
/// finished as axum's fallback route finishes it (`Content-Length` from an exact body size, no
/// body on HEAD, none on a successful CONNECT), without the router's per-request work.
#[derive(Clone)]
pub(super) struct Direct(pub(super) Arc<App>);

impl tower::Service<Request> for Direct {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Response, Self::Error>> + Send + 'static>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let app = self.0.clone();
        Box::pin(async move {
            let method = req.method().clone();
            Ok(finish_like_axum(&method, serve_request(app, req).await))
        })
    }
}

/// What axum's top-level route future does to an answer (axum 0.8 `RouteFuture::poll`).
fn finish_like_axum(method: &Method, mut res: Response) -> Response {
    use http_body::Body as _;
    if *method == Method::CONNECT && res.status().is_success() {
        if res.headers().contains_key(header::CONTENT_LENGTH)
            || res.headers().contains_key(header::TRANSFER_ENCODING)
            || res.body().size_hint().lower() != 0
        {
            res = res.map(|_| Body::empty());
        }
        return res;
    }
    if !res.headers().contains_key(header::CONTENT_LENGTH)
        && let Some(n) = res.body().size_hint().exact()
    {
        res.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(n));
    }
    if *method == Method::HEAD {
        *res.body_mut() = Body::empty();
    }
    res
}

async fn serve_request(app: Arc<App>, mut req: Request) -> Response {
    use tracing::Instrument;
    // The caller's request id when it is short text (shared, not copied), else a new one.
    let trace_id = match req
        .headers()
        .get(&names::X_REQUEST_ID)
        .filter(|v| v.len() <= a2a_types::elide::MAX_ECHO_BYTES && v.to_str().is_ok())
    {
        Some(v) => Some(v.clone()),
        None => {
            let mut buf = [0u8; uuid::fmt::Simple::LENGTH];
            let id = uuid::Uuid::new_v4().simple();
            HeaderValue::from_str(id.encode_lower(&mut buf)).ok()
        }
    };
    // With traces exported, the request's server span ([`crate::otel`]); else a debug span: at
    // the default `info` level it is disabled and costs nothing per request (a live span
    // formats its fields on every request: ~10 % of an echo request's CPU).
    let traced = crate::otel::request_span(req.method(), req.headers());
    // The request's `traceparent` then names its span: what a handler sees and what its
    // delegations send on (`crate::delegate`).
    if let Some(tp) = crate::otel::traceparent(&traced).and_then(|t| HeaderValue::from_str(&t).ok())
    {
        req.headers_mut().insert(names::TRACEPARENT, tp);
    }
    let span = if traced.is_none() {
        tracing::debug_span!(
            "a2a_request",
            trace_id = %trace_id.as_ref().and_then(|v| v.to_str().ok()).unwrap_or_default(),
            method = %req.method(),
            path = %req.uri().path()
        )
    } else {
        traced.clone()
    };
    let started = std::time::Instant::now();
    let mut resp = pipeline(app, req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    if !traced.is_none() {
        traced.record("http.response.status_code", status);
        if status >= 500 {
            traced.record("otel.status_code", "ERROR");
        }
    }
    span.in_scope(|| {
        tracing::debug!(
            status,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "done"
        )
    });
    metrics::counter!("a2a_agent_requests_total", "status" => status_label(status)).increment(1);
    metrics::histogram!("a2a_agent_request_duration_seconds")
        .record(started.elapsed().as_secs_f64());
    if let Some(v) = trace_id {
        resp.headers_mut().insert(names::X_TRACE_ID, v);
    }
    resp
}

#[cfg(feature = "prometheus")]
/// The gauges read at scrape time: the task queue, the live tasks and the push queue.
fn scrape_gauges(app: &App) {
    use crate::metrics::names;
    metrics::gauge!(names::TASK_QUEUE_DEPTH).set(app.manager.queued_count() as f64);
    metrics::gauge!(names::TASKS_LIVE).set(app.manager.live_count() as f64);
    let push = app.push.as_ref().map_or(0, |p| p.queued());
    metrics::gauge!(names::PUSH_QUEUE_DEPTH).set(push as f64);
}

/// The `status` label of a request count: the common codes without an allocation.
fn status_label(status: u16) -> metrics::SharedString {
    match status {
        200 => "200".into(),
        400 => "400".into(),
        401 => "401".into(),
        404 => "404".into(),
        s => s.to_string().into(),
    }
}

async fn pipeline(app: Arc<App>, req: Request) -> Response {
    #[cfg(feature = "grpc")]
    if grpc::is_grpc(req.headers()) {
        return Box::pin(grpc::handle(app, req)).await;
    }
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    let headers = parts.headers;
    let method = parts.method;

    // 0. Path bytes: every segment must be valid percent-encoded UTF-8.
    if let Err(e) = a2a_types::path::check_path(&path) {
        let v = requested_version(&headers, query.as_deref())
            .ok()
            .flatten()
            .unwrap_or(Version::V1);
        let e = A2aError::new(
            ErrorKind::InvalidRequest,
            format!("Invalid request path: {e}"),
        )
        .with_status(400);
        return error_response(&e, v, Binding::HttpJson);
    }
    if method == Method::GET
        && (path == "/.well-known/agent-card.json"
            || path == format!("{}/.well-known/agent-card.json", app.base))
    {
        return app.card_response(&headers, query.as_deref());
    }
    if method == Method::GET && (path == "/healthz" || path == "/readyz") {
        return super::probes::probe(&app, path == "/readyz").await;
    }
    #[cfg(feature = "prometheus")]
    if method == Method::GET
        && path == format!("{}/metrics", app.base)
        && let Some(h) = &app.metrics
    {
        scrape_gauges(&app);
        let mut r = Response::new(Body::from(h.render()));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        return r;
    }
    let rel = match path.strip_prefix(app.base.as_str()) {
        Some(r) if r.is_empty() || r.starts_with('/') => r.to_string(),
        _ => {
            let e = A2aError::new(ErrorKind::MethodNotFound, format!("no route for {path}"));
            return error_response(&e, Version::V1, Binding::HttpJson);
        }
    };
    let binding = if rel.is_empty() || rel == "/" {
        Binding::JsonRpc
    } else {
        Binding::HttpJson
    };
    // The `binding` setting: a binding not served is 404 in its own form.
    let served = app.cfg().binding;
    if (binding == Binding::JsonRpc && !served.jsonrpc())
        || (binding == Binding::HttpJson && !served.rest())
    {
        let v = requested_version(&headers, query.as_deref())
            .ok()
            .flatten()
            .unwrap_or(Version::V03);
        let what = if binding == Binding::JsonRpc {
            "JSON-RPC"
        } else {
            "HTTP+JSON"
        };
        let e = A2aError::new(
            ErrorKind::MethodNotFound,
            format!("this agent does not serve the {what} binding"),
        )
        .in_table(app.cfg().rest_status_table);
        let mut r = error_response(&e, v, binding);
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    }
    if binding == Binding::JsonRpc && method != Method::POST {
        // A JSON-RPC error object (id null) with the HTTP status 405.
        let e = A2aError::new(ErrorKind::MethodNotFound, "JSON-RPC requires POST").with_status(405);
        let v = requested_version(&headers, query.as_deref())
            .ok()
            .flatten()
            .unwrap_or(Version::V03);
        let mut r = error_response(&e, v, Binding::JsonRpc);
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    // 1. Version, before anything else (and before auth).
    let explicit = match requested_version(&headers, query.as_deref()) {
        Ok(v) => Ok(v),
        Err(e) => Err((e, Version::V1)),
    };
    let rest_route = match &explicit {
        Ok(x) if binding == Binding::HttpJson => Some(rest::parse_route(&rel, *x)),
        _ => None,
    };
    // The version errors are reported in before the operation is known.
    let early_version = match &explicit {
        Ok(x) => x.unwrap_or(match &rest_route {
            Some(Some(r)) => r.version,
            _ => Version::V03,
        }),
        Err(_) => Version::V1,
    };
    let limit = app.cfg().max_payload_size;
    let checked = match explicit {
        Ok(x) => pre_dispatch(&app, &headers, query.as_deref(), &method)
            .await
            .map(|(caller, extensions)| (x, caller, extensions)),
        Err((e, _)) => Err(e),
    };
    let (explicit, caller, extensions) = match checked {
        Ok(c) => c,
        Err(e) => {
            let e = if binding == Binding::HttpJson {
                e.in_table(app.cfg().rest_status_table)
            } else {
                e
            };
            // JSON-RPC: echo the caller's id when the body can be read within the limit.
            let id =
                if binding == Binding::JsonRpc && method == Method::POST && e.status != Some(413) {
                    read_body(body, limit)
                        .await
                        .map(|b| peek_id(&b))
                        .unwrap_or_else(|_| RawId::null())
                } else {
                    RawId::null()
                };
            let mut r = jsonrpc_or_rest_error(&e, early_version, binding, &id);
            if e.status == Some(413) {
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            return r;
        }
    };
    let bytes = if method == Method::POST {
        match read_body(body, limit).await {
            Ok(b) => b,
            Err(e) => {
                let e = if binding == Binding::HttpJson {
                    e.in_table(app.cfg().rest_status_table)
                } else {
                    e
                };
                return error_response(&e, early_version, binding);
            }
        }
    } else {
        Bytes::new()
    };
    let call = Call {
        caller,
        extensions,
        headers: Arc::new(headers),
        query,
    };
    // The bindings' futures are boxed: this one stays small, so moving it through the HTTP
    // stack (axum boxes it, tracing wraps it) copies little.
    let mut resp = match binding {
        Binding::JsonRpc => Box::pin(jsonrpc::handle(&app, explicit, &call, bytes)).await,
        Binding::HttpJson | Binding::Grpc => match rest_route.flatten() {
            Some(route) => Box::pin(rest::handle(&app, route, &method, &call, bytes)).await,
            None => {
                let e = A2aError::new(ErrorKind::MethodNotFound, format!("no route for {path}"))
                    .in_table(app.cfg().rest_status_table);
                error_response(&e, early_version, binding)
            }
        },
    };
    if !call.extensions.is_empty()
        && let Ok(v) = HeaderValue::from_str(&call.extensions.join(", "))
    {
        resp.headers_mut().insert(names::A2A_EXTENSIONS, v.clone());
        resp.headers_mut().insert(names::X_A2A_EXTENSIONS, v);
    }
    resp
}

/// The checks between the version and the body: declared size, authentication, extensions,
/// content type. Returns the caller and the negotiated extensions.
async fn pre_dispatch(
    app: &App,
    headers: &HeaderMap,
    query: Option<&str>,
    method: &Method,
) -> Result<(CallerProfile, Vec<String>), A2aError> {
    // 2. Payload size from Content-Length, without reading.
    let limit = app.cfg().max_payload_size;
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && len > limit as u64
    {
        return Err(A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            format!("request body of {len} bytes exceeds maxPayloadSize ({limit} bytes)"),
        )
        .with_status(413));
    }
    // 3. Authentication. 4. Extensions.
    let (caller, extensions) = admit(app, headers, query).await?;
    // 5. Content type of bodies.
    if method == Method::POST && !content_type_ok(headers) {
        return Err(A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            "Content-Type must be application/json or application/a2a+json",
        ));
    }
    Ok((caller, extensions))
}
