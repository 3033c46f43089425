//! A2A 1.0 -> A2A 0.3 HTTP+JSON dialect.

use a2a_types::v1;
use a2a_types::v03::rest;

use super::bridge;
use crate::error::{CardTranslation, Untranslatable};
use crate::path::Path;
use crate::policy::Policy;
use crate::to_v03 as j;

type R<T> = Result<T, Untranslatable>;

const NO_REFS: &str = "A2A 0.3 REST messages carry no referenceTaskIds";

fn refs_message(m: &v1::Message, policy: Policy, at: &Path<'_>) -> R<()> {
    if !m.reference_task_ids.is_empty() && policy.is_strict() {
        return Err(Untranslatable::at(&at.field("referenceTaskIds"), NO_REFS));
    }
    Ok(())
}

fn refs_task(t: &v1::Task, policy: Policy, at: &Path<'_>) -> R<()> {
    if let Some(m) = &t.status.message {
        let sp = at.field("status");
        refs_message(m, policy, &sp.field("message"))?;
    }
    let hp = at.field("history");
    for (i, m) in t.history.iter().enumerate() {
        refs_message(m, policy, &hp.index(i))?;
    }
    Ok(())
}

fn refs_event(e: &v1::StreamResponse, policy: Policy) -> R<()> {
    let root = Path::Root;
    match e {
        v1::StreamResponse::Task(t) => refs_task(t, policy, &root.field("task")),
        v1::StreamResponse::Message(m) => refs_message(m, policy, &root.field("message")),
        v1::StreamResponse::StatusUpdate(s) => match &s.status.message {
            Some(m) => {
                let sp = root.field("statusUpdate");
                let st = sp.field("status");
                refs_message(m, policy, &st.field("message"))
            }
            None => Ok(()),
        },
        v1::StreamResponse::ArtifactUpdate(_) => Ok(()),
    }
}

/// A 1.0 message as a REST message (`referenceTaskIds` refused: the 0.3 proto lacks them).
pub fn message(m: v1::Message, policy: Policy) -> R<rest::Message> {
    refs_message(&m, policy, &Path::Root)?;
    bridge::message_out(j::message(m, policy)?)
}

/// A 1.0 task as a REST task.
pub fn task(t: v1::Task, policy: Policy) -> R<rest::Task> {
    refs_task(&t, policy, &Path::Root)?;
    bridge::task_out(j::task(t, policy)?)
}

/// One 1.0 stream event as a REST stream event without stream context (`final` from the
/// state; on streams use [`crate::StreamTranslator::push_rest`]).
pub fn stream_event(e: v1::StreamResponse, policy: Policy) -> R<rest::StreamResponse> {
    refs_event(&e, policy)?;
    bridge::stream_out(j::stream_event(e, policy)?)
}

pub(crate) fn check_event(e: &v1::StreamResponse, policy: Policy) -> R<()> {
    refs_event(e, policy)
}

/// A 1.0 `SendMessageRequest` as a REST send body. `blocking` is always written (proto3 reads
/// an absent one as `false`); a 1.0 `historyLength` of 0 (no history) is refused, because the
/// 0.3 proto reads 0 as unlimited (SDK-compatible: dropped).
pub fn send_message_request(
    r: v1::SendMessageRequest,
    policy: Policy,
) -> R<rest::SendMessageRequest> {
    let root = Path::Root;
    refs_message(&r.message, policy, &root.field("message"))?;
    if let Some(c) = &r.configuration
        && c.history_length == Some(0)
        && policy.is_strict()
    {
        let cp = root.field("configuration");
        return Err(Untranslatable::at(
            &cp.field("historyLength"),
            "A2A 0.3 REST reads 0 as unlimited; 1.0 0 means no history",
        ));
    }
    let p = j::send_message_request(r, policy)?;
    Ok(rest::SendMessageRequest {
        message: bridge::message_out(p.message)?,
        configuration: p.configuration.map(|c| rest::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
            push_notification: c.push_notification_config.map(bridge::push_out),
            history_length: c.history_length.filter(|h| *h != 0),
            blocking: Some(c.blocking.unwrap_or(true)),
        }),
        metadata: p.metadata,
    })
}

/// A 1.0 send result as the REST (wrapped) send result.
pub fn send_message_result(
    r: v1::SendMessageResponse,
    policy: Policy,
) -> R<rest::SendMessageResponse> {
    let root = Path::Root;
    Ok(match r {
        v1::SendMessageResponse::Task(t) => {
            refs_task(&t, policy, &root.field("task"))?;
            rest::SendMessageResponse::Task(bridge::task_out(
                j::task(t, policy).map_err(|e| e.under("task"))?,
            )?)
        }
        v1::SendMessageResponse::Message(m) => {
            refs_message(&m, policy, &root.field("message"))?;
            rest::SendMessageResponse::Message(bridge::message_out(
                j::message(m, policy).map_err(|e| e.under("message"))?,
            )?)
        }
    })
}

/// A flat 1.0 push config as a REST push config (resource `name` built from the ids).
pub fn task_push_config(
    c: v1::TaskPushNotificationConfig,
    policy: Policy,
) -> R<rest::TaskPushNotificationConfig> {
    Ok(bridge::task_push_out(j::task_push_config(c, policy)?))
}

/// A 1.0 config list as the REST list (paging carried: the 0.3 proto has it).
pub fn list_push_configs_result(
    l: v1::ListTaskPushNotificationConfigsResponse,
    policy: Policy,
) -> R<rest::ListTaskPushNotificationConfigResponse> {
    let root = Path::Root;
    let cp = root.field("configs");
    let mut configs = Vec::with_capacity(l.configs.len());
    for (i, c) in l.configs.into_iter().enumerate() {
        let at = cp.index(i);
        configs.push(bridge::task_push_out(
            j::task_push_config(c, policy).map_err(|e| e.under(&at.to_string()))?,
        ));
    }
    Ok(rest::ListTaskPushNotificationConfigResponse {
        configs,
        next_page_token: l.next_page_token,
    })
}

/// A 1.0 card as a REST (0.3 proto) card: the rules of [`crate::to_v03::card()`], plus
/// capability/skill extension members the proto lacks are left out and listed.
pub fn card(c: v1::AgentCard, policy: Policy) -> R<CardTranslation<rest::AgentCard>> {
    let t = j::card(c, policy)?;
    let mut omitted = t.omitted;
    let card = bridge::card_out(t.card, &mut omitted)?;
    Ok(CardTranslation {
        card,
        omitted,
        signatures_dropped: t.signatures_dropped,
    })
}
