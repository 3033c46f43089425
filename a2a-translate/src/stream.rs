//! The stateful 1.0 -> 0.3 stream translator (hazard H8: synthesizing `final`).

use a2a_types::{v1, v03};

use crate::error::Untranslatable;
use crate::policy::Policy;
use crate::to_v03;

/// Translates a 1.0 event stream into a 0.3 one, synthesizing `final: true` on the last
/// status update.
///
/// 1.0 has no `final` flag; its stream simply closes. 0.3 clients expect `final: true` on the
/// last `status-update` (S0 §9.3). Rules:
/// - a status update in a **terminal** state is emitted at once with `final: true`;
/// - a status update in an **interrupted** state (`input-required`, `auth-required`) is held
///   back until the next event shows whether the stream goes on (then `final: false`) or the
///   stream ends ([`StreamTranslator::finish`], then `final: true`). The SDKs decide from the
///   state alone and so never mark an input-required close as final;
/// - every other event is emitted at once (`final: false` for status updates).
///
/// ```
/// use a2a_translate::{Policy, StreamTranslator};
/// use a2a_types::v1;
///
/// let mut st = StreamTranslator::new(Policy::Strict);
/// let ev = v1::StreamResponse::StatusUpdate(v1::TaskStatusUpdateEvent::new(
///     "t-1",
///     "c-1",
///     v1::TaskStatus { state: v1::TaskState::InputRequired, message: None, timestamp: None },
/// ));
/// assert_eq!(st.push(ev).unwrap().count(), 0); // held: is it the last one?
/// let last = st.finish().expect("the held status");
/// let json = serde_json::to_value(&last).unwrap();
/// assert_eq!(json["final"], true);
/// assert_eq!(json["status"]["state"], "input-required");
/// ```
#[derive(Debug)]
pub struct StreamTranslator {
    policy: Policy,
    held: Option<v03::TaskStatusUpdateEvent>,
    closed: bool,
}

/// The 0.3 events released by one [`StreamTranslator::push`]: zero, one or two.
#[derive(Debug, Default)]
pub struct Emitted {
    first: Option<v03::StreamResult>,
    second: Option<v03::StreamResult>,
}

impl Iterator for Emitted {
    type Item = v03::StreamResult;
    fn next(&mut self) -> Option<Self::Item> {
        self.first.take().or_else(|| self.second.take())
    }
}

impl StreamTranslator {
    /// A translator for one stream.
    pub fn new(policy: Policy) -> Self {
        StreamTranslator {
            policy,
            held: None,
            closed: false,
        }
    }

    /// True once a terminal status was emitted: a 0.3 stream ends after `final: true`, so
    /// the caller should close the stream.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Translates one 1.0 event; returns the 0.3 events ready to send, in order.
    pub fn push(&mut self, e: v1::StreamResponse) -> Result<Emitted, Untranslatable> {
        let mut out = Emitted {
            first: self.held.take().map(v03::StreamResult::StatusUpdate),
            second: None,
        };
        let translated = match e {
            v1::StreamResponse::StatusUpdate(s) => {
                let state = s.status.state;
                let ev = to_v03::status_update(s, state.is_terminal(), self.policy)
                    .map_err(|e| e.under("statusUpdate"))?;
                if state.is_interrupted() {
                    self.held = Some(ev);
                    return Ok(out);
                }
                if state.is_terminal() {
                    self.closed = true;
                }
                v03::StreamResult::StatusUpdate(ev)
            }
            other => to_v03::stream_event_final(other, None, self.policy)?,
        };
        if out.first.is_none() {
            out.first = Some(translated);
        } else {
            out.second = Some(translated);
        }
        Ok(out)
    }

    /// The upstream stream ended: releases a held interrupted status with `final: true`.
    pub fn finish(&mut self) -> Option<v03::StreamResult> {
        self.closed = true;
        self.held.take().map(|mut e| {
            e.is_final = true;
            v03::StreamResult::StatusUpdate(e)
        })
    }
}

impl StreamTranslator {
    /// [`StreamTranslator::push`] for a 0.3 **REST** (HTTP+JSON) client: the same rules, the
    /// events in the 0.3 proto's JSON (`StreamResponse` wrappers, `TASK_STATE_*`).
    pub fn push_rest(
        &mut self,
        e: v1::StreamResponse,
    ) -> Result<Vec<v03::rest::StreamResponse>, Untranslatable> {
        crate::rest::to_v03::check_event(&e, self.policy)?;
        self.push(e)?.map(crate::rest::bridge::stream_out).collect()
    }

    /// [`StreamTranslator::finish`] for a 0.3 REST client.
    pub fn finish_rest(&mut self) -> Result<Option<v03::rest::StreamResponse>, Untranslatable> {
        self.finish()
            .map(crate::rest::bridge::stream_out)
            .transpose()
    }
}
