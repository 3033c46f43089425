//! Delegated authorization through `X-A2A-Delegated-Authorization` (DVARA:
//! `X-Dvara-Delegated-Authorization`), DVARA's `x-dvara-*` header names, the JSON-RPC code
//! label of `a2a_requests_total` and `a2a_peer_credential_rejected`, against a real gateway
//! in its default mode and in DVARA-compatible mode.

use crate::common;
use crate::dvara_compat::dvara;

use std::sync::{Arc, Mutex};

use a2a_gateway::config::Config;
use a2a_gateway::errors::Version;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use common::echo::echo_card;
use common::*;
use serde_json::{Value, json};

async fn gateway(dvara_mode: bool) -> Env {
    env_with(Version::V1, |c: &mut Config| {
        if dvara_mode {
            dvara(c);
        }
    })
    .await
}

fn header(peer: &common::echo::EchoAgent, name: &str) -> Option<String> {
    peer.last_headers()
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

#[tokio::test]
async fn delegated_authorization_is_checked_and_passed_to_the_peer() {
    for (dvara_mode, name) in [
        (false, "X-A2A-Delegated-Authorization"),
        (true, "X-Dvara-Delegated-Authorization"),
    ] {
        let env = gateway(dvara_mode).await;
        let send = |value: &'static str| {
            env.http
                .post(env.url("/a2a/echo"))
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .header(name, value)
                .bearer_auth(&env.key)
                .body(send10("hi").to_string())
                .send()
        };
        let r = send("Bearer user-token-1").await.unwrap();
        assert_eq!(r.status(), 200);
        let b: Value = r.json().await.unwrap();
        assert!(b.get("result").is_some(), "{b}");
        let peer = &env.peers[0];
        assert_eq!(
            header(peer, "x-a2a-delegated-authorization").as_deref(),
            Some("Bearer user-token-1")
        );
        // The agent's own credential is still its Authorization.
        assert_eq!(
            header(peer, "authorization").as_deref(),
            Some("Bearer peer-cred")
        );
        let dvara_name = header(peer, "x-dvara-delegated-authorization");
        assert_eq!(dvara_name.is_some(), dvara_mode, "{dvara_name:?}");
        // Not `<scheme> <credentials>`: refused at the edge, nothing reaches the peer.
        for bad in ["user-token-1", "Bearer ", "B(a)d token"] {
            let r = send(bad).await.unwrap();
            assert_eq!(r.status(), 400, "{bad}");
            let b: Value = r.json().await.unwrap();
            assert_eq!(gw_code(&b), "a2a_delegated_authorization_invalid", "{b}");
        }
        // Both names with different values: refused.
        let r = env
            .http
            .post(env.url("/a2a/echo"))
            .header("content-type", "application/json")
            .header("X-A2A-Delegated-Authorization", "Bearer a")
            .header("X-Dvara-Delegated-Authorization", "Bearer b")
            .bearer_auth(&env.key)
            .body(send03("hi").to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let b: Value = r.json().await.unwrap();
        assert_eq!(gw_code(&b), "a2a_header_conflict", "{b}");
        env.stop().await;
    }
}

/// A peer whose card's name says which delegated authorization fetched it, counting fetches.
async fn per_user_card_peer(fetches: Arc<Mutex<u32>>) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let base = url.clone();
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        get(move |h: HeaderMap| {
            *fetches.lock().unwrap() += 1;
            let user = h
                .get("x-a2a-delegated-authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("nobody")
                .to_owned();
            let mut card = echo_card(&base, Version::V03);
            card["name"] = json!(format!("card for {user}"));
            async move { axum::Json(card) }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    url
}

#[tokio::test]
async fn the_card_varies_and_is_cached_by_delegated_authorization() {
    for (dvara_mode, name) in [
        (false, "X-A2A-Delegated-Authorization"),
        (true, "X-Dvara-Delegated-Authorization"),
    ] {
        let env = gateway(dvara_mode).await;
        let fetches = Arc::new(Mutex::new(0));
        let url = per_user_card_peer(fetches.clone()).await;
        env.register("ws1", "users", &url, None);
        let card = |user: Option<&'static str>| {
            let mut req = env.v1(
                reqwest::Method::GET,
                "/a2a/users/.well-known/agent-card.json",
            );
            if let Some(u) = user {
                req = req.header(name, u);
            }
            req.send()
        };
        let r = card(Some("Bearer alice")).await.unwrap();
        let vary = r.headers()["vary"].to_str().unwrap().to_owned();
        assert!(vary.contains("X-A2A-Delegated-Authorization"), "{vary}");
        assert!(vary.contains("X-Dvara-Delegated-Authorization"), "{vary}");
        // With dvara_headers the trust header comes under DVARA's name too.
        assert!(r.headers().contains_key("x-a2a-signature-trust"));
        assert_eq!(
            r.headers().contains_key("x-dvara-signature-trust"),
            dvara_mode
        );
        let b: Value = r.json().await.unwrap();
        assert_eq!(b["name"], "card for Bearer alice");
        let b: Value = card(Some("Bearer bob"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(b["name"], "card for Bearer bob");
        let b: Value = card(None).await.unwrap().json().await.unwrap();
        assert_eq!(b["name"], "card for nobody");
        assert_eq!(*fetches.lock().unwrap(), 3);
        // Each is cached under its own key: no new fetch.
        let b: Value = card(Some("Bearer alice"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(b["name"], "card for Bearer alice");
        assert_eq!(*fetches.lock().unwrap(), 3);
        env.stop().await;
    }
}

#[tokio::test]
async fn a_peer_rejecting_the_agent_credential_has_its_own_code_and_the_metric_its_rpc_code() {
    for dvara_mode in [false, true] {
        let env = gateway(dvara_mode).await;
        let (unauthorized, _) = card_peer(|| StatusCode::UNAUTHORIZED.into_response()).await;
        let (forbidden, _) = card_peer(|| (StatusCode::FORBIDDEN, "no").into_response()).await;
        let (a2a_403, _) = card_peer(|| {
            (
                StatusCode::FORBIDDEN,
                axum::Json(json!({"jsonrpc": "2.0", "id": "1",
                    "error": {"code": -32001, "message": "Task not found"}})),
            )
                .into_response()
        })
        .await;
        env.register("ws1", "p401", &unauthorized, None);
        env.register("ws1", "p403", &forbidden, None);
        env.register("ws1", "a403", &a2a_403, None);
        for agent in ["p401", "p403"] {
            let (s, b) = env
                .rpc(&format!("/a2a/{agent}"), Some("1.0"), send10("x"))
                .await;
            assert_eq!(s, 200);
            assert_eq!(gw_code(&b), "a2a_peer_credential_rejected", "{b}");
            assert!(
                b["error"]["message"].as_str().unwrap().contains(agent),
                "{b}"
            );
        }
        // An A2A error answered with 403 is the peer's error, as before.
        let (_, b) = env.rpc("/a2a/a403", Some("1.0"), send10("x")).await;
        assert_eq!(b["error"]["code"], -32001, "{b}");
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("ok")).await;
        assert!(b.get("result").is_some(), "{b}");
        let text = env
            .http
            .get(env.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let line = |code: &str| {
            text.lines()
                .find(|l| {
                    l.starts_with("a2a_requests_total{") && l.contains(&format!("code=\"{code}\""))
                })
                .unwrap_or_else(|| panic!("no {code} line in {text}"))
                .to_owned()
        };
        let rejected = line("a2a_peer_credential_rejected");
        assert!(rejected.contains("jsonrpc_code=\"-32000\""), "{rejected}");
        let series = text
            .lines()
            .filter(|l| l.contains("code=\"a2a_peer_credential_rejected\""))
            .count();
        assert_eq!(series, 2, "one series per agent: {text}");
        assert!(line("a2a_upstream_error").contains("jsonrpc_code=\"-32001\""));
        assert!(line("ok").contains("jsonrpc_code=\"none\""));
        env.stop().await;
    }
}
