//! Resumable relayed streams: every event the gateway relays from a peer that numbers its
//! events (`id:`, as a2a-agent does) carries the gateway's own SSE id `p<peer-id>`; a caller's
//! SubscribeToTask with `Last-Event-ID: p<peer-id>` is passed upstream as the peer's
//! `Last-Event-ID` (after the ownership check every task operation passes), and the peer's
//! answer is relayed as usual. When a resumed peer stream starts with the task snapshot (the
//! peer could not serve the id), the caller sees the same gap marker an agent sends,
//! `: a2a-replay-gap last-event-id=<id>`, before it. See docs/gateway.md, "Resumable streams".

use std::future::Future;

use axum::http::HeaderMap;
use serde_json::Value;

use crate::errors::Refusal;

/// The key that carries a relayed event's gateway id from the relay to the caller's edge
/// (removed there; never sent).
const ID_KEY: &str = "\u{0}a2a-gateway-event-id";
/// The key that asks the edge for a gap marker before the event (removed there; never sent).
const GAP_KEY: &str = "\u{0}a2a-gateway-gap";
/// The longest `Last-Event-ID` the gateway reads.
const MAX_ID_LEN: usize = 128;

tokio::task_local! {
    /// The peer's `Last-Event-ID` of the call being executed (a resuming SubscribeToTask).
    static UPSTREAM: Option<String>;
}

/// The peer event id a caller's `Last-Event-ID` names (`None`: no header, a fresh subscribe);
/// a header that is not a gateway event id is InvalidParams.
pub(crate) fn requested(headers: &HeaderMap) -> Result<Option<String>, Refusal> {
    let Some(raw) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let bad = || {
        Refusal::invalid_params(
            "Last-Event-ID is not an event id of this gateway (the id line of an event it sent)",
        )
    };
    let text = raw.to_str().map_err(|_| bad())?.trim();
    let peer = text.strip_prefix('p').ok_or_else(bad)?;
    if peer.is_empty() || text.len() > MAX_ID_LEN || !peer.chars().all(|c| c.is_ascii_graphic()) {
        return Err(bad());
    }
    Ok(Some(peer.to_owned()))
}

/// [`requested`] for a SubscribeToTask (both versions); other operations resume nothing.
pub(crate) fn subscribe_from(
    op: crate::ops::Operation,
    headers: &HeaderMap,
) -> Result<Option<String>, Refusal> {
    if op == crate::ops::Operation::SubscribeToTask {
        requested(headers)
    } else {
        Ok(None)
    }
}

/// Runs `f` (a call's execution) with `upstream` as the peer `Last-Event-ID` its peer request
/// carries.
pub(crate) async fn with_upstream<F: Future>(upstream: Option<String>, f: F) -> F::Output {
    UPSTREAM.scope(upstream, f).await
}

/// The peer `Last-Event-ID` of the call being executed, if it resumes.
pub(crate) fn upstream() -> Option<String> {
    UPSTREAM.try_with(Clone::clone).ok().flatten()
}

/// Relay side: the caller events `out`, made from one peer event with SSE id `peer_id`, get the
/// gateway id; `gap` (the resumed-from id) marks the first event of a resume the peer could not
/// serve.
pub(crate) fn tag(out: &mut [Value], peer_id: &str, gap: Option<&str>) {
    for (i, ev) in out.iter_mut().enumerate() {
        if let Some(o) = ev.as_object_mut() {
            if !peer_id.is_empty() {
                o.insert(ID_KEY.into(), Value::String(format!("p{peer_id}")));
            }
            if i == 0
                && let Some(g) = gap
            {
                o.insert(GAP_KEY.into(), Value::String(g.to_owned()));
            }
        }
    }
}

/// Whether a resumed peer stream's first event is the task snapshot: the peer could not
/// replay after the id (an event replay never starts with a Task).
pub(crate) fn is_snapshot(ev: &Value) -> bool {
    ev.get("task").is_some() || ev.get("kind").and_then(Value::as_str) == Some("task")
}

/// Edge side: the event without its relay keys, its gateway id and the gap marker owed
/// before it.
pub(crate) fn untag(mut ev: Value) -> (Value, Option<String>, Option<String>) {
    let Some(o) = ev.as_object_mut() else {
        return (ev, None, None);
    };
    let id = o.remove(ID_KEY).and_then(|v| v.as_str().map(str::to_owned));
    let gap = o
        .remove(GAP_KEY)
        .and_then(|v| v.as_str().map(str::to_owned));
    (ev, id, gap)
}

/// The SSE events for one relayed event: the gap marker when owed, then `data` with its id.
pub(crate) fn sse_events(
    data: String,
    id: Option<String>,
    gap: Option<String>,
) -> Vec<axum::response::sse::Event> {
    let mut out = Vec::with_capacity(2);
    if let Some(g) = gap {
        out.push(a2a_agent::edge::sse::comment(format!(
            "a2a-replay-gap last-event-id=p{g}"
        )));
    }
    let ev = a2a_agent::edge::sse::data(data);
    out.push(match id {
        Some(id) => ev.id(id),
        None => ev,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("last-event-id", v.parse().unwrap());
        h
    }

    #[test]
    fn ids_round_trip_and_malformed_ones_are_refused() {
        assert_eq!(requested(&HeaderMap::new()).unwrap(), None);
        assert_eq!(requested(&headers("p12")).unwrap().as_deref(), Some("12"));
        assert!(requested(&headers("12")).is_err());
        assert!(requested(&headers("p")).is_err());
        assert!(requested(&headers(&format!("p{}", "9".repeat(200)))).is_err());
        let mut evs = vec![json!({"statusUpdate": {}}), json!({"artifactUpdate": {}})];
        tag(&mut evs, "7", Some("3"));
        let (ev, id, gap) = untag(evs[0].clone());
        assert_eq!(ev, json!({"statusUpdate": {}}));
        assert_eq!(id.as_deref(), Some("p7"));
        assert_eq!(gap.as_deref(), Some("3"));
        let (_, id, gap) = untag(evs[1].clone());
        assert_eq!((id.as_deref(), gap), (Some("p7"), None));
        assert!(is_snapshot(&json!({"task": {}})));
        assert!(is_snapshot(&json!({"kind": "task"})));
        assert!(!is_snapshot(&json!({"statusUpdate": {}})));
    }
}
