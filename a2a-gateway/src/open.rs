//! The gateway on the database its `database` setting names: a SQLite file (embedded, as
//! [`Gateway::new`]) or a PostgreSQL URL ([`Gateway::on_postgres`]), where every store is on
//! one pool and nothing is kept in a file (docs/replicas.md, "Topology").

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use a2a_agent::listen::Listening;
use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use http::{StatusCode, header};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::app::{Gateway, ServerHandle};
use crate::config::Config;
use crate::protocol::errors::Refusal;
use crate::store::Store;
use crate::store::backend::{Audit, Holds, PgRegistry, Records, Registry, Shared, StreamBounds};

impl Gateway {
    /// A gateway with every store on the PostgreSQL database `config.database` names
    /// (`postgres://…`), on one pool of `config.pool_options()`: the registry, policies and PII
    /// rules, task records and idempotent sends, the audit, approvals and kills, the page-token
    /// key, console sessions and card trust, and the stream resume events. Applies the
    /// migrations (once across replicas) and starts the notification listeners. No SQLite file
    /// is opened or made: the [`Store`] the state holds is an empty in-memory one that nothing
    /// on this path keeps data in. Replicas started with the same URL behave as one gateway;
    /// give them the same `delegation_key` and card key secret too.
    pub async fn on_postgres(config: Config) -> Result<Gateway, String> {
        open(config).await.map_err(|e| e.1)
    }
}

/// A start on PostgreSQL that failed: whether the database could not be reached (worth
/// trying again), and why.
struct Failed(bool, String);

/// [`Gateway::on_postgres`], saying whether a failure is the database being unreachable.
async fn open(config: Config) -> Result<Gateway, Failed> {
    let Some(url) = config.postgres_url().map(str::to_owned) else {
        return Err(Failed(
            false,
            format!(
                "database {} is not a PostgreSQL URL (postgres://…)",
                config.database.display()
            ),
        ));
    };
    let fail = |what: &str, e: crate::store::StoreError| {
        Failed(e.is_unavailable(), format!("PostgreSQL {what}: {e}"))
    };
    let other = |e: String| Failed(false, e);
    let pg = PgRegistry::connect(&url, &config.pool_options())
        .await
        .map_err(|e| fail("database", e))?;
    let holds = pg.holds().map_err(|e| fail("approvals", e))?;
    let streams = pg
        .stream_events(StreamBounds::default())
        .map_err(|e| fail("stream events", e))?;
    let shared = pg.shared().await.map_err(|e| fail("shared state", e))?;
    let nothing = Store::open_in_memory().map_err(|e| other(e.to_string()))?;
    Gateway::with_backends(
        config,
        nothing,
        Registry::Postgres(pg.clone()),
        Records::Postgres(pg.records()),
        Audit::Postgres(pg.audit()),
        Holds::Postgres(holds),
    )
    .map_err(other)?
    .with_shared(Shared::Postgres(shared))
    .await
    .map_err(other)?
    .with_stream_events(streams)
    .map_err(other)
}

/// First wait before connecting again; each failed attempt doubles it, up to [`RETRY_MAX`].
pub const RETRY_FIRST: Duration = Duration::from_millis(250);
/// Longest wait between two attempts to reach the database at start.
pub const RETRY_MAX: Duration = Duration::from_secs(5);

/// A replica serving before its database could be reached (see [`Gateway::serve_on_postgres`]).
/// Dropping it stops the attempts and the listener.
pub struct Starting {
    addr: SocketAddr,
    /// Served at once: the database could be reached on the first attempt.
    served: Option<ServerHandle>,
    listening: Option<Listening>,
    connect: Option<tokio::task::JoinHandle<Result<Gateway, String>>>,
    router: Arc<OnceLock<Router>>,
}

impl Gateway {
    /// Serves `listener` at once with the gateway on the PostgreSQL database `config.database`
    /// names ([`Gateway::on_postgres`]), also while that database cannot be reached: until it
    /// can (and the migrations ran, once across replicas under their advisory lock), `/healthz`
    /// answers 200, `/readyz` 503 with the reason, and every other request 503
    /// `a2a_store_unavailable` in the caller's form (`Retry-After: 1`). The attempts go on
    /// with a backoff ([`RETRY_FIRST`] doubling up to [`RETRY_MAX`]), each failure logged
    /// once; [`Starting::ready`] waits for the gateway. A failure other than an unreachable
    /// database (a refused login, a database migrated by a newer release) ends the attempts
    /// with that error.
    pub async fn serve_on_postgres(
        mut config: Config,
        listener: TcpListener,
    ) -> std::io::Result<Starting> {
        let addr = listener.local_addr()?;
        if config.public_url.is_none() && config.listen.port() == 0 {
            config.listen = addr;
        }
        let router = Arc::new(OnceLock::new());
        // The first attempt before listening: a reachable database is served as before.
        let status = match open(config.clone()).await {
            Ok(g) => {
                return Ok(Starting {
                    addr,
                    served: Some(g.serve(listener).await?),
                    listening: None,
                    connect: None,
                    router,
                });
            }
            Err(Failed(false, e)) => return Err(std::io::Error::other(e)),
            Err(Failed(true, e)) => {
                tracing::warn!(
                    attempt = 1,
                    "the database cannot be reached yet: {e}; serving 503 until it can"
                );
                format!("database unavailable: {e} (attempt 1)")
            }
        };
        let status = Arc::new(Mutex::new(status));
        let waiting = waiting(config.serve_v1, router.clone(), status.clone());
        let listening = a2a_agent::listen::serve(
            listener,
            waiting,
            config.listen(),
            crate::app::refuser(config.serve_v1),
        )?;
        let connect = tokio::spawn(attempts(config, status));
        Ok(Starting {
            addr,
            served: None,
            listening: Some(listening),
            connect: Some(connect),
            router,
        })
    }
}

impl Starting {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits until the database can be reached, then serves the gateway on the same listener:
    /// the running gateway, or the error that ended the attempts (the listener is stopped).
    pub async fn ready(mut self) -> Result<ServerHandle, String> {
        if let Some(h) = self.served.take() {
            return Ok(h);
        }
        let joined = match self.connect.as_mut() {
            Some(c) => c.await,
            None => return Err("already started".into()),
        };
        self.connect = None;
        let gateway = joined.map_err(|e| format!("connecting to the database: {e}"))??;
        let listening = self.listening.take().ok_or("already started")?;
        let _ = self.router.set(gateway.router());
        Ok(gateway.started(self.addr, listening))
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        if let Some(c) = &self.connect {
            c.abort();
        }
        if let Some(l) = &self.listening {
            l.stop_accepting();
        }
    }
}

/// Connects until the database can be reached (see [`Gateway::serve_on_postgres`]), saying
/// in `status` why it cannot yet.
async fn attempts(config: Config, status: Arc<Mutex<String>>) -> Result<Gateway, String> {
    let mut wait = RETRY_FIRST;
    let mut attempt = 2u64;
    loop {
        tokio::time::sleep(wait).await;
        match open(config.clone()).await {
            Ok(g) => {
                tracing::info!(attempt, "the database can be reached: serving");
                return Ok(g);
            }
            Err(Failed(true, e)) => {
                wait = (wait * 2).min(RETRY_MAX);
                tracing::warn!(
                    attempt,
                    next_in_ms = wait.as_millis() as u64,
                    "the database cannot be reached yet: {e}"
                );
                if let Ok(mut s) = status.lock() {
                    *s = format!(
                        "database unavailable: {e} (attempt {attempt}; next in {} ms)",
                        wait.as_millis()
                    );
                }
                attempt += 1;
            }
            Err(Failed(false, e)) => {
                tracing::error!("the gateway cannot start on its database: {e}");
                return Err(e);
            }
        }
    }
}

/// The router while the database cannot be reached: the gateway's own once `router` is set.
fn waiting(serve_v1: bool, router: Arc<OnceLock<Router>>, status: Arc<Mutex<String>>) -> Router {
    Router::new().fallback(move |req: Request| {
        let (router, status) = (router.clone(), status.clone());
        async move {
            if let Some(r) = router.get() {
                return match r.clone().oneshot(req).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                };
            }
            match req.uri().path() {
                "/healthz" => crate::edge::probes::healthz().await,
                "/readyz" => {
                    let reason = status.lock().map(|s| s.clone()).unwrap_or_default();
                    let body = serde_json::json!({"status": "not ready", "reason": reason});
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        [
                            (header::CONTENT_TYPE, "application/json"),
                            (header::CACHE_CONTROL, "no-store"),
                        ],
                        body.to_string(),
                    )
                        .into_response()
                }
                _ => {
                    let (parts, _) = req.into_parts();
                    let mut resp = crate::edge::wire::edge_refusal_parts(
                        serve_v1,
                        &parts,
                        &Refusal::store_unavailable(),
                    );
                    resp.headers_mut()
                        .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                    resp
                }
            }
        }
    })
}
