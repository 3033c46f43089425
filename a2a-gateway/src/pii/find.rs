//! [`super::find`]: the text normalised (`normalize.rs`), the detectors run on the normal form
//! (`detect.rs`), base64 strings that decode to text scanned as text, and every finding mapped
//! back to the span of the original it came from.
//!
//! Base64: a run of at least [`MIN_RUN`] characters of the base64 alphabets (standard or
//! URL-safe, `=` padding allowed) that no detector's finding overlaps is decoded; when the bytes
//! are UTF-8 text (no control characters but tab and line breaks) the text is scanned the same
//! way (normalised, its own base64 strings decoded, [`MAX_DEPTH`] levels at most), and the whole
//! run is one finding when anything was found in it: its kind is the strongest kind found, and
//! [`Finding::also`] names the others, so that each is counted and acted on. A run is checked on
//! its first 64 characters before it is decoded whole, so long runs that are not text (digits,
//! hashes, binary data) cost one look; decoded text is 3/4 of its run, so the levels together
//! cost less than four times the text.

use std::ops::Range;

use base64::Engine;

use super::detect::{self, strength};
use super::normalize::normalize;
use super::steps::charge;
use super::{Finding, PiiKind};

/// The shortest base64 run decoded (12 characters: 9 bytes, as much as `10.0.0.1` takes).
pub(super) const MIN_RUN: usize = 12;

/// Levels of base64 inside base64 decoded.
const MAX_DEPTH: u8 = 3;

/// See [`super::find`].
pub(super) fn find(text: &str) -> Vec<Finding> {
    find_at(text, 0)
}

fn find_at(text: &str, depth: u8) -> Vec<Finding> {
    let n = normalize(text);
    let norm: &str = &n.text;
    let mut found = detect::find(norm);
    if depth < MAX_DEPTH {
        let mut encoded = Vec::new();
        let mut k = 0;
        for run in runs(norm) {
            // Detector findings and runs are both in order: skip the findings before the run.
            while found.get(k).is_some_and(|f| f.range.end <= run.start) {
                k += 1;
            }
            if found.get(k).is_some_and(|f| f.range.start < run.end) {
                continue;
            }
            let Some(decoded) = norm.get(run.clone()).and_then(decode) else {
                continue;
            };
            let inner = find_at(&decoded, depth + 1);
            if let Some(f) = one_finding(run, inner) {
                encoded.push(f);
            }
        }
        if !encoded.is_empty() {
            found.extend(encoded);
            found.sort_by_key(|f| f.range.start);
        }
    }
    if n.is_identity() {
        return found;
    }
    // Back to the original; two findings that meet in one original character become one.
    let mut out: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        let range = n.original(f.range);
        match out.last_mut() {
            Some(prev) if range.start < prev.range.end => {
                prev.range.end = prev.range.end.max(range.end);
                prev.also.push(f.kind);
                prev.also.extend(f.also);
            }
            _ => out.push(Finding {
                kind: f.kind,
                range,
                also: f.also,
            }),
        }
    }
    out
}

/// The one finding of a base64 run whose decoded text holds `inner`.
fn one_finding(run: Range<usize>, inner: Vec<Finding>) -> Option<Finding> {
    let mut kinds: Vec<PiiKind> = inner
        .into_iter()
        .flat_map(|f| std::iter::once(f.kind).chain(f.also))
        .collect();
    let best = kinds.iter().copied().max_by_key(|k| strength(*k))?;
    if let Some(i) = kinds.iter().position(|k| *k == best) {
        kinds.swap_remove(i);
    }
    Some(Finding {
        kind: best,
        range: run,
        also: kinds,
    })
}

/// The bytes of the base64 alphabets (standard and URL-safe), as a table.
const B64: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_');
        c += 1;
    }
    t
};

fn is_b64(c: u8) -> bool {
    B64[usize::from(c)]
}

/// Runs of base64 characters (with their `=` padding) of at least [`MIN_RUN`] characters.
pub(super) fn runs(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let b = text.as_bytes();
    charge(b.len());
    let mut i = 0;
    std::iter::from_fn(move || {
        loop {
            while i < b.len() && !is_b64(b[i]) {
                i += 1;
            }
            if i >= b.len() {
                return None;
            }
            let start = i;
            while i < b.len() && is_b64(b[i]) {
                i += 1;
            }
            let body = i - start;
            let mut pad = 0;
            while pad < 2 && b.get(i) == Some(&b'=') {
                i += 1;
                pad += 1;
            }
            if body >= MIN_RUN {
                return Some(start..i);
            }
        }
    })
}

/// Whether decoded bytes read as text: no control characters but tab, CR and LF (bytes from
/// 0x80 are checked as UTF-8 afterwards).
fn text_like(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&c| c >= 0x20 && c != 0x7f || matches!(c, b'\t' | b'\n' | b'\r'))
}

/// The text a base64 run decodes to, if it is text.
pub(super) fn decode(run: &str) -> Option<String> {
    let body = run.trim_end_matches('=');
    let url = body.contains(['-', '_']);
    if url && body.contains(['+', '/']) {
        return None;
    }
    // A run of 4k+1 characters is no base64: read the first 4k.
    let body = body.get(..body.len() - usize::from(body.len() % 4 == 1))?;
    let engine = base64::engine::GeneralPurpose::new(
        if url {
            &base64::alphabet::URL_SAFE
        } else {
            &base64::alphabet::STANDARD
        },
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let head = body.get(..body.len().min(64) / 4 * 4)?;
    charge(head.len());
    if !engine.decode(head).is_ok_and(|b| text_like(&b)) {
        return None;
    }
    charge(2 * body.len());
    let bytes = engine.decode(body).ok()?;
    if !text_like(&bytes) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn kinds(text: &str) -> Vec<(PiiKind, &str, Vec<PiiKind>)> {
        find(text)
            .into_iter()
            .map(|f| (f.kind, &text[f.range], f.also))
            .collect()
    }

    #[test]
    fn base64_text_is_scanned_as_text() {
        let enc = b64("mail ann.lee@example.org or card 4111 1111 1111 1111");
        let text = format!("payload {enc} end");
        assert_eq!(
            kinds(&text),
            vec![(PiiKind::PaymentCard, enc.as_str(), vec![PiiKind::Email])]
        );
        // Twice encoded, unpadded, URL-safe.
        let twice = b64(&b64("ssn 123-45-6789"));
        assert_eq!(
            kinds(&twice),
            vec![(PiiKind::UsSsn, twice.as_str(), vec![])]
        );
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("ip 10.0.0.1 ok");
        assert_eq!(kinds(&url)[0].0, PiiKind::Ipv4);
    }

    #[test]
    fn base64_that_is_no_text_or_holds_nothing() {
        for t in [
            "0123456789012345678901234567890123456789",
            "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            "internationalization",
            &b64("nothing personal in here at all"),
            "AAAAAAAAAAAAAAAAAAAAAAAA",
        ] {
            assert_eq!(kinds(t), vec![], "{t}");
        }
    }

    #[test]
    fn findings_map_to_the_original_span() {
        let text = "call ＋４４\u{00A0}２０\u{200B} 7946 0958 now";
        let f = find(text);
        assert_eq!(f.len(), 1);
        assert_eq!(
            &text[f[0].range.clone()],
            "＋４４\u{00A0}２０\u{200B} 7946 0958"
        );
    }
}
