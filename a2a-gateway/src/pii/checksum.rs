//! Validation of the checksummed kinds: payment cards (Luhn, issuer prefixes, groupings) and
//! IBANs (registry country lengths, ISO 7064 mod-97).

use super::PiiKind;
use super::check::{continues_with_digit, is_word, next_is, prev_is};
use super::steps::charge;

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
    charge(end - start);
    // Groups as (start, end) byte ranges; between two, one to three separators. Parsed as the
    // windows need them (a window holds at most 19 groups), and dropped once passed, so a long
    // candidate needs no list of all its groups.
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut pos = start;
    let mut fill = |groups: &mut Vec<(usize, usize)>, need: usize| {
        while groups.len() < need && pos < end {
            let g = pos;
            while pos < end && digit(pos) {
                pos += 1;
            }
            groups.push((g, pos));
            while pos < end && !digit(pos) {
                pos += 1;
            }
        }
    };
    let mut i = 0;
    loop {
        if i >= 64 {
            groups.drain(..i);
            i = 0;
        }
        fill(&mut groups, i + 20);
        if i >= groups.len() {
            break;
        }
        // Every card grouping starts with a group of four, or is one group of 13 or more.
        let first = groups[i].1 - groups[i].0;
        if first != 4 && first < 13 {
            charge(1);
            i += 1;
            continue;
        }
        let mut found = None;
        let mut digits = 0;
        for j in i..groups.len() {
            digits += groups[j].1 - groups[j].0;
            // At most 19 digits in at most 19 groups: a bounded check.
            charge(19);
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
    // Spaces, dots and dashes, any mix (the candidate's pattern allows nothing else), at most
    // three between two groups.
    let seps_ok = groups.windows(2).all(|w| w[1].0 - w[0].1 <= 3);
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

/// IBAN: a known country with its exact length, compact or in groups of four (separated by
/// spaces, dots or dashes), standing
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
        charge(1);
        let c = b[i];
        let sep = |c: u8| matches!(c, b' ' | b'.' | b'-');
        if sep(c) {
            // Separators only between groups of four.
            if n % 4 != 0 || (n > 4 && !spaced) {
                return None;
            }
            spaced = true;
        } else {
            if spaced && n % 4 == 0 && !b.get(i.wrapping_sub(1)).copied().is_some_and(sep) {
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
}
