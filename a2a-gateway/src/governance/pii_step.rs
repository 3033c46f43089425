//! The PII step: a workspace's [`PiiRules`] applied with [`crate::pii`] to requests, peer
//! answers, every stream event (one [`StreamScanner`] per stream, flushed before the stream
//! ends), push notifications, peer errors, push config answers and the governed card. Off for a
//! workspace without rules.
//!
//! A request whose scanned text ([`pii::scanned_bytes`]) is over `max_scanned_bytes` is refused
//! (`a2a_message_too_large`) before any scan. A scan of more than [`OFFLOAD_BYTES`] runs off the
//! async workers ([`off_workers`]), so that other hops and `/healthz` keep their latency while
//! it runs (issue 39).

use std::sync::{Arc, Condvar, Mutex};

use serde_json::Value;

use crate::protocol::errors::Refusal;
use crate::protocol::ops::Operation;
use crate::{
    governance::step::Evidence, governance::step::Hop, governance::step::Step,
    governance::step::StreamStep,
};
use crate::{pii, pii::BinaryParts, pii::PiiReport, pii::PiiRules, pii::StreamScanner};

use super::Cache;

/// The PII step over the governance cache.
pub struct PiiStep {
    pub(crate) cache: Arc<Cache>,
    /// Bytes of text scanned in one request at most (`limits.max_scanned_bytes`).
    pub(crate) knobs: Arc<super::knobs::Knobs>,
}

/// Scans of more text than this (bytes) run off the async workers.
pub const OFFLOAD_BYTES: usize = 64 * 1024;

/// Large scans running at once, at most one per CPU: the pool they share.
struct Turns {
    running: Mutex<usize>,
    freed: Condvar,
}

static TURNS: Turns = Turns {
    running: Mutex::new(0),
    freed: Condvar::new(),
};

/// A turn in the pool of large scans, given back when dropped.
struct Turn;

impl Turn {
    /// Waits (blocking this thread, which is off the async workers) for a free turn.
    fn take() -> Turn {
        let most = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut running = TURNS.running.lock().unwrap_or_else(|e| e.into_inner());
        while *running >= most {
            running = TURNS.freed.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running += 1;
        Turn
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut running = TURNS.running.lock().unwrap_or_else(|e| e.into_inner());
        *running = running.saturating_sub(1);
        TURNS.freed.notify_one();
    }
}

/// Runs `scan` of `bytes` of text: at once when small; otherwise off the async workers
/// (`tokio::task::block_in_place`: the worker's other tasks move to another thread while this
/// one scans) and in the bounded pool of large scans (one per CPU; others wait their turn off
/// the workers). On a current-thread runtime, or outside one, it runs in place.
pub fn off_workers<R>(bytes: usize, scan: impl FnOnce() -> R) -> R {
    if bytes <= OFFLOAD_BYTES {
        return scan();
    }
    let in_pool = move || {
        let _turn = Turn::take();
        scan()
    };
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi {
        tokio::task::block_in_place(in_pool)
    } else {
        in_pool()
    }
}

/// [`pii::scan_value`], off the async workers when large.
pub fn scan(value: &mut Value, rules: &PiiRules) -> PiiReport {
    let bytes = pii::scanned_bytes(value);
    off_workers(bytes, || pii::scan_value(value, rules))
}

fn apply(report: &PiiReport, rules: &PiiRules, ev: &mut Evidence) -> Result<(), Refusal> {
    ev.add_pii(report);
    // Binary inline files: what was done with them (scanned as text, refused, passed unread).
    let binary = rules.binary_parts();
    if report.binary_parts > 0 {
        ev.decide("pii", binary.name(), Some("binary_parts"));
    }
    if let Some(kind) = report.blocked {
        ev.decide("pii", "block", Some(kind.name()));
        return Err(Refusal::pii_blocked(kind.name()));
    }
    // A text part that cannot be read cannot be checked: refused, never passed on unread.
    if report.unreadable > 0 {
        ev.decide("pii", "block", Some("UNREADABLE"));
        return Err(Refusal::pii_unreadable());
    }
    if report.binary_parts > 0 && binary == BinaryParts::Refuse {
        ev.decide("pii", "block", Some("BINARY"));
        return Err(Refusal::pii_blocked("BINARY"));
    }
    if report.redacted > 0 {
        ev.decide("pii", "redact", None);
    } else if !report.is_empty() {
        ev.decide("pii", "record", None);
    }
    Ok(())
}

/// Push notification config operations: their request is the caller's own webhook address and
/// credentials (sealed: the peer never sees them) and ids; their answer, in 1.0 form before
/// unsealing, holds the gateway's callback. What the peer wrote in the answer is read by
/// [`Step::push_config`] once the caller's own values are back (docs/pii.md).
fn push_config(op: Operation) -> bool {
    matches!(
        op,
        Operation::CreateTaskPushNotificationConfig
            | Operation::GetTaskPushNotificationConfig
            | Operation::ListTaskPushNotificationConfigs
            | Operation::DeleteTaskPushNotificationConfig
    )
}

impl PiiStep {
    fn rules(&self, workspace: &str) -> Option<PiiRules> {
        self.cache.get(workspace).pii.clone()
    }
}

impl Step for PiiStep {
    fn name(&self) -> &'static str {
        "pii"
    }

    fn active(&self, hop: &Hop) -> bool {
        self.cache.get(&hop.workspace_id).pii.is_some()
    }

    fn request(&self, hop: &Hop, params: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self
            .rules(&hop.workspace_id)
            .filter(|_| !push_config(hop.operation))
        else {
            return Ok(());
        };
        let bytes = pii::request_bytes(params);
        let max = self.knobs.max_scanned_bytes();
        if bytes > max {
            ev.decide("pii", "block", Some("TOO_LARGE"));
            return Err(Refusal::scanned_too_large(bytes, max));
        }
        let report = off_workers(bytes, || pii::scan_request(params, &rules));
        apply(&report, &rules, ev)
    }

    fn answer(&self, hop: &Hop, result: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self
            .rules(&hop.workspace_id)
            .filter(|_| !push_config(hop.operation))
        else {
            return Ok(());
        };
        apply(&scan(result, &rules), &rules, ev)
    }

    fn error(&self, hop: &Hop, error: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&scan(error, &rules), &rules, ev)
    }

    fn card(&self, hop: &Hop, card: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&scan(card, &rules), &rules, ev)
    }

    fn push_config(&self, hop: &Hop, answer: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&scan(answer, &rules), &rules, ev)
    }

    fn stream(&self, hop: &Hop) -> Option<Box<dyn StreamStep>> {
        let rules = self.rules(&hop.workspace_id)?;
        Some(Box::new(PiiStream {
            scanner: StreamScanner::new(rules.clone()),
            rules,
        }))
    }

    fn push(&self, hop: &Hop, payload: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&scan(payload, &rules), &rules, ev)
    }
}

struct PiiStream {
    scanner: StreamScanner,
    rules: PiiRules,
}

impl StreamStep for PiiStream {
    fn event(&mut self, event: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let bytes = pii::scanned_bytes(event);
        let report = off_workers(bytes, || self.scanner.scan_event(event));
        apply(&report, &self.rules, ev)
    }

    fn finish(&mut self, ev: &mut Evidence) -> Result<Vec<Value>, Refusal> {
        let (events, report) = self.scanner.flush();
        apply(&report, &self.rules, ev)?;
        Ok(events)
    }
}
