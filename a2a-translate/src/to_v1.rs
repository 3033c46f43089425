//! A2A 0.3 (JSON-RPC dialect) -> A2A 1.0; the HTTP+JSON dialect is in [`rest`].
//!
//! One function per type. Each takes the 0.3 value by value and returns the 1.0 value or an
//! [`Untranslatable`] naming the JSON path (relative to the value passed in) and the reason.

use a2a_types::binary::Base64Bytes;
use a2a_types::timestamp::Timestamp;
use a2a_types::{v1, v03};
use serde_json::Value;

use crate::error::Untranslatable;
use crate::path::Path;
use crate::policy::Policy;
use crate::rpc::{ErrorObject, V1Request, V1Result, V03Request, V03Result};
use crate::{DATA_PART_COMPAT, errors};

pub use crate::card::card_to_v1 as card;

type R<T> = Result<T, Untranslatable>;

/// The 0.3 HTTP+JSON dialect (ProtoJSON of the 0.3 proto).
pub mod rest {
    pub use crate::rest::to_v1::*;
}

fn vec_of<T>(v: Option<Vec<T>>) -> Vec<T> {
    v.unwrap_or_default()
}

fn lose_metadata(
    policy: Policy,
    m: &Option<v03::Metadata>,
    at: &Path<'_>,
    reason: &'static str,
) -> R<()> {
    if policy.is_strict() && m.as_ref().is_some_and(|m| !m.is_empty()) {
        return Err(Untranslatable::at(at, reason));
    }
    Ok(())
}

/// A 0.3 role as the 1.0 enum.
pub fn role(r: v03::Role) -> v1::Role {
    match r {
        v03::Role::User => v1::Role::User,
        v03::Role::Agent => v1::Role::Agent,
    }
}

/// A 0.3 task state as the 1.0 enum (`unknown` is `TASK_STATE_UNSPECIFIED`).
pub fn task_state(s: v03::TaskState) -> v1::TaskState {
    use v03::TaskState as S;
    match s {
        S::Unknown => v1::TaskState::Unspecified,
        S::Submitted => v1::TaskState::Submitted,
        S::Working => v1::TaskState::Working,
        S::Completed => v1::TaskState::Completed,
        S::Failed => v1::TaskState::Failed,
        S::Canceled => v1::TaskState::Canceled,
        S::InputRequired => v1::TaskState::InputRequired,
        S::Rejected => v1::TaskState::Rejected,
        S::AuthRequired => v1::TaskState::AuthRequired,
    }
}

/// A 0.3 part as a 1.0 part; a `data_part_compat` data part is unwrapped.
pub fn part(p: v03::Part) -> R<v1::Part> {
    part_at(p, &Path::Root)
}

pub(crate) fn part_at(p: v03::Part, at: &Path<'_>) -> R<v1::Part> {
    Ok(match p {
        v03::Part::Text(t) => v1::Part {
            content: v1::PartContent::Text(t.text),
            metadata: t.metadata,
            filename: None,
            media_type: None,
        },
        v03::Part::File(f) => {
            let (content, name, mime) = match f.file {
                v03::FileContent::Bytes(b) => {
                    let raw = Base64Bytes::new(b.bytes).map_err(|e| {
                        let fp = at.field("file");
                        Untranslatable::at(&fp.field("bytes"), format!("not base64: {}", e.reason))
                    })?;
                    (v1::PartContent::Raw(raw), b.name, b.mime_type)
                }
                v03::FileContent::Uri(u) => (v1::PartContent::Url(u.uri), u.name, u.mime_type),
            };
            v1::Part {
                content,
                metadata: f.metadata,
                filename: name,
                media_type: mime,
            }
        }
        v03::Part::Data(d) => {
            let mut metadata = d.metadata;
            let compat = metadata.as_mut().and_then(|m| m.remove(DATA_PART_COMPAT));
            let unwrapped = compat.is_some();
            let content = match compat {
                None => Value::Object(d.data),
                Some(Value::Bool(true)) => {
                    let mut data = d.data;
                    match (data.remove("value"), data.is_empty()) {
                        (Some(v), true) => v,
                        _ => {
                            return Err(Untranslatable::at(
                                &at.field("data"),
                                "data_part_compat data must be exactly {\"value\": X}",
                            ));
                        }
                    }
                }
                Some(_) => {
                    let mp = at.field("metadata");
                    return Err(Untranslatable::at(
                        &mp.field(DATA_PART_COMPAT),
                        "reserved: data_part_compat must be true when present",
                    ));
                }
            };
            // The flag was the only member: the 1.0 part had no metadata.
            if unwrapped && metadata.as_ref().is_some_and(|m| m.is_empty()) {
                metadata = None;
            }
            v1::Part {
                content: v1::PartContent::Data(content),
                metadata,
                filename: None,
                media_type: None,
            }
        }
    })
}

fn parts_at(parts: Vec<v03::Part>, at: &Path<'_>) -> R<Vec<v1::Part>> {
    let mut out = Vec::with_capacity(parts.len());
    for (i, p) in parts.into_iter().enumerate() {
        out.push(part_at(p, &at.index(i))?);
    }
    Ok(out)
}

/// A 0.3 message as a 1.0 message.
pub fn message(m: v03::Message) -> R<v1::Message> {
    message_at(m, &Path::Root)
}

pub(crate) fn message_at(m: v03::Message, at: &Path<'_>) -> R<v1::Message> {
    Ok(v1::Message {
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        role: role(m.role),
        parts: parts_at(m.parts, &at.field("parts"))?,
        metadata: m.metadata,
        extensions: vec_of(m.extensions),
        reference_task_ids: vec_of(m.reference_task_ids),
    })
}

/// A 0.3 artifact as a 1.0 artifact.
pub fn artifact(a: v03::Artifact) -> R<v1::Artifact> {
    artifact_at(a, &Path::Root)
}

fn artifact_at(a: v03::Artifact, at: &Path<'_>) -> R<v1::Artifact> {
    Ok(v1::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: parts_at(a.parts, &at.field("parts"))?,
        metadata: a.metadata,
        extensions: vec_of(a.extensions),
    })
}

/// A 0.3 timestamp (free ISO 8601, naive taken as UTC) as a 1.0 UTC timestamp.
pub fn timestamp(s: &str) -> R<Timestamp> {
    Timestamp::parse(s)
        .map_err(|e| Untranslatable::new("", format!("not an ISO 8601 timestamp: {}", e.reason)))
}

/// A 0.3 task status as a 1.0 task status.
pub fn task_status(s: v03::TaskStatus) -> R<v1::TaskStatus> {
    task_status_at(s, &Path::Root)
}

fn task_status_at(s: v03::TaskStatus, at: &Path<'_>) -> R<v1::TaskStatus> {
    Ok(v1::TaskStatus {
        state: task_state(s.state),
        message: s
            .message
            .map(|m| message_at(m, &at.field("message")))
            .transpose()?,
        timestamp: s
            .timestamp
            .map(|t| {
                Timestamp::parse(&t).map_err(|e| {
                    Untranslatable::at(
                        &at.field("timestamp"),
                        format!("not an ISO 8601 timestamp: {}", e.reason),
                    )
                })
            })
            .transpose()?,
    })
}

/// A 0.3 task as a 1.0 task.
pub fn task(t: v03::Task) -> R<v1::Task> {
    task_at(t, &Path::Root)
}

pub(crate) fn task_at(t: v03::Task, at: &Path<'_>) -> R<v1::Task> {
    let mut artifacts = Vec::new();
    if let Some(a) = t.artifacts {
        let ap = at.field("artifacts");
        artifacts.reserve(a.len());
        for (i, a) in a.into_iter().enumerate() {
            artifacts.push(artifact_at(a, &ap.index(i))?);
        }
    }
    let mut history = Vec::new();
    if let Some(h) = t.history {
        let hp = at.field("history");
        history.reserve(h.len());
        for (i, m) in h.into_iter().enumerate() {
            history.push(message_at(m, &hp.index(i))?);
        }
    }
    Ok(v1::Task {
        id: t.id,
        context_id: Some(t.context_id),
        status: task_status_at(t.status, &at.field("status"))?,
        artifacts,
        history,
        metadata: t.metadata,
    })
}

/// A 0.3 status update as a 1.0 status update (`final` is dropped: on a stream it ends the
/// stream, see [`ends_stream`]).
pub fn status_update(e: v03::TaskStatusUpdateEvent) -> R<v1::TaskStatusUpdateEvent> {
    status_update_at(e, &Path::Root)
}

fn status_update_at(e: v03::TaskStatusUpdateEvent, at: &Path<'_>) -> R<v1::TaskStatusUpdateEvent> {
    Ok(v1::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: task_status_at(e.status, &at.field("status"))?,
        metadata: e.metadata,
    })
}

/// A 0.3 artifact update as a 1.0 artifact update.
pub fn artifact_update(e: v03::TaskArtifactUpdateEvent) -> R<v1::TaskArtifactUpdateEvent> {
    artifact_update_at(e, &Path::Root)
}

fn artifact_update_at(
    e: v03::TaskArtifactUpdateEvent,
    at: &Path<'_>,
) -> R<v1::TaskArtifactUpdateEvent> {
    Ok(v1::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: artifact_at(e.artifact, &at.field("artifact"))?,
        append: e.append,
        last_chunk: e.last_chunk,
        metadata: e.metadata,
    })
}

/// True when this 0.3 stream result ends its stream (`final: true`): a 1.0 server closes the
/// stream after sending the translated event.
pub fn ends_stream(e: &v03::StreamResult) -> bool {
    matches!(e, v03::StreamResult::StatusUpdate(s) if s.is_final)
}

/// A bare 0.3 stream result as a 1.0 `StreamResponse` (wrapper added, `final` dropped).
pub fn stream_event(e: v03::StreamResult) -> R<v1::StreamResponse> {
    let root = Path::Root;
    Ok(match e {
        v03::StreamResult::Task(t) => v1::StreamResponse::Task(task_at(t, &root)?),
        v03::StreamResult::Message(m) => v1::StreamResponse::Message(message_at(m, &root)?),
        v03::StreamResult::StatusUpdate(s) => {
            v1::StreamResponse::StatusUpdate(status_update_at(s, &root)?)
        }
        v03::StreamResult::ArtifactUpdate(a) => {
            v1::StreamResponse::ArtifactUpdate(artifact_update_at(a, &root)?)
        }
    })
}

/// A 0.3 push delivery body (a bare `kind`-discriminated object, usually a `Task`) as the 1.0
/// body (`StreamResponse`).
pub fn push_payload(e: v03::StreamResult) -> R<v1::StreamResponse> {
    stream_event(e)
}

/// A bare 0.3 send result as the wrapped 1.0 `SendMessageResponse`.
pub fn send_message_result(r: v03::SendMessageResult) -> R<v1::SendMessageResponse> {
    let root = Path::Root;
    Ok(match r {
        v03::SendMessageResult::Task(t) => v1::SendMessageResponse::Task(task_at(t, &root)?),
        v03::SendMessageResult::Message(m) => {
            v1::SendMessageResponse::Message(message_at(m, &root)?)
        }
    })
}

fn authentication_at(
    a: v03::PushNotificationAuthenticationInfo,
    policy: Policy,
    at: &Path<'_>,
) -> R<v1::AuthenticationInfo> {
    let n = a.schemes.len();
    if n != 1 && policy.is_strict() {
        let reason = if n == 0 {
            "A2A 1.0 push authentication needs a scheme"
        } else {
            "A2A 1.0 push authentication carries one scheme"
        };
        return Err(Untranslatable::at(&at.field("schemes"), reason));
    }
    Ok(v1::AuthenticationInfo {
        scheme: a.schemes.into_iter().next().unwrap_or_default(),
        credentials: a.credentials,
    })
}

/// A nested 0.3 `PushNotificationConfig` (no task id) as a flat 1.0 config with no task id.
pub fn push_notification_config(
    c: v03::PushNotificationConfig,
    policy: Policy,
) -> R<v1::TaskPushNotificationConfig> {
    inner_push_config_at(c, None, policy, &Path::Root)
}

fn inner_push_config_at(
    c: v03::PushNotificationConfig,
    task_id: Option<String>,
    policy: Policy,
    at: &Path<'_>,
) -> R<v1::TaskPushNotificationConfig> {
    Ok(v1::TaskPushNotificationConfig {
        tenant: None,
        id: c.id,
        task_id,
        url: c.url,
        token: c.token,
        authentication: c
            .authentication
            .map(|a| authentication_at(a, policy, &at.field("authentication")))
            .transpose()?,
    })
}

/// A nested 0.3 `TaskPushNotificationConfig` as the flat 1.0 config.
pub fn task_push_config(
    c: v03::TaskPushNotificationConfig,
    policy: Policy,
) -> R<v1::TaskPushNotificationConfig> {
    task_push_config_at(c, policy, &Path::Root)
}

fn task_push_config_at(
    c: v03::TaskPushNotificationConfig,
    policy: Policy,
    at: &Path<'_>,
) -> R<v1::TaskPushNotificationConfig> {
    inner_push_config_at(
        c.push_notification_config,
        Some(c.task_id),
        policy,
        &at.field("pushNotificationConfig"),
    )
}

/// A 0.3 `historyLength` as the 1.0 limit it means (H20): 0.3 `0` is "no limit" (P0's comment;
/// a2a-python and a2a-js read it so), which is 1.0 unset (1.0 `0` would mean no history).
pub fn history_length(h: Option<i32>) -> Option<i32> {
    h.filter(|n| *n != 0)
}

/// 0.3 send options as 1.0 send options (`returnImmediately = !blocking`).
pub fn send_configuration(
    c: v03::MessageSendConfiguration,
    policy: Policy,
) -> R<v1::SendMessageConfiguration> {
    send_configuration_at(c, policy, &Path::Root)
}

fn send_configuration_at(
    c: v03::MessageSendConfiguration,
    policy: Policy,
    at: &Path<'_>,
) -> R<v1::SendMessageConfiguration> {
    Ok(v1::SendMessageConfiguration {
        accepted_output_modes: vec_of(c.accepted_output_modes),
        task_push_notification_config: c
            .push_notification_config
            .map(|p| inner_push_config_at(p, None, policy, &at.field("pushNotificationConfig")))
            .transpose()?,
        history_length: history_length(c.history_length),
        return_immediately: c.blocking.map(|b| !b),
    })
}

/// 0.3 `MessageSendParams` as a 1.0 `SendMessageRequest`.
pub fn send_message_request(
    p: v03::MessageSendParams,
    policy: Policy,
) -> R<v1::SendMessageRequest> {
    let root = Path::Root;
    Ok(v1::SendMessageRequest {
        tenant: None,
        message: message_at(p.message, &root.field("message"))?,
        configuration: p
            .configuration
            .map(|c| send_configuration_at(c, policy, &root.field("configuration")))
            .transpose()?,
        metadata: p.metadata,
    })
}

/// A 0.3 JSON-RPC request as the 1.0 request. Paths in refusals start with `params.`.
pub fn request(r: V03Request, policy: Policy) -> R<V1Request> {
    request_inner(r, policy).map_err(|e| e.under("params"))
}

fn request_inner(r: V03Request, policy: Policy) -> R<V1Request> {
    let root = Path::Root;
    let md = root.field("metadata");
    Ok(match r {
        V03Request::SendMessage(p) => V1Request::SendMessage(send_message_request(p, policy)?),
        V03Request::SendStreamingMessage(p) => {
            V1Request::SendStreamingMessage(send_message_request(p, policy)?)
        }
        V03Request::GetTask(p) => {
            lose_metadata(
                policy,
                &p.metadata,
                &md,
                "A2A 1.0 GetTask carries no request metadata",
            )?;
            V1Request::GetTask(v1::GetTaskRequest {
                tenant: None,
                id: p.id,
                history_length: history_length(p.history_length),
            })
        }
        V03Request::CancelTask(p) => V1Request::CancelTask(v1::CancelTaskRequest {
            tenant: None,
            id: p.id,
            metadata: p.metadata,
        }),
        V03Request::Resubscribe(p) => {
            lose_metadata(
                policy,
                &p.metadata,
                &md,
                "A2A 1.0 SubscribeToTask carries no request metadata",
            )?;
            V1Request::SubscribeToTask(v1::SubscribeToTaskRequest {
                tenant: None,
                id: p.id,
            })
        }
        V03Request::SetTaskPushNotificationConfig(c) => {
            V1Request::CreateTaskPushNotificationConfig(task_push_config_at(c, policy, &root)?)
        }
        V03Request::GetTaskPushNotificationConfig(p) => {
            lose_metadata(
                policy,
                &p.metadata,
                &md,
                "A2A 1.0 push config requests carry no metadata",
            )?;
            let id = match p.push_notification_config_id {
                Some(id) => id,
                None if !policy.is_strict() => String::new(),
                None => {
                    return Err(Untranslatable::at(
                        &root.field("pushNotificationConfigId"),
                        "A2A 1.0 GetTaskPushNotificationConfig requires a config id",
                    ));
                }
            };
            V1Request::GetTaskPushNotificationConfig(v1::GetTaskPushNotificationConfigRequest {
                tenant: None,
                task_id: p.id,
                id,
            })
        }
        V03Request::ListTaskPushNotificationConfig(p) => {
            lose_metadata(
                policy,
                &p.metadata,
                &md,
                "A2A 1.0 push config requests carry no metadata",
            )?;
            V1Request::ListTaskPushNotificationConfigs(v1::ListTaskPushNotificationConfigsRequest {
                tenant: None,
                task_id: p.id,
                page_size: None,
                page_token: None,
            })
        }
        V03Request::DeleteTaskPushNotificationConfig(p) => {
            lose_metadata(
                policy,
                &p.metadata,
                &md,
                "A2A 1.0 push config requests carry no metadata",
            )?;
            V1Request::DeleteTaskPushNotificationConfig(
                v1::DeleteTaskPushNotificationConfigRequest {
                    tenant: None,
                    task_id: p.id,
                    id: p.push_notification_config_id,
                },
            )
        }
        V03Request::GetAuthenticatedExtendedCard => {
            V1Request::GetExtendedAgentCard(v1::GetExtendedAgentCardRequest { tenant: None })
        }
    })
}

/// A 0.3 JSON-RPC result as the 1.0 result of the same method (send results wrapped, config
/// arrays as `{configs}`, delete `null` as `{}`). Paths start with `result`.
pub fn result(r: V03Result, policy: Policy) -> R<V1Result> {
    result_inner(r, policy).map_err(|e| e.under("result"))
}

fn result_inner(r: V03Result, policy: Policy) -> R<V1Result> {
    let root = Path::Root;
    Ok(match r {
        V03Result::SendMessage(s) => V1Result::SendMessage(send_message_result(s)?),
        V03Result::Task(t) => V1Result::Task(task_at(t, &root)?),
        V03Result::PushConfig(c) => V1Result::PushConfig(task_push_config_at(c, policy, &root)?),
        V03Result::PushConfigList(l) => {
            let mut configs = Vec::with_capacity(l.len());
            for (i, c) in l.into_iter().enumerate() {
                configs.push(task_push_config_at(c, policy, &root.index(i))?);
            }
            V1Result::PushConfigList(v1::ListTaskPushNotificationConfigsResponse {
                configs,
                next_page_token: None,
            })
        }
        V03Result::Deleted => V1Result::Deleted(v1::Empty {}),
        V03Result::Card(c) => V1Result::Card(Box::new(card(*c, policy)?.card)),
    })
}

/// A 0.3 JSON-RPC error as a 1.0 error: code and message kept, `data` wrapped as details
/// (an `ErrorInfo` for A2A codes, with a string-map `data` as its metadata; other data as a
/// `google.protobuf.Struct`/`Value` detail).
pub fn error(e: ErrorObject) -> ErrorObject {
    ErrorObject {
        data: errors::data_to_v1(e.code, e.data),
        ..e
    }
}
