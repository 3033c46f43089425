//! Security schemes and requirements of a card (P1 `StringList` ... `DeviceCodeOAuthFlow`).

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A list of strings (P1 `StringList`): the scopes of one scheme in a requirement.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct StringList {
    /// `list` (omitted when empty, as ProtoJSON does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// One alternative of a security requirement: all named schemes must be satisfied
/// (P1 `SecurityRequirement`): `{"schemes":{"oauth":{"list":["read"]}}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct SecurityRequirement {
    /// `schemes`: scheme name -> required scopes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemes: BTreeMap<String, StringList>,
}

impl SecurityRequirement {
    /// A requirement of one scheme with `scopes`.
    pub fn scheme(name: impl Into<String>, scopes: Vec<String>) -> Self {
        let mut schemes = BTreeMap::new();
        schemes.insert(name.into(), StringList { list: scopes });
        SecurityRequirement { schemes }
    }
}

/// An authentication scheme (P1 `SecurityScheme`, `oneof scheme`); the member name is the
/// discriminator: `{"apiKeySecurityScheme":{..}}`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum SecurityScheme {
    /// `apiKeySecurityScheme`.
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// `httpAuthSecurityScheme`.
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// `oauth2SecurityScheme`.
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// `openIdConnectSecurityScheme`.
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// `mtlsSecurityScheme`.
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

crate::macros::oneof_deserialize!(SecurityScheme {
    "apiKeySecurityScheme" | "api_key_security_scheme" => ApiKeySecurityScheme(ApiKeySecurityScheme),
    "httpAuthSecurityScheme" | "http_auth_security_scheme" => HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    "oauth2SecurityScheme" | "oauth2_security_scheme" => Oauth2SecurityScheme(OAuth2SecurityScheme),
    "openIdConnectSecurityScheme" | "open_id_connect_security_scheme" => OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    "mtlsSecurityScheme" | "mtls_security_scheme" => MtlsSecurityScheme(MutualTlsSecurityScheme),
});

impl SecurityScheme {
    /// The JSON member name of this variant.
    pub fn member_name(&self) -> &'static str {
        match self {
            SecurityScheme::ApiKeySecurityScheme(_) => "apiKeySecurityScheme",
            SecurityScheme::HttpAuthSecurityScheme(_) => "httpAuthSecurityScheme",
            SecurityScheme::Oauth2SecurityScheme(_) => "oauth2SecurityScheme",
            SecurityScheme::OpenIdConnectSecurityScheme(_) => "openIdConnectSecurityScheme",
            SecurityScheme::MtlsSecurityScheme(_) => "mtlsSecurityScheme",
        }
    }

    /// An HTTP `Bearer` scheme.
    pub fn bearer(bearer_format: Option<String>) -> Self {
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: None,
            scheme: "Bearer".into(),
            bearer_format,
        })
    }

    /// An API key scheme at `location` (`header`, `query`, `cookie`) named `name`.
    pub fn api_key(location: impl Into<String>, name: impl Into<String>) -> Self {
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: None,
            location: location.into(),
            name: name.into(),
        })
    }
}

/// API key authentication (P1 `APIKeySecurityScheme`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["location", "name"])))]
pub struct ApiKeySecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `location` (REQUIRED): `query`, `header` or `cookie` (0.3 called it `in`).
    #[serde(default)]
    pub location: String,
    /// `name` (REQUIRED): the header, query or cookie parameter name.
    #[serde(default)]
    pub name: String,
}

/// HTTP authentication (P1 `HTTPAuthSecurityScheme`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["scheme"])))]
pub struct HttpAuthSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `scheme` (REQUIRED): IANA scheme name, e.g. `Bearer`.
    #[serde(default)]
    pub scheme: String,
    /// `bearerFormat`: a hint such as `JWT`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "bearer_format"
    )]
    pub bearer_format: Option<String>,
}

/// OAuth 2.0 authentication (P1 `OAuth2SecurityScheme`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["flows"])))]
pub struct OAuth2SecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `flows` (REQUIRED): exactly one flow.
    pub flows: OAuthFlows,
    /// `oauth2MetadataUrl`: RFC 8414 metadata URL.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "oauth2_metadata_url"
    )]
    pub oauth2_metadata_url: Option<String>,
}

/// OpenID Connect authentication (P1 `OpenIdConnectSecurityScheme`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["openIdConnectUrl"])))]
pub struct OpenIdConnectSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `openIdConnectUrl` (REQUIRED): the discovery URL.
    #[serde(default, alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// Mutual TLS authentication (P1 `MutualTlsSecurityScheme`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The OAuth flow of a scheme (P1 `OAuthFlows`, `oneof flow`: exactly one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    /// `authorizationCode`.
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// `clientCredentials`.
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// `implicit` (deprecated).
    Implicit(ImplicitOAuthFlow),
    /// `password` (deprecated).
    Password(PasswordOAuthFlow),
    /// `deviceCode` (RFC 8628).
    DeviceCode(DeviceCodeOAuthFlow),
}

crate::macros::oneof_deserialize!(OAuthFlows {
    "authorizationCode" | "authorization_code" => AuthorizationCode(AuthorizationCodeOAuthFlow),
    "clientCredentials" | "client_credentials" => ClientCredentials(ClientCredentialsOAuthFlow),
    "implicit" => Implicit(ImplicitOAuthFlow),
    "password" => Password(PasswordOAuthFlow),
    "deviceCode" | "device_code" => DeviceCode(DeviceCodeOAuthFlow),
});

/// Authorization code flow (P1 `AuthorizationCodeOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["authorizationUrl", "tokenUrl", "scopes"])))]
pub struct AuthorizationCodeOAuthFlow {
    /// `authorizationUrl` (REQUIRED).
    #[serde(default, alias = "authorization_url")]
    pub authorization_url: String,
    /// `tokenUrl` (REQUIRED).
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes` (REQUIRED): scope -> description.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// `pkceRequired`: PKCE (RFC 7636) is required.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "pkce_required"
    )]
    pub pkce_required: Option<bool>,
}

/// Client credentials flow (P1 `ClientCredentialsOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["tokenUrl", "scopes"])))]
pub struct ClientCredentialsOAuthFlow {
    /// `tokenUrl` (REQUIRED).
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes` (REQUIRED).
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Implicit flow, deprecated (P1 `ImplicitOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// `authorizationUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "authorization_url"
    )]
    pub authorization_url: Option<String>,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, String>,
}

/// Password flow, deprecated (P1 `PasswordOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// `tokenUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "token_url")]
    pub token_url: Option<String>,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, String>,
}

/// Device authorization flow, RFC 8628 (P1 `DeviceCodeOAuthFlow`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["deviceAuthorizationUrl", "tokenUrl", "scopes"])))]
pub struct DeviceCodeOAuthFlow {
    /// `deviceAuthorizationUrl` (REQUIRED).
    #[serde(default, alias = "device_authorization_url")]
    pub device_authorization_url: String,
    /// `tokenUrl` (REQUIRED).
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes` (REQUIRED).
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}
