//! A Server-Sent Events parser (WHATWG HTML §9.2 "event stream interpretation") over a byte stream.
//!
//! [`SseParser`] is incremental: feed it chunks as they arrive (a line or even a `\r\n` may be split
//! across chunks). Comments (`:` lines, used as heartbeats) and blank-data events are ignored; an
//! incomplete event at end of stream is discarded, as the standard says. [`events`] adapts a
//! `reqwest` `bytes_stream()` into a `Stream` of [`SseEvent`]s that ends when the server closes.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

/// Default cap on one event's size (data plus field names): 16 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` type, if one was set (`None` means the default `message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` seen on the stream so far.
    pub id: Option<String>,
    /// A `retry:` value in milliseconds, if this event carried one.
    pub retry: Option<u64>,
}

/// Why an event stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// One event grew beyond the limit.
    #[error("server-sent event larger than {0} bytes")]
    TooLarge(usize),
    /// A line is not UTF-8.
    #[error("server-sent event stream is not UTF-8")]
    NotUtf8,
    /// The underlying byte stream failed.
    #[error("reading event stream: {0}")]
    Body(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Incremental SSE parser.
#[derive(Debug)]
pub struct SseParser {
    buf: Vec<u8>,
    started: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    retry: Option<u64>,
    max_event_bytes: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new(DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseParser {
    /// A parser refusing events larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> SseParser {
        SseParser {
            buf: Vec::new(),
            started: false,
            data: String::new(),
            has_data: false,
            event: None,
            last_id: None,
            retry: None,
            max_event_bytes,
        }
    }

    /// Feeds a chunk; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        self.buf.extend_from_slice(chunk);
        if !self.started {
            if self.buf.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                return Ok(Vec::new());
            }
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
            }
            self.started = true;
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    self.line(start, i, &mut out)?;
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    if i + 1 == self.buf.len() {
                        // Might be the first half of `\r\n`: wait for more bytes.
                        break;
                    }
                    self.line(start, i, &mut out)?;
                    i += if self.buf[i + 1] == b'\n' { 2 } else { 1 };
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.buf.drain(..start);
        if self.buf.len() + self.data.len() > self.max_event_bytes {
            return Err(SseError::TooLarge(self.max_event_bytes));
        }
        Ok(out)
    }

    /// Ends the stream. A trailing `\r` completes its line; an event not followed by a blank line is
    /// discarded (WHATWG: "any pending data must be discarded").
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        if self.buf.last() == Some(&b'\r') {
            let end = self.buf.len() - 1;
            self.line(0, end, &mut out)?;
            self.buf.clear();
        }
        self.buf.clear();
        self.data.clear();
        self.has_data = false;
        self.event = None;
        Ok(out)
    }

    fn line(&mut self, start: usize, end: usize, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::str::from_utf8(&self.buf[start..end]).map_err(|_| SseError::NotUtf8)?;
        if line.is_empty() {
            if self.has_data {
                let mut data = std::mem::take(&mut self.data);
                if data.ends_with('\n') {
                    data.pop();
                }
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                    id: self.last_id.clone(),
                    retry: self.retry.take(),
                });
            } else {
                self.event = None;
                self.retry = None;
            }
            self.has_data = false;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_event_bytes {
                    return Err(SseError::TooLarge(self.max_event_bytes));
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
        Ok(())
    }
}

/// Adapts a byte stream (e.g. `reqwest::Response::bytes_stream()`) into a stream of events.
///
/// The stream ends (`None`) when the byte stream ends; a failing byte stream yields one
/// [`SseError::Body`] and then ends.
pub fn events<S, E>(
    body: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<SseEvent, SseError>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
    E: std::error::Error + Send + Sync + 'static,
{
    struct State<S> {
        body: S,
        parser: SseParser,
        pending: VecDeque<SseEvent>,
        done: bool,
    }
    let state = State {
        body,
        parser: SseParser::new(max_event_bytes),
        pending: VecDeque::new(),
        done: false,
    };
    futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.done {
                return None;
            }
            match st.body.next().await {
                Some(Ok(chunk)) => match st.parser.feed(&chunk) {
                    Ok(evs) => st.pending.extend(evs),
                    Err(e) => {
                        st.done = true;
                        return Some((Err(e), st));
                    }
                },
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(SseError::Body(Box::new(e))), st));
                }
                None => {
                    st.done = true;
                    match st.parser.finish() {
                        Ok(evs) => st.pending.extend(evs),
                        Err(e) => return Some((Err(e), st)),
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c).unwrap());
        }
        out.extend(p.finish().unwrap());
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn simple_events() {
        let evs = parse_all(&[b"data: {\"a\":1}\n\ndata: two\n\n"]);
        assert_eq!(data(&evs), vec!["{\"a\":1}", "two"]);
        assert_eq!(evs[0].event, None);
    }

    #[test]
    fn multiline_data_joined_with_newline() {
        let evs = parse_all(&[b"data: a\ndata:b\ndata\n\n"]);
        assert_eq!(data(&evs), vec!["a\nb\n"]);
    }

    #[test]
    fn comments_and_heartbeats_ignored() {
        let evs = parse_all(&[b": ping\n\n:\n\ndata: x\n: in the middle\n\n\n\n"]);
        assert_eq!(data(&evs), vec!["x"]);
    }

    #[test]
    fn crlf_and_cr_line_endings_split_across_chunks() {
        let evs = parse_all(&[b"data: one\r", b"\n\r", b"\ndata: two\r\rdata: three\n\n"]);
        assert_eq!(data(&evs), vec!["one", "two", "three"]);
    }

    #[test]
    fn byte_by_byte_feed_matches() {
        let input = b"event: error\nid: 7\nretry: 100\ndata: {\"x\":\"\xc3\xa9\"}\n\n";
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        let evs = parse_all(&chunks);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].event.as_deref(), Some("error"));
        assert_eq!(evs[0].id.as_deref(), Some("7"));
        assert_eq!(evs[0].retry, Some(100));
        assert_eq!(evs[0].data, "{\"x\":\"é\"}");
    }

    #[test]
    fn event_type_resets_after_dispatch() {
        let evs = parse_all(&[b"event: a\ndata: 1\n\ndata: 2\n\n"]);
        assert_eq!(evs[0].event.as_deref(), Some("a"));
        assert_eq!(evs[1].event, None);
    }

    #[test]
    fn incomplete_event_at_end_is_discarded() {
        let evs = parse_all(&[b"data: done\n\ndata: partial\n"]);
        assert_eq!(data(&evs), vec!["done"]);
    }

    #[test]
    fn bom_is_stripped_even_split() {
        let evs = parse_all(&[b"\xEF", b"\xBB\xBFdata: x\n\n"]);
        assert_eq!(data(&evs), vec!["x"]);
    }

    #[test]
    fn oversize_event_is_refused() {
        let mut p = SseParser::new(8);
        assert!(matches!(
            p.feed(b"data: 0123456789\n"),
            Err(SseError::TooLarge(8))
        ));
        let mut p = SseParser::new(8);
        assert!(matches!(
            p.feed(b"data: 0123456789"),
            Err(SseError::TooLarge(8))
        ));
    }

    #[test]
    fn not_utf8_is_an_error() {
        let mut p = SseParser::default();
        assert!(matches!(p.feed(b"data: \xff\n"), Err(SseError::NotUtf8)));
    }

    #[tokio::test]
    async fn stream_adapter_ends_cleanly_and_surfaces_body_errors() {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"data: 1\n\nda")),
            Ok(Bytes::from_static(b"ta: 2\n\n")),
        ];
        let evs: Vec<_> = events(futures_util::stream::iter(chunks), 1024)
            .collect()
            .await;
        let got: Vec<String> = evs.into_iter().map(|e| e.unwrap().data).collect();
        assert_eq!(got, vec!["1", "2"]);

        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"data: 1\n\n")),
            Err(std::io::Error::other("reset")),
            Ok(Bytes::from_static(b"data: never\n\n")),
        ];
        let evs: Vec<_> = events(futures_util::stream::iter(chunks), 1024)
            .collect()
            .await;
        assert_eq!(evs.len(), 2);
        assert!(matches!(evs[1], Err(SseError::Body(_))));
    }
}
