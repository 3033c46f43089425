//! Structural moves between the two 0.3 dialects (REST <-> JSON-RPC models).

use a2a_types::timestamp::Timestamp;
use a2a_types::v03::{self, rest};

use crate::error::Untranslatable;
use crate::path::Path;
use crate::policy::Policy;

type R<T> = Result<T, Untranslatable>;

fn opt_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() { None } else { Some(v) }
}

// ------------------------------------------------------------------ REST -> JSON-RPC model

pub(crate) fn part_in(p: rest::Part) -> v03::Part {
    match p.content {
        rest::PartContent::Text(text) => v03::Part::Text(v03::TextPart {
            text,
            metadata: p.metadata,
        }),
        rest::PartContent::File(f) => v03::Part::File(v03::FilePart {
            file: match f.file {
                rest::FileContent::Uri(uri) => v03::FileContent::Uri(v03::FileWithUri {
                    uri,
                    name: f.name,
                    mime_type: f.mime_type,
                }),
                rest::FileContent::Bytes(b) => v03::FileContent::Bytes(v03::FileWithBytes {
                    bytes: b.into_string(),
                    name: f.name,
                    mime_type: f.mime_type,
                }),
            },
            metadata: p.metadata,
        }),
        rest::PartContent::Data(d) => v03::Part::Data(v03::DataPart {
            data: d.data,
            metadata: p.metadata,
        }),
    }
}

pub(crate) fn message_in(m: rest::Message, policy: Policy, at: &Path<'_>) -> R<v03::Message> {
    let role = match m.role {
        rest::Role::User => v03::Role::User,
        rest::Role::Agent => v03::Role::Agent,
        rest::Role::Unspecified if !policy.is_strict() => v03::Role::Agent,
        rest::Role::Unspecified => {
            return Err(Untranslatable::at(
                &at.field("role"),
                "ROLE_UNSPECIFIED is not a sender",
            ));
        }
    };
    let mut out = v03::Message::new(
        role,
        m.message_id,
        m.content.into_iter().map(part_in).collect(),
    );
    out.context_id = m.context_id;
    out.task_id = m.task_id;
    out.extensions = opt_vec(m.extensions);
    out.metadata = m.metadata;
    Ok(out)
}

fn status_in(s: rest::TaskStatus, policy: Policy, at: &Path<'_>) -> R<v03::TaskStatus> {
    Ok(v03::TaskStatus {
        state: s.state.to_jsonrpc(),
        message: s
            .message
            .map(|m| message_in(m, policy, &at.field("message")))
            .transpose()?,
        timestamp: s.timestamp.map(|t| t.as_str().to_owned()),
    })
}

fn artifact_in(a: rest::Artifact) -> v03::Artifact {
    let mut out = v03::Artifact::new(a.artifact_id, a.parts.into_iter().map(part_in).collect());
    out.name = a.name;
    out.description = a.description;
    out.extensions = opt_vec(a.extensions);
    out.metadata = a.metadata;
    out
}

pub(crate) fn task_in(t: rest::Task, policy: Policy, at: &Path<'_>) -> R<v03::Task> {
    let status = status_in(t.status, policy, &at.field("status"))?;
    let mut out = v03::Task::new(t.id, t.context_id, status.state);
    out.status = status;
    out.artifacts = opt_vec(t.artifacts.into_iter().map(artifact_in).collect());
    let hp = at.field("history");
    let mut history = Vec::with_capacity(t.history.len());
    for (i, m) in t.history.into_iter().enumerate() {
        history.push(message_in(m, policy, &hp.index(i))?);
    }
    out.history = opt_vec(history);
    out.metadata = t.metadata;
    Ok(out)
}

pub(crate) fn stream_in(e: rest::StreamResponse, policy: Policy) -> R<v03::StreamResult> {
    let root = Path::Root;
    Ok(match e {
        rest::StreamResponse::Task(t) => {
            v03::StreamResult::Task(task_in(t, policy, &root.field("task"))?)
        }
        rest::StreamResponse::Message(m) => {
            v03::StreamResult::Message(message_in(m, policy, &root.field("message"))?)
        }
        rest::StreamResponse::StatusUpdate(s) => {
            let sp = root.field("statusUpdate");
            let mut out = v03::TaskStatusUpdateEvent::new(
                s.task_id,
                s.context_id,
                status_in(s.status, policy, &sp.field("status"))?,
                s.is_final,
            );
            out.metadata = s.metadata;
            v03::StreamResult::StatusUpdate(out)
        }
        rest::StreamResponse::ArtifactUpdate(a) => {
            let mut out =
                v03::TaskArtifactUpdateEvent::new(a.task_id, a.context_id, artifact_in(a.artifact));
            out.append = a.append;
            out.last_chunk = a.last_chunk;
            out.metadata = a.metadata;
            v03::StreamResult::ArtifactUpdate(out)
        }
    })
}

fn auth_in(a: rest::AuthenticationInfo) -> v03::PushNotificationAuthenticationInfo {
    v03::PushNotificationAuthenticationInfo {
        schemes: a.schemes,
        credentials: a.credentials,
    }
}

pub(crate) fn push_in(c: rest::PushNotificationConfig) -> v03::PushNotificationConfig {
    v03::PushNotificationConfig {
        url: c.url,
        id: c.id,
        token: c.token,
        authentication: c.authentication.map(auth_in),
    }
}

pub(crate) fn task_push_in(
    c: rest::TaskPushNotificationConfig,
    at: &Path<'_>,
) -> R<v03::TaskPushNotificationConfig> {
    let mut inner = push_in(c.push_notification_config);
    let task_id = if let Some(n) = rest::PushConfigName::parse(&c.name) {
        match &inner.id {
            None => inner.id = Some(n.config_id),
            Some(id) if *id != n.config_id => {
                return Err(Untranslatable::at(
                    &at.field("name"),
                    "the resource name and pushNotificationConfig.id name different configs",
                ));
            }
            Some(_) => {}
        }
        n.task_id
    } else if let Some(n) = rest::TaskName::parse(&c.name) {
        n.task_id
    } else {
        return Err(Untranslatable::at(
            &at.field("name"),
            "not a tasks/{id}/pushNotificationConfigs/{id} resource name",
        ));
    };
    Ok(v03::TaskPushNotificationConfig {
        task_id,
        push_notification_config: inner,
    })
}

/// REST send options -> JSON-RPC model. Proto3 has no presence: inside a present
/// configuration an absent `blocking` is `false`, and `historyLength` 0 is "unlimited".
pub(crate) fn send_config_in(c: rest::SendMessageConfiguration) -> v03::MessageSendConfiguration {
    v03::MessageSendConfiguration {
        accepted_output_modes: opt_vec(c.accepted_output_modes),
        blocking: Some(c.blocking.unwrap_or(false)),
        history_length: c.history_length.filter(|h| *h != 0),
        push_notification_config: c.push_notification.map(push_in),
    }
}

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

pub(crate) fn part_out(p: v03::Part) -> R<rest::Part> {
    Ok(match p {
        v03::Part::Text(t) => rest::Part {
            content: rest::PartContent::Text(t.text),
            metadata: t.metadata,
        },
        v03::Part::File(f) => {
            let (file, name, mime_type) = match f.file {
                v03::FileContent::Uri(u) => (rest::FileContent::Uri(u.uri), u.name, u.mime_type),
                v03::FileContent::Bytes(b) => {
                    let bytes = a2a_types::binary::Base64Bytes::new(b.bytes).map_err(|e| {
                        Untranslatable::new("file.bytes", format!("not base64: {}", e.reason))
                    })?;
                    (rest::FileContent::Bytes(bytes), b.name, b.mime_type)
                }
            };
            rest::Part {
                content: rest::PartContent::File(rest::FilePart {
                    file,
                    mime_type,
                    name,
                }),
                metadata: f.metadata,
            }
        }
        v03::Part::Data(d) => rest::Part {
            content: rest::PartContent::Data(rest::DataPart { data: d.data }),
            metadata: d.metadata,
        },
    })
}

fn parts_out(parts: Vec<v03::Part>) -> R<Vec<rest::Part>> {
    parts.into_iter().map(part_out).collect()
}

pub(crate) fn message_out(m: v03::Message) -> R<rest::Message> {
    // referenceTaskIds are refused before (the 1.0 source is checked by the caller).
    let role = match m.role {
        v03::Role::User => rest::Role::User,
        v03::Role::Agent => rest::Role::Agent,
    };
    let mut out = rest::Message::new(role, m.message_id, parts_out(m.parts)?);
    out.context_id = m.context_id;
    out.task_id = m.task_id;
    out.extensions = m.extensions.unwrap_or_default();
    out.metadata = m.metadata;
    Ok(out)
}

fn timestamp_out(t: Option<String>) -> R<Option<Timestamp>> {
    t.map(|t| Timestamp::parse(&t).map_err(|e| Untranslatable::new("status.timestamp", e.reason)))
        .transpose()
}

fn status_out(s: v03::TaskStatus) -> R<rest::TaskStatus> {
    Ok(rest::TaskStatus {
        state: rest::TaskState::from_jsonrpc(s.state),
        message: s.message.map(message_out).transpose()?,
        timestamp: timestamp_out(s.timestamp)?,
    })
}

fn artifact_out(a: v03::Artifact) -> R<rest::Artifact> {
    Ok(rest::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: parts_out(a.parts)?,
        metadata: a.metadata,
        extensions: a.extensions.unwrap_or_default(),
    })
}

pub(crate) fn task_out(t: v03::Task) -> R<rest::Task> {
    Ok(rest::Task {
        id: t.id,
        context_id: t.context_id,
        status: status_out(t.status)?,
        artifacts: t
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .map(artifact_out)
            .collect::<R<_>>()?,
        history: t
            .history
            .unwrap_or_default()
            .into_iter()
            .map(message_out)
            .collect::<R<_>>()?,
        metadata: t.metadata,
    })
}

pub(crate) fn stream_out(e: v03::StreamResult) -> R<rest::StreamResponse> {
    Ok(match e {
        v03::StreamResult::Task(t) => rest::StreamResponse::Task(task_out(t)?),
        v03::StreamResult::Message(m) => rest::StreamResponse::Message(message_out(m)?),
        v03::StreamResult::StatusUpdate(s) => {
            rest::StreamResponse::StatusUpdate(rest::TaskStatusUpdateEvent {
                task_id: s.task_id,
                context_id: s.context_id,
                status: status_out(s.status)?,
                is_final: s.is_final,
                metadata: s.metadata,
            })
        }
        v03::StreamResult::ArtifactUpdate(a) => {
            rest::StreamResponse::ArtifactUpdate(rest::TaskArtifactUpdateEvent {
                task_id: a.task_id,
                context_id: a.context_id,
                artifact: artifact_out(a.artifact)?,
                append: a.append,
                last_chunk: a.last_chunk,
                metadata: a.metadata,
            })
        }
    })
}

pub(crate) fn push_out(c: v03::PushNotificationConfig) -> rest::PushNotificationConfig {
    rest::PushNotificationConfig {
        id: c.id,
        url: c.url,
        token: c.token,
        authentication: c.authentication.map(|a| rest::AuthenticationInfo {
            schemes: a.schemes,
            credentials: a.credentials,
        }),
    }
}

pub(crate) fn task_push_out(
    c: v03::TaskPushNotificationConfig,
) -> rest::TaskPushNotificationConfig {
    let name = match &c.push_notification_config.id {
        Some(id) => rest::PushConfigName {
            task_id: c.task_id,
            config_id: id.clone(),
        }
        .to_string(),
        None => rest::TaskName { task_id: c.task_id }.to_string(),
    };
    rest::TaskPushNotificationConfig {
        name,
        push_notification_config: push_out(c.push_notification_config),
    }
}

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
