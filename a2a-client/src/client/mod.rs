//! [`A2aClient`]: every A2A operation in 1.0 terms, whatever binding and version the agent speaks.
//!
//! Build one with [`A2aClient::builder`]: [`ClientBuilder::connect`] discovers the card and
//! selects an interface ([`crate::select`]); [`ClientBuilder::from_interface`] skips discovery.
//! The chosen entry's `tenant` is put on every request. One `reqwest::Client` (and so one
//! connection pool) serves discovery, token requests and calls.

mod builder;

pub use builder::ClientBuilder;

use std::sync::Arc;
use std::time::Duration;

use a2a_translate::Policy;
use a2a_types::{v1, v03};
use futures_util::StreamExt;

use crate::discovery::FetchedCard;
use crate::error::ClientError;
use crate::select::{SelectedInterface, Version};
use crate::transport::{EventStream, Transport, V1Request, V1Result, expect_response};

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
