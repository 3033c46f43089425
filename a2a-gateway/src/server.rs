//! The caller-facing surface and the call path to peers.
//!
//! Routes (see `docs/gateway.md`):
//! - `GET  /a2a/{agentId}/.well-known/agent-card.json`: the governed card;
//! - `POST /a2a/{agentId}`: JSON-RPC, the operation named by `method` (both name sets);
//! - `POST /a2a/{agentId}/{op}`: JSON-RPC, the operation named by the path (`message:send` ...);
//! - `/a2a/{agentId}/v1/...`: the A2A 1.0 HTTP+JSON binding;
//! - `GET /metrics`, `GET /healthz`, and `/admin/...` (see [`crate::admin`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use eventsource_stream::Eventsource;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tracing::Instrument;
use url::Url;

use a2a_types::envelope::{RawId, parse_envelope};

use crate::config::Config;
use crate::errors::{Binding, Refusal, Version, spec_reason};
use crate::keys;
use crate::metrics::Metrics;
use crate::ops::Operation;
use crate::ownership::{self, Owner, OwnershipStore, SqliteOwnership};
use crate::peer::{self, CardCache, Chosen};
use crate::seams::{HopContext, Seams};
use crate::store::{Agent, AuditRecord, KeyRejection, Principal, Store, Workspace};
use crate::wire::{RpcRequest, json_text_response};
use crate::xlate::{self, AnswerError};

/// Largest request body the gateway reads.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Shared state of a running gateway.
pub struct GatewayState {
    /// Configuration.
    pub config: Config,
    /// Registry and audit store.
    pub store: Store,
    /// HTTP client for peers (checked resolver, no redirects, no proxy).
    pub http: reqwest::Client,
    /// Peer cards.
    pub cards: CardCache,
    /// Metrics registry.
    pub metrics: Metrics,
    /// Part-2 seams.
    pub seams: Seams,
    /// Cancelled when the shutdown grace period ends: open streams end with an
    /// `a2a_shutting_down` event and waiting peer calls are answered with it.
    pub shutdown: tokio_util::sync::CancellationToken,
    page_key: aws_lc_rs::hmac::Key,
}

/// A gateway ready to serve.
#[derive(Clone)]
pub struct Gateway {
    state: Arc<GatewayState>,
}

/// A running gateway; dropping it does not stop the server, [`ServerHandle::shutdown`] does.
pub struct ServerHandle {
    addr: SocketAddr,
    listening: a2a_agent::listen::Listening,
    state: Arc<GatewayState>,
}

impl ServerHandle {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://addr`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Open connections right now.
    pub fn open_connections(&self) -> usize {
        self.listening.open_connections()
    }

    /// Stops accepting, lets calls finish for `shutdown_grace_secs`, then ends every open
    /// stream with an `a2a_shutting_down` error event and answers every waiting call with it;
    /// connections still open a few seconds later are dropped.
    pub async fn shutdown(self) {
        self.listening.stop_accepting();
        let grace = Duration::from_secs(self.state.config.shutdown_grace_secs);
        if !self.listening.drain(grace).await {
            self.state.shutdown.cancel();
            if !self.listening.drain(Duration::from_secs(5)).await {
                self.listening.kill().await;
            }
        }
    }
}

/// `n` random bytes as hex.
pub(crate) fn random_hex(n: usize) -> String {
    use aws_lc_rs::rand::SecureRandom;
    let mut b = vec![0u8; n];
    let _ = aws_lc_rs::rand::SystemRandom::new().fill(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Gateway {
    /// Builds a gateway over a store.
    pub fn new(config: Config, store: Store) -> Result<Gateway, String> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(peer::CheckedResolver {
                allow_loopback: config.dev_mode,
            }))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let key_bytes = random_hex(32);
        let page_key =
            aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key_bytes.as_bytes());
        Ok(Gateway {
            state: Arc::new(GatewayState {
                config,
                store,
                http,
                cards: CardCache::default(),
                metrics: Metrics::default(),
                seams: Seams::default(),
                shutdown: tokio_util::sync::CancellationToken::new(),
                page_key,
            }),
        })
    }

    /// Replaces the part-2 seams (before serving).
    pub fn with_seams(self, seams: Seams) -> Gateway {
        match Arc::try_unwrap(self.state) {
            Ok(mut st) => {
                st.seams = seams;
                Gateway {
                    state: Arc::new(st),
                }
            }
            Err(state) => Gateway { state },
        }
    }

    /// The shared state.
    pub fn state(&self) -> &Arc<GatewayState> {
        &self.state
    }

    /// The axum router of the whole gateway.
    pub fn router(&self) -> Router {
        let a2a = Router::new()
            .route(
                "/a2a/{agent}/.well-known/agent-card.json",
                get(card_handler),
            )
            .route("/a2a/{agent}", post(rpc_root))
            .route("/a2a/{agent}/{op}", post(rpc_path))
            .route("/a2a/{agent}/v1/message:send", post(rest_send))
            .route("/a2a/{agent}/v1/message:stream", post(rest_stream))
            .route("/a2a/{agent}/v1/tasks", get(rest_list))
            .route(
                "/a2a/{agent}/v1/tasks/{id}",
                get(rest_task_get).post(rest_task_post),
            )
            .route(
                "/a2a/{agent}/v1/tasks/{id}/pushNotificationConfigs",
                get(rest_push_list).post(rest_push_set),
            )
            .route(
                "/a2a/{agent}/v1/tasks/{id}/pushNotificationConfigs/{cfg}",
                get(rest_push_get).delete(rest_push_delete),
            )
            .route(
                "/a2a/{agent}/push:notify/{callback}",
                post(crate::push::notify).layer(DefaultBodyLimit::max(
                    usize::try_from(self.state.config.limits.max_push_bytes)
                        .unwrap_or(usize::MAX)
                        .saturating_add(1),
                )),
            )
            .route("/metrics", get(metrics_handler))
            .route("/healthz", get(|| async { "ok" }))
            .with_state(self.state.clone());
        a2a.merge(crate::admin::router(self.state.clone()))
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .layer(axum::middleware::from_fn_with_state(
                self.state.clone(),
                crate::wire::guard,
            ))
    }

    /// Serves on `listener` until [`ServerHandle::shutdown`].
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<ServerHandle> {
        let addr = listener.local_addr()?;
        let app = self.router();
        let serve_v1 = self.state.config.serve_v1;
        let refuse: a2a_agent::listen::Refuser =
            Arc::new(move |parts, why| crate::edge::edge_refusal(serve_v1, parts, why));
        let listening =
            a2a_agent::listen::serve(listener, app, self.state.config.listen(), refuse)?;
        Ok(ServerHandle {
            addr,
            listening,
            state: self.state,
        })
    }
}

/// What a call produced, in the caller's version.
pub enum Answer {
    /// A unary result.
    Unary(Value),
    /// A stream of events; an `Err` is the final (error) event.
    Stream(BoxStream<'static, Result<Value, Refusal>>),
}

struct Call {
    trace_id: String,
    started: Instant,
    audit: AuditRecord,
    version: Version,
    id: RawId,
    a2a_json_only: bool,
    hops: u32,
}

/// Header carrying the number of gateway hops a request has made (loop-detection seam input).
pub const HOPS_HEADER: &str = "x-a2a-gateway-hops";

fn parse_traceparent(v: &str) -> Option<String> {
    let parts: Vec<&str> = v.trim().split('-').collect();
    if parts.len() >= 4
        && parts[0].len() == 2
        && parts[1].len() == 32
        && parts[1].bytes().all(|b| b.is_ascii_hexdigit())
        && parts[1] != "00000000000000000000000000000000"
        && parts[2].len() == 16
    {
        Some(parts[1].to_ascii_lowercase())
    } else {
        None
    }
}

impl Call {
    fn new(headers: &HeaderMap, binding: Binding) -> Call {
        let trace_id = headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_traceparent)
            .unwrap_or_else(|| random_hex(16));
        let a2a_json_only = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .map(|a| {
                let types: Vec<&str> = a
                    .split(',')
                    .map(|t| t.split(';').next().unwrap_or("").trim())
                    .collect();
                types.contains(&"application/a2a+json")
                    && !types
                        .iter()
                        .any(|t| *t == "application/json" || *t == "*/*" || *t == "application/*")
            })
            .unwrap_or(false);
        Call {
            audit: AuditRecord {
                trace_id: trace_id.clone(),
                client_binding: Some(binding.as_str().to_owned()),
                decision: "refused".into(),
                ..AuditRecord::default()
            },
            trace_id,
            started: Instant::now(),
            version: Version::V03,
            id: RawId::null(),
            a2a_json_only,
            hops: headers
                .get(HOPS_HEADER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
        }
    }

    fn traceparent(&self) -> String {
        format!("00-{}-{}-01", self.trace_id, random_hex(8))
    }

    fn json_content_type(&self) -> &'static str {
        if self.a2a_json_only {
            "application/a2a+json"
        } else {
            "application/json"
        }
    }
}

fn header_version(headers: &HeaderMap) -> Option<&str> {
    headers.get("a2a-version").and_then(|v| v.to_str().ok())
}

fn query_version(query: Option<&str>) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k.eq_ignore_ascii_case("a2a-version"))
        .map(|(_, v)| v.into_owned())
}

/// Negotiates the request's version: none or empty = 0.3, patch ignored. A refusal comes with
/// the version whose error form it must use (0.x -> 0.3, anything else -> 1.0).
pub fn negotiate(requested: Option<&str>, serve_v1: bool) -> Result<Version, (Refusal, Version)> {
    let raw = requested.map(str::trim).unwrap_or("");
    if raw.is_empty() {
        return Ok(Version::V03);
    }
    let mut it = raw.split('.');
    let major = it.next().unwrap_or("");
    let minor = it.next().unwrap_or("");
    let supported: &[&str] = if serve_v1 { &["0.3", "1.0"] } else { &["0.3"] };
    match (major, minor) {
        ("0", "3") => Ok(Version::V03),
        ("1", "0") if serve_v1 => Ok(Version::V10),
        _ => {
            let form = if raw.starts_with("0.") {
                Version::V03
            } else {
                Version::V10
            };
            let shown = format!("{major}.{}", if minor.is_empty() { "0" } else { minor });
            let shown = if it.next().is_some() || !minor.is_empty() {
                shown
            } else {
                raw.to_owned()
            };
            Err((Refusal::version_not_supported(&shown, supported), form))
        }
    }
}

fn content_type_ok(headers: &HeaderMap) -> Result<(), Refusal> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let base = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if base == "application/json" || base == "application/a2a+json" {
        Ok(())
    } else {
        Err(Refusal::unsupported_media_type(if ct.is_empty() {
            "(none)"
        } else {
            ct
        }))
    }
}

fn authenticate(st: &GatewayState, headers: &HeaderMap) -> Result<Principal, Refusal> {
    let refused = |reason: &'static str, detail: &str| {
        st.metrics.unauthenticated(reason);
        Err(Refusal::unauthorized(detail))
    };
    let Some(auth) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return refused("missing", "missing: send Authorization: Bearer <key>");
    };
    let token = auth
        .strip_prefix("Bearer ")
        .or_else(|| auth.strip_prefix("bearer "))
        .unwrap_or("")
        .trim();
    match st.store.authenticate(token) {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(KeyRejection::Invalid)) => refused("invalid", "is not valid"),
        Ok(Err(KeyRejection::Expired)) => refused("expired", "has expired"),
        Ok(Err(KeyRejection::Revoked)) => refused("revoked", "was revoked"),
        Err(e) => Err(Refusal::internal(&e.to_string())),
    }
}

/// Records the hop (audit + metrics) once it is decided.
fn record(st: &GatewayState, call: &mut Call, refusal: Option<&Refusal>) {
    let latency = call.started.elapsed();
    call.audit.latency_ms = latency.as_millis() as i64;
    call.audit.client_version = Some(call.version.as_str().to_owned());
    match refusal {
        Some(r) => {
            call.audit.decision = "refused".into();
            call.audit.status = r.status as i64;
            call.audit.error_code = Some(r.code.clone());
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
    st.metrics.record(&op, code, latency.as_secs_f64());
    // Only authenticated callers get audit rows: refusals before a key was accepted are
    // counted (`a2a_unauthenticated_total`, `a2a_requests_total`) and logged sampled, so that
    // nobody without a key can grow the append-only table.
    if call.audit.workspace_id.is_none() {
        st.metrics.log_unaudited(&call.trace_id, &op, code);
        return;
    }
    if let Err(e) = st.store.append_audit_queued(&call.audit) {
        tracing::error!(trace_id = %call.trace_id, "audit write failed: {e}");
    }
    match refusal {
        Some(r) => {
            tracing::info!(trace_id = %call.trace_id, operation = %op, code = %r.code, rpc_code = r.rpc_code, "refused")
        }
        None => tracing::info!(trace_id = %call.trace_id, operation = %op, "allowed"),
    }
}

fn json_response(status: StatusCode, content_type: &'static str, body: &Value) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

fn accept_header(resp: &mut Response) {
    resp.headers_mut().insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, application/a2a+json"),
    );
}

/// A JSON-RPC refusal: 200 (or the refusal's status in `refusal` mode); 401, 400 for versions
/// and 415 keep their status.
fn rpc_refusal(st: &GatewayState, call: &mut Call, r: Refusal) -> Response {
    record(st, call, Some(&r));
    let keep = matches!(
        r.code.as_str(),
        "a2a_unauthorized" | "a2a_version_not_supported" | "a2a_unsupported_media_type"
    );
    let status =
        if keep || st.config.json_rpc_error_status == crate::config::ErrorStatusMode::Refusal {
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_GATEWAY)
        } else {
            StatusCode::OK
        };
    let body = r.jsonrpc_text(call.version, &call.id, &call.trace_id);
    let mut resp = json_text_response(status, call.json_content_type(), body);
    if r.code == "a2a_unsupported_media_type" {
        accept_header(&mut resp);
    }
    if r.code == "a2a_unauthorized" {
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}

/// An HTTP+JSON refusal: `google.rpc.Status` with the refusal's status.
fn rest_refusal(st: &GatewayState, call: &mut Call, r: Refusal) -> Response {
    record(st, call, Some(&r));
    let status = StatusCode::from_u16(r.rest_status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut resp = json_response(
        status,
        call.json_content_type(),
        &r.status_body(&call.trace_id),
    );
    if r.code == "a2a_unsupported_media_type" {
        accept_header(&mut resp);
    }
    if r.code == "a2a_unauthorized" {
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}

fn sse_response<S>(stream: S) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    Sse::new(stream).into_response()
}

async fn rpc_root(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc(st, agent, None, headers, q, body).await
}

async fn rpc_path(
    State(st): State<Arc<GatewayState>>,
    Path((agent, op)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc(st, agent, Some(op), headers, q, body).await
}

async fn rpc(
    st: Arc<GatewayState>,
    agent: String,
    path_op: Option<String>,
    headers: HeaderMap,
    query: Option<String>,
    body: Bytes,
) -> Response {
    let mut call = Call::new(&headers, Binding::JsonRpc);
    call.audit.target = Some(agent.clone());
    let requested = header_version(&headers)
        .map(str::to_owned)
        .or_else(|| query_version(query.as_deref()));
    match negotiate(requested.as_deref(), st.config.serve_v1) {
        Ok(v) => call.version = v,
        Err((r, form)) => {
            call.version = form;
            return rpc_refusal(&st, &mut call, r);
        }
    }
    if let Err(r) = content_type_ok(&headers) {
        return rpc_refusal(&st, &mut call, r);
    }
    // The id is kept as the caller's exact text; bad ids and batches are refused below.
    let parsed = parse_envelope(&body);
    if let Ok(env) = &parsed {
        call.id = env.id.clone();
        call.audit.client_method = env.method().map(str::to_owned);
    }
    if let Some(p) = &path_op
        && call.audit.client_method.is_none()
    {
        call.audit.client_method = Some(p.clone());
    }
    let principal = match authenticate(&st, &headers) {
        Ok(p) => p,
        Err(r) => return rpc_refusal(&st, &mut call, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    let RpcRequest { op, params, .. } = match crate::wire::parse_rpc(
        parsed,
        path_op.as_deref(),
        call.version,
        st.config.limits.max_message_chars,
    ) {
        Ok(r) => r,
        Err(r) => return rpc_refusal(&st, &mut call, r),
    };
    call.audit.operation = Some(op.name_03().to_owned());
    let span = tracing::info_span!("a2a.hop", trace_id = %call.trace_id, operation = op.name_03(), target = %agent);
    match execute(&st, &mut call, &agent, &principal, op, params)
        .instrument(span)
        .await
    {
        Err(r) => rpc_refusal(&st, &mut call, r),
        Ok(Answer::Unary(result)) => {
            record(&st, &mut call, None);
            let body = call.id.result_text(&result);
            json_text_response(StatusCode::OK, call.json_content_type(), body)
        }
        Ok(Answer::Stream(events)) => {
            record(&st, &mut call, None);
            let id = call.id.clone();
            let version = call.version;
            let trace = call.trace_id.clone();
            let mapped = events.map(move |item| {
                let data = match item {
                    Ok(ev) => id.result_text(&ev),
                    Err(r) => r.jsonrpc_text(version, &id, &trace),
                };
                Ok::<_, Infallible>(Event::default().data(data))
            });
            sse_response(mapped)
        }
    }
}

fn effective_limits(st: &GatewayState, ws: Option<&Workspace>) -> (u64, u64, u64) {
    let l = &st.config.limits;
    (
        ws.and_then(|w| w.max_response_bytes)
            .unwrap_or(l.max_response_bytes),
        ws.and_then(|w| w.max_stream_bytes)
            .unwrap_or(l.max_stream_bytes),
        ws.and_then(|w| w.max_card_bytes)
            .unwrap_or(l.max_card_bytes),
    )
}

fn lookup_agent(st: &GatewayState, principal: &Principal, agent: &str) -> Result<Agent, Refusal> {
    match st.store.agent(&principal.workspace_id, agent) {
        Ok(Some(a)) => Ok(a),
        Ok(None) => Err(Refusal::agent_not_found(agent)),
        Err(e) => Err(Refusal::internal(&e.to_string())),
    }
}

/// The common pipeline after the edge has named the operation.
async fn execute(
    st: &GatewayState,
    call: &mut Call,
    agent_id: &str,
    principal: &Principal,
    op: Operation,
    params: Value,
) -> Result<Answer, Refusal> {
    if !keys::allows(&principal.scopes, op.scope()) {
        return Err(Refusal::scope_denied(op.scope().as_str()));
    }
    let agent = lookup_agent(st, principal, agent_id)?;
    if op.is_streaming() && !st.config.streaming_enabled {
        return Err(Refusal::streaming_disabled());
    }
    let ws = st.store.workspace(&principal.workspace_id).ok().flatten();
    let hop = HopContext {
        trace_id: &call.trace_id,
        workspace_id: &principal.workspace_id,
        key_id: &principal.key_id,
        target: agent_id,
        operation: op,
        hop_count: call.hops,
    };
    st.seams.loops.check(&hop)?;
    st.seams.policy.check(&hop, &params)?;
    st.seams.approval.approve(&hop)?;
    let mut params = params;
    st.seams.pii.scan(&hop, &mut params)?;
    // Validation in the caller's version happens before anything is fetched from the peer.
    xlate::request(op, call.version, call.version, &params)?;
    // Ownership: a task of another owner answers exactly like one that never existed.
    let owner = Owner {
        workspace_id: principal.workspace_id.clone(),
        agent_id: agent_id.to_owned(),
    };
    let owners: Arc<dyn OwnershipStore> = Arc::new(SqliteOwnership::new(st.store.clone()));
    call.audit.task_id = ownership::check(
        owners.as_ref(),
        &agent.endpoint,
        &owner,
        op,
        call.version,
        &params,
    )?;
    let push_mode = if op == Operation::SetPushConfig {
        check_webhook(st, &params, call.version).await?;
        Some(crate::push::mode(st, &principal.workspace_id)?)
    } else if matches!(
        op,
        Operation::GetPushConfig | Operation::ListPushConfigs | Operation::DeletePushConfig
    ) {
        Some(crate::push::mode(st, &principal.workspace_id).unwrap_or(crate::push::Mode::Direct))
    } else if let Some(url) = crate::push::inline_url(&params, call.version) {
        // An inline push config on message:send / message:stream.
        check_webhook_url(st, &url).await?;
        Some(crate::push::mode(st, &principal.workspace_id)?)
    } else {
        None
    };
    let (max_resp, max_stream, max_card) = effective_limits(st, ws.as_ref());
    let registered = Url::parse(&agent.endpoint)
        .map_err(|e| Refusal::peer_url_refused(&format!("registered endpoint: {e}")))?;
    peer::check_url(&registered, &registered, st.config.dev_mode)?;
    peer::check_resolved(&registered, st.config.dev_mode).await?;
    let card = st
        .cards
        .get(
            &st.http,
            &registered,
            agent.credential.as_deref(),
            max_card,
            false,
        )
        .await?;
    let chosen = peer::select_interface(&card, st.config.serve_v1)?;
    call.audit.peer_version = Some(chosen.version.as_str().to_owned());
    call.audit.peer_binding = Some(chosen.binding.as_str().to_owned());
    peer::check_url(&chosen.url, &registered, st.config.dev_mode)?;
    peer::check_resolved(&chosen.url, st.config.dev_mode).await?;

    // Push config lists paged by the gateway for 0.3 peers.
    let mut page: Option<(usize, usize, String)> = None;
    if op == Operation::ListPushConfigs
        && chosen.version == Version::V03
        && call.version == Version::V10
    {
        let task = params
            .get("taskId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let size = params
            .get("pageSize")
            .and_then(Value::as_u64)
            .map(|n| n as usize);
        let token = params
            .get("pageToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty());
        if size.is_some() || token.is_some() {
            let offset = match token {
                Some(t) => verify_page_token(st, &task, t).ok_or_else(|| {
                    Refusal::invalid_params("params.pageToken: not a token this gateway issued")
                })?,
                None => 0,
            };
            page = Some((offset, size.unwrap_or(usize::MAX).max(1), task));
        }
    }

    let sealed = match (&push_mode, op) {
        (Some(crate::push::Mode::Sealed(base)), Operation::SetPushConfig)
        | (
            Some(crate::push::Mode::Sealed(base)),
            Operation::SendMessage | Operation::SendStreamingMessage,
        ) => Some(crate::push::seal(
            st,
            base,
            &principal.workspace_id,
            agent_id,
            call.version,
            chosen.version,
            op != Operation::SetPushConfig,
            &mut params,
        )?),
        _ => None,
    };
    let mut peer_params = xlate::request(op, call.version, chosen.version, &params)?;
    if chosen.version == Version::V10
        && let Some(obj) = peer_params.as_object_mut()
    {
        match &chosen.tenant {
            Some(t) => {
                obj.insert("tenant".into(), json!(t));
            }
            None => {
                obj.remove("tenant");
            }
        }
        if page.is_some() {
            obj.remove("pageSize");
            obj.remove("pageToken");
        }
    }
    let peer_method = op.name(chosen.version);
    call.audit.peer_method = Some(match chosen.binding {
        Binding::JsonRpc => peer_method.to_owned(),
        Binding::HttpJson => format!("HTTP+JSON {}", op.path()),
    });
    let ctx = PeerCall {
        st,
        agent: &agent,
        chosen: &chosen,
        caller: call.version,
        traceparent: call.traceparent(),
        hops: call.hops.saturating_add(1),
        // The caller's id when a JSON value carries it exactly, else one of the gateway's own.
        id: call
            .id
            .to_exact_value()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| json!(random_hex(8))),
        max_resp,
        max_stream,
    };
    // The intent record: written before the peer is called, completed by `record`.
    call.audit.decision = "allowed".into();
    call.audit.client_version = Some(call.version.as_str().to_owned());
    call.audit.intent_seq = Some(
        st.store
            .append_intent_committed(&call.audit)
            .await
            .map_err(|e| Refusal::internal(&format!("audit intent not written: {e}")))?,
    );
    let mut answer = if op == Operation::ListTasks {
        list_owned(
            st,
            &ctx,
            owners.as_ref(),
            &agent.endpoint,
            &owner,
            &params,
            peer_params,
        )
        .await?
    } else {
        match chosen.binding {
            Binding::JsonRpc => ctx.jsonrpc(op, peer_params).await?,
            Binding::HttpJson => ctx.rest(op, peer_params).await?,
        }
    };
    if matches!(op, Operation::SendMessage | Operation::SendStreamingMessage) {
        let (a, task) = ownership::bind_answer(owners, &agent.endpoint, &owner, answer)?;
        answer = a;
        if task.is_some() {
            call.audit.task_id = task;
        }
    }
    // Sealed configs are unsealed whatever the workspace's mode is now (a workspace may have
    // been switched to direct delivery after sealing).
    if let (Some(base), Answer::Unary(res)) = (&st.config.push_callback_base_url, &mut answer)
        && push_mode.is_some()
    {
        if let Some(cb) = &sealed {
            crate::push::remember_id(st, cb, res, call.version, op != Operation::SetPushConfig);
        }
        if op == Operation::DeletePushConfig {
            crate::push::forget(st, &principal.workspace_id, agent_id, call.version, &params);
        }
        crate::push::unseal(
            st,
            base.trim_end_matches('/'),
            &principal.workspace_id,
            agent_id,
            call.version,
            res,
        );
    }
    if let (Some((offset, size, task)), Answer::Unary(res)) = (&page, &answer) {
        let all = res
            .get("configs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let end = offset.saturating_add(*size).min(all.len());
        let slice: Vec<Value> = all
            .get((*offset).min(all.len())..end)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        let next = if end < all.len() {
            page_token(st, task, end)
        } else {
            String::new()
        };
        return Ok(Answer::Unary(
            json!({"configs": slice, "nextPageToken": next}),
        ));
    }
    Ok(answer)
}

/// Largest ListTasks page the gateway serves (and asks its peers for).
const MAX_LIST_PAGE: usize = 100;
/// Peer pages read at most for one ListTasks call.
const MAX_PEER_PAGES: usize = 100;

/// ListTasks for the caller's own tasks only: reads the peer's list (its filters and order) in
/// pages of [`MAX_LIST_PAGE`], keeps the owner's tasks and pages that filtered list itself
/// (page tokens are HMAC'd offsets into it, bound to owner and filter; `totalSize` counts
/// only the owner's tasks).
async fn list_owned(
    st: &GatewayState,
    ctx: &PeerCall<'_>,
    owners: &dyn OwnershipStore,
    endpoint: &str,
    owner: &Owner,
    params: &Value,
    mut peer_params: Value,
) -> Result<Answer, Refusal> {
    let size = params
        .get("pageSize")
        .and_then(Value::as_u64)
        .map(|n| (n as usize).clamp(1, MAX_LIST_PAGE))
        .unwrap_or(50);
    let mut filter = params.clone();
    if let Some(o) = filter.as_object_mut() {
        o.remove("pageSize");
        o.remove("pageToken");
    }
    let scope = format!(
        "tasks\n{}\n{}\n{filter}",
        owner.workspace_id, owner.agent_id
    );
    let offset = match params
        .get("pageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        Some(t) => verify_page_token(st, &scope, t).ok_or_else(|| {
            Refusal::invalid_params("params.pageToken: not a token this gateway issued")
        })?,
        None => 0,
    };
    let owned: std::collections::HashSet<String> = owners
        .list(endpoint, owner, 0, i64::MAX)
        .map_err(|e| Refusal::internal(&e.to_string()))?
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    if let Some(o) = peer_params.as_object_mut() {
        o.insert("pageSize".into(), json!(MAX_LIST_PAGE));
        o.remove("pageToken");
    }
    let mut mine = Vec::new();
    let mut first: Option<Value> = None;
    for _ in 0..MAX_PEER_PAGES {
        let page = match ctx.chosen.binding {
            Binding::JsonRpc => {
                ctx.jsonrpc(Operation::ListTasks, peer_params.clone())
                    .await?
            }
            Binding::HttpJson => ctx.rest(Operation::ListTasks, peer_params.clone()).await?,
        };
        let Answer::Unary(page) = page else {
            return Err(Refusal::upstream_invalid_response("expected a task list"));
        };
        let tasks = page
            .get("tasks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        mine.extend(ownership::owned_only(tasks, &owned));
        let next = page
            .get("nextPageToken")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        first.get_or_insert(page);
        if next.is_empty() {
            break;
        }
        if let Some(o) = peer_params.as_object_mut() {
            o.insert("pageToken".into(), json!(next));
        }
    }
    let total = mine.len();
    let end = offset.saturating_add(size).min(total);
    let slice: Vec<Value> = mine
        .get(offset.min(total)..end)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let next = if end < total {
        page_token(st, &scope, end)
    } else {
        String::new()
    };
    let mut out = first.unwrap_or_else(|| json!({}));
    if let Some(o) = out.as_object_mut() {
        o.insert("tasks".into(), Value::Array(slice));
        o.insert("nextPageToken".into(), json!(next));
        o.insert("pageSize".into(), json!(size));
        o.insert("totalSize".into(), json!(total));
    }
    Ok(Answer::Unary(out))
}

fn page_token(st: &GatewayState, task: &str, offset: usize) -> String {
    let tag = aws_lc_rs::hmac::sign(&st.page_key, format!("{task}\n{offset}").as_bytes());
    let hex: String = tag.as_ref()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("gw1.{offset}.{hex}")
}

fn verify_page_token(st: &GatewayState, task: &str, token: &str) -> Option<usize> {
    let mut it = token.splitn(3, '.');
    if it.next()? != "gw1" {
        return None;
    }
    let offset: usize = it.next()?.parse().ok()?;
    let expected = page_token(st, task, offset);
    keys::digest_eq(expected.as_bytes(), token.as_bytes()).then_some(offset)
}

async fn check_webhook(st: &GatewayState, params: &Value, version: Version) -> Result<(), Refusal> {
    let url = match version {
        Version::V03 => params
            .get("pushNotificationConfig")
            .and_then(|c| c.get("url")),
        Version::V10 => params.get("url"),
    }
    .and_then(Value::as_str)
    .unwrap_or("");
    check_webhook_url(st, url).await
}

/// The webhook URL checks: the one address policy of [`a2a_agent::net_guard`] (https, or http
/// and loopback in dev mode; no userinfo; no metadata host; public literal addresses), then every
/// address the host resolves to.
pub(crate) async fn check_webhook_url(st: &GatewayState, url: &str) -> Result<(), Refusal> {
    let bad = |why: String| Refusal::invalid_params(&format!("webhook url: {why}"));
    let u = peer::check_webhook(url, st.config.dev_mode).map_err(bad)?;
    peer::check_resolved(&u, st.config.dev_mode)
        .await
        .map_err(|r| bad(r.message))
}

struct PeerCall<'a> {
    st: &'a GatewayState,
    agent: &'a Agent,
    chosen: &'a Chosen,
    caller: Version,
    traceparent: String,
    hops: u32,
    id: Value,
    max_resp: u64,
    max_stream: u64,
}

fn map_answer_error(e: AnswerError) -> Refusal {
    match e {
        AnswerError::Invalid(m) => Refusal::upstream_invalid_response(&m),
        AnswerError::Untranslatable(m) => Refusal::upstream_untranslatable(&m),
    }
}

fn reason_code(reason: &str) -> Option<i64> {
    [
        -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32700, -32600,
        -32601, -32602, -32603,
    ]
    .into_iter()
    .find(|c| spec_reason(*c) == Some(reason))
}

impl PeerCall<'_> {
    fn request(
        &self,
        method: reqwest::Method,
        url: Url,
        content_type: &'static str,
    ) -> reqwest::RequestBuilder {
        let mut req = self
            .st
            .http
            .request(method, url)
            .timeout(Duration::from_secs(self.st.config.peer_timeout_secs.max(1)))
            .header("A2A-Version", self.chosen.version.as_str())
            .header("traceparent", &self.traceparent)
            .header(HOPS_HEADER, self.hops.to_string())
            .header(reqwest::header::CONTENT_TYPE, content_type);
        if let Some(c) = &self.agent.credential {
            req = req.bearer_auth(c);
        }
        req
    }

    fn peer_error_rpc(&self, err: &Value) -> Refusal {
        let Some(code) = err.get("code").and_then(Value::as_i64) else {
            return Refusal::upstream_invalid_response("error.code is not a number");
        };
        if code == -32009 {
            return Refusal::peer_version_not_supported(
                &self.agent.agent_id,
                self.chosen.version.as_str(),
            );
        }
        let reason = err
            .get("data")
            .and_then(Value::as_array)
            .and_then(|d| {
                d.iter().find(|i| {
                    i.get("domain").and_then(Value::as_str) == Some(crate::errors::SPEC_DOMAIN)
                })
            })
            .and_then(|i| i.get("reason"))
            .and_then(Value::as_str);
        Refusal::upstream_error(code, reason)
    }

    fn peer_error_status(&self, status: u16, body: &Value) -> Refusal {
        let reason = body
            .get("error")
            .and_then(|e| e.get("details"))
            .and_then(Value::as_array)
            .and_then(|d| {
                d.iter()
                    .find_map(|i| i.get("reason").and_then(Value::as_str))
            });
        if reason == Some("VERSION_NOT_SUPPORTED") {
            return Refusal::peer_version_not_supported(
                &self.agent.agent_id,
                self.chosen.version.as_str(),
            );
        }
        match reason.and_then(reason_code) {
            Some(code) => Refusal::upstream_error(code, reason),
            None => Refusal::upstream_error(
                match status {
                    404 => -32001,
                    400 => -32602,
                    _ => -32603,
                },
                None,
            ),
        }
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<reqwest::Response, Refusal> {
        let r = tokio::select! {
            _ = self.st.shutdown.cancelled() => return Err(crate::edge::shutting_down()),
            r = req.send() => r,
        };
        r.map_err(|e| {
            if e.is_timeout() {
                Refusal::peer_timeout(self.st.config.peer_timeout_secs)
            } else {
                Refusal::peer_unreachable(&peer::error_chain(&e))
            }
        })
    }

    async fn read_json(&self, resp: reqwest::Response) -> Result<(u16, Value), Refusal> {
        let status = resp.status().as_u16();
        let ct = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let base = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let read = tokio::select! {
            _ = self.st.shutdown.cancelled() => return Err(crate::edge::shutting_down()),
            r = peer::read_limited(resp, self.max_resp) => r,
        };
        let body = read.map_err(|e| {
            if e.starts_with("larger than") {
                Refusal::response_too_large(self.max_resp)
            } else {
                Refusal::peer_unreachable(&e)
            }
        })?;
        if body.is_empty() && (200..300).contains(&status) {
            return Ok((status, json!({})));
        }
        if base != "application/json" && base != "application/a2a+json" {
            return Err(Refusal::upstream_content_type(if ct.is_empty() {
                "(none)"
            } else {
                &ct
            }));
        }
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| Refusal::upstream_invalid_response(&format!("not JSON: {e}")))?;
        Ok((status, v))
    }

    fn is_sse(resp: &reqwest::Response) -> bool {
        resp.headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|c| {
                c.trim()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            })
            .unwrap_or(false)
    }

    async fn jsonrpc(&self, op: Operation, params: Value) -> Result<Answer, Refusal> {
        let body = json!({"jsonrpc": "2.0", "id": self.id, "method": op.name(self.chosen.version), "params": params});
        let mut req = self.request(
            reqwest::Method::POST,
            self.chosen.url.clone(),
            "application/json",
        );
        if op.is_streaming() {
            req = req
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .timeout(Duration::from_secs(24 * 3600));
        } else {
            req = req.header(reqwest::header::ACCEPT, "application/json");
        }
        let resp = self.send(req.body(body.to_string())).await?;
        if op.is_streaming() && Self::is_sse(&resp) {
            return Ok(Answer::Stream(self.stream(resp, Binding::JsonRpc)));
        }
        let (_, v) = self.read_json(resp).await?;
        if let Some(err) = v.get("error") {
            return Err(self.peer_error_rpc(err));
        }
        // The 1.x Python SDK omits `result` for DeleteTaskPushNotificationConfig (its result
        // is empty); read that as the empty result rather than refuse it.
        let empty = Value::Null;
        let result = match v.get("result") {
            Some(r) => r,
            None if op == Operation::DeletePushConfig && v.get("jsonrpc").is_some() => &empty,
            None => {
                return Err(Refusal::upstream_invalid_response(
                    "neither result nor error",
                ));
            }
        };
        if op.is_streaming() {
            return Err(Refusal::upstream_invalid_response(
                "expected an event stream",
            ));
        }
        xlate::result(op, self.chosen.version, self.caller, result)
            .map(Answer::Unary)
            .map_err(map_answer_error)
    }

    fn rest_url(&self, segments: &[&str]) -> Url {
        let mut url = self.chosen.url.clone();
        if let Ok(mut p) = url.path_segments_mut() {
            p.pop_if_empty();
            if let Some(t) = &self.chosen.tenant {
                p.push(t);
            }
            for s in segments {
                p.push(s);
            }
        }
        url
    }

    async fn rest(&self, op: Operation, mut params: Value) -> Result<Answer, Refusal> {
        use reqwest::Method;
        if let Some(o) = params.as_object_mut() {
            o.remove("tenant");
        }
        let s = |k: &str| {
            params
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let (method, url, body): (Method, Url, Option<Value>) = match op {
            Operation::SendMessage => (
                Method::POST,
                self.rest_url(&["message:send"]),
                Some(params.clone()),
            ),
            Operation::SendStreamingMessage => (
                Method::POST,
                self.rest_url(&["message:stream"]),
                Some(params.clone()),
            ),
            Operation::GetTask => {
                let mut u = self.rest_url(&["tasks", &s("id")]);
                if let Some(h) = params.get("historyLength") {
                    u.query_pairs_mut()
                        .append_pair("historyLength", &h.to_string());
                }
                (Method::GET, u, None)
            }
            Operation::ListTasks => {
                let mut u = self.rest_url(&["tasks"]);
                if let Some(o) = params.as_object() {
                    for (k, v) in o {
                        let val = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        u.query_pairs_mut().append_pair(k, &val);
                    }
                }
                (Method::GET, u, None)
            }
            Operation::CancelTask => {
                let mut b = params.clone();
                if let Some(o) = b.as_object_mut() {
                    o.remove("id");
                }
                (
                    Method::POST,
                    self.rest_url(&["tasks", &format!("{}:cancel", s("id"))]),
                    Some(b),
                )
            }
            Operation::SubscribeToTask => (
                Method::POST,
                self.rest_url(&["tasks", &format!("{}:subscribe", s("id"))]),
                Some(json!({})),
            ),
            Operation::SetPushConfig => (
                Method::POST,
                self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs"]),
                Some(params.clone()),
            ),
            Operation::GetPushConfig => (
                Method::GET,
                self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs", &s("id")]),
                None,
            ),
            Operation::ListPushConfigs => {
                let mut u = self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs"]);
                for k in ["pageSize", "pageToken"] {
                    if let Some(v) = params.get(k) {
                        let val = v
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| v.to_string());
                        u.query_pairs_mut().append_pair(k, &val);
                    }
                }
                (Method::GET, u, None)
            }
            Operation::DeletePushConfig => (
                Method::DELETE,
                self.rest_url(&["tasks", &s("taskId"), "pushNotificationConfigs", &s("id")]),
                None,
            ),
        };
        let mut req = self.request(method, url, "application/a2a+json");
        if op.is_streaming() {
            req = req
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .timeout(Duration::from_secs(24 * 3600));
        } else {
            req = req.header(
                reqwest::header::ACCEPT,
                "application/a2a+json, application/json",
            );
        }
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let resp = self.send(req).await?;
        if op.is_streaming() && resp.status().is_success() && Self::is_sse(&resp) {
            return Ok(Answer::Stream(self.stream(resp, Binding::HttpJson)));
        }
        let (status, v) = self.read_json(resp).await?;
        if !(200..300).contains(&status) {
            return Err(self.peer_error_status(status, &v));
        }
        if op.is_streaming() {
            return Err(Refusal::upstream_invalid_response(
                "expected an event stream",
            ));
        }
        xlate::result(op, Version::V10, self.caller, &v)
            .map(Answer::Unary)
            .map_err(map_answer_error)
    }

    fn stream(
        &self,
        resp: reqwest::Response,
        binding: Binding,
    ) -> BoxStream<'static, Result<Value, Refusal>> {
        let from = self.chosen.version;
        let to = self.caller;
        let max = self.max_stream;
        let stall = Duration::from_secs(self.st.config.peer_timeout_secs.max(1));
        let stall_secs = self.st.config.peer_timeout_secs;
        let agent_id = self.agent.agent_id.clone();
        let shutdown = self.st.shutdown.clone();
        // Any byte from the peer is life, SSE comments (heartbeats) included.
        let life = crate::edge::Liveness::new();
        let seen = life.clone();
        let mut events = resp
            .bytes_stream()
            .inspect(move |_| seen.touch())
            .eventsource();
        let mut xl = xlate::Events::new(from, to);
        let s = async_stream::stream! {
            let mut total: u64 = 0;
            loop {
                let wait = stall.saturating_sub(life.silent_for());
                let next = tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => { yield Err(crate::edge::shutting_down()); break; }
                    r = tokio::time::timeout(wait, events.next()) => r,
                };
                let next = match next {
                    Err(_) if life.silent_for() < stall => continue,
                    Err(_) => { yield Err(Refusal::peer_timeout(stall_secs)); break; }
                    Ok(None) => { if let Some(ev) = xl.finish() { yield Ok(ev); } break; }
                    Ok(Some(Err(e))) => { yield Err(Refusal::peer_unreachable(&format!("stream broke: {e}"))); break; }
                    Ok(Some(Ok(ev))) => ev,
                };
                total += next.data.len() as u64;
                if total > max {
                    yield Err(Refusal::stream_too_large(max));
                    break;
                }
                let data = next.data.trim();
                if data.is_empty() || data == "[DONE]" {
                    continue;
                }
                let v: Value = match serde_json::from_str(data) {
                    Ok(v) => v,
                    Err(e) => { yield Err(Refusal::upstream_invalid_response(&format!("stream event is not JSON: {e}"))); break; }
                };
                let payload = match binding {
                    Binding::JsonRpc => {
                        if let Some(err) = v.get("error") {
                            let code = err.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                            if code == -32009 {
                                yield Err(Refusal::peer_version_not_supported(&agent_id, from.as_str()));
                            } else {
                                let reason = err.get("data").and_then(Value::as_array)
                                    .and_then(|d| d.iter().find_map(|i| i.get("reason").and_then(Value::as_str)));
                                yield Err(Refusal::upstream_error(code, reason));
                            }
                            break;
                        }
                        match v.get("result") {
                            Some(r) => r.clone(),
                            None => { yield Err(Refusal::upstream_invalid_response("stream event has neither result nor error")); break; }
                        }
                    }
                    Binding::HttpJson => {
                        if v.get("error").is_some() {
                            yield Err(Refusal::upstream_error(-32603, None));
                            break;
                        }
                        v
                    }
                };
                match xl.push(&payload) {
                    Ok(out) => for ev in out { yield Ok(ev) },
                    Err(e) => { yield Err(map_answer_error(e)); break; }
                }
            }
        };
        Box::pin(s)
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP+JSON (1.0) caller binding

async fn rest_entry(
    st: Arc<GatewayState>,
    agent: String,
    headers: HeaderMap,
    query: Option<String>,
    op: Operation,
    body: Option<Bytes>,
    params_from_path: Value,
) -> Response {
    let mut call = Call::new(&headers, Binding::HttpJson);
    call.audit.target = Some(agent.clone());
    call.audit.operation = Some(op.name_03().to_owned());
    call.audit.client_method = Some(format!("HTTP+JSON {}", op.path()));
    call.version = Version::V10;
    // The HTTP+JSON entry is advertised at 1.0 only: no version = 1.0, 0.3 is refused.
    let requested = header_version(&headers)
        .map(str::to_owned)
        .or_else(|| query_version(query.as_deref()));
    if let Some(r) = requested.as_deref().filter(|r| !r.trim().is_empty()) {
        match negotiate(Some(r), st.config.serve_v1) {
            Ok(Version::V10) => {}
            Ok(Version::V03) => {
                return rest_refusal(&st, &mut call, Refusal::version_not_supported(r, &["1.0"]));
            }
            Err((r, _)) => return rest_refusal(&st, &mut call, r),
        }
    } else if !st.config.serve_v1 {
        return rest_refusal(
            &st,
            &mut call,
            Refusal::version_not_supported("1.0", &["0.3"]),
        );
    }
    if body.is_some()
        && let Err(r) = content_type_ok(&headers)
    {
        return rest_refusal(&st, &mut call, r);
    }
    let principal = match authenticate(&st, &headers) {
        Ok(p) => p,
        Err(r) => return rest_refusal(&st, &mut call, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    let params = match crate::wire::parse_rest_body(
        body.as_deref(),
        &params_from_path,
        st.config.limits.max_message_chars,
    ) {
        Ok(p) => p,
        Err(r) => return rest_refusal(&st, &mut call, r),
    };
    let span = tracing::info_span!("a2a.hop", trace_id = %call.trace_id, operation = op.name_03(), target = %agent);
    match execute(&st, &mut call, &agent, &principal, op, params)
        .instrument(span)
        .await
    {
        Err(r) => rest_refusal(&st, &mut call, r),
        Ok(Answer::Unary(result)) => {
            record(&st, &mut call, None);
            json_response(StatusCode::OK, call.json_content_type(), &result)
        }
        Ok(Answer::Stream(events)) => {
            record(&st, &mut call, None);
            let trace = call.trace_id.clone();
            let mapped = events.map(move |item| {
                Ok::<_, Infallible>(match item {
                    Ok(ev) => Event::default().data(ev.to_string()),
                    Err(r) => Event::default()
                        .event("error")
                        .data(r.status_body(&trace).to_string()),
                })
            });
            sse_response(mapped)
        }
    }
}

fn query_params(query: Option<&str>) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            if k.eq_ignore_ascii_case("a2a-version") {
                continue;
            }
            let val = match k.as_ref() {
                "pageSize" | "historyLength" => v
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(v.into_owned())),
                "includeArtifacts" => Value::Bool(v == "true"),
                _ => Value::String(v.into_owned()),
            };
            out.insert(k.into_owned(), val);
        }
    }
    out
}

async fn rest_send(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::SendMessage,
        Some(body),
        json!({}),
    )
    .await
}

async fn rest_stream(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::SendStreamingMessage,
        Some(body),
        json!({}),
    )
    .await
}

async fn rest_list(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let p = Value::Object(query_params(q.as_deref()));
    rest_entry(st, agent, headers, q, Operation::ListTasks, None, p).await
}

async fn rest_task_get(
    State(st): State<Arc<GatewayState>>,
    Path((agent, id)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    if let Some(task) = id.strip_suffix(":subscribe") {
        return rest_entry(
            st,
            agent,
            headers,
            q,
            Operation::SubscribeToTask,
            None,
            json!({"id": task}),
        )
        .await;
    }
    let mut p = query_params(q.as_deref());
    p.insert("id".into(), json!(id));
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::GetTask,
        None,
        Value::Object(p),
    )
    .await
}

async fn rest_task_post(
    State(st): State<Arc<GatewayState>>,
    Path((agent, id)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = (!body.is_empty()).then_some(body);
    if let Some(task) = id.strip_suffix(":cancel") {
        return rest_entry(
            st,
            agent,
            headers,
            q,
            Operation::CancelTask,
            body,
            json!({"id": task}),
        )
        .await;
    }
    if let Some(task) = id.strip_suffix(":subscribe") {
        return rest_entry(
            st,
            agent,
            headers,
            q,
            Operation::SubscribeToTask,
            None,
            json!({"id": task}),
        )
        .await;
    }
    let mut call = Call::new(&headers, Binding::HttpJson);
    call.version = Version::V10;
    rest_refusal(
        &st,
        &mut call,
        Refusal::method_not_found(&format!("POST tasks/{id}")),
    )
}

async fn rest_push_list(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let mut p = query_params(q.as_deref());
    p.insert("taskId".into(), json!(task));
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::ListPushConfigs,
        None,
        Value::Object(p),
    )
    .await
}

async fn rest_push_set(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::SetPushConfig,
        Some(body),
        json!({"taskId": task}),
    )
    .await
}

async fn rest_push_get(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task, cfg)): Path<(String, String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::GetPushConfig,
        None,
        json!({"taskId": task, "id": cfg}),
    )
    .await
}

async fn rest_push_delete(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task, cfg)): Path<(String, String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::DeletePushConfig,
        None,
        json!({"taskId": task, "id": cfg}),
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// Governed card

fn card_refusal(st: &GatewayState, call: &mut Call, form: Option<Version>, r: Refusal) -> Response {
    record(st, call, Some(&r));
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let body = match form {
        Some(Version::V10) => r.status_body(&call.trace_id),
        _ => r.legacy_body(&call.trace_id),
    };
    let mut resp = json_response(status, "application/json", &body);
    if r.code == "a2a_unauthorized" {
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}

/// Builds the governed 1.0 card (without the 0.3 compatibility fields).
pub fn governed_card_v1(config: &Config, agent: &Agent, peer_card: &Value) -> Value {
    let c1 = xlate::card_to_v1(peer_card);
    let base = format!("{}/a2a/{}", config.public_base(), agent.agent_id);
    let mut out = serde_json::Map::new();
    for k in [
        "name",
        "description",
        "version",
        "provider",
        "iconUrl",
        "documentationUrl",
        "defaultInputModes",
        "defaultOutputModes",
    ] {
        if let Some(v) = c1.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    let mut ifaces = vec![];
    if config.serve_v1 {
        ifaces.push(json!({"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}));
    }
    ifaces.push(json!({"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}));
    if config.serve_v1 {
        ifaces.push(json!({"url": format!("{base}/v1"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}));
    }
    out.insert("supportedInterfaces".into(), Value::Array(ifaces));
    let peer_caps = c1.get("capabilities").cloned().unwrap_or_else(|| json!({}));
    let streaming = peer_caps
        .get("streaming")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        && config.streaming_enabled;
    let push = peer_caps
        .get("pushNotifications")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    out.insert(
        "capabilities".into(),
        json!({"streaming": streaming, "pushNotifications": push, "extendedAgentCard": false}),
    );
    let mut schemes = c1
        .get("securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    schemes.insert(
        "a2aGatewayKey".into(),
        json!({"httpAuthSecurityScheme": {"scheme": "bearer", "description": "Workspace API key of the A2A gateway"}}),
    );
    out.insert("securitySchemes".into(), Value::Object(schemes));
    out.insert(
        "securityRequirements".into(),
        json!([{"schemes": {"a2aGatewayKey": {"list": []}}}]),
    );
    let skills: Vec<Value> = c1
        .get("skills")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| match &agent.skills {
            None => true,
            Some(allow) => s
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| allow.iter().any(|a| a == id)),
        })
        .collect();
    out.insert("skills".into(), Value::Array(skills));
    for k in ["name", "description", "version"] {
        out.entry(k).or_insert_with(|| json!(""));
    }
    for k in ["defaultInputModes", "defaultOutputModes"] {
        out.entry(k).or_insert_with(|| json!(["text/plain"]));
    }
    Value::Object(out)
}

/// The governed card in `version` (1.0 carries the 0.3 address fields too).
pub fn governed_card(config: &Config, agent: &Agent, peer_card: &Value, version: Version) -> Value {
    let v1 = governed_card_v1(config, agent, peer_card);
    let base = format!("{}/a2a/{}", config.public_base(), agent.agent_id);
    match version {
        Version::V10 => {
            let mut m = v1.as_object().cloned().unwrap_or_default();
            m.insert("url".into(), json!(base));
            m.insert("preferredTransport".into(), json!("JSONRPC"));
            m.insert("protocolVersion".into(), json!("0.3"));
            Value::Object(m)
        }
        Version::V03 => {
            let (c, omitted) = xlate::card_v1_to_v03(&v1);
            let mut m = c.as_object().cloned().unwrap_or_default();
            m.insert("url".into(), json!(base));
            m.insert("preferredTransport".into(), json!("JSONRPC"));
            m.insert("protocolVersion".into(), json!("0.3"));
            m.insert(
                "additionalInterfaces".into(),
                json!([{"url": base, "transport": "JSONRPC"}]),
            );
            m.insert("supportsAuthenticatedExtendedCard".into(), json!(false));
            if !omitted.is_empty() {
                m.insert(
                    "x-a2a-security-schemes-omitted".into(),
                    Value::Array(omitted),
                );
            }
            Value::Object(m)
        }
    }
}

async fn card_handler(
    State(st): State<Arc<GatewayState>>,
    Path(agent_id): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let mut call = Call::new(&headers, Binding::JsonRpc);
    call.audit.target = Some(agent_id.clone());
    call.audit.operation = Some("agent/card".into());
    call.audit.client_method = Some("GET agent-card.json".into());
    // Only the header picks the card's version; none = the 1.0 card.
    let requested = header_version(&headers)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let form = requested.map(|r| {
        if r.starts_with("0.") {
            Version::V03
        } else {
            Version::V10
        }
    });
    let version = match requested {
        None if st.config.serve_v1 => Version::V10,
        None => Version::V03,
        Some(r) => match negotiate(Some(r), st.config.serve_v1) {
            Ok(v) => v,
            Err((r, f)) => {
                call.version = f;
                return card_refusal(&st, &mut call, Some(f), r);
            }
        },
    };
    call.version = version;
    let principal = match authenticate(&st, &headers) {
        Ok(p) => p,
        Err(r) => return card_refusal(&st, &mut call, form, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    let agent = match lookup_agent(&st, &principal, &agent_id) {
        Ok(a) => a,
        Err(r) => return card_refusal(&st, &mut call, form, r),
    };
    let refresh = q
        .as_deref()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes()).any(|(k, v)| k == "refresh" && v == "true")
        })
        .unwrap_or(false);
    let ws = st.store.workspace(&principal.workspace_id).ok().flatten();
    let (_, _, max_card) = effective_limits(&st, ws.as_ref());
    let peer_card = async {
        let registered = Url::parse(&agent.endpoint)
            .map_err(|e| Refusal::peer_url_refused(&format!("registered endpoint: {e}")))?;
        peer::check_url(&registered, &registered, st.config.dev_mode)?;
        peer::check_resolved(&registered, st.config.dev_mode).await?;
        st.cards
            .get(
                &st.http,
                &registered,
                agent.credential.as_deref(),
                max_card,
                refresh,
            )
            .await
    }
    .await;
    let peer_card = match peer_card {
        Ok(c) => c,
        Err(r) => return card_refusal(&st, &mut call, form, r),
    };
    let card = st
        .seams
        .signer
        .sign(governed_card(&st.config, &agent, &peer_card, version));
    let body = card.to_string();
    let digest = keys::hash(&body);
    let etag = format!(
        "\"{}\"",
        digest[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    record(&st, &mut call, None);
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
        .unwrap_or(false);
    let mut resp = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        json_response(StatusCode::OK, "application/json", &card)
    };
    let h = resp.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=60"),
    );
    h.insert(
        header::VARY,
        HeaderValue::from_static("Authorization, A2A-Version"),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    resp
}

async fn metrics_handler(State(st): State<Arc<GatewayState>>) -> Response {
    let mut resp = st.metrics.render().into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    resp
}
