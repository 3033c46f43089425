//! The task that drives one delegation: opens the child's stream (or polls it), folds its
//! events into the child task, forwards progress, records the link, and cancels the child when
//! the parent is canceled or the handler stops waiting.

use std::future::Future;
use std::pin::Pin;

use a2a_client::{A2aClient, ClientBuilder, ClientError};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant, sleep, sleep_until};
use tokio_util::sync::CancellationToken;

use super::child::{Child, DELEGATIONS_KEY, DelegateError, FORWARDED_KEY, link};
use crate::handler::Emitter;
use crate::model::{
    Message, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState, TaskStatus,
};

/// How long a stopping delegation (parent canceled, or the handler gone) waits to learn the
/// child's task id and to see the child end after CancelTask.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Everything the driving task needs (nothing borrowed from the handler).
pub(super) struct Job {
    pub emitter: Emitter,
    pub parent: CancellationToken,
    pub chain: Option<String>,
    /// The `traceparent` of the request's span, sent to the child (traces exported only).
    pub traceparent: Option<String>,
    pub url: String,
    pub builder: ClientBuilder,
    pub name: Option<String>,
    pub forward_status: bool,
    pub forward_artifacts: bool,
    pub poll_interval: Duration,
    pub request: SendMessageRequest,
}

type Outcome = Result<Child, DelegateError>;
type Stop<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Drive the delegation and hand its outcome to the waiting handler (if it still waits).
pub(super) async fn run(job: Job, mut tx: oneshot::Sender<Outcome>) {
    let out = drive(&job, &mut tx).await;
    let _ = tx.send(out);
}

async fn drive(job: &Job, tx: &mut oneshot::Sender<Outcome>) -> Outcome {
    let parent = job.parent.clone();
    // The parent is canceled, or the handler dropped the `send` future.
    let mut stop: Stop<'_> = Box::pin(async move {
        tokio::select! {
            _ = parent.cancelled() => {}
            _ = tx.closed() => {}
        }
    });
    let mut agent = job.name.clone().unwrap_or_else(|| job.url.clone());
    let builder = match job.builder.clone().delegation_chain(job.chain.as_deref()) {
        Ok(b) => b,
        Err(source) => return Err(DelegateError::Client { agent, source }),
    };
    let builder = match &job.traceparent {
        Some(tp) => match builder.header("traceparent", tp) {
            Ok(b) => b,
            Err(source) => return Err(DelegateError::Client { agent, source }),
        },
        None => builder,
    };
    // Nothing exists at the child before the send: a stop here just stops.
    let client = tokio::select! {
        c = builder.connect(&job.url) => match c {
            Ok(c) => c,
            Err(source) => return Err(DelegateError::Client { agent, source }),
        },
        _ = &mut stop => return Err(DelegateError::Canceled { agent, task: None, by_parent: true }),
    };
    let card = client.card_v1().and_then(Result::ok);
    if job.name.is_none()
        && let Some(c) = &card
        && !c.name.is_empty()
    {
        agent = c.name.clone();
    }
    let streaming = card.is_none_or(|c| c.capabilities.streaming != Some(false));
    let mut run = Run {
        job,
        client,
        agent,
        task: None,
        message: None,
        recorded: None,
        stop_at: None,
        cancel_sent: false,
    };
    let r = if streaming {
        run.stream(&mut stop).await
    } else {
        run.poll(&mut stop).await
    };
    // A delegation that gives up before the child's turn ended leaves no orphan behind.
    if !run.turn_ended() {
        run.cancel_child().await;
    }
    match r {
        Err(source) => Err(DelegateError::Client {
            agent: run.agent,
            source,
        }),
        Ok(()) => run.outcome(),
    }
}

struct Run<'a> {
    job: &'a Job,
    client: A2aClient,
    agent: String,
    /// The child task as folded from its events.
    task: Option<Task>,
    /// The child's direct reply.
    message: Option<Message>,
    /// The child state last written to the parent's metadata.
    recorded: Option<TaskState>,
    /// Set when stopping: the latest time to wait for the child.
    stop_at: Option<Instant>,
    cancel_sent: bool,
}

impl Run<'_> {
    fn stopping(&self) -> bool {
        self.stop_at.is_some()
    }

    fn begin_stop(&mut self) {
        self.stop_at = Some(Instant::now() + STOP_GRACE);
    }

    fn deadline(&self) -> Instant {
        self.stop_at
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400))
    }

    fn turn_ended(&self) -> bool {
        match &self.task {
            None => self.message.is_some(),
            Some(t) => t.status.state.is_terminal() || t.status.state.is_interrupted(),
        }
    }

    /// SendStreamingMessage and its events until the turn ends.
    async fn stream(&mut self, stop: &mut Stop<'_>) -> Result<(), ClientError> {
        let client = self.client.clone();
        let open = client.stream(self.job.request.clone());
        tokio::pin!(open);
        let mut events = loop {
            tokio::select! {
                biased;
                _ = &mut *stop, if !self.stopping() => self.begin_stop(),
                _ = sleep_until(self.deadline()), if self.stopping() => return Ok(()),
                r = &mut open => break r?,
            }
        };
        loop {
            tokio::select! {
                biased;
                _ = &mut *stop, if !self.stopping() => {
                    self.begin_stop();
                    self.cancel_child().await;
                }
                _ = sleep_until(self.deadline()), if self.stopping() => return Ok(()),
                ev = events.next() => match ev {
                    None => return Ok(()),
                    Some(Err(e)) => return Err(e),
                    Some(Ok(ev)) => {
                        // A Message after the task is an intermediate one (a Camel-guide
                        // agent's `emitMessage`): the stream goes on.
                        let ends = match &ev {
                            StreamResponse::Message(_) if self.task.is_some() => false,
                            _ => ev.closes_live_stream(),
                        };
                        self.on_event(ev).await;
                        if self.stopping() {
                            // The child's id may only be known now.
                            self.cancel_child().await;
                        }
                        if ends {
                            return Ok(());
                        }
                    }
                },
            }
        }
    }

    /// A return-immediately send, then GetTask every `poll_interval` until the turn ends.
    async fn poll(&mut self, stop: &mut Stop<'_>) -> Result<(), ClientError> {
        let mut req = self.job.request.clone();
        req.configuration.get_or_insert_default().return_immediately = Some(true);
        let client = self.client.clone();
        let send = client.send(req);
        tokio::pin!(send);
        let first = loop {
            tokio::select! {
                biased;
                _ = &mut *stop, if !self.stopping() => self.begin_stop(),
                _ = sleep_until(self.deadline()), if self.stopping() => return Ok(()),
                r = &mut send => break r?,
            }
        };
        match first {
            SendMessageResponse::Message(m) => {
                self.message = Some(m);
                return Ok(());
            }
            SendMessageResponse::Task(t) => self.on_polled(t).await,
        }
        if self.stopping() {
            self.cancel_child().await;
        }
        while !self.turn_ended() {
            tokio::select! {
                biased;
                _ = &mut *stop, if !self.stopping() => {
                    self.begin_stop();
                    self.cancel_child().await;
                }
                _ = sleep_until(self.deadline()), if self.stopping() => return Ok(()),
                _ = sleep(self.job.poll_interval) => {
                    let id = self.task.as_ref().map(|t| t.id.clone()).unwrap_or_default();
                    // One message at most: a limit both versions can say (0.3 reads 0 as
                    // no limit, so a 1.0 `0` cannot reach a 0.3 child).
                    let t = self.client.get_task(&id, Some(1)).await?;
                    self.on_polled(t).await;
                }
            }
        }
        Ok(())
    }

    /// One stream event: folded into the child task, forwarded, recorded.
    async fn on_event(&mut self, ev: StreamResponse) {
        match ev {
            StreamResponse::Task(t) => self.task = Some(t),
            StreamResponse::Message(m) => {
                if self.task.is_none() {
                    self.message = Some(m);
                }
            }
            StreamResponse::StatusUpdate(e) => {
                let task = self.task.get_or_insert_with(|| Task {
                    id: e.task_id.clone(),
                    context_id: Some(e.context_id.clone()),
                    ..Default::default()
                });
                if let Some(m) = &e.status.message {
                    task.history.push(m.clone());
                }
                task.status = e.status.clone();
                self.forward_status(&e.status).await;
            }
            StreamResponse::ArtifactUpdate(e) => {
                let append = e.append.unwrap_or(false);
                if let Some(t) = &mut self.task {
                    match t
                        .artifacts
                        .iter_mut()
                        .find(|a| a.artifact_id == e.artifact.artifact_id)
                    {
                        Some(a) if append => a.parts.extend(e.artifact.parts.iter().cloned()),
                        Some(a) => *a = e.artifact.clone(),
                        None => t.artifacts.push(e.artifact.clone()),
                    }
                }
                if self.job.forward_artifacts && !self.stopping() {
                    self.job
                        .emitter
                        .emit_artifact(e.artifact, append, e.last_chunk.unwrap_or(false))
                        .await;
                }
            }
        }
        self.record().await;
    }

    /// A task read by GetTask: what changed since the last read is forwarded.
    async fn on_polled(&mut self, t: Task) {
        let before = self.task.take();
        let seen_msg = before
            .as_ref()
            .and_then(|b| b.status.message.as_ref())
            .map(|m| m.message_id.clone());
        if t.status.message.as_ref().map(|m| &m.message_id) != seen_msg.as_ref() {
            self.forward_status(&t.status).await;
        }
        if self.job.forward_artifacts && !self.stopping() {
            for a in &t.artifacts {
                let old = before
                    .as_ref()
                    .and_then(|b| b.artifacts.iter().find(|o| o.artifact_id == a.artifact_id));
                if old != Some(a) {
                    self.job.emitter.emit_artifact(a.clone(), false, true).await;
                }
            }
        }
        self.task = Some(t);
        self.record().await;
    }

    /// A WORKING (or SUBMITTED) status message of the child, as the parent's.
    async fn forward_status(&self, status: &TaskStatus) {
        let state = status.state;
        if !self.job.forward_status
            || self.stopping()
            || state.is_terminal()
            || state.is_interrupted()
        {
            return;
        }
        let Some(m) = &status.message else { return };
        let mut m = m.clone();
        m.message_id = String::new();
        let child = self.task.as_ref().map(|t| t.id.clone()).unwrap_or_default();
        m.metadata.get_or_insert_default().insert(
            FORWARDED_KEY.into(),
            json!({"agent": self.agent, "taskId": child}),
        );
        self.job.emitter.emit_message(m).await;
    }

    /// The child's link in the parent's metadata, when its state changed.
    async fn record(&mut self) {
        let Some(t) = &self.task else { return };
        if self.recorded == Some(t.status.state) {
            return;
        }
        self.recorded = Some(t.status.state);
        let entry = link(&self.agent, t);
        let id = t.id.clone();
        self.job
            .emitter
            .update_metadata(move |m| {
                let list = m
                    .entry(DELEGATIONS_KEY)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !list.is_array() {
                    *list = Value::Array(Vec::new());
                }
                if let Some(list) = list.as_array_mut() {
                    match list.iter_mut().find(|e| e["taskId"] == id.as_str()) {
                        Some(e) => *e = entry,
                        None => list.push(entry),
                    }
                }
            })
            .await;
    }

    /// CancelTask on the child, once, when its id is known and its turn has not ended (a few
    /// tries on transport errors; an A2A answer, e.g. "not cancelable", is final).
    async fn cancel_child(&mut self) {
        if self.cancel_sent || self.turn_ended() {
            return;
        }
        let Some(id) = self.task.as_ref().map(|t| t.id.clone()) else {
            return;
        };
        self.cancel_sent = true;
        for attempt in 0..3u32 {
            match self.client.cancel_task(&id).await {
                Ok(t) => {
                    tracing::debug!(child = %id, agent = %self.agent, "delegated task canceled");
                    if self
                        .task
                        .as_ref()
                        .is_some_and(|old| !old.status.state.is_terminal())
                    {
                        self.task = Some(t);
                    }
                    return;
                }
                Err(ClientError::A2a(e)) => {
                    tracing::debug!(child = %id, error = %e, "canceling the delegated task");
                    return;
                }
                Err(e) => {
                    tracing::warn!(child = %id, agent = %self.agent, error = %e, attempt,
                        "canceling the delegated task failed");
                    sleep(Duration::from_millis(100 * 4u64.pow(attempt))).await;
                }
            }
        }
    }

    /// The end of the delegation, from what was seen.
    fn outcome(self) -> Outcome {
        let agent = self.agent;
        if self.stop_at.is_some() {
            return Err(DelegateError::Canceled {
                agent,
                task: self.task.map(Box::new),
                by_parent: true,
            });
        }
        let Some(task) = self.task else {
            return match self.message {
                Some(m) => Ok(Child {
                    agent,
                    task: None,
                    message: Some(m),
                }),
                None => Err(DelegateError::Incomplete { agent, task: None }),
            };
        };
        match task.status.state {
            TaskState::Completed | TaskState::InputRequired | TaskState::AuthRequired => {
                Ok(Child {
                    agent,
                    message: task.status.message.clone(),
                    task: Some(task),
                })
            }
            TaskState::Failed | TaskState::Rejected => Err(DelegateError::Failed {
                agent,
                reason: task
                    .status
                    .message
                    .as_ref()
                    .map(|m| m.text())
                    .unwrap_or_default(),
                task: Box::new(task),
            }),
            TaskState::Canceled => Err(DelegateError::Canceled {
                agent,
                task: Some(Box::new(task)),
                by_parent: false,
            }),
            _ => Err(DelegateError::Incomplete {
                agent,
                task: Some(Box::new(task)),
            }),
        }
    }
}
