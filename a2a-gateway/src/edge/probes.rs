//! Liveness and readiness: `GET /healthz` answers 200 while the process serves; `GET /readyz`
//! answers 200 when the gateway should get traffic (its store answers within [`STORE_WAIT`]
//! with every migration applied, and it is not shutting down), 503 with the reason otherwise.
//! Shutdown turns readiness off before it stops accepting connections. No authentication (no
//! data beyond the schema version).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

use crate::state::GatewayState;
use crate::store::MIGRATIONS;

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
