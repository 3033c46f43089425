//! HTTP+JSON path segments, decoded strictly.
//!
//! A percent sign must start a `%XX` escape with two hex digits, and the decoded bytes must be
//! UTF-8; anything else is refused rather than passed on as literal text or replaced with
//! U+FFFD. `+` is a literal plus in a path (it means a space only in form-encoded queries).

use std::fmt;

/// Why a path segment was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// `%` not followed by two hex digits, at this byte offset of the segment.
    BadEscape(usize),
    /// The decoded bytes are not UTF-8.
    NotUtf8,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::BadEscape(at) => write!(
                f,
                "invalid percent-encoding at byte {at}: '%' must be followed by two hex digits"
            ),
            PathError::NotUtf8 => f.write_str("the percent-decoded path is not valid UTF-8"),
        }
    }
}

impl std::error::Error for PathError {}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes one path segment (or a whole path: `/` is kept as it is).
pub fn decode_segment(seg: &str) -> Result<String, PathError> {
    if !seg.contains('%') {
        return Ok(seg.to_owned());
    }
    let b = seg.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) else {
                return Err(PathError::BadEscape(i));
            };
            out.push(h << 4 | l);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| PathError::NotUtf8)
}

/// Checks every segment of `path` decodes ([`decode_segment`]).
pub fn check_path(path: &str) -> Result<(), PathError> {
    path.split('/')
        .try_for_each(|s| decode_segment(s).map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict() {
        assert_eq!(decode_segment("a%20b+c").unwrap(), "a b+c");
        assert_eq!(decode_segment("%C3%A9").unwrap(), "é");
        assert_eq!(decode_segment("t%2").unwrap_err(), PathError::BadEscape(1));
        assert_eq!(decode_segment("%zz").unwrap_err(), PathError::BadEscape(0));
        assert_eq!(decode_segment("%FF").unwrap_err(), PathError::NotUtf8);
        assert!(check_path("/a2a/x/v1/tasks/%FF").is_err());
        assert!(check_path("/a2a/x/v1/tasks/ok%2Fid").is_ok());
    }
}
