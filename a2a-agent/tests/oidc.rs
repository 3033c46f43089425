//! OAuth 2.0 / OIDC: a local issuer on loopback (discovery document, JWKS with ES256 and RS256
//! keys generated here, key rotation, RFC 7662 introspection) and the agent validating its
//! tokens; scopes; per-caller isolation of tasks by token identity.

use crate::common;

use a2a_agent::{AgentCard, AgentConfig, Reply, ServerHandle, handler_fn};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair, RSA_PKCS1_SHA256, RsaKeyPair,
};
use base64::Engine;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

enum Key {
    Es(EcdsaKeyPair),
    Rs(Box<RsaKeyPair>),
}

struct SigningKey {
    kid: String,
    key: Key,
}

impl SigningKey {
    fn es256(kid: &str) -> Self {
        SigningKey {
            kid: kid.into(),
            key: Key::Es(EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap()),
        }
    }
    fn rs256(kid: &str) -> Self {
        SigningKey {
            kid: kid.into(),
            key: Key::Rs(Box::new(
                RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap(),
            )),
        }
    }
    fn jwk(&self) -> Value {
        match &self.key {
            Key::Es(k) => {
                let p = k.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "alg": "ES256", "use": "sig",
                    "x": b64(&p[1..33]), "y": b64(&p[33..65])})
            }
            Key::Rs(k) => {
                let p = k.public_key();
                json!({"kty": "RSA", "kid": self.kid, "alg": "RS256", "use": "sig",
                    "n": b64(p.modulus().big_endian_without_leading_zero()),
                    "e": b64(p.exponent().big_endian_without_leading_zero())})
            }
        }
    }
    fn sign(&self, claims: &Value) -> String {
        let alg = match self.key {
            Key::Es(_) => "ES256",
            Key::Rs(_) => "RS256",
        };
        let h = json!({"alg": alg, "typ": "JWT", "kid": self.kid});
        let input = format!(
            "{}.{}",
            b64(h.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let rng = SystemRandom::new();
        let sig = match &self.key {
            Key::Es(k) => k.sign(&rng, input.as_bytes()).unwrap().as_ref().to_vec(),
            Key::Rs(k) => {
                let mut buf = vec![0u8; k.public_modulus_len()];
                k.sign(&RSA_PKCS1_SHA256, &rng, input.as_bytes(), &mut buf)
                    .unwrap();
                buf
            }
        };
        format!("{input}.{}", b64(&sig))
    }
}

#[derive(Clone)]
struct Issuer {
    url: String,
    jwks: Arc<Mutex<Vec<Value>>>,
    jwks_hits: Arc<AtomicUsize>,
    /// Opaque token -> introspection response.
    opaque: Arc<Mutex<HashMap<String, Value>>>,
}

async fn issuer() -> (Issuer, tokio::task::JoinHandle<()>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let iss = Issuer {
        url: url.clone(),
        jwks: Arc::default(),
        jwks_hits: Arc::default(),
        opaque: Arc::default(),
    };
    let (i1, i2, i3) = (iss.clone(), iss.clone(), iss.clone());
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || {
                let u = i1.url.clone();
                async move {
                    axum::Json(json!({"issuer": u, "jwks_uri": format!("{u}/jwks"),
                        "introspection_endpoint": format!("{u}/introspect")}))
                }
            }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || {
                i2.jwks_hits.fetch_add(1, Ordering::SeqCst);
                let keys = i2.jwks.lock().unwrap().clone();
                async move { axum::Json(json!({ "keys": keys })) }
            }),
        )
        .route(
            "/introspect",
            axum::routing::post(move |headers: http::HeaderMap, body: axum::body::Bytes| {
                let i = i3.clone();
                async move {
                    // Client credentials are required.
                    let basic = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    if basic
                        != format!(
                            "Basic {}",
                            base64::engine::general_purpose::STANDARD.encode("agent:s3cret")
                        )
                    {
                        return (http::StatusCode::UNAUTHORIZED, axum::Json(json!({})));
                    }
                    let tok = url::form_urlencoded::parse(&body)
                        .find(|(k, _)| k == "token")
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default();
                    let r = i
                        .opaque
                        .lock()
                        .unwrap()
                        .get(&tok)
                        .cloned()
                        .unwrap_or(json!({"active": false}));
                    (http::StatusCode::OK, axum::Json(r))
                }
            }),
        );
    let j = tokio::spawn(async move {
        axum::serve(l, app).await.unwrap();
    });
    (iss, j)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn claims(iss: &Issuer, sub: Option<&str>) -> Value {
    let mut c = json!({"iss": iss.url, "aud": "a2a-agent", "exp": now() + 300,
        "iat": now(), "scope": "tasks openid"});
    if let Some(s) = sub {
        c["sub"] = s.into();
    }
    c
}

fn card(iss: &Issuer, scopes: &[&str]) -> AgentCard {
    AgentCard::from_json(json!({
        "name": "oidc-agent", "description": "oidc tests", "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
        "securitySchemes": {"oidc": {"openIdConnectSecurityScheme": {
            "openIdConnectUrl": format!("{}/.well-known/openid-configuration", iss.url)}}},
        "securityRequirements": [{"schemes": {"oidc": {"list": scopes}}}]
    }))
    .unwrap()
}

async fn agent(iss: &Issuer, scopes: &[&str]) -> ServerHandle {
    let cfg = AgentConfig {
        oidc_issuer: Some(iss.url.clone()),
        oidc_audience: vec!["a2a-agent".into()],
        oidc_client_id: Some("agent".into()),
        oidc_client_secret: Some("s3cret".into()),
        oidc_min_refresh: a2a_agent::config::Dur::from_millis(0),
        ..AgentConfig::default()
    };
    let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
        Ok(Reply::text(format!(
            "hello {}",
            ctx.caller().subject.clone().unwrap_or_default()
        )))
    });
    common::start_with(card(iss, scopes), h, cfg).await
}

/// GET /tasks with `token`: (status, WWW-Authenticate, body).
async fn list(url: &str, token: &str) -> (u16, Option<String>, Value) {
    let r = common::client()
        .get(format!("{url}/tasks"))
        .header("A2A-Version", "1.0")
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let st = r.status().as_u16();
    let www = r
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string());
    (st, www, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn jwt_validation_matrix() {
    let (iss, j) = issuer().await;
    let es = SigningKey::es256("es-1");
    let rs = SigningKey::rs256("rs-1");
    *iss.jwks.lock().unwrap() = vec![es.jwk(), rs.jwk()];
    let srv = agent(&iss, &[]).await;
    let url = srv.url().to_string();

    // Valid, both algorithms.
    let (st, _, b) = list(&url, &es.sign(&claims(&iss, Some("alice")))).await;
    assert_eq!(st, 200, "{b}");
    let (st, _, b) = list(&url, &rs.sign(&claims(&iss, Some("alice")))).await;
    assert_eq!(st, 200, "{b}");

    let refused = |name: &'static str, c: Value, key: &SigningKey| (name, key.sign(&c));
    let mut cases = vec![];
    let mut c = claims(&iss, Some("alice"));
    c["exp"] = (now() - 3600).into();
    cases.push(refused("expired", c, &es));
    let mut c = claims(&iss, Some("alice"));
    c["nbf"] = (now() + 3600).into();
    cases.push(refused("not yet valid", c, &es));
    let mut c = claims(&iss, Some("alice"));
    c["aud"] = "someone-else".into();
    cases.push(refused("wrong audience", c, &rs));
    let mut c = claims(&iss, Some("alice"));
    c["iss"] = "https://evil.example".into();
    cases.push(refused("wrong issuer", c, &es));
    let mut c = claims(&iss, Some("alice"));
    c.as_object_mut().unwrap().remove("exp");
    cases.push(refused("no exp", c, &es));
    cases.push(refused("no subject, no client", claims(&iss, None), &es));
    cases.push(refused(
        "unknown kid",
        claims(&iss, Some("alice")),
        &SigningKey::es256("nobody"),
    ));
    // Tampered payload: signature of another token.
    let good = es.sign(&claims(&iss, Some("alice")));
    let other = es.sign(&claims(&iss, Some("mallory")));
    let parts: Vec<&str> = good.split('.').collect();
    let oparts: Vec<&str> = other.split('.').collect();
    cases.push((
        "tampered",
        format!("{}.{}.{}", parts[0], oparts[1], parts[2]),
    ));
    // alg none and HS256.
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"JWT"}"#),
        b64(claims(&iss, Some("alice")).to_string().as_bytes())
    );
    cases.push(("alg none", none));
    let hs = format!(
        "{}.{}.{}",
        b64(br#"{"alg":"HS256","typ":"JWT","kid":"es-1"}"#),
        b64(claims(&iss, Some("alice")).to_string().as_bytes()),
        b64(b"sig")
    );
    cases.push(("HS256", hs));
    for (name, tok) in cases {
        let (st, www, b) = list(&url, &tok).await;
        assert_eq!(st, 401, "{name}: {b}");
        assert!(
            www.as_deref().is_some_and(|w| w.starts_with("Bearer")),
            "{name}"
        );
        assert_eq!(b["error"]["status"], "UNAUTHENTICATED", "{name}: {b}");
    }
    // No token at all.
    let r = common::client()
        .get(format!("{url}/tasks"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // client_id / azp identify a token without sub.
    let mut c = claims(&iss, None);
    c["client_id"] = "svc-1".into();
    assert_eq!(list(&url, &es.sign(&c)).await.0, 200);
    let mut c = claims(&iss, None);
    c["azp"] = "svc-2".into();
    assert_eq!(list(&url, &es.sign(&c)).await.0, 200);
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn key_rotation_refreshes_jwks_on_unknown_kid() {
    let (iss, j) = issuer().await;
    let k1 = SigningKey::es256("k1");
    *iss.jwks.lock().unwrap() = vec![k1.jwk()];
    let srv = agent(&iss, &[]).await;
    let url = srv.url().to_string();
    assert_eq!(list(&url, &k1.sign(&claims(&iss, Some("a")))).await.0, 200);
    assert_eq!(list(&url, &k1.sign(&claims(&iss, Some("a")))).await.0, 200);
    assert_eq!(iss.jwks_hits.load(Ordering::SeqCst), 1, "cached");
    // The issuer rotates to k2 (RS256) and drops k1.
    let k2 = SigningKey::rs256("k2");
    *iss.jwks.lock().unwrap() = vec![k2.jwk()];
    let (st, _, b) = list(&url, &k2.sign(&claims(&iss, Some("a")))).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(iss.jwks_hits.load(Ordering::SeqCst), 2, "refetched once");
    // k1 is gone after the refresh.
    assert_eq!(list(&url, &k1.sign(&claims(&iss, Some("a")))).await.0, 401);
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn opaque_tokens_via_introspection() {
    let (iss, j) = issuer().await;
    *iss.jwks.lock().unwrap() = vec![SigningKey::es256("x").jwk()];
    {
        let mut o = iss.opaque.lock().unwrap();
        o.insert(
            "opaque-user".into(),
            json!({"active": true, "iss": iss.url, "username": "carol", "scope": "tasks",
                "exp": now() + 300, "aud": "a2a-agent"}),
        );
        o.insert(
            "opaque-client".into(),
            json!({"active": true, "client_id": "svc", "scope": "tasks"}),
        );
        o.insert(
            "opaque-nobody".into(),
            json!({"active": true, "scope": "tasks"}),
        );
        o.insert(
            "opaque-expired".into(),
            json!({"active": true, "sub": "d", "exp": now() - 3600}),
        );
        o.insert(
            "opaque-wrong-aud".into(),
            json!({"active": true, "sub": "d", "aud": "other"}),
        );
    }
    let srv = agent(&iss, &[]).await;
    let url = srv.url().to_string();
    assert_eq!(list(&url, "opaque-user").await.0, 200);
    assert_eq!(list(&url, "opaque-client").await.0, 200);
    for bad in [
        "opaque-nobody",
        "opaque-expired",
        "opaque-wrong-aud",
        "opaque-inactive",
    ] {
        assert_eq!(list(&url, bad).await.0, 401, "{bad}");
    }
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn required_scopes_are_enforced_with_403() {
    let (iss, j) = issuer().await;
    let k = SigningKey::es256("k");
    *iss.jwks.lock().unwrap() = vec![k.jwk()];
    let srv = agent(&iss, &["tasks", "admin"]).await;
    let url = srv.url().to_string();
    let (st, _, b) = list(&url, &k.sign(&claims(&iss, Some("a")))).await;
    assert_eq!(st, 403, "{b}");
    let mut c = claims(&iss, Some("a"));
    c["scope"] = "tasks admin".into();
    assert_eq!(list(&url, &k.sign(&c)).await.0, 200);
    // JSON-RPC: the 1.0 error model for the same refusal.
    let r = common::client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .bearer_auth(k.sign(&claims(&iss, Some("a"))))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap();
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["error"]["code"], -32000, "{b}");
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn tasks_belong_to_the_token_identity() {
    let (iss, j) = issuer().await;
    let k = SigningKey::es256("k");
    *iss.jwks.lock().unwrap() = vec![k.jwk()];
    iss.opaque.lock().unwrap().insert(
        "alice-opaque".into(),
        json!({"active": true, "iss": iss.url, "sub": "alice"}),
    );
    let srv = agent(&iss, &[]).await;
    let url = srv.url().to_string();
    let alice = k.sign(&claims(&iss, Some("alice")));
    let bob = k.sign(&claims(&iss, Some("bob")));
    let send = |tok: String| {
        let url = url.clone();
        async move {
            let r = common::client()
                .post(format!("{url}/message:send"))
                .header("A2A-Version", "1.0")
                .bearer_auth(tok)
                .json(&json!({"message": common::msg("hi")}))
                .send()
                .await
                .unwrap();
            r.json::<Value>().await.unwrap()
        }
    };
    let t = send(alice.clone()).await;
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    let get = |tok: String| {
        let url = url.clone();
        let tid = tid.clone();
        async move {
            common::client()
                .get(format!("{url}/tasks/{tid}"))
                .header("A2A-Version", "1.0")
                .bearer_auth(tok)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(get(alice.clone()).await, 200);
    assert_eq!(get(bob.clone()).await, 404, "foreign task looks missing");
    // The same subject through introspection is the same caller.
    assert_eq!(get("alice-opaque".into()).await, 200);
    let (_, _, l) = list(&url, &bob).await;
    assert!(l["tasks"].as_array().is_none_or(|a| a.is_empty()), "{l}");
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn combined_requirement_takes_the_token_profile() {
    let (iss, j) = issuer().await;
    let k = SigningKey::es256("k");
    *iss.jwks.lock().unwrap() = vec![k.jwk()];
    let card = AgentCard::from_json(json!({
        "name": "combo", "description": "key + token", "version": "1.0.0",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "oidc": {"openIdConnectSecurityScheme": {
                "openIdConnectUrl": format!("{}/.well-known/openid-configuration", iss.url)}}},
        // The key first: the profile is still the token's.
        "securityRequirements": [{"schemes": {"key": {"list": []}, "oidc": {"list": []}}}]
    }))
    .unwrap();
    let cfg = AgentConfig {
        api_key: Some("shared-key".into()),
        oidc_issuer: Some(iss.url.clone()),
        oidc_min_refresh: a2a_agent::config::Dur::from_millis(0),
        ..AgentConfig::default()
    };
    let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
        Ok(Reply::text(format!(
            "{}:{}",
            ctx.caller().scheme,
            ctx.caller().subject.clone().unwrap_or_default()
        )))
    });
    let srv = common::start_with(card, h, cfg).await;
    let url = srv.url().to_string();
    let call = |tok: Option<String>, key: bool, path: String, body: Option<Value>| {
        let url = url.clone();
        async move {
            let mut r = match &body {
                Some(_) => common::client().post(format!("{url}{path}")),
                None => common::client().get(format!("{url}{path}")),
            }
            .header("A2A-Version", "1.0");
            if key {
                r = r.header("X-API-Key", "shared-key");
            }
            if let Some(t) = tok {
                r = r.bearer_auth(t);
            }
            if let Some(b) = body {
                r = r.json(&b);
            }
            let resp = r.send().await.unwrap();
            (
                resp.status().as_u16(),
                resp.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let alice = k.sign(&claims(&iss, Some("alice")));
    let bob = k.sign(&claims(&iss, Some("bob")));
    let send = json!({"message": common::msg("hi")});
    // Both schemes are required.
    assert_eq!(
        call(Some(alice.clone()), false, "/tasks".into(), None)
            .await
            .0,
        401
    );
    assert_eq!(call(None, true, "/tasks".into(), None).await.0, 401);
    let (st, t) = call(
        Some(alice.clone()),
        true,
        "/message:send".into(),
        Some(send),
    )
    .await;
    assert_eq!(st, 200, "{t}");
    let text = t
        .pointer("/task/status/message/parts/0/text")
        .or_else(|| t.pointer("/task/artifacts/0/parts/0/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    assert_eq!(text, "oauth2:alice", "{t}");
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    // Same API key, another token: another caller.
    assert_eq!(
        call(Some(bob), true, format!("/tasks/{tid}"), None).await.0,
        404
    );
    assert_eq!(
        call(Some(alice), true, format!("/tasks/{tid}"), None)
            .await
            .0,
        200
    );
    srv.shutdown().await;
    j.abort();
}

#[cfg(feature = "cli")]
/// Row `camel.oauth.<profile>.client-id` / `.client-secret` of docs/settings-map.md: written as
/// in a Camel properties file (`[camel.oauth.my-agent]`), they are the introspection client;
/// with the wrong secret the introspection refuses and so does the agent.
#[tokio::test]
async fn the_camel_oauth_client_is_the_introspection_client() {
    let (iss, j) = issuer().await;
    *iss.jwks.lock().unwrap() = vec![SigningKey::es256("x").jwk()];
    iss.opaque.lock().unwrap().insert(
        "opaque-user".into(),
        json!({"active": true, "iss": iss.url, "sub": "carol", "scope": "tasks",
            "exp": now() + 300, "aud": "a2a-agent"}),
    );
    for (secret, want) in [("s3cret", 200), ("wrong", 401)] {
        let cfg = AgentConfig::from_toml(&format!(
            "oidc_issuer = \"{}\"\noidc_audience = [\"a2a-agent\"]\n\
             [camel.oauth.my-agent]\nclient-id = \"agent\"\nclient-secret = \"{secret}\"\n",
            iss.url
        ))
        .unwrap();
        let h = handler_fn(|_ctx: a2a_agent::RequestContext| async move { Ok(Reply::text("hi")) });
        let srv = common::start_with(card(&iss, &[]), h, cfg).await;
        assert_eq!(list(srv.url(), "opaque-user").await.0, want, "{secret}");
        srv.shutdown().await;
    }
    j.abort();
}

/// Issue 37: a handler reads the whole token validation result (the Camel guide's
/// `CamelOAuthTokenValidationResult`): a JWT's header and every claim, an opaque token's whole
/// introspection response; with either error table.
#[tokio::test]
async fn handlers_read_the_token_validation_result() {
    use a2a_agent::error::RestStatusTable;
    let (iss, j) = issuer().await;
    let k = SigningKey::es256("kid-7");
    *iss.jwks.lock().unwrap() = vec![k.jwk()];
    iss.opaque.lock().unwrap().insert(
        "opaque-1".into(),
        json!({"active": true, "iss": iss.url, "username": "carol", "scope": "tasks",
            "exp": now() + 300, "aud": "a2a-agent", "x-tenant": "t9"}),
    );
    for table in [RestStatusTable::Spec, RestStatusTable::Camel] {
        let cfg = AgentConfig {
            oidc_issuer: Some(iss.url.clone()),
            oidc_audience: vec!["a2a-agent".into()],
            oidc_client_id: Some("agent".into()),
            oidc_client_secret: Some("s3cret".into()),
            rest_status_table: table,
            ..AgentConfig::default()
        };
        let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
            let t = ctx
                .token_validation()
                .expect("a token identified the caller");
            assert_eq!(Some(t), ctx.caller().token.as_deref());
            Ok(Reply::text(
                json!({"method": format!("{:?}", t.method), "header": t.header,
                    "claims": t.claims, "exp": t.expires_at, "iat": t.issued_at,
                    "tenant": t.claim("x-tenant")})
                .to_string(),
            ))
        });
        let srv = common::start_with(card(&iss, &[]), h, cfg).await;
        let ask = |token: String| {
            let url = srv.url().to_owned();
            async move {
                let v: Value = common::client()
                    .post(format!("{url}/"))
                    .header("A2A-Version", "1.0")
                    .bearer_auth(token)
                    .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": common::msg("who")}}))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let t = v["result"]["task"]["status"]["message"]["parts"][0]["text"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{v}"))
                    .to_owned();
                serde_json::from_str::<Value>(&t).unwrap()
            }
        };
        let mut c = claims(&iss, Some("ada"));
        c["x-tenant"] = json!("t1");
        let jwt = ask(k.sign(&c)).await;
        assert_eq!(jwt["method"], "Jwt", "{table}: {jwt}");
        assert_eq!(
            (&jwt["header"]["kid"], &jwt["header"]["alg"]),
            (&json!("kid-7"), &json!("ES256")),
            "{jwt}"
        );
        assert_eq!(jwt["claims"], c, "every claim: {jwt}");
        assert_eq!((&jwt["exp"], &jwt["iat"]), (&c["exp"], &c["iat"]), "{jwt}");
        assert_eq!(jwt["tenant"], "t1");
        let opaque = ask("opaque-1".into()).await;
        assert_eq!(opaque["method"], "Introspection", "{table}: {opaque}");
        assert_eq!(opaque["header"], Value::Null);
        assert_eq!(
            (&opaque["claims"]["active"], &opaque["claims"]["username"]),
            (&json!(true), &json!("carol")),
            "{opaque}"
        );
        assert_eq!(opaque["tenant"], "t9");
        srv.shutdown().await;
    }
    j.abort();
}
