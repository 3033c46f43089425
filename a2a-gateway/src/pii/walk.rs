//! [`super::scan_value`]: the walk over A2A 1.0 JSON values and the rewriting of strings.
//!
//! Every string of the value is read (issue 39: nothing a caller or peer controls crosses
//! unread), whatever member holds it and however deep: text parts, every string and every key of
//! `data` and `metadata` (extension parameters live there) and of a card extension's `params`,
//! file names, `url`, `mediaType`,
//! artifact names and descriptions, error messages and reasons, members a newer version adds.
//! Never read:
//! - ids and opaque handles ([`IDS`]): the gateway and the peer look tasks, contexts, messages,
//!   artifacts and pages up by their exact value (ownership, idempotency, routing), so they are
//!   not text to redact; they carry no content the peer acts on;
//! - in a caller's request only ([`Scan::request`]), push notification configs ([`SEALED`]):
//!   the caller's own webhook address and credentials, which the webhook check reads and
//!   sealing replaces with the gateway's callback before the peer sees the request; they never
//!   reach the peer. In anything a peer wrote (an answer, an event, a notification) a member of
//!   that name is the peer's words, and is read.
//!
//! Adjacent text parts of one `parts` list are read as one text (`joined.rs`). `raw` parts are
//! in `raw.rs`: textual ones decoded and scanned, others per [`super::BinaryParts`].

use serde_json::{Map, Value};

use super::joined::{find_joined, pieces};
use super::raw::{decode, encode, is_textual, raw_size};
use super::steps::charge;
use super::{BinaryParts, Finding, PiiAction, PiiKind, PiiReport, PiiRules, find};

/// Members holding ids and opaque handles, never read (both spellings).
pub(super) const IDS: [&str; 16] = [
    "id",
    "taskId",
    "task_id",
    "contextId",
    "context_id",
    "messageId",
    "message_id",
    "artifactId",
    "artifact_id",
    "referenceTaskIds",
    "reference_task_ids",
    "pageToken",
    "page_token",
    "nextPageToken",
    "next_page_token",
    "tenant",
];

/// Members holding a caller's push notification config in a request, sealed before the peer
/// sees it.
pub(super) const SEALED: [&str; 4] = [
    "taskPushNotificationConfig",
    "task_push_notification_config",
    "pushNotificationConfig",
    "push_notification_config",
];

/// Whether the member `key` is left unread (`request`: the value is a caller's request).
fn skipped(key: &str, request: bool) -> bool {
    IDS.contains(&key) || (request && SEALED.contains(&key))
}

/// Applies rules to strings and accumulates the report.
pub(super) struct Scan<'r> {
    pub(super) rules: &'r PiiRules,
    pub(super) binary: BinaryParts,
    pub(super) report: PiiReport,
    /// The value is a caller's request: its push configs ([`SEALED`]) are the caller's own.
    request: bool,
}

impl<'r> Scan<'r> {
    /// A scan of anything but a caller's request: only ids are left unread.
    pub(super) fn new(rules: &'r PiiRules) -> Self {
        Scan {
            rules,
            binary: rules.binary_parts(),
            report: PiiReport::default(),
            request: false,
        }
    }

    /// A scan of a caller's request: its push configs are left unread too.
    pub(super) fn request(rules: &'r PiiRules) -> Self {
        Scan {
            request: true,
            ..Scan::new(rules)
        }
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

    /// Counts `findings` in `text` and returns the text with the `Redact` ones replaced, or
    /// `None` when nothing is to be replaced.
    pub(super) fn apply(&mut self, text: &str, findings: &[Finding]) -> Option<String> {
        self.apply_joined(text, &[], findings)?.pop()
    }

    /// [`Scan::apply`] over a text made of pieces starting at `seams` (`joined.rs`): the new text
    /// of each piece, or `None` when nothing is to be replaced. A redacted item's first piece
    /// gets its placeholder; its later pieces lose their share of it.
    pub(super) fn apply_joined(
        &mut self,
        text: &str,
        seams: &[usize],
        findings: &[Finding],
    ) -> Option<Vec<String>> {
        let mut redact: Vec<(&Finding, PiiKind)> = Vec::new();
        for f in findings {
            if let (PiiAction::Redact, kind) = self.decide(f) {
                redact.push((f, kind));
                self.report.redacted += 1;
            }
        }
        if redact.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(seams.len() + 1);
        let mut k = 0;
        for r in pieces(text.len(), seams) {
            let mut s = String::with_capacity(r.len());
            let mut copied = r.start;
            while let Some((f, kind)) = redact.get(k) {
                if f.range.start >= r.end {
                    break;
                }
                let (a, b) = (f.range.start.max(r.start), f.range.end.min(r.end));
                s.push_str(text.get(copied..a).unwrap_or(""));
                if f.range.start >= r.start {
                    s.push_str(&kind.placeholder());
                }
                copied = b;
                if f.range.end > r.end {
                    break;
                }
                k += 1;
            }
            s.push_str(text.get(copied..r.end).unwrap_or(""));
            out.push(s);
        }
        Some(out)
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

    /// Any value, by member name (see the module docs).
    pub(super) fn container(&mut self, v: &mut Value) {
        match v {
            Value::String(s) => self.string(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.container(i)),
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    self.member(key, child);
                }
            }
            _ => {}
        }
    }

    /// One member of an object, by its name (see the module docs).
    pub(super) fn member(&mut self, key: &str, child: &mut Value) {
        charge(1);
        match (key, child) {
            (k, _) if skipped(k, self.request) => {}
            ("parts", Value::Array(parts)) => self.parts(parts),
            ("metadata" | "data" | "params", child) => self.free(child),
            (_, child) => self.container(child),
        }
    }

    /// Free-form JSON (`data`, `metadata`, where extensions put their parameters, and a card
    /// extension's `params`): every string and every key.
    pub(super) fn free(&mut self, v: &mut Value) {
        match v {
            Value::String(s) => self.string(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.free(i)),
            Value::Object(map) => {
                let mut renamed = Vec::new();
                for (key, child) in map.iter_mut() {
                    self.free(child);
                    let findings = find(key);
                    if !findings.is_empty()
                        && let Some(new) = self.apply(key, &findings)
                    {
                        renamed.push((key.clone(), new));
                    }
                }
                rename(map, renamed);
            }
            _ => {}
        }
    }

    /// A `parts` list: runs of adjacent text parts read as one text, then every other member.
    pub(super) fn parts(&mut self, parts: &mut [Value]) {
        let is_text = |p: &Value| p.get("text").is_some_and(Value::is_string);
        let mut i = 0;
        while i < parts.len() {
            let run = parts[i..].iter().take_while(|p| is_text(p)).count();
            if run >= 2 {
                self.text_run(&mut parts[i..i + run]);
                for p in &mut parts[i..i + run] {
                    self.part(p, true);
                }
                i += run;
            } else {
                if let Some(p) = parts.get_mut(i) {
                    self.part(p, false);
                }
                i += 1;
            }
        }
    }

    /// Adjacent text parts, joined (`joined.rs`).
    fn text_run(&mut self, run: &mut [Value]) {
        let mut text = String::new();
        let mut seams = Vec::new();
        for p in run.iter() {
            if !text.is_empty() || !seams.is_empty() {
                seams.push(text.len());
            }
            text.push_str(p.get("text").and_then(Value::as_str).unwrap_or(""));
        }
        let findings = find_joined(&text, &seams);
        if findings.is_empty() {
            return;
        }
        if let Some(new) = self.apply_joined(&text, &seams, &findings) {
            for (p, s) in run.iter_mut().zip(new) {
                if let Some(t) = p.get_mut("text") {
                    *t = Value::String(s);
                }
            }
        }
    }

    /// One part (`text`, `data`, `url` or `raw`, with `filename`, `mediaType`, `metadata`);
    /// `text` left alone when `joined` (read with its neighbours).
    pub(super) fn part(&mut self, p: &mut Value, joined: bool) {
        let Value::Object(map) = p else {
            return self.container(p);
        };
        let textual = map
            .get("mediaType")
            .or_else(|| map.get("media_type"))
            .and_then(Value::as_str)
            .is_some_and(is_textual);
        for (key, child) in map.iter_mut() {
            match (key.as_str(), child) {
                ("text", _) if joined => {}
                ("raw", Value::String(s)) => self.raw(s, textual),
                ("data" | "metadata", v) => self.free(v),
                (k, _) if skipped(k, self.request) => {}
                (_, v) => self.container(v),
            }
        }
    }

    /// One `raw` member (base64); `textual`: its media type says it is text.
    pub(super) fn raw(&mut self, b64: &mut String, textual: bool) {
        if !textual {
            self.report.binary_parts += 1;
            match self.binary {
                BinaryParts::Pass | BinaryParts::Refuse => return,
                BinaryParts::ScanAsText => {}
            }
        }
        let Some(bytes) = decode(b64) else {
            self.report.unreadable += 1;
            return;
        };
        let new = if textual {
            let Ok(text) = String::from_utf8(bytes) else {
                self.report.unreadable += 1;
                return;
            };
            let findings = find(&text);
            if findings.is_empty() {
                return;
            }
            self.apply(&text, &findings).map(String::into_bytes)
        } else {
            self.binary_text(&bytes)
        };
        if let Some(new) = new {
            *b64 = encode(&new);
        }
    }

    /// Scans the UTF-8 stretches of `bytes`; the bytes with redactions applied, if any.
    fn binary_text(&mut self, bytes: &[u8]) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        let mut at = 0;
        for chunk in bytes.utf8_chunks() {
            let text = chunk.valid();
            let len = text.len() + chunk.invalid().len();
            let findings = find(text);
            if !findings.is_empty()
                && let Some(new) = self.apply(text, &findings)
            {
                let o = out.get_or_insert_with(|| bytes.get(..at).unwrap_or(&[]).to_vec());
                o.extend_from_slice(new.as_bytes());
                o.extend_from_slice(chunk.invalid());
            } else if let Some(o) = out.as_mut() {
                o.extend_from_slice(bytes.get(at..at + len).unwrap_or(&[]));
            }
            at += len;
        }
        out
    }
}

/// Renames the keys of `map` (`(old, new)`), a taken name getting `_` appended.
fn rename(map: &mut Map<String, Value>, renamed: Vec<(String, String)>) {
    for (old, mut new) in renamed {
        if let Some(v) = map.remove(&old) {
            while map.contains_key(&new) {
                new.push('_');
            }
            map.insert(new, v);
        }
    }
}

/// The bytes of text [`Scan::container`] would scan in `v` (a raw part counted decoded), found
/// without scanning: the same members, read only (`request`: as [`Scan::request`] reads them).
pub(super) fn measure(v: &Value, request: bool) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(|i| measure(i, request)).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(key, child)| match (key.as_str(), child) {
                (k, _) if skipped(k, request) => 0,
                ("parts", Value::Array(parts)) => {
                    parts.iter().map(|p| measure_part(p, request)).sum()
                }
                ("metadata" | "data" | "params", child) => measure_free(child),
                (_, child) => measure(child, request),
            })
            .sum(),
        _ => 0,
    }
}

fn measure_part(p: &Value, request: bool) -> usize {
    let Value::Object(map) = p else {
        return measure(p, request);
    };
    map.iter()
        .map(|(key, child)| match (key.as_str(), child) {
            ("raw", Value::String(s)) => raw_size(s),
            ("data" | "metadata", v) => measure_free(v),
            (k, _) if skipped(k, request) => 0,
            (_, v) => measure(v, request),
        })
        .sum()
}

fn measure_free(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(measure_free).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + measure_free(v)).sum(),
        _ => 0,
    }
}
