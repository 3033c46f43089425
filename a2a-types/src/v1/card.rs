//! `AgentCard` and its nested types (P1 `AgentCard` ... `AgentCardSignature`); the security
//! schemes and requirements it names are in `security.rs`.
//!
//! Unknown members of [`AgentCard`], [`AgentInterface`], [`AgentCapabilities`] and
//! [`AgentSkill`] are kept in their `extra` map, so a parse/serialize round trip loses nothing
//! (cards carry extension properties). The strict validator still reports them.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Metadata;
use super::security::{OAuthFlows, SecurityRequirement, SecurityScheme};

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
