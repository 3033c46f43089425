//! The console's OpenID Connect login (docs/console.md, "Operators and roles"): the
//! authorization code flow with PKCE against the provider named by `console_oidc_issuer`.
//!
//! 1. `GET /console/oidc/start` reads the provider's discovery document, makes a `state`, a
//!    `nonce` and a PKCE verifier, keeps the three in a short-lived cookie (`HttpOnly`,
//!    `SameSite=Lax`: it must come back with the provider's cross-site redirect, and holds
//!    nothing the provider's answer alone would let anyone use), and sends the browser to the
//!    provider's authorization endpoint (`S256` challenge).
//! 2. `GET /console/oidc/callback?code&state`: the state must be the cookie's; the code is
//!    exchanged at the token endpoint with the verifier and the client's secret (HTTP Basic);
//!    the ID token's signature is checked against the provider's key set (asymmetric
//!    algorithms only), then its issuer, audience, expiry and nonce. The operator is named by
//!    the token's `email`, else `preferred_username`, else `sub`; roles come from the claim
//!    `console_oidc_roles_claim` (a list or a space-separated string; a dotted name reads a
//!    nested claim, as `realm_access.roles`). A login without a console role is refused.
//!
//! Why by hand: `jsonwebtoken` (already the gateway's for push JWTs and card keys) checks the
//! ID token and reads the key set; the rest of the flow is three HTTP requests on the gateway's
//! `reqwest`. The `openidconnect` crate was not taken: it brings a second HTTP client and its own
//! signature stacks for what these few lines do.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;

use super::html::{notice, page};
use super::login::start_session;
use super::remote_of;
use super::roles::Roles;
use super::session::{self, Sessions};
use crate::config::Config;
use crate::ids::random_hex;
use crate::state::GatewayState;

/// The flow's cookie (state, nonce, verifier), sent back only to the callback.
const FLOW_COOKIE: &str = "a2a_console_oidc";
/// How long a started login may take at the provider.
const FLOW_TTL_SECS: u64 = 600;
/// How long the discovery document and the key set are kept (a token signed by a key not in
/// the kept set fetches the set again at once).
const META_TTL: Duration = Duration::from_secs(3600);
/// The provider's answers are small: a larger one is refused.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The provider settings and what was read from it.
pub struct Provider {
    issuer: String,
    client_id: String,
    client_secret: String,
    roles_claim: String,
    http: reqwest::Client,
    meta: Mutex<Option<(Meta, Instant)>>,
}

/// What the discovery document and the key set say.
#[derive(Clone)]
struct Meta {
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    keys: JwkSet,
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
}

impl Provider {
    /// The provider of `config`, when `console_oidc_issuer` and the client's id and secret
    /// are all set.
    pub fn from_config(config: &Config) -> Option<Arc<Provider>> {
        let set = |v: &Option<String>| {
            v.as_deref()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
        };
        let issuer = set(&config.console_oidc_issuer)?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .ok()?;
        Some(Arc::new(Provider {
            issuer: issuer.trim_end_matches('/').to_owned(),
            client_id: set(&config.console_oidc_client_id)?,
            client_secret: set(&config.console_oidc_client_secret)?,
            roles_claim: config.console_oidc_roles_claim.clone(),
            http,
            meta: Mutex::new(None),
        }))
    }

    /// The provider's endpoints and keys, read again when older than [`META_TTL`] or `fresh`.
    async fn meta(&self, fresh: bool) -> Result<Meta, String> {
        let mut kept = self.meta.lock().await;
        if let Some((m, at)) = kept.as_ref()
            && !fresh
            && at.elapsed() < META_TTL
        {
            return Ok(m.clone());
        }
        let url = format!("{}/.well-known/openid-configuration", self.issuer);
        let d: Discovery = serde_json::from_slice(&self.get(&url).await?)
            .map_err(|e| format!("the discovery document is not one: {e}"))?;
        if d.issuer.trim_end_matches('/') != self.issuer {
            return Err(format!(
                "the discovery document names issuer {:?}, not {:?}",
                d.issuer, self.issuer
            ));
        }
        let keys: JwkSet = serde_json::from_slice(&self.get(&d.jwks_uri).await?)
            .map_err(|e| format!("the key set is not one: {e}"))?;
        let m = Meta {
            authorization_endpoint: d.authorization_endpoint,
            token_endpoint: d.token_endpoint,
            jwks_uri: d.jwks_uri,
            keys,
        };
        *kept = Some((m.clone(), Instant::now()));
        Ok(m)
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        let resp = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        read(resp, url).await
    }

    /// Exchanges `code` for the ID token's claims, checked (see the module doc).
    async fn claims(
        &self,
        code: &str,
        verifier: &str,
        redirect: &str,
        nonce: &str,
    ) -> Result<Value, String> {
        let meta = self.meta(false).await?;
        let resp = self
            .http
            .post(&meta.token_endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect),
                ("code_verifier", verifier),
                ("client_id", &self.client_id),
            ])
            .send()
            .await
            .map_err(|e| format!("the token endpoint: {e}"))?;
        let body: Value = serde_json::from_slice(&read(resp, "the token endpoint").await?)
            .map_err(|e| format!("the token answer is not JSON: {e}"))?;
        let token = body["id_token"]
            .as_str()
            .ok_or("the token answer has no id_token")?;
        let head = jsonwebtoken::decode_header(token).map_err(|e| format!("the ID token: {e}"))?;
        if matches!(
            head.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(
                "the ID token is signed with a shared secret; an asymmetric key is required".into(),
            );
        }
        let mut meta = meta;
        let mut jwk = find_key(&meta.keys, head.kid.as_deref());
        if jwk.is_none() {
            meta = self.meta(true).await?;
            jwk = find_key(&meta.keys, head.kid.as_deref());
        }
        let jwk = jwk.ok_or_else(|| format!("no key of {} signs this ID token", meta.jwks_uri))?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("the provider's key: {e}"))?;
        let mut v = Validation::new(head.alg);
        v.set_issuer(&[&self.issuer, &format!("{}/", self.issuer)]);
        v.set_audience(&[&self.client_id]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = 60;
        let claims = jsonwebtoken::decode::<Value>(token, &key, &v)
            .map_err(|e| format!("the ID token was refused: {e}"))?
            .claims;
        if !claims["nonce"]
            .as_str()
            .is_some_and(|n| session::token_eq(n, nonce))
        {
            return Err("the ID token's nonce is not this login's".into());
        }
        if claims["aud"].as_array().is_some_and(|a| a.len() > 1)
            && claims["azp"].as_str() != Some(self.client_id.as_str())
        {
            return Err(
                "the ID token has several audiences and is not authorized for this client".into(),
            );
        }
        Ok(claims)
    }

    /// The operator's name and roles in checked `claims`.
    fn operator(&self, claims: &Value) -> (String, Roles) {
        let name = ["email", "preferred_username", "sub"]
            .iter()
            .find_map(|c| claims[c].as_str().filter(|s| !s.is_empty()))
            .unwrap_or("unknown");
        let mut at = claims;
        for part in self.roles_claim.split('.') {
            at = &at[part];
        }
        let roles = match at {
            Value::Array(a) => Roles::from_names(a.iter().filter_map(Value::as_str)),
            Value::String(s) => Roles::parse(s),
            _ => Roles::default(),
        };
        (format!("oidc:{name}"), roles)
    }
}

fn find_key(keys: &JwkSet, kid: Option<&str>) -> Option<jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(k) => keys.find(k).cloned(),
        None if keys.keys.len() == 1 => keys.keys.first().cloned(),
        None => None,
    }
}

/// A provider's answer, 2xx and at most [`MAX_ANSWER_BYTES`].
async fn read(resp: reqwest::Response, what: &str) -> Result<Vec<u8>, String> {
    let status = resp.status();
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(format!("{what}: the answer is too large"));
    }
    let bytes = resp.bytes().await.map_err(|e| format!("{what}: {e}"))?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(format!("{what}: the answer is too large"));
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        return Err(format!("{what} answered {status}: {text}"));
    }
    Ok(bytes.to_vec())
}

/// The callback's address the provider redirects to: under `public_url` when set, else the
/// address the browser used.
fn redirect_uri(st: &GatewayState, headers: &HeaderMap) -> String {
    if let Some(base) = st.config().public_url.as_deref() {
        return format!("{}/console/oidc/callback", base.trim_end_matches('/'));
    }
    let scheme = if session::secure(st, headers) {
        "https"
    } else {
        "http"
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    format!("{scheme}://{host}/console/oidc/callback")
}

/// `GET /console/oidc/start`: to the provider.
pub(crate) async fn start(
    State(st): State<Arc<GatewayState>>,
    Extension(provider): Extension<Option<Arc<Provider>>>,
    headers: HeaderMap,
) -> Response {
    let Some(p) = provider else {
        return failed(
            StatusCode::NOT_FOUND,
            "Single sign-on is not set up on this gateway.",
        );
    };
    let meta = match p.meta(false).await {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("console OIDC: {e}");
            return failed(
                StatusCode::BAD_GATEWAY,
                &format!("The identity provider cannot be reached: {e}"),
            );
        }
    };
    let (state, nonce, verifier) = (random_hex(16), random_hex(16), random_hex(32));
    let challenge = URL_SAFE_NO_PAD.encode(crate::keys::hash(&verifier));
    let mut url = match url::Url::parse(&meta.authorization_endpoint) {
        Ok(u) => u,
        Err(e) => {
            return failed(
                StatusCode::BAD_GATEWAY,
                &format!("The provider's authorization endpoint is not a URL: {e}"),
            );
        }
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &p.client_id)
        .append_pair("redirect_uri", &redirect_uri(&st, &headers))
        .append_pair("scope", "openid email profile")
        .append_pair("state", &state)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let secure = session::secure(&st, &headers);
    let mut resp = Redirect::to(url.as_str()).into_response();
    resp.headers_mut().append(
        header::SET_COOKIE,
        flow_cookie(
            &format!("{state}.{nonce}.{verifier}"),
            FLOW_TTL_SECS,
            secure,
        ),
    );
    resp
}

/// The flow cookie: `SameSite=Lax` (sent back with the provider's top-level redirect).
fn flow_cookie(value: &str, max_age: u64, secure: bool) -> axum::http::HeaderValue {
    let s = format!(
        "{FLOW_COOKIE}={value}; Path=/console/oidc; Max-Age={max_age}; HttpOnly; SameSite=Lax{}",
        if secure { "; Secure" } else { "" }
    );
    axum::http::HeaderValue::from_str(&s)
        .unwrap_or_else(|_| axum::http::HeaderValue::from_static("invalid=; Max-Age=0"))
}

#[derive(Deserialize)]
pub(crate) struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /console/oidc/callback`: the provider's answer; a session on success.
pub(crate) async fn callback(
    State(st): State<Arc<GatewayState>>,
    Extension(sessions): Extension<Arc<Sessions>>,
    Extension(provider): Extension<Option<Arc<Provider>>>,
    headers: HeaderMap,
    ext: axum::http::Extensions,
    Query(q): Query<Callback>,
) -> Response {
    let Some(p) = provider else {
        return failed(
            StatusCode::NOT_FOUND,
            "Single sign-on is not set up on this gateway.",
        );
    };
    let audit = |status: u16, subject: String, outcome: String| {
        crate::admin::audit::record_console_login(
            &st,
            "console login-oidc",
            status,
            subject,
            outcome,
            remote_of(&ext),
        )
    };
    let flow = session::cookie(&headers, FLOW_COOKIE).unwrap_or("");
    let mut parts = flow.splitn(3, '.');
    let (Some(state), Some(nonce), Some(verifier)) = (parts.next(), parts.next(), parts.next())
    else {
        audit(403, "login".into(), "refused: no login in progress".into()).await;
        return failed(
            StatusCode::FORBIDDEN,
            "No login is in progress in this browser (or it took longer than 10 minutes); start again.",
        );
    };
    if let Some(e) = q.error.as_deref() {
        audit(403, "login".into(), format!("refused by the provider: {e}")).await;
        return failed(
            StatusCode::FORBIDDEN,
            &format!("The identity provider refused the login: {e}"),
        );
    }
    if !q
        .state
        .as_deref()
        .is_some_and(|s| session::token_eq(s, state))
    {
        audit(403, "login".into(), "refused: state mismatch".into()).await;
        return failed(
            StatusCode::FORBIDDEN,
            "This answer is not for the login this browser started (state check); start again.",
        );
    }
    let Some(code) = q.code.as_deref() else {
        audit(403, "login".into(), "refused: no code".into()).await;
        return failed(
            StatusCode::FORBIDDEN,
            "The identity provider sent no code; start again.",
        );
    };
    let claims = match p
        .claims(code, verifier, &redirect_uri(&st, &headers), nonce)
        .await
    {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("console OIDC: {e}");
            audit(403, "login".into(), format!("refused: {e}")).await;
            return failed(
                StatusCode::FORBIDDEN,
                &format!("The login was refused: {e}"),
            );
        }
    };
    let (operator, roles) = p.operator(&claims);
    if !roles.any() {
        audit(
            403,
            operator.clone(),
            format!("refused: no console role in claim {}", p.roles_claim),
        )
        .await;
        return failed(
            StatusCode::FORBIDDEN,
            &format!(
                "{operator} has no console role (claim `{}`: viewer, approver, approver:WORKSPACE or admin).",
                p.roles_claim
            ),
        );
    }
    audit(
        200,
        operator.clone(),
        format!("logged in ({})", roles.stored()),
    )
    .await;
    let secure = session::secure(&st, &headers);
    let mut resp = start_session(&st, &sessions, &headers, true, &operator, &roles).await;
    resp.headers_mut()
        .append(header::SET_COOKIE, flow_cookie("", 0, secure));
    resp
}

fn failed(status: StatusCode, why: &str) -> Response {
    page(
        status,
        "Login failed",
        "",
        "",
        &format!(
            r#"{}<p><a href="/console/login">Back to the login page</a></p>"#,
            notice(why, true)
        ),
    )
}
