//! Validation of the candidates the detectors' regular expressions find (cards and IBANs, the
//! checksummed kinds, are in `checksum.rs`): value ranges (SSN areas, IPv4 octets), IPv6 parsing, JWT headers, and the characters
//! around a candidate (a match that is part of a longer word or number is not a finding).
//!
//! Every function takes the whole text and the candidate's byte range, which always lies on
//! ASCII characters, so slicing at it cannot panic.

use std::net::Ipv6Addr;

use base64::Engine;

use super::pem::PemEnds;
use super::steps::charge;

pub(super) fn prev_char(text: &str, i: usize) -> Option<char> {
    text.get(..i).and_then(|s| s.chars().next_back())
}

pub(super) fn next_char(text: &str, i: usize) -> Option<char> {
    text.get(i..).and_then(|s| s.chars().next())
}

pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub(super) fn prev_is(text: &str, i: usize, f: impl Fn(char) -> bool) -> bool {
    prev_char(text, i).is_some_and(f)
}

pub(super) fn next_is(text: &str, i: usize, f: impl Fn(char) -> bool) -> bool {
    next_char(text, i).is_some_and(f)
}

/// The candidate at `end` is followed by a separator and a digit: it is part of a longer number.
pub(super) fn continues_with_digit(text: &str, end: usize, seps: &[u8]) -> bool {
    let b = text.as_bytes();
    b.get(end).is_some_and(|c| seps.contains(c)) && b.get(end + 1).is_some_and(u8::is_ascii_digit)
}

/// The candidate at `start` follows a digit and a separator: it is part of a longer number.
pub(super) fn follows_digit(text: &str, start: usize, seps: &[u8]) -> bool {
    let b = text.as_bytes();
    start >= 2
        && b.get(start - 1).is_some_and(|c| seps.contains(c))
        && b.get(start - 2).is_some_and(u8::is_ascii_digit)
}

fn count_digits(s: &str) -> usize {
    s.bytes().filter(u8::is_ascii_digit).count()
}

/// Secrets: not inside a longer token; a JWT's header must decode to JSON with `alg`; a PEM
/// block runs to its `-----END ... PRIVATE KEY-----` line, or to the end of the text when that
/// line is missing (a truncated key is still a key), found with `pem` (the text's END lines,
/// searched once for all headers). Returns the finding's end.
pub(super) fn secret(text: &str, start: usize, end: usize, pem: &mut PemEnds) -> Option<usize> {
    if prev_is(text, start, is_word) {
        return None;
    }
    let m = text.get(start..end)?;
    if m.starts_with("-----BEGIN") {
        return Some(pem.after(end).unwrap_or(text.len()));
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

/// E-mail: not followed by a word character; the local part is extended back over non-ASCII
/// letters (`jürgen@...`) the ASCII pattern does not cover, at most 64 bytes before the `@`
/// (leading dots, which are dropped, aside). Returns the finding's start.
pub(super) fn email(text: &str, start: usize, end: usize) -> Option<usize> {
    if next_is(text, end, |c| is_word(c) || c == '-') {
        return None;
    }
    charge(end - start);
    // The pattern's local part has no `@`: the first one in the match is the address's.
    let at_sign = start + text.get(start..end)?.find('@')?;
    let mut s = start;
    while let Some(c) = prev_char(text, s) {
        charge(1);
        if c.is_alphanumeric() || "._%+-'".contains(c) {
            s -= c.len_utf8();
            // A local part past 64 bytes fails the check below whatever precedes it, unless
            // only dots (dropped below) stand between here and 64 bytes before the `@`.
            if at_sign - s > 64 && c != '.' {
                return None;
            }
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
    charge(3 * m.len());
    let groups = m.split(':').filter(|g| !g.is_empty()).count();
    let has_digit = m.bytes().any(|b| b.is_ascii_digit());
    (has_digit || groups >= 5) && ipv6_parses(m)
}

/// IPv4: four octets 0-255 without leading zeros, not part of a longer dotted number, not
/// followed by a pre-release label (`-beta`), and not right after a word that says it is a
/// version (`version 1.2.3.4`, `build 10.0.0.1`).
pub(super) fn ipv4(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || c == '.')
        || next_is(text, end, is_word)
        || continues_with_digit(text, end, b".")
        || prerelease_follows(text, end)
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

/// `1.2.3.4-beta`: a version's pre-release label (a range `10.0.0.1-10.0.0.9` is not one).
fn prerelease_follows(text: &str, end: usize) -> bool {
    let b = text.as_bytes();
    b.get(end) == Some(&b'-') && b.get(end + 1).is_some_and(u8::is_ascii_alphabetic)
}

const VERSION_WORDS: [&str; 9] = [
    "version", "ver", "release", "build", "rev", "revision", "firmware", "fw", "v",
];

fn after_version_word(text: &str, start: usize) -> bool {
    let before = text.get(..start).unwrap_or("");
    let trimmed = before.trim_end_matches(|c: char| c.is_whitespace() || c == ':' || c == '=');
    // The longest version word has 8 letters: a longer run of letters is no version word.
    let word_start = trimmed
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphabetic())
        .take(9)
        .last()
        .map_or(trimmed.len(), |(i, _)| i);
    charge(before.len() - word_start);
    let word = &trimmed[word_start..];
    VERSION_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// US SSN `AAA-GG-SSSS` (or with spaces or dots, the two separators alike): area not 000, 666
/// or 900-999; group not 00; serial not 0000; not part of a longer separated number.
pub(super) fn ssn(text: &str, start: usize, end: usize) -> bool {
    if prev_is(text, start, |c| is_word(c) || c == '-' || c == '.')
        || next_is(text, end, |c| is_word(c) || c == '-')
        || continues_with_digit(text, end, b" .")
        || follows_digit(text, start, b" ")
    {
        return false;
    }
    let b = text.as_bytes();
    if b.get(start + 3) != b.get(start + 6) {
        return false;
    }
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
    sep1: Option<&str>,
    sep2: Option<&str>,
) -> bool {
    if let (Some(a), Some(b)) = (sep1, sep2)
        && a != b
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

/// Whether a JWT header segment decodes to a JSON object with a string `alg`.
pub(super) fn jwt_header_ok(segment: &str) -> bool {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    charge(2 * segment.len());
    let Ok(bytes) = engine.decode(segment) else {
        return false;
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(map)) => map.get("alg").is_some_and(|a| a.is_string()),
        _ => false,
    }
}

/// Whether `s` parses as an IPv6 address (std's parser).
pub(super) fn ipv6_parses(s: &str) -> bool {
    s.parse::<Ipv6Addr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
