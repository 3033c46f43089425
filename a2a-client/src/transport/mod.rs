//! Transports: one A2A call over one binding at one version, in 1.0 terms.
//!
//! [`Transport`] takes the translator's typed 1.0 call [`V1Request`] and returns its typed 1.0
//! result [`V1Result`] (or a stream of [`v1::StreamResponse`]), both from `a2a_translate::rpc`. [`jsonrpc::JsonRpcTransport`] and [`rest::RestTransport`] implement it
//! for 1.0 natively and for 0.3 through `a2a-translate`, so callers never see 0.3 shapes.
//! [`HttpCore`] holds what every binding shares: the `reqwest::Client` (one connection pool),
//! service headers (`A2A-Version`, `A2A-Extensions`), credentials with one retry after a `401`
//! for refreshable ones, user headers, timeouts and size limits.

#[cfg(feature = "grpc")]
pub mod grpc;
pub mod jsonrpc;
pub mod rest;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use a2a_types::v1;
use futures_util::{Stream, StreamExt};
use http::{HeaderMap, HeaderValue};

use crate::auth::Credential;
use crate::discovery::{ReadError, read_limited};
use crate::error::ClientError;
use crate::headers;
use crate::select::{SelectedInterface, Version};
use crate::sse::{self, SseEvent};

/// A stream of 1.0 events; it ends when the agent closes the stream.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<v1::StreamResponse, ClientError>> + Send>>;

pub use a2a_translate::{Method, V1Request, V1Result};

/// The result type's name, for messages.
pub(crate) fn result_name(result: &V1Result) -> &'static str {
    match result {
        V1Result::SendMessage(_) => "SendMessageResponse",
        V1Result::Task(_) => "Task",
        V1Result::ListTasks(_) => "ListTasksResponse",
        V1Result::PushConfig(_) => "TaskPushNotificationConfig",
        V1Result::PushConfigList(_) => "ListTaskPushNotificationConfigsResponse",
        V1Result::Deleted(_) => "Empty",
        V1Result::Card(_) => "AgentCard",
    }
}

macro_rules! expect_response {
    ($value:expr, $variant:ident) => {
        match $value {
            $crate::transport::V1Result::$variant(v) => Ok(v),
            other => Err($crate::error::ClientError::Parse(format!(
                "expected {} result, transport produced {}",
                stringify!($variant),
                $crate::transport::result_name(&other)
            ))),
        }
    };
}
pub(crate) use expect_response;

/// Refuses a streaming operation on [`Transport::call`] (`streaming: false`) and a unary one on
/// [`Transport::stream`] (`streaming: true`).
pub(crate) fn expect_streaming(request: &V1Request, streaming: bool) -> Result<(), ClientError> {
    match (request.is_streaming(), streaming) {
        (true, false) => Err(ClientError::Usage(format!(
            "{} is a streaming operation",
            request.method_name()
        ))),
        (false, true) => Err(ClientError::Usage(format!(
            "{} is not a streaming operation",
            request.method_name()
        ))),
        _ => Ok(()),
    }
}

/// One A2A call over one binding at one version.
#[async_trait::async_trait]
pub trait Transport: Send + Sync + std::fmt::Debug {
    /// The interface this transport talks to.
    fn interface(&self) -> &SelectedInterface;

    /// Performs a unary operation (not [`V1Request::SendStreamingMessage`] /
    /// [`V1Request::SubscribeToTask`]).
    async fn call(&self, request: V1Request) -> Result<V1Result, ClientError>;

    /// Performs a streaming operation ([`V1Request::SendStreamingMessage`] /
    /// [`V1Request::SubscribeToTask`]).
    async fn stream(&self, request: V1Request) -> Result<EventStream, ClientError>;

    /// Extensions the agent reported as activated in its last answer (`A2A-Extensions`).
    fn activated_extensions(&self) -> Option<Vec<String>> {
        None
    }
}

/// Settings shared by every transport of a client.
#[derive(Debug, Clone)]
pub struct HttpCore {
    /// The HTTP client (connection pool); share it.
    pub client: reqwest::Client,
    /// Extra headers sent on every request; they replace headers this client would set.
    pub headers: HeaderMap,
    /// Credentials applied to every request.
    pub credentials: Vec<Arc<Credential>>,
    /// Extension URIs requested via `A2A-Extensions` (and `X-A2A-Extensions` for 0.3 peers).
    pub extensions: Vec<String>,
    /// Whole-call timeout of unary calls (streams are not cut by it).
    pub timeout: Option<Duration>,
    /// Longest wait for the next event of a stream (`None` = wait forever).
    pub stream_idle_timeout: Option<Duration>,
    /// Cap on a unary response body.
    pub max_response_bytes: usize,
    /// Cap on one SSE event.
    pub max_event_bytes: usize,
    /// How 0.3 translation treats what the spec leaves open (default: strict, refuse).
    pub policy: a2a_translate::Policy,
    /// Extensions the agent reported as activated in its last answer (`A2A-Extensions`).
    pub activated: Arc<std::sync::Mutex<Option<Vec<String>>>>,
    /// Extra trusted roots of `https` gRPC calls (the HTTP bindings take theirs from `client`).
    pub extra_roots: crate::tls::ExtraRoots,
}

impl HttpCore {
    /// Defaults around `client`: 100 s call timeout, no idle limit, 32 MiB responses, 16 MiB events.
    pub fn new(client: reqwest::Client) -> HttpCore {
        HttpCore {
            client,
            headers: HeaderMap::new(),
            credentials: Vec::new(),
            extensions: Vec::new(),
            timeout: Some(Duration::from_secs(100)),
            stream_idle_timeout: None,
            max_response_bytes: 32 * 1024 * 1024,
            max_event_bytes: sse::DEFAULT_MAX_EVENT_BYTES,
            policy: a2a_translate::Policy::Strict,
            activated: Arc::default(),
            extra_roots: Arc::default(),
        }
    }

    /// Sends the request built by `build`, with service headers and credentials; after a `401`
    /// with a refreshable credential, invalidates it and sends once more.
    pub(crate) async fn send(
        &self,
        version: Version,
        streaming: bool,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        let refreshable = self.credentials.iter().any(|c| c.is_refreshable());
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = build(&self.client)
                .header(headers::VERSION, version.as_str())
                .header(
                    http::header::ACCEPT,
                    if streaming {
                        "text/event-stream, application/json"
                    } else {
                        "application/a2a+json, application/json"
                    },
                );
            if !self.extensions.is_empty() {
                let joined = self.extensions.join(", ");
                req = req
                    .header(headers::EXTENSIONS, &joined)
                    .header(headers::EXTENSIONS_V03, &joined);
            }
            for cred in &self.credentials {
                req = cred.apply(req).await?;
            }
            if !self.headers.is_empty() {
                req = req.headers(self.headers.clone());
            }
            if !streaming && let Some(t) = self.timeout {
                req = req.timeout(t);
            }
            if streaming && let Some(id) = crate::resume::last_event_id() {
                req = req.header("Last-Event-ID", id);
            }
            let response = req.send().await.map_err(ClientError::Transport)?;
            if response.status() == reqwest::StatusCode::UNAUTHORIZED && refreshable && attempt == 1
            {
                for cred in &self.credentials {
                    cred.invalidate().await;
                }
                continue;
            }
            self.record_extensions(response.headers());
            return Ok(response);
        }
    }

    /// Remembers the extensions an answer reports as activated (`A2A-Extensions`, or the 0.3
    /// `X-A2A-Extensions`).
    pub(crate) fn record_extensions(&self, headers: &HeaderMap) {
        let values: Vec<String> = headers
            .get_all(headers::EXTENSIONS)
            .iter()
            .chain(headers.get_all(headers::EXTENSIONS_V03).iter())
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        let present = headers.contains_key(headers::EXTENSIONS)
            || headers.contains_key(headers::EXTENSIONS_V03);
        if let Ok(mut slot) = self.activated.lock() {
            let mut unique: Vec<String> = Vec::new();
            for v in values {
                if !unique.contains(&v) {
                    unique.push(v);
                }
            }
            *slot = present.then_some(unique);
        }
    }

    /// Extensions the agent reported as activated in its last answer (`None`: it said nothing).
    pub fn activated_extensions(&self) -> Option<Vec<String>> {
        self.activated.lock().ok().and_then(|s| s.clone())
    }

    /// Reads a unary body within the size limit.
    pub(crate) async fn body(
        &self,
        response: reqwest::Response,
    ) -> Result<bytes::Bytes, ClientError> {
        match read_limited(response, self.max_response_bytes).await {
            Ok(b) => Ok(b),
            Err(ReadError::TooLarge) => Err(ClientError::Parse(format!(
                "response larger than {} bytes",
                self.max_response_bytes
            ))),
            Err(ReadError::Http(e)) => Err(ClientError::Transport(e)),
        }
    }

    /// Turns an SSE response into typed events with `parse`, ending when the server closes.
    /// `parse` returns `Ok(None)` to skip an event, `Err` to yield an error (the stream then ends).
    pub(crate) fn events<F>(&self, response: reqwest::Response, parse: F) -> EventStream
    where
        F: FnMut(SseEvent) -> Result<Option<v1::StreamResponse>, ClientError> + Send + 'static,
    {
        let raw = sse::events(response.bytes_stream(), self.max_event_bytes);
        let idle = self.stream_idle_timeout;
        // Records each event's `id` for a resume (crate::resume), when a resumable stream opened us.
        let seen = crate::resume::id_sink();
        struct St<S, F> {
            raw: Pin<Box<S>>,
            parse: F,
            done: bool,
            seen: Option<Arc<std::sync::Mutex<Option<String>>>>,
        }
        impl<S, F> St<S, F>
        where
            F: FnMut(SseEvent) -> Result<Option<v1::StreamResponse>, ClientError>,
        {
            /// Records the event's id (for a resume), then parses it.
            fn parse_seen(
                &mut self,
                ev: SseEvent,
            ) -> Result<Option<v1::StreamResponse>, ClientError> {
                if let (Some(sink), Some(id)) = (&self.seen, &ev.id)
                    && let Ok(mut slot) = sink.lock()
                {
                    *slot = Some(id.clone());
                }
                (self.parse)(ev)
            }
        }
        let st = St {
            raw: Box::pin(raw),
            parse,
            done: false,
            seen,
        };
        Box::pin(futures_util::stream::unfold(st, move |mut st| async move {
            loop {
                if st.done {
                    return None;
                }
                let next = match idle {
                    Some(limit) => match tokio::time::timeout(limit, st.raw.next()).await {
                        Ok(n) => n,
                        Err(_) => {
                            st.done = true;
                            return Some((Err(ClientError::StreamIdle(limit)), st));
                        }
                    },
                    None => st.raw.next().await,
                };
                match next {
                    None => return None,
                    Some(Err(e)) => {
                        st.done = true;
                        return Some((Err(ClientError::Sse(e)), st));
                    }
                    Some(Ok(ev)) => match st.parse_seen(ev) {
                        Ok(Some(item)) => return Some((Ok(item), st)),
                        Ok(None) => continue,
                        Err(e) => {
                            st.done = true;
                            return Some((Err(e), st));
                        }
                    },
                }
            }
        }))
    }
}

/// Whether a response is an event stream.
pub(crate) fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case(headers::EVENT_STREAM))
        })
}

/// The start of a body as text, for error messages.
pub(crate) fn snippet(body: &[u8]) -> String {
    let end = body.len().min(300);
    String::from_utf8_lossy(&body[..end]).trim().to_string()
}

/// Parses JSON into `T` with the JSON path of the first mismatch in the message.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    what: &str,
    value: serde_json::Value,
) -> Result<T, ClientError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| ClientError::Parse(format!("{what}: at {}: {}", e.path(), e.inner())))
}
