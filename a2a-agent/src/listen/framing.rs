//! Framing errors in the caller's form. hyper answers an HTTP/1 request head it cannot read
//! itself, before any service runs: 400 for a malformed request line, header or
//! `Content-Length`, 414 for a URI over its limit, 431 for too many or too large headers. The
//! answer is `connection: close`, `content-length: 0`, `date`, and hyper offers no hook to give
//! it a body (its `on_error` is private to the connection).
//!
//! So [`FramedIo`] wraps each connection's stream, below hyper. Reading, it keeps the first
//! [`CAPTURE`] bytes of the request being read (from the last answer written on); writing, it
//! recognises exactly hyper's automatic answer (one of the three status lines, those three
//! headers and nothing else, alone in one write) and writes instead the same status with the
//! server's own small JSON error, the one the path and `A2A-Version` of the captured head call
//! for (the [`Refuser`]), `content-length` set and `connection: close`. Anything else passes
//! through untouched; an HTTP/2 connection (the `PRI` preface) is not looked at at all.
//!
//! HTTP/2 has no such answers to rewrite: h2 refuses a header block over its limit with a 431
//! HEADERS frame and a reset stream, and every other framing error is a stream or connection
//! error (RST_STREAM / GOAWAY), which the caller's HTTP/2 (or gRPC) client reports itself.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::FutureExt;
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{EdgeRefusal, Refuser};

/// Bytes of a request head kept to tell the form of a framing error (the path and the
/// `A2A-Version` header, when they come early enough).
pub(crate) const CAPTURE: usize = 2048;

/// A capture buffer at most this large is kept between requests (a larger one is freed).
const KEEP: usize = 1024;

/// hyper's automatic answers, by their status line.
const AUTOMATIC: [(&[u8], EdgeRefusal); 3] = [
    (b"HTTP/1.1 400 Bad Request\r\n", EdgeRefusal::BadRequest),
    (b"HTTP/1.1 414 URI Too Long\r\n", EdgeRefusal::UriTooLong),
    (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
        EdgeRefusal::HeadersTooLarge,
    ),
];

/// A connection's stream that turns hyper's empty framing answers into JSON ones (see the
/// module documentation).
pub(crate) struct FramedIo<T> {
    inner: T,
    refuse: Refuser,
    /// The start of the request being read; freed when an answer is written.
    head: Vec<u8>,
    /// Whether the bytes read now belong to a request head still being captured.
    capturing: bool,
    /// An HTTP/2 connection: passed through.
    h2: bool,
    /// Whether the connection's first bytes have told HTTP/2 from HTTP/1.
    told: bool,
    /// The replacement answer and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
}

impl<T> FramedIo<T> {
    pub(crate) fn new(inner: T, refuse: Refuser) -> Self {
        FramedIo {
            inner,
            refuse,
            head: Vec::new(),
            capturing: true,
            h2: false,
            told: false,
            pending: None,
        }
    }

    fn capture(&mut self, read: &[u8]) {
        if self.h2 || !self.capturing || read.is_empty() {
            return;
        }
        let room = CAPTURE.saturating_sub(self.head.len());
        let from = self.head.len().saturating_sub(3);
        self.head.extend_from_slice(&read[..read.len().min(room)]);
        if !self.told && self.head.len() >= 4 {
            self.told = true;
            if self.head.starts_with(b"PRI ") {
                // The HTTP/2 preface: nothing here for this wrapper to do.
                self.h2 = true;
                self.head = Vec::new();
                return;
            }
        }
        let done = self.head.len() >= CAPTURE
            || memchr::memmem::find(&self.head[from..], b"\r\n\r\n").is_some();
        if done {
            self.capturing = false;
        }
    }

    /// Bytes of an answer about to be written: the replacement when they are hyper's automatic
    /// answer (and nothing else), else `None`. Either way the next request is captured anew.
    fn replace(&mut self, out: &[u8]) -> Option<Vec<u8>> {
        self.capturing = true;
        let Some(why) = (!self.h2).then(|| automatic(out)).flatten() else {
            // A keep-alive connection keeps a small buffer for its next head.
            if self.head.capacity() > KEEP {
                self.head = Vec::new();
            } else {
                self.head.clear();
            }
            return None;
        };
        let head = std::mem::take(&mut self.head);
        let date = out
            .split(|b| *b == b'\n')
            .find(|l| l.starts_with(b"date: "))
            .map(|l| l.trim_ascii_end().to_vec());
        let parts = head_parts(&head);
        Some(answer(why, date, (self.refuse)(&parts, why)))
    }
}

/// The refusal hyper's automatic answer `out` stands for, if it is one.
fn automatic(out: &[u8]) -> Option<EdgeRefusal> {
    let (line, why) = AUTOMATIC.iter().find(|(l, _)| out.starts_with(l))?;
    let rest = out[line.len()..].strip_suffix(b"\r\n\r\n")?;
    let mut seen = 0;
    for h in rest.split(|b| *b == b'\n') {
        let h = h.trim_ascii_end();
        if h == b"connection: close" || h == b"content-length: 0" || h.starts_with(b"date: ") {
            seen += 1;
        } else {
            return None;
        }
    }
    (seen >= 2).then_some(*why)
}

/// What the captured head tells: the method, the path and query (as far as captured) and
/// `A2A-Version`.
fn head_parts(head: &[u8]) -> http::request::Parts {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first
        .next()
        .and_then(|m| http::Method::from_bytes(m.as_bytes()).ok())
        .unwrap_or(http::Method::GET);
    let uri = first
        .next()
        .and_then(|t| t.parse::<http::Uri>().ok())
        .filter(|u| u.path().starts_with('/'))
        .unwrap_or_else(|| http::Uri::from_static("/"));
    let mut req = http::Request::builder().method(method).uri(uri);
    for line in lines.take_while(|l| !l.is_empty()) {
        if let Some((k, v)) = line.split_once(':')
            && k.trim().eq_ignore_ascii_case("a2a-version")
        {
            req = req.header("a2a-version", v.trim());
        }
    }
    match req.body(()) {
        Ok(r) => r.into_parts().0,
        Err(_) => http::Request::new(()).into_parts().0,
    }
}

/// The replacement bytes: hyper's status, the refusal's headers and body, `content-length`,
/// `connection: close` and hyper's `date`.
fn answer(why: EdgeRefusal, date: Option<Vec<u8>>, resp: axum::response::Response) -> Vec<u8> {
    let (parts, body) = resp.into_parts();
    // The refusers' bodies are whole in memory: collecting them never waits.
    let body = body
        .collect()
        .now_or_never()
        .and_then(Result::ok)
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let status = why.status();
    let mut out = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or("")
    )
    .into_bytes();
    for (k, v) in &parts.headers {
        if matches!(
            k.as_str(),
            "content-length" | "connection" | "date" | "transfer-encoding"
        ) {
            continue;
        }
        out.extend_from_slice(k.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(
        format!("content-length: {}\r\nconnection: close\r\n", body.len()).as_bytes(),
    );
    if let Some(d) = date {
        out.extend_from_slice(&d);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&body);
    out
}

impl<T: AsyncWrite + Unpin> FramedIo<T> {
    /// Writes what is left of the replacement answer.
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, at)) = &mut self.pending {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*at..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *at += n;
            if *at == bytes.len() {
                self.pending = None;
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for FramedIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.capture(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for FramedIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drive(cx))?;
        if let Some(bytes) = this.replace(buf) {
            this.pending = Some((bytes, 0));
            // Buffered: the rest is written by later writes, flushes and the shutdown.
            let _ = this.drive(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drive(cx))?;
        let mut full = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(one), None) = (full.next(), full.next())
            && let Some(bytes) = this.replace(one)
        {
            this.pending = Some((bytes, 0));
            let _ = this.drive(cx)?;
            return Poll::Ready(Ok(one.len()));
        }
        // An answer is going out: the next request is captured anew.
        this.capturing = true;
        this.head.clear();
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drive(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drive(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_own_answers_are_recognised() {
        let d = b"date: Sun, 06 Dec 2026 08:57:15 GMT";
        let own = |line: &str| {
            let mut v = line.as_bytes().to_vec();
            v.extend_from_slice(b"connection: close\r\ncontent-length: 0\r\n");
            v.extend_from_slice(d);
            v.extend_from_slice(b"\r\n\r\n");
            v
        };
        assert_eq!(
            automatic(&own("HTTP/1.1 431 Request Header Fields Too Large\r\n")),
            Some(EdgeRefusal::HeadersTooLarge)
        );
        assert_eq!(
            automatic(&own("HTTP/1.1 400 Bad Request\r\n")),
            Some(EdgeRefusal::BadRequest)
        );
        assert_eq!(
            automatic(&own("HTTP/1.1 414 URI Too Long\r\n")),
            Some(EdgeRefusal::UriTooLong)
        );
        // A handler's 400 (a body, a content type) and other statuses pass through.
        let mut with_body = own("HTTP/1.1 400 Bad Request\r\n");
        with_body.extend_from_slice(b"{}");
        assert_eq!(automatic(&with_body), None);
        let typed = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(automatic(typed), None);
        assert_eq!(automatic(&own("HTTP/1.1 404 Not Found\r\n")), None);
    }

    #[test]
    fn the_head_tells_path_and_version() {
        let p = head_parts(b"POST /a2a/echo/v1/message:send?x=1 HTTP/1.1\r\nHost: a\r\nA2A-Version: 1.0\r\nContent-Length: zz\r\n\r\n");
        assert_eq!(p.method, http::Method::POST);
        assert_eq!(p.uri.path(), "/a2a/echo/v1/message:send");
        assert_eq!(p.uri.query(), Some("x=1"));
        assert_eq!(p.headers["a2a-version"], "1.0");
        // A head cut by the capture, or no head at all.
        let p = head_parts(b"GET /a2a/echo/aaaaaaaa");
        assert_eq!(p.uri.path(), "/a2a/echo/aaaaaaaa");
        let p = head_parts(b"\x01\x02 garbage");
        assert_eq!(p.uri.path(), "/");
    }
}
