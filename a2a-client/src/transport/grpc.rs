//! The gRPC binding (A2A 1.0, `lf.a2a.v1.A2AService`): each call is one rpc of the same name as
//! the 1.0 method, over HTTP/2 without TLS (h2c).
//!
//! The request and result are the same 1.0 values as on the other bindings: `a2a_types::grpc`
//! transcodes them to and from protobuf (one conversion for the agent, the client and the
//! gateway). Metadata carry what headers carry elsewhere: `a2a-version: 1.0`, `a2a-extensions`,
//! credentials (built by the same [`crate::auth::Credential`]s, so API keys and bearer tokens
//! work unchanged; API keys in the query string do not exist on gRPC) and the caller's own
//! headers. Errors are read from `google.rpc.Status` (`ErrorInfo` reason, else the status code).
//!
//! Not spoken: the 0.3 gRPC service (`a2a.v1.A2AService`), and gRPC over TLS (`https` interface
//! URLs are refused with a clear message; see docs/client.md).

use std::time::Duration;

use a2a_types::grpc::{Rpc, status::from_status};
use a2a_types::v1;
use futures::StreamExt;
use http::HeaderMap;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tonic::metadata::MetadataMap;

use super::jsonrpc::v1_result;
use super::{EventStream, HttpCore, Transport, V1Request, V1Result, parse_json};
use crate::error::{A2aError, ClientError};
use crate::headers;
use crate::select::{SelectedInterface, Version};

type Channel = HyperClient<HttpConnector, tonic::body::Body>;

/// gRPC transport for one 1.0 interface.
#[derive(Debug, Clone)]
pub struct GrpcTransport {
    core: HttpCore,
    interface: SelectedInterface,
    origin: http::Uri,
    channel: Channel,
}

impl GrpcTransport {
    /// A transport for `interface` (binding GRPC, version 1.0, an `http://host:port` URL).
    pub fn new(core: HttpCore, interface: SelectedInterface) -> Result<GrpcTransport, ClientError> {
        if interface.version != Version::V1 {
            return Err(ClientError::Usage(
                "gRPC is spoken at A2A 1.0 only (the 0.3 gRPC service is not supported)".into(),
            ));
        }
        if interface.url.scheme() != "http" {
            return Err(ClientError::Usage(format!(
                "gRPC over TLS ({}) is not supported by this client yet: use the agent's \
                 JSON-RPC or HTTP+JSON interface",
                interface.url
            )));
        }
        let host = interface.url.host_str().unwrap_or_default();
        let port = interface.url.port_or_known_default().unwrap_or(80);
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let origin: http::Uri = format!("http://{host}:{port}")
            .parse()
            .map_err(|e| ClientError::Usage(format!("gRPC url {}: {e}", interface.url)))?;
        // TCP_NODELAY: HTTP/2 writes a request as several frames; with Nagle and delayed ACKs a
        // small unary call waits ~40 ms (measured: 20 req/s on one connection without it).
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
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
        let mut inner = response.into_inner();
        let events = async_stream::stream! {
            loop {
                let next = match idle {
                    Some(t) => match tokio::time::timeout(t, inner.next()).await {
                        Ok(n) => n,
                        Err(_) => {
                            yield Err(ClientError::StreamIdle(t));
                            break;
                        }
                    },
                    None => inner.next().await,
                };
                match next {
                    None => break,
                    Some(Ok(v)) => yield parse_json::<v1::StreamResponse>("StreamResponse", v),
                    Some(Err(s)) => {
                        yield Err(status_error(&s));
                        break;
                    }
                }
            }
        };
        Ok(Box::pin(events))
    }
}
