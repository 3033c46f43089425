//! Push glue on the hop: the webhook address checks for push configs (set, or inline on a send)
//! and the workspace's delivery mode; sealing the caller's webhook before the peer call and
//! unsealing the peer's answer after it ([`crate::push`] does the storing), with what the peer
//! wrote in a push config answer governed.

use serde_json::Value;

use crate::governance::HopGov;
use crate::peer;
use crate::protocol::ops::Operation;
use crate::state::GatewayState;
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{push, push::Mode};

/// webhook check: the push delivery mode for an operation that carries or reads push configs
/// (`None` for one that does not), after checking the webhook address it names.
pub(crate) async fn check(
    st: &GatewayState,
    workspace_id: &str,
    op: Operation,
    version: Version,
    params: &Value,
) -> Result<Option<Mode>, Refusal> {
    Ok(if op == Operation::CreateTaskPushNotificationConfig {
        check_webhook(st, params, version).await?;
        Some(governed_mode(st, workspace_id).await?)
    } else if matches!(
        op,
        Operation::GetTaskPushNotificationConfig
            | Operation::ListTaskPushNotificationConfigs
            | Operation::DeleteTaskPushNotificationConfig
    ) {
        match push::mode(st, workspace_id).await {
            Err(r) if r.code == Refusal::store_unavailable().code => return Err(r),
            m => Some(m.unwrap_or(Mode::Direct)),
        }
    } else if let Some(url) = push::inline_url(params, version) {
        // An inline push config on message:send / message:stream.
        check_webhook_url(st, &url).await?;
        Some(governed_mode(st, workspace_id).await?)
    } else {
        None
    })
}

/// The mode a new push config gets ([`push::mode`]). Direct delivery lets the peer post to
/// the caller's webhook past the gateway, where nothing reads the notifications: in a workspace
/// with PII rules a new push config is refused in that mode (`a2a_push_not_available`), so
/// that no PII value reaches a webhook unread (issue 39).
async fn governed_mode(st: &GatewayState, workspace_id: &str) -> Result<Mode, Refusal> {
    let mode = push::mode(st, workspace_id).await?;
    if matches!(mode, Mode::Direct) && st.governance.cache.load(workspace_id).await.pii.is_some() {
        return Err(Refusal::push_not_available(
            "the workspace has PII rules and delivers push notifications directly, past them: \
             set a2a.push.delivery to gateway",
        ));
    }
    Ok(mode)
}

/// sealing: in sealed mode, a push config being set (or inline on a send) is stored and
/// rewritten to the gateway's callback; returns the callback id.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn seal(
    st: &GatewayState,
    mode: Option<&Mode>,
    op: Operation,
    workspace_id: &str,
    agent_id: &str,
    caller: Version,
    deliver_as: Version,
    peer_version: Version,
    params: &mut Value,
) -> Result<Option<String>, Refusal> {
    match (mode, op) {
        (Some(Mode::Sealed(base)), Operation::CreateTaskPushNotificationConfig)
        | (Some(Mode::Sealed(base)), Operation::SendMessage | Operation::SendStreamingMessage) => {
            Ok(Some(
                push::seal(
                    st,
                    base,
                    workspace_id,
                    agent_id,
                    caller,
                    deliver_as,
                    peer_version,
                    op != Operation::CreateTaskPushNotificationConfig,
                    params,
                )
                .await?,
            ))
        }
        _ => Ok(None),
    }
}

/// unsealing: sealed configs in a unary answer are shown as the caller's own webhook, whatever
/// the workspace's mode is now (it may have been switched to direct delivery after sealing);
/// then, in either mode, a push config answer's token and credentials are shown as set, never
/// their value ([`crate::protocol::secrets`]), and what the peer wrote in it passes the hop's
/// governance ([`govern`]).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn unseal(
    st: &GatewayState,
    gov: &HopGov,
    sealed: Option<&str>,
    op: Operation,
    workspace_id: &str,
    agent_id: &str,
    caller: Version,
    params: &Value,
    res: &mut Value,
) -> Result<(), Refusal> {
    let restored = unseal_sealed(st, sealed, op, workspace_id, agent_id, caller, params, res).await;
    if matches!(
        op,
        Operation::CreateTaskPushNotificationConfig
            | Operation::GetTaskPushNotificationConfig
            | Operation::ListTaskPushNotificationConfigs
    ) {
        crate::protocol::secrets::hide_push_secrets(res);
        return govern(st, gov, res, &restored);
    }
    Ok(())
}

/// The push config steps over a push config answer (caller's form, unsealed, secrets hidden)
/// when the hop's governance is active: the members the gateway wrote from its records (at
/// `restored`, [`push::RESTORED_MEMBERS`]: the caller's own url, token and authentication) are
/// taken out while the steps read the rest, which came from the peer (a URL or scheme of its
/// making, members of no version; ids are not read). Findings go to the hop's evidence; a
/// block refuses the answer.
fn govern(
    st: &GatewayState,
    gov: &HopGov,
    res: &mut Value,
    restored: &[String],
) -> Result<(), Refusal> {
    if !gov.active {
        return Ok(());
    }
    let mut own = Vec::new();
    for at in restored {
        if let Some(o) = res.pointer_mut(at).and_then(Value::as_object_mut) {
            let taken: Vec<(String, Value)> = push::RESTORED_MEMBERS
                .iter()
                .filter_map(|k| o.remove(*k).map(|v| ((*k).to_owned(), v)))
                .collect();
            own.push((at, taken));
        }
    }
    let r = match gov.evidence.lock() {
        Ok(mut ev) => st.governance.push_config(&gov.hop, res, &mut ev),
        Err(_) => Err(Refusal::internal("evidence lock")),
    };
    for (at, taken) in own {
        if let Some(o) = res.pointer_mut(at).and_then(Value::as_object_mut) {
            o.extend(taken);
        }
    }
    r
}

/// Unseals `res` in sealed mode; where the configs restored from the gateway's records are.
#[allow(clippy::too_many_arguments)]
async fn unseal_sealed(
    st: &GatewayState,
    sealed: Option<&str>,
    op: Operation,
    workspace_id: &str,
    agent_id: &str,
    caller: Version,
    params: &Value,
    res: &mut Value,
) -> Vec<String> {
    let Some(base) = st.config().push_callback_base_url.clone() else {
        return Vec::new();
    };
    if let Some(cb) = sealed {
        push::remember_id(
            st,
            cb,
            res,
            caller,
            op != Operation::CreateTaskPushNotificationConfig,
        )
        .await;
    }
    if op == Operation::DeleteTaskPushNotificationConfig {
        push::forget(st, workspace_id, agent_id, caller, params);
    }
    push::unseal(
        st,
        base.trim_end_matches('/'),
        workspace_id,
        agent_id,
        caller,
        res,
    )
    .await
}

pub(crate) async fn check_webhook(
    st: &GatewayState,
    params: &Value,
    version: Version,
) -> Result<(), Refusal> {
    let url = match version {
        Version::V03 => params
            .get("pushNotificationConfig")
            .and_then(|c| c.get("url")),
        Version::V1 => params.get("url"),
    }
    .and_then(Value::as_str)
    .unwrap_or("");
    check_webhook_url(st, url).await
}

/// The webhook URL checks: the one address policy of [`a2a_agent::net_guard`] (https, or http
/// and loopback in dev mode; no userinfo; no metadata host; public literal addresses), then every
/// address the host resolves to.
pub(crate) async fn check_webhook_url(st: &GatewayState, url: &str) -> Result<(), Refusal> {
    let bad = |why: String| Refusal::invalid_params(&format!("webhook url: {why}"));
    let u = peer::check_webhook(url, st.config().dev_mode).map_err(bad)?;
    peer::check_resolved(&u, st.config().dev_mode)
        .await
        .map_err(|r| bad(r.message))
}
