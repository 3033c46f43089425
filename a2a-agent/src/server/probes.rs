//! Liveness and readiness, at the root whatever the base path: `GET /healthz` answers 200 while
//! the process serves; `GET /readyz` answers 200 when the agent should get traffic (its task
//! store answers a read within [`STORE_WAIT`], it is not shutting down) and 503 with the
//! reason otherwise. Shutdown turns readiness off before it stops accepting connections, so a
//! load balancer that probes stops sending work first. No authentication (no task data).

use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};

use crate::state::App;

/// Longest a readiness probe waits for the task store.
pub const STORE_WAIT: Duration = Duration::from_secs(2);

fn json(status: StatusCode, body: serde_json::Value) -> Response {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `/healthz` (`ready`: false) or `/readyz`.
pub(crate) async fn probe(app: &App, ready: bool) -> Response {
    if !ready {
        return json(StatusCode::OK, serde_json::json!({"status": "ok"}));
    }
    let not_ready = |reason: &str| {
        json(
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({"status": "not ready", "reason": reason}),
        )
    };
    if app.manager.is_shutting_down() {
        return not_ready("shutting down");
    }
    let read = app.manager.store().get("a2a-readiness-probe");
    match tokio::time::timeout(STORE_WAIT, read).await {
        Ok(Ok(_)) => json(StatusCode::OK, serde_json::json!({"status": "ready"})),
        Ok(Err(e)) => {
            tracing::warn!("readiness: task store: {e}");
            not_ready("task store unavailable")
        }
        Err(_) => not_ready("task store did not answer in time"),
    }
}
