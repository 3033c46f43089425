//! The HTTP client of peer calls (the JSON-RPC and HTTP+JSON hops and their streams): hyper-util's
//! pooled client used directly, the stack reqwest is built on, without reqwest's per-request
//! layers (the URL parsed again three times, the redirect layer, the retry layer, the header map
//! copied twice): a hop's peer send costs 18 k instructions instead of 43 k (docs/benchmarks-history.md).
//!
//! It keeps what the gateway's reqwest client gave peer calls:
//! - the checked DNS resolver ([`CheckedResolver`]): the address connected to is the address
//!   checked, a name that changes cannot reach an internal address;
//! - no redirect is followed (a 3xx is the peer's answer, read as any other status), no proxy;
//! - keep-alive pooling (idle connections kept 90 s), TCP_NODELAY, a 10 s connect timeout;
//! - TLS with aws-lc-rs and the platform's roots plus `peer_ca_file` ([`a2a_client::tls`]),
//!   ALPN `h2` and `http/1.1`;
//! - one deadline for the whole call, the answer's body included (`peer_timeout_secs`, 24 h for
//!   streams, whose stall timer is the relay's).
//!
//! A read (GetTask, ListTasks, push config reads) that fails because the pooled connection it
//! went out on was closed by the peer before any answer (the peer's idle timeout met the call:
//! likely when the peer keeps idle connections shorter than the pool's 90 s, or when the gateway
//! is too busy to see the close in time) is sent once more, on a new connection. A send is never
//! sent again: the peer may have acted on it.
//!
//! Requests are still built with a `reqwest::RequestBuilder` (headers, credentials, extensions
//! stay where they are); only the sending is done here. The card fetches, trust checks and push
//! deliveries keep the gateway's reqwest client.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use tokio::time::{Instant, Sleep};

use a2a_agent::net_guard::NetGuard;

use crate::peer::CheckedResolver;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The pooled client of peer calls (cheap to clone).
#[derive(Clone)]
pub(crate) struct PeerHttp {
    client: Client<HttpsConnector<HttpConnector<CheckedResolver>>, reqwest::Body>,
}

/// Why a peer call produced no answer.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The deadline passed before the answer's head arrived.
    Timeout,
    /// The request could not be sent (the URL and the error with its sources).
    Failed(String),
}

impl PeerHttp {
    /// A client resolving through [`NetGuard`] (`allow_loopback` in development mode) and
    /// trusting the platform's roots plus `extra_roots`.
    pub(crate) fn new(
        allow_loopback: bool,
        extra_roots: &[rustls::pki_types::CertificateDer<'static>],
    ) -> Result<PeerHttp, String> {
        let mut http = HttpConnector::new_with_resolver(CheckedResolver { allow_loopback });
        http.set_nodelay(true);
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(10)));
        let tls =
            a2a_client::tls::client_config(extra_roots).map_err(|e| format!("peer TLS: {e}"))?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_all_versions()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(https);
        Ok(PeerHttp { client })
    }

    /// Sends `req` within `timeout` (the whole call: head and body), following no redirect;
    /// with `read`, once more on a new connection when the pooled one was found closed.
    pub(crate) async fn send(
        &self,
        mut req: reqwest::Request,
        timeout: Duration,
        read: bool,
    ) -> Result<PeerResponse, SendError> {
        let deadline = Instant::now() + timeout;
        let failed = |e: &dyn std::error::Error, url: &url::Url| {
            SendError::Failed(format!(
                "error sending request for url ({url}): {}",
                crate::peer::error_chain(e)
            ))
        };
        let uri: http::Uri = match req.url().as_str().parse() {
            Ok(u) => u,
            Err(e) => return Err(failed(&e, req.url())),
        };
        let body = req.body_mut().take().unwrap_or_default();
        // A read's body is kept for a second try (a buffered body; a streamed one is not tried
        // again).
        let again = read
            .then(|| body.as_bytes().map(Bytes::copy_from_slice))
            .flatten()
            .map(|b| (b, req.headers().clone(), uri.clone()));
        let mut out = http::Request::new(body);
        *out.method_mut() = req.method().clone();
        *out.uri_mut() = uri;
        *out.headers_mut() = std::mem::take(req.headers_mut());
        let mut sent = tokio::time::timeout_at(deadline, self.client.request(out)).await;
        if let (Ok(Err(e)), Some((body, headers, uri))) = (&sent, again)
            && closed_before_answer(e)
        {
            tracing::debug!(
                "peer closed a pooled connection before answering; sending the read again"
            );
            let mut out = http::Request::new(reqwest::Body::from(body));
            *out.method_mut() = req.method().clone();
            *out.uri_mut() = uri;
            *out.headers_mut() = headers;
            sent = tokio::time::timeout_at(deadline, self.client.request(out)).await;
        }
        let resp = match sent {
            Err(_) => return Err(SendError::Timeout),
            Ok(Err(e)) => return Err(failed(&e, req.url())),
            Ok(Ok(r)) => r,
        };
        let (head, body) = resp.into_parts();
        Ok(PeerResponse {
            head,
            body: Deadline {
                inner: body,
                sleep: Box::pin(tokio::time::sleep_until(deadline)),
            },
        })
    }
}

/// Whether a call failed because its connection closed before any answer: hyper's "connection
/// closed before message completed", a reset or a broken pipe, or a request the pool cancelled
/// as its connection closed. A failure to connect is not one (nothing was pooled).
fn closed_before_answer(e: &hyper_util::client::legacy::Error) -> bool {
    if e.is_connect() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(err) = source {
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && (h.is_incomplete_message() || h.is_canceled())
        {
            return true;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// Why a peer's answer body could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Larger than the limit.
    TooLarge,
    /// The call's deadline passed.
    TimedOut,
    /// The connection failed (the error with its sources).
    Failed(String),
}

/// A peer's answer: its head, and its body bounded by the call's deadline.
pub(crate) struct PeerResponse {
    head: http::response::Parts,
    body: Deadline,
}

impl PeerResponse {
    /// The status.
    pub(crate) fn status(&self) -> http::StatusCode {
        self.head.status
    }

    /// The headers.
    pub(crate) fn headers(&self) -> &http::HeaderMap {
        &self.head.headers
    }

    /// The body, up to `max` bytes.
    pub(crate) async fn read_limited(mut self, max: u64) -> Result<Vec<u8>, ReadError> {
        use http_body_util::BodyExt;
        let mut out = Vec::new();
        while let Some(frame) = self.body.frame().await {
            let frame = frame.map_err(|e| {
                if e.is::<TimedOut>() {
                    ReadError::TimedOut
                } else {
                    ReadError::Failed(crate::peer::error_chain(e.as_ref()))
                }
            })?;
            if let Ok(chunk) = frame.into_data() {
                if (out.len() + chunk.len()) as u64 > max {
                    return Err(ReadError::TooLarge);
                }
                out.extend_from_slice(&chunk);
            }
        }
        Ok(out)
    }

    /// The body as a stream of byte chunks (an SSE answer).
    pub(crate) fn bytes_stream(
        self,
    ) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + Unpin + 'static {
        use futures::TryStreamExt;
        http_body_util::BodyDataStream::new(self.body).map_err(std::io::Error::other)
    }
}

/// The answer's body, ended with an error when the call's deadline passes.
struct Deadline {
    inner: hyper::body::Incoming,
    sleep: Pin<Box<Sleep>>,
}

/// The error of a body read past the call's deadline.
#[derive(Debug)]
struct TimedOut;

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the peer call timed out")
    }
}

impl std::error::Error for TimedOut {}

impl Body for Deadline {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if this.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(TimedOut))));
        }
        Pin::new(&mut this.inner)
            .poll_frame(cx)
            .map_err(|e| Box::new(e) as BoxError)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

type Resolving =
    Pin<Box<dyn Future<Output = Result<std::vec::IntoIter<SocketAddr>, BoxError>> + Send>>;

/// The same checked resolver as the reqwest client's ([`CheckedResolver`]), as hyper-util's
/// DNS hook: only allowed addresses come back (one refused address refuses the name), so the
/// address connected to is the address checked.
impl tower::Service<Name> for CheckedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Resolving;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Resolving {
        let guard = NetGuard::new(self.allow_loopback);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips = guard.resolve_checked(&host).await.map_err(Box::new)?;
            Ok(ips
                .into_iter()
                .map(|ip| SocketAddr::new(ip, 0))
                .collect::<Vec<_>>()
                .into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// Reads one HTTP/1.1 request (head and `content-length` body); false at end of stream.
    async fn read_request(s: &mut TcpStream) -> bool {
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            match s.read(&mut byte).await {
                Ok(1) => buf.push(byte[0]),
                _ => return false,
            }
        }
        let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; len];
        s.read_exact(&mut body).await.is_ok()
    }

    /// A peer whose first connection answers one request and then closes on the next one
    /// without answering (its idle timeout meeting the call); later connections answer all.
    /// Returns its URL and the number of connections it accepted.
    async fn closing_peer() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let first = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
                tokio::spawn(async move {
                    let mut answered = 0;
                    while read_request(&mut s).await {
                        if first && answered == 1 {
                            return;
                        }
                        let ok = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                        if s.write_all(ok).await.is_err() {
                            return;
                        }
                        answered += 1;
                    }
                });
            }
        });
        (url, accepted)
    }

    async fn call(http: &PeerHttp, url: &str, read: bool) -> Result<u16, String> {
        let req = reqwest::Client::new().post(url).body("{}").build().unwrap();
        match http.send(req, Duration::from_secs(5), read).await {
            Ok(r) => Ok(r.status().as_u16()),
            Err(SendError::Failed(m)) => Err(m),
            Err(SendError::Timeout) => Err("timeout".into()),
        }
    }

    #[tokio::test]
    async fn a_read_goes_again_on_a_new_connection_when_the_pooled_one_closes_unanswered() {
        let (url, accepted) = closing_peer().await;
        let http = PeerHttp::new(true, &[]).unwrap();
        assert_eq!(call(&http, &url, true).await, Ok(200));
        assert_eq!(call(&http, &url, true).await, Ok(200));
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_send_is_not_sent_again() {
        let (url, accepted) = closing_peer().await;
        let http = PeerHttp::new(true, &[]).unwrap();
        assert_eq!(call(&http, &url, false).await, Ok(200));
        let second = call(&http, &url, false).await;
        assert!(second.is_err(), "{second:?}");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
