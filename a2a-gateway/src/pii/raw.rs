//! `raw` parts (inline files, base64 in the 1.0 JSON form).
//!
//! Textual ones (`mediaType` `text/*`, JSON, XML, YAML, `+json`, `+xml`) are decoded, scanned
//! as text and re-encoded (standard alphabet, padded) only when something was redacted; one that
//! is not valid base64 or not UTF-8 cannot be checked: it is counted in
//! [`PiiReport::unreadable`] and the gateway refuses the content.
//!
//! Others (binary, or without a media type) follow the workspace's [`BinaryParts`]:
//! - `scan_as_text`: decoded, and every stretch of its bytes that is UTF-8 is scanned as text
//!   (what `strings` would show); a redacted item's bytes are replaced by the placeholder and
//!   the part re-encoded; not valid base64: unreadable, as above;
//! - `refuse`: the content is refused (`a2a_pii_blocked`, type `BINARY`), never passed unread;
//! - `pass`: forwarded as it came, unread.
//!
//! Every binary part met is counted in [`PiiReport::binary_parts`], so the hop's evidence
//! records which of the three was done.
//!
//! [`PiiReport::unreadable`]: super::PiiReport::unreadable
//! [`PiiReport::binary_parts`]: super::PiiReport::binary_parts

use base64::Engine;

use super::walk::Scan;
use super::{BinaryParts, find};

impl Scan<'_> {
    /// One `raw` member (base64); `textual`: its media type says it is text.
    pub(super) fn raw(&mut self, b64: &mut String, textual: bool) {
        if !textual {
            self.report.binary_parts += 1;
            match self.binary {
                BinaryParts::Pass | BinaryParts::Refuse => return,
                BinaryParts::ScanAsText => {}
            }
        }
        let Ok(bytes) = lenient_base64().decode(b64.as_bytes()) else {
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
            *b64 = base64::engine::general_purpose::STANDARD.encode(new);
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

/// The bytes a `raw` member's scan reads: its decoded size.
pub(super) fn raw_size(b64: &str) -> usize {
    b64.len() / 4 * 3
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
