//! Delegation from handlers (`RequestContext::delegate`): a chain of three real agents on
//! loopback, A -> B -> C, each an `AgentServer` running a handler that delegates to the next
//! with `a2a-client` over real HTTP and SSE. Progress from C reaches A's caller; a cancel at A's
//! caller reaches C; a failing C is a typed error in B's handler; the chain header is carried
//! on; the link is in the parent's metadata. Over JSON-RPC and HTTP+JSON (1.0), and JSON-RPC
//! 0.3, and against a child that cannot stream (polled).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_agent::delegate::{DELEGATIONS_KEY, DelegateError, FORWARDED_KEY};
use a2a_agent::{
    AgentCard, AgentServer, Handler, HandlerError, Reply, RequestContext, ServerHandle, handler_fn,
};
use a2a_client::{A2aClient, Binding, ClientBuilder, Version};
use a2a_types::v1::{
    Artifact, Message, Part, SendMessageRequest, SendMessageResponse, StreamResponse, TaskState,
};
use futures::StreamExt;
use serde_json::json;

/// What the agents of one chain saw.
#[derive(Default)]
struct Seen {
    /// (agent, delegation chain header it received).
    chains: Mutex<Vec<(char, Option<String>)>>,
    /// (agent, its task id).
    tasks: Mutex<Vec<(char, String)>>,
    /// (agent, the delegation error its handler got, summarized).
    errors: Mutex<Vec<(char, String)>>,
    /// C's handler saw its task canceled.
    c_canceled: tokio::sync::Notify,
}

impl Seen {
    fn saw(&self, me: char, ctx: &RequestContext) {
        let chain = ctx.delegation_chain().map(str::to_owned);
        self.chains.lock().unwrap().push((me, chain));
        self.tasks
            .lock()
            .unwrap()
            .push((me, ctx.task_id().to_owned()));
    }
    fn task(&self, me: char) -> String {
        let tasks = self.tasks.lock().unwrap();
        tasks
            .iter()
            .rev()
            .find(|(a, _)| *a == me)
            .unwrap()
            .1
            .clone()
    }
    fn errors(&self) -> Vec<(char, String)> {
        self.errors.lock().unwrap().clone()
    }
}

async fn serve(card: AgentCard, h: impl Handler) -> ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(card, h)
        .validate_auth(false)
        .serve(l)
        .await
        .unwrap()
}

/// The bottom agent: "fail" fails; otherwise a WORKING message and an artifact, then "hang"
/// waits for a cancel (up to 30 s), anything else completes.
fn bottom(seen: Arc<Seen>) -> impl Handler {
    handler_fn(move |ctx: RequestContext| {
        let seen = seen.clone();
        async move {
            seen.saw('C', &ctx);
            let text = ctx.text();
            if text.contains("fail") {
                return Err(HandlerError::failed("C broke"));
            }
            ctx.emit("C working").await;
            let artifact = Artifact {
                artifact_id: "c-out".into(),
                parts: vec![Part::text("from C")],
                ..Default::default()
            };
            ctx.emit_artifact(artifact, false, true).await;
            if text.contains("hang") {
                tokio::select! {
                    _ = ctx.cancelled() => {
                        seen.c_canceled.notify_one();
                        return Ok(Reply::Empty);
                    }
                    _ = tokio::time::sleep(Duration::from_secs(30)) => {
                        return Ok(Reply::text("C was never canceled"));
                    }
                }
            }
            Ok(Reply::text("C done"))
        }
    })
}

/// An agent that delegates every message to `next` with `client` settings, forwarding
/// progress, and answers "<me> got: <child's text>". With "short" in the text it waits for the
/// child at most 300 ms (then drops the delegation).
fn middle(me: char, next: String, client: ClientBuilder, seen: Arc<Seen>) -> impl Handler {
    handler_fn(move |ctx: RequestContext| {
        let (seen, next, client) = (seen.clone(), next.clone(), client.clone());
        async move {
            seen.saw(me, &ctx);
            let send = ctx
                .delegate(&next)
                .client(client)
                .forward_progress()
                .send(Message::user_text(ctx.text()));
            let r = if ctx.text().contains("short") {
                match tokio::time::timeout(Duration::from_millis(300), send).await {
                    Ok(r) => r,
                    Err(_) => return Err(HandlerError::failed("gave up on the child")),
                }
            } else {
                send.await
            };
            match r {
                Ok(child) => Ok(Reply::text(format!("{me} got: {}", child.text()))),
                Err(e) => {
                    let summary = match &e {
                        DelegateError::Failed { reason, task, .. } => {
                            format!("failed {} {reason}", task.status.state.as_str())
                        }
                        DelegateError::Canceled { by_parent, .. } => {
                            format!("canceled by_parent={by_parent}")
                        }
                        other => format!("other {other}"),
                    };
                    seen.errors.lock().unwrap().push((me, summary));
                    Err(e.into())
                }
            }
        }
    })
}

fn card(name: &str) -> AgentCard {
    AgentCard::identity(name, "delegation test agent", "1.0.0")
}

struct Chain {
    a: ServerHandle,
    b: ServerHandle,
    c: ServerHandle,
    seen: Arc<Seen>,
    client: ClientBuilder,
}

impl Chain {
    /// A -> B -> C, every hop (and the caller) on `binding` and `version`; C from `c_card`.
    async fn start(binding: Binding, version: Version, c_card: AgentCard) -> Chain {
        let seen = Arc::new(Seen::default());
        let client = ClientBuilder::default().binding(binding).version(version);
        let c = serve(c_card, bottom(seen.clone())).await;
        let b = serve(
            card("b"),
            middle('B', c.url().to_owned(), client.clone(), seen.clone()),
        )
        .await;
        let a = serve(
            card("a"),
            middle('A', b.url().to_owned(), client.clone(), seen.clone()),
        )
        .await;
        Chain {
            a,
            b,
            c,
            seen,
            client,
        }
    }
    async fn caller(&self, url: &str, chain: Option<&str>) -> A2aClient {
        self.client
            .clone()
            .delegation_chain(chain)
            .unwrap()
            .connect(url)
            .await
            .unwrap()
    }
    async fn stop(self) {
        self.a.shutdown().await;
        self.b.shutdown().await;
        self.c.shutdown().await;
    }
}

fn status_text(ev: &StreamResponse) -> Option<(TaskState, String)> {
    match ev {
        StreamResponse::StatusUpdate(e) => Some((
            e.status.state,
            e.status
                .message
                .as_ref()
                .map(|m| m.text())
                .unwrap_or_default(),
        )),
        _ => None,
    }
}

/// Waits (up to 10 s) until `client` reads task `id` in `state`.
async fn wait_state(client: &A2aClient, id: &str, state: TaskState) {
    for _ in 0..200 {
        if client.get_task(id, None).await.unwrap().status.state == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached {state:?}");
}

const HOPS: [(Binding, Version); 3] = [
    (Binding::JsonRpc, Version::V1),
    (Binding::HttpJson, Version::V1),
    (Binding::JsonRpc, Version::V03),
];

#[tokio::test]
async fn progress_from_the_bottom_reaches_the_top_and_the_links_are_recorded() {
    for (binding, version) in HOPS {
        let what = format!("{binding:?} {version:?}");
        let chain = Chain::start(binding, version, card("c")).await;
        let caller = chain.caller(chain.a.url(), Some("signed.chain")).await;
        let events: Vec<StreamResponse> = caller
            .stream(SendMessageRequest::new(Message::user_text("work")))
            .await
            .unwrap()
            .map(|e| e.unwrap())
            .collect()
            .await;
        // C's WORKING message, forwarded by B then by A, marked as coming from A's child B.
        let forwarded = events
            .iter()
            .find_map(|e| match e {
                StreamResponse::StatusUpdate(s)
                    if s.status
                        .message
                        .as_ref()
                        .is_some_and(|m| m.text() == "C working") =>
                {
                    s.status.message.clone()
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{what}: no forwarded progress in {events:#?}"));
        assert_eq!(
            forwarded.metadata.unwrap()[FORWARDED_KEY]["agent"],
            "b",
            "{what}"
        );
        // C's artifact, forwarded twice, unchanged.
        let art = events
            .iter()
            .find_map(|e| match e {
                StreamResponse::ArtifactUpdate(a) => Some(a.artifact.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{what}: no artifact in {events:#?}"));
        assert_eq!(art.artifact_id, "c-out", "{what}");
        assert_eq!(art.parts[0].as_text(), Some("from C"), "{what}");
        let last = status_text(events.last().unwrap()).unwrap();
        assert_eq!(
            last,
            (TaskState::Completed, "A got: B got: C done".to_owned()),
            "{what}"
        );
        // The chain header went on unchanged (no gateway here adds hops).
        let chains = chain.seen.chains.lock().unwrap().clone();
        assert_eq!(chains.len(), 3, "{what}");
        assert!(
            chains
                .iter()
                .all(|(_, c)| c.as_deref() == Some("signed.chain")),
            "{what}: {chains:?}"
        );
        // Each parent lists its child under the documented key, with the child's final state.
        let b_client = chain.caller(chain.b.url(), None).await;
        let b_task = b_client
            .get_task(&chain.seen.task('B'), None)
            .await
            .unwrap();
        let a_task = caller.get_task(&chain.seen.task('A'), None).await.unwrap();
        assert_eq!(
            a_task.metadata.as_ref().unwrap()[DELEGATIONS_KEY],
            json!([{
                "agent": "b",
                "taskId": b_task.id,
                "contextId": b_task.context_id,
                "state": "TASK_STATE_COMPLETED",
            }]),
            "{what}"
        );
        let link = &b_task.metadata.as_ref().unwrap()[DELEGATIONS_KEY][0];
        assert_eq!(link["agent"], "c", "{what}");
        assert_eq!(link["taskId"], chain.seen.task('C'), "{what}");
        assert_eq!(link["state"], "TASK_STATE_COMPLETED", "{what}");
        assert!(chain.seen.errors().is_empty(), "{what}");
        chain.stop().await;
    }
}

#[tokio::test]
async fn cancel_at_the_top_reaches_the_bottom() {
    for (binding, version) in HOPS {
        let what = format!("{binding:?} {version:?}");
        let chain = Chain::start(binding, version, card("c")).await;
        let caller = chain.caller(chain.a.url(), None).await;
        let mut events = caller
            .stream(SendMessageRequest::new(Message::user_text("hang")))
            .await
            .unwrap();
        let a_id = match events.next().await.unwrap().unwrap() {
            StreamResponse::Task(t) => t.id,
            other => panic!("{what}: first event {other:?}"),
        };
        // C is running once its progress reached the top.
        loop {
            let ev = events.next().await.unwrap().unwrap();
            if matches!(ev, StreamResponse::ArtifactUpdate(_)) {
                break;
            }
        }
        // The handlers of A and B are waiting on their children's streams now.
        let canceled = caller.cancel_task(&a_id).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled, "{what}");
        // The caller's stream ends with the final state.
        let rest: Vec<StreamResponse> = events.map(|e| e.unwrap()).collect().await;
        assert_eq!(
            rest.last().and_then(status_text).map(|s| s.0),
            Some(TaskState::Canceled),
            "{what}: {rest:#?}"
        );
        // C's handler saw the cancel; B's and C's tasks end canceled.
        tokio::time::timeout(Duration::from_secs(10), chain.seen.c_canceled.notified())
            .await
            .unwrap_or_else(|_| panic!("{what}: C's handler never saw the cancel"));
        let c_client = chain.caller(chain.c.url(), None).await;
        wait_state(&c_client, &chain.seen.task('C'), TaskState::Canceled).await;
        let b_client = chain.caller(chain.b.url(), None).await;
        wait_state(&b_client, &chain.seen.task('B'), TaskState::Canceled).await;
        chain.stop().await;
    }
}

#[tokio::test]
async fn a_failing_bottom_is_a_typed_error_in_the_middle() {
    let chain = Chain::start(Binding::HttpJson, Version::V1, card("c")).await;
    let b = chain.caller(chain.b.url(), None).await;
    let task = match b.send_message(Message::user_text("fail")).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(task.status.state, TaskState::Failed);
    let reason = task.status.message.as_ref().unwrap().text();
    assert_eq!(reason, "the delegated task of c failed: C broke");
    assert_eq!(
        chain.seen.errors(),
        vec![('B', "failed TASK_STATE_FAILED C broke".to_owned())]
    );
    // The failed child is linked with its state.
    let link = &task.metadata.as_ref().unwrap()[DELEGATIONS_KEY][0];
    assert_eq!(link["state"], "TASK_STATE_FAILED");
    chain.stop().await;
}

#[tokio::test]
async fn a_handler_that_stops_waiting_cancels_its_child() {
    let chain = Chain::start(Binding::JsonRpc, Version::V1, card("c")).await;
    let b = chain.caller(chain.b.url(), None).await;
    let task = match b
        .send_message(Message::user_text("hang short"))
        .await
        .unwrap()
    {
        SendMessageResponse::Task(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(task.status.state, TaskState::Failed);
    tokio::time::timeout(Duration::from_secs(10), chain.seen.c_canceled.notified())
        .await
        .expect("C's handler never saw the cancel");
    let c = chain.caller(chain.c.url(), None).await;
    wait_state(&c, &chain.seen.task('C'), TaskState::Canceled).await;
    chain.stop().await;
}

#[tokio::test]
async fn a_child_that_cannot_stream_is_polled_and_canceled() {
    let no_stream = AgentCard::builder("c", "no streaming", "1.0.0")
        .streaming(false)
        .build();
    let chain = Chain::start(Binding::HttpJson, Version::V1, no_stream).await;
    let b = chain.caller(chain.b.url(), None).await;
    let events: Vec<StreamResponse> = b
        .stream(SendMessageRequest::new(Message::user_text("work")))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    assert!(
        events.iter().any(
            |e| matches!(e, StreamResponse::ArtifactUpdate(a) if a.artifact.artifact_id == "c-out")
        ),
        "{events:#?}"
    );
    assert_eq!(
        status_text(events.last().unwrap()).unwrap(),
        (TaskState::Completed, "B got: C done".to_owned())
    );
    // Canceled while polling.
    let mut events = b
        .stream(SendMessageRequest::new(Message::user_text("hang")))
        .await
        .unwrap();
    let b_id = match events.next().await.unwrap().unwrap() {
        StreamResponse::Task(t) => t.id,
        other => panic!("first event {other:?}"),
    };
    loop {
        if matches!(
            events.next().await.unwrap().unwrap(),
            StreamResponse::ArtifactUpdate(_)
        ) {
            break;
        }
    }
    b.cancel_task(&b_id).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), chain.seen.c_canceled.notified())
        .await
        .expect("C's handler never saw the cancel");
    let c = chain.caller(chain.c.url(), None).await;
    wait_state(&c, &chain.seen.task('C'), TaskState::Canceled).await;
    chain.stop().await;
}

/// What B's handler saw of its child: (state, task id).
type ChildSeen = (Option<TaskState>, Option<String>);

#[tokio::test]
async fn a_direct_reply_and_a_child_asking_for_input_are_results() {
    let c = serve(
        card("c"),
        handler_fn(|ctx: RequestContext| async move {
            if ctx.text().contains("input") {
                return Ok(Reply::input_required("which city?"));
            }
            Ok(Reply::direct_text("direct from C"))
        })
        .direct_replies(),
    )
    .await;
    let b_seen: Arc<Mutex<Vec<ChildSeen>>> = Arc::default();
    let url = c.url().to_owned();
    let b = serve(card("b"), {
        let b_seen = b_seen.clone();
        handler_fn(move |ctx: RequestContext| {
            let (url, b_seen) = (url.clone(), b_seen.clone());
            async move {
                let child = ctx
                    .delegate(url)
                    .send(Message::user_text(ctx.text()))
                    .await?;
                b_seen
                    .lock()
                    .unwrap()
                    .push((child.state(), child.task_id().map(str::to_owned)));
                Ok(Reply::text(format!("B got: {}", child.text())))
            }
        })
    })
    .await;
    let client = A2aClient::connect(b.url()).await.unwrap();
    for (ask, answer) in [
        ("hello", "B got: direct from C"),
        ("input please", "B got: which city?"),
    ] {
        let task = match client.send_message(Message::user_text(ask)).await.unwrap() {
            SendMessageResponse::Task(t) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(task.status.message.unwrap().text(), answer);
    }
    let got = b_seen.lock().unwrap().clone();
    assert_eq!(got[0], (None, None), "a direct reply has no task");
    assert_eq!(got[1].0, Some(TaskState::InputRequired));
    assert!(got[1].1.is_some());
    b.shutdown().await;
    c.shutdown().await;
}
