//! Stream relay: a peer's SSE stream (read with the workspace's parser, `a2a_client::sse`) or gRPC
//! stream (`crate::outbound::grpc`) read event by event, translated to the caller's version, bounded
//! in bytes, ended by a stall timer (no bytes for `peer_timeout_secs`, heartbeats count as life)
//! and by the shutdown grace period with an `a2a_shutting_down` event.

use std::time::Duration;

use a2a_client::sse;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::governance::HopGov;
use crate::governance::step::StreamStep;
use crate::protocol::ops::GatewayOp;
use crate::protocol::xlate;
use crate::{outbound::PeerCall, outbound::map_answer_error};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

/// One event from a peer stream, before translation: SSE events of the HTTP bindings and gRPC
/// stream messages alike ([`PeerCall::relay`]).
pub(crate) struct PeerEvent {
    /// The peer's event id (SSE `id`; empty when none).
    pub(crate) id: String,
    /// Bytes counted against the stream limit.
    pub(crate) len: u64,
    /// The event's 1.0 or 0.3 `StreamResponse` payload (`None`: nothing to relay, such as
    /// `[DONE]`), or the refusal that ends the stream.
    pub(crate) payload: Result<Option<Value>, Refusal>,
}

impl PeerCall<'_> {
    /// An SSE answer of the JSON-RPC or HTTP+JSON binding, relayed: each event's payload is
    /// unwrapped (JSON-RPC `result` / `error`), then [`PeerCall::relay`] does the rest.
    pub(crate) fn stream(
        &self,
        resp: crate::peer::http::PeerResponse,
        binding: Binding,
    ) -> BoxStream<'static, Result<Value, Refusal>> {
        let from = self.chosen.version;
        let agent_id = self.agent.agent_id.clone();
        // Any byte from the peer is life, SSE comments (heartbeats) included.
        let life = Liveness::new();
        let seen = life.clone();
        // The workspace's SSE parser (`a2a_client::sse`); no event may outgrow the stream limit.
        let max = self.max_stream;
        let bytes = resp.bytes_stream().inspect(move |_| seen.touch());
        let events =
            sse::events(bytes, usize::try_from(max).unwrap_or(usize::MAX)).map(move |r| match r {
                Err(sse::SseError::TooLarge(_)) => PeerEvent {
                    id: String::new(),
                    len: 0,
                    payload: Err(Refusal::stream_too_large(max)),
                },
                Err(e) => PeerEvent {
                    id: String::new(),
                    len: 0,
                    payload: Err(Refusal::peer_unreachable(&format!("stream broke: {e}"))),
                },
                Ok(ev) => PeerEvent {
                    len: ev.data.len() as u64,
                    payload: sse_payload(&ev.data, binding, from, &agent_id),
                    id: ev.id.unwrap_or_default(),
                },
            });
        self.relay(Box::pin(events), life)
    }

    /// Relays a peer's events: translated to the caller's version, bounded in bytes, through the
    /// governance stream steps, ended by a stall timer (nothing for `peer_timeout_secs`; `life`
    /// says when the peer last sent anything), the kill switch and shutdown.
    pub(crate) fn relay(
        &self,
        mut events: BoxStream<'static, PeerEvent>,
        life: Liveness,
    ) -> BoxStream<'static, Result<Value, Refusal>> {
        let from = self.chosen.version;
        let to = self.caller;
        let max = self.max_stream;
        let stall = Duration::from_secs(self.st.config().peer_timeout_secs.max(1));
        let stall_secs = self.st.config().peer_timeout_secs;
        let shutdown = self.st.shutdown.clone();
        let governance = self.st.governance.clone();
        // Governance: events read into 1.0 (and checked), through the stream steps, then into
        // the caller's version (a second translator, none for a 1.0 caller: the steps keep
        // events 1.0); without it, one translator straight to the caller's.
        let gov = self.gov.clone().filter(|g| g.active);
        let mut steps = gov
            .as_ref()
            .map(|g| self.st.governance.stream(&g.hop))
            .unwrap_or_default();
        let governed = !steps.is_empty();
        let mut xl = xlate::Events::new(from, if governed { Version::V1 } else { to });
        let mut xl2 = (to != Version::V1).then(|| xlate::Events::new(Version::V1, to));
        // What the stream steps decide is audited on a row of its own, when they decide anything.
        let decided_before = gov
            .as_ref()
            .and_then(|g| g.evidence.lock().ok().map(|e| e.decisions.len()))
            .unwrap_or(0);
        let open = self.open.clone();
        let kill = open.as_ref().map(|o| o.token.clone()).unwrap_or_default();
        let audit = self.st.audit.clone();
        // A resume: a snapshot first means the peer could not serve the id (a gap).
        let mut resumed_from = crate::tasks::resume::resuming().map(|f| f.sent);
        let s = async_stream::stream! {
            let mut total: u64 = 0;
            // The task's terminal state went out already (a cancel's final update is not repeated).
            let mut terminal = false;
            loop {
                let wait = stall.saturating_sub(life.silent_for());
                let next = tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => { yield Err(crate::protocol::errors::shutting_down()); break; }
                    _ = kill.cancelled() => {
                        if let Some(o) = &open {
                            match o.final_event() {
                                Some(f) => for ev in crate::outbound::cancel_end::closing_events(&f, to, terminal) { yield Ok(ev) },
                                None => yield Err(o.refusal()),
                            }
                        }
                        break;
                    }
                    r = tokio::time::timeout(wait, events.next()) => r,
                };
                let next = match next {
                    Err(_) if life.silent_for() < stall => continue,
                    Err(_) => { yield Err(Refusal::peer_timeout(stall_secs)); break; }
                    Ok(None) => {
                        let mut tail: Vec<Value> = xl.finish().into_iter().collect();
                        if governed {
                            let mut failed = None;
                            let mut owed = Vec::new();
                            if let Some(g) = &gov
                                && let Ok(mut evd) = g.evidence.lock()
                            {
                                for st in steps.iter_mut() {
                                    match st.finish(&mut evd) {
                                        Ok(v) => owed.extend(v),
                                        Err(r) => { failed = Some(r); break; }
                                    }
                                }
                            }
                            if let Some(r) = failed { yield Err(r); break; }
                            if let Some(xl2) = xl2.as_mut() {
                                let mut out = Vec::new();
                                for ev in owed.into_iter().chain(tail) {
                                    match xl2.push(ev) {
                                        Ok(v) => out.extend(v),
                                        Err(e) => { failed = Some(map_answer_error(e)); break; }
                                    }
                                }
                                if let Some(r) = failed { yield Err(r); break; }
                                out.extend(xl2.finish());
                                tail = out;
                            } else {
                                owed.extend(tail);
                                tail = owed;
                            }
                        }
                        for ev in tail { yield Ok(ev); }
                        break;
                    }
                    Ok(Some(ev)) => ev,
                };
                total += next.len;
                if total > max {
                    yield Err(Refusal::stream_too_large(max));
                    break;
                }
                let payload = match next.payload {
                    Ok(Some(p)) => p,
                    Ok(None) => continue,
                    // A peer's error event reaches the caller only through governance.
                    Err(r) => { yield Err(crate::outbound::peer_error::govern(&governance, gov.as_deref(), r)); break; }
                };
                let gap = resumed_from.take().filter(|_| crate::tasks::resume::is_snapshot(&payload));
                let mut out = match xl.push(payload) {
                    Ok(out) => out,
                    // Its message may quote the peer's event: through governance too.
                    Err(e) => { yield Err(crate::outbound::peer_error::govern(&governance, gov.as_deref(), map_answer_error(e))); break; }
                };
                if let Some(o) = &open {
                    out.iter().for_each(|ev| o.saw(ev));
                }
                terminal |= out.iter().any(crate::outbound::cancel_end::is_terminal_event);
                if !governed {
                    crate::tasks::resume::tag(&mut out, &next.id, gap.as_deref());
                    for ev in out { yield Ok(ev) }
                    continue;
                }
                match govern_events(gov.as_deref(), &mut steps, xl2.as_mut(), out) {
                    Ok(mut evs) => {
                        crate::tasks::resume::tag(&mut evs, &next.id, gap.as_deref());
                        for ev in evs { yield Ok(ev) }
                    }
                    Err(r) => { yield Err(r); break; }
                }
            }
            if governed && let Some(g) = &gov {
                stream_audit(&audit, g, decided_before);
            }
        };
        match &self.gov {
            Some(g) => self.st.replay.clone().relay(
                g.hop.workspace_id.clone(),
                self.agent.agent_id.clone(),
                to,
                Box::pin(s),
            ),
            None => Box::pin(s),
        }
    }
}

/// The payload of one SSE event: JSON, unwrapped from the JSON-RPC envelope (whose `error` ends
/// the stream in the caller's form); `None` for an empty event or `[DONE]`.
fn sse_payload(
    data: &str,
    binding: Binding,
    from: Version,
    agent_id: &str,
) -> Result<Option<Value>, Refusal> {
    let data = data.trim();
    if data.is_empty() || data == "[DONE]" {
        return Ok(None);
    }
    let mut v: Value = serde_json::from_str(data).map_err(|e| {
        Refusal::upstream_invalid_response(&format!("stream event is not JSON: {e}"))
    })?;
    match binding {
        Binding::JsonRpc => {
            if let Some(err) = v.get("error") {
                let code = err.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                if code == -32009 {
                    return Err(Refusal::peer_version_not_supported(agent_id, from.as_str()));
                }
                let reason = err.get("data").and_then(Value::as_array).and_then(|d| {
                    d.iter()
                        .find_map(|i| i.get("reason").and_then(Value::as_str))
                });
                return Err(Refusal::upstream_error(code, reason));
            }
            // Taken out of the envelope, not copied.
            match v.get_mut("result").map(Value::take) {
                Some(r) => Ok(Some(r)),
                None => Err(Refusal::upstream_invalid_response(
                    "stream event has neither result nor error",
                )),
            }
        }
        _ => {
            if v.get("error").is_some() {
                return Err(Refusal::upstream_error(-32603, None));
            }
            Ok(Some(v))
        }
    }
}

/// stream steps: 1.0 events through every step, then into the caller's version (`xl2`; none
/// for a 1.0 caller).
fn govern_events(
    gov: Option<&HopGov>,
    steps: &mut [Box<dyn StreamStep>],
    mut xl2: Option<&mut xlate::Events>,
    events: Vec<Value>,
) -> Result<Vec<Value>, Refusal> {
    let Some(g) = gov else {
        return Ok(events);
    };
    let mut evd = g
        .evidence
        .lock()
        .map_err(|_| Refusal::internal("evidence lock"))?;
    let mut out = Vec::with_capacity(events.len());
    for mut ev in events {
        for st in steps.iter_mut() {
            st.event(&mut ev, &mut evd)?;
        }
        match xl2.as_deref_mut() {
            Some(xl2) => out.extend(xl2.push(ev).map_err(map_answer_error)?),
            None => out.push(ev),
        }
    }
    Ok(out)
}

/// A governed stream's evidence once it ends: one more audit row (`decision = "stream"`, the
/// error code when a step ended it) naming the hop's trace id, when the stream steps decided
/// anything (PII found in the events, a block); the hop's own row has the request's evidence.
fn stream_audit(audit: &crate::store::backend::Audit, g: &HopGov, decided_before: usize) {
    let Ok(evd) = g.evidence.lock() else { return };
    if evd.decisions.len() == decided_before {
        return;
    }
    let blocked = evd
        .decisions
        .iter()
        .any(|d| d.step == "pii" && d.decision == "block");
    let rec = crate::store::AuditRecord {
        trace_id: g.hop.trace_id.clone(),
        workspace_id: Some(g.hop.workspace_id.clone()),
        key_id: Some(g.hop.key_id.clone()),
        target: Some(g.hop.target.clone()),
        operation: Some(g.hop.operation.name_03().to_owned()),
        client_version: Some(g.hop.version.as_str().to_owned()),
        client_binding: Some(g.hop.binding.as_str().to_owned()),
        decision: "stream".into(),
        status: if blocked { 403 } else { 200 },
        error_code: blocked.then(|| "a2a_pii_blocked".to_owned()),
        governance: serde_json::to_value(&*evd).ok(),
        ..Default::default()
    };
    if let Err(e) = crate::store::backend::AuditStore::enqueue(audit, &rec, None) {
        tracing::error!(trace_id = %rec.trace_id, "stream audit write failed: {e}");
    }
}

/// When a peer stream last delivered bytes, shared between the byte stream and the stall timer.
#[derive(Clone)]
pub(crate) struct Liveness {
    start: std::time::Instant,
    last_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Liveness {
    pub(crate) fn new() -> Liveness {
        Liveness {
            start: std::time::Instant::now(),
            last_ms: std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0)),
        }
    }

    /// Bytes arrived now.
    pub(crate) fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// How long since the last bytes (or since the stream began).
    pub(crate) fn silent_for(&self) -> std::time::Duration {
        let last = std::time::Duration::from_millis(
            self.last_ms.load(std::sync::atomic::Ordering::Relaxed),
        );
        self.start.elapsed().saturating_sub(last)
    }
}
