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
mod notify;

pub use notify::notify;

use std::time::Duration;

use serde_json::{Value, json};

use crate::keys;
use crate::peer;
use crate::store::backend::RegistryStore;
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
        .config()
        .push_direct_workspaces
        .iter()
        .any(|w| w == workspace_id)
    {
        return Some(PushDelivery::Direct);
    }
    st.config()
        .push_callback_base_url
        .as_ref()
        .map(|_| PushDelivery::Gateway)
}

/// The push mode of a workspace ([`delivery`]), or 503 `a2a_push_not_available`.
pub async fn mode(st: &GatewayState, workspace_id: &str) -> Result<Mode, Refusal> {
    use crate::store::PushDelivery;
    let settings = st
        .registry
        .workspace_settings(workspace_id)
        .await
        .map_err(|e| Refusal::store("workspace settings", &e))?;
    match (
        delivery(st, workspace_id, &settings),
        &st.config().push_callback_base_url,
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
        Version::V1 => "taskPushNotificationConfig",
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
        Version::V1 => v.as_object_mut(),
    }
}

/// Seals a `pushConfig:set` request, or the inline config of a send (`inline`), in the
/// caller's version: stores the caller's webhook and rewrites the config to the gateway
/// callback. Returns the callback id.
#[allow(clippy::too_many_arguments)]
pub async fn seal(
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
        Version::V1 => auth
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
    st.registry
        .insert_push_callback(&cb)
        .await
        .map_err(|e| Refusal::store("", &e))?;
    Ok(callback_id)
}

/// Records what the peer's answer tells about a sealed config (caller's version): the config
/// id of a set answer, or the task id of a send answer (`inline`).
pub async fn remember_id(
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
            Version::V1 => a.pointer("/task/id"),
        };
        (task.and_then(Value::as_str).map(str::to_owned), None)
    } else {
        let id = config_obj(&mut a, caller)
            .and_then(|o| o.get("id").and_then(Value::as_str).map(str::to_owned));
        (None, id)
    };
    if let Err(e) = st
        .registry
        .update_push_callback(callback_id, task.as_deref(), config.as_deref())
        .await
    {
        tracing::error!("push callback not updated: {e}");
    }
}

/// Rewrites every sealed callback URL in an answer back to the caller's own webhook. Only
/// callbacks of `workspace_id` and `agent_id` are unsealed; a callback of anyone else keeps the
/// gateway URL and loses its notification token.
///
/// An unsealed config shows the caller's webhook as the gateway's records hold it: its url,
/// token and authentication (none when the caller set none: the peer was given none, so one in
/// its answer is of its own making). Returns where those configs are (JSON pointers into `v`):
/// their `url`, `token` and `authentication` are the caller's own, not the peer's words.
pub async fn unseal(
    st: &GatewayState,
    base: &str,
    workspace_id: &str,
    agent_id: &str,
    caller: Version,
    v: &mut Value,
) -> Vec<String> {
    let prefix = callback_prefix(base, agent_id);
    // The records of the sealed callbacks the answer names, read first.
    let mut ids = Vec::new();
    sealed_ids(v, &prefix, &mut ids);
    let mut records = std::collections::HashMap::new();
    for id in ids {
        if let Ok(Some(cb)) = st.registry.push_callback(&id).await
            && cb.workspace_id == workspace_id
            && cb.agent_id == agent_id
        {
            records.insert(id, cb);
        }
    }
    let mut restored = Vec::new();
    let at = Unseal {
        records,
        prefix,
        caller,
    };
    at.walk(v, &mut String::new(), &mut restored);
    restored
}

/// The callback id of an object whose url is a sealed callback under `prefix`.
fn sealed_id<'v>(o: &'v serde_json::Map<String, Value>, prefix: &str) -> Option<&'v str> {
    o.get("url")
        .and_then(Value::as_str)
        .and_then(|u| u.strip_prefix(prefix))
}

/// The ids of every sealed callback in `v`.
fn sealed_ids(v: &Value, prefix: &str, ids: &mut Vec<String>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| sealed_ids(x, prefix, ids)),
        Value::Object(o) => {
            if let Some(id) = sealed_id(o, prefix) {
                ids.push(id.to_owned());
            }
            o.values().for_each(|x| sealed_ids(x, prefix, ids));
        }
        _ => {}
    }
}

/// The members of an unsealed config written from the gateway's records.
pub const RESTORED_MEMBERS: [&str; 3] = ["url", "token", "authentication"];

struct Unseal {
    /// The records of the workspace's and agent's sealed callbacks the answer names.
    records: std::collections::HashMap<String, PushCallback>,
    prefix: String,
    caller: Version,
}

impl Unseal {
    /// Unseals `v` (at JSON pointer `at`), recording the configs restored.
    fn walk(&self, v: &mut Value, at: &mut String, restored: &mut Vec<String>) {
        let len = at.len();
        match v {
            Value::Array(a) => {
                for (i, x) in a.iter_mut().enumerate() {
                    at.push('/');
                    at.push_str(&i.to_string());
                    self.walk(x, at, restored);
                    at.truncate(len);
                }
            }
            Value::Object(o) => {
                if self.restore(o) {
                    restored.push(at.clone());
                }
                for (k, x) in o.iter_mut() {
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    self.walk(x, at, restored);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// Unseals one object whose url is a sealed callback; true when it was restored from a
    /// record of this workspace and agent.
    fn restore(&self, o: &mut serde_json::Map<String, Value>) -> bool {
        let Some(id) = sealed_id(o, &self.prefix) else {
            return false;
        };
        let Some(cb) = self.records.get(id).cloned() else {
            o.remove("token");
            return false;
        };
        o.insert("url".into(), json!(cb.url));
        match cb.token {
            Some(t) => o.insert("token".into(), json!(t)),
            None => o.remove("token"),
        };
        match cb.auth_scheme {
            Some(scheme) => {
                let mut auth = match self.caller {
                    Version::V03 => json!({"schemes": [scheme]}),
                    Version::V1 => json!({"scheme": scheme}),
                };
                if let Some(c) = cb.auth_credentials {
                    auth["credentials"] = json!(c);
                }
                o.insert("authentication".into(), auth)
            }
            None => o.remove("authentication"),
        };
        true
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
        Version::V1 => (s("taskId"), s("id")),
    };
    let Some(task) = task else { return };
    let registry = st.registry.clone();
    let (ws, agent) = (workspace_id.to_owned(), agent_id.to_owned());
    let grace = Duration::from_millis(st.config().push_delete_grace_ms);
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        let deleted = registry
            .delete_push_callbacks(&ws, &agent, &task, cfg.as_deref())
            .await;
        if let Err(e) = deleted {
            tracing::error!("push callbacks not removed: {e}");
        }
    });
}
