//! The protocol edge shared by the agent and the gateway: one accept loop with TCP_NODELAY,
//! header-read, body-read and idle timeouts, a connection cap kept below the fd limit, graceful
//! draining, the SIGTERM/SIGINT wait of both binaries ([`shutdown_signal`]) and the runtime
//! they serve on ([`runtime`]).
//!
//! Built on `hyper` + `hyper-util` (`server::conn::auto`, HTTP/1.1 and h2c; HTTP/1.1 alone, on
//! hyper's `server::conn::http1`, without the `http2` feature) rather than `axum::serve`, which
//! offers none of these timeouts.
//!
//! The header-read timeout counts from the accept: hyper's HTTP/1 header timer starts only once
//! hyper-util's `auto` builder has told HTTP/1 from HTTP/2 (it first reads up to the 24-byte h2
//! preface, with no timeout and no option for one), and hyper's HTTP/2 server has no deadline for a
//! first HEADERS frame (its keep-alive pings, the nearest option, catch only a peer that does not
//! answer them, after interval + timeout, and ping all the connection's life). So the loop that
//! watches each connection for the idle timeout arms its one timer at accept +
//! `header_read_timeout` and drops a connection whose first request head has not reached the
//! service by then, whatever stage detection is in: no cost per read (as a wrapper of the stream
//! would have) and no second timer. hyper's HTTP/1 timer still bounds each later head; it also runs
//! while a keep-alive connection waits for its next request, so an idle HTTP/1.1 connection closes
//! after the smaller of the header-read and idle timeouts. An idle or draining connection is shut
//! down gracefully and dropped `CLOSE_GRACE` (1 s) later if still open with no request in flight
//! (an h2 peer that never acknowledges the GOAWAY's ping would otherwise hold it open).
//!
//! At the connection cap a newcomer displaces the oldest connection that has not yet delivered a
//! request head ([`evict`]), so a flood of silent connections cannot keep normal clients out for
//! the header timeout; only when every open connection has sent a request is the newcomer
//! refused (503).
//!
//! A request head hyper cannot read (400, 414, 431) is answered with the server's JSON error in
//! the form the path implies, not hyper's empty body ([`framing`]).

mod body;
mod framing;

use body::buffer_body;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

mod evict;
mod fds;
mod signals;
use evict::{Ticket, Unserved};
pub use fds::{effective_max_connections, fd_limit};
pub use signals::{Hangups, runtime, shutdown_signal};

/// Connection-level limits of a server.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenConfig {
    /// Time allowed for a request's headers to arrive (slowloris); for a connection's first
    /// request it counts from the accept, before HTTP/1 vs HTTP/2 is known. Default: 10 s.
    pub header_read_timeout: Duration,
    /// Time allowed for a request's whole body to arrive (slow body): 408 beyond. Default: 30 s.
    pub body_read_timeout: Duration,
    /// A connection with no request in flight for this long is closed (an HTTP/1.1 one waiting
    /// for its next request: after the header-read timeout if that is shorter). Default: 60 s.
    pub idle_timeout: Duration,
    /// Open connections at most; 0 = derived from the fd limit. At the cap a new connection
    /// displaces the oldest one that has not yet sent a complete request head; when every open
    /// connection has, the new one gets 503 and is closed. Always kept below `RLIMIT_NOFILE`
    /// minus a margin. Default: 10000.
    pub max_connections: usize,
    /// Body bytes buffered under the body-read timeout; a larger body is passed on as a stream
    /// (the server's own size limit answers it). Default: 16 MiB.
    pub max_buffered_body: usize,
}

impl Default for ListenConfig {
    fn default() -> Self {
        ListenConfig {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            max_buffered_body: 16 * 1024 * 1024,
        }
    }
}

/// Why the edge refuses a request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeRefusal {
    /// The body did not arrive within the body-read timeout (408).
    BodyTimeout(Duration),
    /// The connection cap is reached (503).
    Overloaded,
    /// hyper could not read the request head: a malformed request line, header or
    /// `Content-Length` (400).
    BadRequest,
    /// The request URI is over hyper's limit (414).
    UriTooLong,
    /// The request headers are too many or too large (431).
    HeadersTooLarge,
}

impl EdgeRefusal {
    /// The HTTP status of the refusal.
    pub fn status(self) -> http::StatusCode {
        match self {
            EdgeRefusal::BodyTimeout(_) => http::StatusCode::REQUEST_TIMEOUT,
            EdgeRefusal::Overloaded => http::StatusCode::SERVICE_UNAVAILABLE,
            EdgeRefusal::BadRequest => http::StatusCode::BAD_REQUEST,
            EdgeRefusal::UriTooLong => http::StatusCode::URI_TOO_LONG,
            EdgeRefusal::HeadersTooLarge => http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        }
    }

    /// A human-readable message.
    pub fn message(self) -> String {
        match self {
            EdgeRefusal::BodyTimeout(d) => format!(
                "the request body did not arrive within {} ms",
                d.as_millis()
            ),
            EdgeRefusal::Overloaded => {
                "the server is at its connection limit; retry later".to_string()
            }
            EdgeRefusal::BadRequest => "the request head cannot be read: a malformed request \
                                        line, header or Content-Length"
                .to_string(),
            EdgeRefusal::UriTooLong => "the request URI is too long".to_string(),
            EdgeRefusal::HeadersTooLarge => {
                "the request headers are too many or too large".to_string()
            }
        }
    }
}

/// Renders an [`EdgeRefusal`] as the server's JSON error in the caller's form (the request head
/// tells the binding and version; for a head hyper could not read, what of it was captured).
/// The body must be whole in memory (a framing answer is written without waiting for it).
pub type Refuser = Arc<dyn Fn(&http::request::Parts, EdgeRefusal) -> Response + Send + Sync>;

/// How long the accept loop waits for a displaced connection to give its slot back.
const DISPLACE_WAIT: Duration = Duration::from_millis(100);
/// Extra connections that may be open only to receive the 503 refusal.
const REFUSAL_SLOTS: usize = 64;
/// How long a connection asked to close gracefully (idle, draining) may take before it is
/// dropped, once no request is in flight on it.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// A running accept loop and its connections.
pub struct Listening {
    addr: SocketAddr,
    stop: CancellationToken,
    kill: CancellationToken,
    conns: TaskTracker,
    open: Arc<AtomicUsize>,
    unserved: Arc<Unserved>,
    cfg: Arc<arc_swap::ArcSwap<ListenConfig>>,
}

impl Listening {
    /// Takes new timeouts (header read, body read, idle) for connections accepted from now on
    /// (a configuration reload); the connection cap and the body buffer stay as they were.
    pub fn set_timeouts(&self, header_read: Duration, body_read: Duration, idle: Duration) {
        let mut cfg = ListenConfig::clone(&self.cfg.load());
        cfg.header_read_timeout = header_read;
        cfg.body_read_timeout = body_read;
        cfg.idle_timeout = idle;
        self.cfg.store(Arc::new(cfg));
    }

    /// Takes a new largest buffered request body for connections accepted from now on (a
    /// configuration reload of the agent's `max_payload_size`).
    pub fn set_max_buffered_body(&self, bytes: usize) {
        let mut cfg = ListenConfig::clone(&self.cfg.load());
        cfg.max_buffered_body = bytes;
        self.cfg.store(Arc::new(cfg));
    }

    /// The limits connections accepted now get.
    pub fn config(&self) -> ListenConfig {
        ListenConfig::clone(&self.cfg.load())
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Open connections right now.
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Connections displaced so far at the cap (they had not sent a complete request head).
    pub fn displaced_connections(&self) -> u64 {
        self.unserved.displaced()
    }

    /// Stop accepting; idle keep-alive connections close, in-flight requests continue.
    pub fn stop_accepting(&self) {
        self.stop.cancel();
        self.conns.close();
    }

    /// Wait up to `within` for every connection to close; true when all did.
    pub async fn drain(&self, within: Duration) -> bool {
        self.conns.close();
        tokio::time::timeout(within, self.conns.wait())
            .await
            .is_ok()
    }

    /// Drop every connection still open.
    pub async fn kill(&self) {
        self.kill.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.conns.wait()).await;
    }
}

/// Serve `router` on `listener` with the edge limits of `cfg`; `refuse` renders the 408/503
/// answers in the server's error form.
pub fn serve(
    listener: TcpListener,
    router: axum::Router,
    cfg: ListenConfig,
    refuse: Refuser,
) -> std::io::Result<Listening> {
    serve_service(listener, router, cfg, refuse)
}

/// [`serve`] with any service that answers every request (an `axum::Router`, or a plain
/// `tower::service_fn` that skips the router's per-request work when one handler takes every
/// path).
pub fn serve_service<S>(
    listener: TcpListener,
    router: S,
    cfg: ListenConfig,
    refuse: Refuser,
) -> std::io::Result<Listening>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    let addr = listener.local_addr()?;
    let stop = CancellationToken::new();
    let kill = CancellationToken::new();
    let conns = TaskTracker::new();
    let open = Arc::new(AtomicUsize::new(0));
    let max = effective_max_connections(cfg.max_connections);
    let slots = Arc::new(Semaphore::new(max));
    let refusal_slots = Arc::new(Semaphore::new(REFUSAL_SLOTS));
    let unserved = Arc::new(Unserved::default());
    let live = Arc::new(arc_swap::ArcSwap::from_pointee(cfg));
    let l = Listening {
        addr,
        stop: stop.clone(),
        kill: kill.clone(),
        conns: conns.clone(),
        open: open.clone(),
        unserved: unserved.clone(),
        cfg: live.clone(),
    };
    tracing::debug!(max_connections = max, "edge listener");
    tokio::spawn(async move {
        loop {
            let (tcp, _peer) = tokio::select! {
                _ = stop.cancelled() => break,
                r = listener.accept() => match r {
                    Ok(x) => x,
                    Err(e) => {
                        // EMFILE and friends: back off instead of spinning.
                        tracing::warn!("accept error: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let _ = tcp.set_nodelay(true);
            let ctx = ConnCtx {
                router: router.clone(),
                cfg: live.load_full(),
                refuse: refuse.clone(),
                stop: stop.clone(),
                kill: kill.clone(),
            };
            let mut permit = slots.clone().try_acquire_owned().ok();
            if permit.is_none() && unserved.displace_oldest() {
                // The displaced connection's task ends at once and gives its slot back.
                permit = tokio::time::timeout(DISPLACE_WAIT, slots.clone().acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok);
            }
            match permit {
                Some(permit) => {
                    let open = open.clone();
                    let ticket = unserved.ticket();
                    open.fetch_add(1, Ordering::SeqCst);
                    conns.spawn(async move {
                        ctx.run(tcp, Some(ticket)).await;
                        open.fetch_sub(1, Ordering::SeqCst);
                        drop(permit);
                    });
                }
                None => match refusal_slots.clone().try_acquire_owned() {
                    Ok(permit) => {
                        conns.spawn(async move {
                            ctx.run(tcp, None).await;
                            drop(permit);
                        });
                    }
                    Err(_) => drop(tcp),
                },
            }
        }
    });
    Ok(l)
}

struct ConnCtx<S> {
    router: S,
    cfg: Arc<ListenConfig>,
    refuse: Refuser,
    stop: CancellationToken,
    kill: CancellationToken,
}

/// Requests in flight on a connection, when the last one ended (ms since `start`) and whether
/// a request head has reached the service yet.
struct Activity {
    start: Instant,
    in_flight: AtomicUsize,
    last_ms: AtomicU64,
    served: AtomicBool,
}

impl Activity {
    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::SeqCst);
    }
    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::SeqCst));
        self.start.elapsed().saturating_sub(last)
    }
}

/// Ends a request's activity when the response body is dropped.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that holds its request's [`InFlight`] until it is dropped; size hint and
/// end-of-stream pass through (Content-Length is kept).
struct Tracked {
    inner: Body,
    _guard: InFlight,
}

impl axum::body::HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl<S> ConnCtx<S>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    /// Serves one connection; `ticket` is its place among the connections a newcomer may
    /// displace (None: it is over the cap and only gets the 503 refusal).
    async fn run(self, tcp: tokio::net::TcpStream, ticket: Option<Ticket>) {
        let overloaded = ticket.is_none();
        let mut evicted = ticket.as_ref().map(|t| t.evicted.clone());
        let ticket = ticket.map(Arc::new);
        let act = Arc::new(Activity {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
            served: AtomicBool::new(false),
        });
        // HTTP/1.1 and h2c (feature `http2`), or HTTP/1.1 alone.
        #[cfg(feature = "http2")]
        let builder = {
            let mut b =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            b.http1()
                .timer(TokioTimer::new())
                .header_read_timeout(self.cfg.header_read_timeout)
                .keep_alive(!overloaded);
            b.http2().timer(TokioTimer::new());
            b
        };
        #[cfg(not(feature = "http2"))]
        let builder = {
            let mut b = hyper::server::conn::http1::Builder::new();
            b.timer(TokioTimer::new())
                .header_read_timeout(self.cfg.header_read_timeout)
                .keep_alive(!overloaded);
            b
        };
        let ConnCtx {
            router,
            cfg,
            refuse,
            stop,
            kill,
        } = self;
        let idle = if overloaded {
            cfg.header_read_timeout
        } else {
            cfg.idle_timeout
        };
        let act2 = act.clone();
        let refuse_framing = refuse.clone();
        // The client's address, for handlers that record it (`axum::extract::ConnectInfo`).
        let remote = tcp.peer_addr().ok();
        let header = cfg.header_read_timeout;
        let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            // Here, not in the future: hyper runs an h2 request's future on another task.
            if !act2.served.swap(true, Ordering::Relaxed)
                && let Some(t) = &ticket
            {
                t.served();
            }
            let router = router.clone();
            let cfg = cfg.clone();
            let refuse = refuse.clone();
            let act = act2.clone();
            async move {
                act.in_flight.fetch_add(1, Ordering::SeqCst);
                let guard = InFlight(act);
                let mut req = req.map(Body::new);
                if let Some(a) = remote {
                    req.extensions_mut().insert(axum::extract::ConnectInfo(a));
                }
                let resp = if overloaded {
                    let (parts, _) = req.into_parts();
                    close(refuse(&parts, EdgeRefusal::Overloaded))
                } else {
                    match buffer_body(req, &cfg).await {
                        Ok(req) => match router.oneshot(req).await {
                            Ok(r) => r,
                            Err(never) => match never {},
                        },
                        Err(parts) => close(refuse(
                            &parts,
                            EdgeRefusal::BodyTimeout(cfg.body_read_timeout),
                        )),
                    }
                };
                let resp = resp.map(|b| {
                    Body::new(Tracked {
                        inner: b,
                        _guard: guard,
                    })
                });
                Ok::<_, std::convert::Infallible>(resp)
            }
        });
        let io = framing::FramedIo::new(tcp, refuse_framing);
        #[cfg(feature = "http2")]
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), svc);
        #[cfg(not(feature = "http2"))]
        let conn = builder
            .serve_connection(TokioIo::new(io), svc)
            .with_upgrades();
        tokio::pin!(conn);
        // The connection's one timer: the first request head's deadline, then the idle check,
        // then the bound on a graceful close.
        let first_by = tokio::time::Instant::now() + header.min(idle);
        let timer = tokio::time::sleep_until(first_by);
        tokio::pin!(timer);
        // When a graceful close was asked (idle, or the server stops accepting).
        let mut closing: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = kill.cancelled() => return,
                _ = cancelled(&evicted) => {
                    if !act.served.load(Ordering::Relaxed) {
                        return;
                    }
                    // Its head arrived as it was displaced: keep it; its slot stays taken.
                    evicted = None;
                }
                _ = stop.cancelled(), if closing.is_none() => {
                    closing = Some(tokio::time::Instant::now());
                    conn.as_mut().graceful_shutdown();
                }
                _ = timer.as_mut() => {}
            }
            let now = tokio::time::Instant::now();
            let busy = act.in_flight.load(Ordering::SeqCst) > 0;
            let next = if !act.served.load(Ordering::Relaxed) {
                // No request head yet (protocol detection, an HTTP/1 head, an h2 connection
                // without HEADERS): nothing to lose, drop it at the deadline.
                let by = closing.map_or(first_by, |c| first_by.min(c + CLOSE_GRACE));
                if now >= by {
                    return;
                }
                by
            } else if let Some(c) = closing {
                if !busy && now >= c + CLOSE_GRACE {
                    return;
                }
                // A request in flight (a stream, a blocking send) goes on: look again later.
                (c + CLOSE_GRACE).max(if busy { now + idle } else { now })
            } else if busy {
                now + idle
            } else if act.idle_for() >= idle {
                closing = Some(now);
                conn.as_mut().graceful_shutdown();
                now + CLOSE_GRACE
            } else {
                now + idle
                    .saturating_sub(act.idle_for())
                    .max(Duration::from_millis(50))
            };
            timer.as_mut().reset(next);
        }
    }
}

/// Resolves when `t` is cancelled; never when there is none.
async fn cancelled(t: &Option<CancellationToken>) {
    match t {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
    }
}

fn close(mut r: Response) -> Response {
    r.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    r
}
