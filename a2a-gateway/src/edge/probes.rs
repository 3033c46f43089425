//! Liveness and readiness: `GET /healthz` answers 200 while the process serves; `GET /readyz`
//! answers 200 when the gateway should get traffic (its store answers within [`STORE_WAIT`]
//! with every migration applied, and it is not shutting down), 503 with the reason otherwise.
//! On PostgreSQL the store's check is one small query (the schema version) within
//! [`STORE_WAIT`], and the answer names the notification listeners that are away (the replica
//! polls meanwhile and stays ready; `a2a_store_listener_up` says the same).
//! Shutdown turns readiness off before it stops accepting connections. No authentication (no
//! data beyond the schema version).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

use crate::state::GatewayState;
use crate::store::MIGRATIONS;
use crate::store::backend::{Holds, PgRegistry, Registry};
use crate::store::pg_schema::PG_MIGRATIONS;

/// Longest a readiness probe waits for the store.
pub const STORE_WAIT: Duration = Duration::from_secs(2);

fn json(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// `GET /healthz`.
pub(crate) async fn healthz() -> Response {
    json(StatusCode::OK, serde_json::json!({"status": "ok"}))
}

/// `GET /readyz`.
pub(crate) async fn readyz(State(st): State<Arc<GatewayState>>) -> Response {
    let not_ready = |reason: String| {
        json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({"status": "not ready", "reason": reason}),
        )
    };
    if st.draining.is_cancelled() {
        return not_ready("shutting down".into());
    }
    if let Registry::Postgres(pg) = &st.registry {
        return postgres(pg, &listeners(&st)).await;
    }
    let store = st.store.clone();
    let read = tokio::task::spawn_blocking(move || store.schema_version());
    let known = MIGRATIONS.len() as i64;
    match tokio::time::timeout(STORE_WAIT, read).await {
        Ok(Ok(Ok(v))) if v == known => json(
            StatusCode::OK,
            serde_json::json!({"status": "ready", "schema": v}),
        ),
        Ok(Ok(Ok(v))) => not_ready(format!("schema version {v}, this release needs {known}")),
        Ok(Ok(Err(e))) => {
            tracing::warn!("readiness: store: {e}");
            not_ready("store unavailable".into())
        }
        Ok(Err(_)) | Err(_) => not_ready("store did not answer in time".into()),
    }
}

/// Readiness on PostgreSQL: a trivial query (the gateway's schema version) within
/// [`STORE_WAIT`]. A listener that is away does not make the replica unready (it polls, and
/// says so in the answer and in `a2a_store_listener_up`); a database that does not answer does.
async fn postgres(pg: &PgRegistry, listeners: &[(&'static str, bool, Option<u64>)]) -> Response {
    let away: Vec<&str> = listeners
        .iter()
        .filter(|(_, up, _)| !up)
        .map(|(n, _, _)| *n)
        .collect();
    let listening = if away.is_empty() {
        serde_json::json!("up")
    } else {
        serde_json::json!({"polling": away})
    };
    let known = PG_MIGRATIONS.len() as i64;
    match pg.ping(STORE_WAIT).await {
        Ok(v) if v == known => json(
            StatusCode::OK,
            serde_json::json!({"status": "ready", "schema": v, "database": "postgres",
                "listener": listening}),
        ),
        Ok(v) => json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({"status": "not ready",
                "reason": format!("schema version {v}, this release needs {known}")}),
        ),
        Err(e) => {
            tracing::warn!("readiness: database: {e}");
            json(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({"status": "not ready",
                    "reason": format!("database unavailable: {e}"), "listener": listening}),
            )
        }
    }
}

/// The PostgreSQL notification listeners of this replica: `(name, connected, polls)`; none on
/// SQLite.
pub(crate) fn listeners(st: &GatewayState) -> Vec<(&'static str, bool, Option<u64>)> {
    let mut out = Vec::new();
    if let Registry::Postgres(pg) = &st.registry {
        out.push(("registry", pg.listening(), Some(pg.polls())));
    }
    if let Holds::Postgres(h) = &st.holds {
        out.push(("holds", h.listening(), Some(h.polls())));
    }
    if let Some(up) = st.replay.listening() {
        out.push(("streams", up, None));
    }
    out
}
