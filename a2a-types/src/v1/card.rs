//! `AgentCard` and every nested type (P1 `AgentCard` ... `DeviceCodeOAuthFlow`).
//!
//! Unknown members of [`AgentCard`], [`AgentInterface`], [`AgentCapabilities`] and
//! [`AgentSkill`] are kept in their `extra` map, so a parse/serialize round trip loses nothing
//! (cards carry extension properties). The strict validator still reports them.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Metadata;

/// Self-describing manifest of an agent (P1 `AgentCard`), served at
/// `/.well-known/agent-card.json`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"])))]
pub struct AgentCard {
    /// `name` (REQUIRED): human-readable name.
    #[serde(default)]
    pub name: String,
    /// `description` (REQUIRED).
    #[serde(default)]
    pub description: String,
    /// `supportedInterfaces` (REQUIRED): ordered, the first is preferred.
    #[serde(default, alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// `provider`: the organization behind the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// `version` (REQUIRED): the agent's own version.
    #[serde(default)]
    pub version: String,
    /// `documentationUrl`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "documentation_url"
    )]
    pub documentation_url: Option<String>,
    /// `capabilities` (REQUIRED).
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// `securitySchemes`: scheme name -> scheme.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        alias = "security_schemes"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// `securityRequirements`: OR of ANDs of scheme names.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "security_requirements"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// `defaultInputModes` (REQUIRED): accepted media types.
    #[serde(default, alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// `defaultOutputModes` (REQUIRED): produced media types.
    #[serde(default, alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// `skills` (REQUIRED).
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// `signatures`: JWS signatures over the card (S1 §8.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// `iconUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "icon_url")]
    pub icon_url: Option<String>,
    /// Members 1.0 does not define, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Metadata,
}

impl AgentCard {
    /// A card with the REQUIRED members set, one interface, text in/out and no skills.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        interface: AgentInterface,
    ) -> Self {
        AgentCard {
            name: name.into(),
            description: description.into(),
            supported_interfaces: vec![interface],
            version: "1.0.0".into(),
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["text/plain".into()],
            ..Default::default()
        }
    }

    /// Appends a skill.
    pub fn with_skill(mut self, skill: AgentSkill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Appends an interface.
    pub fn with_interface(mut self, interface: AgentInterface) -> Self {
        self.supported_interfaces.push(interface);
        self
    }

    /// Sets `capabilities`.
    pub fn with_capabilities(mut self, capabilities: AgentCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The JSON a card signature covers (S1 §8.4.1), before RFC 8785 canonicalization: the card
    /// without `signatures`, with proto presence rules applied: unset fields omitted, `optional`
    /// fields kept when set (even to a default), REQUIRED fields always kept, and other fields
    /// omitted when they hold their default (`""`, `false`, empty list or map). Unknown members
    /// (`extra`) are kept as they are. Feed the result to a JCS canonicalizer, then sign or
    /// verify the bytes.
    pub fn signing_payload(&self) -> serde_json::Value {
        fn non_default(s: &mut Option<String>) {
            if s.as_deref() == Some("") {
                *s = None;
            }
        }
        fn non_false(b: &mut Option<bool>) {
            if *b == Some(false) {
                *b = None;
            }
        }
        let mut c = self.clone();
        c.signatures.clear();
        for i in &mut c.supported_interfaces {
            non_default(&mut i.tenant);
        }
        for e in &mut c.capabilities.extensions {
            non_default(&mut e.uri);
            non_default(&mut e.description);
            non_false(&mut e.required);
        }
        for s in c.security_schemes.values_mut() {
            match s {
                SecurityScheme::ApiKeySecurityScheme(x) => non_default(&mut x.description),
                SecurityScheme::HttpAuthSecurityScheme(x) => {
                    non_default(&mut x.description);
                    non_default(&mut x.bearer_format);
                }
                SecurityScheme::Oauth2SecurityScheme(x) => {
                    non_default(&mut x.description);
                    non_default(&mut x.oauth2_metadata_url);
                    match &mut x.flows {
                        OAuthFlows::AuthorizationCode(f) => {
                            non_default(&mut f.refresh_url);
                            non_false(&mut f.pkce_required);
                        }
                        OAuthFlows::ClientCredentials(f) => non_default(&mut f.refresh_url),
                        OAuthFlows::Implicit(f) => {
                            non_default(&mut f.authorization_url);
                            non_default(&mut f.refresh_url);
                        }
                        OAuthFlows::Password(f) => {
                            non_default(&mut f.token_url);
                            non_default(&mut f.refresh_url);
                        }
                        OAuthFlows::DeviceCode(f) => non_default(&mut f.refresh_url),
                    }
                }
                SecurityScheme::OpenIdConnectSecurityScheme(x) => non_default(&mut x.description),
                SecurityScheme::MtlsSecurityScheme(x) => non_default(&mut x.description),
            }
        }
        serde_json::to_value(&c).unwrap_or(serde_json::Value::Null)
    }
}

/// One way to reach the agent (P1 `AgentInterface`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["url", "protocolBinding", "protocolVersion"])))]
pub struct AgentInterface {
    /// `url` (REQUIRED): the endpoint (for gRPC, `host:port`).
    #[serde(default)]
    pub url: String,
    /// `protocolBinding` (REQUIRED): `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom URI; see
    /// [`crate::version::ProtocolBinding`].
    #[serde(default, alias = "protocol_binding")]
    pub protocol_binding: String,
    /// `tenant`: clients MUST copy it into every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `protocolVersion` (REQUIRED): `Major.Minor`, e.g. `"1.0"`.
    #[serde(default, alias = "protocol_version")]
    pub protocol_version: String,
    /// Members 1.0 does not define, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Metadata,
}

impl AgentInterface {
    /// An interface at `url` with `binding` and `version`.
    pub fn new(
        url: impl Into<String>,
        binding: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        AgentInterface {
            url: url.into(),
            protocol_binding: binding.into(),
            protocol_version: version.into(),
            ..Default::default()
        }
    }

    /// The binding, parsed (legacy aliases normalized).
    pub fn binding(&self) -> crate::version::ProtocolBinding {
        crate::version::ProtocolBinding::parse(&self.protocol_binding)
    }
}

/// The organization behind an agent (P1 `AgentProvider`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["url", "organization"])))]
pub struct AgentProvider {
    /// `url` (REQUIRED).
    #[serde(default)]
    pub url: String,
    /// `organization` (REQUIRED).
    #[serde(default)]
    pub organization: String,
}

/// Optional features the agent supports (P1 `AgentCapabilities`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `streaming`: `SendStreamingMessage` and `SubscribeToTask` are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// `pushNotifications`: the push-config operations are supported.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "push_notifications"
    )]
    pub push_notifications: Option<bool>,
    /// `extensions`: protocol extensions the agent supports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    /// `extendedAgentCard`: `GetExtendedAgentCard` is supported.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "extended_agent_card"
    )]
    pub extended_agent_card: Option<bool>,
    /// Members 1.0 does not define, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Metadata,
}

/// A protocol extension the agent supports (P1 `AgentExtension`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// `uri`: the extension's identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `required`: clients must support the extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// `params`: extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A capability the agent offers (P1 `AgentSkill`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["id", "name", "description", "tags"])))]
pub struct AgentSkill {
    /// `id` (REQUIRED).
    #[serde(default)]
    pub id: String,
    /// `name` (REQUIRED).
    #[serde(default)]
    pub name: String,
    /// `description` (REQUIRED).
    #[serde(default)]
    pub description: String,
    /// `tags` (REQUIRED): keywords.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `examples`: example prompts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// `inputModes`: overrides `defaultInputModes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "input_modes")]
    pub input_modes: Vec<String>,
    /// `outputModes`: overrides `defaultOutputModes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "output_modes")]
    pub output_modes: Vec<String>,
    /// `securityRequirements`: per-skill security.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        alias = "security_requirements"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Members 1.0 does not define, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub extra: Metadata,
}

impl AgentSkill {
    /// A skill with the REQUIRED members.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        tags: Vec<String>,
    ) -> Self {
        AgentSkill {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags,
            ..Default::default()
        }
    }
}

/// A JWS signature over the card (P1 `AgentCardSignature`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["protected", "signature"])))]
pub struct AgentCardSignature {
    /// `protected` (REQUIRED): base64url of the JWS protected header.
    #[serde(default)]
    pub protected: String,
    /// `signature` (REQUIRED): base64url signature.
    #[serde(default)]
    pub signature: String,
    /// `header`: unprotected JWS header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

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
