//! Server-sent events: one subscription per connection, heartbeats, slow clients ended, every
//! event numbered (`id:`) so that a client can resume with `Last-Event-ID`.

use crate::edge::sse;
use crate::model::StreamResponse;
use crate::tasks::{Start, Subscription, ends_stream};
use axum::response::Response;
use futures_util::{Stream, StreamExt};
use std::time::Duration;

/// An SSE response: the task snapshot first (or, on a resume, the events missed; see
/// [`Start`]), then every event until the turn ends. `map` gives each event's `data` lines as
/// JSON text, written straight from the typed event (no JSON tree in between: that was about
/// a third of a stream's instructions); each line carries the event's number as its SSE `id`.
///
/// Each connection reads from its own queue, bounded in events and bytes (`sse_queue_capacity`,
/// `sse_queue_max_bytes`); a client too slow to keep up gets the task snapshot and its stream ends
/// (see [`crate::tasks::fanout`]) instead of growing memory.
pub(crate) fn sse_response<F>(sub: Subscription, heartbeat: Duration, mut map: F) -> Response
where
    F: FnMut(StreamResponse, bool) -> Vec<String> + Send + 'static,
{
    let stream = items(sub).flat_map(move |item| {
        futures_util::stream::iter(match item {
            Item::Gap(last_event_id) => vec![sse::comment(format!(
                "a2a-replay-gap last-event-id={last_event_id}"
            ))],
            Item::Event(n, ev, last) => map(*ev, last)
                .into_iter()
                .map(|v| sse::numbered(n, v))
                .collect(),
        })
    });
    sse::response(stream, Some(heartbeat))
}

/// One item of a subscription's stream.
pub(crate) enum Item {
    /// A resume the replay log could not serve without a gap (the `Last-Event-ID` sent).
    Gap(u64),
    /// An event with its number; `true` on the last one.
    Event(u64, Box<StreamResponse>, bool),
}

/// The items of a subscription, whatever the binding: the task snapshot first (or, on a
/// resume, the events missed; see [`Start`]), then every event until the turn ends.
pub(crate) fn items(sub: Subscription) -> impl Stream<Item = Item> + Send + 'static {
    let Subscription {
        task,
        seq,
        start,
        events,
    } = sub;
    let (gap, replay) = match start {
        Start::Resume(evs) => (None, evs),
        Start::Snapshot => (None, vec![(seq, StreamResponse::Task(task))]),
        Start::Gap { last_event_id } => (
            Some(Item::Gap(last_event_id)),
            vec![(seq, StreamResponse::Task(task))],
        ),
    };
    let mut first: Vec<Item> = gap.into_iter().collect();
    let mut done = false;
    for (n, ev) in replay {
        done = ends_stream(&ev);
        first.push(Item::Event(n, Box::new(ev), done));
        if done {
            break;
        }
    }
    // The live events until the one that ends the turn; the queue is not read after it.
    let live = futures_util::stream::unfold((events, done), |(mut events, done)| async move {
        if done {
            return None;
        }
        let (n, ev) = events.next().await?;
        let end = ends_stream(&ev);
        Some((Item::Event(n, Box::new(ev), end), (events, end)))
    });
    futures_util::stream::iter(first).chain(live)
}
