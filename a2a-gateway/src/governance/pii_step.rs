//! The PII step: a workspace's [`PiiRules`] applied with [`crate::pii`] to requests, peer
//! answers, every stream event (one [`StreamScanner`] per stream, flushed before the stream
//! ends) and push notifications. Off for a workspace without rules.

use std::sync::Arc;

use serde_json::Value;

use crate::protocol::errors::Refusal;
use crate::{
    governance::step::Evidence, governance::step::Hop, governance::step::Step,
    governance::step::StreamStep,
};
use crate::{pii, pii::PiiReport, pii::PiiRules, pii::StreamScanner};

use super::Cache;

/// The PII step over the governance cache.
pub struct PiiStep {
    pub(crate) cache: Arc<Cache>,
}

fn apply(report: &PiiReport, ev: &mut Evidence) -> Result<(), Refusal> {
    ev.add_pii(report);
    if let Some(kind) = report.blocked {
        ev.decide("pii", "block", Some(kind.name()));
        return Err(Refusal::pii_blocked(kind.name()));
    }
    // A text part that cannot be read cannot be checked: refused, never passed on unread.
    if report.unreadable > 0 {
        ev.decide("pii", "block", Some("UNREADABLE"));
        return Err(Refusal::pii_unreadable());
    }
    if report.redacted > 0 {
        ev.decide("pii", "redact", None);
    } else if !report.is_empty() {
        ev.decide("pii", "record", None);
    }
    Ok(())
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
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&pii::scan_value(params, &rules), ev)
    }

    fn answer(&self, hop: &Hop, result: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&pii::scan_value(result, &rules), ev)
    }

    fn stream(&self, hop: &Hop) -> Option<Box<dyn StreamStep>> {
        let rules = self.rules(&hop.workspace_id)?;
        Some(Box::new(PiiStream {
            scanner: StreamScanner::new(rules),
        }))
    }

    fn push(&self, hop: &Hop, payload: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let Some(rules) = self.rules(&hop.workspace_id) else {
            return Ok(());
        };
        apply(&pii::scan_value(payload, &rules), ev)
    }
}

struct PiiStream {
    scanner: StreamScanner,
}

impl StreamStep for PiiStream {
    fn event(&mut self, event: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let report = self.scanner.scan_event(event);
        apply(&report, ev)
    }

    fn finish(&mut self, ev: &mut Evidence) -> Result<Vec<Value>, Refusal> {
        let (events, report) = self.scanner.flush();
        apply(&report, ev)?;
        Ok(events)
    }
}
