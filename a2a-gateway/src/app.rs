//! The caller-facing surface and the call path to peers.
//!
//! Routes (see `docs/gateway.md`):
//! - `GET  /a2a/{agentId}/.well-known/agent-card.json`: the governed card;
//! - `GET  /a2a/.well-known/ard.json`: the key's agents as an ARD manifest ([`crate::edge::ard`]);
//! - `POST /a2a/{agentId}`: JSON-RPC, the operation named by `method` (both name sets);
//! - `POST /a2a/{agentId}/{op}`: JSON-RPC, the operation named by the path (`message:send` ...);
//! - `/a2a/{agentId}/v1/...`: the A2A 1.0 HTTP+JSON binding;
//! - any path with `content-type: application/grpc*`: the 1.0 gRPC binding, with `serve_grpc`
//!   (see [`crate::edge::grpc`]);
//! - `GET /metrics`, `GET /healthz` (liveness), `GET /readyz` (readiness, `crate::edge::probes`), and `/admin/...` (see [`crate::admin`]);
//! - `/console/...`, the operator console, when the admin API is on (see [`crate::console`]).
//!
//! This module holds the gateway's state, its router and its lifecycle; the request path is
//! laid out by concern in sibling modules, in the order of [`crate::hop::STEPS`]:
//! the caller edge ([`crate::edge`], `call.rs`), authentication (`auth.rs`), the
//! entry points of each binding (`jsonrpc.rs`, `rest.rs`), the hop's checks
//! ([`crate::hop`], `push_hop.rs`, `listing.rs`), the peer call
//! (`hop.rs`, `relay.rs`), the governed card (`card.rs`) and the audit and
//! metrics glue (`record.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tokio::net::TcpListener;

use crate::config::Config;
use crate::edge::card::card_handler;
use crate::edge::record::metrics_handler;
use crate::governance::Governance;
use crate::ids::random_hex;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::store::backend::{
    Audit, GovDocs, Holds, PAGE_KEY, Records, Registry, SecretStore, Shared, SqliteAudit,
    SqliteGovDocs, SqliteHolds, SqliteRecords, SqliteRegistry, SqliteShared,
};
use crate::{edge::jsonrpc::rpc_path, edge::jsonrpc::rpc_root};
use crate::{
    edge::rest::rest_list, edge::rest::rest_push_delete, edge::rest::rest_push_get,
    edge::rest::rest_push_list, edge::rest::rest_push_set, edge::rest::rest_send,
    edge::rest::rest_stream, edge::rest::rest_task_get, edge::rest::rest_task_post,
};

pub use crate::edge::negotiate;
pub use crate::governance::loops::HOPS_HEADER;
pub use crate::{edge::card::governed_card, edge::card::governed_card_v1};

// Paths of the previous layout (`server::...`), kept for one release.
#[doc(hidden)]
pub use crate::config::MAX_REQUEST_BYTES;
#[doc(hidden)]
pub use crate::ids::random_token;
#[doc(hidden)]
pub use crate::protocol::answer::Answer;
#[doc(hidden)]
pub use crate::state::GatewayState;

/// A gateway ready to serve.
#[derive(Clone)]
pub struct Gateway {
    state: Arc<GatewayState>,
    /// The operator console's sessions (owned here, handed to [`crate::console::router`]).
    sessions: Arc<crate::console::Sessions>,
}

/// A running gateway; dropping it does not stop the server, [`ServerHandle::shutdown`] does.
pub struct ServerHandle {
    addr: SocketAddr,
    listening: a2a_agent::listen::Listening,
    state: Arc<GatewayState>,
    /// Stops the background tasks of this server (the audit retention).
    background: tokio_util::sync::CancellationToken,
}

impl ServerHandle {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Applies a configuration reload: `boot`, `before` and `after` are the settings as read
    /// at the start, last and now (see [`crate::reload`]); an error leaves every setting as it
    /// was.
    pub fn reload(
        &self,
        boot: &Config,
        before: &Config,
        after: &Config,
    ) -> Result<crate::reload::Reloaded, String> {
        crate::reload::apply(&self.state, &self.listening, boot, before, after)
    }

    /// The running gateway's state (its stores).
    pub fn state(&self) -> &Arc<GatewayState> {
        &self.state
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
        // Readiness first (`/readyz` answers 503 from here on), then no new connections.
        self.state.draining.cancel();
        self.background.cancel();
        self.listening.stop_accepting();
        let grace = Duration::from_secs(self.state.config().shutdown_grace_secs);
        if !self.listening.drain(grace).await {
            self.state.shutdown.cancel();
            if !self.listening.drain(Duration::from_secs(5)).await {
                self.listening.kill().await;
            }
        }
    }
}

impl Gateway {
    /// Builds a gateway over a store. Without `public_url`, governed cards name
    /// `config.listen`: bind the listener first and set it to the bound address (a port 0 would
    /// otherwise be published).
    pub fn new(config: Config, store: Store) -> Result<Gateway, String> {
        let registry = Registry::Sqlite(SqliteRegistry::new(store.clone()));
        let records = Records::Sqlite(SqliteRecords::new(store.clone()));
        let audit = Audit::Sqlite(SqliteAudit::new(store.clone()));
        let holds = Holds::Sqlite(SqliteHolds::new(store.clone()));
        Gateway::with_backends(config, store, registry, records, audit, holds)
    }

    /// [`Gateway::new`] with the registry, the task records and sends, the audit and the
    /// approvals and kills on the given backends, such as PostgreSQL
    /// ([`PgRegistry::connect`](crate::store::backend::PgRegistry::connect),
    /// [`PgRegistry::records`](crate::store::backend::PgRegistry::records),
    /// [`PgRegistry::audit`](crate::store::backend::PgRegistry::audit),
    /// [`PgHolds::connect`](crate::store::backend::PgHolds::connect)); the workspaces'
    /// policies and PII rules go with the registry. Everything else (the intent journal; trust
    /// keys, sessions and the page-token key unless [`Gateway::with_shared`] puts them
    /// elsewhere) stays on `store`'s SQLite file or in this process (docs/replicas.md).
    pub fn with_backends(
        config: Config,
        store: Store,
        registry: Registry,
        records: Records,
        audit: Audit,
        holds: Holds,
    ) -> Result<Gateway, String> {
        config.check_console_oidc()?;
        let peers = crate::peer::clients::PeerClients::build(&config)?;
        let shared = Shared::Sqlite(SqliteShared::new(store.clone()));
        let trust = crate::trust::TrustState::on(
            peers.http.clone(),
            &config,
            shared.clone(),
            crate::trust::own::SealKey::from_config(&config)?,
        );
        let signer = Arc::new(crate::trust::own::OwnSigner::new(
            store.clone(),
            crate::trust::own::SealKey::from_config(&config)?,
            &config,
        ));
        // Policies and PII rules live beside the registry (their workspaces, its epoch).
        let gov_docs = match &registry {
            Registry::Sqlite(_) => GovDocs::Sqlite(SqliteGovDocs::new(store.clone())),
            Registry::Postgres(pg) => GovDocs::Postgres(pg.gov_docs()),
        };
        let metrics = Metrics::new(config.metrics_label_cap);
        store.set_metrics(&metrics);
        let key_bytes = random_hex(32);
        let page_key =
            aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key_bytes.as_bytes());
        Ok(Gateway {
            state: Arc::new(GatewayState {
                peer_clients: arc_swap::ArcSwap::from_pointee(peers),
                store: store.clone(),
                registry,
                records,
                audit,
                holds: holds.clone(),
                shared: shared.clone(),
                peer_checks: Default::default(),
                metrics,
                governance: Arc::new(Governance::new(
                    gov_docs,
                    holds.clone(),
                    &config.governance(),
                )),
                signer,
                trust,
                shutdown: tokio_util::sync::CancellationToken::new(),
                draining: tokio_util::sync::CancellationToken::new(),
                replay: Arc::default(),
                terminal: Default::default(),
                card_dates: Default::default(),
                page_key,
                settings: arc_swap::ArcSwap::from_pointee(config),
            }),
            sessions: Arc::new(crate::console::Sessions::new(shared)),
        })
    }

    /// Puts the page-token key, the console's sessions and login links, and the card trust keys
    /// and switches and the push JWT replay guard on `shared` (before serving), such as
    /// PostgreSQL ([`PgShared::connect`](crate::store::backend::PgShared::connect),
    /// [`PgRegistry::shared`](crate::store::backend::PgRegistry::shared)): replicas on one
    /// database then accept each other's ListTasks page tokens and console logins. Reads the
    /// shared page-token key (made once across replicas).
    pub async fn with_shared(self, shared: Shared) -> Result<Gateway, String> {
        let key = shared.secret(PAGE_KEY).await.map_err(|e| e.to_string())?;
        let Ok(mut st) = Arc::try_unwrap(self.state) else {
            return Err("with_shared: the gateway is already shared".to_owned());
        };
        let config = st.config().clone();
        st.page_key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
        st.trust = crate::trust::TrustState::on(
            st.peers().http.clone(),
            &config,
            shared.clone(),
            crate::trust::own::SealKey::from_config(&config)?,
        );
        st.signer = Arc::new(crate::trust::own::OwnSigner::on(
            &shared,
            crate::trust::own::SealKey::from_config(&config)?,
            &config,
        ));
        st.shared = shared.clone();
        Ok(Gateway {
            state: Arc::new(st),
            sessions: Arc::new(crate::console::Sessions::new(shared)),
        })
    }

    /// Keeps the relayed streams of peers that number no events in PostgreSQL as well
    /// (before serving): a caller whose stream was cut resumes on any replica holding the same
    /// `streams` database, not only on the one reading the peer (docs/replicas.md).
    pub fn with_stream_events(
        self,
        streams: crate::store::backend::PgStreams,
    ) -> Result<Gateway, String> {
        let Ok(mut st) = Arc::try_unwrap(self.state) else {
            return Err("with_stream_events: the gateway is already shared".to_owned());
        };
        st.replay = Arc::new(crate::tasks::replay::Buffers::shared(streams));
        Ok(Gateway {
            state: Arc::new(st),
            sessions: self.sessions,
        })
    }

    /// Replaces the governance pipeline (before serving), e.g. with one more step
    /// ([`Governance::with_step`]).
    pub fn with_governance(self, governance: Governance) -> Gateway {
        let sessions = self.sessions;
        match Arc::try_unwrap(self.state) {
            Ok(mut st) => {
                st.governance = Arc::new(governance);
                Gateway {
                    state: Arc::new(st),
                    sessions,
                }
            }
            Err(state) => Gateway { state, sessions },
        }
    }

    /// The shared state.
    pub fn state(&self) -> &Arc<GatewayState> {
        &self.state
    }

    /// A one-time console login link under `base` (see [`crate::console::login_link`]).
    pub fn console_login_link(&self, base: &str) -> String {
        crate::console::login_link(&self.sessions, base)
    }

    /// The axum router of the whole gateway.
    pub fn router(&self) -> Router {
        let a2a = Router::new()
            .route(
                "/a2a/{agent}/.well-known/agent-card.json",
                get(card_handler),
            )
            .route("/a2a/.well-known/ard.json", get(crate::edge::ard::handler))
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
                    usize::try_from(self.state.config().limits.max_push_bytes)
                        .unwrap_or(usize::MAX)
                        .saturating_add(1),
                )),
            )
            .route("/a2a/.well-known/jwks.json", get(crate::admin::trust::jwks))
            .route("/metrics", get(metrics_handler))
            .route("/healthz", get(crate::edge::probes::healthz))
            .route("/readyz", get(crate::edge::probes::readyz))
            .with_state(self.state.clone());
        let routes = a2a.merge(crate::admin::router(self.state.clone()));
        let inner = routes.clone();
        let app = routes
            .fallback(move |req: axum::extract::Request| trailing_slash(inner.clone(), req))
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .layer(axum::middleware::from_fn_with_state(
                self.state.clone(),
                crate::edge::wire::guard,
            ));
        // The console (HTML, its own errors and limits) only with the admin API on.
        let app = if crate::console::enabled(&self.state.config()) {
            app.merge(crate::console::router(
                self.state.clone(),
                self.sessions.clone(),
            ))
        } else {
            app
        };
        // gRPC callers (`serve_grpc`): `application/grpc*` requests, whatever the path.
        let app = if self.state.config().serve_grpc && self.state.config().serve_v1 {
            app.layer(axum::middleware::from_fn_with_state(
                self.state.clone(),
                grpc_hook,
            ))
        } else {
            app
        };
        // Audit on PostgreSQL: a hop's record is committed before its answer leaves.
        let app = match self.state.audit {
            Audit::Postgres(_) => app.layer(axum::middleware::from_fn(
                crate::edge::record::durable_answers,
            )),
            Audit::Sqlite(_) => app,
        };
        // Outermost: the headers read once into one form (aliases, delegated authorization,
        // the error domain) for every route and binding.
        app.layer(axum::middleware::from_fn_with_state(
            self.state.clone(),
            crate::edge::headers::normalize,
        ))
    }

    /// Serves on `listener` until [`ServerHandle::shutdown`]. Without `public_url`, a `listen`
    /// address with port 0 is replaced by the bound one (cards never name port 0).
    pub async fn serve(mut self, listener: TcpListener) -> std::io::Result<ServerHandle> {
        let addr = listener.local_addr()?;
        if self.state.config().public_url.is_none() && self.state.config().listen.port() == 0 {
            self.bind_to(addr)?;
        }
        let app = self.router();
        let refuse = refuser(self.state.config().serve_v1);
        let listening =
            a2a_agent::listen::serve(listener, app, self.state.config().listen(), refuse)?;
        Ok(self.started(addr, listening))
    }

    /// The running gateway once `listening` serves its router: its background tasks start.
    pub(crate) fn started(
        self,
        addr: SocketAddr,
        listening: a2a_agent::listen::Listening,
    ) -> ServerHandle {
        let background = tokio_util::sync::CancellationToken::new();
        crate::background::spawn_retention(&self.state, background.clone());
        crate::background::spawn_kill_watch(&self.state, background.clone());
        crate::background::spawn_open_streams(&self.state, background.clone());
        ServerHandle {
            addr,
            listening,
            state: self.state,
            background,
        }
    }
}

/// How the listener answers what it refuses before the router (a slow body, the connection
/// cap): in the form the path and version imply.
pub(crate) fn refuser(serve_v1: bool) -> a2a_agent::listen::Refuser {
    Arc::new(move |parts, why| crate::edge::edge_refusal(serve_v1, parts, why))
}

impl Gateway {
    /// Makes `addr` the address cards and signatures name (before serving, while the state is
    /// not shared; a shared one keeps its address, with a warning).
    fn bind_to(&mut self, addr: SocketAddr) -> std::io::Result<()> {
        let Some(st) = Arc::get_mut(&mut self.state) else {
            tracing::warn!(
                "listen has port 0 and the gateway is already shared: cards name port 0; \
                 set listen to the bound address or public_url"
            );
            return Ok(());
        };
        let mut config = Config::clone(&st.config());
        config.listen = addr;
        st.settings.store(Arc::new(config));
        let seal =
            crate::trust::own::SealKey::from_config(&st.config()).map_err(std::io::Error::other)?;
        st.signer = Arc::new(crate::trust::own::OwnSigner::on(
            &st.shared,
            seal,
            &st.config(),
        ));
        Ok(())
    }
}

/// Routes gRPC calls to [`crate::edge::grpc`], everything else on.
async fn grpc_hook(
    axum::extract::State(st): axum::extract::State<Arc<GatewayState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if a2a_agent::edge::grpc::is_grpc(req.headers()) {
        return crate::edge::grpc::handle(st, req).await;
    }
    next.run(req).await
}

/// A path no route matched: with trailing slashes (`POST /a2a/{agentId}/`, which some clients
/// send), the same request without them, routed again; otherwise 404 (in A2A form, see
/// [`crate::edge::wire::guard`]).
async fn trailing_slash(
    routes: Router,
    mut req: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use tower::ServiceExt;
    let path = req.uri().path();
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() || trimmed.len() == path.len() {
        return axum::http::StatusCode::NOT_FOUND.into_response();
    }
    let target = match req.uri().query() {
        Some(q) => format!("{trimmed}?{q}"),
        None => trimmed.to_owned(),
    };
    let Ok(uri) = target.parse() else {
        return axum::http::StatusCode::NOT_FOUND.into_response();
    };
    *req.uri_mut() = uri;
    match routes.oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod probe_tests {
    use tower::ServiceExt;

    use super::Gateway;
    use crate::config::Config;
    use crate::store::Store;

    async fn get(gw: &Gateway, path: &str) -> (u16, serde_json::Value) {
        let req = http::Request::get(path)
            .body(axum::body::Body::empty())
            .unwrap();
        let resp = gw.router().oneshot(req).await.unwrap();
        let status = resp.status().as_u16();
        let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn ready_until_shutdown_begins_alive_throughout() {
        let gw = Gateway::new(Config::default(), Store::open_in_memory().unwrap()).unwrap();
        let (s, b) = get(&gw, "/readyz").await;
        assert_eq!((s, b["status"].as_str()), (200, Some("ready")), "{b}");
        assert_eq!(b["schema"], crate::store::MIGRATIONS.len());
        gw.state().draining.cancel();
        let (s, b) = get(&gw, "/readyz").await;
        assert_eq!(s, 503, "{b}");
        assert_eq!(b["reason"], "shutting down");
        assert_eq!(get(&gw, "/healthz").await.0, 200);
    }
}
