//! The HTTP server: builder, request pipeline (negotiation, limits, auth, extensions), card
//! endpoint, graceful shutdown.

use crate::auth::{AuthRequest, Authenticator, CallerProfile, CardAuthenticator, NoAuth};
use crate::card::{AgentCard, etag};
use crate::config::AgentConfig;
use crate::error::{A2aError, ErrorKind};
use crate::handler::{ExtensionHandler, Handler};
use crate::negotiate::{Version, requested_version};
use crate::replay::ReplayLog;
use crate::store::{MemoryStore, SqliteStore, TaskStore};
use crate::tasks::{TaskLimits, TaskManager};
use a2a_types::envelope::RawId;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// `application/a2a+json` (the types' [`a2a_types::version::APPLICATION_A2A_JSON`]).
pub const A2A_JSON: &str = a2a_types::version::APPLICATION_A2A_JSON;

/// Start-up failures.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The card cannot be served.
    #[error(transparent)]
    Card(#[from] crate::card::CardError),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// Socket trouble.
    #[error("listener: {0}")]
    Io(#[from] std::io::Error),
    /// Bad configuration.
    #[error("configuration: {0}")]
    Config(String),
}

/// Builds and starts an A2A agent server: a card plus a handler.
pub struct AgentServer {
    card: AgentCard,
    handler: Arc<dyn Handler>,
    config: AgentConfig,
    store: Option<Arc<dyn TaskStore>>,
    replay_log: Option<Arc<dyn ReplayLog>>,
    authenticator: Option<Arc<dyn Authenticator>>,
    ext_handlers: Vec<Arc<dyn ExtensionHandler>>,
    metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    extended_card: Option<AgentCard>,
}

impl AgentServer {
    /// A server for `card` running `handler`, with the default [`AgentConfig`].
    pub fn new(card: AgentCard, handler: impl Handler) -> Self {
        Self::with_handler(card, Arc::new(handler))
    }

    /// Same as [`AgentServer::new`] with a shared handler.
    pub fn with_handler(card: AgentCard, handler: Arc<dyn Handler>) -> Self {
        AgentServer {
            card,
            handler,
            config: AgentConfig::default(),
            store: None,
            replay_log: None,
            authenticator: None,
            ext_handlers: Vec::new(),
            metrics: None,
            extended_card: None,
        }
    }

    /// The extended agent card served to authenticated callers by `GetExtendedAgentCard`
    /// (0.3: `agent/getAuthenticatedExtendedCard`, REST `GET /extendedAgentCard`, `/v1/card`)
    /// when the card declares `capabilities.extendedAgentCard`.
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Serve Prometheus metrics at `GET {base}/metrics` from this handle (install the recorder
    /// with `metrics_exporter_prometheus::PrometheusBuilder::install_recorder`).
    pub fn metrics(mut self, handle: metrics_exporter_prometheus::PrometheusHandle) -> Self {
        self.metrics = Some(handle);
        self
    }

    /// Replace the configuration.
    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// Shorthand for `validate_auth`.
    pub fn validate_auth(mut self, on: bool) -> Self {
        self.config.validate_auth = on;
        self
    }

    /// Use this task store instead of the one the configuration names.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// With [`AgentServer::store`]: keep replayable stream events in `log` (without one, a
    /// resume with `Last-Event-ID` gets the task snapshot). A [`MemoryStore`] is its own log.
    pub fn replay_log(mut self, log: Arc<dyn ReplayLog>) -> Self {
        self.replay_log = Some(log);
        self
    }

    /// Use this authenticator instead of the card-driven API key / bearer one.
    pub fn authenticator(mut self, a: Arc<dyn Authenticator>) -> Self {
        self.authenticator = Some(a);
        self
    }

    /// Register an extension handler (invoked before/after the handler for its URI).
    pub fn extension_handler(mut self, h: Arc<dyn ExtensionHandler>) -> Self {
        self.ext_handlers.push(h);
        self
    }

    /// Serve on `listener` until [`ServerHandle::shutdown`].
    pub async fn serve(self, listener: TcpListener) -> Result<ServerHandle, ServeError> {
        let addr = listener.local_addr()?;
        let cfg = self.config;
        let base = cfg.base();
        let url = match &cfg.public_url {
            Some(u) => u.trim_end_matches('/').to_string(),
            None => format!("http://{addr}{base}"),
        };
        let grpc_at = cfg.grpc.then(|| crate::grpc::authority(&url, addr));
        let card = AgentCard::from_json(self.card.json().clone())?.with_served_interfaces(
            &url,
            cfg.binding,
            grpc_at.as_deref(),
        );
        if card.lists_grpc() && !cfg.grpc {
            return Err(ServeError::Config(
                "the card lists a GRPC interface, but grpc is off: set grpc = true \
                 (--grpc true) or remove the interface"
                    .into(),
            ));
        }
        // The replay log lives with the tasks: in the memory store's entries, or in the SQLite
        // file. A store given by the embedder gets a log of event numbers only.
        let (store, replay): (Arc<dyn TaskStore>, Option<Arc<dyn ReplayLog>>) =
            match (self.store, &cfg.sqlite_path) {
                (Some(s), _) => (s, self.replay_log),
                (None, Some(p)) => (
                    Arc::new(SqliteStore::open(p)?),
                    Some(Arc::new(crate::replay::SqliteReplay::open(
                        p,
                        cfg.replay_events_per_task,
                    )?)),
                ),
                (None, None) => {
                    let m = Arc::new(
                        MemoryStore::new(
                            cfg.memory_store_cap,
                            Duration::from_secs(cfg.terminal_task_ttl_s),
                        )
                        .with_max_bytes(cfg.memory_store_max_bytes)
                        .with_replay_events(cfg.replay_events_per_task),
                    );
                    (m.clone(), Some(m))
                }
            };
        let authenticator: Arc<dyn Authenticator> = match (self.authenticator, cfg.validate_auth) {
            (Some(a), _) => a,
            (None, false) => Arc::new(NoAuth),
            (None, true) => {
                let mut a = CardAuthenticator::new(
                    &card,
                    cfg.api_key.clone(),
                    &cfg.api_key_header,
                    cfg.bearer_token.clone(),
                );
                if let Some(o) = cfg.oidc() {
                    let v = crate::oidc::TokenValidator::new(o)
                        .map_err(|e| ServeError::Config(e.message.clone()))?;
                    a = a.with_token_validator(Arc::new(v));
                }
                Arc::new(a)
            }
        };
        let decls = card.extensions();
        let ext_handlers = self
            .ext_handlers
            .into_iter()
            .map(|h| {
                let decl = decls
                    .iter()
                    .find(|d| d.get("uri").and_then(Value::as_str) == Some(h.uri()))
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"uri": h.uri()}));
                (decl, h)
            })
            .collect();
        let manager = TaskManager::new(
            store,
            self.handler,
            ext_handlers,
            TaskLimits {
                max_concurrent_tasks: cfg.max_concurrent_tasks,
                task_queue_size: cfg.task_queue_size,
                async_timeout: cfg.async_timeout(),
                sse_queue_capacity: cfg.sse_queue_capacity,
                sse_queue_max_bytes: cfg.sse_queue_max_bytes,
                sse_overflow_policy: cfg.sse_overflow_policy,
                store: cfg.store_limits(),
                idempotency_window: Duration::from_secs(cfg.idempotency_window_s),
            },
        );
        if let Some(log) = replay {
            manager.set_replay_log(log);
        }
        if let Some(p) = &cfg.sqlite_path {
            manager.set_send_log(Arc::new(crate::idempotency::SqliteSendLog::open(
                p,
                Duration::from_secs(cfg.idempotency_window_s),
            )?));
        }
        let push = if card.push_notifications() {
            let push_store: Arc<dyn crate::push::store::PushConfigStore> = match &cfg.sqlite_path {
                Some(p) => Arc::new(
                    crate::push::store::SqlitePushStore::open(p)
                        .map_err(|e| ServeError::Config(e.to_string()))?,
                ),
                None => Arc::new(crate::push::store::MemoryPushStore::default()),
            };
            let d = crate::push::Dispatcher::new(
                push_store,
                crate::net_guard::NetGuard::new(cfg.allow_local_webhook_urls),
                crate::push::PushSettings {
                    retry_attempts: cfg.push_retry_attempts,
                    retry_backoff: Duration::from_millis(cfg.push_retry_backoff_ms),
                    attempt_timeout: Duration::from_millis(cfg.push_timeout_ms.max(1)),
                },
            )
            .map_err(|e| ServeError::Config(e.message.clone()))?;
            manager.set_event_sink(Arc::new(d.clone()));
            Some(d)
        } else {
            None
        };
        manager.recover().await;
        let mut hidden_headers = card.api_key_header_names();
        hidden_headers.push(cfg.api_key_header.to_ascii_lowercase());
        let app = Arc::new(App {
            card,
            cfg: cfg.clone(),
            base,
            manager: manager.clone(),
            authenticator,
            metrics: self.metrics,
            push,
            card_modified: crate::card::http_date(std::time::SystemTime::now()),
            hidden_headers,
            extended_card: match self.extended_card {
                Some(c) => Some(
                    AgentCard::from_json(c.json().clone())?.with_served_interfaces(
                        &url,
                        cfg.binding,
                        grpc_at.as_deref(),
                    ),
                ),
                None => None,
            },
        });
        let mut router = axum::Router::new().fallback(entry).with_state(app.clone());
        if !cfg.cors_allowed_origins.is_empty() {
            router = router.layer(crate::cors::layer(&cfg.cors_allowed_origins));
        }
        let base2 = app.base.clone();
        let refuse: crate::listen::Refuser =
            Arc::new(move |parts, why| edge_refusal(&base2, parts, why));
        let listening = crate::listen::serve(listener, router, cfg.listen(), refuse)?;
        tracing::info!(%url, "a2a agent listening");
        Ok(ServerHandle {
            addr,
            url,
            listening,
            manager,
            grace: Duration::from_millis(cfg.shutdown_grace_ms),
        })
    }
}

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    url: String,
    listening: crate::listen::Listening,
    manager: Arc<TaskManager>,
    grace: Duration,
}

impl ServerHandle {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
    /// The base URL (`http://127.0.0.1:PORT` plus the base path).
    pub fn url(&self) -> &str {
        &self.url
    }
    /// The task manager (tests and embedding code).
    pub fn manager(&self) -> &Arc<TaskManager> {
        &self.manager
    }
    /// Open connections right now.
    pub fn open_connections(&self) -> usize {
        self.listening.open_connections()
    }
    /// Stop accepting, let running tasks finish within the grace period, then fail the rest:
    /// their streams end with the FAILED status event and blocking sends are answered with the
    /// FAILED task. Connections still open a few seconds later are dropped.
    pub async fn shutdown(self) {
        self.listening.stop_accepting();
        self.manager.shutdown(self.grace).await;
        if !self.listening.drain(Duration::from_secs(5)).await {
            self.listening.kill().await;
        }
    }
}

pub(crate) struct App {
    pub card: AgentCard,
    pub cfg: AgentConfig,
    pub base: String,
    pub manager: Arc<TaskManager>,
    pub authenticator: Arc<dyn Authenticator>,
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    pub push: Option<Arc<crate::push::Dispatcher>>,
    pub extended_card: Option<AgentCard>,
    /// `Last-Modified` of the card (the server's start: the card does not change while it runs).
    pub card_modified: String,
    /// Credential headers hidden from handlers besides [`crate::handler::HIDDEN_HEADERS`].
    pub hidden_headers: Vec<String>,
}

/// Which binding a request reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    JsonRpc,
    Rest,
}

/// What the pipeline established before dispatch.
pub(crate) struct Call {
    pub caller: CallerProfile,
    pub extensions: Vec<String>,
    pub headers: HeaderMap,
    pub query: Option<String>,
}

pub(crate) fn error_response(e: &A2aError, version: Version, binding: Binding) -> Response {
    jsonrpc_or_rest_error(e, version, binding, &RawId::null())
}

/// An error answer; on JSON-RPC it carries `id` (the caller's, when the body could be read).
pub(crate) fn jsonrpc_or_rest_error(
    e: &A2aError,
    version: Version,
    binding: Binding,
    id: &RawId,
) -> Response {
    match binding {
        Binding::JsonRpc => {
            // Transport-level refusals keep their status; authentication failures are 401 (the
            // Camel guide); other A2A errors are 200.
            let status = match e.status {
                Some(413) => StatusCode::PAYLOAD_TOO_LARGE,
                Some(405) if e.kind == ErrorKind::MethodNotFound => StatusCode::METHOD_NOT_ALLOWED,
                _ if e.kind == ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
                _ => StatusCode::OK,
            };
            let mut r = Response::new(Body::from(id.error_text(&e.jsonrpc_error(version))));
            *r.status_mut() = status;
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            if e.kind == ErrorKind::Unauthenticated {
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            r
        }
        Binding::Rest => {
            let status =
                StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let ct = if version == Version::V1 {
                A2A_JSON
            } else {
                "application/json"
            };
            let mut r = json_response(status, ct, &e.rest_body(version));
            if e.kind == ErrorKind::Unauthenticated {
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            r
        }
    }
}

/// The id of a JSON-RPC body, `null` when it cannot be read.
pub(crate) fn peek_id(body: &[u8]) -> RawId {
    a2a_types::envelope::parse_envelope(body)
        .map(|e| e.id)
        .unwrap_or_else(|_| RawId::null())
}

pub(crate) fn json_response(status: StatusCode, ct: &'static str, v: &Value) -> Response {
    json_bytes_response(status, ct, serde_json::to_vec(v).unwrap_or_default())
}

/// A response of JSON bytes already serialised.
pub(crate) fn json_bytes_response(status: StatusCode, ct: &'static str, body: Vec<u8>) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    r
}

fn header_list(h: &HeaderMap, name: &str) -> Vec<String> {
    h.get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

impl App {
    fn negotiate_extensions(&self, headers: &HeaderMap) -> Result<Vec<String>, A2aError> {
        let mut requested = header_list(headers, "a2a-extensions");
        for e in header_list(headers, "x-a2a-extensions") {
            if !requested.contains(&e) {
                requested.push(e);
            }
        }
        let decls = self.card.extension_decls();
        let uri = |d: &Value| d.get("uri").and_then(Value::as_str).map(str::to_string);
        for r in &requested {
            if !decls
                .iter()
                .any(|d| d.get("uri").and_then(Value::as_str) == Some(r.as_str()))
            {
                return Err(A2aError::new(
                    ErrorKind::ExtensionSupportRequired,
                    format!("extension {r:?} is not supported by this agent"),
                )
                .with_meta("extension", r.clone()));
            }
        }
        for d in decls {
            if d.get("required").and_then(Value::as_bool) == Some(true)
                && let Some(u) = uri(d)
                && !requested.contains(&u)
            {
                return Err(A2aError::new(
                    ErrorKind::ExtensionSupportRequired,
                    format!(
                        "extension {u:?} is required by this agent; request it in A2A-Extensions"
                    ),
                )
                .with_meta("extension", u));
            }
        }
        Ok(requested)
    }

    fn card_response(&self, headers: &HeaderMap, query: Option<&str>) -> Response {
        let version = match requested_version(headers, query) {
            Ok(v) => v,
            Err(e) => return error_response(&e, Version::V1, Binding::Rest),
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
        if let Ok(v) =
            HeaderValue::from_str(&format!("public, max-age={}", self.cfg.card_max_age_s))
        {
            h.insert(header::CACHE_CONTROL, v);
        }
        h.insert(header::VARY, HeaderValue::from_static("A2A-Version"));
        if let Ok(v) = HeaderValue::from_str(&self.card_modified) {
            h.insert(header::LAST_MODIFIED, v);
        }
        r
    }
}

/// The 408 / 503 the edge answers itself, in the caller's binding and version.
fn edge_refusal(
    base: &str,
    parts: &http::request::Parts,
    why: crate::listen::EdgeRefusal,
) -> Response {
    let version = requested_version(&parts.headers, parts.uri.query())
        .ok()
        .flatten()
        .unwrap_or(Version::V03);
    let rel = parts.uri.path().strip_prefix(base).unwrap_or("");
    let binding = if rel.is_empty() || rel == "/" {
        Binding::JsonRpc
    } else {
        Binding::Rest
    };
    let kind = match why {
        crate::listen::EdgeRefusal::BodyTimeout(_) => ErrorKind::InvalidRequest,
        crate::listen::EdgeRefusal::Overloaded => ErrorKind::Unavailable,
    };
    let e = A2aError::new(kind, why.message()).with_status(why.status().as_u16());
    let mut r = error_response(&e, version, binding);
    *r.status_mut() = why.status();
    r
}

/// Read the body under the payload limit; 413 as soon as the limit is passed.
pub(crate) async fn read_body(body: Body, limit: usize) -> Result<Bytes, A2aError> {
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

/// A body's content type: JSON (either media type) or none at all ([`crate::edge::media`]).
fn content_type_ok(headers: &HeaderMap) -> bool {
    !matches!(
        crate::edge::media::check_content_type(headers),
        Err(Some(_))
    )
}

async fn entry(State(app): State<Arc<App>>, req: Request) -> Response {
    use tracing::Instrument;
    let trace_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    // A debug span: at the default `info` level it is disabled and costs nothing per request
    // (a live span formats its fields on every request: ~10 % of an echo request's CPU).
    let span = tracing::debug_span!(
        "a2a_request",
        trace_id = %trace_id,
        method = %req.method(),
        path = %req.uri().path()
    );
    let started = std::time::Instant::now();
    let mut resp = pipeline(app, req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    span.in_scope(|| {
        tracing::debug!(
            status,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "done"
        )
    });
    metrics::counter!("a2a_agent_requests_total", "status" => status.to_string()).increment(1);
    metrics::histogram!("a2a_agent_request_duration_seconds")
        .record(started.elapsed().as_secs_f64());
    if let Ok(v) = HeaderValue::from_str(&trace_id) {
        resp.headers_mut().insert("x-trace-id", v);
    }
    resp
}

async fn pipeline(app: Arc<App>, req: Request) -> Response {
    if crate::grpc::is_grpc(req.headers()) {
        return Box::pin(crate::grpc::handle(app, req)).await;
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
        return error_response(&e, v, Binding::Rest);
    }
    if method == Method::GET
        && (path == "/.well-known/agent-card.json"
            || path == format!("{}/.well-known/agent-card.json", app.base))
    {
        return app.card_response(&headers, query.as_deref());
    }
    if method == Method::GET
        && path == format!("{}/metrics", app.base)
        && let Some(h) = &app.metrics
    {
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
            return error_response(&e, Version::V1, Binding::Rest);
        }
    };
    let binding = if rel.is_empty() || rel == "/" {
        Binding::JsonRpc
    } else {
        Binding::Rest
    };
    // The `binding` setting: a binding not served is 404 in its own form.
    let served = app.cfg.binding;
    if (binding == Binding::JsonRpc && !served.jsonrpc())
        || (binding == Binding::Rest && !served.rest())
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
        .in_table(app.cfg.rest_status_table);
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
        Ok(x) if binding == Binding::Rest => Some(crate::rest::parse_route(&rel, *x)),
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
    let limit = app.cfg.max_payload_size;
    let checked = match explicit {
        Ok(x) => pre_dispatch(&app, &headers, query.as_deref(), &method)
            .await
            .map(|(caller, extensions)| (x, caller, extensions)),
        Err((e, _)) => Err(e),
    };
    let (explicit, caller, extensions) = match checked {
        Ok(c) => c,
        Err(e) => {
            let e = if binding == Binding::Rest {
                e.in_table(app.cfg.rest_status_table)
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
                let e = if binding == Binding::Rest {
                    e.in_table(app.cfg.rest_status_table)
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
        headers,
        query,
    };
    // The bindings' futures are boxed: this one stays small, so moving it through the HTTP
    // stack (axum boxes it, tracing wraps it) copies little.
    let mut resp = match binding {
        Binding::JsonRpc => Box::pin(crate::jsonrpc::handle(&app, explicit, &call, bytes)).await,
        Binding::Rest => match rest_route.flatten() {
            Some(route) => Box::pin(crate::rest::handle(&app, route, &method, &call, bytes)).await,
            None => {
                let e = A2aError::new(ErrorKind::MethodNotFound, format!("no route for {path}"))
                    .in_table(app.cfg.rest_status_table);
                error_response(&e, early_version, binding)
            }
        },
    };
    if !call.extensions.is_empty()
        && let Ok(v) = HeaderValue::from_str(&call.extensions.join(", "))
    {
        resp.headers_mut().insert("a2a-extensions", v.clone());
        resp.headers_mut().insert("x-a2a-extensions", v);
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
    let limit = app.cfg.max_payload_size;
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

/// Authentication, then extension negotiation: the checks every binding makes (gRPC reads the
/// same names from its metadata).
pub(crate) async fn admit(
    app: &App,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<(CallerProfile, Vec<String>), A2aError> {
    let caller = app
        .authenticator
        .authenticate(&AuthRequest { headers, query })
        .await?;
    let extensions = app.negotiate_extensions(headers)?;
    Ok((caller, extensions))
}

pub(crate) fn header_bool(h: &HeaderMap, name: &str) -> Option<bool> {
    h.get(name).and_then(|v| v.to_str().ok()).and_then(|v| {
        match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Some(true),
            "false" | "0" | "no" => Some(false),
            _ => None,
        }
    })
}

impl IntoResponse for A2aError {
    fn into_response(self) -> Response {
        error_response(&self, Version::V1, Binding::Rest)
    }
}
