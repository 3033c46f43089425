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

#[cfg(test)]
mod tests {
    use tower::ServiceExt;

    use crate::app::Gateway;
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
