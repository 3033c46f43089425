//! The hops' peer client (`src/peer_http.rs`, hyper-util's pooled client used directly): an
//! `https` JSON-RPC peer reached with the `peer_ca_file` root (TLS, ALPN, the checked resolver
//! by host name), a peer's redirect answered, never followed, and a peer that stops in the
//! middle of its answer's body cut at `peer_timeout_secs`; a peer's SSE event larger than the
//! stream limit refused while it grows.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::*;
use a2a_agent::{AgentCard, AgentConfig, AgentServer, Reply, RequestContext, handler_fn};
use a2a_gateway::errors::Version;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::response::Response;
use conformance::tls::{TestCa, TlsProxy};
use futures::StreamExt;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_jsonrpc_peer_is_called_with_the_extra_root() {
    let ca = TestCa::new().unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = TlsProxy::start(&ca, l.local_addr().unwrap()).await.unwrap();
    let url = format!("https://localhost:{}", proxy.addr.port());
    let card = AgentCard::from_json(json!({
        "name": "tls", "description": "JSON-RPC over TLS", "version": "1",
        "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": [],
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0"}]
    }))
    .unwrap();
    let handler = handler_fn(|ctx: RequestContext| async move {
        Ok(Reply::Text(format!("done: {}", ctx.text())))
    });
    let cfg = AgentConfig {
        validate_auth: false,
        ..AgentConfig::default()
    };
    let _agent = AgentServer::new(card, handler)
        .config(cfg)
        .serve(l)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("ca.pem");
    std::fs::write(&pem, &ca.ca_pem).unwrap();
    let env = env_with(Version::V1, |c| c.peer_ca_file = Some(pem.clone())).await;
    env.register("ws1", "tls", &url, None);
    for text in ["one", "two"] {
        // Twice: the second call goes over the pooled connection.
        let (s, b) = env.rpc("/a2a/tls", Some("1.0"), send10(text)).await;
        assert_eq!(s, 200, "{b}");
        let task = &b["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{b}");
        assert_eq!(
            task["status"]["message"]["parts"][0]["text"],
            format!("done: {text}"),
            "{b}"
        );
    }
    // A 0.3 caller through the same peer: the answer translated back.
    let (s, b) = env.rpc("/a2a/tls", Some("0.3"), send03("three")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["result"]["kind"], "task", "{b}");
    assert_eq!(b["result"]["status"]["state"], "completed", "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_redirect_is_answered_not_followed() {
    // Where the redirect points: a server that counts what reaches it.
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let target = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target_url = format!("http://{}/", target.local_addr().unwrap());
    let app = Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { axum::Json(json!({"jsonrpc": "2.0", "id": "1", "result": {}})) }
    });
    let target_task = tokio::spawn(async move {
        let _ = axum::serve(target, app).await;
    });
    let location = target_url.clone();
    let (url, peer_task) = card_peer(move || {
        Response::builder()
            .status(307)
            .header("location", location.as_str())
            .body(Body::empty())
            .unwrap()
    })
    .await;
    let env = env(Version::V1).await;
    env.register("ws1", "redir", &url, None);
    let (_, b) = env.rpc("/a2a/redir", Some("1.0"), send10("hi")).await;
    // The 307 itself is the peer's answer: no JSON in it, so the hop is refused.
    assert_eq!(gw_code(&b), "a2a_upstream_content_type", "{b}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the redirect was followed");
    peer_task.abort();
    target_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stops_mid_answer_is_cut_at_the_peer_timeout() {
    // The head and half of a 200-byte body, then nothing for 30 s.
    let (url, peer_task) = card_peer(|| {
        let body = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":"1","result":"#,
        ))])
        .chain(futures::stream::once(async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(Bytes::from_static(b"{}}"))
        }));
        Response::builder()
            .header("content-type", "application/json")
            .header("content-length", "200")
            .body(Body::from_stream(body))
            .unwrap()
    })
    .await;
    let env = env_with(Version::V1, |c| c.peer_timeout_secs = 1).await;
    env.register("ws1", "slow", &url, None);
    let started = Instant::now();
    let (_, b) = tokio::time::timeout(
        Duration::from_secs(25),
        env.rpc("/a2a/slow", Some("1.0"), send10("hi")),
    )
    .await
    .expect("the hop ends at the peer timeout, not with the peer");
    assert_eq!(gw_code(&b), "a2a_peer_timeout", "{b}");
    assert!(started.elapsed() < Duration::from_secs(25));
    peer_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_event_larger_than_the_stream_limit_is_refused_as_it_grows() {
    // One event's first 4 000 bytes, then nothing for 30 s: the event never completes.
    let (url, peer_task) = card_peer(|| {
        let big = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":\"{}",
            "x".repeat(4000)
        );
        let body = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(big))]).chain(
            futures::stream::once(async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(Bytes::from_static(b"\"}\n\n"))
            }),
        );
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(body))
            .unwrap()
    })
    .await;
    let env = env(Version::V1).await;
    env.register("ws1", "big", &url, None);
    env.store
        .set_workspace_limits("ws1", None, Some(1000), None)
        .unwrap();
    let mut req = send10("big");
    req["method"] = json!("SendStreamingMessage");
    let (_, _, events) = tokio::time::timeout(
        Duration::from_secs(25),
        env.sse("/a2a/big", Some("1.0"), req),
    )
    .await
    .expect("refused before the event ends");
    // Not the stall timer's a2a_peer_timeout (5 s of silence): the limit, as the event grew.
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(gw_code(&events[0]), "a2a_stream_too_large", "{events:?}");
    peer_task.abort();
}
