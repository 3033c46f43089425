//! Stream relay: a peer's SSE stream read event by event, translated to the caller's version,
//! bounded in bytes, ended by a stall timer (no bytes for `peer_timeout_secs`, heartbeats count
//! as life) and by the shutdown grace period with an `a2a_shutting_down` event.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::errors::{Binding, Refusal};
use crate::hop::{PeerCall, map_answer_error};
use crate::xlate;

impl PeerCall<'_> {
    pub(crate) fn stream(
        &self,
        resp: reqwest::Response,
        binding: Binding,
    ) -> BoxStream<'static, Result<Value, Refusal>> {
        let from = self.chosen.version;
        let to = self.caller;
        let max = self.max_stream;
        let stall = Duration::from_secs(self.st.config.peer_timeout_secs.max(1));
        let stall_secs = self.st.config.peer_timeout_secs;
        let agent_id = self.agent.agent_id.clone();
        let shutdown = self.st.shutdown.clone();
        // Any byte from the peer is life, SSE comments (heartbeats) included.
        let life = Liveness::new();
        let seen = life.clone();
        let mut events = resp
            .bytes_stream()
            .inspect(move |_| seen.touch())
            .eventsource();
        let mut xl = xlate::Events::new(from, to);
        let s = async_stream::stream! {
            let mut total: u64 = 0;
            loop {
                let wait = stall.saturating_sub(life.silent_for());
                let next = tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => { yield Err(crate::edge::shutting_down()); break; }
                    r = tokio::time::timeout(wait, events.next()) => r,
                };
                let next = match next {
                    Err(_) if life.silent_for() < stall => continue,
                    Err(_) => { yield Err(Refusal::peer_timeout(stall_secs)); break; }
                    Ok(None) => { if let Some(ev) = xl.finish() { yield Ok(ev); } break; }
                    Ok(Some(Err(e))) => { yield Err(Refusal::peer_unreachable(&format!("stream broke: {e}"))); break; }
                    Ok(Some(Ok(ev))) => ev,
                };
                total += next.data.len() as u64;
                if total > max {
                    yield Err(Refusal::stream_too_large(max));
                    break;
                }
                let data = next.data.trim();
                if data.is_empty() || data == "[DONE]" {
                    continue;
                }
                let v: Value = match serde_json::from_str(data) {
                    Ok(v) => v,
                    Err(e) => { yield Err(Refusal::upstream_invalid_response(&format!("stream event is not JSON: {e}"))); break; }
                };
                let payload = match binding {
                    Binding::JsonRpc => {
                        if let Some(err) = v.get("error") {
                            let code = err.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                            if code == -32009 {
                                yield Err(Refusal::peer_version_not_supported(&agent_id, from.as_str()));
                            } else {
                                let reason = err.get("data").and_then(Value::as_array)
                                    .and_then(|d| d.iter().find_map(|i| i.get("reason").and_then(Value::as_str)));
                                yield Err(Refusal::upstream_error(code, reason));
                            }
                            break;
                        }
                        match v.get("result") {
                            Some(r) => r.clone(),
                            None => { yield Err(Refusal::upstream_invalid_response("stream event has neither result nor error")); break; }
                        }
                    }
                    Binding::HttpJson => {
                        if v.get("error").is_some() {
                            yield Err(Refusal::upstream_error(-32603, None));
                            break;
                        }
                        v
                    }
                };
                match xl.push(&payload) {
                    Ok(out) => for ev in out { yield Ok(ev) },
                    Err(e) => { yield Err(map_answer_error(e)); break; }
                }
            }
        };
        Box::pin(s)
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
