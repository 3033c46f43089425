//! Push notifications: the webhook dispatcher (configs checked and staged, events routed,
//! deliveries retried) and the config store ([`store`]). The config operations of both versions
//! run on it from `ops::push`.
//!
//! Delivery: on every status or artifact event of a task, each of its configs gets one POST.
//! Configs are served concurrently; deliveries to one config are strictly ordered (one worker
//! per config). The body follows the version the config was created with: 1.0 posts one
//! `StreamResponse` as `application/a2a+json`, 0.3 posts the task in its 0.3 form as
//! `application/json` (what the 0.3 SDKs send). `Authorization: <scheme> <credentials>` comes
//! from the config's authentication, `X-A2A-Notification-Token` from its token.
//!
//! Retries: 5xx answers and I/O errors (connect, timeout) are retried `retry_attempts` times,
//! waiting `retry_backoff x 2^attempt` (attempt 0 = first retry); other answers are final.
//! 410 Gone deregisters the config. A failing webhook never affects the task.
//!
//! SSRF: URLs are checked by [`crate::net_guard::NetGuard`] at registration (including DNS) and
//! again at delivery, where the HTTP client connects only to checked addresses.

pub mod store;

use crate::caller::CallerProfile;
use crate::edge::version::Version;
use crate::error::A2aError;
use crate::model::{StreamResponse, Task};
use crate::net_guard::NetGuard;
use a2a_types::v1::TaskPushNotificationConfig;
use a2a_types::version::APPLICATION_A2A_JSON;
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::{PushConfigStore, PushRecord};
use tokio::sync::mpsc;

/// Receives task lifecycle events from the task manager (synchronously, in event order).
pub trait EventSink: Send + Sync + 'static {
    /// A send created or resumed `task` for the owner `owner`, before its handler runs.
    fn on_task_started(&self, task: &Task, owner: &str);
    /// A status or artifact event of `task` (the task is the snapshot after the event).
    fn on_event(&self, task: &Task, event: &StreamResponse);
}

/// Delivery knobs.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// Retries after the first attempt (5xx and I/O errors only). Default 3.
    pub retry_attempts: u32,
    /// Base backoff; the wait before retry `n` (0-based) is `retry_backoff x 2^n`. Default 1 s.
    pub retry_backoff: Duration,
    /// Timeout of one attempt. Default 10 s.
    pub attempt_timeout: Duration,
}

impl Default for PushSettings {
    fn default() -> Self {
        PushSettings {
            retry_attempts: 3,
            retry_backoff: Duration::from_millis(1000),
            attempt_timeout: Duration::from_secs(10),
        }
    }
}

enum Ingress {
    Register(PushRecord),
    Event(Box<Task>, Box<StreamResponse>),
    Barrier(tokio::sync::oneshot::Sender<()>),
}

struct Delivery {
    body: Bytes,
    content_type: &'static str,
}

type WorkerKey = (String, String);

/// Owns push configs and delivers webhooks.
pub struct Dispatcher {
    store: Arc<dyn PushConfigStore>,
    guard: NetGuard,
    client: reqwest::Client,
    settings: PushSettings,
    ingress: mpsc::UnboundedSender<Ingress>,
    /// Configs given inline on a send, keyed by message id, until the task exists.
    pending: Mutex<HashMap<String, PushRecord>>,
    workers: Mutex<HashMap<WorkerKey, mpsc::UnboundedSender<Delivery>>>,
    /// Tasks that have (or had) configs: events of other tasks skip the store.
    with_configs: Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("settings", &self.settings)
            .finish()
    }
}

impl Dispatcher {
    /// A dispatcher over `store`, checking URLs with `guard`. Spawns its router task (call
    /// inside a Tokio runtime).
    pub fn new(
        store: Arc<dyn PushConfigStore>,
        guard: NetGuard,
        settings: PushSettings,
    ) -> Result<Arc<Self>, A2aError> {
        let client = guard
            .client(settings.attempt_timeout)
            .map_err(|e| A2aError::internal(format!("push client: {e}")))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let d = Arc::new(Dispatcher {
            store,
            guard,
            client,
            settings,
            ingress: tx,
            pending: Mutex::new(HashMap::new()),
            workers: Mutex::new(HashMap::new()),
            with_configs: Mutex::new(std::collections::HashSet::new()),
        });
        tokio::spawn(route(Arc::downgrade(&d), rx));
        Ok(d)
    }

    /// The config store.
    pub fn store(&self) -> &Arc<dyn PushConfigStore> {
        &self.store
    }

    /// Check a config's URL (InvalidParams when refused) and fill its ids.
    pub(crate) async fn prepare(
        &self,
        mut config: TaskPushNotificationConfig,
        task_id: &str,
        version: Version,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        if config.url.trim().is_empty() {
            return Err(
                A2aError::invalid_params("push notification url is required")
                    .with_meta("field", "url"),
            );
        }
        self.guard.check_resolved(&config.url).await.map_err(|e| {
            A2aError::invalid_params(format!("webhook URL refused: {e}")).with_meta("field", "url")
        })?;
        config.task_id = Some(task_id.to_string());
        config.tenant = None;
        if config.id.as_deref().is_none_or(str::is_empty) {
            // 0.3 SDKs use the task id as the id of a config created without one.
            config.id = Some(match version {
                Version::V03 => task_id.to_string(),
                Version::V1 => uuid::Uuid::new_v4().to_string(),
            });
        }
        Ok(config)
    }

    /// Remember the inline config of a send (`configuration.taskPushNotificationConfig`) for
    /// the task that message creates or resumes; checked now.
    pub(crate) async fn stage_inline(
        &self,
        message_id: &str,
        config: TaskPushNotificationConfig,
        caller: &CallerProfile,
        version: Version,
    ) -> Result<(), A2aError> {
        // The task id is not known yet: check with a placeholder, fill at registration.
        let config = self.prepare(config, "", version).await?;
        let mut config = config;
        if version == Version::V03 && config.id.as_deref() == Some("") {
            config.id = None;
        }
        if let Ok(mut p) = self.pending.lock() {
            p.insert(
                message_id.to_string(),
                PushRecord {
                    config,
                    version,
                    owner: caller.owner_key(),
                },
            );
        }
        Ok(())
    }

    /// After the send: drop a staged config that no task picked up (the send failed) and wait
    /// until a picked-up one is stored, so that it is visible to the caller's next request.
    pub(crate) async fn settle(&self, message_id: &str) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(message_id);
        }
        self.barrier().await;
    }

    /// Wait until every event emitted so far has been routed to the configs it concerns.
    pub(crate) async fn barrier(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.ingress.send(Ingress::Barrier(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    pub(crate) fn mark(&self, task_id: &str) {
        if let Ok(mut s) = self.with_configs.lock() {
            s.insert(task_id.to_string());
        }
    }

    fn has_configs(&self, task_id: &str) -> bool {
        self.with_configs
            .lock()
            .map(|s| s.contains(task_id))
            .unwrap_or(true)
    }

    fn key(rec: &PushRecord) -> WorkerKey {
        (rec.task_id().to_string(), rec.id().to_string())
    }

    fn body(rec: &PushRecord, task: &Task, ev: &StreamResponse) -> Option<Delivery> {
        let r = match rec.version {
            Version::V1 => serde_json::to_vec(ev).map(|b| Delivery {
                body: Bytes::from(b),
                content_type: APPLICATION_A2A_JSON,
            }),
            Version::V03 => {
                let t = match a2a_translate::to_v03::task(
                    task.clone(),
                    a2a_translate::Policy::SdkCompatible,
                ) {
                    Ok(t) => t,
                    Err(e) => {
                        tracing::debug!(error = %e, "push: task has no 0.3 form");
                        return None;
                    }
                };
                serde_json::to_vec(&t).map(|b| Delivery {
                    body: Bytes::from(b),
                    content_type: "application/json",
                })
            }
        };
        r.ok()
    }

    fn enqueue(self: &Arc<Self>, rec: PushRecord, d: Delivery) {
        let Ok(mut w) = self.workers.lock() else {
            return;
        };
        let key = Self::key(&rec);
        let tx = w.entry(key).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(worker(Arc::downgrade(self), rec.clone(), rx));
            tx
        });
        let _ = tx.send(d);
    }

    fn close_task(&self, task_id: &str) {
        if let Ok(mut w) = self.workers.lock() {
            w.retain(|(t, _), _| t != task_id);
        }
        // A terminal task sends no more events (a config added later marks it again).
        if let Ok(mut s) = self.with_configs.lock() {
            s.remove(task_id);
        }
    }

    /// One delivery with retries; whether the config is gone (410).
    async fn deliver(&self, rec: &PushRecord, d: &Delivery) -> bool {
        let url = rec.config.url.as_str();
        let mut attempt: u32 = 0;
        loop {
            if let Err(e) = self.guard.check_url(url) {
                tracing::warn!(%url, error = %e, "push: webhook URL refused at delivery");
                return false;
            }
            let mut req = self
                .client
                .post(url)
                .header(http::header::CONTENT_TYPE, d.content_type)
                .body(d.body.clone());
            if let Some(a) = &rec.config.authentication
                && !a.scheme.is_empty()
            {
                let v = match &a.credentials {
                    Some(c) => format!("{} {}", a.scheme, c),
                    None => a.scheme.clone(),
                };
                req = req.header(http::header::AUTHORIZATION, v);
            }
            if let Some(t) = rec.config.token.as_deref().filter(|t| !t.is_empty()) {
                req = req.header("X-A2A-Notification-Token", t);
            }
            let retry = match req.send().await {
                Ok(r) if r.status() == reqwest::StatusCode::GONE => return true,
                Ok(r) if r.status().is_server_error() => true,
                Ok(r) => {
                    if !r.status().is_success() {
                        tracing::debug!(%url, status = %r.status(), "push: webhook refused");
                    }
                    false
                }
                Err(e) => {
                    tracing::debug!(%url, error = %e, "push: delivery failed");
                    true
                }
            };
            if !retry || attempt >= self.settings.retry_attempts {
                return false;
            }
            let wait = self
                .settings
                .retry_backoff
                .saturating_mul(2u32.saturating_pow(attempt));
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

async fn route(d: std::sync::Weak<Dispatcher>, mut rx: mpsc::UnboundedReceiver<Ingress>) {
    // Configs persisted by an earlier run (SQLite) are known before the first event.
    if let Some(disp) = d.upgrade() {
        match disp.store.task_ids().await {
            Ok(ids) => {
                for id in ids {
                    disp.mark(&id);
                }
            }
            Err(e) => tracing::warn!(error = %e, "push: loading config index failed"),
        }
    }
    while let Some(msg) = rx.recv().await {
        let Some(d) = d.upgrade() else { return };
        match msg {
            Ingress::Barrier(tx) => {
                let _ = tx.send(());
            }
            Ingress::Register(rec) => {
                d.mark(rec.task_id());
                if let Err(e) = d.store.put(rec).await {
                    tracing::warn!(error = %e, "push: storing inline config failed");
                }
            }
            Ingress::Event(task, ev) => {
                if !d.has_configs(&task.id) {
                    continue;
                }
                let recs = match d.store.list(&task.id).await {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::warn!(error = %e, "push: listing configs failed");
                        continue;
                    }
                };
                for rec in recs {
                    if let Some(body) = Dispatcher::body(&rec, &task, &ev) {
                        d.enqueue(rec, body);
                    }
                }
                if task.status.state.is_terminal() {
                    d.close_task(&task.id);
                }
            }
        }
    }
}

async fn worker(
    d: std::sync::Weak<Dispatcher>,
    rec: PushRecord,
    mut rx: mpsc::UnboundedReceiver<Delivery>,
) {
    let mut gone = false;
    while let Some(del) = rx.recv().await {
        if gone {
            continue;
        }
        let Some(d) = d.upgrade() else { return };
        if d.deliver(&rec, &del).await {
            gone = true;
            tracing::info!(url = %rec.config.url, "push: webhook answered 410 Gone; deregistered");
            if let Err(e) = d.store.delete(rec.task_id(), rec.id()).await {
                tracing::warn!(error = %e, "push: deregistering failed");
            }
        }
    }
}

impl EventSink for Arc<Dispatcher> {
    fn on_task_started(&self, task: &Task, owner: &str) {
        let Some(mid) = task.history.last().map(|m| m.message_id.clone()) else {
            return;
        };
        let staged = self.pending.lock().ok().and_then(|mut p| p.remove(&mid));
        if let Some(mut rec) = staged
            && rec.owner == owner
        {
            rec.config.task_id = Some(task.id.clone());
            if rec.config.id.as_deref().is_none_or(str::is_empty) {
                rec.config.id = Some(task.id.clone());
            }
            let _ = self.ingress.send(Ingress::Register(rec));
        }
    }

    fn on_event(&self, task: &Task, event: &StreamResponse) {
        let _ = self.ingress.send(Ingress::Event(
            Box::new(task.clone()),
            Box::new(event.clone()),
        ));
    }
}
