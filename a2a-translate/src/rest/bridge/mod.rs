//! Structural moves between the two 0.3 dialects (REST <-> JSON-RPC models): messages, tasks,
//! stream events and push configs here, the agent card and its security schemes in `card`.

use a2a_types::timestamp::Timestamp;
use a2a_types::v03::{self, rest};

use crate::error::Untranslatable;
use crate::path::Path;
use crate::policy::Policy;

mod card;

pub(crate) use card::{card_in, card_out};

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
