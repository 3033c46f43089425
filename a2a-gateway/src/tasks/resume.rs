//! Resumable relayed streams: every event the gateway relays from a peer that numbers its
//! events (`id:`, as a2a-agent does) carries the gateway's own SSE id `p<peer-id>`; a caller's
//! SubscribeToTask with `Last-Event-ID: p<peer-id>` is passed upstream as the peer's
//! `Last-Event-ID` (after the ownership check every task operation passes), and the peer's
//! answer is relayed as usual. When a resumed peer stream starts with the task snapshot (the
//! peer could not serve the id), the caller sees the same gap marker an agent sends,
//! `: a2a-replay-gap last-event-id=<id>`, before it. See docs/gateway/peers.md, "Resumable streams".

use std::future::Future;

use axum::http::HeaderMap;
use serde_json::Value;

use crate::protocol::errors::Refusal;

/// The key that carries a relayed event's gateway id from the relay to the caller's edge
/// (removed there; never sent).
const ID_KEY: &str = "\u{0}a2a-gateway-event-id";
/// The key that asks the edge for a gap marker before the event (removed there; never sent).
const GAP_KEY: &str = "\u{0}a2a-gateway-gap";
/// The longest `Last-Event-ID` the gateway reads.
const MAX_ID_LEN: usize = 128;

tokio::task_local! {
    /// The resume point of the call being executed (a resuming SubscribeToTask).
    static UPSTREAM: Option<From>;
}

/// Where a caller's `Last-Event-ID` resumes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resume {
    /// After the peer's event with this id (`p<id>`): the peer replays.
    Peer(String),
    /// After event `after` of the gateway's buffered stream `stream` (`g<stream>.<after>`).
    Local { stream: u64, after: u64 },
}

/// A caller's resume point: its `Last-Event-ID` as sent (named in the gap marker) and where
/// it resumes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct From {
    pub(crate) sent: String,
    pub(crate) at: Resume,
}

/// The resume point a caller's `Last-Event-ID` names (`None`: no header, a fresh subscribe); a
/// header that is not a gateway event id is InvalidParams.
pub(crate) fn requested(headers: &HeaderMap) -> Result<Option<From>, Refusal> {
    let Some(raw) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let bad = || {
        Refusal::invalid_params(
            "Last-Event-ID is not an event id of this gateway (the id line of an event it sent)",
        )
    };
    let text = raw.to_str().map_err(|_| bad())?.trim();
    if text.len() > MAX_ID_LEN {
        return Err(bad());
    }
    let at = if let Some(peer) = text.strip_prefix('p') {
        if peer.is_empty() || !peer.chars().all(|c| c.is_ascii_graphic()) {
            return Err(bad());
        }
        Resume::Peer(peer.to_owned())
    } else if let Some(local) = text.strip_prefix('g') {
        let (stream, after) = local.split_once('.').ok_or_else(bad)?;
        Resume::Local {
            stream: stream.parse().map_err(|_| bad())?,
            after: after.parse().map_err(|_| bad())?,
        }
    } else {
        return Err(bad());
    };
    Ok(Some(From {
        sent: text.to_owned(),
        at,
    }))
}

/// [`requested`] for a SubscribeToTask (both versions); other operations resume nothing.
pub(crate) fn subscribe_from(
    op: crate::protocol::ops::Operation,
    headers: &HeaderMap,
) -> Result<Option<From>, Refusal> {
    if op == crate::protocol::ops::Operation::SubscribeToTask {
        requested(headers)
    } else {
        Ok(None)
    }
}

/// Runs `f` (a call's execution) with `from` as its resume point (a plain function, as
/// [`crate::governance::extensions::scope`]).
pub(crate) fn with_upstream<F: Future>(
    from: Option<From>,
    f: F,
) -> impl Future<Output = F::Output> {
    UPSTREAM.scope(from, f)
}

/// The resume point of the call being executed, if it resumes.
pub(crate) fn resuming() -> Option<From> {
    UPSTREAM.try_with(Clone::clone).ok().flatten()
}

/// The peer `Last-Event-ID` of the call being executed, if it resumes a peer's numbering.
pub(crate) fn upstream() -> Option<String> {
    match resuming()?.at {
        Resume::Peer(id) => Some(id),
        Resume::Local { .. } => None,
    }
}

/// Relay side: the caller events `out`, made from one peer event with SSE id `peer_id`, get the
/// gateway id; `gap` (the caller's resumed-from id) marks the first event of a resume the peer
/// could not serve.
pub(crate) fn tag(out: &mut [Value], peer_id: &str, gap: Option<&str>) {
    for (i, ev) in out.iter_mut().enumerate() {
        if !peer_id.is_empty() {
            tag_id(ev, format!("p{peer_id}"));
        }
        if i == 0
            && let Some(g) = gap
            && let Some(o) = ev.as_object_mut()
        {
            mark_gap(o, g);
        }
    }
}

/// Gives `ev` the gateway id `id`.
pub(crate) fn tag_id(ev: &mut Value, id: String) {
    if let Some(o) = ev.as_object_mut() {
        o.insert(ID_KEY.into(), Value::String(id));
    }
}

/// Asks for the gap marker naming `sent` (the caller's id) before `ev` (an empty `ev`: the
/// marker alone).
pub(crate) fn mark_gap(ev: &mut serde_json::Map<String, Value>, sent: &str) {
    ev.insert(GAP_KEY.into(), Value::String(sent.to_owned()));
}

/// Whether a relayed event carries a gateway id already (its peer numbers its events).
pub(crate) fn has_id(ev: &Value) -> bool {
    ev.get(ID_KEY).is_some()
}

/// Whether a resumed peer stream's first event is the task snapshot: the peer could not
/// replay after the id (an event replay never starts with a Task).
pub(crate) fn is_snapshot(ev: &Value) -> bool {
    ev.get("task").is_some() || ev.get("kind").and_then(Value::as_str) == Some("task")
}

/// Edge side: the event without its relay keys (`None`: a gap marker alone), its gateway id
/// and the gap marker owed before it.
pub(crate) fn untag(mut ev: Value) -> (Option<Value>, Option<String>, Option<String>) {
    let Some(o) = ev.as_object_mut() else {
        return (Some(ev), None, None);
    };
    let id = o.remove(ID_KEY).and_then(|v| v.as_str().map(str::to_owned));
    let gap = o
        .remove(GAP_KEY)
        .and_then(|v| v.as_str().map(str::to_owned));
    let alone = gap.is_some() && o.is_empty();
    ((!alone).then_some(ev), id, gap)
}

/// The SSE events for one relayed event: the gap marker when owed, then `data` (when there is
/// an event) with its id.
pub(crate) fn sse_events(
    data: Option<String>,
    id: Option<String>,
    gap: Option<String>,
) -> Vec<axum::response::sse::Event> {
    let mut out = Vec::with_capacity(2);
    if let Some(g) = gap {
        out.push(a2a_agent::edge::sse::comment(format!(
            "a2a-replay-gap last-event-id={g}"
        )));
    }
    if let Some(data) = data {
        let ev = a2a_agent::edge::sse::data(data);
        out.push(match id {
            Some(id) => ev.id(id),
            None => ev,
        });
    }
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
        let at = |h: &str| requested(&headers(h)).unwrap().unwrap().at;
        assert_eq!(at("p12"), Resume::Peer("12".into()));
        assert_eq!(
            at("g3.9"),
            Resume::Local {
                stream: 3,
                after: 9
            }
        );
        assert!(requested(&headers("g3")).is_err());
        assert!(requested(&headers("gx.1")).is_err());
        assert!(requested(&headers("12")).is_err());
        assert!(requested(&headers("p")).is_err());
        assert!(requested(&headers(&format!("p{}", "9".repeat(200)))).is_err());
        let mut evs = vec![json!({"statusUpdate": {}}), json!({"artifactUpdate": {}})];
        tag(&mut evs, "7", Some("p3"));
        let (ev, id, gap) = untag(evs[0].clone());
        assert_eq!(ev, Some(json!({"statusUpdate": {}})));
        assert_eq!(id.as_deref(), Some("p7"));
        assert_eq!(gap.as_deref(), Some("p3"));
        let mut alone = serde_json::Map::new();
        mark_gap(&mut alone, "g1.2");
        assert_eq!(
            untag(Value::Object(alone)),
            (None, None, Some("g1.2".into()))
        );
        let (_, id, gap) = untag(evs[1].clone());
        assert_eq!((id.as_deref(), gap), (Some("p7"), None));
        assert!(is_snapshot(&json!({"task": {}})));
        assert!(is_snapshot(&json!({"kind": "task"})));
        assert!(!is_snapshot(&json!({"statusUpdate": {}})));
    }
}
