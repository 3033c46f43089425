//! Where private key blocks end: the `-----END ... PRIVATE KEY-----` line after each
//! `-----BEGIN ... PRIVATE KEY-----` header of one text, in one pass over the text.
//!
//! A block runs to the end of the first `PRIVATE KEY-----` at or after the first `-----END `
//! after its header ([`pem_end`] says the same for one header). Searching the
//! rest of the text once per header was quadratic on a text of many headers (issue 39: each
//! header searched to the end for an END line that never came). [`PemEnds`] remembers the
//! last END line and the last `PRIVATE KEY-----` it found and searches again only from past
//! them, so headers asked in text order cost one pass over the text in all.

use memchr::memmem;

use super::steps::charge;

const END: &[u8] = b"-----END ";
const CLOSE: &[u8] = b"PRIVATE KEY-----";

/// The end of the `-----END ... PRIVATE KEY-----` line at or after `from`, if any: one search
/// of the rest of the text, for one header (a text's headers use [`PemEnds`]).
pub(super) fn pem_end(text: &str, from: usize) -> Option<usize> {
    let rest = text.get(from..)?;
    charge(rest.len());
    let at = rest.find("-----END ")?;
    let tail = rest.get(at..)?;
    let close = tail.find("PRIVATE KEY-----")?;
    Some(from + at + close + "PRIVATE KEY-----".len())
}

/// The first occurrence of a needle at or after a position, remembered.
#[derive(Debug, Clone, Copy)]
struct Next {
    /// Searched from here...
    from: usize,
    /// ...and found here (`None`: not found at or after `from`).
    at: Option<usize>,
}

/// Answers "where does the block of a header ending at `from` end" for the headers of one
/// text; linear in the text when asked in increasing `from` (the order of `find_iter`).
pub(super) struct PemEnds<'t> {
    text: &'t [u8],
    end: Option<Next>,
    close: Option<Next>,
}

impl<'t> PemEnds<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        PemEnds {
            text: text.as_bytes(),
            end: None,
            close: None,
        }
    }

    /// The end of the block whose header ends at `from`: the end of its `-----END ... PRIVATE
    /// KEY-----` line, or `None` when no such line follows.
    pub(super) fn after(&mut self, from: usize) -> Option<usize> {
        let at = next(self.text, END, &mut self.end, from)?;
        let close = next(self.text, CLOSE, &mut self.close, at)?;
        Some(close + CLOSE.len())
    }
}

/// The first `needle` at or after `from`, reusing `memo` when it answers (a later search starts
/// past the earlier one's result, so searches in increasing `from` never cover a byte twice).
fn next(text: &[u8], needle: &[u8], memo: &mut Option<Next>, from: usize) -> Option<usize> {
    if let Some(m) = *memo
        && m.from <= from
        && m.at.is_none_or(|at| at >= from)
    {
        charge(1);
        return m.at;
    }
    let rest = text.get(from..)?;
    let found = memmem::find(rest, needle);
    charge(found.map_or(rest.len(), |p| p + needle.len()));
    let at = found.map(|p| p + from);
    *memo = Some(Next { from, at });
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_one_header_search() {
        let texts = [
            "-----BEGIN RSA PRIVATE KEY-----\nab\n-----END RSA PRIVATE KEY-----\n",
            "-----BEGIN PRIVATE KEY-----\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----",
            "x -----END  y PRIVATE KEY----- -----END PRIVATE KEY----------END PRIVATE KEY-----",
            "-----BEGIN EC PRIVATE KEY-----\n-----BEGIN EC PRIVATE KEY-----\n",
            "ü -----END ü PRIVATE KEY-----ü",
        ];
        for text in texts {
            let mut ends = PemEnds::new(text);
            for from in 0..=text.len() + 1 {
                if text.is_char_boundary(from) {
                    assert_eq!(
                        ends.after(from),
                        pem_end(text, from),
                        "{text:?} from {from}"
                    );
                }
            }
            // Out of order too (a fresh search, same answer).
            for from in (0..=text.len()).rev().filter(|&f| text.is_char_boundary(f)) {
                assert_eq!(
                    ends.after(from),
                    pem_end(text, from),
                    "{text:?} back {from}"
                );
            }
        }
    }
}
