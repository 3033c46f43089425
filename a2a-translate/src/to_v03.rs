//! A2A 1.0 -> A2A 0.3 (JSON-RPC dialect; the HTTP+JSON dialect is in [`rest`]).
//!
//! One function per type. Each takes the 1.0 value by value (strings are moved, not copied)
//! and returns the 0.3 value or an [`Untranslatable`] naming the JSON path (relative to the
//! value passed in) and the reason.

use a2a_types::{v1, v03};
use serde_json::Value;

use crate::error::Untranslatable;
use crate::path::Path;
use crate::policy::Policy;
use crate::rpc::{ErrorObject, V1Request, V1Result, V03Request, V03Result};
use crate::{DATA_PART_COMPAT, errors};

pub use crate::card::card_to_v03 as card;

type R<T> = Result<T, Untranslatable>;

/// The 0.3 HTTP+JSON dialect (ProtoJSON of the 0.3 proto).
pub mod rest {
    pub use crate::rest::to_v03::*;
}

fn opt_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() { None } else { Some(v) }
}

/// Refuses (strict) or drops (SDK-compatible) a present value the target cannot carry.
pub(crate) fn lose<T>(
    policy: Policy,
    value: &Option<T>,
    at: &Path<'_>,
    reason: &'static str,
) -> R<()> {
    if value.is_some() && policy.is_strict() {
        return Err(Untranslatable::at(at, reason));
    }
    Ok(())
}

/// A 1.0 role as 0.3 `user`/`agent`.
pub fn role(r: v1::Role, policy: Policy) -> R<v03::Role> {
    role_at(r, policy, &Path::Root)
}

fn role_at(r: v1::Role, policy: Policy, at: &Path<'_>) -> R<v03::Role> {
    match r {
        v1::Role::User => Ok(v03::Role::User),
        v1::Role::Agent => Ok(v03::Role::Agent),
        v1::Role::Unspecified if !policy.is_strict() => Ok(v03::Role::Agent),
        v1::Role::Unspecified => Err(Untranslatable::at(at, "A2A 0.3 has no unspecified role")),
    }
}

/// A 1.0 task state as the 0.3 kebab-case state (`TASK_STATE_UNSPECIFIED` is `unknown`).
pub fn task_state(s: v1::TaskState) -> v03::TaskState {
    use v1::TaskState as S;
    match s {
        S::Unspecified => v03::TaskState::Unknown,
        S::Submitted => v03::TaskState::Submitted,
        S::Working => v03::TaskState::Working,
        S::Completed => v03::TaskState::Completed,
        S::Failed => v03::TaskState::Failed,
        S::Canceled => v03::TaskState::Canceled,
        S::InputRequired => v03::TaskState::InputRequired,
        S::Rejected => v03::TaskState::Rejected,
        S::AuthRequired => v03::TaskState::AuthRequired,
    }
}

/// A 1.0 part as a 0.3 part. Non-object `data` is wrapped as `{"value": X}` with
/// `metadata.data_part_compat = true` (the cross-SDK convention).
pub fn part(p: v1::Part, policy: Policy) -> R<v03::Part> {
    part_at(p, policy, &Path::Root)
}

pub(crate) fn part_at(p: v1::Part, policy: Policy, at: &Path<'_>) -> R<v03::Part> {
    let v1::Part {
        content,
        metadata,
        filename,
        media_type,
    } = p;
    Ok(match content {
        v1::PartContent::Text(text) => {
            lose(
                policy,
                &filename,
                &at.field("filename"),
                "A2A 0.3 text parts carry no filename",
            )?;
            lose(
                policy,
                &media_type,
                &at.field("mediaType"),
                "A2A 0.3 text parts carry no media type",
            )?;
            v03::Part::Text(v03::TextPart { text, metadata })
        }
        v1::PartContent::Raw(b) => v03::Part::File(v03::FilePart {
            file: v03::FileContent::Bytes(v03::FileWithBytes {
                bytes: b.into_string(),
                name: filename,
                mime_type: media_type,
            }),
            metadata,
        }),
        v1::PartContent::Url(uri) => v03::Part::File(v03::FilePart {
            file: v03::FileContent::Uri(v03::FileWithUri {
                uri,
                name: filename,
                mime_type: media_type,
            }),
            metadata,
        }),
        v1::PartContent::Data(data) => {
            lose(
                policy,
                &filename,
                &at.field("filename"),
                "A2A 0.3 data parts carry no filename",
            )?;
            lose(
                policy,
                &media_type,
                &at.field("mediaType"),
                "A2A 0.3 data parts carry no media type",
            )?;
            if metadata
                .as_ref()
                .is_some_and(|m| m.contains_key(DATA_PART_COMPAT))
            {
                let f = at.field("metadata");
                return Err(Untranslatable::at(
                    &f.field(DATA_PART_COMPAT),
                    "reserved: data_part_compat marks wrapped non-object data in A2A 0.3",
                ));
            }
            match data {
                Value::Object(data) => v03::Part::Data(v03::DataPart { data, metadata }),
                other => {
                    let mut wrapped = v03::Metadata::new();
                    wrapped.insert("value".into(), other);
                    let mut metadata = metadata.unwrap_or_default();
                    metadata.insert(DATA_PART_COMPAT.into(), Value::Bool(true));
                    v03::Part::Data(v03::DataPart {
                        data: wrapped,
                        metadata: Some(metadata),
                    })
                }
            }
        }
    })
}

pub(crate) fn parts_at(parts: Vec<v1::Part>, policy: Policy, at: &Path<'_>) -> R<Vec<v03::Part>> {
    let mut out = Vec::with_capacity(parts.len());
    for (i, p) in parts.into_iter().enumerate() {
        out.push(part_at(p, policy, &at.index(i))?);
    }
    Ok(out)
}

/// A 1.0 message as a 0.3 message (`kind: "message"`).
pub fn message(m: v1::Message, policy: Policy) -> R<v03::Message> {
    message_at(m, policy, &Path::Root)
}

pub(crate) fn message_at(m: v1::Message, policy: Policy, at: &Path<'_>) -> R<v03::Message> {
    let role = role_at(m.role, policy, &at.field("role"))?;
    let parts = parts_at(m.parts, policy, &at.field("parts"))?;
    let mut out = v03::Message::new(role, m.message_id, parts);
    out.context_id = m.context_id;
    out.task_id = m.task_id;
    out.reference_task_ids = opt_vec(m.reference_task_ids);
    out.extensions = opt_vec(m.extensions);
    out.metadata = m.metadata;
    Ok(out)
}

/// A 1.0 artifact as a 0.3 artifact.
pub fn artifact(a: v1::Artifact, policy: Policy) -> R<v03::Artifact> {
    artifact_at(a, policy, &Path::Root)
}

fn artifact_at(a: v1::Artifact, policy: Policy, at: &Path<'_>) -> R<v03::Artifact> {
    let parts = parts_at(a.parts, policy, &at.field("parts"))?;
    let mut out = v03::Artifact::new(a.artifact_id, parts);
    out.name = a.name;
    out.description = a.description;
    out.extensions = opt_vec(a.extensions);
    out.metadata = a.metadata;
    Ok(out)
}

/// A 1.0 task status as a 0.3 task status (timestamps stay UTC `Z`).
pub fn task_status(s: v1::TaskStatus, policy: Policy) -> R<v03::TaskStatus> {
    task_status_at(s, policy, &Path::Root)
}

fn task_status_at(s: v1::TaskStatus, policy: Policy, at: &Path<'_>) -> R<v03::TaskStatus> {
    Ok(v03::TaskStatus {
        state: task_state(s.state),
        message: s
            .message
            .map(|m| message_at(m, policy, &at.field("message")))
            .transpose()?,
        timestamp: s.timestamp.map(|t| t.as_str().to_owned()),
    })
}

/// A 1.0 task as a 0.3 task (`kind: "task"`). 0.3 requires `contextId`.
pub fn task(t: v1::Task, policy: Policy) -> R<v03::Task> {
    task_at(t, policy, &Path::Root)
}

pub(crate) fn task_at(t: v1::Task, policy: Policy, at: &Path<'_>) -> R<v03::Task> {
    let context_id = match t.context_id {
        Some(c) if !c.is_empty() => c,
        _ if !policy.is_strict() => String::new(),
        _ => {
            return Err(Untranslatable::at(
                &at.field("contextId"),
                "A2A 0.3 requires a task contextId",
            ));
        }
    };
    let status = task_status_at(t.status, policy, &at.field("status"))?;
    let mut out = v03::Task::new(t.id, context_id, status.state);
    out.status = status;
    if !t.artifacts.is_empty() {
        let ap = at.field("artifacts");
        let mut v = Vec::with_capacity(t.artifacts.len());
        for (i, a) in t.artifacts.into_iter().enumerate() {
            v.push(artifact_at(a, policy, &ap.index(i))?);
        }
        out.artifacts = Some(v);
    }
    if !t.history.is_empty() {
        let hp = at.field("history");
        let mut v = Vec::with_capacity(t.history.len());
        for (i, m) in t.history.into_iter().enumerate() {
            v.push(message_at(m, policy, &hp.index(i))?);
        }
        out.history = Some(v);
    }
    out.metadata = t.metadata;
    Ok(out)
}

/// A 1.0 status update as a 0.3 `status-update` with the given `final` flag
/// (use [`crate::StreamTranslator`] on streams: it decides `final` from the stream's end).
pub fn status_update(
    e: v1::TaskStatusUpdateEvent,
    is_final: bool,
    policy: Policy,
) -> R<v03::TaskStatusUpdateEvent> {
    status_update_at(e, is_final, policy, &Path::Root)
}

fn status_update_at(
    e: v1::TaskStatusUpdateEvent,
    is_final: bool,
    policy: Policy,
    at: &Path<'_>,
) -> R<v03::TaskStatusUpdateEvent> {
    let status = task_status_at(e.status, policy, &at.field("status"))?;
    let mut out = v03::TaskStatusUpdateEvent::new(e.task_id, e.context_id, status, is_final);
    out.metadata = e.metadata;
    Ok(out)
}

/// A 1.0 artifact update as a 0.3 `artifact-update` (`append`/`lastChunk` kept as sent).
pub fn artifact_update(
    e: v1::TaskArtifactUpdateEvent,
    policy: Policy,
) -> R<v03::TaskArtifactUpdateEvent> {
    artifact_update_at(e, policy, &Path::Root)
}

fn artifact_update_at(
    e: v1::TaskArtifactUpdateEvent,
    policy: Policy,
    at: &Path<'_>,
) -> R<v03::TaskArtifactUpdateEvent> {
    let artifact = artifact_at(e.artifact, policy, &at.field("artifact"))?;
    let mut out = v03::TaskArtifactUpdateEvent::new(e.task_id, e.context_id, artifact);
    out.append = e.append;
    out.last_chunk = e.last_chunk;
    out.metadata = e.metadata;
    Ok(out)
}

/// One 1.0 stream event as a bare 0.3 stream result, without stream context: a status update
/// is `final` when its state is terminal (the SDKs' rule). On a stream, use
/// [`crate::StreamTranslator`], which also marks the last status before an interrupted close.
pub fn stream_event(e: v1::StreamResponse, policy: Policy) -> R<v03::StreamResult> {
    stream_event_final(e, None, policy)
}

pub(crate) fn stream_event_final(
    e: v1::StreamResponse,
    is_final: Option<bool>,
    policy: Policy,
) -> R<v03::StreamResult> {
    let root = Path::Root;
    Ok(match e {
        v1::StreamResponse::Task(t) => {
            v03::StreamResult::Task(task_at(t, policy, &root.field("task"))?)
        }
        v1::StreamResponse::Message(m) => {
            v03::StreamResult::Message(message_at(m, policy, &root.field("message"))?)
        }
        v1::StreamResponse::StatusUpdate(s) => {
            let f = is_final.unwrap_or(s.status.state.is_terminal());
            v03::StreamResult::StatusUpdate(status_update_at(
                s,
                f,
                policy,
                &root.field("statusUpdate"),
            )?)
        }
        v1::StreamResponse::ArtifactUpdate(a) => v03::StreamResult::ArtifactUpdate(
            artifact_update_at(a, policy, &root.field("artifactUpdate"))?,
        ),
    })
}

/// A 1.0 push delivery body (`StreamResponse`) as the 0.3 body: the bare, `kind`-discriminated
/// object (a `Task` in the 0.3 examples; events keep their `kind`, status updates get
/// `final` from the state).
pub fn push_payload(e: v1::StreamResponse, policy: Policy) -> R<v03::StreamResult> {
    stream_event(e, policy)
}

/// A 1.0 send result (`{"task":..}` / `{"message":..}`) as the bare 0.3 result.
pub fn send_message_result(
    r: v1::SendMessageResponse,
    policy: Policy,
) -> R<v03::SendMessageResult> {
    let root = Path::Root;
    Ok(match r {
        v1::SendMessageResponse::Task(t) => {
            v03::SendMessageResult::Task(task_at(t, policy, &root.field("task"))?)
        }
        v1::SendMessageResponse::Message(m) => {
            v03::SendMessageResult::Message(message_at(m, policy, &root.field("message"))?)
        }
    })
}

fn authentication_at(
    a: v1::AuthenticationInfo,
    policy: Policy,
    at: &Path<'_>,
) -> R<v03::PushNotificationAuthenticationInfo> {
    let schemes = if a.scheme.is_empty() {
        if policy.is_strict() {
            return Err(Untranslatable::at(
                &at.field("scheme"),
                "A2A 1.0 push authentication needs a scheme",
            ));
        }
        Vec::new()
    } else {
        vec![a.scheme]
    };
    Ok(v03::PushNotificationAuthenticationInfo {
        schemes,
        credentials: a.credentials,
    })
}

/// The inner 0.3 `PushNotificationConfig` of a flat 1.0 config (without its task id; used
/// inside `SendMessageConfiguration`, where 1.0 says the task id "should be empty").
pub fn push_notification_config(
    c: v1::TaskPushNotificationConfig,
    policy: Policy,
) -> R<v03::PushNotificationConfig> {
    inner_push_config_at(c, policy, &Path::Root, true)
}

fn inner_push_config_at(
    c: v1::TaskPushNotificationConfig,
    policy: Policy,
    at: &Path<'_>,
    refuse_task_id: bool,
) -> R<v03::PushNotificationConfig> {
    lose(
        policy,
        &c.tenant,
        &at.field("tenant"),
        "A2A 0.3 has no tenant",
    )?;
    if refuse_task_id && c.task_id.as_deref().is_some_and(|t| !t.is_empty()) && policy.is_strict() {
        return Err(Untranslatable::at(
            &at.field("taskId"),
            "an A2A 0.3 push config inside a send carries no taskId",
        ));
    }
    Ok(v03::PushNotificationConfig {
        url: c.url,
        id: c.id,
        token: c.token,
        authentication: c
            .authentication
            .map(|a| authentication_at(a, policy, &at.field("authentication")))
            .transpose()?,
    })
}

/// A flat 1.0 push config as the nested 0.3 `TaskPushNotificationConfig`
/// (`{taskId, pushNotificationConfig:{id,url,token,authentication}}`).
pub fn task_push_config(
    c: v1::TaskPushNotificationConfig,
    policy: Policy,
) -> R<v03::TaskPushNotificationConfig> {
    task_push_config_at(c, policy, &Path::Root)
}

fn task_push_config_at(
    mut c: v1::TaskPushNotificationConfig,
    policy: Policy,
    at: &Path<'_>,
) -> R<v03::TaskPushNotificationConfig> {
    let task_id = match c.task_id.take() {
        Some(t) if !t.is_empty() => t,
        _ => {
            return Err(Untranslatable::at(
                &at.field("taskId"),
                "A2A 0.3 push configs require a taskId",
            ));
        }
    };
    Ok(v03::TaskPushNotificationConfig {
        task_id,
        push_notification_config: inner_push_config_at(c, policy, at, false)?,
    })
}

/// A 1.0 `historyLength` in 0.3 (H20): `0` (no history) has no 0.3 form, since 0.3 reads `0` as
/// no limit; refused (strict) or dropped (SDK-compatible: the whole history comes back). A
/// translator that trims the answer itself asks the peer for [`history_request`] instead.
fn history_length_at(h: Option<i32>, policy: Policy, at: &Path<'_>) -> R<Option<i32>> {
    match h {
        Some(0) if policy.is_strict() => Err(Untranslatable::at(
            at,
            "A2A 0.3 reads historyLength 0 as no limit; 1.0 0 means no history",
        )),
        Some(0) => Ok(None),
        h => Ok(h),
    }
}

/// The 0.3 `historyLength` to ask a 0.3 peer for when the answer is trimmed to the 1.0 limit `h`
/// afterwards: 1.0 `0` (no history, which 0.3 cannot say) becomes `1`, the smallest limit every
/// 0.3 reading honours; other limits are the same in both versions.
pub fn history_request(h: Option<i32>) -> Option<i32> {
    match h {
        Some(0) => Some(1),
        h => h,
    }
}

/// 1.0 send options as 0.3 send options (`returnImmediately` = `!blocking`).
pub fn send_configuration(
    c: v1::SendMessageConfiguration,
    policy: Policy,
) -> R<v03::MessageSendConfiguration> {
    send_configuration_at(c, policy, &Path::Root)
}

fn send_configuration_at(
    c: v1::SendMessageConfiguration,
    policy: Policy,
    at: &Path<'_>,
) -> R<v03::MessageSendConfiguration> {
    Ok(v03::MessageSendConfiguration {
        accepted_output_modes: opt_vec(c.accepted_output_modes),
        blocking: c.return_immediately.map(|r| !r),
        history_length: history_length_at(c.history_length, policy, &at.field("historyLength"))?,
        push_notification_config: c
            .task_push_notification_config
            .map(|p| inner_push_config_at(p, policy, &at.field("taskPushNotificationConfig"), true))
            .transpose()?,
    })
}

/// A 1.0 `SendMessageRequest` as 0.3 `MessageSendParams`.
pub fn send_message_request(
    r: v1::SendMessageRequest,
    policy: Policy,
) -> R<v03::MessageSendParams> {
    let root = Path::Root;
    lose(
        policy,
        &r.tenant,
        &root.field("tenant"),
        "A2A 0.3 has no tenant",
    )?;
    Ok(v03::MessageSendParams {
        message: message_at(r.message, policy, &root.field("message"))?,
        configuration: r
            .configuration
            .map(|c| send_configuration_at(c, policy, &root.field("configuration")))
            .transpose()?,
        metadata: r.metadata,
    })
}

/// A 1.0 JSON-RPC request (method and typed params) as the 0.3 request.
/// Paths in refusals start with `params.` (or are `method` for `ListTasks`).
pub fn request(r: V1Request, policy: Policy) -> R<V03Request> {
    request_inner(r, policy).map_err(|e| {
        if e.path == "method" {
            e
        } else {
            e.under("params")
        }
    })
}

fn request_inner(r: V1Request, policy: Policy) -> R<V03Request> {
    let root = Path::Root;
    let tenant =
        |t: &Option<String>| lose(policy, t, &root.field("tenant"), "A2A 0.3 has no tenant");
    Ok(match r {
        V1Request::SendMessage(p) => V03Request::SendMessage(send_message_request(p, policy)?),
        V1Request::SendStreamingMessage(p) => {
            V03Request::SendStreamingMessage(send_message_request(p, policy)?)
        }
        V1Request::GetTask(p) => {
            tenant(&p.tenant)?;
            V03Request::GetTask(v03::TaskQueryParams {
                id: p.id,
                history_length: history_length_at(
                    p.history_length,
                    policy,
                    &root.field("historyLength"),
                )?,
                metadata: None,
            })
        }
        V1Request::ListTasks(_) => {
            return Err(Untranslatable::new("method", "A2A 0.3 has no ListTasks"));
        }
        V1Request::CancelTask(p) => {
            tenant(&p.tenant)?;
            V03Request::CancelTask(v03::TaskIdParams {
                id: p.id,
                metadata: p.metadata,
            })
        }
        V1Request::SubscribeToTask(p) => {
            tenant(&p.tenant)?;
            V03Request::Resubscribe(v03::TaskIdParams {
                id: p.id,
                metadata: None,
            })
        }
        V1Request::CreateTaskPushNotificationConfig(p) => {
            V03Request::SetTaskPushNotificationConfig(task_push_config_at(p, policy, &root)?)
        }
        V1Request::GetTaskPushNotificationConfig(p) => {
            tenant(&p.tenant)?;
            V03Request::GetTaskPushNotificationConfig(v03::GetTaskPushNotificationConfigParams {
                id: p.task_id,
                push_notification_config_id: Some(p.id),
                metadata: None,
            })
        }
        V1Request::ListTaskPushNotificationConfigs(p) => {
            tenant(&p.tenant)?;
            let paging = "A2A 0.3 push config lists have no paging";
            lose(policy, &p.page_size, &root.field("pageSize"), paging)?;
            lose(policy, &p.page_token, &root.field("pageToken"), paging)?;
            V03Request::ListTaskPushNotificationConfig(v03::ListTaskPushNotificationConfigParams {
                id: p.task_id,
                metadata: None,
            })
        }
        V1Request::DeleteTaskPushNotificationConfig(p) => {
            tenant(&p.tenant)?;
            V03Request::DeleteTaskPushNotificationConfig(
                v03::DeleteTaskPushNotificationConfigParams {
                    id: p.task_id,
                    push_notification_config_id: p.id,
                    metadata: None,
                },
            )
        }
        V1Request::GetExtendedAgentCard(p) => {
            tenant(&p.tenant)?;
            V03Request::GetAuthenticatedExtendedCard
        }
    })
}

/// A 1.0 JSON-RPC result as the 0.3 result of the same method (send results unwrapped,
/// config lists as a bare array, delete `{}` as `null`). Paths start with `result`.
/// A card result returns the card's omissions too (see [`card()`]).
pub fn result(r: V1Result, policy: Policy) -> R<V03Result> {
    result_inner(r, policy).map_err(|e| e.under("result"))
}

fn result_inner(r: V1Result, policy: Policy) -> R<V03Result> {
    let root = Path::Root;
    Ok(match r {
        V1Result::SendMessage(s) => V03Result::SendMessage(send_message_result(s, policy)?),
        V1Result::Task(t) => V03Result::Task(task_at(t, policy, &root)?),
        V1Result::ListTasks(_) => return Err(Untranslatable::new("", "A2A 0.3 has no ListTasks")),
        V1Result::PushConfig(c) => V03Result::PushConfig(task_push_config_at(c, policy, &root)?),
        V1Result::PushConfigList(l) => {
            if l.next_page_token.as_deref().is_some_and(|t| !t.is_empty()) && policy.is_strict() {
                return Err(Untranslatable::at(
                    &root.field("nextPageToken"),
                    "A2A 0.3 push config lists have no paging",
                ));
            }
            let cp = root.field("configs");
            let mut out = Vec::with_capacity(l.configs.len());
            for (i, c) in l.configs.into_iter().enumerate() {
                out.push(task_push_config_at(c, policy, &cp.index(i))?);
            }
            V03Result::PushConfigList(out)
        }
        V1Result::Deleted(_) => V03Result::Deleted,
        V1Result::Card(c) => V03Result::Card(Box::new(card(*c, policy)?.card)),
    })
}

/// A 1.0 JSON-RPC error as a 0.3 error: the code and message are kept; a lone A2A
/// `ErrorInfo` becomes its `metadata` object (or no `data`), a lone `google.protobuf.Value`
/// or `Struct` detail next to it becomes its value, and any other detail list travels
/// verbatim (0.3 `data` is `any`).
pub fn error(e: ErrorObject) -> ErrorObject {
    ErrorObject {
        data: e.data.and_then(|d| errors::data_to_v03(e.code, d)),
        ..e
    }
}
