//! A2A 0.3 HTTP+JSON dialect -> A2A 1.0.

use a2a_types::v03::rest;
use a2a_types::{v1, v03};

use super::bridge;
use crate::error::{CardTranslation, Untranslatable};
use crate::path::Path;
use crate::policy::Policy;
use crate::to_v1 as j;

type R<T> = Result<T, Untranslatable>;

/// A REST message (`content`, `ROLE_*`) as a 1.0 message.
pub fn message(m: rest::Message, policy: Policy) -> R<v1::Message> {
    j::message(bridge::message_in(m, policy, &Path::Root)?)
}

/// A REST task (`TASK_STATE_CANCELLED`, ...) as a 1.0 task.
pub fn task(t: rest::Task, policy: Policy) -> R<v1::Task> {
    j::task(bridge::task_in(t, policy, &Path::Root)?)
}

/// A REST stream event (already wrapped; `final` dropped) as a 1.0 `StreamResponse`.
pub fn stream_event(e: rest::StreamResponse, policy: Policy) -> R<v1::StreamResponse> {
    let wrapper = match &e {
        rest::StreamResponse::Task(_) => "task",
        rest::StreamResponse::Message(_) => "message",
        rest::StreamResponse::StatusUpdate(_) => "statusUpdate",
        rest::StreamResponse::ArtifactUpdate(_) => "artifactUpdate",
    };
    j::stream_event(bridge::stream_in(e, policy)?).map_err(|e| e.under(wrapper))
}

/// True when this REST stream event ends its stream (`final: true`).
pub fn ends_stream(e: &rest::StreamResponse) -> bool {
    matches!(e, rest::StreamResponse::StatusUpdate(s) if s.is_final)
}

/// A REST send body as a 1.0 `SendMessageRequest`. Proto3 rules: inside a present
/// `configuration`, absent `blocking` is `false`; `historyLength` 0 means unlimited (unset).
pub fn send_message_request(
    r: rest::SendMessageRequest,
    policy: Policy,
) -> R<v1::SendMessageRequest> {
    let root = Path::Root;
    let params = v03::MessageSendParams {
        message: bridge::message_in(r.message, policy, &root.field("message"))?,
        configuration: r.configuration.map(bridge::send_config_in),
        metadata: r.metadata,
    };
    j::send_message_request(params, policy)
}

/// A REST send result (`{"task":..}` / `{"message":..}`) as the 1.0 result.
pub fn send_message_result(
    r: rest::SendMessageResponse,
    policy: Policy,
) -> R<v1::SendMessageResponse> {
    let root = Path::Root;
    Ok(match r {
        rest::SendMessageResponse::Task(t) => v1::SendMessageResponse::Task(
            j::task(bridge::task_in(t, policy, &root)?).map_err(|e| e.under("task"))?,
        ),
        rest::SendMessageResponse::Message(m) => v1::SendMessageResponse::Message(
            j::message(bridge::message_in(m, policy, &root)?).map_err(|e| e.under("message"))?,
        ),
    })
}

/// A REST push config (`{name: "tasks/{t}/pushNotificationConfigs/{c}", pushNotificationConfig}`)
/// as the flat 1.0 config.
pub fn task_push_config(
    c: rest::TaskPushNotificationConfig,
    policy: Policy,
) -> R<v1::TaskPushNotificationConfig> {
    j::task_push_config(bridge::task_push_in(c, &Path::Root)?, policy)
}

/// A REST config list (which has paging) as the 1.0 list.
pub fn list_push_configs_result(
    l: rest::ListTaskPushNotificationConfigResponse,
    policy: Policy,
) -> R<v1::ListTaskPushNotificationConfigsResponse> {
    let root = Path::Root;
    let cp = root.field("configs");
    let mut configs = Vec::with_capacity(l.configs.len());
    for (i, c) in l.configs.into_iter().enumerate() {
        let at = cp.index(i);
        let c = bridge::task_push_in(c, &at)?;
        configs.push(j::task_push_config(c, policy).map_err(|e| e.under(&at.to_string()))?);
    }
    Ok(v1::ListTaskPushNotificationConfigsResponse {
        configs,
        next_page_token: l.next_page_token,
    })
}

/// A REST (0.3 proto) card as a 1.0 card (see [`crate::to_v1::card()`]).
pub fn card(c: rest::AgentCard, policy: Policy) -> R<CardTranslation<v1::AgentCard>> {
    j::card(bridge::card_in(c)?, policy)
}
