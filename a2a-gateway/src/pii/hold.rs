//! Where a stream chunk's text is cut: the tail that could begin an item continued in the next
//! chunk is held back (`stream.rs` says when), measured as the detectors see it after
//! normalisation.

use super::normalize::{Mapped, map_char};
use super::{Finding, MAX_HOLD};

/// Held back at most, in bytes of the original, whatever normalisation removes from it.
/// ([`MAX_HOLD`] counts the bytes the detectors see.)
pub(super) const HOLD_RAW: usize = 1024;

/// How the detectors see `c` (the first character of its normal form), or `None` for a
/// character normalisation removes (format and zero-width characters, combining marks).
fn seen_as(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(c);
    }
    match map_char(c, true) {
        Mapped::Same => Some(c),
        Mapped::Drop => None,
        Mapped::To(s) => s.chars().next(),
    }
}

/// The size of `s` as held: bytes of what the detectors see, removed characters not counted.
fn seen_len(s: &str) -> usize {
    s.chars().filter_map(seen_as).map(char::len_utf8).sum()
}

/// The character the detectors see before byte `i` of `text` (removed characters skipped, at
/// most 16 of them).
fn seen_before(text: &str, i: usize) -> Option<char> {
    text.get(..i)?.chars().rev().take(16).find_map(seen_as)
}

/// Where to cut `text` so that the tail that could begin an unfinished item is held.
pub(super) fn hold_start(text: &str, findings: &[Finding]) -> usize {
    let len = text.len();
    let mut cut = len;
    let mut after: Option<char> = None;
    let mut seen = 0;
    for (i, c) in text.char_indices().rev() {
        if len - i > HOLD_RAW {
            break;
        }
        // A removed character belongs to whatever surrounds it.
        let Some(v) = seen_as(c) else {
            cut = i;
            continue;
        };
        let item = v.is_alphanumeric()
            || "@._%+-:/()=[]'".contains(v)
            || v == ' '
                && after.is_none_or(|a| {
                    a.is_ascii_digit() || a.is_ascii_uppercase() || "(+-".contains(a)
                })
                && seen_before(text, i).is_some_and(|b| {
                    b.is_ascii_digit() || b.is_ascii_uppercase() || b == ')' || b == '-'
                });
        seen += v.len_utf8();
        if !item || seen > MAX_HOLD {
            break;
        }
        cut = i;
        after = Some(v);
    }
    // A key header whose label and closing dashes have not all arrived.
    let window_start = (len.saturating_sub(64)..=len)
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(len);
    if let Some(p) = text.get(window_start..).and_then(|w| w.rfind("-----BEGIN")) {
        let p = window_start + p;
        let header_done = text.get(p + 10..).is_some_and(|r| r.contains("-----"));
        if !header_done {
            cut = cut.min(p);
        }
    }
    for f in findings {
        if f.range.end <= cut {
            continue;
        }
        if f.range.start < cut {
            let tail = text.get(f.range.start..).unwrap_or("");
            cut = if tail.len() <= HOLD_RAW && seen_len(tail) <= MAX_HOLD {
                f.range.start
            } else {
                f.range.end
            };
        }
        break;
    }
    cut
}
