//! [`A2aClient`]: every A2A operation in 1.0 terms, whatever binding and version the agent speaks.
//!
//! Build one with [`A2aClient::builder`]: [`ClientBuilder::connect`] discovers the card and
//! selects an interface ([`crate::select`]); [`ClientBuilder::from_interface`] skips discovery.
//! The chosen entry's `tenant` is put on every request. One `reqwest::Client` (and so one
//! connection pool) serves discovery, token requests and calls.

use std::sync::Arc;
use std::time::Duration;

use a2a_translate::Policy;
use a2a_types::{v1, v03};
use futures_util::StreamExt;
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::auth::Credential;
use crate::discovery::{CardResolver, FetchedCard};
use crate::error::ClientError;
use crate::select::{Binding, SelectedInterface, Speaks, Version};
#[cfg(feature = "grpc")]
use crate::transport::grpc::GrpcTransport;
use crate::transport::jsonrpc::JsonRpcTransport;
use crate::transport::rest::RestTransport;
use crate::transport::{EventStream, HttpCore, Transport, V1Request, V1Result, expect_response};

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

/// An A2A client bound to one interface of one agent. Cheap to clone.
#[derive(Debug, Clone)]
pub struct A2aClient {
    transport: Arc<dyn Transport>,
    interface: SelectedInterface,
    card: Option<FetchedCard>,
    reconnect: crate::resume::Reconnect,
    retry: crate::retry::Retry,
}

impl A2aClient {
    /// A builder with defaults (every binding and version this crate speaks).
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Discovers and connects with default settings.
    pub async fn connect(agent_url: &str) -> Result<A2aClient, ClientError> {
        ClientBuilder::default().connect(agent_url).await
    }

    /// A client over a custom transport.
    pub fn with_transport(transport: Arc<dyn Transport>) -> A2aClient {
        let interface = transport.interface().clone();
        A2aClient {
            transport,
            interface,
            card: None,
            reconnect: crate::resume::Reconnect::default(),
            retry: crate::retry::Retry::default(),
        }
    }

    /// The interface in use.
    pub fn interface(&self) -> &SelectedInterface {
        &self.interface
    }

    /// Extensions the agent reported as activated in its last answer (`A2A-Extensions` response
    /// header; `None` when it sent none).
    pub fn activated_extensions(&self) -> Option<Vec<String>> {
        self.transport.activated_extensions()
    }

    /// The card it was built from, if any.
    pub fn card(&self) -> Option<&FetchedCard> {
        self.card.as_ref()
    }

    /// The card as a 1.0 card (a 0.3 card is translated; left-out parts are dropped).
    pub fn card_v1(&self) -> Option<Result<v1::AgentCard, ClientError>> {
        self.card.as_ref().map(card_v1)
    }

    /// The request as sent: the interface's tenant, and a `messageId` for a send without one (so
    /// that every attempt carries the same).
    fn prepare(&self, mut request: V1Request) -> V1Request {
        if self.interface.tenant.is_some() {
            request.set_tenant(self.interface.tenant.clone());
        }
        crate::retry::with_message_id(request)
    }

    /// Performs any unary operation, retried after a transport failure as [`crate::retry`] says.
    pub async fn call(&self, request: V1Request) -> Result<V1Result, ClientError> {
        let request = self.prepare(request);
        crate::retry::run(&self.retry, &request, |attempt| {
            let request = request.clone();
            async move {
                let result = self.transport.call(request.clone()).await;
                match (result, &request) {
                    // A repeated cancel whose first attempt did cancel is answered
                    // TaskNotCancelable (the task has ended): the canceled task is the answer.
                    (Err(e), V1Request::CancelTask(r))
                        if attempt > 1
                            && e.kind() == Some(crate::error::ErrorKind::TaskNotCancelable) =>
                    {
                        match self.get_task_once(&r.id).await {
                            Ok(t) if t.status.state == v1::TaskState::Canceled => {
                                Ok(V1Result::Task(t))
                            }
                            _ => Err(e),
                        }
                    }
                    (result, _) => result,
                }
            }
        })
        .await
    }

    /// `GetTask` of a task, one attempt.
    async fn get_task_once(&self, id: &str) -> Result<v1::Task, ClientError> {
        let request = self.prepare(V1Request::GetTask(v1::GetTaskRequest::new(id)));
        expect_response!(self.transport.call(request).await?, Task)
    }

    /// Opens a stream (retried as [`crate::retry`] says), resuming after a break.
    async fn open_stream(&self, request: V1Request) -> Result<EventStream, ClientError> {
        let request = self.prepare(request);
        let ctx = crate::resume::ResumeCtx::default();
        let first = crate::retry::run(&self.retry, &request, |_| {
            crate::resume::RESUME.scope(ctx.clone(), self.transport.stream(request.clone()))
        })
        .await?;
        // Nothing delivered yet: opening it again is safe when repeating the request is.
        let restart = crate::retry::idempotent(&request, &self.retry).then_some(request);
        Ok(self.resuming(first, ctx, restart))
    }

    /// `SendMessage`. After a transport failure it is sent again with the same `messageId` (one
    /// is set when the message has none) when it surely did not arrive, or, with
    /// [`crate::retry::Retry::idempotent_sends`], whenever its answer may have been lost.
    pub async fn send(
        &self,
        request: v1::SendMessageRequest,
    ) -> Result<v1::SendMessageResponse, ClientError> {
        expect_response!(
            self.call(V1Request::SendMessage(request)).await?,
            SendMessage
        )
    }

    /// `SendMessage` with just a message.
    pub async fn send_message(
        &self,
        message: v1::Message,
    ) -> Result<v1::SendMessageResponse, ClientError> {
        self.send(v1::SendMessageRequest::new(message)).await
    }

    /// `SendStreamingMessage`: the events as they arrive; ends when the agent closes the stream.
    /// Opening it is retried like [`A2aClient::send`]; a stream that breaks before the turn ends
    /// is resumed (see [`crate::resume`]).
    pub async fn stream(
        &self,
        request: v1::SendMessageRequest,
    ) -> Result<EventStream, ClientError> {
        self.open_stream(V1Request::SendStreamingMessage(request))
            .await
    }

    /// `first` resuming through SubscribeToTask with `Last-Event-ID`, or opened again with
    /// `restart` (the request as first sent) when it breaks before its first event.
    fn resuming(
        &self,
        first: EventStream,
        ctx: crate::resume::ResumeCtx,
        restart: Option<V1Request>,
    ) -> EventStream {
        let me = self.clone();
        let restartable = restart.is_some();
        let reopen = move |task_id: Option<String>, ctx| {
            let me = me.clone();
            let req = match (task_id, &restart) {
                (Some(id), _) => Ok(me.prepare(V1Request::SubscribeToTask(
                    v1::SubscribeToTaskRequest::new(&id),
                ))),
                (None, Some(req)) => Ok(req.clone()),
                (None, None) => Err(ClientError::Usage("this stream cannot be restarted".into())),
            };
            async move {
                crate::resume::RESUME
                    .scope(ctx, me.transport.stream(req?))
                    .await
            }
        };
        crate::resume::resuming(first, ctx, self.reconnect.clone(), restartable, reopen)
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<v1::Task, ClientError> {
        let mut req = v1::GetTaskRequest::new(id);
        req.history_length = history_length;
        expect_response!(self.call(V1Request::GetTask(req)).await?, Task)
    }

    /// `ListTasks` (1.0 only; a 0.3 peer gives `UnsupportedOperationError`).
    pub async fn list_tasks(
        &self,
        request: v1::ListTasksRequest,
    ) -> Result<v1::ListTasksResponse, ClientError> {
        expect_response!(self.call(V1Request::ListTasks(request)).await?, ListTasks)
    }

    /// `CancelTask`.
    pub async fn cancel_task(&self, id: &str) -> Result<v1::Task, ClientError> {
        expect_response!(
            self.call(V1Request::CancelTask(v1::CancelTaskRequest::new(id)))
                .await?,
            Task
        )
    }

    /// `SubscribeToTask` (0.3 `tasks/resubscribe`).
    ///
    /// The first event is the current `Task`, as 1.0 requires (§3.1.6). A 0.3 peer need not send it
    /// (0.3 leaves backfill to the implementation), so for 0.3 the client fetches the task with
    /// `tasks/get` and puts it first unless the peer's stream starts with a `Task` by itself
    /// within a short grace period.
    pub async fn subscribe(&self, id: &str) -> Result<EventStream, ClientError> {
        let mut stream = self
            .open_stream(V1Request::SubscribeToTask(v1::SubscribeToTaskRequest::new(
                id,
            )))
            .await?;
        if self.interface.version != Version::V03 {
            return Ok(stream);
        }
        let snapshot = self.get_task(id, None).await.ok();
        let first = tokio::time::timeout(Duration::from_millis(250), stream.next()).await;
        let mut head: Vec<Result<v1::StreamResponse, ClientError>> = Vec::new();
        let task_event = |t: v1::Task| Ok(v1::StreamResponse::Task(t));
        match first {
            Ok(Some(Ok(v1::StreamResponse::Task(t)))) => head.push(task_event(t)),
            Ok(Some(item)) => {
                head.extend(snapshot.map(task_event));
                head.push(item);
            }
            Ok(None) => {
                head.extend(snapshot.map(task_event));
                return Ok(Box::pin(futures_util::stream::iter(head)));
            }
            Err(_) => head.extend(snapshot.map(task_event)),
        }
        Ok(Box::pin(futures_util::stream::iter(head).chain(stream)))
    }

    /// `CreateTaskPushNotificationConfig`.
    pub async fn create_push_config(
        &self,
        config: v1::TaskPushNotificationConfig,
    ) -> Result<v1::TaskPushNotificationConfig, ClientError> {
        expect_response!(
            self.call(V1Request::CreateTaskPushNotificationConfig(config))
                .await?,
            PushConfig
        )
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<v1::TaskPushNotificationConfig, ClientError> {
        let req = v1::GetTaskPushNotificationConfigRequest {
            task_id: task_id.to_string(),
            id: id.to_string(),
            ..Default::default()
        };
        expect_response!(
            self.call(V1Request::GetTaskPushNotificationConfig(req))
                .await?,
            PushConfig
        )
    }

    /// `ListTaskPushNotificationConfigs`.
    pub async fn list_push_configs(
        &self,
        request: v1::ListTaskPushNotificationConfigsRequest,
    ) -> Result<v1::ListTaskPushNotificationConfigsResponse, ClientError> {
        expect_response!(
            self.call(V1Request::ListTaskPushNotificationConfigs(request))
                .await?,
            PushConfigList
        )
    }

    /// `DeleteTaskPushNotificationConfig`.
    pub async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let req = v1::DeleteTaskPushNotificationConfigRequest {
            task_id: task_id.to_string(),
            id: id.to_string(),
            ..Default::default()
        };
        match self
            .call(V1Request::DeleteTaskPushNotificationConfig(req))
            .await?
        {
            V1Result::Deleted(_) => Ok(()),
            other => Err(ClientError::Parse(format!(
                "expected an empty result, transport produced {}",
                crate::transport::result_name(&other)
            ))),
        }
    }

    /// `GetExtendedAgentCard` (0.3 `agent/getAuthenticatedExtendedCard`), as a 1.0 card.
    pub async fn extended_card(&self) -> Result<v1::AgentCard, ClientError> {
        let card = expect_response!(
            self.call(V1Request::GetExtendedAgentCard(Default::default()))
                .await?,
            Card
        )?;
        Ok(*card)
    }
}

/// A fetched card as a 1.0 card: parsed as 1.0 when it has `supportedInterfaces`, else parsed as
/// 0.3 and translated (interfaces and schemes 1.0 cannot use are left out).
pub fn card_v1(card: &FetchedCard) -> Result<v1::AgentCard, ClientError> {
    if card.is_v1() {
        let value: serde_json::Value =
            serde_json::from_slice(&card.body).map_err(ClientError::parse)?;
        return crate::transport::parse_json("agent card", value);
    }
    let value: serde_json::Value =
        serde_json::from_slice(&card.body).map_err(ClientError::parse)?;
    let old: v03::AgentCard = crate::transport::parse_json("0.3 agent card", value)?;
    a2a_translate::to_v1::card(old, Policy::SdkCompatible)
        .map(|t| t.card)
        .map_err(crate::compat::refused)
}
