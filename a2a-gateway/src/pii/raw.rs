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
//! What reads them is `Scan::raw` (`walk.rs`); this file holds what it uses.
//!
//! [`PiiReport::unreadable`]: super::PiiReport::unreadable
//! [`PiiReport::binary_parts`]: super::PiiReport::binary_parts
//! [`BinaryParts`]: super::BinaryParts

use base64::Engine;

/// The bytes of a `raw` member (base64, padding optional), if it is base64.
pub(super) fn decode(b64: &str) -> Option<Vec<u8>> {
    lenient_base64().decode(b64.as_bytes()).ok()
}

/// `bytes` as a `raw` member: standard alphabet, padded.
pub(super) fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
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
