//! Request bodies under the body-read timeout: buffered whole (up to `max_buffered_body`) before
//! the service sees the request, so a slow body is refused (408) at the edge.

use axum::body::Body;
use axum::extract::Request;
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::BodyExt;

use super::ListenConfig;

/// Read the body within the body-read timeout. Up to `max_buffered_body` bytes are buffered;
/// a larger body goes on as buffered prefix + the rest of the stream. A declared
/// `Content-Length` over `max_buffered_body` is not read at all: the server refuses it (413) at
/// once. `Err` = timed out.
pub(super) async fn buffer_body(
    req: Request,
    cfg: &ListenConfig,
) -> Result<Request, http::request::Parts> {
    let (parts, mut body) = req.into_parts();
    // Nothing to buffer, or a declared length over the buffer: the server answers that one
    // (413) without waiting for a body that may never come.
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if axum::body::HttpBody::is_end_stream(&body)
        || declared.is_some_and(|n| n > cfg.max_buffered_body as u64)
    {
        return Ok(Request::from_parts(parts, body));
    }
    let deadline = tokio::time::Instant::now() + cfg.body_read_timeout;
    let mut buf = bytes::BytesMut::new();
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(parts),
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                // Pass the error on: the server reports a broken body its own way.
                let err = std::io::Error::other(e.to_string());
                let s = futures_util::stream::iter([Ok(buf.freeze()), Err(err)]);
                return Ok(Request::from_parts(parts, Body::from_stream(s)));
            }
            Ok(Some(Ok(f))) => f,
        };
        if let Ok(d) = frame.into_data() {
            buf.extend_from_slice(&d);
        }
        if buf.len() > cfg.max_buffered_body {
            let head =
                futures_util::stream::once(futures_util::future::ready(Ok::<Bytes, axum::Error>(
                    buf.freeze(),
                )));
            let rest = body.into_data_stream();
            return Ok(Request::from_parts(
                parts,
                Body::from_stream(head.chain(rest)),
            ));
        }
    }
    Ok(Request::from_parts(parts, Body::from(buf.freeze())))
}
