//! Without CORS the server answers through a plain service instead of the axum router: its
//! answers are finished as the router's fallback route finishes them (`Content-Length` from an
//! exact body size, no body on HEAD), so both servers answer alike.

use crate::common::*;
use a2a_agent::config::AgentConfig;
use serde_json::json;

/// (status, content-length, content-type, body) of a request, without the per-request headers.
async fn answer(
    url: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, Option<String>, Option<String>, Vec<u8>) {
    let mut r = client()
        .request(method, format!("{url}{path}"))
        .header("A2A-Version", "1.0");
    if let Some(b) = body {
        r = r.json(&b);
    }
    let r = r.send().await.unwrap();
    let h = |n: &str| r.headers().get(n).map(|v| v.to_str().unwrap().to_string());
    let (status, len, ct) = (r.status().as_u16(), h("content-length"), h("content-type"));
    (status, len, ct, r.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn the_plain_service_answers_as_the_router_does() {
    let direct = echo(open_config()).await;
    let routed = echo(AgentConfig {
        cors_allowed_origins: vec!["http://ok.example".into()],
        ..open_config()
    })
    .await;
    let bad = json!({"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}});
    let cases = [
        (reqwest::Method::GET, "/.well-known/agent-card.json", None),
        (reqwest::Method::HEAD, "/.well-known/agent-card.json", None),
        (reqwest::Method::HEAD, "/tasks/nope", None),
        (reqwest::Method::GET, "/tasks/nope", None),
        (reqwest::Method::POST, "/", Some(bad)),
        (reqwest::Method::DELETE, "/message:send", None),
    ];
    for (method, path, body) in cases {
        let a = answer(direct.url(), method.clone(), path, body.clone()).await;
        let b = answer(routed.url(), method.clone(), path, body).await;
        let what = format!("{method} {path}");
        if path.contains("agent-card") && method == reqwest::Method::GET {
            // The cards name their own server's URL: same form, not the same bytes.
            assert_eq!((a.0, &a.2), (b.0, &b.2), "{what}");
        } else {
            assert_eq!(a, b, "{what}");
        }
        for (_, len, _, bytes) in [&a, &b] {
            let len: usize = len.as_deref().expect("Content-Length").parse().unwrap();
            if method == reqwest::Method::HEAD {
                assert!(bytes.is_empty() && len > 0, "{what}: the length, no body");
            } else {
                assert_eq!(len, bytes.len(), "{what}");
            }
        }
    }
    direct.shutdown().await;
    routed.shutdown().await;
}
