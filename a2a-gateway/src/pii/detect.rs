//! The detectors behind [`super::find`]: a regular expression finds candidates of one kind, then
//! code validates each (checksum, value ranges, the characters around it) before it becomes a
//! [`Finding`]. Overlaps between kinds are resolved last, preferring the more specific kind.
//!
//! Cost: e-mail runs only when the text has an `@`, IPv6 only when it has a `:` (both looked up
//! with `memchr`-style scans). The digit-based detectors run only on
//! small windows around clusters of digits that have enough digits for them, IPv6 only on runs
//! of hex digits and colons, and the secret detector relies on the regex engine's literal
//! prefilter (its patterns all start with fixed prefixes). Nothing is allocated when nothing is
//! found.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::pem::PemEnds;
use super::steps::charge;
use super::{Finding, PiiKind};
use super::{check, checksum};

/// Compiled detectors (built once, on first use).
struct Detectors {
    email: Regex,
    phone_intl: Regex,
    phone_us: Regex,
    phone_national: Regex,
    card: Regex,
    iban: Regex,
    ssn: Regex,
    ipv4: Regex,
    ipv6: Regex,
    secret: Regex,
}

const EMAIL: &str = r"[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}";
/// `+` country code, then digit groups with single optional separators; `(0)` trunk allowed.
const PHONE_INTL: &str = r"\+[1-9][0-9]{0,3}(?:[ .\-]?(?:\([0-9]{1,4}\)|[0-9]{1,6})){1,7}";
/// NANP: optional `1 `, area code in parentheses or followed by a separator, exchange, line.
const PHONE_US: &str =
    r"(?:1[ .\-])?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}([ .\-]))[2-9][0-9]{2}([ .\-])[0-9]{4}";
/// Trunk-prefix national forms (UK, DE, FR, ...): `0` + area, then separated groups.
const PHONE_NATIONAL: &str = r"(?:\(0[1-9][0-9]{0,4}\)|0[1-9][0-9]{0,4})(?:[ .\-/][0-9]{2,8}){1,4}";
/// A run of 13 or more digits with up to three separators (spaces, dots, dashes) between them.
const CARD: &str = r"[0-9](?:[ .\-]{0,3}[0-9]){12,}";
/// Country, check digits, then the BBAN, compact or with a space, dot or dash between groups.
const IBAN: &str = r"[A-Z]{2}[0-9]{2}(?:[ .\-]?[A-Z0-9]){11,31}";
/// `AAA-GG-SSSS` with dashes, spaces or dots (the two alike: checked in code).
const SSN: &str = r"[0-9]{3}[ .\-][0-9]{2}[ .\-][0-9]{4}";
const IPV4: &str = r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}";
/// Groups with `:` or `::` (an IPv4 tail allowed); second, forms ending in `::` (`fe80::`).
const IPV6: &str = concat!(
    r"(?:[0-9A-Fa-f]{1,4})?(?::{1,2}[0-9A-Fa-f]{1,4}){1,7}(?:::)?(?:\.[0-9]{1,3}){0,3}",
    r"|[0-9A-Fa-f]{1,4}(?::{1,2}[0-9A-Fa-f]{1,4}){0,6}::",
);
const SECRET: &str = concat!(
    r"sk-[A-Za-z0-9_\-]{20,}",
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    r"|gh[pousr]_[A-Za-z0-9]{36,}",
    r"|github_pat_[A-Za-z0-9_]{22,}",
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}",
    r"|AIza[0-9A-Za-z_\-]{35}",
    r"|glpat-[A-Za-z0-9_\-]{20,}",
    r"|a2agw_[A-Za-z0-9_\-]{16,}",
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]*",
    r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----",
);

impl Detectors {
    fn build() -> Result<Detectors, regex::Error> {
        Ok(Detectors {
            email: Regex::new(EMAIL)?,
            phone_intl: Regex::new(PHONE_INTL)?,
            phone_us: Regex::new(PHONE_US)?,
            phone_national: Regex::new(PHONE_NATIONAL)?,
            card: Regex::new(CARD)?,
            iban: Regex::new(IBAN)?,
            ssn: Regex::new(SSN)?,
            ipv4: Regex::new(IPV4)?,
            ipv6: Regex::new(IPV6)?,
            secret: Regex::new(SECRET)?,
        })
    }
}

static DETECTORS: LazyLock<Result<Detectors, String>> =
    LazyLock::new(|| Detectors::build().map_err(|e| e.to_string()));

/// Whether the detectors compiled (they are constants, so this fails only on a programming error;
/// a unit test covers it). [`super::find`] finds nothing when they did not.
pub fn self_check() -> Result<(), String> {
    DETECTORS.as_ref().map(|_| ()).map_err(Clone::clone)
}

/// A candidate before overlap resolution.
struct Candidate {
    kind: PiiKind,
    start: usize,
    end: usize,
}

/// How much a kind is trusted when two candidates overlap (higher wins, then the longer).
pub(super) fn strength(kind: PiiKind) -> u8 {
    match kind {
        PiiKind::Secret => 9,
        PiiKind::PaymentCard | PiiKind::Iban => 8,
        PiiKind::Email => 7,
        PiiKind::UsSsn => 6,
        PiiKind::Ipv6 | PiiKind::Ipv4 => 5,
        PiiKind::Phone => 3,
    }
}

/// The detectors on a text already in its normal form (`normalize.rs`); see [`super::find`].
pub(super) fn find(text: &str) -> Vec<Finding> {
    let Ok(d) = DETECTORS.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |kind, start, end| out.push(Candidate { kind, start, end });

    // One pass for each of: the secret pattern, the `@` and `:` look-ups, the digit scan.
    charge(4 * text.len());
    if text.len() >= 16 {
        let mut pem = PemEnds::new(text);
        for m in d.secret.find_iter(text) {
            charge(1);
            if let Some(end) = check::secret(text, m.start(), m.end(), &mut pem) {
                push(PiiKind::Secret, m.start(), end);
            }
        }
    }
    if text.contains('@') {
        charge(text.len());
        for m in d.email.find_iter(text) {
            charge(1);
            if let Some(start) = check::email(text, m.start(), m.end()) {
                push(PiiKind::Email, start, m.end());
            }
        }
    }
    if text.contains(':') {
        ipv6_runs(d, text, &mut push);
    }
    numeric(d, text, &mut push);
    resolve(out)
}

/// Bytes of context kept around a cluster of digits: before (`+44 (`, an IBAN's country code)
/// and after (an IBAN's trailing letters), and the largest gap between two digits of one item
/// (` WEST ` in `GB82 WEST 1234`).
const LEFT: usize = 6;
const RIGHT: usize = 12;
const GAP: usize = 7;

/// The digit-based kinds (cards, IBAN, SSN, IPv4, phones), run only on windows around clusters
/// of digits, and each only when the cluster has enough digits for it (an IPv4 address has at
/// least 4 digits and 3 dots, a phone 8 digits, a card 13): most numbers in prose (`2024`,
/// `$1,299.00`, `10:30`) cost one byte pass and nothing else.
fn numeric(d: &Detectors, text: &str, push: &mut impl FnMut(PiiKind, usize, usize)) {
    let b = text.as_bytes();
    // The current window (wn: its digits; 0 = none) and cluster (n: its digits).
    let (mut ws, mut we, mut wn) = (0usize, 0usize, 0usize);
    let (mut first, mut last, mut n) = (0usize, 0usize, 0usize);
    let mut i = 0;
    loop {
        let next = next_digit(b, i);
        if n > 0 && next.is_none_or(|p| p - last > GAP) {
            let s = floor_boundary(text, first.saturating_sub(LEFT));
            let e = ceil_boundary(text, (last + 1 + RIGHT).min(b.len()));
            if wn > 0 && s <= we {
                we = e;
                wn += n;
            } else {
                if wn > 0 {
                    window(d, text, ws, we, wn, push);
                }
                (ws, we, wn) = (s, e, n);
            }
            n = 0;
        }
        let Some(p) = next else {
            break;
        };
        if n == 0 {
            first = p;
        }
        // The whole run of digits at once (its digits are one apart, within any gap).
        let run = b
            .get(p..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
        last = p + run.max(1) - 1;
        n += run.max(1);
        i = last + 1;
    }
    if wn > 0 {
        window(d, text, ws, we, wn, push);
    }
}

/// The first ASCII digit at or after `from`, skipping 8 bytes at a time where none is.
fn next_digit(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut i = from;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // Nonzero when a byte is strictly between b'/' and b':' (bit hack "hasbetween").
        let low = x & (ONES * 127);
        let t = (ONES * (127 + 0x3a)).wrapping_sub(low)
            & !x
            & (low + ONES * (127 - 0x2f))
            & (ONES * 128);
        if t != 0 {
            break;
        }
        i += 8;
    }
    b.get(i..)?
        .iter()
        .position(u8::is_ascii_digit)
        .map(|p| p + i)
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The digit-based detectors on `text[start..end]`, which holds `digits` digits. Matches are
/// validated against the whole text, so a match cut by the window's edge is rejected.
fn window(
    d: &Detectors,
    text: &str,
    start: usize,
    end: usize,
    digits: usize,
    push: &mut impl FnMut(PiiKind, usize, usize),
) {
    let Some(w) = text.get(start..end) else {
        return;
    };
    let has = |c: u8| w.as_bytes().contains(&c);
    // The byte tests below, and each pattern run on the window.
    charge(5 * w.len());
    if w.bytes().filter(|&c| c == b'.').count() >= 3 {
        charge(w.len());
        for m in d.ipv4.find_iter(w) {
            charge(1);
            let (s, e) = (start + m.start(), start + m.end());
            if check::ipv4(text, s, e) {
                push(PiiKind::Ipv4, s, e);
            }
        }
    }
    if digits < 8 {
        return;
    }
    if digits >= 13 {
        charge(w.len());
        for m in d.card.find_iter(w) {
            checksum::cards(text, start + m.start(), start + m.end(), push);
        }
    }
    if w.bytes().any(|c| c.is_ascii_uppercase()) {
        charge(w.len());
        for m in d.iban.find_iter(w) {
            charge(1);
            let s = start + m.start();
            if let Some(e) = checksum::iban(text, s, start + m.end()) {
                push(PiiKind::Iban, s, e);
            }
        }
    }
    if digits >= 9 {
        charge(w.len());
        for m in d.ssn.find_iter(w) {
            charge(1);
            let (s, e) = (start + m.start(), start + m.end());
            if check::ssn(text, s, e) {
                push(PiiKind::UsSsn, s, e);
            }
        }
    }
    if has(b'+') {
        charge(w.len());
        for m in d.phone_intl.find_iter(w) {
            charge(m.len());
            let (s, e) = (start + m.start(), start + m.end());
            if check::phone_intl(text, s, e) {
                push(PiiKind::Phone, s, e);
            }
        }
    }
    charge(2 * w.len());
    for c in d.phone_us.captures_iter(w) {
        if let Some(m) = c.get(0) {
            charge(m.len());
            let (s, e) = (start + m.start(), start + m.end());
            let sep = |g: usize| c.get(g).map(|m| m.as_str());
            if check::phone_us(text, s, e, sep(1), sep(2)) {
                push(PiiKind::Phone, s, e);
            }
        }
    }
    for m in d.phone_national.find_iter(w) {
        charge(m.len());
        let (s, e) = (start + m.start(), start + m.end());
        if check::phone_national(text, s, e) {
            push(PiiKind::Phone, s, e);
        }
    }
}

/// IPv6 on the runs of hex digits, `:` and `.` that hold at least two colons.
fn ipv6_runs(d: &Detectors, text: &str, push: &mut impl FnMut(PiiKind, usize, usize)) {
    let b = text.as_bytes();
    let v6 = |c: u8| c.is_ascii_hexdigit() || c == b':' || c == b'.';
    let mut i = 0;
    while let Some(p) = text.get(i..).and_then(|r| r.find(':')).map(|p| p + i) {
        let mut s = p;
        while s > 0 && v6(b[s - 1]) {
            s -= 1;
        }
        let mut e = p;
        while e < b.len() && v6(b[e]) {
            e += 1;
        }
        // The look-up of this `:` from `i`, the run's bytes both ways, its colon count.
        charge(p - i + 2 * (e - s));
        // ASCII on both sides of s and e, so both are char boundaries.
        let run = text.get(s..e).unwrap_or("");
        if run.bytes().filter(|&c| c == b':').count() >= 2 {
            charge(run.len());
            for m in d.ipv6.find_iter(run) {
                charge(m.len());
                let (ms, me) = (s + m.start(), s + m.end());
                if check::ipv6(text, ms, me) {
                    push(PiiKind::Ipv6, ms, me);
                }
            }
        }
        i = e.max(p + 1);
    }
}

/// Keeps non-overlapping candidates, the stronger (then longer, then earlier) first; sorted.
fn resolve(mut cands: Vec<Candidate>) -> Vec<Finding> {
    // Ordering k candidates is O(k log k): counted as k steps (k is at most a fifth of the text).
    charge(cands.len());
    if cands.len() <= 1 {
        return cands
            .into_iter()
            .map(|c| Finding {
                kind: c.kind,
                range: c.start..c.end,
                also: Vec::new(),
            })
            .collect();
    }
    {
        cands.sort_by(|a, b| {
            strength(b.kind)
                .cmp(&strength(a.kind))
                .then((b.end - b.start).cmp(&(a.end - a.start)))
                .then(a.start.cmp(&b.start))
        });
    }
    let mut kept: BTreeMap<usize, (usize, PiiKind)> = BTreeMap::new();
    for c in cands {
        let overlaps = kept
            .range(..c.end)
            .next_back()
            .is_some_and(|(_, (end, _))| *end > c.start);
        if !overlaps {
            kept.insert(c.start, (c.end, c.kind));
        }
    }
    kept.into_iter()
        .map(|(start, (end, kind))| Finding {
            kind,
            range: start..end,
            also: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(PiiKind, &str)> {
        find(text)
            .into_iter()
            .map(|f| (f.kind, &text[f.range]))
            .collect()
    }

    #[test]
    fn detectors_compile() {
        assert_eq!(self_check(), Ok(()));
    }

    #[test]
    fn nothing_in_prose() {
        assert!(find("The quick brown fox jumps over the lazy dog.").is_empty());
        assert!(find("").is_empty());
    }

    #[test]
    fn one_of_each() {
        let text = "mail ann.lee@example.org, call +44 20 7946 0958, card 4111 1111 1111 1111, \
                    iban DE89 3704 0044 0532 0130 00, ssn 123-45-6789, ip 192.168.1.20, \
                    v6 2001:db8::8a2e:370:7334, key ghp_abcdefghijklmnopqrstuvwxyz0123456789.";
        assert_eq!(
            kinds(text),
            vec![
                (PiiKind::Email, "ann.lee@example.org"),
                (PiiKind::Phone, "+44 20 7946 0958"),
                (PiiKind::PaymentCard, "4111 1111 1111 1111"),
                (PiiKind::Iban, "DE89 3704 0044 0532 0130 00"),
                (PiiKind::UsSsn, "123-45-6789"),
                (PiiKind::Ipv4, "192.168.1.20"),
                (PiiKind::Ipv6, "2001:db8::8a2e:370:7334"),
                (PiiKind::Secret, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ]
        );
    }

    #[test]
    fn a_dash_after_the_first_64_bytes_still_counts() {
        // A dash far from the start (an early-exit pass over the bytes once missed it).
        let text = format!("@: 1 {} ssn 123-45-6789", "x".repeat(70));
        assert_eq!(kinds(&text), vec![(PiiKind::UsSsn, "123-45-6789")]);
    }

    #[test]
    fn next_digit_finds_every_digit_position() {
        let text: Vec<u8> = (0..64u8).map(|i| b' ' + (i % 90)).collect();
        for from in 0..text.len() {
            let want = text[from..]
                .iter()
                .position(u8::is_ascii_digit)
                .map(|p| p + from);
            assert_eq!(next_digit(&text, from), want, "from {from}");
        }
        let all: Vec<u8> = (0..=255u8).collect();
        for from in 0..all.len() {
            let want = all[from..]
                .iter()
                .position(u8::is_ascii_digit)
                .map(|p| p + from);
            assert_eq!(next_digit(&all, from), want, "from {from}");
        }
    }

    #[test]
    fn stronger_kind_wins_an_overlap() {
        // A Luhn-valid card number in dashed form is not also a phone number.
        assert_eq!(
            kinds("4111-1111-1111-1111"),
            vec![(PiiKind::PaymentCard, "4111-1111-1111-1111")]
        );
    }

    #[test]
    fn ranges_are_on_char_boundaries_in_unicode_text() {
        let text = "Grüße – schreib an jürgen@example.de oder ruf 030 12345678 an ✓";
        for f in find(text) {
            assert!(text.is_char_boundary(f.range.start) && text.is_char_boundary(f.range.end));
        }
        assert_eq!(
            kinds(text),
            vec![
                (PiiKind::Email, "jürgen@example.de"),
                (PiiKind::Phone, "030 12345678")
            ]
        );
    }
}
