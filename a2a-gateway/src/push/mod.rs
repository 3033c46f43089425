//! Governed push notifications.
//!
//! With `push_callback_base_url` set, a caller's push config is sealed: the caller's webhook
//! (url, token, authentication, version) stays in SQLite under a random callback id, and the
//! peer is given `{base}/a2a/{agentId}/push:notify/{callback}` with a fresh notification
//! token. `POST /a2a/{agentId}/push:notify/{callback}` (no API key; the notification token)
//! translates the peer's body to the caller's version and posts it to the caller's webhook.
//! A workspace whose `a2a.push.delivery` setting is `direct` (admin API, [`crate::admin::settings`];
//! unset: the deprecated fleet-wide `push_direct_workspaces` list) keeps direct delivery (the
//! config is forwarded as given). Otherwise push configs are refused with 503
//! `a2a_push_not_available`.

pub(crate) mod hop;
pub mod jwt;

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

use crate::keys;
use crate::peer;
use crate::{ids::random_hex, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{store::AuditRecord, store::PushCallback};

/// Header the peer (and the caller's webhook) receive the notification token in.
pub const TOKEN_HEADER: &str = "x-a2a-notification-token";

/// How a push config of a workspace is handled.
pub enum Mode {
    /// Forward the caller's config to the peer unchanged.
    Direct,
    /// Seal the caller's webhook; the peer gets a gateway callback under this base URL.
    Sealed(String),
}

/// The push delivery of a workspace: its `a2a.push.delivery` setting; unset, direct when the
/// deprecated fleet-wide `push_direct_workspaces` lists it, else through the gateway when a
/// callback base URL is configured (`None`: push is not available).
pub fn delivery(
    st: &GatewayState,
    workspace_id: &str,
    settings: &crate::store::WorkspaceSettings,
) -> Option<crate::store::PushDelivery> {
    use crate::store::PushDelivery;
    if let Some(d) = settings.push_delivery {
        return Some(d);
    }
    if st
        .config
        .push_direct_workspaces
        .iter()
        .any(|w| w == workspace_id)
    {
        return Some(PushDelivery::Direct);
    }
    st.config
        .push_callback_base_url
        .as_ref()
        .map(|_| PushDelivery::Gateway)
}

/// The push mode of a workspace ([`delivery`]), or 503 `a2a_push_not_available`.
pub fn mode(st: &GatewayState, workspace_id: &str) -> Result<Mode, Refusal> {
    use crate::store::PushDelivery;
    let settings = st
        .store
        .workspace_settings(workspace_id)
        .map_err(|e| Refusal::internal(&format!("workspace settings: {e}")))?;
    match (
        delivery(st, workspace_id, &settings),
        &st.config.push_callback_base_url,
    ) {
        (Some(PushDelivery::Direct), _) => Ok(Mode::Direct),
        (Some(PushDelivery::Gateway), Some(b)) => {
            Ok(Mode::Sealed(b.trim_end_matches('/').to_owned()))
        }
        (Some(PushDelivery::Gateway), None) => Err(Refusal::push_not_available(
            "the workspace delivers through the gateway, and no callback base URL is configured",
        )),
        (None, _) => Err(Refusal::push_not_available(
            "no callback base URL is configured and the workspace has no direct delivery",
        )),
    }
}

/// The key of an inline push config in a send's `configuration`, per version.
fn inline_key(version: Version) -> &'static str {
    match version {
        Version::V03 => "pushNotificationConfig",
        Version::V10 => "taskPushNotificationConfig",
    }
}

/// The webhook URL of an inline push config on a send (`configuration.pushNotificationConfig`
/// in 0.3, `configuration.taskPushNotificationConfig` in 1.0), if there is one.
pub fn inline_url(params: &Value, version: Version) -> Option<String> {
    let cfg = params.get("configuration")?.get(inline_key(version))?;
    if cfg.is_null() {
        return None;
    }
    Some(
        cfg.get("url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    )
}

fn callback_prefix(base: &str, agent_id: &str) -> String {
    format!("{base}/a2a/{agent_id}/push:notify/")
}

/// The config object inside a set/get answer or request in `version`.
fn config_obj(v: &mut Value, version: Version) -> Option<&mut serde_json::Map<String, Value>> {
    match version {
        Version::V03 => v.get_mut("pushNotificationConfig")?.as_object_mut(),
        Version::V10 => v.as_object_mut(),
    }
}

/// Seals a `pushConfig:set` request, or the inline config of a send (`inline`), in the
/// caller's version: stores the caller's webhook and rewrites the config to the gateway
/// callback. Returns the callback id.
#[allow(clippy::too_many_arguments)]
pub fn seal(
    st: &GatewayState,
    base: &str,
    workspace_id: &str,
    agent_id: &str,
    caller: Version,
    deliver_as: Version,
    peer_version: Version,
    inline: bool,
    params: &mut Value,
) -> Result<String, Refusal> {
    let task_id = if inline {
        params.pointer("/message/taskId")
    } else {
        params.get("taskId")
    }
    .and_then(Value::as_str)
    .unwrap_or("")
    .to_owned();
    let cfg = if inline {
        params
            .get_mut("configuration")
            .and_then(|c| c.get_mut(inline_key(caller)))
            .and_then(Value::as_object_mut)
    } else {
        config_obj(params, caller)
    }
    .ok_or_else(|| Refusal::invalid_params("params: push notification config missing"))?;
    let s = |o: &serde_json::Map<String, Value>, k: &str| {
        o.get(k).and_then(Value::as_str).map(str::to_owned)
    };
    let url = s(cfg, "url").unwrap_or_default();
    let auth = cfg.get("authentication").cloned().unwrap_or(Value::Null);
    let auth_scheme = match caller {
        Version::V03 => auth
            .get("schemes")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_owned),
        Version::V10 => auth
            .get("scheme")
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    let auth_credentials = auth
        .get("credentials")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let callback_id = random_hex(16);
    let notify_token = random_hex(24);
    let cb = PushCallback {
        callback_id: callback_id.clone(),
        workspace_id: workspace_id.to_owned(),
        agent_id: agent_id.to_owned(),
        task_id,
        config_id: s(cfg, "id"),
        url,
        token: s(cfg, "token"),
        auth_scheme,
        auth_credentials,
        caller_version: deliver_as.as_str().to_owned(),
        peer_version: peer_version.as_str().to_owned(),
        notify_token: notify_token.clone(),
    };
    cfg.insert(
        "url".into(),
        json!(format!("{}{callback_id}", callback_prefix(base, agent_id))),
    );
    cfg.insert("token".into(), json!(notify_token));
    cfg.remove("authentication");
    st.store
        .insert_push_callback(&cb)
        .map_err(|e| Refusal::internal(&e.to_string()))?;
    Ok(callback_id)
}

/// Records what the peer's answer tells about a sealed config (caller's version): the config
/// id of a set answer, or the task id of a send answer (`inline`).
pub fn remember_id(
    st: &GatewayState,
    callback_id: &str,
    answer: &Value,
    caller: Version,
    inline: bool,
) {
    let mut a = answer.clone();
    let (task, config) = if inline {
        let task = match caller {
            Version::V03 => (a.get("kind").and_then(Value::as_str) == Some("task"))
                .then(|| a.get("id"))
                .flatten(),
            Version::V10 => a.pointer("/task/id"),
        };
        (task.and_then(Value::as_str).map(str::to_owned), None)
    } else {
        let id = config_obj(&mut a, caller)
            .and_then(|o| o.get("id").and_then(Value::as_str).map(str::to_owned));
        (None, id)
    };
    if let Err(e) = st
        .store
        .update_push_callback(callback_id, task.as_deref(), config.as_deref())
    {
        tracing::error!("push callback not updated: {e}");
    }
}

/// Rewrites every sealed callback URL in an answer back to the caller's own webhook. Only
/// callbacks of `workspace_id` and `agent_id` are unsealed; a callback of anyone else keeps the
/// gateway URL and loses its notification token.
pub fn unseal(
    st: &GatewayState,
    base: &str,
    workspace_id: &str,
    agent_id: &str,
    caller: Version,
    v: &mut Value,
) {
    let prefix = callback_prefix(base, agent_id);
    match v {
        Value::Array(a) => a
            .iter_mut()
            .for_each(|x| unseal(st, base, workspace_id, agent_id, caller, x)),
        Value::Object(o) => {
            let sealed = o
                .get("url")
                .and_then(Value::as_str)
                .and_then(|u| u.strip_prefix(&prefix))
                .map(str::to_owned);
            if let Some(id) = sealed {
                let cb = st
                    .store
                    .push_callback(&id)
                    .ok()
                    .flatten()
                    .filter(|cb| cb.workspace_id == workspace_id && cb.agent_id == agent_id);
                match cb {
                    Some(cb) => {
                        o.insert("url".into(), json!(cb.url));
                        match cb.token {
                            Some(t) => o.insert("token".into(), json!(t)),
                            None => o.remove("token"),
                        };
                        if let Some(scheme) = cb.auth_scheme {
                            let mut auth = match caller {
                                Version::V03 => json!({"schemes": [scheme]}),
                                Version::V10 => json!({"scheme": scheme}),
                            };
                            if let Some(c) = cb.auth_credentials {
                                auth["credentials"] = json!(c);
                            }
                            o.insert("authentication".into(), auth);
                        }
                    }
                    None => {
                        o.remove("token");
                    }
                }
            }
            o.values_mut()
                .for_each(|x| unseal(st, base, workspace_id, agent_id, caller, x));
        }
        _ => {}
    }
}

/// After a successful `pushConfig:delete`: drops the sealed callback rows of that config once
/// `push_delete_grace_ms` has passed, so notifications the peer sent before it deleted its
/// config still reach the caller (the peer sends no new ones). A restart within the grace keeps
/// the rows; their callback URLs stay secret and only carry what the peer sends.
pub fn forget(st: &GatewayState, workspace_id: &str, agent_id: &str, caller: Version, p: &Value) {
    let s = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_owned);
    let (task, cfg) = match caller {
        Version::V03 => (s("id"), s("pushNotificationConfigId")),
        Version::V10 => (s("taskId"), s("id")),
    };
    let Some(task) = task else { return };
    let store = st.store.clone();
    let (ws, agent) = (workspace_id.to_owned(), agent_id.to_owned());
    let grace = Duration::from_millis(st.config.push_delete_grace_ms);
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        if let Err(e) = store.delete_push_callbacks(&ws, &agent, &task, cfg.as_deref()) {
            tracing::error!("push callbacks not removed: {e}");
        }
    });
}

fn version_of(s: &str) -> Version {
    if s == "0.3" {
        Version::V03
    } else {
        Version::V10
    }
}

fn status(code: StatusCode) -> Response {
    code.into_response()
}

/// A refused notification: its status and a JSON body naming the gateway's code.
fn refused(code: StatusCode, err: &str, trace_id: &str) -> Response {
    let message = match err {
        "a2a_push_unauthorized" => "the notification token does not match the callback",
        "a2a_push_too_large" => "the notification is larger than max_push_bytes",
        "a2a_push_invalid" => "the notification is not an A2A push payload of the peer's version",
        "a2a_push_task_mismatch" => "the notification names another task than the sealed config",
        "a2a_push_signature_required" => {
            "the agent has a pinned key: the notification needs a signed bearer JWT"
        }
        "a2a_push_signature_invalid" => {
            "the bearer JWT is not signed by the agent's key for this callback, or has expired"
        }
        "a2a_push_replayed" => "the bearer JWT was already used",
        "a2a_push_delivery_failed" => "the caller's webhook could not be reached",
        _ => "the push notification was refused",
    };
    // The form of every refusal on this route (`crate::edge::wire`): `google.rpc.Status`, the code in
    // its ErrorInfo.
    let body = Refusal::gateway(code.as_u16(), err, message).status_body(trace_id);
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The task id a notification names (a Task, or an update event or message of a task; either
/// version's form).
fn notified_task(v: &Value) -> Option<&str> {
    fn of(o: &Value, task: bool) -> Option<&str> {
        o.get("taskId")
            .or_else(|| task.then(|| o.get("id")).flatten())
            .and_then(Value::as_str)
    }
    if let Some(t) = of(v, v.get("kind").and_then(Value::as_str) == Some("task")) {
        return Some(t);
    }
    ["task", "statusUpdate", "artifactUpdate", "message"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|o| of(o, *k == "task")))
}

/// `POST /a2a/{agentId}/push:notify/{callback}`: a peer's notification for a sealed config.
pub async fn notify(
    State(st): State<Arc<GatewayState>>,
    Path((agent, callback)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let started = Instant::now();
    let cb = match st.store.push_callback(&callback) {
        Ok(Some(cb)) if cb.agent_id == agent => cb,
        Ok(_) => return status(StatusCode::NOT_FOUND),
        Err(e) => {
            tracing::error!("push callback lookup failed: {e}");
            return status(StatusCode::INTERNAL_SERVER_ERROR);
        }
    };
    let mut audit = AuditRecord {
        trace_id: random_hex(16),
        workspace_id: Some(cb.workspace_id.clone()),
        target: Some(agent.clone()),
        operation: Some("push:notify".into()),
        client_version: Some(cb.caller_version.clone()),
        peer_version: Some(cb.peer_version.clone()),
        decision: "refused".into(),
        ..AuditRecord::default()
    };
    let finish = |audit: &mut AuditRecord, code: StatusCode, decision: &str, err: Option<&str>| {
        audit.status = i64::from(code.as_u16());
        audit.decision = decision.into();
        audit.error_code = err.map(str::to_owned);
        audit.latency_ms = started.elapsed().as_millis() as i64;
        st.metrics.record(
            "push:notify",
            err.unwrap_or("ok"),
            started.elapsed().as_secs_f64(),
        );
        if let Err(e) = st.store.append_audit(audit) {
            tracing::error!("audit write failed: {e}");
        }
        match err {
            Some(e) if !code.is_success() => refused(code, e, &audit.trace_id),
            _ => status(code),
        }
    };
    let token = headers
        .get(TOKEN_HEADER)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if !keys::digest_eq(token, cb.notify_token.as_bytes()) {
        return finish(
            &mut audit,
            StatusCode::UNAUTHORIZED,
            "refused",
            Some("a2a_push_unauthorized"),
        );
    }
    // The route's body limit is `max_push_bytes` + 1: a larger body is a rejection here.
    let body = match body {
        Ok(b) => b,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return finish(
                &mut audit,
                StatusCode::PAYLOAD_TOO_LARGE,
                "refused",
                Some("a2a_push_too_large"),
            );
        }
        Err(_) => {
            return finish(
                &mut audit,
                StatusCode::BAD_REQUEST,
                "refused",
                Some("a2a_push_invalid"),
            );
        }
    };
    if body.len() as u64 > st.config.limits.max_push_bytes {
        return finish(
            &mut audit,
            StatusCode::PAYLOAD_TOO_LARGE,
            "refused",
            Some("a2a_push_too_large"),
        );
    }
    let from = version_of(&cb.peer_version);
    let to = version_of(&cb.caller_version);
    let hop = crate::governance::step::Hop {
        trace_id: audit.trace_id.clone(),
        workspace_id: cb.workspace_id.clone(),
        key_id: String::new(),
        scopes: Vec::new(),
        target: agent.clone(),
        operation: crate::protocol::ops::Operation::SetPushConfig,
        version: to,
        binding: crate::protocol::errors::Binding::JsonRpc,
        card_skills: Vec::new(),
        chain: Vec::new(),
    };
    let governed = st.governance.active(&hop);
    let mut evidence = crate::governance::step::Evidence::default();
    let parsed = serde_json::from_slice::<Value>(&body).ok();
    // The notification must be about the sealed config's task (once the gateway knows it: an
    // inline config on a send learns its task from the answer, which a notification may beat),
    // and name it.
    if let Some(v) = &parsed
        && !cb.task_id.is_empty()
        && notified_task(v).is_none_or(|t| t != cb.task_id)
    {
        return finish(
            &mut audit,
            StatusCode::FORBIDDEN,
            "refused",
            Some("a2a_push_task_mismatch"),
        );
    }
    // signed push: an agent with trusted keys signs each notification (`crate::push::jwt`).
    let registered = st.store.agent(&cb.workspace_id, &agent).ok().flatten();
    let named = parsed.as_ref().and_then(notified_task);
    if let Err((code, err, why)) =
        crate::push::jwt::check(&st, registered.as_ref(), &cb, &headers, named).await
    {
        tracing::info!(trace_id = %audit.trace_id, "push notification refused: {why}");
        return finish(&mut audit, code, "refused", Some(err));
    }
    let translated = match parsed {
        None => None,
        Some(v) if !governed => crate::protocol::xlate::push_payload(v, from, to).ok(),
        // push steps: the notification in 1.0 form; a refusal (PII block) is not delivered.
        Some(v) => match crate::protocol::xlate::push_payload(v, from, Version::V10) {
            Err(_) => None,
            Ok(mut v10) => {
                if let Err(r) = st.governance.push(&hop, &mut v10, &mut evidence) {
                    audit.governance = serde_json::to_value(&evidence).ok();
                    // Answered 200: the notification was received and will not be delivered;
                    // a peer retry would be refused the same way.
                    return finish(&mut audit, StatusCode::OK, "blocked", Some(&r.code));
                }
                audit.governance = (!evidence.is_empty())
                    .then(|| serde_json::to_value(&evidence).ok())
                    .flatten();
                crate::protocol::xlate::push_payload(v10, Version::V10, to).ok()
            }
        },
    };
    let Some(translated) = translated else {
        return finish(
            &mut audit,
            StatusCode::BAD_REQUEST,
            "refused",
            Some("a2a_push_invalid"),
        );
    };
    let mut translated =
        if to == Version::V03 && translated.get("kind").and_then(Value::as_str) != Some("task") {
            task_v03(&st, &cb, &translated).await
        } else {
            translated
        };
    // Extensions: a notification's `extensions` lists keep only what the workspace allows
    // (`a2a.extensions.allowed`; the hop's request is not known here), as answers do.
    // Settings that cannot be read keep nothing.
    let allowed = st
        .store
        .workspace_settings(&cb.workspace_id)
        .map(|s| s.extensions_allowed)
        .unwrap_or_default();
    crate::governance::extensions::keep_in_lists(&mut translated, &allowed);
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &body);
    let hash: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    if st
        .store
        .push_delivered(&cb.callback_id, &hash)
        .unwrap_or(false)
    {
        return finish(&mut audit, StatusCode::OK, "duplicate", None);
    }
    match deliver(&st, &cb, to, &translated).await {
        Ok(()) => {
            if let Err(e) = st.store.mark_push_delivered(&cb.callback_id, &hash) {
                tracing::error!("push delivery not recorded: {e}");
            }
            finish(&mut audit, StatusCode::OK, "delivered", None)
        }
        Err(why) => {
            tracing::info!(callback = %cb.callback_id, "push delivery failed: {why}");
            finish(
                &mut audit,
                StatusCode::BAD_GATEWAY,
                "failed",
                Some("a2a_push_delivery_failed"),
            )
        }
    }
}

/// A 0.3 notification is the Task (0.3 §9.5); a 1.0 peer notifies with update events. The Task
/// is read from the peer (GetTask) and given the status this notification reports, so each
/// update reaches the 0.3 webhook as the task in that state; if the peer cannot be read, the
/// task is what the event names (id, context, status).
async fn task_v03(st: &GatewayState, cb: &PushCallback, event: &Value) -> Value {
    let id = event.get("taskId").and_then(Value::as_str).unwrap_or("");
    let mut task = json!({"kind": "task", "id": id, "contextId": event.get("contextId")});
    if let Ok(Some(agent)) = st.store.agent(&cb.workspace_id, &cb.agent_id)
        && let Ok(peer) = crate::outbound::side_call::Peer::open(st, &agent).await
        && let Ok(crate::protocol::answer::Answer::Unary(t)) = peer
            .op(crate::protocol::ops::Operation::GetTask, json!({"id": id}))
            .await
        && let Ok(t) =
            crate::protocol::xlate::push_payload(json!({"task": t}), Version::V10, Version::V03)
        && t.get("kind").and_then(Value::as_str) == Some("task")
    {
        task = t;
    }
    if let (Some(status), Some(o)) = (event.get("status"), task.as_object_mut()) {
        o.insert("status".into(), status.clone());
    }
    task
}

async fn deliver(
    st: &GatewayState,
    cb: &PushCallback,
    to: Version,
    body: &Value,
) -> Result<(), String> {
    // Checked again at delivery: the policy may have changed since sealing, and userinfo must
    // never become an Authorization header.
    let url = peer::check_webhook(&cb.url, st.config.dev_mode)?;
    peer::check_resolved(&url, st.config.dev_mode)
        .await
        .map_err(|r| r.message)?;
    let ct = match to {
        Version::V10 => "application/a2a+json",
        Version::V03 => "application/json",
    };
    let mut req = st
        .http
        .post(url)
        .header(header::CONTENT_TYPE, ct)
        .timeout(Duration::from_secs(st.config.peer_timeout_secs.max(1)))
        .body(body.to_string());
    if let (Some(s), Some(c)) = (&cb.auth_scheme, &cb.auth_credentials) {
        req = req.header(header::AUTHORIZATION, format!("{s} {c}"));
    }
    if let Some(t) = &cb.token {
        req = req.header(TOKEN_HEADER, t);
    }
    let resp = req.send().await.map_err(|e| peer::error_chain(&e))?;
    if resp.status().is_success() {
        Ok(())
    } else {
        Err(format!("webhook answered {}", resp.status()))
    }
}
