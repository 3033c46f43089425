//! [`super::scan_value`]: the walk over A2A 1.0 JSON values and the rewriting of strings.
//!
//! The walk follows the 1.0 shapes by member name, so it needs no schema and accepts every
//! container the gateway handles: SendMessage params (`message`, `metadata`; `configuration` is
//! structural and left alone), a `Message` (`parts`, `metadata`), a `Task` (`status.message`,
//! `history`, `artifacts`, `metadata`), `StreamResponse` events (`task`, `message`,
//! `statusUpdate`, `artifactUpdate`), `ListTasks` results (`tasks`), JSON-RPC envelopes
//! (`params`, `result`) and arrays of any of these. Members it does not name (ids, `role`,
//! `kind`, `contextId`, `configuration`, artifact `name`/`description`, timestamps...) are
//! never read or changed.
//!
//! Inside a part: `text`, `filename`, every string in `data` and `metadata` (recursively, keys
//! kept), and `raw` when `mediaType` is textual (`text/*`, JSON, XML, YAML): it is decoded from
//! base64, scanned, and re-encoded (standard alphabet, padded) only when something was
//! redacted. A textual raw part that is not valid base64 or not UTF-8 cannot be checked: it is
//! counted in [`PiiReport::unreadable`] and the gateway refuses the content (a part it cannot read
//! is refused, never skipped). `url` and `mediaType` are structural.

use base64::Engine;
use serde_json::Value;

use super::{Finding, PiiAction, PiiKind, PiiReport, PiiRules, find};

/// Applies rules to strings and accumulates the report.
pub(super) struct Scan<'r> {
    pub(super) rules: &'r PiiRules,
    pub(super) report: PiiReport,
}

impl<'r> Scan<'r> {
    pub(super) fn new(rules: &'r PiiRules) -> Self {
        Scan {
            rules,
            report: PiiReport::default(),
        }
    }

    /// Counts `findings` in `text` and returns the text with the `Redact` ones replaced, or
    /// `None` when nothing is to be replaced.
    pub(super) fn apply(&mut self, text: &str, findings: &[Finding]) -> Option<String> {
        let mut out: Option<String> = None;
        let mut copied = 0;
        for f in findings {
            match self.decide(f) {
                (PiiAction::Redact, kind) => {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    o.push_str(text.get(copied..f.range.start).unwrap_or(""));
                    o.push_str("[REDACTED:");
                    o.push_str(kind.name());
                    o.push(']');
                    copied = f.range.end;
                    self.report.redacted += 1;
                }
                _ => {}
            }
        }
        let mut o = out?;
        o.push_str(text.get(copied..).unwrap_or(""));
        Some(o)
    }

    /// Counts the items of `f` and returns what to do with its range: the most severe action
    /// of its kinds (block, then redact, then record) and the kind that asks for it.
    pub(super) fn decide(&mut self, f: &Finding) -> (PiiAction, PiiKind) {
        let rank = |a: PiiAction| match a {
            PiiAction::Record => 0,
            PiiAction::Redact => 1,
            PiiAction::Block => 2,
        };
        let mut best = (PiiAction::Record, f.kind);
        for kind in f.kinds() {
            *self.report.counts.entry(kind).or_default() += 1;
            let action = self.rules.action(kind);
            if action == PiiAction::Block && self.report.blocked.is_none() {
                self.report.blocked = Some(kind);
            }
            if rank(action) > rank(best.0) {
                best = (action, kind);
            }
        }
        best
    }

    /// Scans one string in place.
    pub(super) fn string(&mut self, s: &mut String) {
        let findings = find(s);
        if findings.is_empty() {
            return;
        }
        if let Some(new) = self.apply(s, &findings) {
            *s = new;
        }
    }

    /// Every string in any JSON value (keys kept).
    pub(super) fn strings(&mut self, v: &mut Value) {
        match v {
            Value::String(s) => self.string(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.strings(i)),
            Value::Object(map) => map.values_mut().for_each(|i| self.strings(i)),
            _ => {}
        }
    }

    /// Any 1.0 container: see the module docs for the members followed.
    pub(super) fn container(&mut self, v: &mut Value) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(|i| self.container(i)),
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match key.as_str() {
                        "parts" => {
                            if let Value::Array(parts) = child {
                                parts.iter_mut().for_each(|p| self.part(p));
                            }
                        }
                        "metadata" => self.strings(child),
                        k if CONTAINERS.contains(&k) => self.container(child),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// One part (`text`, `data`, `url` or `raw`, with `filename`, `mediaType`, `metadata`).
    pub(super) fn part(&mut self, p: &mut Value) {
        let Value::Object(map) = p else {
            return;
        };
        let textual = map
            .get("mediaType")
            .or_else(|| map.get("media_type"))
            .and_then(Value::as_str)
            .is_some_and(is_textual);
        for (key, child) in map.iter_mut() {
            match (key.as_str(), child) {
                ("text" | "filename", Value::String(s)) => self.string(s),
                ("data" | "metadata", v) => self.strings(v),
                ("raw", Value::String(s)) if textual => self.raw(s),
                _ => {}
            }
        }
    }

    /// A base64 inline text file.
    fn raw(&mut self, b64: &mut String) {
        let Ok(bytes) = lenient_base64().decode(b64.as_bytes()) else {
            self.report.unreadable += 1;
            return;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            self.report.unreadable += 1;
            return;
        };
        let findings = find(&text);
        if findings.is_empty() {
            return;
        }
        if let Some(new) = self.apply(&text, &findings) {
            *b64 = base64::engine::general_purpose::STANDARD.encode(new);
        }
    }
}

/// The members of a container that hold containers.
const CONTAINERS: [&str; 13] = [
    "message",
    "task",
    "status",
    "artifact",
    "statusUpdate",
    "status_update",
    "artifactUpdate",
    "artifact_update",
    "history",
    "artifacts",
    "tasks",
    "params",
    "result",
];

/// The bytes of text [`Scan::container`] would scan in `v` (a raw part counted decoded), found
/// without scanning: the same members, read only.
pub(super) fn measure(v: &Value) -> usize {
    match v {
        Value::Array(items) => items.iter().map(measure).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(key, child)| match key.as_str() {
                "parts" => child
                    .as_array()
                    .map_or(0, |parts| parts.iter().map(measure_part).sum()),
                "metadata" => all_strings(child),
                k if CONTAINERS.contains(&k) => measure(child),
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

fn measure_part(p: &Value) -> usize {
    let Value::Object(map) = p else {
        return 0;
    };
    let textual = map
        .get("mediaType")
        .or_else(|| map.get("media_type"))
        .and_then(Value::as_str)
        .is_some_and(is_textual);
    map.iter()
        .map(|(key, child)| match (key.as_str(), child) {
            ("text" | "filename", Value::String(s)) => s.len(),
            ("data" | "metadata", v) => all_strings(v),
            ("raw", Value::String(s)) if textual => s.len() / 4 * 3,
            _ => 0,
        })
        .sum()
}

fn all_strings(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(all_strings).sum(),
        Value::Object(map) => map.values().map(all_strings).sum(),
        _ => 0,
    }
}

fn lenient_base64() -> base64::engine::GeneralPurpose {
    base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    )
}

/// Media types scanned as text when inline: `text/*`, JSON, XML, YAML (with `+json`/`+xml`
/// suffixes), parameters such as `; charset=utf-8` ignored.
pub(super) fn is_textual(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || matches!(
            essence.as_str(),
            "application/json" | "application/xml" | "application/yaml" | "application/x-yaml"
        )
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
}
