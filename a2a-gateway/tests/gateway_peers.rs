//! End-to-end tests of the governed card per version (ETag, 304), interface selection and URL
//! checks against live peers, and upstream failures.

use crate::common;

use crate::common::echo::start_echo;
use a2a_gateway::errors::{GATEWAY_DOMAIN, Version};
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn governed_card_per_version_with_etag() {
    let env = env(Version::V1).await;
    let peer_url = env.peers[0].url.clone();
    env.register("ws1", "filtered", &peer_url, Some(vec!["echo"]));
    let get = |path: &str, version: Option<&str>, etag: Option<&str>, key: &str| {
        let mut r = env.http.get(env.url(path)).bearer_auth(key);
        if let Some(v) = version {
            r = r.header("A2A-Version", v);
        }
        if let Some(e) = etag {
            r = r.header("If-None-Match", e);
        }
        r.send()
    };
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["cache-control"], "private, max-age=60");
    assert!(
        resp.headers()["vary"]
            .to_str()
            .unwrap()
            .contains("A2A-Version")
    );
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    let card: Value = resp.json().await.unwrap();
    let base = env.url("/a2a/filtered");
    assert_eq!(
        card["supportedInterfaces"][0],
        json!({"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})
    );
    assert_eq!(card["supportedInterfaces"][1]["protocolVersion"], "0.3");
    assert_eq!(
        card["supportedInterfaces"][2]["protocolBinding"],
        "HTTP+JSON"
    );
    assert_eq!(card["url"], base.as_str());
    assert_eq!(card["protocolVersion"], "0.3");
    assert_eq!(card["capabilities"]["extendedAgentCard"], false);
    assert!(card.get("signatures").is_none());
    assert_eq!(card["skills"].as_array().unwrap().len(), 1);
    assert_eq!(card["skills"][0]["id"], "echo");
    assert_eq!(
        card["securitySchemes"]["a2aGatewayKey"]["httpAuthSecurityScheme"]["scheme"],
        "bearer"
    );
    // 304 with the tag; 401 wins over the tag.
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        None,
        Some(&etag),
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 304);
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        None,
        Some(&etag),
        "bad",
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // 0.3 card: pure 0.3, different tag.
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        Some("0.3"),
        None,
        &env.key,
    )
    .await
    .unwrap();
    let etag03 = resp.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(etag03, etag);
    let c03: Value = resp.json().await.unwrap();
    assert!(c03.get("supportedInterfaces").is_none());
    assert_eq!(c03["preferredTransport"], "JSONRPC");
    assert_eq!(c03["supportsAuthenticatedExtendedCard"], false);
    assert_eq!(
        c03["securitySchemes"]["a2aGatewayKey"],
        json!({"type":"http","scheme":"bearer","description":"Workspace API key of the A2A gateway"})
    );
    assert_eq!(c03["security"], json!([{"a2aGatewayKey": []}]));
    // Unfiltered agent: both skills; different tag for a different card.
    let resp = get(
        "/a2a/echo/.well-known/agent-card.json",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_ne!(resp.headers()["etag"].to_str().unwrap(), etag);
    let c: Value = resp.json().await.unwrap();
    assert_eq!(c["skills"].as_array().unwrap().len(), 2);
    // Bad version; query parameter does not pick the card version.
    let resp = get(
        "/a2a/echo/.well-known/agent-card.json",
        Some("3.1"),
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let resp = get(
        "/a2a/echo/.well-known/agent-card.json?A2A-Version=0.3&refresh=true",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    let c: Value = resp.json().await.unwrap();
    assert!(c["supportedInterfaces"].is_array());
    // Missing agent: 404; 1.0 clients get google.rpc.Status, header-less get the legacy form.
    let resp = get(
        "/a2a/ghost/.well-known/agent-card.json",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["code"], "a2a_agent_not_found");
    let resp = get(
        "/a2a/ghost/.well-known/agent-card.json",
        Some("1.0"),
        None,
        &env.key,
    )
    .await
    .unwrap();
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["status"], "NOT_FOUND");
    assert_eq!(b["error"]["details"][0]["domain"], GATEWAY_DOMAIN);
    env.stop().await;
}

#[tokio::test]
async fn interface_selection_and_url_checks_against_real_peers() {
    let env = env(Version::V1).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let grpc = json!({"name":"g","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url":format!("127.0.0.1:{port}"),"protocolBinding":"GRPC","protocolVersion":"0.3"},
                               {"url":format!("http://127.0.0.1:{port}/"),"protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}]});
    let grpc_peer = start_echo(l, Version::V1, Some(grpc)).await.unwrap();
    env.register("ws1", "grpc", &grpc_peer.url, None);
    let (s, b) = env.rpc("/a2a/grpc", None, send03("x")).await;
    assert_eq!(s, 200);
    assert_eq!(gw_code(&b), "a2a_peer_protocol_unsupported");
    let msg = b["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("gRPC is supported at A2A 1.0 only") && msg.contains("supportedInterfaces[1]"),
        "{msg}"
    );

    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere = json!({"name":"e","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url":"http://localhost:1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]});
    let peer = start_echo(l, Version::V1, Some(elsewhere)).await.unwrap();
    env.register("ws1", "elsewhere", &peer.url, None);
    let (_, b) = env.rpc("/a2a/elsewhere", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("registered endpoint")
    );

    // Registered endpoints at internal addresses are refused outside development mode.
    let prod = env_with(Version::V1, |c| c.dev_mode = false).await;
    let (_, b) = prod.rpc("/a2a/echo", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused", "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("plain http")
    );
    grpc_peer.shutdown().await;
    peer.shutdown().await;
    prod.stop().await;
    env.stop().await;
}

async fn html_peer() -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::{get, post};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let card = crate::common::echo::echo_card(&url, Version::V1);
    let app = axum::Router::new()
        .route("/.well-known/agent-card.json", get(move || async move { axum::Json(card.clone()) }))
        .route(
            "/",
            post(|body: String| async move {
                if body.contains("SendStreamingMessage") {
                    ([("content-type", "application/json")], "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"weird\":true}}").into_response()
                } else if body.contains("GetTask") {
                    ([("content-type", "application/json")], "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"error\":{\"code\":-32009,\"message\":\"no\"}}").into_response()
                } else if body.contains("CancelTask") {
                    ([("content-type", "application/json")], "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"task\":1,\"x\":2}}").into_response()
                } else {
                    ([("content-type", "text/html")], "<html>oops</html>").into_response()
                }
            }),
        );
    use axum::response::IntoResponse;
    let h = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, h)
}

#[tokio::test]
async fn upstream_failures() {
    let env = env(Version::V1).await;
    let (url, h) = html_peer().await;
    env.register("ws1", "html", &url, None);
    bind_task(&env, &url, "t", "html");
    let (_, b) = env.rpc("/a2a/html", Some("1.0"), send10("x")).await;
    assert_eq!(gw_code(&b), "a2a_upstream_content_type", "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("text/html")
    );
    let (_, b) = env
        .rpc(
            "/a2a/html",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"1","method":"GetTask","params":{"id":"t"}}),
        )
        .await;
    assert_eq!(gw_code(&b), "a2a_peer_version_not_supported");
    assert!(b["error"]["message"].as_str().unwrap().contains("html"));
    let (_, b) = env
        .rpc(
            "/a2a/html",
            None,
            json!({"jsonrpc":"2.0","id":"1","method":"tasks/cancel","params":{"id":"t"}}),
        )
        .await;
    assert_eq!(b["error"]["code"], -32006, "{b}");
    assert_eq!(gw_code(&b), "a2a_upstream_invalid_response");
    // An unreachable peer.
    env.register("ws1", "down", "http://127.0.0.1:9/", None);
    let (_, b) = env.rpc("/a2a/down", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_card_unavailable", "{b}");
    h.abort();
    env.stop().await;
}
