//! PII detection and redaction (issue 14): what governance uses to look at content.
//!
//! This module is pure: it finds PII in text and applies a workspace's [`PiiRules`] to A2A 1.0
//! JSON values (messages, tasks, stream events, push payloads). The request pipeline decides
//! where it runs and turns a block into the `a2a_pii_blocked` refusal; audit records keep only
//! the [`PiiReport`] (types and counts, never the PII itself).
//!
//! API contract (other modules code against exactly these items):
//! - [`PiiKind`], [`Finding`], [`find`]: detection in one string;
//! - [`PiiAction`], [`PiiRules`]: what a workspace does per type (serde form stored by the gateway);
//! - [`PiiReport`]: what was found, by type and count, whether something blocked;
//! - [`scan_value`]: one whole JSON value in place; [`scanned_bytes`]: how much of it a scan
//!   reads (the gateway's size limit and off-worker threshold weigh this);
//! - [`StreamScanner`]: the events of one stream, in order, with text carried across
//!   artifact-chunk boundaries.
//!
//! Added beside the contract: [`self_check`] (the detectors compiled; for a startup check),
//! [`MAX_HOLD`], [`StreamScanner::scan_event_with_owed`] (owed text before the event that ends
//! the turn) and [`StreamScanner::is_holding`].
//!
//! What is detected, how each kind is validated, the false-positive measures and the measured
//! cost are in `docs/pii.md`.

mod check;
mod checksum;
mod detect;
mod find;
mod hold;
mod joined;
mod normalize;
mod pem;
mod raw;
mod steps;
/// The scanner's step counter (feature `pii-steps`: the fuzz target's doubling check).
#[cfg(feature = "pii-steps")]
#[doc(hidden)]
pub use steps::take as take_steps;
mod stream;
mod walk;

#[cfg(test)]
mod corpus;
#[cfg(test)]
mod cost_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A type of personal or secret data the gateway detects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PiiKind {
    /// E-mail address.
    Email,
    /// Phone number (E.164 and common national forms).
    Phone,
    /// Payment card number (Luhn-checked).
    PaymentCard,
    /// IBAN (mod-97 checked).
    Iban,
    /// US social security number.
    UsSsn,
    /// IPv4 address.
    Ipv4,
    /// IPv6 address.
    Ipv6,
    /// API keys and tokens with known prefixes, JWTs, private key blocks.
    Secret,
}

impl PiiKind {
    /// Every kind, in a fixed order.
    pub const ALL: [PiiKind; 8] = [
        PiiKind::Email,
        PiiKind::Phone,
        PiiKind::PaymentCard,
        PiiKind::Iban,
        PiiKind::UsSsn,
        PiiKind::Ipv4,
        PiiKind::Ipv6,
        PiiKind::Secret,
    ];

    /// The type name used in rules, audit and placeholders (`EMAIL`, `PAYMENT_CARD`, ...).
    pub fn name(self) -> &'static str {
        match self {
            PiiKind::Email => "EMAIL",
            PiiKind::Phone => "PHONE",
            PiiKind::PaymentCard => "PAYMENT_CARD",
            PiiKind::Iban => "IBAN",
            PiiKind::UsSsn => "US_SSN",
            PiiKind::Ipv4 => "IPV4",
            PiiKind::Ipv6 => "IPV6",
            PiiKind::Secret => "SECRET",
        }
    }

    /// The text that replaces a redacted finding, e.g. `[REDACTED:EMAIL]`.
    pub fn placeholder(self) -> String {
        format!("[REDACTED:{}]", self.name())
    }
}

/// One detected item: its kind and its byte range in the scanned text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What was found (of several items in one range, the strongest kind).
    pub kind: PiiKind,
    /// Byte range in the text (always on `char` boundaries): the span of the original text the
    /// item came from, characters removed by normalisation inside it included.
    pub range: Range<usize>,
    /// More items in the same range, each counted and acted on with `kind`: the other items of
    /// a base64 string whose decoded text holds several, or of items whose normal forms meet in
    /// one character of the original. Usually empty.
    pub also: Vec<PiiKind>,
}

impl Finding {
    /// One item of `kind` at `range`.
    pub fn new(kind: PiiKind, range: Range<usize>) -> Finding {
        Finding {
            kind,
            range,
            also: Vec::new(),
        }
    }

    /// Every item of the finding: `kind`, then [`Finding::also`].
    pub fn kinds(&self) -> impl Iterator<Item = PiiKind> + '_ {
        std::iter::once(self.kind).chain(self.also.iter().copied())
    }
}

/// Finds PII in `text`: non-overlapping findings sorted by start.
///
/// The text is normalised first (Unicode NFKC per character, format and zero-width characters
/// removed, digits of every script, dashes, spaces and dots folded to ASCII, `%XX` escapes
/// decoded), and base64 strings that decode to text are scanned as text; each finding's range
/// is the span of the original text it came from. What each kind matches and how it is
/// validated is in `docs/pii.md`; when two candidates overlap, the more specific kind wins
/// (secret, then card and IBAN, e-mail, SSN, IP addresses, phone), then the longer. ASCII text
/// without `%XX` escapes is not copied.
pub fn find(text: &str) -> Vec<Finding> {
    find::find(text)
}

pub use detect::self_check;
pub use stream::MAX_HOLD;

/// What a workspace does with one kind of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PiiAction {
    /// Count it in the audit record and let the content through unchanged.
    #[default]
    Record,
    /// Replace it with its [`PiiKind::placeholder`].
    Redact,
    /// Refuse the request (`a2a_pii_blocked`), end the stream, or drop the push notification.
    Block,
}

/// A workspace's PII rules: one action per kind, the action for kinds not listed, and what is
/// done with binary inline files.
///
/// Serde form: `{"default_action": "record", "actions": {"EMAIL": "redact", "SECRET": "block"},
/// "binary_parts": "refuse"}` (`binary_parts` optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiiRules {
    /// Action for kinds not in [`PiiRules::actions`].
    #[serde(default)]
    pub default_action: PiiAction,
    /// Per-kind actions.
    #[serde(default)]
    pub actions: BTreeMap<PiiKind, PiiAction>,
    /// What to do with `raw` parts whose media type is not textual; unset: see
    /// [`PiiRules::binary_parts`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_parts: Option<BinaryParts>,
}

impl PiiRules {
    /// The action for `kind`.
    pub fn action(&self, kind: PiiKind) -> PiiAction {
        self.actions
            .get(&kind)
            .copied()
            .unwrap_or(self.default_action)
    }

    /// What is done with binary `raw` parts: the setting, else `refuse` when some kind is
    /// blocked (a part that cannot be read as text must not carry a blocked item through) and
    /// `scan_as_text` otherwise.
    pub fn binary_parts(&self) -> BinaryParts {
        self.binary_parts.unwrap_or_else(|| {
            let blocks = self.default_action == PiiAction::Block
                || self.actions.values().any(|a| *a == PiiAction::Block);
            if blocks {
                BinaryParts::Refuse
            } else {
                BinaryParts::ScanAsText
            }
        })
    }
}

/// What a workspace does with an inline file (`raw` part) whose media type is not textual.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryParts {
    /// Decode it and scan every stretch of its bytes that is UTF-8 text, as text.
    ScanAsText,
    /// Refuse the content (`a2a_pii_blocked`, type `BINARY`).
    Refuse,
    /// Forward it unread (the hop's evidence says so).
    Pass,
}

impl BinaryParts {
    /// The setting's name (`scan_as_text`, `refuse`, `pass`), as in evidence.
    pub fn name(self) -> &'static str {
        match self {
            BinaryParts::ScanAsText => "scan_as_text",
            BinaryParts::Refuse => "refuse",
            BinaryParts::Pass => "pass",
        }
    }
}

/// What a scan found: counts by kind (never the PII itself), how many were redacted, and the
/// first kind whose action is [`PiiAction::Block`], if any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PiiReport {
    /// Findings by kind.
    pub counts: BTreeMap<PiiKind, u32>,
    /// Findings replaced by a placeholder.
    pub redacted: u32,
    /// Set when a finding's action is `Block`: the content must not be forwarded.
    pub blocked: Option<PiiKind>,
    /// Textual raw parts (`text/*`, JSON, XML, YAML) that could not be read (not base64, or not
    /// UTF-8), and binary ones scanned as text that are not base64: they cannot be checked, so
    /// the content must be refused, never passed on unread.
    pub unreadable: u32,
    /// Raw parts whose media type is not textual, handled per [`PiiRules::binary_parts`] (under
    /// `refuse`, the content must be refused).
    pub binary_parts: u32,
}

impl PiiReport {
    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Adds `other` into `self` (the first block wins).
    pub fn merge(&mut self, other: &PiiReport) {
        for (kind, n) in &other.counts {
            *self.counts.entry(*kind).or_default() += n;
        }
        self.redacted += other.redacted;
        self.unreadable += other.unreadable;
        self.binary_parts += other.binary_parts;
        if self.blocked.is_none() {
            self.blocked = other.blocked;
        }
    }
}

/// Scans one A2A 1.0 JSON value in place and applies `rules`.
///
/// Reads every string of the value, wherever it sits (a Message, a Task with history and
/// artifacts, a stream event, a push payload, a peer's error, a push config answer), keys of
/// `data` and `metadata` included, except ids; adjacent text parts are read as one text;
/// inline `raw` files are decoded (textual ones scanned as text, binary ones per
/// [`PiiRules::binary_parts`]). When [`PiiReport::blocked`] is set, or a raw part was
/// unreadable or refused, the value may be partly rewritten and must not be forwarded.
///
/// A caller's request is scanned with [`scan_request`]. The exact rules are in the `walk` and
/// `raw` module docs (and `docs/pii.md`).
pub fn scan_value(value: &mut Value, rules: &PiiRules) -> PiiReport {
    let mut scan = walk::Scan::new(rules);
    scan.container(value);
    scan.report
}

/// [`scan_value`] of a caller's request params (SendMessage params and the like): its push
/// notification configs (`configuration.taskPushNotificationConfig`, 0.3
/// `pushNotificationConfig`) are the caller's own webhook, sealed before the peer sees them,
/// and are left unread too.
pub fn scan_request(value: &mut Value, rules: &PiiRules) -> PiiReport {
    let mut scan = walk::Scan::request(rules);
    scan.container(value);
    scan.report
}

/// The bytes of text [`scan_value`] would look at in `value` (every string it reads, keys of
/// `data` and `metadata` included, inline `raw` parts counted decoded), counted
/// without scanning: what a caller weighs before a scan (the gateway runs a large scan off its
/// async workers).
pub fn scanned_bytes(value: &Value) -> usize {
    walk::measure(value, false)
}

/// The bytes of text [`scan_request`] would look at in a request: what the gateway holds
/// against its `max_scanned_bytes` before scanning.
pub fn request_bytes(value: &Value) -> usize {
    walk::measure(value, true)
}

/// Scans the events of one stream in order, so that an item split across two artifact chunks
/// (`append: true` updates of the same artifact) is still found and redacted.
///
/// It may hold back the tail of a chunk's text (at most [`MAX_HOLD`] bytes per artifact) and
/// prepend it to the next chunk of the same artifact; [`StreamScanner::flush`] gives the events
/// still owed when the stream ends. The exact rules are in the `stream` module docs and in
/// `docs/pii.md`, "Streams".
///
/// ```
/// use a2a_gateway::pii::{PiiAction, PiiRules, StreamScanner};
/// use serde_json::json;
///
/// let rules = PiiRules { default_action: PiiAction::Redact, ..PiiRules::default() };
/// let mut scanner = StreamScanner::new(rules);
/// let chunk = |text: &str, append: bool| json!({"artifactUpdate": {
///     "taskId": "t", "contextId": "c", "append": append,
///     "artifact": {"artifactId": "a", "parts": [{"text": text}]}}});
/// let mut first = chunk("write to ann.lee@exa", false);
/// let mut second = chunk("mple.org today", true);
/// scanner.scan_event(&mut first);
/// let report = scanner.scan_event(&mut second);
/// assert_eq!(first["artifactUpdate"]["artifact"]["parts"][0]["text"], "write to ");
/// assert_eq!(second["artifactUpdate"]["artifact"]["parts"][0]["text"], "[REDACTED:EMAIL] ");
/// assert_eq!(report.redacted, 1);
/// // "today" is held (it could begin an item); the stream's end releases it.
/// let (owed, _) = scanner.flush();
/// assert_eq!(owed[0]["artifactUpdate"]["artifact"]["parts"][0]["text"], "today");
/// ```
#[derive(Debug, Default)]
pub struct StreamScanner {
    rules: PiiRules,
    held: Vec<stream::Held>,
}

impl StreamScanner {
    /// A scanner applying `rules`.
    pub fn new(rules: PiiRules) -> Self {
        StreamScanner {
            rules,
            held: Vec::new(),
        }
    }

    /// Scans one 1.0 stream event (`StreamResponse` form: `task`, `message`, `statusUpdate` or
    /// `artifactUpdate` member) in place.
    ///
    /// An `artifactUpdate` may come out with the end of its last text part held back; the held
    /// text goes out with the next chunk of that artifact, or from [`StreamScanner::flush`].
    pub fn scan_event(&mut self, event: &mut Value) -> PiiReport {
        self.scan_one(event)
    }

    /// Like [`StreamScanner::scan_event`], and when `event` ends the turn (a `message`, or a
    /// `task`/`statusUpdate` in a terminal or interrupted state) also returns the events owed
    /// for held text ([`StreamScanner::flush`]), to send *before* `event`. The report covers
    /// both.
    pub fn scan_event_with_owed(&mut self, event: &mut Value) -> (Vec<Value>, PiiReport) {
        let (owed, mut report) = if stream::ends_turn(event) {
            self.flush()
        } else {
            (Vec::new(), PiiReport::default())
        };
        report.merge(&self.scan_one(event));
        (owed, report)
    }

    /// True when text is held back for some artifact.
    pub fn is_holding(&self) -> bool {
        self.held.iter().any(|h| !h.is_empty())
    }

    /// Events (1.0 `StreamResponse` form) for text still held back, to send before the stream
    /// ends; empty when nothing is held. Each is an `artifactUpdate` with `append: true` and the
    /// artifact's `taskId`, `contextId` and `artifactId`, its text scanned and rules applied.
    pub fn flush(&mut self) -> (Vec<Value>, PiiReport) {
        self.flush_held()
    }
}
