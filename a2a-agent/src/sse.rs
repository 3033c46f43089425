//! Server-sent events: one subscription per connection, heartbeats, slow clients ended.

use crate::edge::sse;
use crate::model::StreamResponse;
use crate::tasks::{Subscription, ends_stream};
use axum::response::Response;
use std::time::Duration;

/// An SSE response: the task snapshot first, then every event until the turn ends. `map` gives
/// each event's `data` lines as JSON values or as JSON text (exact JSON-RPC ids).
///
/// Each connection reads from its own queue, bounded in events and bytes (`sse_queue_capacity`,
/// `sse_queue_max_bytes`); a client too slow to keep up gets the task snapshot and its stream ends
/// (see [`crate::fanout`]) instead of growing memory.
pub(crate) fn sse_response<F, T>(sub: Subscription, heartbeat: Duration, mut map: F) -> Response
where
    F: FnMut(StreamResponse, bool) -> Vec<T> + Send + 'static,
    T: std::fmt::Display + Send + 'static,
{
    let Subscription { task, mut events } = sub;
    let first = StreamResponse::Task(task);
    let stream = async_stream::stream! {
        let done = ends_stream(&first);
        for v in map(first, done) {
            yield sse::data(v.to_string());
        }
        if !done {
            while let Some(ev) = events.recv().await {
                let end = ends_stream(&ev);
                for v in map(ev, end) {
                    yield sse::data(v.to_string());
                }
                if end {
                    break;
                }
            }
        }
    };
    sse::response(stream, Some(heartbeat))
}
