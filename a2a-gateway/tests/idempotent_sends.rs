//! Idempotent sends at the gateway (issue 16): a send that repeats a `messageId` of the same
//! workspace and agent is answered from the first send and never reaches the peer again (both
//! versions, both bindings, blocking and streaming, direct replies); a different message under
//! the same `messageId` is InvalidParams; two workspaces' equal `messageId`s are their own;
//! concurrent retries call the peer once.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_agent::handler::{Reply, RequestContext, handler_fn};
use a2a_agent::{AgentCard, AgentServer, ServerHandle};
use a2a_client::{A2aClient, Binding, ClientBuilder, ClientError, Version};
use a2a_types::error::ErrorKind;
use a2a_types::v1::{Message, SendMessageRequest, SendMessageResponse, StreamResponse};
use common::*;
use futures::StreamExt;

/// A peer counting its handler runs; "direct" answers with a direct message, "slow" takes a
/// while (so that concurrent retries overlap the first), anything else completes a task.
pub(crate) async fn counting_peer(runs: Arc<AtomicUsize>) -> ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let h = handler_fn(move |ctx: RequestContext| {
        let runs = runs.clone();
        async move {
            let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
            if ctx.text().contains("direct") {
                return Ok(Reply::Direct(Message::agent_text(format!("direct {n}"))));
            }
            if ctx.text().contains("slow") {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Ok(Reply::text(format!("run {n}")))
        }
    });
    AgentServer::new(AgentCard::identity("count", "counts runs", "1.0.0"), h)
        .validate_auth(false)
        .serve(l)
        .await
        .unwrap()
}

pub(crate) async fn caller(env: &Env, key: &str, binding: Binding, version: Version) -> A2aClient {
    ClientBuilder::default()
        .header("authorization", &format!("Bearer {key}"))
        .unwrap()
        .binding(binding)
        .version(version)
        .connect(&env.url("/a2a/count"))
        .await
        .unwrap()
}

pub(crate) fn send(text: &str, id: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text).with_message_id(id))
}

pub(crate) fn task_id(r: SendMessageResponse) -> String {
    match r {
        SendMessageResponse::Task(t) => t.id,
        other => panic!("expected a task: {other:?}"),
    }
}

pub(crate) async fn first_task_event(c: &A2aClient, req: SendMessageRequest) -> String {
    let mut s = c.stream(req).await.unwrap();
    let first = match s.next().await.unwrap().unwrap() {
        StreamResponse::Task(t) => t.id,
        StreamResponse::StatusUpdate(u) => u.task_id,
        other => panic!("first event {other:?}"),
    };
    // Read the stream to its end (the first send's task completes).
    while let Some(ev) = s.next().await {
        ev.unwrap();
    }
    first
}

pub(crate) const OFFERED: [(Binding, Version); 3] = [
    (Binding::JsonRpc, Version::V1),
    (Binding::JsonRpc, Version::V03),
    (Binding::HttpJson, Version::V1),
];

#[tokio::test]
async fn a_retried_send_reaches_the_peer_once_and_gets_the_same_answer() {
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    env.register("ws1", "count", peer.url(), None);
    for (i, (binding, version)) in OFFERED.into_iter().enumerate() {
        let what = format!("{binding:?} {version:?}");
        let c = caller(&env, &env.key, binding, version).await;
        // Blocking send.
        let before = runs.load(Ordering::SeqCst);
        let id = format!("blocking-{i}");
        let first = task_id(c.send(send("work", &id)).await.unwrap());
        let again = c.send(send("work", &id)).await.unwrap();
        match again {
            SendMessageResponse::Task(t) => {
                assert_eq!(t.id, first, "{what}");
                assert!(t.status.state.is_terminal(), "{what}: {t:?}");
            }
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(runs.load(Ordering::SeqCst), before + 1, "{what}: blocking");
        // Streaming send, retried as a stream and as a blocking send.
        let id = format!("stream-{i}");
        let first = first_task_event(&c, send("work", &id)).await;
        assert_eq!(
            first_task_event(&c, send("work", &id)).await,
            first,
            "{what}"
        );
        assert_eq!(task_id(c.send(send("work", &id)).await.unwrap()), first);
        assert_eq!(runs.load(Ordering::SeqCst), before + 2, "{what}: streaming");
        // A direct message reply: the same message.
        let id = format!("direct-{i}");
        let text = |r: SendMessageResponse| match r {
            SendMessageResponse::Message(m) => m.text(),
            other => panic!("{what}: expected a message: {other:?}"),
        };
        let first = text(c.send(send("direct", &id)).await.unwrap());
        assert_eq!(text(c.send(send("direct", &id)).await.unwrap()), first);
        assert_eq!(runs.load(Ordering::SeqCst), before + 3, "{what}: direct");
        // A different message under a used messageId.
        match c.send(send("other work", &id)).await {
            Err(ClientError::A2a(e)) => assert_eq!(e.kind, ErrorKind::InvalidParams, "{what}"),
            other => panic!("{what}: expected InvalidParams: {other:?}"),
        }
        assert_eq!(runs.load(Ordering::SeqCst), before + 3, "{what}: refused");
    }
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test]
async fn two_workspaces_with_one_message_id_get_their_own_tasks() {
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    let (_, key2) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws1", "count", peer.url(), None);
    env.register("ws2", "count", peer.url(), None);
    let one = caller(&env, &env.key, Binding::JsonRpc, Version::V1).await;
    let two = caller(&env, &key2, Binding::JsonRpc, Version::V1).await;
    let a = task_id(one.send(send("work", "shared-id")).await.unwrap());
    // ws2's same messageId, even with another message, is a new send.
    let b = task_id(two.send(send("work", "shared-id")).await.unwrap());
    let c = task_id(two.send(send("more work", "other-id")).await.unwrap());
    assert_ne!(a, b);
    assert_ne!(b, c);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    // Each retry finds its own workspace's task; ws2 cannot read ws1's.
    assert_eq!(
        task_id(two.send(send("work", "shared-id")).await.unwrap()),
        b
    );
    assert_eq!(
        task_id(one.send(send("work", "shared-id")).await.unwrap()),
        a
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test]
async fn concurrent_retries_call_the_peer_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let env = env(a2a_gateway::errors::Version::V1).await;
    env.register("ws1", "count", peer.url(), None);
    for (binding, version) in OFFERED {
        let what = format!("{binding:?} {version:?}");
        let before = runs.load(Ordering::SeqCst);
        let c = Arc::new(caller(&env, &env.key, binding, version).await);
        let id = format!("concurrent-{what}");
        let sends = (0..8).map(|_| {
            let (c, id) = (c.clone(), id.clone());
            tokio::spawn(async move { task_id(c.send(send("slow", &id)).await.unwrap()) })
        });
        let ids: Vec<String> = futures::future::join_all(sends)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert!(ids.iter().all(|t| *t == ids[0]), "{what}: {ids:?}");
        assert_eq!(runs.load(Ordering::SeqCst), before + 1, "{what}");
    }
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test]
async fn a_zero_window_forwards_every_send() {
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let env = env_with(a2a_gateway::errors::Version::V1, |cfg| {
        cfg.idempotency_window_secs = 0;
    })
    .await;
    env.register("ws1", "count", peer.url(), None);
    let c = caller(&env, &env.key, Binding::JsonRpc, Version::V1).await;
    let a = task_id(c.send(send("work", "same")).await.unwrap());
    let b = task_id(c.send(send("work", "same")).await.unwrap());
    assert_ne!(a, b);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    env.stop().await;
    peer.shutdown().await;
}
