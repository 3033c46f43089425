//! Peer card signatures through the gateway: the signature table against a real loopback peer
//! whose cards and key set the test controls, the address-coverage rule, JWKS rotation, the
//! workspace switch, and the trust state in the header and the audit record.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use a2a_client::signing::{self, CardKey};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use common::*;
use serde_json::{Value, json};

/// The peer: a card per name at `/p/{name}/.well-known/agent-card.json`, JSON-RPC at
/// `/p/{name}` (both versions' send answers), a key set at `/jwks.json`, and hit counts.
#[derive(Default)]
pub struct Peer {
    pub cards: Mutex<HashMap<String, Value>>,
    pub jwks: Mutex<Value>,
    pub hits: Mutex<HashMap<String, usize>>,
    pub jwks_hits: Mutex<usize>,
}

type Shared = Arc<Peer>;

async fn card(State(p): State<Shared>, Path(name): Path<String>) -> axum::response::Response {
    use axum::response::IntoResponse;
    match p.cards.lock().unwrap().get(&name) {
        Some(c) => axum::Json(c.clone()).into_response(),
        None => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

async fn rpc(
    State(p): State<Shared>,
    Path(name): Path<String>,
    body: axum::Json<Value>,
) -> axum::Json<Value> {
    *p.hits.lock().unwrap().entry(name).or_default() += 1;
    let result = if body["method"] == "SendMessage" {
        json!({"message": {"messageId": "r1", "role": "ROLE_AGENT", "parts": [{"text": "ok"}]}})
    } else {
        json!({"kind": "message", "messageId": "r1", "role": "agent", "parts": [{"kind": "text", "text": "ok"}]})
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": body["id"], "result": result}))
}

async fn jwks(State(p): State<Shared>, _h: HeaderMap) -> axum::response::Response {
    use axum::response::IntoResponse;
    *p.jwks_hits.lock().unwrap() += 1;
    let mut r = axum::Json(p.jwks.lock().unwrap().clone()).into_response();
    r.headers_mut()
        .insert("cache-control", "max-age=600".parse().unwrap());
    r
}

/// Starts the peer; returns it and its base URL.
pub async fn peer() -> (Shared, String) {
    let p: Shared = Arc::default();
    let app = axum::Router::new()
        .route(
            "/p/{name}/.well-known/agent-card.json",
            axum::routing::get(card),
        )
        .route("/p/{name}", axum::routing::post(rpc))
        .route("/jwks.json", axum::routing::get(jwks))
        .with_state(p.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (p, base)
}

pub fn card_v1(url: &str) -> Value {
    json!({"name": "Signed peer", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]})
}

fn card_v03(url: &str) -> Value {
    json!({"name": "Signed 0.3 peer", "description": "d", "version": "1", "url": url,
        "protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []})
}

pub fn key(kid: &str) -> (CardKey, Value) {
    let (der, jwk) = signing::generate_es256(kid).unwrap();
    (CardKey::es256(kid, &der), jwk)
}

/// A card signed with a hand-made header (`alg` of any kind).
fn forged(
    card: &Value,
    alg: &str,
    key: &jsonwebtoken::EncodingKey,
    a: jsonwebtoken::Algorithm,
) -> Value {
    let protected = B64.encode(json!({"alg": alg, "typ": "JOSE", "kid": "k1"}).to_string());
    let payload = signing::canonical::payload(card, signing::canonical::Form::V1Spec).unwrap();
    let input = format!("{protected}.{}", B64.encode(payload));
    let sig = if alg == "none" {
        String::new()
    } else {
        jsonwebtoken::crypto::sign(input.as_bytes(), key, a).unwrap()
    };
    let mut c = card.clone();
    c["signatures"] = json!([{"protected": protected, "signature": sig}]);
    c
}

fn register(env: &Env, name: &str, base: &str, pinned: Option<String>) {
    env.store
        .upsert_agent(&a2a_gateway::store::Agent {
            workspace_id: "ws1".into(),
            agent_id: name.into(),
            endpoint: format!("{base}/p/{name}"),
            credential: None,
            skills: None,
            pinned_card_key: pinned,
        })
        .unwrap();
}

/// A send through the gateway: status, body and the trust header.
async fn send(env: &Env, agent: &str) -> (u16, Value, Option<String>) {
    let resp = env
        .http
        .post(env.url(&format!("/a2a/{agent}")))
        .bearer_auth(&env.key)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(send10("hi").to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let trust = resp
        .headers()
        .get("x-a2a-signature-trust")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, resp.json().await.unwrap(), trust)
}

async fn governed_card(env: &Env, agent: &str) -> (u16, Value, Option<String>) {
    let resp = env
        .http
        .get(env.url(&format!("/a2a/{agent}/.well-known/agent-card.json")))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let trust = resp
        .headers()
        .get("x-a2a-signature-trust")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, resp.json().await.unwrap(), trust)
}

fn hits(p: &Peer, name: &str) -> usize {
    p.hits.lock().unwrap().get(name).copied().unwrap_or(0)
}

#[tokio::test]
async fn signature_table_through_the_gateway() {
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (p, base) = peer().await;
    let (k1, jwk1) = key("k1");
    let (k1b, _) = key("k1"); // same kid, another key
    let (k3, _) = key("k3");
    let pin = Some(jwk1.to_string());
    let url = |n: &str| format!("{base}/p/{n}");
    let secret =
        jsonwebtoken::EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef").unwrap();

    {
        let mut cards = p.cards.lock().unwrap();
        cards.insert(
            "valid".into(),
            signing::sign_card(card_v1(&url("valid")), &k1, None).unwrap(),
        );
        let mut tampered = signing::sign_card(card_v1(&url("tampered")), &k1, None).unwrap();
        tampered["supportedInterfaces"][0]["url"] = json!(url("evil"));
        cards.insert("tampered".into(), tampered);
        cards.insert(
            "wrongkey".into(),
            signing::sign_card(card_v1(&url("wrongkey")), &k1b, None).unwrap(),
        );
        cards.insert(
            "unknownkid".into(),
            signing::sign_card(card_v1(&url("unknownkid")), &k3, None).unwrap(),
        );
        cards.insert(
            "none".into(),
            forged(
                &card_v1(&url("none")),
                "none",
                &secret,
                jsonwebtoken::Algorithm::HS256,
            ),
        );
        cards.insert(
            "hmac".into(),
            forged(
                &card_v1(&url("hmac")),
                "HS256",
                &secret,
                jsonwebtoken::Algorithm::HS256,
            ),
        );
        cards.insert("unsignedpinned".into(), card_v1(&url("unsignedpinned")));
        cards.insert("unsigned".into(), card_v1(&url("unsigned")));
        cards.insert(
            "untrusted".into(),
            signing::sign_card(card_v1(&url("untrusted")), &k1, None).unwrap(),
        );
        cards.insert(
            "v03".into(),
            signing::sign_card(card_v03(&url("v03")), &k1, None).unwrap(),
        );
    }

    // (agent, pinned?, status, trust, the gateway's code)
    let table: &[(&str, bool, u16, &str, &str)] = &[
        ("valid", true, 200, "verified", ""),
        ("v03", true, 200, "verified", ""),
        (
            "tampered",
            true,
            200,
            "invalid",
            "a2a_card_signature_invalid",
        ),
        (
            "wrongkey",
            true,
            200,
            "invalid",
            "a2a_card_signature_invalid",
        ),
        (
            "unknownkid",
            true,
            200,
            "untrusted-key",
            "a2a_card_signature_invalid",
        ),
        (
            "unsignedpinned",
            true,
            200,
            "unsigned",
            "a2a_card_signature_invalid",
        ),
        // No key pinned: an invalid signature still never gives an address.
        ("none", false, 200, "invalid", "a2a_card_signature_invalid"),
        ("hmac", false, 200, "invalid", "a2a_card_signature_invalid"),
        ("unsigned", false, 200, "unsigned", ""),
        ("untrusted", false, 200, "untrusted-key", ""),
    ];
    for (name, pinned, status, trust, code) in table {
        register(&env, name, &base, pinned.then(|| pin.clone().unwrap()));
        let (s, body, header) = send(&env, name).await;
        assert_eq!(s, *status, "{name}: {body}");
        assert_eq!(header.as_deref(), Some(*trust), "{name}: {body}");
        assert_eq!(gw_code(&body), *code, "{name}: {body}");
        if code.is_empty() {
            assert_eq!(hits(&p, name), 1, "{name}: the peer is called once");
        } else {
            assert_eq!(hits(&p, name), 0, "{name}: nothing is sent");
            assert_eq!(hits(&p, "evil"), 0, "{name}: nothing is sent");
            let msg = body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert!(msg.contains(trust), "{name}: the reason is named: {msg}");
            assert_eq!(
                body["error"]["data"][0]["metadata"]["signatureTrust"],
                *trust
            );
        }
        // The governed card: same state, 502 with the code when refused; never the peer's
        // signatures.
        let (cs, card, ch) = governed_card(&env, name).await;
        assert_eq!(ch.as_deref(), Some(*trust), "{name}");
        if code.is_empty() {
            assert_eq!(cs, 200, "{name}: {card}");
            assert!(card.get("signatures").is_none(), "{name}: {card}");
        } else {
            assert_eq!(cs, 502, "{name}: {card}");
            assert!(card.to_string().contains("a2a_card_signature_invalid"));
        }
    }
    let reason = {
        let (_, b, _) = send(&env, "unknownkid").await;
        b["error"]["message"].as_str().unwrap().to_owned()
    };
    assert!(
        reason.contains("\"k3\""),
        "the unknown kid is named: {reason}"
    );

    // The audit record carries the state of each hop.
    let rows = env.store.audit(Some("ws1"), None, 0, 1000).unwrap();
    let state = |t: &str| {
        rows.iter()
            .rev()
            .find(|r| {
                r.target.as_deref() == Some(t) && r.operation.as_deref() == Some("message/send")
            })
            .and_then(|r| r.signature_trust.clone())
    };
    assert_eq!(state("valid").as_deref(), Some("verified"));
    assert_eq!(state("tampered").as_deref(), Some("invalid"));
    assert_eq!(state("untrusted").as_deref(), Some("untrusted-key"));
    assert_eq!(state("unsigned").as_deref(), Some("unsigned"));
    env.stop().await;
}

#[tokio::test]
async fn jwks_url_rotation_and_required_signing() {
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (p, base) = peer().await;
    let (k1, jwk1) = key("k1");
    let (k2, jwk2) = key("k2");
    let url = format!("{base}/p/rot");
    *p.jwks.lock().unwrap() = json!({"keys": [jwk1]});
    p.cards.lock().unwrap().insert(
        "rot".into(),
        signing::sign_card(card_v1(&url), &k1, None).unwrap(),
    );
    register(&env, "rot", &base, Some(format!("{base}/jwks.json")));
    let (s, b, t) = send(&env, "rot").await;
    assert_eq!((s, t.as_deref()), (200, Some("verified")), "{b}");
    assert_eq!(*p.jwks_hits.lock().unwrap(), 1);
    // The peer rotates: new key set, card signed with the new key. The cached set (fresh for
    // 10 minutes) lacks k2, so the gateway asks for the set again at once.
    *p.jwks.lock().unwrap() = json!({"keys": [jwk2]});
    p.cards.lock().unwrap().insert(
        "rot".into(),
        signing::sign_card(card_v1(&url), &k2, None).unwrap(),
    );
    // The peer card is cached too: ask for it again.
    let resp = env
        .http
        .get(env.url("/a2a/rot/.well-known/agent-card.json?refresh=true"))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-a2a-signature-trust"], "verified");
    assert_eq!(
        *p.jwks_hits.lock().unwrap(),
        2,
        "refetched once for the unknown kid"
    );

    // A key set that cannot be read gives no address either.
    p.cards.lock().unwrap().insert(
        "nokeys".into(),
        signing::sign_card(card_v1(&format!("{base}/p/nokeys")), &k2, None).unwrap(),
    );
    register(
        &env,
        "nokeys",
        &base,
        Some(format!("{base}/missing-jwks.json")),
    );
    let (_, b, t) = send(&env, "nokeys").await;
    assert_eq!(t.as_deref(), Some("untrusted-key"), "{b}");
    assert_eq!(gw_code(&b), "a2a_card_signature_invalid");
    assert!(
        b["error"]["message"].as_str().unwrap().contains("HTTP 404"),
        "{b}"
    );
    assert_eq!(hits(&p, "nokeys"), 0);

    // A workspace that requires signed cards refuses an unsigned peer.
    p.cards
        .lock()
        .unwrap()
        .insert("plain".into(), card_v1(&format!("{base}/p/plain")));
    register(&env, "plain", &base, None);
    assert_eq!(send(&env, "plain").await.2.as_deref(), Some("unsigned"));
    let put = |on: Value| {
        env.http
            .put(env.url("/admin/workspaces/ws1/card-trust"))
            .bearer_auth(ADMIN)
            .json(&json!({"requireSignedCards": on}))
            .send()
    };
    let r: Value = put(json!(true)).await.unwrap().json().await.unwrap();
    assert_eq!(r["effective"], true);
    let (s, b, t) = send(&env, "plain").await;
    assert_eq!((s, t.as_deref()), (200, Some("unsigned")));
    assert_eq!(gw_code(&b), "a2a_card_signature_invalid");
    assert!(
        b["error"]["message"].as_str().unwrap().contains("required"),
        "{b}"
    );
    assert_eq!(hits(&p, "plain"), 1, "only the first call reached the peer");
    put(Value::Null).await.unwrap();
    assert_eq!(send(&env, "plain").await.0, 200);
    assert_eq!(gw_code(&send(&env, "plain").await.1), "");
    env.stop().await;
}

/// The admin API takes the pinned key as a JWK object, JWK text or a JWKS URL, and refuses
/// private or symmetric keys.
#[tokio::test]
async fn pinned_keys_through_the_admin_api() {
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (_, jwk) = key("k1");
    let post = |pinned: Value| {
        env.http
            .post(env.url("/admin/workspaces/ws1/agents"))
            .bearer_auth(ADMIN)
            .json(&json!({"agentId": "p", "endpoint": "https://peer.example/a2a", "pinnedCardKey": pinned}))
            .send()
    };
    for ok in [
        jwk.clone(),
        json!(jwk.to_string()),
        json!({"keys": [jwk]}),
        json!("https://peer.example/jwks.json"),
    ] {
        assert_eq!(post(ok.clone()).await.unwrap().status(), 201, "{ok}");
    }
    let mut private = jwk.clone();
    private["d"] = json!("c2VjcmV0");
    for bad in [
        private.clone(),
        json!({"keys": [private]}),
        json!({"kty": "oct", "k": "c2VjcmV0"}),
        json!("not a key"),
        json!(3),
    ] {
        let r = post(bad.clone()).await.unwrap();
        assert!(r.status().is_client_error(), "{bad}: {}", r.status());
    }
    let listed: Value = env
        .http
        .get(env.url("/admin/workspaces/ws1/agents"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let p = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agentId"] == "p")
        .unwrap();
    assert_eq!(p["pinnedCardKey"], "https://peer.example/jwks.json");
    env.stop().await;
}

/// With a pinned key only an address the verified signature covers is used: an entry put in
/// front of the signed ones (another path on the same host) is refused, nothing is sent to it
/// or to the signed address.
#[tokio::test]
async fn only_covered_addresses_are_used() {
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (p, base) = peer().await;
    let (k1, jwk1) = key("k1");
    let signed = signing::sign_card(card_v1(&format!("{base}/p/cov")), &k1, None).unwrap();
    p.cards.lock().unwrap().insert("cov".into(), signed.clone());
    register(&env, "cov", &base, Some(jwk1.to_string()));
    assert_eq!(send(&env, "cov").await.2.as_deref(), Some("verified"));
    assert_eq!(hits(&p, "cov"), 1);

    let mut redirected = signed;
    redirected["supportedInterfaces"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"url": format!("{base}/p/evil"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}));
    p.cards
        .lock()
        .unwrap()
        .insert("cov2".into(), redirected.clone());
    register(&env, "cov2", &base, Some(jwk1.to_string()));
    let (_, b, t) = send(&env, "cov2").await;
    assert_eq!(t.as_deref(), Some("invalid"));
    assert_eq!(gw_code(&b), "a2a_card_signature_invalid");
    assert_eq!((hits(&p, "evil"), hits(&p, "cov2")), (0, 0));

    // The rule itself: a verified card's chosen address must be one the card names.
    let fetched = a2a_client::discovery::FetchedCard {
        url: url::Url::parse(&format!("{base}/p/cov/.well-known/agent-card.json")).unwrap(),
        body: serde_json::to_vec(&redirected).unwrap().into(),
        interfaces: Default::default(),
        etag: None,
        cache: a2a_client::discovery::CacheStatus::Fetched,
    };
    let verified = a2a_gateway::trust::Trust::Verified("k1".into());
    let other = url::Url::parse(&format!("{base}/p/elsewhere")).unwrap();
    assert!(a2a_gateway::trust::check_coverage(&verified, &fetched, &other).is_err());
    let named = url::Url::parse(&format!("{base}/p/evil")).unwrap();
    assert!(a2a_gateway::trust::check_coverage(&verified, &fetched, &named).is_ok());
    env.stop().await;
}

/// The fleet switch: every workspace needs verified cards; the echo peer's card is signed by a
/// key nobody pinned.
#[tokio::test]
async fn fleet_requires_signed_cards() {
    let env = env_with(a2a_gateway::errors::Version::V1, |c| {
        c.require_signed_cards = true
    })
    .await;
    let (_, b, t) = send(&env, "echo").await;
    assert_eq!(t.as_deref(), Some("untrusted-key"), "{b}");
    assert_eq!(gw_code(&b), "a2a_card_signature_invalid");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("signed cards are required"),
        "{b}"
    );
    let r: Value = env
        .http
        .get(env.url("/admin/workspaces/ws1/card-trust"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        r,
        json!({"requireSignedCards": null, "fleetRequireSignedCards": true, "effective": true})
    );
    env.stop().await;
}
