//! The HTTP server: the builder ([`AgentServer`], here), the request pipeline (negotiation,
//! limits, auth, extensions, the card endpoint), the bindings it dispatches to (JSON-RPC,
//! HTTP+JSON, gRPC, SSE streams), and graceful shutdown.

use crate::auth::{Authenticator, CardAuthenticator, NoAuth};
use crate::card::AgentCard;
use crate::config::AgentConfig;
use crate::handler::{ExtensionHandler, Handler};
use crate::replay::ReplayLog;
use crate::state::App;
#[cfg(feature = "postgres")]
use crate::store::PostgresStore;
use crate::store::TaskStore;
use crate::tasks::TaskManager;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

mod admit;
#[cfg(feature = "grpc")]
mod grpc;
mod jsonrpc;
pub mod parse;
mod pipeline;
mod probes;
mod reload;
mod respond;
mod rest;
mod sse;
mod stores;

use pipeline::{Direct, edge_refusal, entry};
pub use reload::LIVE;
pub use respond::A2A_JSON;

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
    postgres: stores::Given,
    authenticator: Option<Arc<dyn Authenticator>>,
    ext_handlers: Vec<Arc<dyn ExtensionHandler>>,
    #[cfg(feature = "prometheus")]
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
            postgres: None,
            authenticator: None,
            ext_handlers: Vec::new(),
            #[cfg(feature = "prometheus")]
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
    /// with [`crate::metrics::install`], which sets the buckets both binaries share).
    #[cfg(feature = "prometheus")]
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
    /// resume with `Last-Event-ID` gets the task snapshot). A [`crate::MemoryStore`] is its own
    /// log.
    pub fn replay_log(mut self, log: Arc<dyn ReplayLog>) -> Self {
        self.replay_log = Some(log);
        self
    }

    /// Keep tasks, replayable events, push configs, idempotent sends and the push outbox in
    /// `store`'s PostgreSQL database (instead of what the configuration's `store` or
    /// `sqlite_path` names), which several replicas of the agent may share (docs/agent.md,
    /// "Several replicas"). [`AgentServer::store`], when given too, still names the task store.
    #[cfg(feature = "postgres")]
    pub fn postgres(mut self, store: PostgresStore) -> Self {
        self.postgres = Some(store);
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
        missing_features(&cfg)?;
        let base = cfg.base();
        let url = match &cfg.public_url {
            Some(u) => u.trim_end_matches('/').to_string(),
            None => format!("http://{addr}{base}"),
        };
        #[cfg(feature = "grpc")]
        let grpc_at = cfg.grpc.then(|| grpc::authority(&url, addr));
        #[cfg(not(feature = "grpc"))]
        let grpc_at: Option<String> = None;
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
        // The replay log lives with the tasks: in the memory store's entries, in the SQLite
        // file or in the PostgreSQL database. A store given by the embedder gets a log of event
        // numbers only, unless it gave one.
        let backend = stores::Backend::open(&cfg, self.postgres).await?;
        let (store, replay): stores::Tasks = match self.store {
            Some(s) => (s, self.replay_log),
            None => backend.tasks(&cfg)?,
        };
        let authenticator: Arc<dyn Authenticator> = match (self.authenticator, cfg.validate_auth) {
            (Some(a), _) => a,
            (None, false) => Arc::new(NoAuth),
            (None, true) => {
                #[cfg_attr(not(feature = "oidc"), allow(unused_mut))]
                let mut a = CardAuthenticator::new(
                    &card,
                    cfg.api_key.clone(),
                    &cfg.api_key_header,
                    cfg.bearer_token.clone(),
                );
                #[cfg(feature = "oidc")]
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
        let manager =
            TaskManager::new(store, self.handler, ext_handlers, reload::task_limits(&cfg));
        if let Some(log) = replay {
            manager.set_replay_log(log);
        }
        if let Some(log) = backend.send_log(&cfg)? {
            manager.set_send_log(log);
        }
        let push = if card.push_notifications() {
            let push_store = backend.push_configs()?;
            let d = crate::push::Dispatcher::new(
                push_store,
                manager.store().clone(),
                crate::net_guard::NetGuard::new(cfg.allow_local_webhook_urls),
                reload::push_settings(&cfg),
            )
            .map_err(|e| ServeError::Config(e.message.clone()))?;
            manager.set_event_sink(Arc::new(d.clone()));
            Some(d)
        } else {
            None
        };
        // Notifications an earlier run left due are queued before recovery's final ones.
        if let Some(d) = &push {
            d.start().await;
        }
        manager.recover().await;
        backend.start_peers(&manager)?;
        let mut hidden_headers = card.api_key_header_names();
        hidden_headers.push(cfg.api_key_header.to_ascii_lowercase());
        let app = Arc::new(App {
            card,
            settings: arc_swap::ArcSwap::from_pointee(cfg.clone()),
            base,
            manager: manager.clone(),
            authenticator,
            #[cfg(feature = "prometheus")]
            metrics: self.metrics,
            push: push.clone(),
            card_modified: crate::card::http_date(std::time::SystemTime::now()),
            hidden_headers: Arc::new(hidden_headers),
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
        let base2 = app.base.clone();
        let refuse: crate::listen::Refuser =
            Arc::new(move |parts, why| edge_refusal(&base2, parts, why));
        // One handler takes every path: without CORS the router (with its per-request URI copy,
        // route lookup and boxed route future) is skipped; `Direct` finishes answers the way
        // the router's fallback route does.
        let listening = if cfg.cors_allowed_origins.is_empty() {
            crate::listen::serve_service(listener, Direct(app.clone()), cfg.listen(), refuse)?
        } else {
            let router = axum::Router::new()
                .fallback(entry)
                .with_state(app.clone())
                .layer(crate::cors::layer(&cfg.cors_allowed_origins));
            crate::listen::serve(listener, router, cfg.listen(), refuse)?
        };
        tracing::info!(%url, "a2a agent listening");
        Ok(ServerHandle {
            addr,
            url,
            listening,
            manager,
            push,
            app,
        })
    }
}

/// Refuses settings that need a feature this build left out, naming the feature.
fn missing_features(cfg: &AgentConfig) -> Result<(), ServeError> {
    let missing = |setting: &str, feature: &str| {
        Err(ServeError::Config(format!(
            "{setting} is set, but this build of a2ars-agent has no `{feature}` feature \
             (enable it in Cargo.toml)"
        )))
    };
    if !cfg!(feature = "sqlite") && cfg.sqlite_path.is_some() {
        return missing("sqlite_path", "sqlite");
    }
    let choice = cfg.store_choice().map_err(ServeError::Config)?;
    if !cfg!(feature = "postgres") && matches!(choice, crate::store::StoreChoice::Postgres(_)) {
        return missing("store = \"postgres://…\"", "postgres");
    }
    if !cfg!(feature = "grpc") && cfg.grpc {
        return missing("grpc", "grpc");
    }
    if !cfg!(feature = "oidc")
        && cfg.validate_auth
        && (cfg.oidc_issuer.is_some()
            || cfg.oidc_jwks_url.is_some()
            || cfg.oidc_introspection_url.is_some())
    {
        return missing("an oidc_* setting", "oidc");
    }
    Ok(())
}

/// How long open connections may take to finish after the tasks ended on shutdown.
const CONNECTION_DRAIN: Duration = Duration::from_secs(5);

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    url: String,
    listening: crate::listen::Listening,
    manager: Arc<TaskManager>,
    push: Option<Arc<crate::push::Dispatcher>>,
    /// The running agent (its settings, which a reload replaces: [`ServerHandle::reload`]).
    app: Arc<App>,
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
    /// FAILED task. Connections still open a few seconds later are dropped. Push notifications
    /// still queued (every task's final one among them) are delivered until the grace period
    /// ends, and for at least as long as connections get to finish (5 s); what is
    /// then undelivered stays recorded in the store's outbox and is resent at the next start.
    pub async fn shutdown(self) {
        let grace = self.app.cfg().shutdown_grace.get();
        let grace_ends = tokio::time::Instant::now() + grace;
        // Readiness first (`/readyz` answers 503 from here on), then no new connections.
        self.manager.begin_shutdown();
        self.listening.stop_accepting();
        self.manager.shutdown(grace).await;
        let pushes = async {
            let Some(p) = &self.push else { return };
            let deadline = grace_ends.max(tokio::time::Instant::now() + CONNECTION_DRAIN);
            let left = p.drain(deadline).await;
            if left.pending > 0 {
                tracing::warn!(
                    undelivered = left.pending,
                    lost = left.unrecorded,
                    "push: notifications undelivered at shutdown (those recorded in the store's \
                     outbox are resent at the next start; the rest are lost)"
                );
            }
        };
        let connections = async {
            if !self.listening.drain(CONNECTION_DRAIN).await {
                self.listening.kill().await;
            }
        };
        tokio::join!(pushes, connections);
    }
}
