//! The gateway's push callback: a peer's notification for a sealed config, checked (token, JWT
//! of pinned agents, the task it names), governed, translated and delivered to the caller's
//! webhook.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::*;
use crate::store::backend::RegistryStore;

fn version_of(s: &str) -> Version {
    if s == "0.3" {
        Version::V03
    } else {
        Version::V1
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
        "a2a_store_unavailable" => "the gateway's store cannot be reached; retry later",
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
    let cb = match st.registry.push_callback(&callback).await {
        Ok(Some(cb)) if cb.agent_id == agent => cb,
        Ok(_) => return status(StatusCode::NOT_FOUND),
        Err(e) if e.is_unavailable() => {
            let code = StatusCode::SERVICE_UNAVAILABLE;
            return refused(code, "a2a_store_unavailable", &random_hex(16));
        }
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
        st.metrics.hop(
            &crate::metrics::HopLabels {
                workspace: audit.workspace_id.as_deref(),
                agent: audit.target.as_deref(),
                operation: "push:notify",
                caller_version: audit.client_version.as_deref(),
                decision,
                code: err.unwrap_or("ok"),
                jsonrpc_code: None,
            },
            started.elapsed(),
            None,
        );
        st.audit.write(audit, None);
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
    if body.len() as u64 > st.config().limits.max_push_bytes {
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
        operation: crate::protocol::ops::Operation::CreateTaskPushNotificationConfig,
        version: to,
        binding: crate::protocol::errors::Binding::JsonRpc,
        card_skills: Vec::new(),
        chain: Vec::new(),
    };
    st.governance.cache.load(&cb.workspace_id).await;
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
    let registered = st
        .registry
        .agent(&cb.workspace_id, &agent)
        .await
        .ok()
        .flatten();
    let named = parsed.as_ref().and_then(notified_task);
    if let Err((code, err, why)) =
        crate::push::jwt::check(&st, registered.as_ref(), &cb, &headers, named).await
    {
        tracing::info!(trace_id = %audit.trace_id, "push notification refused: {why}");
        return finish(&mut audit, code, "refused", Some(err));
    }
    // The status it reports, recorded for ListTasks (only ever on this owner's binding).
    if let (Some(v), Some(a)) = (&parsed, &registered) {
        let owner = crate::tasks::ownership::Owner {
            workspace_id: cb.workspace_id.clone(),
            agent_id: agent.clone(),
        };
        crate::tasks::ownership::record(&st.records, &a.endpoint, &owner, v).await;
    }
    let translated = match parsed {
        None => None,
        // Nothing to read from the peer, nothing to govern: translated as it came.
        Some(v) if !governed && (to == Version::V1 || from == Version::V03) => {
            crate::protocol::xlate::push_payload(v, from, to).ok()
        }
        // The notification in 1.0 form; push steps (when governed) see it whole, and a refusal
        // (PII block) is not delivered.
        Some(v) => match crate::protocol::xlate::push_payload(v, from, Version::V1) {
            Err(_) => None,
            Ok(mut v10) => {
                // A 0.3 webhook gets the whole task: it is read from the peer first, so the
                // steps below see everything the webhook will receive.
                if to == Version::V03 && v10.get("task").is_none() {
                    v10 = task_v10(&st, &cb, v10).await;
                }
                if governed && let Err(r) = st.governance.push(&hop, &mut v10, &mut evidence) {
                    audit.governance = serde_json::to_value(&evidence).ok();
                    // Answered 200: the notification was received and will not be delivered;
                    // a peer retry would be refused the same way.
                    return finish(&mut audit, StatusCode::OK, "blocked", Some(&r.code));
                }
                audit.governance = (!evidence.is_empty())
                    .then(|| serde_json::to_value(&evidence).ok())
                    .flatten();
                crate::protocol::xlate::push_payload(v10, Version::V1, to).ok()
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
    let mut translated = translated;
    // Extensions: a notification's `extensions` lists keep only what the workspace allows
    // (`a2a.extensions.allowed`; the hop's request is not known here), as answers do.
    // Settings that cannot be read keep nothing.
    let allowed = st
        .registry
        .workspace_settings(&cb.workspace_id)
        .await
        .map(|s| s.extensions_allowed)
        .unwrap_or_default();
    crate::governance::extensions::keep_in_lists(&mut translated, &allowed);
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &body);
    let hash: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    if st
        .registry
        .push_delivered(&cb.callback_id, &hash)
        .await
        .unwrap_or(false)
    {
        return finish(&mut audit, StatusCode::OK, "duplicate", None);
    }
    match deliver(&st, &cb, to, &translated).await {
        Ok(()) => {
            if let Err(e) = st
                .registry
                .mark_push_delivered(&cb.callback_id, &hash)
                .await
            {
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
/// is read from the peer (GetTask, in 1.0 form) and given the status the event `v10` reports,
/// so each update reaches the 0.3 webhook as the task in that state; if the peer cannot be
/// read, the task is what the event names (id, context, status). Answers `{"task": ...}`, which
/// the push steps of a governed workspace see whole before the webhook does.
async fn task_v10(st: &GatewayState, cb: &PushCallback, v10: Value) -> Value {
    let ev = v10
        .get("statusUpdate")
        .or_else(|| v10.get("artifactUpdate"))
        .cloned()
        .unwrap_or(Value::Null);
    let id = ev.get("taskId").and_then(Value::as_str).unwrap_or("");
    let mut task = json!({"id": id, "contextId": ev.get("contextId")});
    if let Ok(Some(agent)) = st.registry.agent(&cb.workspace_id, &cb.agent_id).await
        && let Ok(peer) = crate::outbound::side_call::Peer::open(st, &agent).await
        && let Ok(crate::protocol::answer::Answer::Unary(t)) = peer
            .op(crate::protocol::ops::Operation::GetTask, json!({"id": id}))
            .await
        && t.get("id").and_then(Value::as_str) == Some(id)
    {
        task = t;
    }
    if let (Some(status), Some(o)) = (ev.get("status"), task.as_object_mut()) {
        o.insert("status".into(), status.clone());
    }
    json!({"task": task})
}

async fn deliver(
    st: &GatewayState,
    cb: &PushCallback,
    to: Version,
    body: &Value,
) -> Result<(), String> {
    // Checked again at delivery: the policy may have changed since sealing, and userinfo must
    // never become an Authorization header.
    let url = peer::check_webhook(&cb.url, st.config().dev_mode)?;
    peer::check_resolved(&url, st.config().dev_mode)
        .await
        .map_err(|r| r.message)?;
    let ct = match to {
        Version::V1 => "application/a2a+json",
        Version::V03 => "application/json",
    };
    let mut req = st
        .peers()
        .http
        .post(url)
        .header(header::CONTENT_TYPE, ct)
        .timeout(Duration::from_secs(st.config().peer_timeout_secs.max(1)))
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
