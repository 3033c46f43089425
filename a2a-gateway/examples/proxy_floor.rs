//! The no-A2A floor of the gateway benchmark (`a2a-gateway/bench/run.sh`): a plain reverse proxy
//! that forwards every request to one target and streams the answer back, reading nothing.
//! No keys, no parsing, no translation, no audit, no store. What the gateway costs above this
//! is the cost of being an A2A gateway; what this costs above calling the agent directly is the
//! cost of any extra HTTP hop on the same machine (the ceiling of any gateway's ratio there).
//!
//! It uses the gateway's HTTP stack: axum on hyper for the caller side, the same pooled
//! `reqwest` client kind (keep-alive, TCP_NODELAY) for the peer side, the same tokio runtime
//! and, with the `jemalloc` feature (on by default), the same allocator as `a2a-gateway`.
//!
//! Run: `cargo run --release -p a2ars-gateway --example proxy_floor -- http://127.0.0.1:PORT`
//! (prints `LISTENING <url>`; loopback only).

#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;

#[derive(Clone)]
struct Upstream {
    client: reqwest::Client,
    base: String,
}

/// Headers passed on both ways; everything else (hop-by-hop, host, length) is left to the stacks.
const PASSED: [header::HeaderName; 3] =
    [header::CONTENT_TYPE, header::ACCEPT, header::AUTHORIZATION];

async fn forward(State(up): State<Upstream>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut headers = HeaderMap::new();
    for h in PASSED {
        if let Some(v) = parts.headers.get(&h) {
            headers.insert(h, v.clone());
        }
    }
    if let Some(v) = parts.headers.get("a2a-version") {
        headers.insert("a2a-version", v.clone());
    }
    let body = reqwest::Body::wrap_stream(body.into_data_stream());
    let sent = up
        .client
        .request(parts.method, format!("{}{path}", up.base))
        .headers(headers)
        .body(body)
        .send()
        .await;
    match sent {
        Ok(answer) => {
            let status = answer.status();
            let ct = answer.headers().get(header::CONTENT_TYPE).cloned();
            let mut resp = Response::new(Body::from_stream(answer.bytes_stream()));
            *resp.status_mut() = status;
            if let Some(ct) = ct {
                resp.headers_mut().insert(header::CONTENT_TYPE, ct);
            }
            resp
        }
        Err(e) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let base = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: proxy_floor <target base URL>"))?;
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let up = Upstream {
        client,
        base: base.trim_end_matches('/').to_owned(),
    };
    let app = Router::new().fallback(forward).with_state(up);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("LISTENING http://{}", listener.local_addr()?);
    // TCP_NODELAY on the caller side too (as the gateway): SSE events are small writes.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
