//! OAuth 2.0 / OpenID Connect bearer tokens: JWTs validated against the issuer's JWKS, opaque
//! tokens through RFC 7662 introspection.
//!
//! JWTs: the signature (RS256/384/512, PS256/384/512, ES256/384, EdDSA; never `none` or HMAC),
//! `exp` (required) and `nbf` with a small leeway, `iss` and `aud` when configured. The JWKS
//! comes from `jwks_uri` of the issuer's `/.well-known/openid-configuration` (or a configured
//! URL), is cached, and is fetched again when a token names an unknown `kid`, at most once per
//! `min_refresh_interval`.
//!
//! Opaque tokens (not three dot-separated parts) go to the introspection endpoint (form POST,
//! HTTP Basic client credentials); `active: false` is refused.
//!
//! The caller is identified by `sub`; a token without `sub` by the introspection `username`,
//! else `client_id` / `azp`; a token with none of them is refused (the Camel guide's caller profile).

use crate::caller::{CallerProfile, TokenMethod, TokenValidation};
use crate::error::{A2aError, ErrorKind};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Token validation settings.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// Expected `iss`; also where the discovery document is looked up
    /// (`{issuer}/.well-known/openid-configuration`).
    pub issuer: Option<String>,
    /// JWKS URL; unset = `jwks_uri` of the discovery document.
    pub jwks_url: Option<String>,
    /// Accepted `aud` values; empty = `aud` not checked.
    pub audience: Vec<String>,
    /// RFC 7662 endpoint for opaque tokens; unset = opaque tokens are refused (or the
    /// discovery document's `introspection_endpoint` when present).
    pub introspection_url: Option<String>,
    /// Client id for introspection (HTTP Basic).
    pub client_id: Option<String>,
    /// Client secret for introspection.
    pub client_secret: Option<String>,
    /// Clock skew tolerated on `exp`/`nbf` (s). Default 30.
    pub leeway_s: u64,
    /// Minimum time between two JWKS fetches. Default 30 s.
    pub min_refresh_interval: Duration,
    /// JWKS cache lifetime. Default 1 h.
    pub jwks_ttl: Duration,
    /// HTTP timeout of discovery, JWKS and introspection calls. Default 5 s.
    pub http_timeout: Duration,
}

impl Default for OidcConfig {
    fn default() -> Self {
        OidcConfig {
            issuer: None,
            jwks_url: None,
            audience: Vec::new(),
            introspection_url: None,
            client_id: None,
            client_secret: None,
            leeway_s: 30,
            min_refresh_interval: Duration::from_secs(30),
            jwks_ttl: Duration::from_secs(3600),
            http_timeout: Duration::from_secs(5),
        }
    }
}

struct Cache {
    jwks: Option<(JwkSet, Instant)>,
    last_fetch: Option<Instant>,
    introspection: Option<String>,
    discovered: bool,
}

/// Validates bearer tokens per an [`OidcConfig`].
pub struct TokenValidator {
    cfg: OidcConfig,
    http: reqwest::Client,
    cache: tokio::sync::Mutex<Cache>,
    fetches: Mutex<u64>,
}

fn unauth(msg: impl Into<String>) -> A2aError {
    A2aError::new(ErrorKind::Unauthenticated, msg)
}

const ALLOWED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

impl TokenValidator {
    /// A validator (no network until the first token).
    pub fn new(cfg: OidcConfig) -> Result<Self, A2aError> {
        let http = reqwest::Client::builder()
            .timeout(cfg.http_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| A2aError::internal(format!("oidc http client: {e}")))?;
        Ok(TokenValidator {
            cfg,
            http,
            cache: tokio::sync::Mutex::new(Cache {
                jwks: None,
                last_fetch: None,
                introspection: None,
                discovered: false,
            }),
            fetches: Mutex::new(0),
        })
    }

    /// How many times the JWKS was fetched (observability and tests).
    pub fn jwks_fetches(&self) -> u64 {
        self.fetches.lock().map(|g| *g).unwrap_or(0)
    }

    async fn get_json(&self, url: &str) -> Result<Value, A2aError> {
        let r = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| unauth(format!("cannot reach the token issuer: {e}")))?;
        if !r.status().is_success() {
            return Err(unauth(format!(
                "token issuer answered {} for {url}",
                r.status()
            )));
        }
        r.json()
            .await
            .map_err(|e| unauth(format!("bad JSON from the token issuer: {e}")))
    }

    /// Discovery: fill the JWKS and introspection URLs from the issuer (once).
    async fn discover(&self, c: &mut Cache) -> Result<Option<String>, A2aError> {
        if let Some(u) = &self.cfg.jwks_url {
            if !c.discovered {
                c.introspection = self.cfg.introspection_url.clone();
                c.discovered = true;
            }
            return Ok(Some(u.clone()));
        }
        let Some(iss) = &self.cfg.issuer else {
            return Ok(None);
        };
        let doc = self
            .get_json(&format!(
                "{}/.well-known/openid-configuration",
                iss.trim_end_matches('/')
            ))
            .await?;
        c.discovered = true;
        c.introspection = self.cfg.introspection_url.clone().or_else(|| {
            doc.get("introspection_endpoint")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        Ok(doc
            .get("jwks_uri")
            .and_then(Value::as_str)
            .map(str::to_string))
    }

    async fn refresh(&self, c: &mut Cache, force: bool) -> Result<(), A2aError> {
        let fresh = c
            .jwks
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() < self.cfg.jwks_ttl);
        if fresh && !force {
            return Ok(());
        }
        if let Some(last) = c.last_fetch
            && last.elapsed() < self.cfg.min_refresh_interval
            && c.jwks.is_some()
        {
            return Ok(());
        }
        let Some(url) = self.discover(c).await? else {
            return Err(unauth("no JWKS configured for JWT validation"));
        };
        c.last_fetch = Some(Instant::now());
        if let Ok(mut n) = self.fetches.lock() {
            *n += 1;
        }
        let v = self.get_json(&url).await?;
        let set: JwkSet =
            serde_json::from_value(v).map_err(|e| unauth(format!("invalid JWKS: {e}")))?;
        c.jwks = Some((set, Instant::now()));
        Ok(())
    }

    async fn key_for(&self, kid: Option<&str>) -> Result<DecodingKey, A2aError> {
        let mut c = self.cache.lock().await;
        self.refresh(&mut c, false).await?;
        let find = |c: &Cache| -> Option<DecodingKey> {
            let (set, _) = c.jwks.as_ref()?;
            let jwk = match kid {
                Some(k) => set.find(k)?,
                None if set.keys.len() == 1 => set.keys.first()?,
                None => return None,
            };
            DecodingKey::from_jwk(jwk).ok()
        };
        if let Some(k) = find(&c) {
            return Ok(k);
        }
        // Unknown kid: the issuer may have rotated its keys.
        self.refresh(&mut c, true).await?;
        find(&c).ok_or_else(|| unauth("token signed with an unknown key (kid)"))
    }

    /// Validate `token` and build the caller profile (`scheme` is set by the caller).
    pub async fn validate(&self, token: &str) -> Result<CallerProfile, A2aError> {
        if token.split('.').count() == 3
            && let Ok(header) = jsonwebtoken::decode_header(token)
        {
            return self.validate_jwt(token, header).await;
        }
        self.introspect(token).await
    }

    async fn validate_jwt(
        &self,
        token: &str,
        header: jsonwebtoken::Header,
    ) -> Result<CallerProfile, A2aError> {
        if !ALLOWED.contains(&header.alg) {
            return Err(unauth(format!(
                "token algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let key = self.key_for(header.kid.as_deref()).await?;
        let mut v = Validation::new(header.alg);
        v.leeway = self.cfg.leeway_s;
        v.validate_nbf = true;
        v.set_required_spec_claims(&["exp"]);
        if let Some(i) = &self.cfg.issuer {
            v.set_issuer(&[i.trim_end_matches('/'), i.as_str()]);
        }
        if self.cfg.audience.is_empty() {
            v.validate_aud = false;
        } else {
            v.set_audience(&self.cfg.audience);
        }
        let data = jsonwebtoken::decode::<Value>(token, &key, &v)
            .map_err(|e| unauth(format!("invalid token: {e}")))?;
        let header = serde_json::to_value(&data.header).ok();
        profile(TokenValidation::new(TokenMethod::Jwt, header, data.claims))
    }

    async fn introspect(&self, token: &str) -> Result<CallerProfile, A2aError> {
        let url = {
            let mut c = self.cache.lock().await;
            if !c.discovered && self.cfg.introspection_url.is_none() {
                // Best effort: the discovery document may name the endpoint.
                let _ = self.discover(&mut c).await;
            }
            c.introspection
                .clone()
                .or_else(|| self.cfg.introspection_url.clone())
        };
        let Some(url) = url else {
            return Err(unauth(
                "not a JWT and no token introspection endpoint is configured",
            ));
        };
        let mut req = self.http.post(&url).form(&[("token", token)]);
        if let Some(id) = &self.cfg.client_id {
            req = req.basic_auth(id, self.cfg.client_secret.as_deref());
        }
        let r = req
            .send()
            .await
            .map_err(|e| unauth(format!("token introspection failed: {e}")))?;
        if !r.status().is_success() {
            return Err(unauth(format!(
                "token introspection answered {}",
                r.status()
            )));
        }
        let v: Value = r
            .json()
            .await
            .map_err(|e| unauth(format!("bad introspection response: {e}")))?;
        if v.get("active").and_then(Value::as_bool) != Some(true) {
            return Err(unauth("token is not active"));
        }
        // Unix seconds (a clock before 1970 reads as 0).
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let leeway = self.cfg.leeway_s as i64;
        if let Some(exp) = v.get("exp").and_then(Value::as_i64)
            && exp + leeway < now
        {
            return Err(unauth("token has expired"));
        }
        if let (Some(want), Some(got)) = (&self.cfg.issuer, v.get("iss").and_then(Value::as_str))
            && want.trim_end_matches('/') != got.trim_end_matches('/')
        {
            return Err(unauth("token issuer does not match"));
        }
        if !self.cfg.audience.is_empty() && v.get("aud").is_some() {
            let auds = audiences(&v);
            if !auds.iter().any(|a| self.cfg.audience.contains(a)) {
                return Err(unauth("token audience does not match"));
            }
        }
        profile(TokenValidation::new(TokenMethod::Introspection, None, v))
    }
}

fn audiences(v: &Value) -> Vec<String> {
    match v.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn scopes(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .get("scope")
        .and_then(Value::as_str)
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    for key in ["scp", "scopes"] {
        match v.get(key) {
            Some(Value::Array(a)) => {
                out.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
            }
            Some(Value::String(s)) => out.extend(s.split_whitespace().map(str::to_string)),
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The caller profile of a validated token (the Camel guide's table), the validation result in it.
fn profile(token: TokenValidation) -> Result<CallerProfile, A2aError> {
    let introspected = token.method == TokenMethod::Introspection;
    let claims = &token.claims;
    let s = |k: &str| {
        claims
            .get(k)
            .and_then(Value::as_str)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
    };
    let subject = s("sub");
    let username = if introspected { s("username") } else { None };
    let client = s("client_id").or_else(|| s("azp"));
    if subject.is_none() && username.is_none() && client.is_none() {
        return Err(unauth(
            "token identifies no caller (no sub, username, client_id or azp)",
        ));
    }
    Ok(CallerProfile {
        scheme: "oauth2".into(),
        subject,
        issuer: s("iss"),
        audience: audiences(claims),
        scopes: scopes(claims),
        username,
        client_id: client,
        claims: claims.clone(),
        token: Some(std::sync::Arc::new(token)),
    })
}
