//! A2A 1.0 -> A2A 0.3 (JSON-RPC dialect; the HTTP+JSON dialect is in [`rest`]).
//!
//! One function per type. Each takes the 1.0 value by value (strings are moved, not copied)
//! and returns the 0.3 value or an [`Untranslatable`] naming the JSON path (relative to the
//! value passed in) and the reason.

use a2a_types::{v1, v03};
use serde_json::Value;

use crate::DATA_PART_COMPAT;
use crate::error::Untranslatable;
use crate::path::Path;
use crate::policy::Policy;

pub use crate::card::card_to_v03 as card;

mod requests;

pub use requests::{
    error, history_request, push_notification_config, request, result, send_configuration,
    send_message_request, send_message_result, task_push_config,
};

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
