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
