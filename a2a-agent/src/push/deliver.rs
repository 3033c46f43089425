//! Delivery: one worker per config with notifications queued (strictly in order; it leaves
//! when its queue is empty), each notification POSTed with retries; its outbox record removed
//! once the webhook answered; and the drain a shutdown waits for.

use super::store::PushRecord;
use super::{Delivery, Dispatcher, WorkerKey};
use crate::metrics::names;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How one notification ended.
enum Outcome {
    /// The webhook answered 2xx.
    Delivered,
    /// It answered with another final status (or its URL is refused now): not retried.
    Refused,
    /// 410 Gone: the config is deregistered.
    Gone,
    /// 5xx or I/O errors until the retries ran out: kept in the outbox for the next start.
    Failed,
}

impl Outcome {
    /// The `result` label of `a2a_agent_push_deliveries_total`.
    fn label(&self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Refused => "refused",
            Outcome::Gone => "gone",
            Outcome::Failed => "failed",
        }
    }
}

/// What [`Dispatcher::drain`] left undelivered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Undelivered {
    /// Notifications still queued or in flight when the drain ended.
    pub pending: usize,
    /// Of them, those not recorded in an outbox (lost with the process).
    pub unrecorded: usize,
}

impl Dispatcher {
    fn key(rec: &PushRecord) -> WorkerKey {
        (rec.task_id().to_string(), rec.id().to_string())
    }

    /// Queue `d` for the worker of `rec`'s config (started if it has none).
    pub(super) fn enqueue(self: &Arc<Self>, rec: PushRecord, d: Delivery) {
        let Ok(mut w) = self.workers.lock() else {
            return;
        };
        self.queued.fetch_add(1, Ordering::SeqCst);
        if d.seq.is_none() {
            self.unrecorded.fetch_add(1, Ordering::SeqCst);
        }
        let key = Self::key(&rec);
        let tx = w.entry(key.clone()).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(worker(Arc::downgrade(self), rec, key, rx));
            tx
        });
        // Sent under the map's lock: a worker leaves only under it, with its queue empty.
        let _ = tx.send(d);
    }

    /// Notice `seq` needs no more delivery: remove it from the outbox.
    pub(super) async fn done(&self, seq: Option<i64>) {
        if let Some(seq) = seq
            && let Err(e) = self.tasks.notice_done(seq).await
        {
            tracing::warn!(error = %e, "push: removing a delivered notification from the outbox failed");
        }
    }

    /// Notifications queued or in flight (the `a2a_agent_push_queue_depth` gauge).
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// One delivery finished (whatever its outcome).
    fn finished(&self, d: &Delivery) {
        if d.seq.is_none() {
            self.unrecorded.fetch_sub(1, Ordering::SeqCst);
        }
        if self.queued.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }

    /// Wait until every queued notification has ended (delivered, refused, or given up after
    /// its retries) or until `deadline`, then stop delivering. What was left stays recorded in
    /// the store's outbox (when it keeps one) for the next start.
    pub async fn drain(&self, deadline: Instant) -> Undelivered {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.queued.load(Ordering::SeqCst) == 0 {
                break;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                break;
            }
        }
        self.stop.cancel();
        Undelivered {
            pending: self.queued.load(Ordering::SeqCst),
            unrecorded: self.unrecorded.load(Ordering::SeqCst),
        }
    }

    /// One notification with retries.
    async fn deliver(&self, rec: &PushRecord, d: &Delivery) -> Outcome {
        let url = rec.config.url.as_str();
        let mut attempt: u32 = 0;
        loop {
            if let Err(e) = self.guard.check_url(url) {
                tracing::warn!(%url, error = %e, "push: webhook URL refused at delivery");
                return Outcome::Refused;
            }
            let live = self.live.load_full();
            let (client, settings) = &*live;
            let mut req = client
                .post(url)
                .header(http::header::CONTENT_TYPE, d.content_type.as_str())
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
            match req.send().await {
                Ok(r) if r.status() == reqwest::StatusCode::GONE => return Outcome::Gone,
                Ok(r) if r.status().is_success() => return Outcome::Delivered,
                Ok(r) if !r.status().is_server_error() => {
                    tracing::debug!(%url, status = %r.status(), "push: webhook refused");
                    return Outcome::Refused;
                }
                Ok(r) => tracing::debug!(%url, status = %r.status(), "push: webhook failed"),
                Err(e) => tracing::debug!(%url, error = %e, "push: delivery failed"),
            }
            metrics::counter!(names::PUSH_FAILURES).increment(1);
            if attempt >= settings.retry_attempts {
                return Outcome::Failed;
            }
            let wait = settings
                .retry_backoff
                .saturating_mul(2u32.saturating_pow(attempt));
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

/// Deliver the queue of one config in order; leave when it is empty (or on shutdown's stop).
async fn worker(
    d: Weak<Dispatcher>,
    rec: PushRecord,
    key: WorkerKey,
    mut rx: mpsc::UnboundedReceiver<Delivery>,
) {
    let mut gone = false;
    loop {
        let Some(disp) = d.upgrade() else { return };
        let next = match disp.workers.lock() {
            Ok(mut w) => match rx.try_recv() {
                Ok(del) => Some(del),
                Err(_) => {
                    w.remove(&key);
                    None
                }
            },
            Err(_) => None,
        };
        let Some(del) = next else { return };
        if gone {
            disp.done(del.seq).await;
            disp.finished(&del);
            continue;
        }
        let outcome = tokio::select! {
            biased;
            // Stopped by the drain: what is left stays recorded.
            _ = disp.stop.cancelled() => return,
            o = disp.deliver(&rec, &del) => o,
        };
        metrics::counter!(names::PUSH_DELIVERIES, "result" => outcome.label()).increment(1);
        match outcome {
            Outcome::Delivered | Outcome::Refused => disp.done(del.seq).await,
            Outcome::Gone => {
                gone = true;
                tracing::info!(url = %rec.config.url, "push: webhook answered 410 Gone; deregistered");
                if let Err(e) = disp.store.delete(rec.task_id(), rec.id()).await {
                    tracing::warn!(error = %e, "push: deregistering failed");
                }
                disp.done(del.seq).await;
            }
            Outcome::Failed if del.seq.is_some() => tracing::warn!(
                url = %rec.config.url,
                "push: notification undelivered after its retries; kept in the outbox for the next start"
            ),
            Outcome::Failed => tracing::warn!(
                url = %rec.config.url,
                "push: notification undelivered after its retries"
            ),
        }
        disp.finished(&del);
    }
}
