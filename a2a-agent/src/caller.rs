//! [`CallerProfile`]: who is calling, as authentication found it, and the key its tasks are
//! owned by.

use serde_json::Value;

/// Who is calling, derived from the schemes that were validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallerProfile {
    /// The scheme kind that identified the caller (`apiKey`, `bearer`, `none`, ...).
    pub scheme: String,
    /// Token subject, when a token identified the caller.
    pub subject: Option<String>,
    /// Token issuer.
    pub issuer: Option<String>,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// Token claims.
    pub claims: Value,
    /// Token audience (`aud`).
    pub audience: Vec<String>,
    /// Introspection `username` (identifies a token without `sub`).
    pub username: Option<String>,
    /// `client_id` / `azp` (identifies a token without `sub` and `username`).
    pub client_id: Option<String>,
    /// The whole result of validating an OAuth 2.0 / OIDC token, when one identified the caller
    /// (the Camel guide's `CamelOAuthTokenValidationResult`); `None` for an API key, a static
    /// bearer token or no authentication.
    pub token: Option<std::sync::Arc<TokenValidation>>,
}

/// How an OAuth 2.0 / OIDC token was validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenMethod {
    /// A JWT: its signature checked against the issuer's JWKS, then `exp`, `nbf`, `iss`, `aud`.
    Jwt,
    /// An opaque token, through RFC 7662 introspection (`active: true`, then `exp`, `iss`, `aud`).
    Introspection,
}

/// The result of validating an OAuth 2.0 / OIDC bearer token: how it was validated and all that
/// the validation read, for handlers that decide on more than the caller profile.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenValidation {
    /// JWT or introspection.
    pub method: TokenMethod,
    /// The JWT header as sent (`alg`, `kid`, `typ`, ...); `None` for an introspected token.
    pub header: Option<Value>,
    /// Every claim: the JWT payload, or the whole introspection response (`active`, ...).
    pub claims: Value,
    /// `exp` (seconds since the epoch), when present.
    pub expires_at: Option<i64>,
    /// `iat` (seconds since the epoch), when present.
    pub issued_at: Option<i64>,
    /// `nbf` (seconds since the epoch), when present.
    pub not_before: Option<i64>,
}

impl TokenValidation {
    /// The result of validating a token of `method` whose claims are `claims`.
    pub fn new(method: TokenMethod, header: Option<Value>, claims: Value) -> Self {
        let time = |k: &str| claims.get(k).and_then(Value::as_i64);
        TokenValidation {
            method,
            header,
            expires_at: time("exp"),
            issued_at: time("iat"),
            not_before: time("nbf"),
            claims,
        }
    }
    /// One claim, by name.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }
}

impl CallerProfile {
    /// The anonymous caller (auth disabled): every anonymous caller shares tasks.
    pub fn anonymous() -> Self {
        CallerProfile {
            scheme: "none".into(),
            ..Default::default()
        }
    }
    /// The key tasks are owned by: issuer and subject of a token, else issuer and user name,
    /// else issuer and client, else the scheme (so callers with the same API key or static
    /// bearer token share their tasks).
    pub fn owner_key(&self) -> String {
        let iss = self.issuer.as_deref().unwrap_or("");
        match (&self.subject, &self.username, &self.client_id) {
            (Some(s), _, _) => format!("{iss}|{s}"),
            (None, Some(u), _) => format!("{iss}|user:{u}"),
            (None, None, Some(c)) => format!("{iss}|client:{c}"),
            (None, None, None) => self.scheme.clone(),
        }
    }
}
