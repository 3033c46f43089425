//! A small OpenID Connect provider on loopback for the console's login tests: discovery, an
//! authorization endpoint that logs in whoever the test names next (no login page) and
//! redirects back with a code, a token endpoint that checks the client's secret, the redirect
//! URI and the PKCE verifier and answers an RS256 ID token, and the key set. Its key pair is a
//! fixed test key (`tests/data/oidc-test-rsa.der`, PKCS#1, its public half in `oidc-test-jwks.json`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

const KEY: &[u8] = include_bytes!("../data/oidc-test-rsa.der");
const JWKS: &str = include_str!("../data/oidc-test-jwks.json");
pub const CLIENT_ID: &str = "a2a-console";
pub const CLIENT_SECRET: &str = "console-secret";

#[derive(Default)]
struct Inner {
    /// The claims of the next login (beside iss, aud, exp, iat, nonce).
    next: Value,
    /// code -> (challenge, redirect_uri, nonce, claims)
    codes: HashMap<String, (String, String, String, Value)>,
    /// Token requests refused, with why.
    refused: Vec<String>,
    /// Override of the ID token's nonce (a replayed token).
    nonce_override: Option<String>,
}

/// A running provider.
pub struct Provider {
    pub issuer: String,
    inner: Arc<Mutex<Inner>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Provider {
    pub async fn start() -> Provider {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", l.local_addr().unwrap());
        let inner: Arc<Mutex<Inner>> = Arc::default();
        let st = (issuer.clone(), inner.clone());
        let app = axum::Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route(
                "/jwks",
                get(|| async { ([("content-type", "application/json")], JWKS) }),
            )
            .with_state(st);
        let task = tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        Provider {
            issuer,
            inner,
            task,
        }
    }

    /// The next login is `claims` (e.g. `{"sub": "u1", "email": "ana@example.com", "roles":
    /// ["approver:ws1"]}`).
    pub fn next_login(&self, claims: Value) {
        self.inner.lock().unwrap().next = claims;
    }

    /// The ID tokens from now on carry this nonce instead of the login's.
    pub fn wrong_nonce(&self) {
        self.inner.lock().unwrap().nonce_override = Some("not-the-login's".into());
    }

    /// Token requests refused so far, with why.
    pub fn refused(&self) -> Vec<String> {
        self.inner.lock().unwrap().refused.clone()
    }
}

type St = (String, Arc<Mutex<Inner>>);

async fn discovery(State((issuer, _)): State<St>) -> axum::Json<Value> {
    axum::Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn authorize(
    State((_, inner)): State<St>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let field = |k: &str| q.get(k).cloned().unwrap_or_default();
    if field("response_type") != "code"
        || field("client_id") != CLIENT_ID
        || field("code_challenge_method") != "S256"
        || field("code_challenge").is_empty()
        || !field("scope").split(' ').any(|s| s == "openid")
    {
        return (
            StatusCode::BAD_REQUEST,
            format!("bad authorization request: {q:?}"),
        )
            .into_response();
    }
    let code = format!("code-{:016x}", fastrand::u64(..));
    let mut i = inner.lock().unwrap();
    let claims = i.next.clone();
    i.codes.insert(
        code.clone(),
        (
            field("code_challenge"),
            field("redirect_uri"),
            field("nonce"),
            claims,
        ),
    );
    let mut back = url::Url::parse(&field("redirect_uri")).unwrap();
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &field("state"));
    Redirect::to(back.as_str()).into_response()
}

async fn token(
    State((issuer, inner)): State<St>,
    headers: HeaderMap,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    let mut i = inner.lock().unwrap();
    match id_token(&issuer, &mut i, &headers, &f) {
        Ok(id_token) => {
            axum::Json(json!({"access_token": "at", "token_type": "Bearer", "id_token": id_token}))
                .into_response()
        }
        Err(why) => {
            i.refused.push(why.clone());
            let body = json!({"error": "invalid_grant", "error_description": why});
            (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
        }
    }
}

/// The token endpoint's checks, then the signed ID token.
fn id_token(
    issuer: &str,
    i: &mut Inner,
    headers: &HeaderMap,
    f: &HashMap<String, String>,
) -> Result<String, String> {
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return Err("client authentication".into());
    }
    let field = |k: &str| f.get(k).cloned().unwrap_or_default();
    if field("grant_type") != "authorization_code" {
        return Err("grant_type".into());
    }
    let Some((challenge, redirect, nonce, claims)) = i.codes.remove(&field("code")) else {
        return Err("unknown or used code".into());
    };
    if redirect != field("redirect_uri") {
        return Err("redirect_uri differs".into());
    }
    let verifier = field("code_verifier");
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    if URL_SAFE_NO_PAD.encode(digest.as_ref()) != challenge {
        return Err("PKCE verifier".into());
    }
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut c = claims;
    c["iss"] = json!(issuer);
    c["aud"] = json!(CLIENT_ID);
    c["iat"] = json!(now);
    c["exp"] = json!(now + 300);
    c["nonce"] = json!(i.nonce_override.clone().unwrap_or(nonce));
    let mut head = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    head.kid = Some("test-1".into());
    let key = jsonwebtoken::EncodingKey::from_rsa_der(KEY);
    jsonwebtoken::encode(&head, &c, &key).map_err(|e| e.to_string())
}
