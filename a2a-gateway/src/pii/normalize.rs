//! What the detectors read: a text normalised so that look-alike characters do not hide an item
//! (issue 39), and the map from the normalised text back to the original.
//!
//! Each character of the original becomes (in this order):
//! - `%XX` escapes: a run of them is percent-decoded when the bytes are UTF-8 (an escape that is
//!   not stays as it is); each decoded character then goes through the steps below;
//! - format and zero-width characters (general category `Cf`: zero-width space and joiners,
//!   soft hyphen, bidirectional controls, word joiner, BOM, tags...; and the combining grapheme
//!   joiner, variation selectors, Hangul fillers): removed;
//! - a combining mark right after an ASCII letter or digit (`4\u{301}`, `e\u{301}`): removed;
//! - any other character: its NFKC form (`unicode-normalization`, one character at a time:
//!   fullwidth and mathematical letters and digits, circled and superscript digits, ligatures,
//!   no-break spaces), then, in that form, every decimal digit of any script (general category
//!   `Nd`: Arabic-Indic, Devanagari, Thai...) folded to its ASCII digit, every dash (`Pd`, the
//!   minus sign) to `-`, every space (`Zs`) to ` `, and dot-like characters (middle dot,
//!   ideographic full stop, katakana middle dot, one-dot leader...) to `.`.
//!
//! Text that is ASCII and has no `%XX` escape is its own normal form: nothing is copied. The map
//! is a list of edits (where the two texts differ), so a finding's range in the normalised text
//! maps back to the original span it came from, removed characters inside it included: the
//! redaction replaces the caller's own characters. Linear: one pass, each character looked up
//! in constant time (NFKC of one character is bounded).

use std::borrow::Cow;
use std::ops::Range;

use unicode_general_category::{GeneralCategory as Gc, get_general_category};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use super::steps::charge;

/// One place where the normalised text differs from the original: `norm_len` bytes at `norm`
/// came from `orig_len` bytes at `orig` (0 when characters were removed).
#[derive(Debug, Clone, Copy)]
struct Edit {
    norm: u32,
    norm_len: u32,
    orig: u32,
    orig_len: u32,
}

impl Edit {
    fn norm_end(&self) -> usize {
        (self.norm + self.norm_len) as usize
    }
    fn orig_end(&self) -> usize {
        (self.orig + self.orig_len) as usize
    }
}

/// A text in its normal form, with the way back.
#[derive(Debug)]
pub(super) struct Normalized<'t> {
    /// The normalised text (borrowed when it is the original).
    pub(super) text: Cow<'t, str>,
    edits: Vec<Edit>,
}

impl Normalized<'_> {
    /// Whether the normal form is the original itself.
    pub(super) fn is_identity(&self) -> bool {
        self.edits.is_empty()
    }

    /// The original byte range a range of the normalised text came from.
    pub(super) fn original(&self, r: Range<usize>) -> Range<usize> {
        if self.edits.is_empty() || r.is_empty() {
            return r;
        }
        let start = self.map_start(r.start);
        let end = self.map_end(r.end - 1);
        start..end.max(start)
    }

    /// The first edit that ends after `p`.
    fn after(&self, p: usize) -> usize {
        charge(1);
        self.edits.partition_point(|e| e.norm_end() <= p)
    }

    /// Where the character at normalised byte `p` starts in the original.
    fn map_start(&self, p: usize) -> usize {
        let i = self.after(p);
        if let Some(e) = self.edits.get(i)
            && e.norm as usize <= p
        {
            return e.orig as usize;
        }
        self.identity(i, p)
    }

    /// Where the character holding normalised byte `q` ends in the original.
    fn map_end(&self, q: usize) -> usize {
        let i = self.after(q);
        if let Some(e) = self.edits.get(i)
            && e.norm as usize <= q
        {
            return e.orig_end();
        }
        self.identity(i, q) + 1
    }

    /// `p`, in a stretch that is a copy of the original, after the edits before index `i`.
    fn identity(&self, i: usize, p: usize) -> usize {
        match i.checked_sub(1).and_then(|k| self.edits.get(k)) {
            Some(e) => e.orig_end() + (p - e.norm_end()),
            None => p,
        }
    }
}

/// Whether `text` needs no normalisation: ASCII without a `%XX` escape.
fn is_normal(text: &str) -> bool {
    text.is_ascii() && !has_escape(text.as_bytes())
}

fn has_escape(b: &[u8]) -> bool {
    memchr::memchr_iter(b'%', b).any(|i| escape_at(b, i).is_some())
}

/// The byte a `%XX` escape at `i` stands for.
fn escape_at(b: &[u8], i: usize) -> Option<u8> {
    let hex = |c: u8| (c as char).to_digit(16);
    match (b.get(i), b.get(i + 1), b.get(i + 2)) {
        (Some(b'%'), Some(&h), Some(&l)) => Some((hex(h)? * 16 + hex(l)?) as u8),
        _ => None,
    }
}

/// Normalises `text` (see the module docs).
pub(super) fn normalize(text: &str) -> Normalized<'_> {
    charge(text.len());
    if is_normal(text) || text.len() > u32::MAX as usize {
        return Normalized {
            text: Cow::Borrowed(text),
            edits: Vec::new(),
        };
    }
    let mut n = Builder {
        src: text,
        out: String::with_capacity(text.len()),
        edits: Vec::new(),
        copied: 0,
    };
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        charge(1);
        let c = b[i];
        if c == b'%'
            && let Some(end) = n.escapes(i)
        {
            i = end;
            continue;
        }
        if c < 0x80 {
            i += 1;
            continue;
        }
        let Some(ch) = text.get(i..).and_then(|s| s.chars().next()) else {
            break;
        };
        let len = ch.len_utf8();
        n.char_at(i, len, ch);
        i += len;
    }
    n.finish()
}

struct Builder<'t> {
    src: &'t str,
    out: String,
    edits: Vec<Edit>,
    /// Bytes of `src` already in `out` (copied or edited).
    copied: usize,
}

impl<'t> Builder<'t> {
    /// Copies the original up to `at` (a stretch without edits).
    fn copy_to(&mut self, at: usize) {
        if at > self.copied {
            self.out
                .push_str(self.src.get(self.copied..at).unwrap_or(""));
            self.copied = at;
        }
    }

    /// Replaces the original `at..at + len` with `with`.
    fn edit(&mut self, at: usize, len: usize, with: &str) {
        self.copy_to(at);
        let norm = self.out.len();
        self.out.push_str(with);
        self.edits.push(Edit {
            norm: norm as u32,
            norm_len: with.len() as u32,
            orig: at as u32,
            orig_len: len as u32,
        });
        self.copied = at + len;
    }

    /// One non-ASCII character at `at` (`len` bytes in the original).
    fn char_at(&mut self, at: usize, len: usize, ch: char) {
        match map_char(ch, self.after_ascii_alnum(at)) {
            Mapped::Same => {}
            Mapped::Drop => self.edit(at, len, ""),
            Mapped::To(s) => self.edit(at, len, &s),
        }
    }

    /// Whether the last character of the normalised text so far (with the original copied up to
    /// `at`) is an ASCII letter or digit.
    fn after_ascii_alnum(&self, at: usize) -> bool {
        let last = if at > self.copied {
            self.src.as_bytes().get(at - 1)
        } else {
            self.out.as_bytes().last()
        };
        last.is_some_and(u8::is_ascii_alphanumeric)
    }

    /// A run of `%XX` escapes at `at`: decoded when its bytes are UTF-8; returns where it ends,
    /// or `None` when there is no escape at `at`.
    fn escapes(&mut self, at: usize) -> Option<usize> {
        let b = self.src.as_bytes();
        let mut bytes = Vec::new();
        let mut i = at;
        while let Some(x) = escape_at(b, i) {
            charge(3);
            bytes.push(x);
            i += 3;
        }
        if bytes.is_empty() {
            return None;
        }
        // Each decoded character stands for its escapes (3 bytes each); bytes that are not
        // UTF-8 keep their escapes as they are.
        let mut pos = at;
        for chunk in bytes.utf8_chunks() {
            for ch in chunk.valid().chars() {
                let len = 3 * ch.len_utf8();
                let mapped = if ch.is_ascii() {
                    Mapped::To(ch.to_string())
                } else {
                    match map_char(ch, self.after_ascii_alnum(pos)) {
                        Mapped::Same => Mapped::To(ch.to_string()),
                        m => m,
                    }
                };
                match mapped {
                    Mapped::Drop => self.edit(pos, len, ""),
                    Mapped::To(s) => self.edit(pos, len, &s),
                    Mapped::Same => {}
                }
                pos += len;
            }
            pos += 3 * chunk.invalid().len();
        }
        Some(i)
    }

    fn finish(mut self) -> Normalized<'t> {
        if self.edits.is_empty() {
            return Normalized {
                text: Cow::Borrowed(self.src),
                edits: Vec::new(),
            };
        }
        self.copy_to(self.src.len());
        Normalized {
            text: Cow::Owned(self.out),
            edits: self.edits,
        }
    }
}

/// What one character becomes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Mapped {
    /// Itself.
    Same,
    /// Nothing (removed).
    Drop,
    /// Another text.
    To(String),
}

/// What the non-ASCII character `ch` becomes (module docs); `after_alnum`: it follows an ASCII
/// letter or digit.
pub(super) fn map_char(ch: char, after_alnum: bool) -> Mapped {
    let cat = get_general_category(ch);
    if is_ignorable(ch, cat) {
        return Mapped::Drop;
    }
    if matches!(
        cat,
        Gc::NonspacingMark | Gc::SpacingMark | Gc::EnclosingMark
    ) && after_alnum
    {
        return Mapped::Drop;
    }
    if let Some(c) = fold(ch, cat) {
        return Mapped::To(c.to_string());
    }
    if is_nfkc_quick(std::iter::once(ch)) == IsNormalized::Yes {
        return Mapped::Same;
    }
    let mut out = String::new();
    for d in std::iter::once(ch).nfkc() {
        let cat = get_general_category(d);
        if is_ignorable(d, cat) {
            continue;
        }
        match fold(d, cat) {
            Some(c) => out.push(c),
            None => out.push(d),
        }
    }
    if out.len() == ch.len_utf8() && out.starts_with(ch) {
        Mapped::Same
    } else if out.is_empty() {
        Mapped::Drop
    } else {
        Mapped::To(out)
    }
}

/// Format and zero-width characters: removed before detection.
pub(super) fn is_ignorable(ch: char, cat: Gc) -> bool {
    cat == Gc::Format
        || matches!(ch,
            '\u{034F}'                      // combining grapheme joiner
            | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' // Hangul fillers
            | '\u{17B4}' | '\u{17B5}'       // Khmer inherent vowels
            | '\u{180B}'..='\u{180F}'       // Mongolian variation selectors
            | '\u{FE00}'..='\u{FE0F}'       // variation selectors
            | '\u{E0100}'..='\u{E01EF}'     // variation selectors supplement
        )
}

/// The ASCII character a non-ASCII digit, dash, space or dot stands for.
fn fold(ch: char, cat: Gc) -> Option<char> {
    match cat {
        Gc::DecimalNumber => digit_value(ch).map(|d| char::from(b'0' + d)),
        Gc::DashPunctuation => Some('-'),
        Gc::SpaceSeparator => Some(' '),
        _ => match ch {
            '\u{2212}' | '\u{02D7}' | '\u{2796}' | '\u{FE63}' | '\u{FF0D}' => Some('-'),
            '\u{00B7}' | '\u{2024}' | '\u{2027}' | '\u{2219}' | '\u{22C5}' | '\u{3002}'
            | '\u{30FB}' | '\u{FF0E}' | '\u{FF61}' | '\u{FF65}' | '\u{0701}' | '\u{0702}' => {
                Some('.')
            }
            _ => None,
        },
    }
}

/// The value of a decimal digit of any script: decimal digits are encoded in runs of ten, from
/// 0 to 9 (a Unicode stability guarantee), so the value is the distance from the start of the
/// run, modulo ten (adjacent runs each start at 0).
fn digit_value(ch: char) -> Option<u8> {
    let c = ch as u32;
    let mut start = c;
    // The longest run of consecutive decimal digits (mathematical digits) is 50.
    for _ in 0..64 {
        let prev = start.checked_sub(1).and_then(char::from_u32);
        if prev.is_some_and(|p| get_general_category(p) == Gc::DecimalNumber) {
            start -= 1;
        } else {
            break;
        }
    }
    Some(((c - start) % 10) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize(s).text.into_owned()
    }

    #[test]
    fn ascii_is_borrowed() {
        let n = normalize("card 4111 1111 1111 1111, 7% off");
        assert!(matches!(n.text, Cow::Borrowed(_)));
        assert_eq!(n.original(5..9), 5..9);
    }

    #[test]
    fn folds_each_evasion() {
        assert_eq!(norm("４１１１"), "4111");
        assert_eq!(norm("٤١١١ ۴۱۱۱ ४१११ ๔๑๑๑"), "4111 4111 4111 4111");
        assert_eq!(norm("𝟒𝟏𝟏𝟏 ①②"), "4111 12");
        assert_eq!(norm("4\u{200B}1\u{200D}1\u{FEFF}1\u{00AD}"), "4111");
        assert_eq!(norm("4111\u{00A0}1111\u{202F}2\u{2009}3"), "4111 1111 2 3");
        assert_eq!(
            norm("123\u{2013}45\u{2014}6789\u{2212}0\u{2011}1"),
            "123-45-6789-0-1"
        );
        assert_eq!(norm("ann\u{FF20}example\u{3002}org"), "ann@example.org");
        assert_eq!(norm("ａｎｎ．ｌｅｅ"), "ann.lee");
        assert_eq!(norm("4\u{0301}1\u{0336}11"), "4111");
        assert_eq!(
            norm("ann.lee%40example.org %E2%80%8B%EF%BC%94"),
            "ann.lee@example.org 4"
        );
        // Not an escape, or not UTF-8: kept.
        assert_eq!(norm("100%zz %ff%41 é"), "100%zz %ffA é");
    }

    #[test]
    fn maps_back_to_the_original_span() {
        let text = "x ４\u{200B}１1%31 y";
        let n = normalize(text);
        assert_eq!(n.text, "x 4111 y");
        // "4111" in the normal form covers the fullwidth digits, the removed space, the escape.
        assert_eq!(&text[n.original(2..6)], "４\u{200B}１1%31");
        assert_eq!(&text[n.original(3..5)], "１1");
        assert_eq!(&text[n.original(6..8)], " y");
        assert_eq!(&text[n.original(0..2)], "x ");
    }

    #[test]
    fn digit_values_of_every_script() {
        let mut runs = 0;
        for c in (0x80..=0x10FFFFu32).filter_map(char::from_u32) {
            if get_general_category(c) == Gc::DecimalNumber {
                let v = digit_value(c).unwrap();
                if v == 0 {
                    runs += 1;
                }
                // Where NFKC knows the digit (fullwidth, mathematical...), it agrees.
                let k: String = std::iter::once(c).nfkc().collect();
                if k.len() == 1 && k.as_bytes()[0].is_ascii_digit() {
                    assert_eq!(k.as_bytes()[0] - b'0', v, "{c:?}");
                }
            }
        }
        assert!(runs >= 60, "{runs} runs of digits");
    }
}
