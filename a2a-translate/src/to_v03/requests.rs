//! A2A 1.0 -> 0.3: requests, their parameters (send configuration, push configs, history
//! length) and results.

use a2a_types::{v1, v03};

use super::{R, card, lose, message_at, opt_vec, task_at};
use crate::error::Untranslatable;
use crate::errors;
use crate::path::Path;
use crate::policy::Policy;
use crate::rpc::{ErrorObject, V1Request, V1Result, V03Request, V03Result};

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
