//! The gateway's own replay buffer, for peers whose events carry no SSE id (the official SDK
//! servers): such a relayed stream is read into a per-stream buffer by a task of its own (so
//! that it keeps reading when the caller's connection breaks), the caller reads from the
//! buffer, and each event gets the gateway id `g<stream>.<n>`. A caller that comes back to
//! this gateway process with that id gets the events after it, then the live rest.
//!
//! Bounds: [`MAX_EVENTS`] events per stream (older ones dropped; a reader that falls behind
//! them gets the gap marker), [`MAX_STREAMS`] streams, a stream forgotten [`GRACE`] after it
//! ended or [`MAX_AGE`] after it began. Keyed by workspace, agent, task, caller version and
//! stream number: no other workspace can read it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::store::backend::{PgStreams, StreamKey, StreamRow};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// Events kept per stream.
pub const MAX_EVENTS: usize = 512;
/// Streams kept per gateway process.
pub const MAX_STREAMS: usize = 4096;
/// How long a stream's events are kept after it ended.
pub const GRACE: Duration = Duration::from_secs(60);
/// How long a stream's events are kept at most.
pub const MAX_AGE: Duration = Duration::from_secs(3600);

type Key = (String, String, String, Version, u64);
type Item = Result<Value, Refusal>;

/// The replay buffers of one gateway process; with `shared`, each buffered stream is also
/// written to PostgreSQL, and a resume this process does not keep is read from there
/// (`super::replay_shared`).
#[derive(Default)]
pub struct Buffers {
    streams: Mutex<HashMap<Key, Arc<Buf>>>,
    next: AtomicU64,
    shared: Option<PgStreams>,
}

struct Buf {
    state: Mutex<State>,
    /// Bumped on every change (a new event, the end).
    changed: tokio::sync::watch::Sender<u64>,
    began: Instant,
}

#[derive(Default)]
struct State {
    /// Numbered events, oldest first (numbers from 1).
    events: VecDeque<(u64, Value)>,
    last: u64,
    /// The stream ended (with an error event, when it did).
    ended: Option<(Instant, Option<Refusal>)>,
}

/// Where a read of a buffer starts, and what it found.
enum Read {
    Events(Vec<(u64, Value)>, bool),
    Gap(u64),
    Done(Option<Refusal>),
}

impl Buf {
    fn read(&self, after: u64) -> Read {
        let Ok(s) = self.state.lock() else {
            return Read::Done(Some(Refusal::internal("replay buffer lock")));
        };
        if let Some((first, _)) = s.events.front()
            && *first > after + 1
        {
            return Read::Gap(*first - 1);
        }
        let evs: Vec<_> = s
            .events
            .iter()
            .filter(|(n, _)| *n > after)
            .cloned()
            .collect();
        if evs.is_empty()
            && let Some((_, err)) = &s.ended
        {
            return Read::Done(err.clone());
        }
        Read::Events(evs, s.ended.is_some())
    }

    /// Adds an event; its number.
    fn push(&self, ev: Value) -> u64 {
        let mut n = 0;
        if let Ok(mut s) = self.state.lock() {
            s.last += 1;
            n = s.last;
            s.events.push_back((n, ev));
            while s.events.len() > MAX_EVENTS {
                s.events.pop_front();
            }
        }
        self.changed.send_modify(|c| *c += 1);
        n
    }

    fn end(&self, err: Option<Refusal>) {
        if let Ok(mut s) = self.state.lock() {
            s.ended = Some((Instant::now(), err));
        }
        self.changed.send_modify(|c| *c += 1);
    }

    fn expired(&self, now: Instant) -> bool {
        let ended = self
            .state
            .lock()
            .map(|s| s.ended.as_ref().is_some_and(|(t, _)| now - *t > GRACE))
            .unwrap_or(true);
        ended || now - self.began > MAX_AGE
    }
}

/// The stream reading `buf` after event `after`, each event tagged with its gateway id; a
/// reader behind the kept events gets the gap marker and goes on from the oldest kept.
fn reader(buf: Arc<Buf>, stream: u64, mut after: u64) -> BoxStream<'static, Item> {
    let mut changed = buf.changed.subscribe();
    Box::pin(async_stream::stream! {
        loop {
            changed.mark_unchanged();
            match buf.read(after) {
                Read::Done(err) => {
                    if let Some(r) = err { yield Err(r) }
                    break;
                }
                Read::Gap(to) => {
                    let mut marker = serde_json::Map::new();
                    crate::tasks::resume::mark_gap(&mut marker, &format!("g{stream}.{after}"));
                    yield Ok(Value::Object(marker));
                    after = to;
                }
                Read::Events(evs, ended) => {
                    let none = evs.is_empty();
                    for (n, mut ev) in evs {
                        crate::tasks::resume::tag_id(&mut ev, format!("g{stream}.{n}"));
                        after = n;
                        yield Ok(ev);
                    }
                    if none && !ended && changed.changed().await.is_err() {
                        break;
                    }
                }
            }
        }
    })
}

/// A caller-version event's task id (1.0 or 0.3 form); a message has none.
fn task_of(ev: &Value) -> Option<String> {
    let t = ev
        .get("task")
        .map(|t| &t["id"])
        .or_else(|| ev.get("statusUpdate").map(|u| &u["taskId"]))
        .or_else(|| ev.get("artifactUpdate").map(|u| &u["taskId"]))
        .or_else(|| (ev["kind"] == "task").then(|| &ev["id"]))
        .or_else(|| ev.get("taskId"))?;
    t.as_str().map(str::to_owned)
}

impl Buffers {
    /// Buffers that also keep their streams in PostgreSQL, for resumes on any replica.
    pub fn shared(streams: PgStreams) -> Buffers {
        Buffers {
            shared: Some(streams),
            ..Buffers::default()
        }
    }

    /// The shared stream events (`None`: this process's memory only).
    pub(crate) fn shared_store(&self) -> Option<&PgStreams> {
        self.shared.as_ref()
    }

    /// Whether the stream resume events' listener hears notifications now (`None`: the
    /// buffers are this process's memory only).
    pub(crate) fn listening(&self) -> Option<bool> {
        self.shared.as_ref().map(PgStreams::listening)
    }

    /// The relayed stream `events` of `workspace`/`agent` toward a `version` caller: through a
    /// buffer when the peer numbers nothing (its first event has no id) and the stream has a
    /// task; unchanged otherwise.
    pub(crate) fn relay(
        self: Arc<Self>,
        workspace: String,
        agent: String,
        version: Version,
        mut events: BoxStream<'static, Item>,
    ) -> BoxStream<'static, Item> {
        Box::pin(async_stream::stream! {
            let first = match events.next().await {
                Some(f) => f,
                None => return,
            };
            let task = match &first {
                Ok(ev) if !crate::tasks::resume::has_id(ev) => task_of(ev),
                _ => None,
            };
            let Some(task) = task else {
                yield first;
                while let Some(ev) = events.next().await { yield ev }
                return;
            };
            let stream = match &self.shared {
                Some(_) => crate::tasks::replay_shared::stream_number(),
                None => self.next.fetch_add(1, Ordering::Relaxed) + 1,
            };
            let kept = self.shared.clone().map(|pg| {
                let key = StreamKey {
                    stream,
                    workspace: workspace.clone(),
                    agent: agent.clone(),
                    task: task.clone(),
                    version: version.as_str().to_owned(),
                };
                (pg, key)
            });
            let buf = Arc::new(Buf {
                state: Mutex::new(State::default()),
                changed: tokio::sync::watch::channel(0).0,
                began: Instant::now(),
            });
            self.insert((workspace, agent, task, version, stream), buf.clone());
            let pump = buf.clone();
            let until = tokio::time::Instant::from_std(buf.began + MAX_AGE);
            tokio::spawn(async move {
                let mut next = Some(first);
                let mut last = 0;
                while let Some(item) = next {
                    match item {
                        Ok(ev) => {
                            let row = kept.as_ref().map(|_| ev.to_string());
                            last = pump.push(ev);
                            if let (Some((pg, key)), Some(body)) = (&kept, row) {
                                pg.enqueue(key, StreamRow { seq: last, end: false, body });
                            }
                        }
                        Err(r) => {
                            if let Some((pg, key)) = &kept {
                                pg.enqueue(key, crate::tasks::replay_shared::end_row(last, Some(&r)));
                            }
                            pump.end(Some(r));
                            return;
                        }
                    }
                    // Nobody reads and the buffer was evicted: stop reading the peer.
                    if Arc::strong_count(&pump) == 1 {
                        break;
                    }
                    next = tokio::time::timeout_at(until, events.next()).await.ok().flatten();
                }
                if let Some((pg, key)) = &kept {
                    pg.enqueue(key, crate::tasks::replay_shared::end_row(last, None));
                }
                pump.end(None);
            });
            let mut out = reader(buf, stream, 0);
            while let Some(ev) = out.next().await { yield ev }
        })
    }

    /// The events after `after` of stream `stream` (`key`: workspace, agent, task, caller
    /// version) and its live rest, when this process still keeps them.
    pub(crate) fn resume(
        &self,
        key: (String, String, String, Version),
        stream: u64,
        after: u64,
    ) -> Option<BoxStream<'static, Item>> {
        let (w, a, t, v) = key;
        let buf = self
            .streams
            .lock()
            .ok()?
            .get(&(w, a, t, v, stream))
            .cloned()?;
        let ok = buf.state.lock().ok().is_some_and(|s| {
            after <= s.last && s.events.front().is_none_or(|(f, _)| *f <= after + 1)
        });
        ok.then(|| reader(buf, stream, after))
    }

    fn insert(&self, key: Key, buf: Arc<Buf>) {
        let Ok(mut m) = self.streams.lock() else {
            return;
        };
        let now = Instant::now();
        m.retain(|_, b| !b.expired(now));
        while m.len() >= MAX_STREAMS {
            let Some(oldest) = m
                .iter()
                .min_by_key(|(_, b)| b.began)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            m.remove(&oldest);
        }
        m.insert(key, buf);
    }
}

/// A resuming SubscribeToTask of `owner` served from this gateway's buffer (see
/// this module), when the id is one of its own and the buffer still holds it, or else from
/// PostgreSQL when the streams are shared and the table keeps it; `None`: the peer is asked
/// (and a resume it cannot serve gets the gap marker).
pub(crate) async fn local(
    buffers: &Buffers,
    op: crate::protocol::ops::Operation,
    owner: &crate::tasks::ownership::Owner,
    version: crate::protocol::errors::Version,
    params: &Value,
) -> Option<futures::stream::BoxStream<'static, Result<Value, Refusal>>> {
    if op != crate::protocol::ops::Operation::SubscribeToTask {
        return None;
    }
    let crate::tasks::resume::Resume::Local { stream, after } =
        crate::tasks::resume::resuming()?.at
    else {
        return None;
    };
    let task = params.get("id")?.as_str()?.to_owned();
    let key = (
        owner.workspace_id.clone(),
        owner.agent_id.clone(),
        task,
        version,
    );
    if let Some(s) = buffers.resume(key.clone(), stream, after) {
        return Some(s);
    }
    let pg = buffers.shared.clone()?;
    let (workspace, agent, task, version) = key;
    let key = StreamKey {
        stream,
        workspace,
        agent,
        task,
        version: version.as_str().to_owned(),
    };
    crate::tasks::replay_shared::resume(pg, key, after, MAX_AGE).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn buffers_with(n: usize) -> (Buffers, Arc<Buf>, (String, String, String, Version)) {
        let b = Buffers::default();
        let buf = Arc::new(Buf {
            state: Mutex::new(State::default()),
            changed: tokio::sync::watch::channel(0).0,
            began: Instant::now(),
        });
        let key = ("ws".to_owned(), "a".to_owned(), "t".to_owned(), Version::V1);
        b.insert(
            (key.0.clone(), key.1.clone(), key.2.clone(), key.3, 1),
            buf.clone(),
        );
        for i in 0..n {
            buf.push(json!({ "n": i }));
        }
        buf.end(None);
        (b, buf, key)
    }

    #[test]
    fn the_tables_bounds_are_the_buffers() {
        let b = crate::store::backend::StreamBounds::default();
        assert_eq!(b.max_events, MAX_EVENTS as u64);
        assert_eq!(b.grace, GRACE);
        assert_eq!(b.max_age, MAX_AGE);
    }

    #[tokio::test]
    async fn a_resume_is_served_while_kept_and_never_across_keys() {
        let (b, _, key) = buffers_with(3);
        let evs: Vec<_> = b.resume(key.clone(), 1, 1).unwrap().collect().await;
        let ns: Vec<_> = evs
            .iter()
            .map(|e| e.as_ref().unwrap()["n"].clone())
            .collect();
        assert_eq!(ns, vec![json!(1), json!(2)]);
        assert!(b.resume(key.clone(), 2, 1).is_none(), "another stream");
        let mut other = key.clone();
        other.0 = "ws2".into();
        assert!(b.resume(other, 1, 1).is_none(), "another workspace");
        assert!(b.resume(key, 1, 4).is_none(), "beyond the last event");
    }

    #[tokio::test]
    async fn events_past_the_bound_are_dropped_and_a_late_reader_gets_the_gap_marker() {
        let (b, buf, key) = buffers_with(MAX_EVENTS + 5);
        assert!(
            b.resume(key, 1, 2).is_none(),
            "evicted events are not served"
        );
        let evs: Vec<_> = reader(buf, 1, 0).collect().await;
        let (first, id, gap) = crate::tasks::resume::untag(evs[0].clone().unwrap());
        assert_eq!((first, id, gap.as_deref()), (None, None, Some("g1.0")));
        assert_eq!(evs.len(), MAX_EVENTS + 1);
        assert_eq!(evs[1].as_ref().unwrap()["n"], json!(5));
    }
}
