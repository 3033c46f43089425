//! Event fan-out from a live task to its subscribers, each queue bounded in events and in bytes.
//!
//! Every subscriber (a stream or a resubscription) has its own queue. Publishing never waits: an
//! event goes into each subscriber's queue. When a subscriber reads more slowly than the task
//! produces and its queue would pass a bound, the [`OverflowPolicy`] decides what it loses: the
//! new event (`drop-newest`, the default, as the Camel guide says), the oldest queued ones
//! (`drop-oldest`), everything queued in favour of one `Task` snapshot (`snapshot`), or the
//! stream itself (`disconnect`: what is queued is delivered, then the stream ends so that the
//! client resubscribes). The final event of a turn is always queued (an overflowing final event
//! ends a `disconnect` stream as its last event). Memory per subscriber is therefore bounded by
//! the byte limit plus one event (or one task). A single event larger than the byte limit still
//! reaches a subscriber whose queue is empty.

pub use crate::config::OverflowPolicy;
use crate::model::{StreamResponse, Task};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// Times a subscriber's queue collapsed into a snapshot (process-wide; also counted in the
/// `a2a_agent_stream_queue_overflows_total` metric).
pub static OVERFLOWS: AtomicU64 = AtomicU64::new(0);

/// Per-subscriber queue bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Events queued at most (at least 1).
    pub max_events: usize,
    /// Bytes queued at most (JSON size of the events), 0 = unlimited.
    pub max_bytes: usize,
    /// What a full queue loses.
    pub policy: OverflowPolicy,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            max_events: 1000,
            max_bytes: 4 * 1024 * 1024,
            policy: OverflowPolicy::DropNewest,
        }
    }
}

#[derive(Default)]
struct Queue {
    /// (event number, event, JSON size).
    items: VecDeque<(u64, StreamResponse, usize)>,
    bytes: usize,
    /// The publisher is gone: once `items` is empty the subscription ends.
    closed: bool,
    /// The subscriber is gone: stop queueing for it.
    dropped: bool,
}

impl Queue {
    fn push(&mut self, seq: u64, ev: StreamResponse, size: usize) {
        self.items.push_back((seq, ev, size));
        self.bytes += size;
    }
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Notify,
}

/// The subscribers of one live task.
pub(crate) struct Fanout {
    subs: Vec<Arc<Shared>>,
    limits: QueueLimits,
    drops: Arc<DropLog>,
}

impl Fanout {
    /// No subscribers yet; their queues bounded by `limits`, overflows logged to `drops`.
    pub(crate) fn new(limits: QueueLimits, drops: Arc<DropLog>) -> Self {
        Fanout {
            subs: Vec::new(),
            limits,
            drops,
        }
    }

    /// Whether a subscriber is left (those that went away are forgotten).
    pub(crate) fn has_subscribers(&mut self) -> bool {
        self.subs
            .retain(|s| s.queue.lock().map(|q| !q.dropped).unwrap_or(false));
        !self.subs.is_empty()
    }

    /// A new subscriber; it sees every event published from now on.
    pub(crate) fn subscribe(&mut self) -> Events {
        self.subscribe_between(Vec::new(), 0)
    }

    /// A new subscriber that first gets `before` (events already published, numbered), then
    /// every event published from now on numbered above `skip` (its snapshot includes those
    /// up to `skip`).
    pub(crate) fn subscribe_between(
        &mut self,
        before: Vec<(u64, StreamResponse)>,
        skip: u64,
    ) -> Events {
        let shared = Arc::new(Shared::default());
        if let Ok(mut q) = shared.queue.lock() {
            for (n, ev) in before {
                let size = crate::bounds::json_len(&ev);
                q.push(n, ev, size);
            }
        }
        self.subs.push(shared.clone());
        Events { shared, skip }
    }

    /// Queue `ev` (event number `seq` of the task) for every subscriber; `task` is the task
    /// after the event, which replaces the queue of a subscriber that would pass a bound.
    pub(crate) fn publish(&mut self, seq: u64, ev: &StreamResponse, task: &Task) {
        if self.subs.is_empty() {
            return;
        }
        let size = crate::bounds::json_len(ev);
        let QueueLimits {
            max_events,
            max_bytes,
            policy,
        } = self.limits;
        let last = ends_stream(ev);
        self.subs.retain(|s| {
            let Ok(mut q) = s.queue.lock() else {
                return false;
            };
            if q.dropped {
                return false;
            }
            let over = |q: &Queue| {
                !q.items.is_empty()
                    && (q.items.len() + 1 > max_events.max(1)
                        || (max_bytes > 0 && q.bytes.saturating_add(size) > max_bytes))
            };
            let mut keep = true;
            if over(&q) {
                OVERFLOWS.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("a2a_agent_stream_queue_overflows_total").increment(1);
                self.drops.dropped(&task.id, q.items.len(), q.bytes, policy);
                match policy {
                    // The final event is queued anyway (one event over the bound).
                    OverflowPolicy::DropNewest if last => q.push(seq, ev.clone(), size),
                    OverflowPolicy::DropNewest => {}
                    OverflowPolicy::DropOldest => {
                        while over(&q) {
                            if let Some((_, _, n)) = q.items.pop_front() {
                                q.bytes = q.bytes.saturating_sub(n);
                            }
                        }
                        q.push(seq, ev.clone(), size);
                    }
                    OverflowPolicy::Snapshot => {
                        let snap = StreamResponse::Task(task.clone());
                        let n = crate::bounds::json_len(&snap);
                        q.items.clear();
                        q.items.push_back((seq, snap, n));
                        q.bytes = n;
                        if last {
                            q.push(seq, ev.clone(), size);
                        }
                    }
                    OverflowPolicy::Disconnect => {
                        if last {
                            q.push(seq, ev.clone(), size);
                        }
                        q.closed = true;
                        keep = false;
                    }
                }
            } else {
                q.push(seq, ev.clone(), size);
            }
            drop(q);
            s.ready.notify_one();
            keep
        });
    }
}

/// The drop warnings of one server's streams (shared by every task's [`Fanout`]): at most one
/// per 10 s.
pub(crate) struct DropLog {
    start: std::time::Instant,
    /// When the last warning was logged (ms since `start`, plus 1; 0 = never).
    last_ms: AtomicU64,
    /// Overflows since the last warning that were not logged at warn.
    unlogged: AtomicU64,
}

impl Default for DropLog {
    fn default() -> Self {
        DropLog {
            start: std::time::Instant::now(),
            last_ms: AtomicU64::new(0),
            unlogged: AtomicU64::new(0),
        }
    }
}

impl DropLog {
    /// At most one warning per this many milliseconds.
    const EVERY_MS: u64 = 10_000;

    /// A slow subscriber's queue overflowed and `policy` dropped events (the Camel guide: "new
    /// events are dropped with a warning log"): logged at warn, at most once per 10 s with
    /// the number of overflows not logged since the previous warning; at debug otherwise.
    fn dropped(
        &self,
        task_id: &str,
        queued_events: usize,
        queued_bytes: usize,
        policy: OverflowPolicy,
    ) {
        let now = self.start.elapsed().as_millis() as u64 + 1;
        let last = self.last_ms.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= Self::EVERY_MS;
        if due
            && self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                task_id,
                queued_events,
                queued_bytes,
                ?policy,
                unlogged_overflows = self.unlogged.swap(0, Ordering::Relaxed),
                "slow stream subscriber: its queue is full, events dropped \
                 (sse_queue_capacity, sse_queue_max_bytes; at most one such warning per 10 s)"
            );
        } else {
            self.unlogged.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                task_id,
                queued_events,
                queued_bytes,
                ?policy,
                "slow subscriber: queue full"
            );
        }
    }
}

impl Fanout {
    /// Ends every subscription: each gets `task` (numbered `seq`, the task's last event) as its
    /// last event (after what is queued), then its stream ends. Used at shutdown for tasks that
    /// are not running (e.g. waiting for input).
    pub(crate) fn close_with(&mut self, seq: u64, task: &Task) {
        let snap = StreamResponse::Task(task.clone());
        let n = crate::bounds::json_len(&snap);
        for s in self.subs.drain(..) {
            if let Ok(mut q) = s.queue.lock() {
                if !q.dropped {
                    q.items.push_back((seq, snap.clone(), n));
                    q.bytes += n;
                }
                q.closed = true;
            }
            s.ready.notify_one();
        }
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        for s in &self.subs {
            if let Ok(mut q) = s.queue.lock() {
                q.closed = true;
            }
            s.ready.notify_one();
        }
    }
}

/// The receiving end of one subscription.
pub struct Events {
    shared: Arc<Shared>,
    /// Events numbered up to this are not handed out (the subscriber's snapshot has them);
    /// 0: none skipped.
    skip: u64,
}

impl Events {
    /// A subscription with nothing to read (a task that is not live in this process).
    pub(crate) fn ended() -> Self {
        let shared = Arc::new(Shared::default());
        if let Ok(mut q) = shared.queue.lock() {
            q.closed = true;
        }
        Events { shared, skip: 0 }
    }

    /// The next event; `None` once the task is no longer live in this process (its turn ended
    /// and every queued event was read) or the agent stops.
    pub async fn recv(&mut self) -> Option<StreamResponse> {
        self.next().await.map(|(_, ev)| ev)
    }

    /// [`Events::recv`] with the event's number (its SSE `id`; a task snapshot carries the
    /// number of the last event it includes).
    pub async fn next(&mut self) -> Option<(u64, StreamResponse)> {
        loop {
            let notified = self.shared.ready.notified();
            {
                let mut q = self.shared.queue.lock().ok()?;
                if let Some((seq, ev, size)) = q.items.pop_front() {
                    q.bytes -= size;
                    if self.skip > 0 && seq <= self.skip && !matches!(ev, StreamResponse::Task(_)) {
                        continue;
                    }
                    return Some((seq, ev));
                }
                if q.closed {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Bytes queued for this subscriber now.
    pub fn queued_bytes(&self) -> usize {
        self.shared.queue.lock().map(|q| q.bytes).unwrap_or(0)
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        if let Ok(mut q) = self.shared.queue.lock() {
            q.dropped = true;
            q.items.clear();
            q.bytes = 0;
        }
    }
}

/// Whether a stream should close after `ev` (see [`StreamResponse::closes_live_stream`]); a
/// `Message` of a task (an intermediate message, `Emitter::emit_message_event`) does not.
pub(crate) fn ends_stream(ev: &StreamResponse) -> bool {
    match ev {
        StreamResponse::Message(m) if m.task_id.is_some() => false,
        _ => ev.closes_live_stream(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{TaskState, TaskStatus, TaskStatusUpdateEvent};

    fn task(state: TaskState) -> Task {
        serde_json::from_value(serde_json::json!({
            "id": "t1", "contextId": "c1", "status": {"state": state}
        }))
        .unwrap_or_else(|e| panic!("task: {e}"))
    }

    fn status(text: &str) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus {
                state: TaskState::Working,
                message: Some(crate::model::agent_message(
                    vec![crate::model::Part::text(text)],
                    "t1",
                    "c1",
                )),
                timestamp: None,
            },
            metadata: None,
        })
    }

    #[tokio::test]
    async fn a_reader_gets_every_event_in_order() {
        let mut f = Fanout::new(QueueLimits::default(), Default::default());
        let mut a = f.subscribe();
        let t = task(TaskState::Working);
        for i in 0..10 {
            f.publish(0, &status(&format!("e{i}")), &t);
        }
        for _ in 0..10 {
            assert!(matches!(
                a.recv().await,
                Some(StreamResponse::StatusUpdate(_))
            ));
        }
        assert_eq!(a.queued_bytes(), 0);
    }

    #[tokio::test]
    async fn a_slow_reader_is_bounded_in_bytes_and_keeps_the_state() {
        let big = "x".repeat(100 * 1024);
        let mut f = Fanout::new(
            QueueLimits {
                max_events: 1000,
                max_bytes: 1024 * 1024,
                policy: OverflowPolicy::Snapshot,
            },
            Default::default(),
        );
        let mut slow = f.subscribe();
        let mut fast = f.subscribe();
        let t = task(TaskState::Working);
        let mut fast_seen = 0;
        for _ in 0..50 {
            f.publish(0, &status(&big), &t);
            assert!(
                slow.queued_bytes() <= 1024 * 1024,
                "{}",
                slow.queued_bytes()
            );
            if fast.recv().await.is_some() {
                fast_seen += 1;
            }
        }
        let done = task(TaskState::Completed);
        f.publish(0, &status("last"), &done);
        drop(f);
        assert_eq!(fast_seen, 50, "a reader that keeps up loses nothing");
        let mut got = Vec::new();
        while let Some(ev) = slow.recv().await {
            got.push(ev);
        }
        assert!(got.len() < 50, "{}", got.len());
        assert!(
            got.iter().any(|e| matches!(e, StreamResponse::Task(_))),
            "the skipped events are replaced by the snapshot"
        );
        match got.last() {
            Some(StreamResponse::StatusUpdate(e)) => {
                assert!(e.status.message.is_some(), "the last event still arrives")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_subscriber_between_gets_its_prefix_then_what_follows_its_skip() {
        let mut f = Fanout::new(QueueLimits::default(), Default::default());
        let t = task(TaskState::Working);
        let mut ahead = f.subscribe_between(Vec::new(), 3);
        let mut behind = f.subscribe_between(vec![(2, status("e2")), (3, status("e3"))], 0);
        for n in 3..=4 {
            f.publish(n, &status(&format!("e{n}")), &t);
        }
        drop(f);
        let mut got = Vec::new();
        while let Some((n, _)) = ahead.next().await {
            got.push(n);
        }
        assert_eq!(
            got,
            [4],
            "the events up to its snapshot's number are skipped"
        );
        let mut got = Vec::new();
        while let Some((n, _)) = behind.next().await {
            got.push(n);
        }
        assert_eq!(got, [2, 3, 3, 4], "its prefix, then every live event");
    }

    #[tokio::test]
    async fn one_event_over_the_byte_limit_still_reaches_an_empty_queue() {
        let mut f = Fanout::new(
            QueueLimits {
                max_events: 10,
                max_bytes: 10,
                policy: OverflowPolicy::DropNewest,
            },
            Default::default(),
        );
        let mut a = f.subscribe();
        f.publish(0, &status("more than ten bytes"), &task(TaskState::Working));
        assert!(matches!(
            a.recv().await,
            Some(StreamResponse::StatusUpdate(_))
        ));
    }

    #[tokio::test]
    async fn the_event_cap_applies_too_and_a_dropped_reader_is_forgotten() {
        let mut f = Fanout::new(
            QueueLimits {
                max_events: 3,
                max_bytes: 0,
                policy: OverflowPolicy::Snapshot,
            },
            Default::default(),
        );
        let mut a = f.subscribe();
        let b = f.subscribe();
        let t = task(TaskState::Working);
        for i in 0..5 {
            f.publish(0, &status(&format!("e{i}")), &t);
        }
        drop(b);
        f.publish(0, &status("e5"), &t);
        assert_eq!(f.subs.len(), 1);
        drop(f);
        let mut got = Vec::new();
        while let Some(ev) = a.recv().await {
            got.push(ev);
        }
        // e0 e1 e2, then e3 collapses the queue into the snapshot, e4 e5 follow it.
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(matches!(got[0], StreamResponse::Task(_)));
    }

    fn final_status() -> StreamResponse {
        let mut ev = status("end");
        if let StreamResponse::StatusUpdate(e) = &mut ev {
            e.status.state = TaskState::Completed;
        }
        ev
    }

    async fn run_policy(policy: OverflowPolicy) -> Vec<StreamResponse> {
        let mut f = Fanout::new(
            QueueLimits {
                max_events: 3,
                max_bytes: 0,
                policy,
            },
            Default::default(),
        );
        let mut a = f.subscribe();
        let t = task(TaskState::Working);
        for i in 0..6 {
            f.publish(0, &status(&format!("e{i}")), &t);
        }
        f.publish(0, &final_status(), &task(TaskState::Completed));
        drop(f);
        let mut got = Vec::new();
        while let Some(ev) = a.recv().await {
            got.push(ev);
        }
        got
    }

    fn texts(evs: &[StreamResponse]) -> Vec<String> {
        evs.iter()
            .map(|e| match e {
                StreamResponse::StatusUpdate(u) => u
                    .status
                    .message
                    .as_ref()
                    .and_then(|m| m.parts.first())
                    .and_then(|p| p.as_text())
                    .unwrap_or("")
                    .to_string(),
                StreamResponse::Task(_) => "task".into(),
                _ => "?".into(),
            })
            .collect()
    }

    #[tokio::test]
    async fn overflow_policies_drop_what_they_say_and_keep_the_final_event() {
        assert_eq!(
            texts(&run_policy(OverflowPolicy::DropNewest).await),
            ["e0", "e1", "e2", "end"]
        );
        assert_eq!(
            texts(&run_policy(OverflowPolicy::DropOldest).await),
            ["e4", "e5", "end"]
        );
        assert_eq!(
            texts(&run_policy(OverflowPolicy::Snapshot).await),
            ["task", "end"]
        );
        // Disconnect: what was queued, then the stream ends (the reader resubscribes).
        assert_eq!(
            texts(&run_policy(OverflowPolicy::Disconnect).await),
            ["e0", "e1", "e2"]
        );
        assert_eq!(
            "drop_oldest".parse::<OverflowPolicy>().unwrap(),
            OverflowPolicy::DropOldest
        );
        assert!("lose-all".parse::<OverflowPolicy>().is_err());
    }
}
