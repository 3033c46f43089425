//! Validation of the candidates the detectors' regular expressions find: checksums (Luhn,
//! mod-97), value ranges (SSN areas, IPv4 octets), IPv6 parsing, JWT headers, and the characters
//! around a candidate (a match that is part of a longer word or number is not a finding).
//!
//! Every function takes the whole text and the candidate's byte range, which always lies on
//! ASCII characters, so slicing at it cannot panic.

use super::PiiKind;
use super::detect::{ipv6_parses, jwt_header_ok};

fn prev_char(text: &str, i: usize) -> Option<char> {
    text.get(..i).and_then(|s| s.chars().next_back())
}

fn next_char(text: &str, i: usize) -> Option<char> {
    text.get(i..).and_then(|s| s.chars().next())
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn prev_is(text: &str, i: usize, f: impl Fn(char) -> bool) -> bool {
    prev_char(text, i).is_some_and(f)
}

fn next_is(text: &str, i: usize, f: impl Fn(char) -> bool) -> bool {
    next_char(text, i).is_some_and(f)
}

/// The candidate at `end` is followed by a separator and a digit: it is part of a longer number.
fn continues_with_digit(text: &str, end: usize, seps: &[u8]) -> bool {
    let b = text.as_bytes();
    b.get(end).is_some_and(|c| seps.contains(c)) && b.get(end + 1).is_some_and(u8::is_ascii_digit)
}

fn count_digits(s: &str) -> usize {
    s.bytes().filter(u8::is_ascii_digit).count()
}

/// Secrets: not inside a longer token; a JWT's header must decode to JSON with `alg`; a PEM
/// block runs to its `-----END ... PRIVATE KEY-----` line, or to the end of the text when that
/// line is missing (a truncated key is still a key). Returns the finding's end.
pub(super) fn secret(text: &str, start: usize, end: usize) -> Option<usize> {
    if prev_is(text, start, is_word) {
        return None;
    }
    let m = text.get(start..end)?;
    if m.starts_with("-----BEGIN") {
        return Some(pem_end(text, end).unwrap_or(text.len()));
    }
    if next_is(text, end, |c| is_word(c) || c == '-') {
        return None;
    }
    if m.starts_with("eyJ") {
        let header = m.split('.').next()?;
        return jwt_header_ok(header).then_some(end);
    }
    Some(end)
}

/// The end of the `-----END ... PRIVATE KEY-----` line at or after `from`, if any.
pub(super) fn pem_end(text: &str, from: usize) -> Option<usize> {
    let rest = text.get(from..)?;
    let at = rest.find("-----END ")?;
    let tail = rest.get(at..)?;
    let close = tail.find("PRIVATE KEY-----")?;
    Some(from + at + close + "PRIVATE KEY-----".len())
}

/// E-mail: not followed by a word character; the local part is extended back over non-ASCII
/// letters (`jürgen@...`) the ASCII pattern does not cover. Returns the finding's start.
pub(super) fn email(text: &str, start: usize, end: usize) -> Option<usize> {
    if next_is(text, end, |c| is_word(c) || c == '-') {
        return None;
    }
    let mut s = start;
    while let Some(c) = prev_char(text, s) {
        if c.is_alphanumeric() || "._%+-".contains(c) {
            s -= c.len_utf8();
        } else {
            break;
        }
    }
    while text.as_bytes().get(s) == Some(&b'.') {
        s += 1;
    }
    let at = text.get(s..end)?.find('@')?;
    (at > 0 && at <= 64).then_some(s)
}

/// IPv6: parses with `std::net::Ipv6Addr`, stands alone, and has a decimal digit or at least
/// five groups (so `dead::beef`-like words and `a::b` paths are not addresses).
pub(super) fn ipv6(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || c == ':' || c == '.')
        || next_is(text, end, |c| is_word(c) || c == ':')
    {
        return false;
    }
    let Some(m) = text.get(start..end) else {
        return false;
    };
    let groups = m.split(':').filter(|g| !g.is_empty()).count();
    let has_digit = m.bytes().any(|b| b.is_ascii_digit());
    (has_digit || groups >= 5) && ipv6_parses(m)
}

/// IPv4: four octets 0-255 without leading zeros, not part of a longer dotted number, and not
/// right after a word that says it is a version (`version 1.2.3.4`, `build 10.0.0.1`).
pub(super) fn ipv4(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || c == '.')
        || next_is(text, end, is_word)
        || continues_with_digit(text, end, b".")
    {
        return false;
    }
    let Some(m) = text.get(start..end) else {
        return false;
    };
    let octets_ok = m
        .split('.')
        .all(|o| (o.len() == 1 || !o.starts_with('0')) && o.parse::<u16>().is_ok_and(|n| n <= 255));
    octets_ok && !after_version_word(text, start)
}

const VERSION_WORDS: [&str; 9] = [
    "version", "ver", "release", "build", "rev", "revision", "firmware", "fw", "v",
];

fn after_version_word(text: &str, start: usize) -> bool {
    let before = text.get(..start).unwrap_or("");
    let trimmed = before.trim_end_matches(|c: char| c.is_whitespace() || c == ':' || c == '=');
    let word_start = trimmed
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphabetic())
        .last()
        .map_or(trimmed.len(), |(i, _)| i);
    let word = &trimmed[word_start..];
    VERSION_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// US SSN `AAA-GG-SSSS`: area not 000, 666 or 900-999; group not 00; serial not 0000; not part
/// of a longer dashed number.
pub(super) fn ssn(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || c == '-' || c == '.')
        || next_is(text, end, |c| is_word(c) || c == '-')
    {
        return false;
    }
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| {
        b.get(r)
            .map(|d| d.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0')))
    };
    let (Some(area), Some(group), Some(serial)) = (
        num(start..start + 3),
        num(start + 4..start + 6),
        num(start + 7..start + 11),
    ) else {
        return false;
    };
    area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

/// International `+` forms: 8 to 15 digits (E.164's maximum), standing alone.
pub(super) fn phone_intl(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || c == '+') || next_is(text, end, is_word) {
        return false;
    }
    let n = text.get(start..end).map_or(0, count_digits);
    (8..=15).contains(&n)
}

/// NANP forms: the two separators agree (`415-555-0132`, `415 555 0132`; `(415) 555-0132`
/// takes any), standing alone.
pub(super) fn phone_us(
    text: &str,
    start: usize,
    end: usize,
    sep1: Option<regex::Match<'_>>,
    sep2: Option<regex::Match<'_>>,
) -> bool {
    if let (Some(a), Some(b)) = (sep1, sep2)
        && a.as_str() != b.as_str()
    {
        return false;
    }
    !(prev_is(text, start, |c| is_word(c) || ".-+/#".contains(c))
        || next_is(text, end, is_word)
        || continues_with_digit(text, end, b"-./"))
}

/// Trunk-prefix national forms (`020 7946 0958`, `030 12345678`, `01 23 45 67 89`): 9 to 12
/// digits, one kind of separator, dots only in the French two-digit grouping, standing alone.
pub(super) fn phone_national(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || ".-+/#,".contains(c))
        || next_is(text, end, is_word)
        || continues_with_digit(text, end, b" -./")
    {
        return false;
    }
    let Some(m) = text.get(start..end) else {
        return false;
    };
    if !(9..=12).contains(&count_digits(m)) {
        return false;
    }
    // The separators after the first group (the area code, maybe in parentheses).
    let body = m.trim_start_matches(|c: char| c != ' ' && c != '-' && c != '.' && c != '/');
    let mut seps = body.bytes().filter(|b| !b.is_ascii_digit());
    let Some(first) = seps.next() else {
        return false;
    };
    if !seps.all(|s| s == first) {
        return false;
    }
    first != b'.' || body.split('.').skip(1).all(|g| g.len() == 2)
}

/// Payment cards in the digit run `start..end`: the whole run, or when it has separators any
/// run of whole groups in it, that has 13-19 digits in a card grouping, a known IIN prefix for
/// its length and a valid Luhn check digit.
pub(super) fn cards(
    text: &str,
    start: usize,
    end: usize,
    push: &mut impl FnMut(PiiKind, usize, usize),
) {
    if prev_is(text, start, |c| is_word(c) || c == '.' || c == '-')
        || next_is(text, end, is_word)
        || continues_with_digit(text, end, b".,")
    {
        return;
    }
    let b = text.as_bytes();
    // Groups as (start, end) byte ranges.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut g = start;
    for i in start..=end {
        if i == end || !b.get(i).is_some_and(u8::is_ascii_digit) {
            groups.push((g, i));
            g = i + 1;
        }
    }
    let mut i = 0;
    while i < groups.len() {
        let mut found = None;
        let mut digits = 0;
        for j in i..groups.len() {
            digits += groups[j].1 - groups[j].0;
            if digits > 19 {
                break;
            }
            if digits >= 13 && card_window_ok(b, &groups[i..=j]) {
                found = Some(j);
            }
        }
        match found {
            Some(j) => {
                push(PiiKind::PaymentCard, groups[i].0, groups[j].1);
                i = j + 1;
            }
            None => i += 1,
        }
    }
}

fn card_window_ok(b: &[u8], groups: &[(usize, usize)]) -> bool {
    let n = groups.len();
    let size = |k: usize| groups[k].1 - groups[k].0;
    let grouping_ok = n == 1
        || size(0) == 4
            && ((1..n - 1).all(|k| size(k) == 4) && (1..=4).contains(&size(n - 1))
                || n == 3 && size(1) == 6 && (size(2) == 5 || size(2) == 4));
    // One kind of separator.
    let seps_ok = groups
        .windows(2)
        .all(|w| b.get(w[0].1) == b.get(groups[0].1) && w[1].0 == w[0].1 + 1);
    if !grouping_ok || !seps_ok {
        return false;
    }
    let mut digits = [0u8; 19];
    let mut n = 0;
    for &(s, e) in groups {
        for &d in b.get(s..e).unwrap_or(&[]) {
            digits[n] = d - b'0';
            n += 1;
        }
    }
    iin_ok(&digits[..n]) && luhn_ok(&digits[..n])
}

/// Luhn (mod 10) check over decimal digits.
pub(super) fn luhn_ok(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Known issuer prefixes and the lengths their cards have.
fn iin_ok(d: &[u8]) -> bool {
    let len = d.len();
    let prefix = |n: usize| d.iter().take(n).fold(0u32, |a, &x| a * 10 + u32::from(x));
    let (p2, p3, p4) = (prefix(2), prefix(3), prefix(4));
    match d.first() {
        Some(4) => matches!(len, 13 | 16 | 19), // Visa
        Some(5) => match p2 {
            51..=55 => len == 16,                     // Mastercard
            50 | 56..=58 => (13..=19).contains(&len), // Maestro
            _ => false,
        },
        Some(2) => {
            (2221..=2720).contains(&p4) && len == 16 || (2200..=2204).contains(&p4) && len >= 16
        } // Mastercard 2-series, Mir
        Some(3) => {
            (p2 == 34 || p2 == 37) && len == 15                       // Amex
                || (3528..=3589).contains(&p4) && len >= 16           // JCB
                || ((300..=305).contains(&p3) || p2 == 36 || p2 == 38 || p2 == 39) && len >= 14 // Diners
        }
        Some(6) => {
            // Discover, UnionPay; Maestro
            (p4 == 6011 || (644..=649).contains(&p3) || p2 == 65 || p2 == 62) && len >= 16
                || (p2 == 63 || p2 == 67) && len >= 13
        }
        _ => false,
    }
}

/// IBAN lengths by country (ISO 13616 registry).
const IBAN_LENGTHS: [(&str, usize); 75] = [
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NL", 18),
    ("NO", 15),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("SA", 24),
    ("SC", 31),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VG", 24),
];

/// IBAN: a known country with its exact length, compact or in groups of four, standing
/// alone, and the ISO 7064 mod-97 check equal to 1. Returns the finding's end.
pub(super) fn iban(text: &str, start: usize, end: usize) -> Option<usize> {
    if prev_is(text, start, is_word) {
        return None;
    }
    let b = text.as_bytes();
    let country = text.get(start..start + 2)?;
    let len = IBAN_LENGTHS.iter().find(|(c, _)| *c == country)?.1;
    let mut chars = [0u8; 34];
    let mut n = 0;
    let mut spaced = false;
    let mut i = start;
    while n < len && i < end {
        let c = b[i];
        if c == b' ' {
            // Spaces only between groups of four.
            if n % 4 != 0 || (n > 4 && !spaced) {
                return None;
            }
            spaced = true;
        } else {
            if spaced && n % 4 == 0 && b.get(i.wrapping_sub(1)) != Some(&b' ') {
                return None;
            }
            chars[n] = c;
            n += 1;
        }
        i += 1;
    }
    if n < len || next_is(text, i, is_word) {
        return None;
    }
    let rem = chars[4..len]
        .iter()
        .chain(&chars[..4])
        .fold(0u32, |r, &c| match c {
            b'0'..=b'9' => (r * 10 + u32::from(c - b'0')) % 97,
            _ => (r * 100 + u32::from(c - b'A') + 10) % 97,
        });
    (rem == 1).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn() {
        assert!(luhn_ok(&[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]));
        assert!(!luhn_ok(&[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]));
    }

    #[test]
    fn iban_checksum() {
        let t = "GB82WEST12345698765432";
        assert_eq!(iban(t, 0, t.len()), Some(t.len()));
        let bad = "GB83WEST12345698765432";
        assert_eq!(iban(bad, 0, bad.len()), None);
    }

    #[test]
    fn ssn_ranges() {
        for (t, ok) in [
            ("123-45-6789", true),
            ("000-45-6789", false),
            ("666-45-6789", false),
            ("901-45-6789", false),
            ("123-00-6789", false),
            ("123-45-0000", false),
        ] {
            assert_eq!(ssn(t, 0, t.len()), ok, "{t}");
        }
    }

    #[test]
    fn version_words() {
        let t = "version 1.2.3.4";
        assert!(!ipv4(t, 8, t.len()));
        let t = "host 1.2.3.4";
        assert!(ipv4(t, 5, t.len()));
    }
}
