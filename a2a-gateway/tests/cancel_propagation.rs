//! Cancel propagation through the gateway (issue 16): a caller's CancelTask reaches the peer
//! (the peer's handler sees it, its task ends canceled) and the caller's open streams, the
//! send's stream and a SubscribeToTask, end with the final state; on both bindings and both
//! versions of the caller. And a three-agent chain behind the gateway (A -> B -> C, each an
//! a2a-agent handler delegating with `RequestContext::delegate` through the gateway): the
//! signed delegation chain grows by one at each hop, C's progress reaches A's caller, and a
//! cancel at A's caller reaches C.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_agent::handler::{HandlerError, Reply, RequestContext, handler_fn};
use a2a_agent::{AgentCard, AgentServer, Handler, ServerHandle};
use a2a_client::{A2aClient, Binding, ClientBuilder, Version};
use a2a_gateway::governance::loops::ChainKey;
use a2a_types::v1::{Artifact, Message, Part, SendMessageRequest, StreamResponse, TaskState};
use common::gov::Slot;
use common::*;
use futures::StreamExt;
use tokio::sync::Notify;

async fn serve(name: &str, h: impl Handler) -> ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(AgentCard::identity(name, "cancel test agent", "1.0.0"), h)
        .validate_auth(false)
        .serve(l)
        .await
        .unwrap()
}

/// A WORKING message and an artifact, then: "hang" waits for a cancel (notifying `canceled`),
/// anything else completes with "<name> done".
fn worker(name: &'static str, canceled: Arc<Notify>) -> impl Handler {
    handler_fn(move |ctx: RequestContext| {
        let canceled = canceled.clone();
        async move {
            ctx.emit(format!("{name} working")).await;
            let artifact = Artifact {
                artifact_id: format!("{name}-out"),
                parts: vec![Part::text(format!("from {name}"))],
                ..Default::default()
            };
            ctx.emit_artifact(artifact, false, true).await;
            if ctx.text().contains("hang") {
                tokio::select! {
                    _ = ctx.cancelled() => {
                        canceled.notify_one();
                        return Ok(Reply::Empty);
                    }
                    _ = tokio::time::sleep(Duration::from_secs(30)) => {
                        return Err(HandlerError::failed("never canceled"));
                    }
                }
            }
            Ok(Reply::text(format!("{name} done")))
        }
    })
}

async fn caller(env: &Env, agent: &str, binding: Binding, version: Version) -> A2aClient {
    caller_as(env, &env.key, agent, binding, version).await
}

/// A caller with the workspace key `key`.
async fn caller_as(
    env: &Env,
    key: &str,
    agent: &str,
    binding: Binding,
    version: Version,
) -> A2aClient {
    ClientBuilder::default()
        .header("authorization", &format!("Bearer {key}"))
        .unwrap()
        .binding(binding)
        .version(version)
        .connect(&env.url(&format!("/a2a/{agent}")))
        .await
        .unwrap()
}

fn final_state(events: &[StreamResponse]) -> Option<TaskState> {
    events.last().and_then(StreamResponse::state)
}

/// Reads `events` until an artifact update (the handler is running past its first emits).
async fn until_artifact(events: &mut a2a_client::transport::EventStream) {
    loop {
        let ev = events.next().await.unwrap().unwrap();
        if matches!(ev, StreamResponse::ArtifactUpdate(_)) {
            return;
        }
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

#[tokio::test]
async fn a_callers_cancel_reaches_the_peer_and_ends_its_streams() {
    let canceled = Arc::new(Notify::new());
    let peer = serve("slow", worker("slow", canceled.clone())).await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    env.register("ws1", "slow", peer.url(), None);
    // Every (binding, version) the gateway's card offers a caller (no 0.3 HTTP+JSON).
    let offered = [
        (Binding::JsonRpc, Version::V1),
        (Binding::JsonRpc, Version::V03),
        (Binding::HttpJson, Version::V1),
    ];
    for (binding, version) in offered {
        let what = format!("{binding:?} {version:?}");
        let c = caller(&env, "slow", binding, version).await;
        let mut sent = c
            .stream(SendMessageRequest::new(Message::user_text("hang")))
            .await
            .unwrap();
        let id = match sent.next().await.unwrap().unwrap() {
            StreamResponse::Task(t) => t.id,
            other => panic!("{what}: first event {other:?}"),
        };
        until_artifact(&mut sent).await;
        // A second open stream on the same task.
        let mut sub = c.subscribe(&id).await.unwrap();
        match sub.next().await.unwrap().unwrap() {
            StreamResponse::Task(t) => assert_eq!(t.status.state, TaskState::Working, "{what}"),
            other => panic!("{what}: subscribe's first event {other:?}"),
        }
        let task = c.cancel_task(&id).await.unwrap();
        assert_eq!(task.status.state, TaskState::Canceled, "{what}");
        tokio::time::timeout(Duration::from_secs(10), canceled.notified())
            .await
            .unwrap_or_else(|_| panic!("{what}: the peer's handler never saw the cancel"));
        for (name, s) in [("send", sent), ("subscribe", sub)] {
            let rest: Vec<StreamResponse> =
                tokio::time::timeout(Duration::from_secs(10), s.map(|e| e.unwrap()).collect())
                    .await
                    .unwrap_or_else(|_| panic!("{what}: the {name} stream did not end"));
            assert_eq!(
                final_state(&rest),
                Some(TaskState::Canceled),
                "{what} {name}: {rest:#?}"
            );
        }
        assert_eq!(
            c.get_task(&id, None).await.unwrap().status.state,
            TaskState::Canceled,
            "{what}"
        );
    }
    env.stop().await;
    peer.shutdown().await;
}

/// What the agents of the chain saw: (agent, the chain members it received).
type Chains = Arc<Mutex<Vec<(&'static str, Vec<String>)>>>;

/// An agent that delegates to `next` through the gateway (address and key in `slot`),
/// forwarding progress, and answers "<me> got: <child's text>".
fn relay(me: &'static str, next: &'static str, slot: Slot, chains: Chains) -> impl Handler {
    handler_fn(move |ctx: RequestContext| {
        let (slot, chains) = (slot.clone(), chains.clone());
        async move {
            record(me, &ctx, &chains);
            let (gw, key) = slot.get().cloned().unwrap_or_default();
            let client = ClientBuilder::default()
                .header("authorization", &format!("Bearer {key}"))
                .map_err(|e| HandlerError::failed(e.to_string()))?;
            let child = ctx
                .delegate(format!("{gw}/a2a/{next}"))
                .client(client)
                .forward_progress()
                .send(Message::user_text(ctx.text()))
                .await?;
            Ok(Reply::text(format!("{me} got: {}", child.text())))
        }
    })
}

fn record(me: &'static str, ctx: &RequestContext, chains: &Chains) {
    let members = ctx
        .delegation_chain()
        .map(|c| ChainKey::new(b"k1").verify(c).unwrap())
        .unwrap_or_default();
    chains.lock().unwrap().push((me, members));
}

#[tokio::test]
async fn a_chain_of_three_behind_the_gateway() {
    let slot: Slot = Arc::default();
    let chains: Chains = Arc::default();
    let canceled = Arc::new(Notify::new());
    let c_tasks: Arc<Mutex<Vec<String>>> = Arc::default();
    let c = {
        let (chains, c_tasks, inner) = (
            chains.clone(),
            c_tasks.clone(),
            worker("C", canceled.clone()),
        );
        let inner = Arc::new(inner);
        serve(
            "c",
            handler_fn(move |ctx: RequestContext| {
                let (chains, c_tasks, inner) = (chains.clone(), c_tasks.clone(), inner.clone());
                async move {
                    record("c", &ctx, &chains);
                    c_tasks.lock().unwrap().push(ctx.task_id().to_owned());
                    inner.handle(ctx).await
                }
            }),
        )
        .await
    };
    let b = serve("b", relay("b", "c", slot.clone(), chains.clone())).await;
    let a = serve("a", relay("a", "b", slot.clone(), chains.clone())).await;
    let env = env_with(a2a_gateway::errors::Version::V1, |cfg| {
        cfg.delegation_key = Some("k1".into());
    })
    .await;
    for (id, agent) in [("a", &a), ("b", &b), ("c", &c)] {
        env.register("ws1", id, agent.url(), None);
    }
    slot.set((env.gw.base_url(), env.key.clone())).unwrap();

    // Progress from C reaches A's caller; the chain grows by one at each hop.
    let top = caller(&env, "a", Binding::JsonRpc, Version::V1).await;
    let events: Vec<StreamResponse> = top
        .stream(SendMessageRequest::new(Message::user_text("work")))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    let texts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::StatusUpdate(s) => s.status.message.as_ref().map(|m| m.text()),
            _ => None,
        })
        .collect();
    assert!(texts.iter().any(|t| t == "C working"), "{texts:?}");
    assert_eq!(
        texts.last().map(String::as_str),
        Some("a got: b got: C done")
    );
    assert!(
        events.iter().any(
            |e| matches!(e, StreamResponse::ArtifactUpdate(u) if u.artifact.artifact_id == "C-out")
        ),
        "{events:#?}"
    );
    let seen = chains.lock().unwrap().clone();
    let of = |who: &str| seen.iter().find(|(w, _)| *w == who).unwrap().1.clone();
    assert_eq!(of("a"), vec!["ws1/a"]);
    assert_eq!(of("b"), vec!["ws1/a", "ws1/b"]);
    assert_eq!(of("c"), vec!["ws1/a", "ws1/b", "ws1/c"]);

    // A cancel at A's caller reaches C, through the gateway twice.
    let mut events = top
        .stream(SendMessageRequest::new(Message::user_text("hang")))
        .await
        .unwrap();
    let a_id = match events.next().await.unwrap().unwrap() {
        StreamResponse::Task(t) => t.id,
        other => panic!("first event {other:?}"),
    };
    until_artifact(&mut events).await;
    let task = top.cancel_task(&a_id).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    let rest: Vec<StreamResponse> = events.map(|e| e.unwrap()).collect().await;
    assert_eq!(final_state(&rest), Some(TaskState::Canceled), "{rest:#?}");
    tokio::time::timeout(Duration::from_secs(10), canceled.notified())
        .await
        .expect("C's handler never saw the cancel");
    let c_id = c_tasks.lock().unwrap().last().cloned().unwrap();
    let direct = A2aClient::connect(c.url()).await.unwrap();
    wait_state(&direct, &c_id, TaskState::Canceled).await;

    env.stop().await;
    for s in [a, b, c] {
        s.shutdown().await;
    }
}

/// A JSON-RPC 1.0 peer that answers CancelTask with a CANCELED task but never ends the stream
/// of that task (heartbeats keep it alive): whether the caller's stream ends is then up to the
/// gateway.
async fn stubborn_peer() -> (String, tokio::task::JoinHandle<()>) {
    use axum::response::IntoResponse;
    use axum::response::sse::{Event, KeepAlive, Sse};
    use axum::routing::{get, post};
    use serde_json::{Value, json};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let card = json!({"name": "stubborn", "description": "keeps streams open", "version": "1.0.0",
        "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": [],
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
    let task = |state: &str| json!({"id": "t-1", "contextId": "c-1", "status": {"state": state}});
    let app = axum::Router::new()
        .route("/.well-known/agent-card.json", get(move || async move { axum::Json(card) }))
        .route(
            "/",
            post(move |axum::Json(req): axum::Json<Value>| async move {
                let id = req["id"].clone();
                match req["method"].as_str().unwrap_or("") {
                    "SendStreamingMessage" | "SubscribeToTask" => {
                        let first = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task("TASK_STATE_WORKING")}});
                        let events = futures::stream::once(async move {
                            Ok::<_, std::convert::Infallible>(Event::default().data(first.to_string()))
                        })
                        .chain(futures::stream::pending());
                        Sse::new(events)
                            .keep_alive(KeepAlive::new().interval(Duration::from_millis(500)))
                            .into_response()
                    }
                    "CancelTask" => axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": task("TASK_STATE_CANCELED")})).into_response(),
                    _ => axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": task("TASK_STATE_CANCELED")})).into_response(),
                }
            }),
        );
    let join = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, join)
}

/// The gateway ends the caller's open streams (the send's and a SubscribeToTask) with the
/// final state when the caller's CancelTask succeeded, even when the peer does not end its own
/// streams; for every (binding, version) the gateway offers a caller.
#[tokio::test]
async fn a_cancel_ends_the_callers_stream_even_when_the_peer_does_not() {
    let (url, peer) = stubborn_peer().await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    env.register("ws1", "stubborn", &url, None);
    let offered = [
        (Binding::JsonRpc, Version::V1),
        (Binding::JsonRpc, Version::V03),
        (Binding::HttpJson, Version::V1),
    ];
    for (binding, version) in offered {
        let what = format!("{binding:?} {version:?}");
        let c = caller(&env, "stubborn", binding, version).await;
        let mut sent = c
            .stream(SendMessageRequest::new(Message::user_text("hang")))
            .await
            .unwrap();
        let id = match sent.next().await.unwrap().unwrap() {
            StreamResponse::Task(t) => t.id,
            other => panic!("{what}: first event {other:?}"),
        };
        let mut sub = c.subscribe(&id).await.unwrap();
        match sub.next().await.unwrap().unwrap() {
            StreamResponse::Task(t) => assert_eq!(t.status.state, TaskState::Working, "{what}"),
            other => panic!("{what}: subscribe's first event {other:?}"),
        }
        let task = c.cancel_task(&id).await.unwrap();
        assert_eq!(task.status.state, TaskState::Canceled, "{what}");
        for (name, s) in [("send", sent), ("subscribe", sub)] {
            let rest: Vec<StreamResponse> =
                tokio::time::timeout(Duration::from_secs(10), s.map(|e| e.unwrap()).collect())
                    .await
                    .unwrap_or_else(|_| panic!("{what} {name}: still open after the cancel"));
            assert_eq!(rest.len(), 1, "{what} {name}: one final update: {rest:#?}");
            match &rest[0] {
                StreamResponse::StatusUpdate(u) => {
                    assert_eq!(u.task_id, id, "{what} {name}");
                    assert_eq!(u.status.state, TaskState::Canceled, "{what} {name}");
                }
                other => panic!("{what} {name}: {other:?}"),
            }
        }
    }
    env.stop().await;
    peer.abort();
}

/// Another workspace's stream of a task with the same id (at its own peer) is not touched by a
/// cancel: it stays open until its own caller cancels.
#[tokio::test]
async fn a_cancel_leaves_another_workspaces_stream_of_the_same_task_id_open() {
    let (url1, peer1) = stubborn_peer().await;
    let (url2, peer2) = stubborn_peer().await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws1", "stubborn", &url1, None);
    env.register("ws2", "stubborn", &url2, None);
    let one = caller(&env, "stubborn", Binding::JsonRpc, Version::V1).await;
    let two = caller_as(&env, &key2, "stubborn", Binding::JsonRpc, Version::V1).await;
    let mut streams = Vec::new();
    for c in [&one, &two] {
        let mut s = c
            .stream(SendMessageRequest::new(Message::user_text("hang")))
            .await
            .unwrap();
        match s.next().await.unwrap().unwrap() {
            StreamResponse::Task(t) => assert_eq!(t.id, "t-1"),
            other => panic!("first event {other:?}"),
        }
        streams.push(s);
    }
    let mut two_stream = streams.pop().unwrap();
    let one_stream = streams.pop().unwrap();
    one.cancel_task("t-1").await.unwrap();
    let rest: Vec<StreamResponse> = tokio::time::timeout(
        Duration::from_secs(10),
        one_stream.map(|e| e.unwrap()).collect(),
    )
    .await
    .expect("ws1's stream ends after ws1's cancel");
    assert_eq!(final_state(&rest), Some(TaskState::Canceled));
    // The gateway ends streams before it answers the cancel: an ended ws2 stream would have its
    // event (or its end) ready now. Nothing comes (the peer sends heartbeats only).
    let quiet = tokio::time::timeout(Duration::from_millis(500), two_stream.next()).await;
    assert!(quiet.is_err(), "ws2's stream was touched: {quiet:?}");
    two.cancel_task("t-1").await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(10), two_stream.next())
        .await
        .expect("ws2's stream ends after ws2's own cancel");
    assert_eq!(
        ev.and_then(Result::ok).and_then(|e| e.state()),
        Some(TaskState::Canceled)
    );
    env.stop().await;
    peer1.abort();
    peer2.abort();
}
