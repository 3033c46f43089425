//! The agent card across the two 0.3 dialects: security requirements, the oneof security
//! schemes and the card itself (REST <-> JSON-RPC models).

use a2a_types::v03::{self, rest};

use crate::error::Untranslatable;
use crate::path::Path;

use super::{R, opt_vec};

// ------------------------------------------------------------------ REST -> JSON-RPC model

fn security_in(s: Vec<rest::Security>) -> Option<Vec<v03::SecurityRequirement>> {
    opt_vec(
        s.into_iter()
            .map(|r| r.schemes.into_iter().map(|(k, v)| (k, v.list)).collect())
            .collect(),
    )
}

fn scheme_in(s: rest::SecurityScheme) -> R<v03::SecurityScheme> {
    use rest::SecurityScheme as S;
    Ok(match s {
        S::ApiKeySecurityScheme(k) => v03::SecurityScheme::ApiKey(v03::ApiKeySecurityScheme {
            location: match k.location.as_str() {
                "header" => v03::ApiKeyLocation::Header,
                "query" => v03::ApiKeyLocation::Query,
                "cookie" => v03::ApiKeyLocation::Cookie,
                _ => {
                    return Err(Untranslatable::new(
                        "location",
                        "apiKey location is header, query or cookie",
                    ));
                }
            },
            name: k.name,
            description: k.description,
        }),
        S::HttpAuthSecurityScheme(h) => v03::SecurityScheme::Http(v03::HttpAuthSecurityScheme {
            scheme: h.scheme,
            bearer_format: h.bearer_format,
            description: h.description,
        }),
        S::Oauth2SecurityScheme(o) => {
            let mut flows = v03::OAuthFlows::default();
            match o.flows {
                rest::OAuthFlows::AuthorizationCode(f) => {
                    flows.authorization_code = Some(v03::AuthorizationCodeOAuthFlow {
                        authorization_url: f.authorization_url,
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    })
                }
                rest::OAuthFlows::ClientCredentials(f) => {
                    flows.client_credentials = Some(v03::ClientCredentialsOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    })
                }
                rest::OAuthFlows::Implicit(f) => {
                    flows.implicit = Some(v03::ImplicitOAuthFlow {
                        authorization_url: f.authorization_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    })
                }
                rest::OAuthFlows::Password(f) => {
                    flows.password = Some(v03::PasswordOAuthFlow {
                        token_url: f.token_url,
                        refresh_url: f.refresh_url,
                        scopes: f.scopes,
                    })
                }
            }
            v03::SecurityScheme::OAuth2(v03::OAuth2SecurityScheme {
                flows,
                oauth2_metadata_url: o.oauth2_metadata_url,
                description: o.description,
            })
        }
        S::OpenIdConnectSecurityScheme(o) => {
            v03::SecurityScheme::OpenIdConnect(v03::OpenIdConnectSecurityScheme {
                open_id_connect_url: o.open_id_connect_url,
                description: o.description,
            })
        }
        S::MtlsSecurityScheme(m) => v03::SecurityScheme::MutualTls(v03::MutualTlsSecurityScheme {
            description: m.description,
        }),
    })
}

pub(crate) fn card_in(c: rest::AgentCard) -> R<v03::AgentCard> {
    let root = Path::Root;
    let sp = root.field("securitySchemes");
    let mut schemes = std::collections::BTreeMap::new();
    for (name, s) in c.security_schemes {
        let s = scheme_in(s).map_err(|e| e.under(&sp.key(&name).to_string()))?;
        schemes.insert(name, s);
    }
    let mut card = v03::AgentCard::new(c.name, c.description, c.url, c.version);
    card.protocol_version = c.protocol_version;
    card.preferred_transport = c.preferred_transport;
    card.additional_interfaces = opt_vec(
        c.additional_interfaces
            .into_iter()
            .map(|i| v03::AgentInterface {
                url: i.url,
                transport: i.transport,
            })
            .collect(),
    );
    card.icon_url = c.icon_url;
    card.provider = c.provider.map(|p| v03::AgentProvider {
        organization: p.organization,
        url: p.url,
    });
    card.documentation_url = c.documentation_url;
    card.capabilities = v03::AgentCapabilities {
        streaming: c.capabilities.streaming,
        push_notifications: c.capabilities.push_notifications,
        state_transition_history: None,
        extensions: opt_vec(
            c.capabilities
                .extensions
                .into_iter()
                .map(|e| v03::AgentExtension {
                    uri: e.uri,
                    description: e.description,
                    required: e.required,
                    params: e.params,
                })
                .collect(),
        ),
        extra: Default::default(),
    };
    card.security_schemes = if schemes.is_empty() {
        None
    } else {
        Some(schemes)
    };
    card.security = security_in(c.security);
    card.default_input_modes = c.default_input_modes;
    card.default_output_modes = c.default_output_modes;
    card.skills = c
        .skills
        .into_iter()
        .map(|s| {
            let mut k = v03::AgentSkill::new(s.id, s.name, s.description, s.tags);
            k.examples = opt_vec(s.examples);
            k.input_modes = opt_vec(s.input_modes);
            k.output_modes = opt_vec(s.output_modes);
            k.security = security_in(s.security);
            k
        })
        .collect();
    card.supports_authenticated_extended_card = c.supports_authenticated_extended_card;
    card.signatures = opt_vec(
        c.signatures
            .into_iter()
            .map(|s| v03::AgentCardSignature {
                protected: s.protected,
                signature: s.signature,
                header: s.header,
            })
            .collect(),
    );
    card.extra = c.extra;
    Ok(card)
}

// ------------------------------------------------------------------ JSON-RPC model -> REST

fn security_out(s: Option<Vec<v03::SecurityRequirement>>) -> Vec<rest::Security> {
    s.unwrap_or_default()
        .into_iter()
        .map(|r| rest::Security {
            schemes: r
                .into_iter()
                .map(|(k, list)| (k, rest::StringList { list }))
                .collect(),
        })
        .collect()
}

fn scheme_out(s: v03::SecurityScheme) -> Result<rest::SecurityScheme, &'static str> {
    use v03::SecurityScheme as S;
    Ok(match s {
        S::ApiKey(k) => rest::SecurityScheme::ApiKeySecurityScheme(rest::ApiKeySecurityScheme {
            description: k.description,
            location: match k.location {
                v03::ApiKeyLocation::Header => "header",
                v03::ApiKeyLocation::Query => "query",
                v03::ApiKeyLocation::Cookie => "cookie",
            }
            .to_owned(),
            name: k.name,
        }),
        S::Http(h) => rest::SecurityScheme::HttpAuthSecurityScheme(rest::HttpAuthSecurityScheme {
            description: h.description,
            scheme: h.scheme,
            bearer_format: h.bearer_format,
        }),
        S::OAuth2(o) => {
            let f = o.flows;
            let n = usize::from(f.authorization_code.is_some())
                + usize::from(f.client_credentials.is_some())
                + usize::from(f.implicit.is_some())
                + usize::from(f.password.is_some());
            if n != 1 {
                return Err("a 0.3 proto OAuth scheme holds exactly one flow");
            }
            let flows = if let Some(f) = f.authorization_code {
                rest::OAuthFlows::AuthorizationCode(rest::AuthorizationCodeOAuthFlow {
                    authorization_url: f.authorization_url,
                    token_url: f.token_url,
                    refresh_url: f.refresh_url,
                    scopes: f.scopes,
                })
            } else if let Some(f) = f.client_credentials {
                rest::OAuthFlows::ClientCredentials(rest::ClientCredentialsOAuthFlow {
                    token_url: f.token_url,
                    refresh_url: f.refresh_url,
                    scopes: f.scopes,
                })
            } else if let Some(f) = f.implicit {
                rest::OAuthFlows::Implicit(rest::ImplicitOAuthFlow {
                    authorization_url: f.authorization_url,
                    refresh_url: f.refresh_url,
                    scopes: f.scopes,
                })
            } else if let Some(f) = f.password {
                rest::OAuthFlows::Password(rest::PasswordOAuthFlow {
                    token_url: f.token_url,
                    refresh_url: f.refresh_url,
                    scopes: f.scopes,
                })
            } else {
                return Err("a 0.3 proto OAuth scheme holds exactly one flow");
            };
            rest::SecurityScheme::Oauth2SecurityScheme(rest::OAuth2SecurityScheme {
                description: o.description,
                flows,
                oauth2_metadata_url: o.oauth2_metadata_url,
            })
        }
        S::OpenIdConnect(o) => {
            rest::SecurityScheme::OpenIdConnectSecurityScheme(rest::OpenIdConnectSecurityScheme {
                description: o.description,
                open_id_connect_url: o.open_id_connect_url,
            })
        }
        S::MutualTls(m) => {
            rest::SecurityScheme::MtlsSecurityScheme(rest::MutualTlsSecurityScheme {
                description: m.description,
            })
        }
    })
}

/// JSON-RPC-model card -> REST card; members the 0.3 proto lacks (capability/skill extension
/// members) are reported through `omit` with their path.
pub(crate) fn card_out(
    c: v03::AgentCard,
    omit: &mut Vec<crate::error::Omission>,
) -> R<rest::AgentCard> {
    let root = Path::Root;
    let cp = root.field("capabilities");
    for k in c.capabilities.extra.keys() {
        omit.push(crate::error::Omission {
            path: cp.key(k).to_string(),
            reason: "the 0.3 proto capabilities have no such member".into(),
        });
    }
    let mut schemes = std::collections::BTreeMap::new();
    for (name, s) in c.security_schemes.unwrap_or_default() {
        let s = scheme_out(s)
            .map_err(|r| Untranslatable::at(&root.field("securitySchemes").key(&name), r))?;
        schemes.insert(name, s);
    }
    let kp = root.field("skills");
    let mut skills = Vec::with_capacity(c.skills.len());
    for (i, s) in c.skills.into_iter().enumerate() {
        for k in s.extra.keys() {
            let at = kp.index(i);
            omit.push(crate::error::Omission {
                path: at.key(k).to_string(),
                reason: "the 0.3 proto skills have no such member".into(),
            });
        }
        skills.push(rest::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples.unwrap_or_default(),
            input_modes: s.input_modes.unwrap_or_default(),
            output_modes: s.output_modes.unwrap_or_default(),
            security: security_out(s.security),
        });
    }
    Ok(rest::AgentCard {
        protocol_version: c.protocol_version,
        name: c.name,
        description: c.description,
        url: c.url,
        preferred_transport: c.preferred_transport,
        additional_interfaces: c
            .additional_interfaces
            .unwrap_or_default()
            .into_iter()
            .map(|i| rest::AgentInterface {
                url: i.url,
                transport: i.transport,
            })
            .collect(),
        provider: c.provider.map(|p| rest::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: c.version,
        documentation_url: c.documentation_url,
        icon_url: c.icon_url,
        capabilities: rest::AgentCapabilities {
            streaming: c.capabilities.streaming,
            push_notifications: c.capabilities.push_notifications,
            extensions: c
                .capabilities
                .extensions
                .unwrap_or_default()
                .into_iter()
                .map(|e| rest::AgentExtension {
                    uri: e.uri,
                    description: e.description,
                    required: e.required,
                    params: e.params,
                })
                .collect(),
        },
        security_schemes: schemes,
        security: security_out(c.security),
        default_input_modes: c.default_input_modes,
        default_output_modes: c.default_output_modes,
        skills,
        supports_authenticated_extended_card: c.supports_authenticated_extended_card,
        signatures: Vec::new(),
        extra: c.extra,
    })
}
