//! SSE framing at the edge, for the agent's streams and the gateway's relayed ones: each A2A
//! stream event is one event whose `data` is the event's JSON text; an error that ends an
//! HTTP+JSON stream of the gateway is an `error` event; heartbeats are empty comment lines. The
//! agent numbers its events (`id:`) so that a client can resume with `Last-Event-ID`.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};

/// One stream event carrying `json` (a JSON document as text).
pub fn data(json: impl AsRef<str>) -> Event {
    Event::default().data(json.as_ref())
}

/// One stream event carrying `json`, with the SSE `id` `seq` (the event's number within its
/// task, which a client sends back as `Last-Event-ID` to resume).
pub fn numbered(seq: u64, json: impl AsRef<str>) -> Event {
    Event::default().id(seq.to_string()).data(json.as_ref())
}

/// A comment line (`: text`), which clients ignore.
pub fn comment(text: impl AsRef<str>) -> Event {
    Event::default().comment(text)
}

/// The error event that ends a stream (`event: error`), carrying `json`.
pub fn error(json: impl AsRef<str>) -> Event {
    Event::default().event("error").data(json.as_ref())
}

/// A `text/event-stream` response of `events`, with a heartbeat comment every `heartbeat`
/// (`None`: no heartbeats) so that idle streams stay open through proxies.
pub fn response<S>(events: S, heartbeat: Option<Duration>) -> Response
where
    S: Stream<Item = Event> + Send + 'static,
{
    let sse = Sse::new(events.map(Ok::<Event, Infallible>));
    match heartbeat {
        Some(every) => sse
            .keep_alive(KeepAlive::new().interval(every).text(""))
            .into_response(),
        None => sse.into_response(),
    }
}

/// A whole stream of one event carrying `json`: how a failed 0.3 JSON-RPC streaming call
/// (`message/stream`, `tasks/resubscribe`) answers, as the official SDK servers do (the 0.3 SDK
/// client reads only `text/event-stream` there).
pub fn single(json: impl AsRef<str>) -> Response {
    response(futures_util::stream::iter([data(json)]), None)
}
