//! How much of a caller's input an error may quote: the one rule every binding of the agent and
//! the gateway applies to error messages, `ErrorInfo` metadata, field violations and gRPC
//! trailers.
//!
//! A value a caller sent (a task id, a method name, a header, a JSON member name) is quoted
//! whole up to [`MAX_ECHO_BYTES`]; a longer one is cut at a character boundary and ends in
//! `…(N bytes)` ([`elide`]). A whole message is kept to [`MAX_MESSAGE_BYTES`], and any run of
//! text without whitespace longer than [`MAX_ECHO_BYTES`] in it is elided the same way
//! ([`message`]): the renderers apply it to every message, so a value some constructor quoted
//! whole is still cut. [`A2aError::bounded`] applies both to an error value: every form of
//! [`crate::error`] and the gRPC status are written from it. Without this a 100 KB task id came back in the error (and in gRPC
//! trailers, past HTTP/2's usual 16 KiB header limit, which the client reports as
//! RESOURCE_EXHAUSTED instead of the error).

use std::borrow::Cow;

use crate::error::A2aError;

/// The longest caller value an error quotes, in bytes.
pub const MAX_ECHO_BYTES: usize = 256;

/// The longest error message written on any binding, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// `value` as an error may quote it: unchanged up to [`MAX_ECHO_BYTES`], else its start and
/// `…(N bytes)`, [`MAX_ECHO_BYTES`] in all.
pub fn elide(value: &str) -> Cow<'_, str> {
    elide_to(value, MAX_ECHO_BYTES)
}

/// `value` cut to at most `max` bytes (at least the `…(N bytes)` marker), ending in
/// `…(N bytes)` when cut.
pub fn elide_to(value: &str, max: usize) -> Cow<'_, str> {
    if value.len() <= max {
        return Cow::Borrowed(value);
    }
    Cow::Owned(cut(value, max, value.len()))
}

/// The start of `value` and `…(total bytes)`, `max` bytes at most.
fn cut(value: &str, max: usize, total: usize) -> String {
    let tail = format!("…({total} bytes)");
    let mut at = max.saturating_sub(tail.len()).min(value.len());
    while !value.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}{tail}", &value[..at])
}

/// An error message as it may be written: every run without whitespace longer than
/// [`MAX_ECHO_BYTES`] elided, and the whole kept to [`MAX_MESSAGE_BYTES`].
pub fn message(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_ECHO_BYTES {
        return Cow::Borrowed(text);
    }
    let long_run = text
        .split(char::is_whitespace)
        .any(|run| run.len() > MAX_ECHO_BYTES);
    if long_run {
        let mut out = String::with_capacity(MAX_MESSAGE_BYTES);
        let mut rest = text;
        while !rest.is_empty() {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push_str(&elide(&rest[..end]));
            let ws = rest[end..]
                .find(|c: char| !c.is_whitespace())
                .map_or(rest.len(), |i| end + i);
            out.push_str(&rest[end..ws]);
            rest = &rest[ws..];
            if out.len() > MAX_MESSAGE_BYTES {
                return Cow::Owned(cut(&out, MAX_MESSAGE_BYTES, text.len()));
            }
        }
        return Cow::Owned(out);
    }
    elide_to(text, MAX_MESSAGE_BYTES)
}

impl A2aError {
    /// This error as it may be written on any binding ([`crate::elide`]): the message bounded,
    /// metadata values and field violations elided. Borrowed when nothing is too long.
    pub fn bounded(&self) -> Cow<'_, A2aError> {
        let fits = matches!(message(&self.message), Cow::Borrowed(_))
            && self.metadata.values().all(|v| v.len() <= MAX_ECHO_BYTES)
            && self.field_violations.iter().all(|v| {
                v.field.len() <= MAX_ECHO_BYTES
                    && matches!(message(&v.description), Cow::Borrowed(_))
            });
        if fits {
            return Cow::Borrowed(self);
        }
        let mut e = self.clone();
        e.message = message(&self.message).into_owned();
        for v in e.metadata.values_mut() {
            if v.len() > MAX_ECHO_BYTES {
                *v = elide(v).into_owned();
            }
        }
        for v in &mut e.field_violations {
            v.field = elide(&v.field).into_owned();
            v.description = message(&v.description).into_owned();
        }
        Cow::Owned(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_kept() {
        assert!(matches!(elide("t-1"), Cow::Borrowed("t-1")));
        let v = "x".repeat(MAX_ECHO_BYTES);
        assert_eq!(elide(&v), v);
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        let v = "x".repeat(100_000);
        let e = elide(&v);
        assert!(e.len() <= MAX_ECHO_BYTES, "{}", e.len());
        assert!(e.ends_with("…(100000 bytes)"), "{e}");
        assert!(e.starts_with("xxxx"));
        // A multi-byte character is never split.
        let v = "é".repeat(1000);
        let e = elide(&v);
        assert!(e.len() <= MAX_ECHO_BYTES);
        assert!(e.starts_with('é'));
    }

    #[test]
    fn messages_lose_long_runs_and_stay_bounded() {
        let id = "y".repeat(50_000);
        let m = format!("Task {id} not found");
        let out = message(&m);
        assert!(out.starts_with("Task yyy"), "{out}");
        assert!(out.ends_with("…(50000 bytes) not found"), "{out}");
        assert!(!out.contains(&"y".repeat(MAX_ECHO_BYTES + 1)));
        let words = "word ".repeat(10_000);
        let out = message(&words);
        assert!(out.len() <= MAX_MESSAGE_BYTES, "{}", out.len());
        assert!(out.ends_with("bytes)"), "{out}");
        assert!(matches!(message("a fine message"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_caller_values_are_elided_on_every_form() {
        let id = "x".repeat(100_000);
        let e = A2aError::task_not_found(&id)
            .with_field_violation(id.clone(), format!("{id} is unknown"));
        let e = A2aError {
            message: format!("no task {id}"),
            ..e
        };
        let run = "x".repeat(MAX_ECHO_BYTES + 1);
        for text in [
            serde_json::to_string(&e.to_jsonrpc_v1()).unwrap(),
            serde_json::to_string(&e.to_jsonrpc_v03()).unwrap(),
            serde_json::to_string(&e.to_rest_body()).unwrap(),
        ] {
            assert!(!text.contains(&run), "{}", text.len());
            assert!(text.len() < 2048, "{}", text.len());
            assert!(text.contains("(100000 bytes)"), "{text}");
        }
        // Short values are written as they are.
        let e = A2aError::task_not_found("t-1");
        assert!(matches!(e.bounded(), Cow::Borrowed(_)));
    }
}
