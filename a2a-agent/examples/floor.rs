//! The no-A2A floor of the agent benchmark (`a2a-agent/bench/run.sh`): a plain axum server that
//! reads each POST body and answers the bytes the echo agent would answer, with no parsing,
//! no task, no store. What the agent costs above this is the cost of A2A in this runtime.
//!
//! It uses the same HTTP stack (axum on hyper, HTTP/1.1 keep-alive), the same tokio runtime
//! and, with the `jemalloc` feature (on by default), the same allocator as the `a2a-agent`
//! binary. Run: `cargo run --release -p a2ars-agent --example floor` (prints `LISTENING <url>`).

#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use axum::Router;
use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::post;

/// A completed echo task as the agent answers it over JSON-RPC (same shape and size).
const JSONRPC: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c11","contextId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c12","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-03T12:00:00.000Z"},"artifacts":[{"artifactId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c13","parts":[{"text":"hello bench"}]}],"history":[{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}],"taskId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c11","contextId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c12"}]}}}"#;

/// The same task over HTTP+JSON (`{"task": ...}`).
const REST: &str = r#"{"task":{"id":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c11","contextId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c12","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-03T12:00:00.000Z"},"artifacts":[{"artifactId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c13","parts":[{"text":"hello bench"}]}],"history":[{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello bench"}],"taskId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c11","contextId":"019a1c2e-7d3b-7c41-9a52-3f0e8b6d2c12"}]}}"#;

async fn jsonrpc(body: Bytes) -> impl IntoResponse {
    let _ = body.len();
    ([(CONTENT_TYPE, "application/json")], JSONRPC)
}

async fn rest(body: Bytes) -> impl IntoResponse {
    let _ = body.len();
    ([(CONTENT_TYPE, "application/a2a+json")], REST)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let app = Router::new()
        .route("/", post(jsonrpc))
        .route("/message:send", post(rest));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("LISTENING http://{}", listener.local_addr()?);
    axum::serve(listener, app).await
}
