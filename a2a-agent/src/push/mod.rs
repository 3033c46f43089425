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
//! Outbox (at-least-once): the notifications an event owes are built when the task changes and
//! recorded as due in the task store with the change ([`crate::TaskStore::put_with_notices`]);
//! a webhook's answer (2xx, or a final refusal) removes its notification. What is still recorded
//! when the process ends (shutdown past its grace period, a webhook down, `kill -9`) is resent at
//! the next start ([`Dispatcher::start`]) in recording order, with the same retries. A webhook
//! that answered just before a crash may get that notification again. A store without an outbox
//! (the memory store) delivers from memory only. On shutdown [`Dispatcher::drain`] waits for the
//! deliveries in flight (`deliver.rs`).
//!
//! SSRF: URLs are checked by [`crate::net_guard::NetGuard`] at registration (including DNS) and
//! again at delivery, where the HTTP client connects only to checked addresses.

mod deliver;
pub mod store;
#[cfg(feature = "postgres")]
pub mod store_pg;

pub use deliver::Undelivered;

use crate::caller::CallerProfile;
use crate::edge::version::Version;
use crate::error::A2aError;
use crate::model::{StreamResponse, Task};
use crate::net_guard::NetGuard;
use crate::store::{Notice, TaskStore};
use a2a_types::v1::TaskPushNotificationConfig;
use a2a_types::version::APPLICATION_A2A_JSON;
use async_trait::async_trait;
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::{PushConfigStore, PushRecord};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Receives task lifecycle events from the task manager, in event order, with the task's lock
/// held.
#[async_trait]
pub trait EventSink: Send + Sync + 'static {
    /// A send created or resumed `task` for the owner `owner`, before its handler runs.
    async fn on_task_started(&self, task: &Task, owner: &str);
    /// The notifications a status or artifact event of `task` owes (the task is the snapshot
    /// after the event). The caller records their [`Outgoing::notice`]s with the change, then
    /// hands them to [`EventSink::dispatch`].
    async fn notices(&self, task: &Task, event: &StreamResponse) -> Vec<Outgoing>;
    /// Deliver `out`, recorded in the store's outbox under the numbers `seqs` (in order; empty
    /// when not recorded).
    fn dispatch(&self, out: Vec<Outgoing>, seqs: Vec<i64>);
    /// Another replica may have registered push configs for task `task_id` (it took the task
    /// over, or it was told of a new config): read them again. Default: nothing.
    async fn refresh(&self, task_id: &str) {
        let _ = task_id;
    }
    /// Other replicas may have registered configs this one was not told of: read which tasks
    /// have configs again. Default: nothing.
    async fn refresh_all(&self) {}
    /// Resend the notifications replicas that are gone left due (taken over in the store);
    /// how many. Default: none.
    async fn take_over(&self) -> usize {
        0
    }
}

/// A notification owed to one webhook config: what the store records, and the config.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The notification (task, config, body).
    pub notice: Notice,
    rec: PushRecord,
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

/// One notification queued for a config's worker.
struct Delivery {
    body: Bytes,
    content_type: String,
    /// Its number in the store's outbox (None: not recorded).
    seq: Option<i64>,
}

type WorkerKey = (String, String);

/// Owns push configs and delivers webhooks.
pub struct Dispatcher {
    store: Arc<dyn PushConfigStore>,
    /// The task store: its outbox records what is due.
    tasks: Arc<dyn TaskStore>,
    guard: NetGuard,
    /// The HTTP client and the delivery knobs it was built for (a reload replaces both).
    live: arc_swap::ArcSwap<(reqwest::Client, PushSettings)>,
    /// Configs given inline on a send, keyed by message id, until the task exists.
    pending: Mutex<HashMap<String, PushRecord>>,
    /// One worker per config with deliveries queued; a worker leaves when its queue is empty.
    workers: Mutex<HashMap<WorkerKey, mpsc::UnboundedSender<Delivery>>>,
    /// Tasks that have (or had) configs: events of other tasks skip the store.
    with_configs: Mutex<std::collections::HashSet<String>>,
    /// Deliveries queued or in flight, and those of them not recorded in an outbox.
    queued: AtomicUsize,
    unrecorded: AtomicUsize,
    /// Notified when `queued` reaches 0.
    idle: tokio::sync::Notify,
    /// Cancelled when a shutdown's drain ends: workers stop delivering.
    stop: CancellationToken,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("settings", &self.live.load().1)
            .finish()
    }
}

impl Dispatcher {
    /// A dispatcher over the config store `store`, recording due notifications in the outbox
    /// of the task store `tasks`, checking URLs with `guard`. Call [`Dispatcher::start`] before
    /// the first event.
    pub fn new(
        store: Arc<dyn PushConfigStore>,
        tasks: Arc<dyn TaskStore>,
        guard: NetGuard,
        settings: PushSettings,
    ) -> Result<Arc<Self>, A2aError> {
        let client = guard
            .client(settings.attempt_timeout)
            .map_err(|e| A2aError::internal(format!("push client: {e}")))?;
        Ok(Arc::new(Dispatcher {
            store,
            tasks,
            guard,
            live: arc_swap::ArcSwap::from_pointee((client, settings)),
            pending: Mutex::new(HashMap::new()),
            workers: Mutex::new(HashMap::new()),
            with_configs: Mutex::new(std::collections::HashSet::new()),
            queued: AtomicUsize::new(0),
            unrecorded: AtomicUsize::new(0),
            idle: tokio::sync::Notify::new(),
            stop: CancellationToken::new(),
        }))
    }

    /// Takes new delivery knobs for the attempts made from now on (a configuration reload).
    pub fn set_settings(&self, settings: PushSettings) -> Result<(), A2aError> {
        let client = self
            .guard
            .client(settings.attempt_timeout)
            .map_err(|e| A2aError::internal(format!("push client: {e}")))?;
        self.live.store(Arc::new((client, settings)));
        Ok(())
    }

    /// Load what an earlier run left (call inside a Tokio runtime, before the first event):
    /// the tasks with configs, and the notifications recorded as due but not delivered, which
    /// are queued again in recording order (those of a config deleted since are dropped).
    /// Returns how many were queued again.
    pub async fn start(self: &Arc<Self>) -> usize {
        self.load_index().await;
        let due = match self.tasks.due_notices().await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "push: reading the outbox failed");
                return 0;
            }
        };
        self.resend(due).await
    }

    /// Marks every task that has configs in the store.
    async fn load_index(&self) {
        match self.store.task_ids().await {
            Ok(ids) => {
                for id in ids {
                    self.mark(&id);
                }
            }
            Err(e) => tracing::warn!(error = %e, "push: loading config index failed"),
        }
    }

    /// Queues `due` again, in order (a notice whose config was deleted since is dropped); how
    /// many were queued.
    async fn resend(self: &Arc<Self>, due: Vec<crate::store::DueNotice>) -> usize {
        let mut configs: HashMap<String, Vec<PushRecord>> = HashMap::new();
        let mut resent = 0;
        for d in due {
            let n = d.notice;
            if !configs.contains_key(&n.task_id) {
                let recs = self.store.list(&n.task_id).await.unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "push: listing configs failed");
                    Vec::new()
                });
                configs.insert(n.task_id.clone(), recs);
            }
            let rec = configs
                .get(&n.task_id)
                .and_then(|v| v.iter().find(|r| r.id() == n.config_id));
            match rec {
                Some(rec) => {
                    self.enqueue(
                        rec.clone(),
                        Delivery {
                            body: n.body,
                            content_type: n.content_type,
                            seq: Some(d.seq),
                        },
                    );
                    resent += 1;
                }
                None => self.done(Some(d.seq)).await,
            }
        }
        if resent > 0 {
            tracing::info!(
                notifications = resent,
                "push: resending notifications a previous run did not deliver"
            );
        }
        resent
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

    /// After the send: drop a staged config that no task picked up (the send failed). One
    /// picked up is already stored ([`EventSink::on_task_started`] stores it).
    pub(crate) fn settle(&self, message_id: &str) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(message_id);
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

    /// The body of `ev` of `task` for the config `rec` and its media type (None: the task has
    /// no form in the config's version).
    fn body(rec: &PushRecord, task: &Task, ev: &StreamResponse) -> Option<(Bytes, &'static str)> {
        let r = match rec.version {
            Version::V1 => serde_json::to_vec(ev).map(|b| (Bytes::from(b), APPLICATION_A2A_JSON)),
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
                serde_json::to_vec(&t).map(|b| (Bytes::from(b), "application/json"))
            }
        };
        r.ok()
    }

    /// A task that will send no more events (a config added later marks it again).
    fn unmark(&self, task_id: &str) {
        if let Ok(mut s) = self.with_configs.lock() {
            s.remove(task_id);
        }
    }
}

#[async_trait]
impl EventSink for Arc<Dispatcher> {
    async fn on_task_started(&self, task: &Task, owner: &str) {
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
            self.mark(rec.task_id());
            // Stored before the first event, which finds it.
            if let Err(e) = self.store.put(rec).await {
                tracing::warn!(error = %e, "push: storing inline config failed");
            }
        }
    }

    async fn notices(&self, task: &Task, event: &StreamResponse) -> Vec<Outgoing> {
        if !self.has_configs(&task.id) {
            return Vec::new();
        }
        let recs = match self.store.list(&task.id).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "push: listing configs failed");
                return Vec::new();
            }
        };
        if task.status.state.is_terminal() {
            self.unmark(&task.id);
        }
        recs.into_iter()
            .filter_map(|rec| {
                let (body, content_type) = Dispatcher::body(&rec, task, event)?;
                Some(Outgoing {
                    notice: Notice {
                        task_id: task.id.clone(),
                        config_id: rec.id().to_string(),
                        content_type: content_type.to_string(),
                        body,
                    },
                    rec,
                })
            })
            .collect()
    }

    async fn refresh(&self, task_id: &str) {
        if matches!(self.store.list(task_id).await, Ok(r) if !r.is_empty()) {
            self.mark(task_id);
        }
    }

    async fn refresh_all(&self) {
        self.load_index().await;
    }

    async fn take_over(&self) -> usize {
        match self.tasks.orphaned_notices().await {
            Ok(due) if !due.is_empty() => self.resend(due).await,
            Ok(_) => 0,
            Err(e) => {
                tracing::warn!(error = %e, "push: taking over a gone replica's notices failed");
                0
            }
        }
    }

    fn dispatch(&self, out: Vec<Outgoing>, seqs: Vec<i64>) {
        for (i, o) in out.into_iter().enumerate() {
            let d = Delivery {
                body: o.notice.body,
                content_type: o.notice.content_type,
                seq: seqs.get(i).copied(),
            };
            self.enqueue(o.rec, d);
        }
    }
}
