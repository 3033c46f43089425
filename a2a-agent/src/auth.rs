//! Authentication: the [`Authenticator`] trait and the built-in API key / static bearer
//! authenticator driven by the card's `securitySchemes` and `securityRequirements`. The caller
//! it identifies is a [`CallerProfile`], at home in [`caller`](crate::caller); named here too,
//! the path of the previous layout, for one release.

pub use crate::caller::{CallerProfile, TokenMethod, TokenValidation};
use crate::card::AgentCard;
use crate::error::{A2aError, ErrorKind};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeMap;
use subtle::ConstantTimeEq;

/// Request data an authenticator may look at.
pub struct AuthRequest<'a> {
    /// Request headers.
    pub headers: &'a http::HeaderMap,
    /// The raw query string.
    pub query: Option<&'a str>,
}

/// Validates a request's credentials.
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// The caller, or an AuthenticationError (401).
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError>;
}

/// Accepts everyone as [`CallerProfile::anonymous`] (`validate_auth = false`).
pub struct NoAuth;

#[async_trait]
impl Authenticator for NoAuth {
    async fn authenticate(&self, _req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError> {
        Ok(CallerProfile::anonymous())
    }
}

#[derive(Debug, Clone)]
enum Scheme {
    ApiKey {
        location: String,
        name: String,
    },
    Bearer,
    /// OAuth 2.0 / OpenID Connect: a token validated by the [`crate::oidc::TokenValidator`].
    Token,
    Unsupported(String),
}

/// API key and static bearer authentication per the card (OR of ANDs over `securityRequirements`).
/// Fails closed: with no scheme in the card every request is refused.
pub struct CardAuthenticator {
    schemes: BTreeMap<String, Scheme>,
    requirements: Vec<Vec<String>>,
    /// Required scopes per requirement and scheme (the requirement's `list`).
    req_scopes: Vec<BTreeMap<String, Vec<String>>>,
    api_key: Option<String>,
    bearer_token: Option<String>,
    #[cfg(feature = "oidc")]
    tokens: Option<std::sync::Arc<crate::oidc::TokenValidator>>,
}

fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn unauth(msg: &str) -> A2aError {
    A2aError::new(ErrorKind::Unauthenticated, msg)
}

/// The token of `Authorization: Bearer <token>`.
#[cfg(feature = "oidc")]
fn bearer_of(req: &AuthRequest<'_>) -> Option<String> {
    req.headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(s, _)| s.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

impl CardAuthenticator {
    /// Build from the card; `api_key_header` is used when an apiKey scheme names no header.
    pub fn new(
        card: &AgentCard,
        api_key: Option<String>,
        api_key_header: &str,
        bearer_token: Option<String>,
    ) -> Self {
        let mut schemes = BTreeMap::new();
        if let Some(obj) = card
            .json()
            .get("securitySchemes")
            .and_then(Value::as_object)
        {
            for (name, s) in obj {
                let scheme = if let Some(k) = s.get("apiKeySecurityScheme") {
                    Scheme::ApiKey {
                        location: k
                            .get("location")
                            .and_then(Value::as_str)
                            .unwrap_or("header")
                            .to_ascii_lowercase(),
                        name: k
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or(api_key_header)
                            .to_string(),
                    }
                } else if s.get("type").and_then(Value::as_str) == Some("apiKey") {
                    Scheme::ApiKey {
                        location: s
                            .get("in")
                            .and_then(Value::as_str)
                            .unwrap_or("header")
                            .to_ascii_lowercase(),
                        name: s
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or(api_key_header)
                            .to_string(),
                    }
                } else if let Some(h) = s.get("httpAuthSecurityScheme") {
                    let sch = h.get("scheme").and_then(Value::as_str).unwrap_or("");
                    if sch.eq_ignore_ascii_case("bearer") {
                        Scheme::Bearer
                    } else {
                        Scheme::Unsupported(format!("http {sch}"))
                    }
                } else if s.get("type").and_then(Value::as_str) == Some("http")
                    && s.get("scheme")
                        .and_then(Value::as_str)
                        .is_some_and(|x| x.eq_ignore_ascii_case("bearer"))
                {
                    Scheme::Bearer
                } else if s.get("oauth2SecurityScheme").is_some()
                    || s.get("openIdConnectSecurityScheme").is_some()
                    || matches!(
                        s.get("type").and_then(Value::as_str),
                        Some("oauth2" | "openIdConnect")
                    )
                {
                    Scheme::Token
                } else {
                    Scheme::Unsupported(name.clone())
                };
                schemes.insert(name.clone(), scheme);
            }
        }
        let mut requirements: Vec<Vec<String>> = Vec::new();
        let mut req_scopes: Vec<BTreeMap<String, Vec<String>>> = Vec::new();
        let str_list = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        if let Some(reqs) = card
            .json()
            .get("securityRequirements")
            .and_then(Value::as_array)
        {
            for r in reqs {
                if let Some(m) = r.get("schemes").and_then(Value::as_object) {
                    requirements.push(m.keys().cloned().collect());
                    req_scopes.push(
                        m.iter()
                            .map(|(k, v)| (k.clone(), str_list(v.get("list"))))
                            .collect(),
                    );
                }
            }
        } else if let Some(reqs) = card.json().get("security").and_then(Value::as_array) {
            // Legacy draft field: [{scheme: [scopes]}].
            for r in reqs {
                if let Some(m) = r.as_object() {
                    requirements.push(m.keys().cloned().collect());
                    req_scopes.push(
                        m.iter()
                            .map(|(k, v)| (k.clone(), str_list(Some(v))))
                            .collect(),
                    );
                }
            }
        }
        if requirements.is_empty() {
            // No requirement list: any one declared scheme suffices.
            requirements = schemes.keys().map(|k| vec![k.clone()]).collect();
        }
        CardAuthenticator {
            schemes,
            requirements,
            req_scopes,
            api_key,
            bearer_token,
            #[cfg(feature = "oidc")]
            tokens: None,
        }
    }

    /// Validate OAuth 2.0 / OpenID Connect tokens (and bearer tokens other than the static one)
    /// with `v`.
    #[cfg(feature = "oidc")]
    pub fn with_token_validator(mut self, v: std::sync::Arc<crate::oidc::TokenValidator>) -> Self {
        self.tokens = Some(v);
        self
    }

    /// Whether OAuth/OIDC tokens are validated (a [`crate::oidc::TokenValidator`] is set).
    fn has_tokens(&self) -> bool {
        #[cfg(feature = "oidc")]
        return self.tokens.is_some();
        #[cfg(not(feature = "oidc"))]
        false
    }

    #[cfg(not(feature = "oidc"))]
    async fn check_token(
        &self,
        _scheme: &str,
        _req: &AuthRequest<'_>,
    ) -> Result<CallerProfile, A2aError> {
        Err(unauth(
            "no token validator configured (OAuth/OIDC; this build has no `oidc` feature)",
        ))
    }

    #[cfg(feature = "oidc")]
    async fn check_token(
        &self,
        scheme: &str,
        req: &AuthRequest<'_>,
    ) -> Result<CallerProfile, A2aError> {
        let Some(v) = &self.tokens else {
            return Err(unauth("no token validator configured (OAuth/OIDC)"));
        };
        let Some(tok) = bearer_of(req) else {
            return Err(unauth("missing bearer token"));
        };
        let mut p = v.validate(&tok).await?;
        p.scheme = scheme.to_string();
        Ok(p)
    }

    async fn check(&self, name: &str, req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError> {
        match self.schemes.get(name) {
            Some(Scheme::ApiKey { location, name: n }) => {
                let Some(expected) = &self.api_key else {
                    return Err(unauth("no API key configured"));
                };
                let got: Option<String> = match location.as_str() {
                    "query" => req.query.and_then(|q| {
                        url::form_urlencoded::parse(q.as_bytes())
                            .find(|(k, _)| k == n.as_str())
                            .map(|(_, v)| v.into_owned())
                    }),
                    "cookie" => req
                        .headers
                        .get_all(http::header::COOKIE)
                        .iter()
                        .filter_map(|v| v.to_str().ok())
                        .flat_map(|v| v.split(';'))
                        .filter_map(|kv| kv.trim().split_once('='))
                        .find(|(k, _)| *k == n.as_str())
                        .map(|(_, v)| v.to_string()),
                    _ => req
                        .headers
                        .get(n.as_str())
                        .and_then(|v| v.to_str().ok())
                        .map(|v| {
                            // `Authorization: ApiKey xyz` / `Bearer xyz` are tolerated.
                            let v = v.trim();
                            match v.split_once(' ') {
                                Some((_, rest)) if n.eq_ignore_ascii_case("authorization") => {
                                    rest.trim().to_string()
                                }
                                _ => v.to_string(),
                            }
                        }),
                };
                match got {
                    Some(g) if ct_eq(&g, expected) => Ok(CallerProfile {
                        scheme: "apiKey".into(),
                        ..Default::default()
                    }),
                    _ => Err(unauth("missing or invalid API key")),
                }
            }
            Some(Scheme::Token) => self.check_token("oauth2", req).await,
            Some(Scheme::Bearer) => {
                let Some(expected) = &self.bearer_token else {
                    if self.has_tokens() {
                        return self.check_token("bearer", req).await;
                    }
                    return Err(unauth("no bearer token configured"));
                };
                let got = req
                    .headers
                    .get(http::header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().split_once(' '))
                    .filter(|(s, _)| s.eq_ignore_ascii_case("bearer"))
                    .map(|(_, t)| t.trim().to_string());
                match got {
                    Some(g) if ct_eq(&g, expected) => Ok(CallerProfile {
                        scheme: "bearer".into(),
                        ..Default::default()
                    }),
                    Some(_) if self.has_tokens() => self.check_token("bearer", req).await,
                    _ => Err(unauth("missing or invalid bearer token")),
                }
            }
            Some(Scheme::Unsupported(s)) => Err(unauth(&format!(
                "security scheme {s:?} is not supported by this server"
            ))),
            None => Err(unauth(&format!("unknown security scheme {name:?}"))),
        }
    }
}

#[async_trait]
impl Authenticator for CardAuthenticator {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError> {
        if self.schemes.is_empty() {
            return Err(unauth(
                "authentication is required but the agent card declares no security scheme",
            ));
        }
        let mut last = unauth("authentication required");
        'alt: for (ai, alt) in self.requirements.iter().enumerate() {
            let mut profile: Option<CallerProfile> = None;
            for name in alt {
                match self.check(name, req).await {
                    Ok(p) => {
                        // A token profile wins over a key profile.
                        if profile.as_ref().is_none_or(|q| q.owner_key() == q.scheme) {
                            profile = Some(p);
                        }
                    }
                    Err(e) => {
                        last = e;
                        continue 'alt;
                    }
                }
            }
            if let Some(p) = profile {
                // Scopes of the requirement's `list` must all be granted to the token.
                let missing: Vec<&String> = self
                    .req_scopes
                    .get(ai)
                    .into_iter()
                    .flat_map(|m| m.values().flatten())
                    .filter(|s| !p.scopes.contains(s))
                    .collect();
                if missing.is_empty() {
                    return Ok(p);
                }
                last = A2aError::new(
                    ErrorKind::PermissionDenied,
                    format!("insufficient scope: missing {missing:?}"),
                );
                continue;
            }
        }
        Err(last)
    }
}
