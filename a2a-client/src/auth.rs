//! Credentials attached to every request: API keys (header, query or cookie), bearer tokens and
//! OAuth 2.0 client credentials (RFC 6749 §4.4) with token caching and refresh.
//!
//! An OAuth2 token is cached until shortly before `expires_in` runs out
//! ([`OAuth2ClientCredentials::with_refresh_margin`]). When it runs out, a `refresh_token` from the
//! previous answer is used if there was one (falling back to a new client-credentials grant if the
//! refresh is refused); otherwise a new grant is made. [`OAuth2ClientCredentials::invalidate`] drops
//! the cached token (the client calls it after a `401` and retries once).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use url::Url;

use crate::discovery::{Clock, SystemClock};

/// Where an API key goes (the card's `apiKeySecurityScheme.location` / 0.3 `in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKeyLocation {
    /// A request header named by the scheme.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

impl ApiKeyLocation {
    /// Parses `header` / `query` / `cookie` (case-insensitive).
    pub fn parse(s: &str) -> Option<ApiKeyLocation> {
        match s.to_ascii_lowercase().as_str() {
            "header" => Some(ApiKeyLocation::Header),
            "query" => Some(ApiKeyLocation::Query),
            "cookie" => Some(ApiKeyLocation::Cookie),
            _ => None,
        }
    }
}

/// One credential.
#[derive(Debug, Clone)]
pub enum Credential {
    /// An API key.
    ApiKey {
        /// Where it goes.
        location: ApiKeyLocation,
        /// Header, parameter or cookie name.
        name: String,
        /// The key.
        value: String,
    },
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// OAuth 2.0 client credentials; the token is fetched, cached and refreshed.
    OAuth2(Arc<OAuth2ClientCredentials>),
}

impl Credential {
    /// An API key in a header (e.g. `X-API-Key`).
    pub fn api_key_header(name: impl Into<String>, value: impl Into<String>) -> Credential {
        Credential::ApiKey {
            location: ApiKeyLocation::Header,
            name: name.into(),
            value: value.into(),
        }
    }

    /// Adds this credential to a request.
    pub async fn apply(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, AuthError> {
        Ok(match self {
            Credential::ApiKey {
                location: ApiKeyLocation::Header,
                name,
                value,
            } => request.header(name.as_str(), value.as_str()),
            Credential::ApiKey {
                location: ApiKeyLocation::Query,
                name,
                value,
            } => with_query(request, name, value).map_err(AuthError::Request)?,
            Credential::ApiKey {
                location: ApiKeyLocation::Cookie,
                name,
                value,
            } => request.header(http::header::COOKIE, format!("{name}={value}")),
            Credential::Bearer(token) => request.bearer_auth(token),
            Credential::OAuth2(oauth) => request.bearer_auth(oauth.token().await?),
        })
    }

    /// Drops cached state after the server refused the credential (OAuth2 only).
    pub async fn invalidate(&self) {
        if let Credential::OAuth2(oauth) = self {
            oauth.invalidate().await;
        }
    }

    /// Whether [`Credential::invalidate`] can make a retry succeed.
    pub fn is_refreshable(&self) -> bool {
        matches!(self, Credential::OAuth2(_))
    }
}

/// Why a credential could not be obtained.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The token endpoint could not be reached.
    #[error("OAuth2 token request to {url} failed: {source}")]
    Http {
        /// The token endpoint.
        url: Url,
        /// The error.
        #[source]
        source: reqwest::Error,
    },
    /// The token endpoint refused (RFC 6749 §5.2 error, or another status).
    #[error("OAuth2 token endpoint {url} refused: HTTP {status}: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The token endpoint.
        url: Url,
        /// The HTTP status.
        status: u16,
        /// The `error` code, or the start of the body.
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// The request a credential was to be added to could not be built (a bad URL or header
    /// set before).
    #[error("the request could not be built: {0}")]
    Request(#[source] reqwest::Error),
    /// The token answer is not a usable RFC 6749 §5.1 response.
    #[error("OAuth2 token endpoint {url} sent an unusable answer: {reason}")]
    BadResponse {
        /// The token endpoint.
        url: Url,
        /// What is wrong.
        reason: String,
    },
}

/// How the client authenticates to the token endpoint (RFC 6749 §2.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuthMethod {
    /// HTTP Basic with the client id and secret (the RFC's default).
    #[default]
    Basic,
    /// `client_id` and `client_secret` in the form body.
    Post,
}

#[derive(Debug, Clone)]
struct CachedToken {
    access_token: String,
    refresh_token: Option<String>,
    /// `None` = no `expires_in`: used until invalidated.
    expires_at: Option<Instant>,
}

#[derive(Debug, Deserialize)]
struct TokenResponse {
    access_token: Option<String>,
    token_type: Option<String>,
    expires_in: Option<serde_json::Number>,
    refresh_token: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TokenErrorResponse {
    error: Option<String>,
    error_description: Option<String>,
}

/// OAuth 2.0 client-credentials grant with a cached, refreshed access token.
#[derive(Debug)]
pub struct OAuth2ClientCredentials {
    http: reqwest::Client,
    token_url: Url,
    client_id: String,
    client_secret: String,
    scopes: Vec<String>,
    auth_method: ClientAuthMethod,
    refresh_margin: Duration,
    clock: Arc<dyn Clock>,
    cache: tokio::sync::Mutex<Option<CachedToken>>,
}

impl OAuth2ClientCredentials {
    /// A grant against `token_url` (share `http` with the client to reuse connections).
    pub fn new(
        http: reqwest::Client,
        token_url: Url,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> OAuth2ClientCredentials {
        OAuth2ClientCredentials {
            http,
            token_url,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scopes: Vec::new(),
            auth_method: ClientAuthMethod::Basic,
            refresh_margin: Duration::from_secs(30),
            clock: Arc::new(SystemClock),
            cache: tokio::sync::Mutex::new(None),
        }
    }

    /// Requests these scopes (space-joined `scope` parameter).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How to authenticate to the token endpoint.
    pub fn with_auth_method(mut self, method: ClientAuthMethod) -> Self {
        self.auth_method = method;
        self
    }

    /// Renew this long before `expires_in` runs out (default 30 s).
    pub fn with_refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// Replaces the clock (tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The token endpoint.
    pub fn token_url(&self) -> &Url {
        &self.token_url
    }

    /// A valid access token: the cached one, a refreshed one, or a new grant.
    pub async fn token(&self) -> Result<String, AuthError> {
        let mut cache = self.cache.lock().await;
        let now = self.clock.now();
        if let Some(tok) = cache.as_ref()
            && tok.expires_at.is_none_or(|at| now < at)
        {
            return Ok(tok.access_token.clone());
        }
        let refresh = cache.as_ref().and_then(|t| t.refresh_token.clone());
        let fresh = match refresh {
            Some(refresh_token) => {
                match self
                    .request(&[
                        ("grant_type", "refresh_token"),
                        ("refresh_token", &refresh_token),
                    ])
                    .await
                {
                    Ok(tok) => tok,
                    Err(AuthError::Refused { .. }) => self.grant().await?,
                    Err(e) => return Err(e),
                }
            }
            None => self.grant().await?,
        };
        let token = fresh.access_token.clone();
        *cache = Some(fresh);
        Ok(token)
    }

    /// Drops the cached access token (and its refresh token).
    pub async fn invalidate(&self) {
        *self.cache.lock().await = None;
    }

    async fn grant(&self) -> Result<CachedToken, AuthError> {
        let scope = self.scopes.join(" ");
        let mut form = vec![("grant_type", "client_credentials")];
        if !scope.is_empty() {
            form.push(("scope", &scope));
        }
        self.request(&form).await
    }

    async fn request(&self, form: &[(&str, &str)]) -> Result<CachedToken, AuthError> {
        let mut form: Vec<(&str, &str)> = form.to_vec();
        let mut request = self
            .http
            .post(self.token_url.clone())
            .header(http::header::ACCEPT, "application/json");
        match self.auth_method {
            ClientAuthMethod::Basic => {
                request = request.basic_auth(
                    form_urlencode(&self.client_id),
                    Some(form_urlencode(&self.client_secret)),
                );
            }
            ClientAuthMethod::Post => {
                form.push(("client_id", &self.client_id));
                form.push(("client_secret", &self.client_secret));
            }
        }
        let sent_at = self.clock.now();
        let response = request
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form_body(&form))
            .send()
            .await
            .map_err(|source| AuthError::Http {
                url: self.token_url.clone(),
                source,
            })?;
        let status = response.status();
        let body = response.bytes().await.map_err(|source| AuthError::Http {
            url: self.token_url.clone(),
            source,
        })?;
        if !status.is_success() {
            let parsed: Option<TokenErrorResponse> = serde_json::from_slice(&body).ok();
            let (error, description) = match parsed {
                Some(TokenErrorResponse {
                    error: Some(error),
                    error_description,
                }) => (error, error_description),
                _ => (
                    String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
                    None,
                ),
            };
            return Err(AuthError::Refused {
                url: self.token_url.clone(),
                status: status.as_u16(),
                error,
                description,
            });
        }
        let bad = |reason: String| AuthError::BadResponse {
            url: self.token_url.clone(),
            reason,
        };
        let parsed: TokenResponse =
            serde_json::from_slice(&body).map_err(|e| bad(format!("not JSON: {e}")))?;
        let access_token = parsed
            .access_token
            .filter(|t| !t.is_empty())
            .ok_or_else(|| bad("no access_token".to_string()))?;
        if let Some(kind) = &parsed.token_type
            && !kind.eq_ignore_ascii_case("bearer")
        {
            return Err(bad(format!("token_type {kind:?} is not Bearer")));
        }
        // `expires_in` is an integer in the RFC; some servers send a float or a string.
        let expires_in = parsed
            .expires_in
            .and_then(|n| n.as_f64())
            .filter(|s| *s > 0.0);
        let expires_at = expires_in.map(|secs| {
            let life = Duration::from_secs_f64(secs.min(1e9));
            sent_at + life.saturating_sub(self.refresh_margin.min(life / 2))
        });
        Ok(CachedToken {
            access_token,
            refresh_token: parsed.refresh_token.filter(|t| !t.is_empty()),
            expires_at,
        })
    }
}

/// RFC 6749 §2.3.1: client id and secret are form-urlencoded before HTTP Basic.
/// `request` with `name=value` added to its URL's query (as `RequestBuilder::query` would).
fn with_query(
    request: reqwest::RequestBuilder,
    name: &str,
    value: &str,
) -> Result<reqwest::RequestBuilder, reqwest::Error> {
    let (client, built) = request.build_split();
    let mut built = built?;
    built.url_mut().query_pairs_mut().append_pair(name, value);
    Ok(reqwest::RequestBuilder::from_parts(client, built))
}

/// `application/x-www-form-urlencoded` body of `pairs`.
fn form_body(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

fn form_urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_location_parsing() {
        assert_eq!(
            ApiKeyLocation::parse("Header"),
            Some(ApiKeyLocation::Header)
        );
        assert_eq!(ApiKeyLocation::parse("query"), Some(ApiKeyLocation::Query));
        assert_eq!(
            ApiKeyLocation::parse("COOKIE"),
            Some(ApiKeyLocation::Cookie)
        );
        assert_eq!(ApiKeyLocation::parse("body"), None);
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        assert_eq!(form_urlencode("a b:c"), "a+b%3Ac");
        assert_eq!(
            form_body(&[("grant_type", "client_credentials"), ("scope", "a b&c=d")]),
            "grant_type=client_credentials&scope=a+b%26c%3Dd"
        );
    }

    fn query_key() -> Credential {
        Credential::ApiKey {
            location: ApiKeyLocation::Query,
            name: "api key".into(),
            value: "k&2".into(),
        }
    }

    #[tokio::test]
    async fn a_query_key_is_appended_to_the_url_and_keeps_the_request() {
        let http = reqwest::Client::new();
        let rb = http
            .post("http://agent.invalid/a2a?tenant=t1")
            .header("x-kept", "yes")
            .body("payload");
        let req = query_key().apply(rb).await.unwrap().build().unwrap();
        assert_eq!(req.url().query(), Some("tenant=t1&api+key=k%262"));
        assert_eq!(req.headers()["x-kept"], "yes");
        assert_eq!(req.method(), reqwest::Method::POST);
        assert_eq!(req.body().and_then(|b| b.as_bytes()), Some(&b"payload"[..]));
    }

    #[tokio::test]
    async fn a_request_that_cannot_be_built_is_an_auth_error() {
        let rb = reqwest::Client::new()
            .get("http://agent.invalid/")
            .header("x-bad", "line\nbreak");
        match query_key().apply(rb).await {
            Err(e @ AuthError::Request(_)) => {
                assert!(
                    e.to_string().starts_with("the request could not be built"),
                    "{e}"
                )
            }
            other => panic!("expected AuthError::Request, got {other:?}"),
        }
    }
}
