//! [`StreamScanner`]: scanning the events of one stream with text carried across artifact
//! chunks.
//!
//! Exact behaviour, for `artifactUpdate` events (every other event goes through
//! [`scan_value`] unchanged in meaning):
//! - Text parts of one artifact (same `taskId` and `artifactId`) are treated as one text in
//!   order: adjacent text parts of a chunk are joined (`joined.rs`), and the end of a chunk's
//!   last text goes on in the next `append: true` chunk.
//! - When a chunk is not the last (`lastChunk` absent or false) and its last part is a text
//!   part, the scanner holds back the end of that text that could be the start of an item
//!   continued in the next chunk: the trailing run of characters items are made of, as the
//!   detectors see them after normalisation (letters, digits of any script,
//!   `@ . _ % + - : / ( ) = [ ] '` and look-alikes, a space of any kind between digits,
//!   capitals, dashes or parentheses, as in `4111 1111`, `GB82 WEST` or `4111 - 1111`), at most
//!   [`MAX_HOLD`] bytes as the detectors see them (removed characters such as zero-width spaces
//!   held without counting) and `HOLD_RAW` (1 KiB, `hold.rs`) bytes of the original, plus a
//!   `-----BEGIN` line begun in the last 64 bytes. A finding that overlaps that tail and starts
//!   within the last `MAX_HOLD` bytes (so counted) is held whole; one that starts earlier is
//!   applied now. Nothing is held when the text ends in a space or other separator. The part
//!   is forwarded with the text before the held tail (possibly empty).
//! - The held text is prepended to the first part of the next `append: true` chunk of the same
//!   artifact (into it when it is a text part, else as a new text part in front) and scanned
//!   with it; it is released in that event when it is the `lastChunk`.
//! - A chunk with `append` false replaces the artifact: held text of the replaced content is
//!   dropped, as a client would drop it.
//! - A private key block begun in one chunk without its `-----END` line: the rest of that
//!   text is the finding, and the following chunks' text is part of it up to and including
//!   the `-----END ... PRIVATE KEY-----` line; the last 64 bytes of an open block's text are held
//!   back (inside the redaction) so that an `-----END` line split by a boundary is still seen.
//! - A token secret (API key, JWT) too long to hold that reaches the end of a chunk's text is
//!   redacted there, and the leading run of token characters (`A-Z a-z 0-9 _ - .`) of the next
//!   chunk's text is redacted as its continuation. A JWT begun more than `MAX_HOLD` bytes before
//!   the end and not complete yet counts as such a token once its header (`eyJ...`, decoding to
//!   JSON with `alg`) and a `.` have arrived.
//! - Every finding forwarded is one placeholder, so an item split this way comes out as two
//!   adjacent placeholders of its kind and is counted twice.
//! - [`StreamScanner::flush`] scans and returns what is still held as `artifactUpdate` events
//!   (`append: true`, no `lastChunk`, the artifact's `taskId`, `contextId`, `artifactId`), one
//!   per artifact in the order their text was last held. [`StreamScanner::scan_event_with_owed`]
//!   does the same before an event that ends the turn, so the owed text goes out before it.
//!
//! Reports count each finding once: held text is counted when it is finally scanned.
//!
//! With rules that only record (no kind redacts or blocks) nothing forwarded changes: every
//! chunk goes out as it came, the held tail is a copy kept only to count items split across
//! chunks, and `flush` returns no events.

use serde_json::{Map, Value, json};

use super::hold::hold_start;
use super::joined::{find_joined, pieces};
use super::pem::pem_end;
use super::walk::Scan;
use super::{Finding, PiiAction, PiiKind, PiiReport, PiiRules, scan_value};

/// The most text held back per artifact, in bytes.
pub const MAX_HOLD: usize = 128;

/// Bytes of an open private key block's body held back so that its `-----END` line is found
/// when a chunk boundary splits it.
const PEM_TAIL: usize = 64;

/// Text held back for one artifact.
#[derive(Debug)]
pub(super) struct Held {
    task_id: Option<String>,
    context_id: Option<String>,
    artifact_id: String,
    text: String,
    /// A secret the previous text ended inside of.
    open: Open,
}

/// A secret that reached the end of the previous text of the artifact, so the start of the
/// next text continues it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Open {
    /// Nothing open.
    #[default]
    No,
    /// A private key block whose `-----END ... PRIVATE KEY-----` line has not come yet.
    Pem,
    /// A token (key or JWT) that ran to the end of the text: the next text's leading run of
    /// token characters (`A-Z a-z 0-9 _ - .`) is part of it.
    Token,
}

fn is_text(p: &Value) -> bool {
    p.get("text").is_some_and(Value::is_string)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'
}

fn get_str(map: &Map<String, Value>, camel: &str, snake: &str) -> Option<String> {
    map.get(camel)
        .or_else(|| map.get(snake))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn get_bool(map: &Map<String, Value>, camel: &str, snake: &str) -> bool {
    map.get(camel)
        .or_else(|| map.get(snake))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Whether `event` ends the turn: a `message`, a `task` or `statusUpdate` in a terminal or
/// interrupted state.
pub(super) fn ends_turn(event: &Value) -> bool {
    let state_ends = |status: Option<&Value>| {
        status
            .and_then(|s| s.get("state"))
            .and_then(Value::as_str)
            .is_some_and(|s| {
                matches!(
                    s,
                    "TASK_STATE_COMPLETED"
                        | "TASK_STATE_FAILED"
                        | "TASK_STATE_CANCELED"
                        | "TASK_STATE_REJECTED"
                        | "TASK_STATE_INPUT_REQUIRED"
                        | "TASK_STATE_AUTH_REQUIRED"
                )
            })
    };
    event.get("message").is_some()
        || event
            .get("task")
            .is_some_and(|t| state_ends(t.get("status")))
        || event
            .get("statusUpdate")
            .or_else(|| event.get("status_update"))
            .is_some_and(|u| state_ends(u.get("status")))
}

/// Findings in `text` (pieces starting at `seams`, see `joined.rs`), which may continue a secret
/// left open by the previous text, and whether a private key block is still open at its end.
fn findings_in(text: &str, seams: &[usize], open: Open) -> (Vec<Finding>, bool) {
    let mut findings = Vec::new();
    let mut from = 0;
    let end = match open {
        Open::No => Some(0),
        Open::Pem => pem_end(text, 0),
        Open::Token => Some(
            text.bytes()
                .position(|b| !is_token_byte(b))
                .unwrap_or(text.len()),
        ),
    };
    if open != Open::No {
        from = end.unwrap_or(text.len());
        if from > 0 {
            findings.push(Finding::new(PiiKind::Secret, 0..from));
        }
        if end.is_none() {
            return (findings, true);
        }
    }
    let rest = text.get(from..).unwrap_or("");
    let rest_seams: Vec<usize> = seams
        .iter()
        .filter(|s| **s > from)
        .map(|s| s - from)
        .collect();
    let found = find_joined(rest, &rest_seams);
    let pem_open = found.last().is_some_and(|f| {
        f.kind == PiiKind::Secret
            && f.range.end == rest.len()
            && rest
                .get(f.range.clone())
                .is_some_and(|s| s.starts_with("-----BEGIN") && pem_end(s, 0).is_none())
    });
    findings.extend(found.into_iter().map(|f| Finding {
        range: f.range.start + from..f.range.end + from,
        ..f
    }));
    (findings, pem_open)
}

/// A JWT that started more than [`MAX_HOLD`] bytes before the end of `text` and is not complete
/// yet (no finding covers it): its trailing run of token characters, when the run starts with
/// a header that decodes to JSON with `alg`.
fn partial_jwt(text: &str, findings: &[Finding]) -> Option<Finding> {
    let b = text.as_bytes();
    let start = b
        .iter()
        .rposition(|&c| !is_token_byte(c))
        .map_or(0, |i| i + 1);
    if text.len() - start <= MAX_HOLD || findings.last().is_some_and(|f| f.range.end > start) {
        return None;
    }
    let run = text.get(start..)?;
    let header = run.strip_prefix("eyJ").and(run.split_once('.'))?.0;
    super::check::jwt_header_ok(header).then_some(Finding::new(PiiKind::Secret, start..text.len()))
}

/// True when no kind's action changes or stops content.
fn records_only(rules: &PiiRules) -> bool {
    rules.default_action == PiiAction::Record
        && rules.actions.values().all(|a| *a == PiiAction::Record)
}

/// Where to cut the last text of a chunk that is not the last chunk: the start of the tail held
/// back. May shorten the finding of an open private key block to the cut.
fn cut_for(text: &str, findings: &mut Vec<Finding>, open: Open, pem_open: bool) -> usize {
    if pem_open {
        // Keep the end of the key body, so that a split `-----END` line is found.
        let mut c = text.len().saturating_sub(PEM_TAIL);
        while !text.is_char_boundary(c) {
            c += 1;
        }
        if let Some(f) = findings.last_mut() {
            if f.range.start >= c {
                c = f.range.start;
            } else {
                f.range.end = c;
            }
        }
        return c;
    }
    // The continuation of an open secret is never held back.
    let continued = match (open, findings.first()) {
        (Open::No, _) | (_, None) => 0,
        (_, Some(f)) => f.range.end,
    };
    if let Some(jwt) = partial_jwt(text, findings) {
        findings.push(jwt);
    }
    hold_start(text, findings).max(continued)
}

/// What is open at the end of `text` (cut at `cut`) for the next text of the artifact.
fn open_after(text: &str, findings: &[Finding], pem_open: bool, cut: usize) -> Open {
    if pem_open {
        Open::Pem
    } else if cut == text.len()
        && !text.is_empty()
        && findings
            .last()
            .is_some_and(|f| f.kind == PiiKind::Secret && f.range.end == text.len())
    {
        Open::Token
    } else {
        Open::No
    }
}

impl super::StreamScanner {
    /// One `artifactUpdate` member.
    pub(super) fn artifact_update(&mut self, update: &mut Map<String, Value>) -> PiiReport {
        let super::StreamScanner { rules, held: state } = self;
        let mut scan = Scan::new(rules);
        let task_id = get_str(update, "taskId", "task_id");
        let context_id = get_str(update, "contextId", "context_id");
        let append = get_bool(update, "append", "append");
        let last = get_bool(update, "lastChunk", "last_chunk");
        // Every member but the artifact's parts is read as in any value.
        for (key, child) in update.iter_mut() {
            if key != "artifact" {
                scan.member(key, child);
            }
        }
        let Some(Value::Object(artifact)) = update.get_mut("artifact") else {
            return scan.report;
        };
        for (key, child) in artifact.iter_mut() {
            if key != "parts" {
                scan.member(key, child);
            }
        }
        let Some(artifact_id) = get_str(artifact, "artifactId", "artifact_id") else {
            // Not a valid 1.0 chunk: scanned on its own, nothing carried.
            if let Some(Value::Array(parts)) = artifact.get_mut("parts") {
                scan.parts(parts);
            }
            return scan.report;
        };
        let carry = state
            .iter()
            .position(|h| h.artifact_id == artifact_id && h.task_id == task_id)
            .map(|i| state.remove(i))
            .filter(|_| append);
        let mut open = carry.as_ref().map_or(Open::No, |h| h.open);
        let mut carry_text = carry.map(|h| h.text).filter(|t| !t.is_empty());
        // Rules that only record never change what is forwarded: the held text is then a copy
        // kept for detection, and the chunks go out as they came.
        let passthrough = records_only(rules);
        let parts = artifact
            .entry("parts")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(parts) = parts else {
            return scan.report;
        };
        if !passthrough && let Some(t) = carry_text.take() {
            match parts.first_mut().and_then(|p| p.get_mut("text")) {
                Some(Value::String(s)) => s.insert_str(0, &t),
                _ => parts.insert(0, json!({ "text": t })),
            }
        }
        let n = parts.len();
        let mut held = String::new();
        let mut k = 0;
        while k < n {
            let run = parts[k..].iter().take_while(|p| is_text(p)).count();
            if run == 0 {
                if let Some(t) = carry_text.take() {
                    let (findings, _) = findings_in(&t, &[], open);
                    scan.apply(&t, &findings);
                }
                if let Some(p) = parts.get_mut(k) {
                    scan.part(p, false);
                }
                k += 1;
                continue;
            }
            let run_parts = &mut parts[k..k + run];
            // The run's text parts as one text (after the held text, when only recording).
            let mut text = carry_text.take().unwrap_or_default();
            let mut seams = Vec::new();
            for (j, p) in run_parts.iter().enumerate() {
                if j > 0 {
                    seams.push(text.len());
                }
                text.push_str(p.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            let (mut findings, pem_open) = findings_in(&text, &seams, open);
            let cut = if k + run < n || last {
                text.len()
            } else {
                cut_for(&text, &mut findings, open, pem_open)
            };
            open = open_after(&text, &findings, pem_open, cut);
            let keep: Vec<Finding> = findings
                .into_iter()
                .filter(|f| f.range.end <= cut)
                .collect();
            held = text.get(cut..).unwrap_or("").to_owned();
            let head = text.get(..cut).unwrap_or("");
            let seams: Vec<usize> = seams.into_iter().map(|s| s.min(cut)).collect();
            let redacted = scan.apply_joined(head, &seams, &keep);
            if !passthrough {
                let texts = redacted.unwrap_or_else(|| {
                    pieces(cut, &seams)
                        .map(|r| head.get(r).unwrap_or("").to_owned())
                        .collect()
                });
                for (p, t) in run_parts.iter_mut().zip(texts) {
                    if let Some(v) = p.get_mut("text") {
                        *v = Value::String(t);
                    }
                }
            }
            for p in run_parts.iter_mut() {
                scan.part(p, true);
            }
            k += run;
        }
        if !last && (!held.is_empty() || open != Open::No) {
            state.push(Held {
                task_id,
                context_id,
                artifact_id,
                text: held,
                open,
            });
        }
        scan.report
    }

    /// See [`super::StreamScanner::flush`].
    pub(super) fn flush_held(&mut self) -> (Vec<Value>, PiiReport) {
        let mut scan = Scan::new(&self.rules);
        let mut events = Vec::new();
        for h in std::mem::take(&mut self.held) {
            if h.text.is_empty() {
                continue;
            }
            let (findings, _) = findings_in(&h.text, &[], h.open);
            let redacted = scan.apply(&h.text, &findings);
            if records_only(&self.rules) {
                // Already forwarded as it came: only counted.
                continue;
            }
            let text = redacted.unwrap_or_else(|| h.text.clone());
            let mut update = Map::new();
            if let Some(t) = h.task_id {
                update.insert("taskId".into(), Value::String(t));
            }
            if let Some(c) = h.context_id {
                update.insert("contextId".into(), Value::String(c));
            }
            update.insert(
                "artifact".into(),
                json!({"artifactId": h.artifact_id, "parts": [{"text": text}]}),
            );
            update.insert("append".into(), Value::Bool(true));
            events.push(json!({ "artifactUpdate": update }));
        }
        (events, scan.report)
    }

    /// See [`super::StreamScanner::scan_event`].
    pub(super) fn scan_one(&mut self, event: &mut Value) -> PiiReport {
        let key = if event.get("artifactUpdate").is_some() {
            "artifactUpdate"
        } else {
            "artifact_update"
        };
        match event.get_mut(key) {
            Some(Value::Object(update)) => self.artifact_update(update),
            _ => scan_value(event, &self.rules),
        }
    }
}

impl Held {
    /// Nothing to release.
    pub(super) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}
