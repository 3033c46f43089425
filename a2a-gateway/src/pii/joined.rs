//! Text read across pieces: adjacent text parts of one message or artifact (and, in a stream,
//! the chunks of one artifact) are one text to the reader, so an item split between two of them
//! is still an item (issue 39).
//!
//! [`find_joined`] finds items in the pieces joined (no separator: the way a client shows
//! adjacent parts) and in each piece alone (a boundary may also be where an item stops: `call
//! me at` then `+44 20 7946 0958`), keeping the stronger, then longer, of overlapping findings.
//! [`super::walk::Scan::apply_joined`] applies the rules to the pieces: a redacted item's first
//! piece gets the placeholder, its later pieces lose their share of it, and it is counted once.

use std::collections::BTreeMap;
use std::ops::Range;

use super::detect::strength;
use super::steps::charge;
use super::{Finding, find};

/// Findings in `text`, made of pieces that start at `seams` (byte offsets, increasing, after
/// 0; empty for one piece).
pub(super) fn find_joined(text: &str, seams: &[usize]) -> Vec<Finding> {
    let mut all = find(text);
    if seams.is_empty() {
        return all;
    }
    for r in pieces(text.len(), seams) {
        let Some(piece) = text.get(r.clone()) else {
            continue;
        };
        all.extend(find(piece).into_iter().map(|f| Finding {
            range: f.range.start + r.start..f.range.end + r.start,
            ..f
        }));
    }
    resolve(all)
}

/// The byte ranges of the pieces of a text of `len` bytes with `seams`.
pub(super) fn pieces(len: usize, seams: &[usize]) -> impl Iterator<Item = Range<usize>> + '_ {
    let starts = std::iter::once(0).chain(seams.iter().copied());
    let ends = seams.iter().copied().chain(std::iter::once(len));
    starts.zip(ends).map(|(s, e)| s..e.max(s))
}

/// Non-overlapping findings, the stronger (then longer, then earlier) kept; sorted by start.
fn resolve(mut all: Vec<Finding>) -> Vec<Finding> {
    charge(all.len());
    all.sort_by(|a, b| {
        strength(b.kind)
            .cmp(&strength(a.kind))
            .then(b.range.len().cmp(&a.range.len()))
            .then(a.range.start.cmp(&b.range.start))
    });
    let mut kept: BTreeMap<usize, Finding> = BTreeMap::new();
    for f in all {
        let overlaps = kept
            .range(..f.range.end)
            .next_back()
            .is_some_and(|(_, k)| k.range.end > f.range.start);
        if !overlaps {
            kept.insert(f.range.start, f);
        }
    }
    kept.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pii::PiiKind;

    fn kinds(parts: &[&str]) -> Vec<(PiiKind, String)> {
        let text = parts.concat();
        let mut seams = Vec::new();
        let mut at = 0;
        for p in &parts[..parts.len() - 1] {
            at += p.len();
            seams.push(at);
        }
        find_joined(&text, &seams)
            .into_iter()
            .map(|f| (f.kind, text[f.range].to_owned()))
            .collect()
    }

    #[test]
    fn split_items_and_items_a_seam_separates() {
        assert_eq!(
            kinds(&["mail ann.lee@exa", "mple.org"]),
            vec![(PiiKind::Email, "ann.lee@example.org".into())]
        );
        assert_eq!(
            kinds(&["call me at", "+44 20 7946 0958"]),
            vec![(PiiKind::Phone, "+44 20 7946 0958".into())]
        );
        assert_eq!(
            kinds(&["4111 1111 ", "1111 1111", " and 10.0.0.1"]),
            vec![
                (PiiKind::PaymentCard, "4111 1111 1111 1111".into()),
                (PiiKind::Ipv4, "10.0.0.1".into())
            ]
        );
    }
}
