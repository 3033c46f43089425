//! The gRPC binding (A2A 1.0, `lf.a2a.v1.A2AService`): each call is one rpc of the same name as
//! the 1.0 method, over HTTP/2: TLS (ALPN `h2`) for `https` interface URLs, cleartext (h2c) for
//! `http` ones.
//!
//! The request and result are the same 1.0 values as on the other bindings: `a2a_types::grpc`
//! transcodes them to and from protobuf (one conversion for the agent, the client and the
//! gateway). Metadata carry what headers carry elsewhere: `a2a-version: 1.0`, `a2a-extensions`,
//! credentials (built by the same [`crate::auth::Credential`]s, so API keys and bearer tokens
//! work unchanged; API keys in the query string do not exist on gRPC) and the caller's own
//! headers. Errors are read from `google.rpc.Status` (`ErrorInfo` reason, else the status code).
//!
//! TLS: `hyper-rustls` with the same crypto provider and platform root store as reqwest, plus
//! the builder's extra roots ([`crate::tls`]); the certificate is checked against the URL's host
//! name, also when the caller pins the addresses to connect to ([`GrpcTransport::pinned`]).
//!
//! Not spoken: the 0.3 gRPC service (`a2a.v1.A2AService`).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use a2a_types::grpc::{Rpc, status::from_status};
use a2a_types::v1;
use futures_util::StreamExt;
use http::HeaderMap;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tonic::metadata::MetadataMap;

use super::jsonrpc::v1_result;
use super::{EventStream, HttpCore, Transport, V1Request, V1Result, parse_json};
use crate::error::{A2aError, ClientError};
use crate::headers;
use crate::select::{SelectedInterface, Version};

type Channel = HyperClient<HttpsConnector<HttpConnector<Resolver>>, tonic::body::Body>;

/// The system resolver, or the addresses the caller pinned (already checked by it).
#[derive(Clone, Debug)]
struct Resolver {
    pinned: Option<Arc<[IpAddr]>>,
    gai: GaiResolver,
}

type Resolving =
    Pin<Box<dyn Future<Output = std::io::Result<std::vec::IntoIter<SocketAddr>>> + Send>>;

impl tower_service::Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Resolving;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.gai.poll_ready(cx)
    }

    fn call(&mut self, name: Name) -> Self::Future {
        if let Some(ips) = &self.pinned {
            // The port is set by the connector from the URL.
            let addrs: Vec<SocketAddr> = ips.iter().map(|ip| SocketAddr::new(*ip, 0)).collect();
            return Box::pin(async move { Ok(addrs.into_iter()) });
        }
        let resolving = self.gai.call(name);
        Box::pin(async move { Ok(resolving.await?.collect::<Vec<_>>().into_iter()) })
    }
}

/// gRPC transport for one 1.0 interface.
#[derive(Debug, Clone)]
pub struct GrpcTransport {
    core: HttpCore,
    interface: SelectedInterface,
    origin: http::Uri,
    channel: Channel,
}

impl GrpcTransport {
    /// A transport for `interface` (binding GRPC, version 1.0, an `http://` or `https://` URL).
    pub fn new(core: HttpCore, interface: SelectedInterface) -> Result<GrpcTransport, ClientError> {
        Self::build(core, interface, None)
    }

    /// As [`GrpcTransport::new`], connecting only to `addrs` (already resolved and checked by
    /// the caller) instead of resolving the URL's host; TLS still sends and verifies the host
    /// name of the URL (SNI and certificate).
    pub fn pinned(
        core: HttpCore,
        interface: SelectedInterface,
        addrs: Vec<IpAddr>,
    ) -> Result<GrpcTransport, ClientError> {
        if addrs.is_empty() {
            return Err(ClientError::Usage("gRPC: no address to connect to".into()));
        }
        Self::build(core, interface, Some(addrs.into()))
    }

    fn build(
        core: HttpCore,
        interface: SelectedInterface,
        pinned: Option<Arc<[IpAddr]>>,
    ) -> Result<GrpcTransport, ClientError> {
        if interface.version != Version::V1 {
            return Err(ClientError::Usage(
                "gRPC is spoken at A2A 1.0 only (the 0.3 gRPC service is not supported)".into(),
            ));
        }
        let scheme = interface.url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(ClientError::Usage(format!(
                "gRPC url {}: the scheme must be http or https",
                interface.url
            )));
        }
        let host = interface.url.host_str().unwrap_or_default();
        let port = interface
            .url
            .port_or_known_default()
            .unwrap_or(if scheme == "https" { 443 } else { 80 });
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let origin: http::Uri = format!("{scheme}://{host}:{port}")
            .parse()
            .map_err(|e| ClientError::Usage(format!("gRPC url {}: {e}", interface.url)))?;
        // TCP_NODELAY: HTTP/2 writes a request as several frames; with Nagle and delayed ACKs a
        // small unary call waits ~40 ms (measured: 20 req/s on one connection without it).
        let mut connector = HttpConnector::new_with_resolver(Resolver {
            pinned,
            gai: GaiResolver::new(),
        });
        connector.set_nodelay(true);
        connector.enforce_http(false);
        let tls = crate::tls::client_config(&core.extra_roots)?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http2()
            .wrap_connector(connector);
        let channel = HyperClient::builder(TokioExecutor::new())
            .http2_only(true)
            .build(connector);
        Ok(GrpcTransport {
            core,
            interface,
            origin,
            channel,
        })
    }

    /// The metadata of a call: the service headers, credentials and the caller's headers,
    /// produced by the same code as the HTTP bindings' headers.
    async fn metadata(&self) -> Result<MetadataMap, ClientError> {
        // Built, never sent: a request builder is what the credentials know how to fill in.
        let mut req = self
            .core
            .client
            .post("http://grpc.invalid/")
            .header(headers::VERSION, Version::V1.as_str());
        if !self.core.extensions.is_empty() {
            req = req.header(headers::EXTENSIONS, self.core.extensions.join(", "));
        }
        for cred in &self.core.credentials {
            req = cred.apply(req).await?;
        }
        if !self.core.headers.is_empty() {
            req = req.headers(self.core.headers.clone());
        }
        let built = req.build().map_err(ClientError::Transport)?;
        let mut h = HeaderMap::new();
        for (k, v) in built.headers() {
            // HTTP/2 framing headers are tonic's to set.
            if !matches!(
                k.as_str(),
                "content-type" | "content-length" | "te" | "host" | "connection"
            ) {
                h.append(k.clone(), v.clone());
            }
        }
        Ok(MetadataMap::from_headers(h))
    }

    async fn request(&self, request: &V1Request) -> Result<tonic::Request<Value>, ClientError> {
        let params = request
            .params()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let mut req = tonic::Request::new(params);
        *req.metadata_mut() = self.metadata().await?;
        Ok(req)
    }

    fn rpc(request: &V1Request) -> Result<&'static Rpc, ClientError> {
        Rpc::named(request.method_name())
            .ok_or_else(|| ClientError::Usage(format!("{} has no gRPC rpc", request.method_name())))
    }

    fn grpc(&self) -> tonic::client::Grpc<Channel> {
        tonic::client::Grpc::with_origin(self.channel.clone(), self.origin.clone())
            .max_decoding_message_size(self.core.max_response_bytes)
    }

    /// Credentials that can be refreshed get one more attempt after UNAUTHENTICATED, as after a
    /// `401` on the HTTP bindings.
    fn retry_auth(&self, status: &tonic::Status, attempt: u32) -> bool {
        status.code() == tonic::Code::Unauthenticated
            && attempt == 1
            && self.core.credentials.iter().any(|c| c.is_refreshable())
    }

    async fn invalidate(&self) {
        for cred in &self.core.credentials {
            cred.invalidate().await;
        }
    }

    fn path(rpc: &Rpc) -> Result<http::uri::PathAndQuery, ClientError> {
        rpc.path()
            .parse()
            .map_err(|e| ClientError::Usage(format!("gRPC path: {e}")))
    }

    async fn ready(&self, grpc: &mut tonic::client::Grpc<Channel>) -> Result<(), ClientError> {
        grpc.ready().await.map_err(|e| {
            ClientError::from(A2aError::local(
                a2a_types::error::ErrorKind::Unavailable,
                format!("gRPC channel to {} not ready: {e}", self.origin),
            ))
        })
    }
}

/// The client's A2A error for a gRPC status.
pub(crate) fn status_error(s: &tonic::Status) -> ClientError {
    if let Some(source) = std::error::Error::source(s) {
        // Not an answer of the peer: the connection failed (refused, TLS certificate, reset);
        // the whole cause chain is the message (hyper's own says only "client error (Connect)").
        let mut why = source.to_string();
        let mut next = source.source();
        while let Some(e) = next {
            why.push_str(": ");
            why.push_str(&e.to_string());
            next = e.source();
        }
        return A2aError::local(
            a2a_types::error::ErrorKind::Unavailable,
            format!("gRPC connection failed: {why}"),
        )
        .into();
    }
    // This client's decoder could not read the answer: the peer's answer is at fault.
    if a2a_types::grpc::is_unreadable_answer(s) {
        return ClientError::Parse(s.message().to_owned());
    }
    let e = from_status(s);
    A2aError {
        kind: e.kind,
        code: Some(e.kind.code()),
        reason: a2a_types::grpc::status::a2a_reason(s),
        message: e.message.clone(),
        http_status: None,
        details: Some(Value::Array(e.details_v1())),
        local: false,
    }
    .into()
}

fn timed_out(after: Duration) -> ClientError {
    A2aError::local(
        a2a_types::error::ErrorKind::Unavailable,
        format!("gRPC call timed out after {after:?}"),
    )
    .into()
}

#[async_trait::async_trait]
impl Transport for GrpcTransport {
    fn interface(&self) -> &SelectedInterface {
        &self.interface
    }

    fn activated_extensions(&self) -> Option<Vec<String>> {
        self.core.activated_extensions()
    }

    async fn call(&self, request: V1Request) -> Result<V1Result, ClientError> {
        super::expect_streaming(&request, false)?;
        let rpc = Self::rpc(&request)?;
        let codec = rpc
            .client_codec()
            .map_err(|e| ClientError::Parse(e.to_string()))?;
        let mut attempt = 0;
        let response = loop {
            attempt += 1;
            let mut grpc = self.grpc();
            self.ready(&mut grpc).await?;
            let call = grpc.unary(
                self.request(&request).await?,
                Self::path(rpc)?,
                codec.clone(),
            );
            let result = match self.core.timeout {
                Some(t) => tokio::time::timeout(t, call)
                    .await
                    .map_err(|_| timed_out(t))?,
                None => call.await,
            };
            match result {
                Ok(r) => break r,
                Err(s) if self.retry_auth(&s, attempt) => self.invalidate().await,
                Err(s) => return Err(status_error(&s)),
            }
        };
        self.core
            .record_extensions(&response.metadata().clone().into_headers());
        v1_result(&request, response.into_inner())
    }

    async fn stream(&self, request: V1Request) -> Result<EventStream, ClientError> {
        super::expect_streaming(&request, true)?;
        let rpc = Self::rpc(&request)?;
        let codec = rpc
            .client_codec()
            .map_err(|e| ClientError::Parse(e.to_string()))?;
        let mut attempt = 0;
        let response = loop {
            attempt += 1;
            let mut grpc = self.grpc();
            self.ready(&mut grpc).await?;
            let req = self.request(&request).await?;
            match grpc
                .server_streaming(req, Self::path(rpc)?, codec.clone())
                .await
            {
                Ok(r) => break r,
                Err(s) if self.retry_auth(&s, attempt) => self.invalidate().await,
                Err(s) => return Err(status_error(&s)),
            }
        };
        self.core
            .record_extensions(&response.metadata().clone().into_headers());
        let idle = self.core.stream_idle_timeout;
        let inner = response.into_inner();
        // (stream, over): `over` is set with an error, the stream's last item.
        let events =
            futures_util::stream::unfold((inner, false), move |(mut inner, over)| async move {
                if over {
                    return None;
                }
                let next = match idle {
                    Some(t) => match tokio::time::timeout(t, inner.next()).await {
                        Ok(n) => n,
                        Err(_) => return Some((Err(ClientError::StreamIdle(t)), (inner, true))),
                    },
                    None => inner.next().await,
                };
                match next? {
                    Ok(v) => Some((
                        parse_json::<v1::StreamResponse>("StreamResponse", v),
                        (inner, false),
                    )),
                    Err(s) => Some((Err(status_error(&s)), (inner, true))),
                }
            });
        Ok(Box::pin(events))
    }
}
