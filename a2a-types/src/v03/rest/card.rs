//! The HTTP+JSON 0.3 agent card (P0 form) and its security schemes.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Metadata;

// ---------------------------------------------------------------------------------------------
// Agent card (P0 form)
// ---------------------------------------------------------------------------------------------

/// Self-description of an agent in P0 form (P0 `AgentCard`, served by `GET /v1/card`).
///
/// Unlike the JSON-RPC card it has no `stateTransitionHistory`, uses the oneof
/// [`SecurityScheme`] and wraps scopes in [`StringList`]. Unknown members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentCard"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["protocolVersion", "name", "description", "url", "version", "capabilities"])))]
pub struct AgentCard {
    /// `protocolVersion`.
    #[serde(default, alias = "protocol_version")]
    pub protocol_version: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `description`.
    #[serde(default)]
    pub description: String,
    /// `url`: the preferred endpoint.
    #[serde(default)]
    pub url: String,
    /// `preferredTransport`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "preferred_transport"
    )]
    pub preferred_transport: Option<String>,
    /// `additionalInterfaces`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "additional_interfaces"
    )]
    pub additional_interfaces: Vec<AgentInterface>,
    /// `provider`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// `version`.
    #[serde(default)]
    pub version: String,
    /// `documentationUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "documentation_url"
    )]
    pub documentation_url: Option<String>,
    /// `iconUrl` (later 0.3 proto, field 18; absent from P0 @ v0.3.0).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "icon_url")]
    pub icon_url: Option<String>,
    /// `capabilities`.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// `securitySchemes`.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        alias = "security_schemes"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// `security`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<Security>,
    /// `defaultInputModes`.
    #[serde(default, alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// `defaultOutputModes`.
    #[serde(default, alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// `skills`.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// `supportsAuthenticatedExtendedCard`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "supports_authenticated_extended_card"
    )]
    pub supports_authenticated_extended_card: Option<bool>,
    /// `signatures`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// Members P0 does not define, preserved verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Metadata,
}

/// An endpoint (P0 `AgentInterface`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentInterface"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["url", "transport"])))]
pub struct AgentInterface {
    /// `url`.
    #[serde(default)]
    pub url: String,
    /// `transport`: `JSONRPC`, `GRPC`, `HTTP+JSON`.
    #[serde(default)]
    pub transport: String,
}

/// Service provider (P0 `AgentProvider`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentProvider"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["url", "organization"])))]
pub struct AgentProvider {
    /// `url`.
    #[serde(default)]
    pub url: String,
    /// `organization`.
    #[serde(default)]
    pub organization: String,
}

/// Optional capabilities (P0 `AgentCapabilities`; no `stateTransitionHistory`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentCapabilities"))]
pub struct AgentCapabilities {
    /// `streaming`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// `pushNotifications`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "push_notifications"
    )]
    pub push_notifications: Option<bool>,
    /// `extensions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

/// A supported extension (P0 `AgentExtension`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentExtension"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["uri"])))]
pub struct AgentExtension {
    /// `uri`.
    #[serde(default)]
    pub uri: String,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// `params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A skill (P0 `AgentSkill`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentSkill"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id", "name", "description"])))]
pub struct AgentSkill {
    /// `id`.
    #[serde(default)]
    pub id: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `description`.
    #[serde(default)]
    pub description: String,
    /// `tags`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `examples`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// `inputModes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "input_modes")]
    pub input_modes: Vec<String>,
    /// `outputModes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "output_modes")]
    pub output_modes: Vec<String>,
    /// `security`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<Security>,
}

/// A JWS signature of the card (P0 `AgentCardSignature`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.AgentCardSignature"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["protected", "signature"])))]
pub struct AgentCardSignature {
    /// `protected` (REQUIRED).
    #[serde(default)]
    pub protected: String,
    /// `signature` (REQUIRED).
    #[serde(default)]
    pub signature: String,
    /// `header`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

/// A list of strings (P0 `StringList`): `{"list":[..]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.StringList"))]
pub struct StringList {
    /// `list`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// One security requirement (P0 `Security`): `{"schemes":{name:{"list":[scopes]}}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.Security"))]
pub struct Security {
    /// `schemes`: scheme name -> required scopes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemes: BTreeMap<String, StringList>,
}

/// An authentication scheme (P0 `SecurityScheme`, `oneof scheme`): the member name is the
/// discriminator, e.g. `{"apiKeySecurityScheme":{"location":"header","name":"X-API-Key"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.SecurityScheme"))]
pub enum SecurityScheme {
    /// `apiKeySecurityScheme`.
    #[serde(alias = "api_key_security_scheme")]
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// `httpAuthSecurityScheme`.
    #[serde(alias = "http_auth_security_scheme")]
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// `oauth2SecurityScheme`.
    #[serde(alias = "oauth2_security_scheme")]
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// `openIdConnectSecurityScheme`.
    #[serde(alias = "open_id_connect_security_scheme")]
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// `mtlsSecurityScheme`.
    #[serde(alias = "mtls_security_scheme")]
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

/// API key scheme (P0 `APIKeySecurityScheme`; `location` is `in` in the JSON-RPC dialect).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.APIKeySecurityScheme"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["location", "name"])))]
pub struct ApiKeySecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `location`: `query`, `header` or `cookie`.
    #[serde(default)]
    pub location: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
}

/// HTTP auth scheme (P0 `HTTPAuthSecurityScheme`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.HTTPAuthSecurityScheme")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["scheme"])))]
pub struct HttpAuthSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `scheme`, e.g. `Bearer`.
    #[serde(default)]
    pub scheme: String,
    /// `bearerFormat`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "bearer_format"
    )]
    pub bearer_format: Option<String>,
}

/// OAuth 2.0 scheme (P0 `OAuth2SecurityScheme`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.OAuth2SecurityScheme"))]
pub struct OAuth2SecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `flows`: exactly one flow in P0.
    pub flows: OAuthFlows,
    /// `oauth2MetadataUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "oauth2_metadata_url"
    )]
    pub oauth2_metadata_url: Option<String>,
}

/// OpenID Connect scheme (P0 `OpenIdConnectSecurityScheme`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.OpenIdConnectSecurityScheme")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["openIdConnectUrl"])))]
pub struct OpenIdConnectSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `openIdConnectUrl`.
    #[serde(default, alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// Mutual TLS scheme (P0 `MutualTlsSecurityScheme`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.MutualTlsSecurityScheme")
)]
pub struct MutualTlsSecurityScheme {
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The flow of an OAuth 2.0 scheme (P0 `OAuthFlows`, `oneof flow`: exactly one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.OAuthFlows"))]
pub enum OAuthFlows {
    /// `authorizationCode`.
    #[serde(alias = "authorization_code")]
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// `clientCredentials`.
    #[serde(alias = "client_credentials")]
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// `implicit`.
    Implicit(ImplicitOAuthFlow),
    /// `password`.
    Password(PasswordOAuthFlow),
}

/// Authorization code flow (P0 `AuthorizationCodeOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.AuthorizationCodeOAuthFlow")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["authorizationUrl", "tokenUrl"])))]
pub struct AuthorizationCodeOAuthFlow {
    /// `authorizationUrl`.
    #[serde(default, alias = "authorization_url")]
    pub authorization_url: String,
    /// `tokenUrl`.
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`: name -> description.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Client credentials flow (P0 `ClientCredentialsOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "schema",
    schemars(rename = "v03.rest.ClientCredentialsOAuthFlow")
)]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["tokenUrl"])))]
pub struct ClientCredentialsOAuthFlow {
    /// `tokenUrl`.
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Implicit flow (P0 `ImplicitOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.ImplicitOAuthFlow"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["authorizationUrl"])))]
pub struct ImplicitOAuthFlow {
    /// `authorizationUrl`.
    #[serde(default, alias = "authorization_url")]
    pub authorization_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}

/// Password flow (P0 `PasswordOAuthFlow`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "v03.rest.PasswordOAuthFlow"))]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["tokenUrl"])))]
pub struct PasswordOAuthFlow {
    /// `tokenUrl`.
    #[serde(default, alias = "token_url")]
    pub token_url: String,
    /// `refreshUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "refresh_url"
    )]
    pub refresh_url: Option<String>,
    /// `scopes`.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
}
