//! [`ClientBuilder`]: the settings of an [`A2aClient`] and the ways to build one (from a URL
//! with discovery, from a fetched card, from one interface).

use std::sync::Arc;
use std::time::Duration;

use a2a_translate::Policy;
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::auth::Credential;
use crate::discovery::{CardResolver, FetchedCard};
use crate::error::ClientError;
use crate::select::{Binding, SelectedInterface, Speaks, Version};
#[cfg(feature = "grpc")]
use crate::transport::grpc::GrpcTransport;
use crate::transport::jsonrpc::JsonRpcTransport;
use crate::transport::rest::RestTransport;
use crate::transport::{HttpCore, Transport};

use super::A2aClient;

/// Configures and builds an [`A2aClient`].
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    http: Option<reqwest::Client>,
    binding: Option<Binding>,
    version: Option<Version>,
    speaks: Option<Speaks>,
    headers: HeaderMap,
    credentials: Vec<Arc<Credential>>,
    extensions: Vec<String>,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    stream_idle_timeout: Option<Duration>,
    policy: Policy,
    max_response_bytes: Option<usize>,
    reconnect: crate::resume::Reconnect,
    retry: crate::retry::Retry,
    roots: crate::tls::ExtraRoots,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            http: None,
            binding: None,
            version: None,
            speaks: None,
            headers: HeaderMap::new(),
            credentials: Vec::new(),
            extensions: Vec::new(),
            timeout: Some(Duration::from_secs(100)),
            connect_timeout: Duration::from_secs(10),
            stream_idle_timeout: None,
            policy: Policy::Strict,
            max_response_bytes: None,
            reconnect: crate::resume::Reconnect::default(),
            retry: crate::retry::Retry::default(),
            roots: Arc::default(),
        }
    }
}

impl ClientBuilder {
    /// Uses this HTTP client (otherwise one is built with the connect timeout).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// Forces the binding (selection only considers entries with it).
    pub fn binding(mut self, binding: Binding) -> Self {
        self.binding = Some(binding);
        self
    }

    /// Forces the protocol version.
    pub fn version(mut self, version: Version) -> Self {
        self.version = Some(version);
        self
    }

    /// Replaces the set of (binding, version) pairs selection may pick (overrides
    /// [`ClientBuilder::binding`] / [`ClientBuilder::version`]).
    pub fn speaks(mut self, speaks: Speaks) -> Self {
        self.speaks = Some(speaks);
        self
    }

    /// Adds a header sent on every request; it replaces a header this client would set.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, ClientError> {
        let name = HeaderName::try_from(name)
            .map_err(|e| ClientError::Usage(format!("header name {name:?}: {e}")))?;
        let value = HeaderValue::try_from(value)
            .map_err(|e| ClientError::Usage(format!("header value for {name}: {e}")))?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// Adds a credential applied to every request (card fetch excluded).
    pub fn credential(mut self, credential: Credential) -> Self {
        self.credentials.push(Arc::new(credential));
        self
    }

    /// Requests an extension (`A2A-Extensions`; also `X-A2A-Extensions` for 0.3 peers).
    pub fn extension(mut self, uri: impl Into<String>) -> Self {
        self.extensions.push(uri.into());
        self
    }

    /// Whole-call timeout for unary calls (default 100 s; `None` = none). Streams are not cut.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// TCP/TLS connect timeout of the built HTTP client (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Longest wait between two events of a stream (default: none).
    pub fn stream_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.stream_idle_timeout = timeout;
        self
    }

    /// Translation policy for 0.3 peers (default strict: refuse what 0.3 cannot carry).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// How streams resume after a dropped connection (default: 3 retries from 200 ms, doubling;
    /// `retries: 0` turns it off). See [`crate::resume`].
    pub fn reconnect(mut self, reconnect: crate::resume::Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// How calls are retried after a transport failure (default: 3 attempts in all, from 200 ms
    /// doubling, with jitter; sends keep their `messageId` and are repeated after a lost answer
    /// only with `idempotent_sends`; [`crate::retry::Retry::off`] turns it off). See [`crate::retry`] and `docs/client.md`.
    pub fn retry(mut self, retry: crate::retry::Retry) -> Self {
        self.retry = retry;
        self
    }

    /// Also trusts the root certificates of this PEM bundle (a private CA, a test CA) on every
    /// binding, beside the platform's roots: the built HTTP client's `add_root_certificate` for
    /// JSON-RPC and HTTP+JSON, the gRPC transport's rustls verifier for `https` gRPC. A client
    /// given with [`ClientBuilder::http_client`] keeps its own trust for the HTTP bindings.
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, ClientError> {
        let certs = crate::tls::parse_pem(pem)?;
        Arc::make_mut(&mut self.roots).extend(certs);
        Ok(self)
    }

    /// Cap on a unary response body (default 32 MiB).
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = Some(bytes);
        self
    }

    /// The (binding, version) pairs selection may pick.
    pub fn speaks_set(&self) -> Speaks {
        self.speaks
            .clone()
            .unwrap_or_else(|| Speaks::only(self.binding, self.version))
    }

    fn http(&self) -> Result<reqwest::Client, ClientError> {
        match &self.http {
            Some(h) => Ok(h.clone()),
            None => {
                let mut b = reqwest::Client::builder()
                    .connect_timeout(self.connect_timeout)
                    .user_agent(concat!("a2a-rs/", env!("CARGO_PKG_VERSION")));
                for cert in self.roots.iter() {
                    b = b.add_root_certificate(
                        reqwest::Certificate::from_der(cert).map_err(ClientError::Transport)?,
                    );
                }
                b.build().map_err(ClientError::Transport)
            }
        }
    }

    fn core(&self, http: reqwest::Client) -> HttpCore {
        let mut core = HttpCore::new(http);
        core.headers = self.headers.clone();
        core.credentials = self.credentials.clone();
        core.extensions = self.extensions.clone();
        core.timeout = self.timeout;
        core.stream_idle_timeout = self.stream_idle_timeout;
        core.policy = self.policy;
        core.extra_roots = self.roots.clone();
        if let Some(max) = self.max_response_bytes {
            core.max_response_bytes = max;
        }
        core
    }

    /// Discovers the card at `agent_url` and selects the interface.
    ///
    /// The card request carries the builder's extra headers and its header- or cookie-borne
    /// credentials (API key, static bearer), so a card behind the same key (a governed gateway
    /// card, for one) is reachable; query-string keys and OAuth2 tokens are not sent for it.
    pub async fn connect(self, agent_url: &str) -> Result<A2aClient, ClientError> {
        let http = self.http()?;
        let resolver = CardResolver::new(http.clone()).with_headers(self.card_headers());
        let card = resolver.fetch(agent_url).await?;
        self.http_client(http).from_card(card)
    }

    /// The card resolver [`ClientBuilder::connect`] uses: the builder's HTTP client (its timeouts
    /// and extra roots) and its card headers.
    pub fn card_resolver(&self) -> Result<CardResolver, ClientError> {
        Ok(CardResolver::new(self.http()?).with_headers(self.card_headers()))
    }

    /// Headers sent with the card request of [`ClientBuilder::connect`].
    pub fn card_headers(&self) -> HeaderMap {
        let mut headers = self.headers.clone();
        for credential in &self.credentials {
            let (name, value) = match credential.as_ref() {
                Credential::ApiKey {
                    location: crate::auth::ApiKeyLocation::Header,
                    name,
                    value,
                } => (HeaderName::from_bytes(name.as_bytes()).ok(), value.clone()),
                Credential::ApiKey {
                    location: crate::auth::ApiKeyLocation::Cookie,
                    name,
                    value,
                } => (Some(http::header::COOKIE), format!("{name}={value}")),
                Credential::Bearer(token) => {
                    (Some(http::header::AUTHORIZATION), format!("Bearer {token}"))
                }
                _ => (None, String::new()),
            };
            if let (Some(name), Ok(value)) = (name, HeaderValue::from_str(&value)) {
                headers.insert(name, value);
            }
        }
        headers
    }

    /// Discovers the card with `resolver` (shared cache) and selects the interface.
    pub async fn connect_with(
        self,
        resolver: &CardResolver,
        agent_url: &str,
    ) -> Result<A2aClient, ClientError> {
        let card = resolver.fetch(agent_url).await?;
        self.from_card(card)
    }

    /// Selects the interface from an already fetched card.
    pub fn from_card(self, card: FetchedCard) -> Result<A2aClient, ClientError> {
        let interface = card.select(&self.speaks_set())?;
        let mut client = self.from_interface(interface)?;
        client.card = Some(card);
        Ok(client)
    }

    /// Uses `interface` directly (no card).
    pub fn from_interface(self, interface: SelectedInterface) -> Result<A2aClient, ClientError> {
        let http = self.http()?;
        let core = self.core(http);
        let transport: Arc<dyn Transport> = match interface.binding {
            Binding::JsonRpc => Arc::new(JsonRpcTransport::new(core, interface.clone())),
            Binding::HttpJson => Arc::new(RestTransport::new(core, interface.clone())),
            #[cfg(feature = "grpc")]
            Binding::Grpc => Arc::new(GrpcTransport::new(core, interface.clone())?),
            #[cfg(not(feature = "grpc"))]
            Binding::Grpc => {
                return Err(ClientError::Usage(
                    "the interface is gRPC, but this build of a2ars-client has no `grpc` feature"
                        .into(),
                ));
            }
        };
        Ok(A2aClient {
            transport,
            interface,
            card: None,
            reconnect: self.reconnect,
            retry: self.retry,
        })
    }
}
