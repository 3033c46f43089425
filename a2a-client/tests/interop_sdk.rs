//! Every operation against the official Python SDK reference agents (`interop/`), over each binding
//! and version they serve: a2a-sdk 1.x (1.0, and 0.3 through its compat layer) and a2a-sdk 0.3.x.
//!
//! Agent behaviour is keyed on the message text (see `interop/README.md`): `echo X`, `stream N`,
//! `slow S`, `message X`, `fail`, `input`.

use std::time::Duration;

use a2a_client::select::{Binding, Version};
use a2a_client::transport::EventStream;
use a2a_client::{A2aClient, ClientError, ErrorKind};
use a2a_types::v1::{
    self, Message, SendMessageConfiguration, SendMessageRequest, StreamResponse, TaskState,
};
use conformance::interop::{self, PyAgent, Sdk};
use futures::StreamExt;

async fn agent(sdk: Sdk) -> PyAgent {
    interop::ensure_venvs_async().await.unwrap();
    PyAgent::start_async(sdk).await.unwrap()
}

async fn client(url: &str, binding: Binding, version: Version) -> A2aClient {
    let c = A2aClient::builder()
        .binding(binding)
        .version(version)
        .timeout(Some(Duration::from_secs(60)))
        .connect(url)
        .await
        .unwrap();
    assert_eq!(c.interface().binding, binding);
    assert_eq!(c.interface().version, version);
    c
}

fn text_of(parts: &[v1::Part]) -> String {
    parts
        .iter()
        .filter_map(|p| p.as_text())
        .collect::<Vec<_>>()
        .join("")
}

async fn collect(stream: EventStream) -> Vec<StreamResponse> {
    let items: Vec<Result<StreamResponse, ClientError>> =
        tokio::time::timeout(Duration::from_secs(60), stream.collect())
            .await
            .expect("stream did not end");
    items.into_iter().map(|r| r.unwrap()).collect()
}

fn non_blocking(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text)).with_configuration(SendMessageConfiguration {
        return_immediately: Some(true),
        ..Default::default()
    })
}

fn task_of(r: v1::SendMessageResponse) -> v1::Task {
    match r {
        v1::SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// What a given agent/interface combination supports.
struct Caps {
    list: bool,
    push_list_delete: bool,
    subscribe_terminal_is_error: bool,
}

async fn exercise(c: &A2aClient, caps: Caps) {
    // send -> completed task with an artifact
    let t = task_of(
        c.send_message(Message::user_text("echo hi there"))
            .await
            .unwrap(),
    );
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(text_of(&t.artifacts[0].parts), "hi there");
    assert!(t.context_id.is_some());

    // send -> direct message
    match c
        .send_message(Message::user_text("message hello"))
        .await
        .unwrap()
    {
        v1::SendMessageResponse::Message(m) => assert_eq!(m.text(), "hello"),
        other => panic!("expected a message, got {other:?}"),
    }

    // stream: task first, 3 working updates, 2 artifact chunks, completed last
    let events = collect(
        c.stream(SendMessageRequest::new(Message::user_text("stream 3")))
            .await
            .unwrap(),
    )
    .await;
    assert!(matches!(events[0], StreamResponse::Task(_)), "{events:?}");
    let working = events
        .iter()
        .filter(|e| matches!(e, StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Working))
        .count();
    assert_eq!(working, 3, "{events:?}");
    let chunks: Vec<&v1::TaskArtifactUpdateEvent> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(chunks.len(), 2);
    assert_eq!(text_of(&chunks[0].artifact.parts), "chunk 1");
    assert!(!chunks[0].is_append() && !chunks[0].is_last_chunk());
    assert!(chunks[1].is_append() && chunks[1].is_last_chunk());
    match events.last().unwrap() {
        StreamResponse::StatusUpdate(s) => assert_eq!(s.status.state, TaskState::Completed),
        other => panic!("last event {other:?}"),
    }

    // stream answered by a single message
    let events = collect(
        c.stream(SendMessageRequest::new(Message::user_text(
            "message streamed",
        )))
        .await
        .unwrap(),
    )
    .await;
    assert!(
        matches!(&events[..], [StreamResponse::Message(m)] if m.text() == "streamed"),
        "{events:?}"
    );

    // multi-turn: input-required, then the follow-up on the same task completes it
    let asked = task_of(c.send_message(Message::user_text("input")).await.unwrap());
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let follow = Message::user_text("more").with_task_id(asked.id.clone());
    let follow = match &asked.context_id {
        Some(ctx) => follow.with_context_id(ctx.clone()),
        None => follow,
    };
    let done = task_of(c.send_message(follow).await.unwrap());
    assert_eq!(done.id, asked.id);
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(
        done.status.message.as_ref().map(|m| m.text()).as_deref(),
        Some("got more")
    );

    // a failing task
    let failed = task_of(c.send_message(Message::user_text("fail")).await.unwrap());
    assert_eq!(failed.status.state, TaskState::Failed);

    // get
    let got = c.get_task(&t.id, Some(1)).await.unwrap();
    assert_eq!(got.id, t.id);
    assert_eq!(got.status.state, TaskState::Completed);

    // list (1.0) / unsupported (0.3)
    let listed = c.list_tasks(v1::ListTasksRequest::default()).await;
    if caps.list {
        let listed = listed.unwrap();
        assert!(listed.tasks.iter().any(|x| x.id == t.id));
    } else {
        assert_eq!(
            listed.unwrap_err().kind(),
            Some(ErrorKind::UnsupportedOperation)
        );
    }

    // cancel a running task
    let slow = task_of(c.send(non_blocking("slow 30")).await.unwrap());
    assert!(!slow.status.state.is_terminal());
    let canceled = c.cancel_task(&slow.id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);

    // subscribe to a running task: the task first, then updates until it completes
    let running = task_of(c.send(non_blocking("slow 2")).await.unwrap());
    let events = collect(c.subscribe(&running.id).await.unwrap()).await;
    assert!(
        matches!(&events[0], StreamResponse::Task(x) if x.id == running.id),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Completed)),
        "{events:?}"
    );

    // push config CRUD
    let mut cfg = v1::TaskPushNotificationConfig::new(&t.id, "http://127.0.0.1:9/hook");
    cfg.id = Some("c1".into());
    cfg.token = Some("tok".into());
    let created = c.create_push_config(cfg).await.unwrap();
    assert_eq!(created.id.as_deref(), Some("c1"));
    assert_eq!(created.url, "http://127.0.0.1:9/hook");
    let fetched = c.get_push_config(&t.id, "c1").await.unwrap();
    assert_eq!(fetched.token.as_deref(), Some("tok"));
    if caps.push_list_delete {
        let list = c
            .list_push_configs(v1::ListTaskPushNotificationConfigsRequest {
                task_id: t.id.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(list.configs.len(), 1);
        c.delete_push_config(&t.id, "c1").await.unwrap();
        let list = c
            .list_push_configs(v1::ListTaskPushNotificationConfigsRequest {
                task_id: t.id.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(list.configs.is_empty());
    }

    // extended card
    let card = c.extended_card().await.unwrap();
    assert!(card.name.ends_with("(extended)"), "{}", card.name);

    // errors
    let err = c.get_task("no-such-task", None).await.unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::TaskNotFound), "{err}");
    let err = c.cancel_task(&t.id).await.unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::TaskNotCancelable), "{err}");
    if caps.subscribe_terminal_is_error {
        let err = match c.subscribe(&t.id).await {
            Err(e) => e,
            Ok(s) => {
                let items: Vec<_> = s.collect().await;
                items
                    .into_iter()
                    .find_map(Result::err)
                    .expect("subscribe to a terminal task must fail")
            }
        };
        assert_eq!(err.kind(), Some(ErrorKind::UnsupportedOperation), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_jsonrpc_v1() {
    let a = agent(Sdk::V1).await;
    let c = client(a.url(), Binding::JsonRpc, Version::V1).await;
    exercise(
        &c,
        Caps {
            list: true,
            push_list_delete: true,
            subscribe_terminal_is_error: true,
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_rest_v1() {
    let a = agent(Sdk::V1).await;
    let c = client(a.url(), Binding::HttpJson, Version::V1).await;
    exercise(
        &c,
        Caps {
            list: true,
            push_list_delete: true,
            subscribe_terminal_is_error: true,
        },
    )
    .await;
}

const V03_JSONRPC: Caps = Caps {
    list: false,
    push_list_delete: true,
    subscribe_terminal_is_error: false,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_jsonrpc_v03() {
    let a = agent(Sdk::V1).await;
    let c = client(a.url(), Binding::JsonRpc, Version::V03).await;
    exercise(&c, V03_JSONRPC).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk03_jsonrpc() {
    let a = agent(Sdk::V03).await;
    let c = client(a.url(), Binding::JsonRpc, Version::V03).await;
    exercise(&c, V03_JSONRPC).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_rest_v03() {
    let a = agent(Sdk::V1).await;
    let c = client(a.url(), Binding::HttpJson, Version::V03).await;
    exercise(
        &c,
        Caps {
            list: false,
            push_list_delete: false,
            subscribe_terminal_is_error: false,
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk03_rest() {
    let a = agent(Sdk::V03).await;
    let c = client(a.url(), Binding::HttpJson, Version::V03).await;
    exercise(
        &c,
        Caps {
            list: false,
            push_list_delete: false,
            subscribe_terminal_is_error: false,
        },
    )
    .await;
}

/// The 1.x agent refuses a 1.0 call labelled with another version: `VersionNotSupportedError`,
/// recognised by code (JSON-RPC) and by ErrorInfo reason (HTTP+JSON, HTTP 400).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_version_refused_on_both_bindings() {
    let a = agent(Sdk::V1).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let c = A2aClient::builder()
            .binding(binding)
            .version(Version::V1)
            .header("A2A-Version", "9.9")
            .unwrap()
            .connect(a.url())
            .await
            .unwrap();
        let err = c
            .send_message(Message::user_text("echo x"))
            .await
            .unwrap_err();
        assert_eq!(
            err.kind(),
            Some(ErrorKind::VersionNotSupported),
            "{binding}: {err}"
        );
        let a2a = err.a2a().unwrap();
        assert_eq!(
            a2a.reason.as_deref(),
            Some("VERSION_NOT_SUPPORTED"),
            "{binding}"
        );
        assert!(!a2a.local);
        if binding == Binding::HttpJson {
            assert_eq!(a2a.http_status, Some(400));
        }
        let err = c.get_task("whatever", None).await.unwrap_err();
        assert_eq!(
            err.kind(),
            Some(ErrorKind::VersionNotSupported),
            "{binding}: {err}"
        );
    }
}

/// Errors that need no running task: unknown task over every combination, and the streaming
/// form of an error (subscribe to an unknown task).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk03_unknown_task_everywhere() {
    let a = agent(Sdk::V03).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let c = client(a.url(), binding, Version::V03).await;
        let err = c.cancel_task("missing").await.unwrap_err();
        assert_eq!(
            err.kind(),
            Some(ErrorKind::TaskNotFound),
            "{binding}: {err}"
        );
        let err = match c.subscribe("missing").await {
            Err(e) => e,
            Ok(s) => {
                let items: Vec<_> = s.collect().await;
                items
                    .into_iter()
                    .find_map(Result::err)
                    .expect("subscribe to an unknown task must fail")
            }
        };
        if binding == Binding::HttpJson {
            // a2a-sdk 0.3.26 REST answers 200 text/event-stream, then raises inside the stream and
            // drops the connection: a truncated stream must surface as an error, not a clean end.
            // Broken before its first event, it is opened again (bounded) before the error.
            assert!(
                matches!(&err, ClientError::RetriesExhausted { attempts: 3, last, .. }
                    if matches!(**last, ClientError::Sse(_))),
                "{binding}: {err}"
            );
        } else {
            assert_eq!(
                err.kind(),
                Some(ErrorKind::TaskNotFound),
                "{binding}: {err}"
            );
        }
    }
}

/// The 1.x agent serves its card with an ETag and honours If-None-Match: the second fetch is a
/// conditional request answered 304 (or served fresh if the agent sent max-age).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_card_revalidation() {
    use a2a_client::discovery::{CacheStatus, CardResolver};
    let a = agent(Sdk::V1).await;
    let resolver = CardResolver::new(reqwest::Client::new());
    let first = resolver.fetch(a.url()).await.unwrap();
    assert_eq!(first.cache, CacheStatus::Fetched);
    assert!(first.etag.is_some(), "the sdk1 agent sends an ETag");
    let second = resolver.fetch(a.url()).await.unwrap();
    assert_ne!(second.cache, CacheStatus::Fetched);
    assert_eq!(second.body, first.body);
    let card = a2a_client::client::card_v1(&second).unwrap();
    assert_eq!(card.name, "sdk1-reference-agent");
    // the 0.3 agent's card (no supportedInterfaces) is translated to 1.0
    let b = agent(Sdk::V03).await;
    let old = resolver.fetch(b.url()).await.unwrap();
    assert!(!old.is_v1());
    let card = a2a_client::client::card_v1(&old).unwrap();
    assert!(!card.supported_interfaces.is_empty());
    assert!(
        card.supported_interfaces
            .iter()
            .all(|i| i.protocol_version.starts_with("0.3")),
        "{card:?}"
    );
}

/// A push config created through the client is live: the 1.x agent POSTs the task's updates to
/// the webhook, with the token, over both bindings of 1.0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_push_config_is_delivered() {
    use std::sync::{Arc, Mutex};
    let a = agent(Sdk::V1).await;
    type Deliveries = Arc<Mutex<Vec<(Option<String>, serde_json::Value)>>>;
    let got: Deliveries = Arc::default();
    let sink = got.clone();
    let app = axum::Router::new().fallback(
        move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let sink = sink.clone();
            async move {
                let token = headers
                    .get("x-a2a-notification-token")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                sink.lock()
                    .unwrap()
                    .push((token, serde_json::from_slice(&body).unwrap_or_default()));
                "ok"
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        got.lock().unwrap().clear();
        let c = client(a.url(), binding, Version::V1).await;
        let task = task_of(c.send(non_blocking("slow 2")).await.unwrap());
        let mut cfg = v1::TaskPushNotificationConfig::new(&task.id, &hook);
        cfg.token = Some(format!("tok-{binding}"));
        c.create_push_config(cfg).await.unwrap();
        // wait (bounded) for the terminal state to be delivered
        let mut delivered = false;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let seen = got.lock().unwrap().clone();
            if seen
                .iter()
                .any(|(_, b)| b.to_string().contains("TASK_STATE_COMPLETED"))
            {
                assert!(
                    seen.iter()
                        .all(|(t, _)| t.as_deref() == Some(format!("tok-{binding}").as_str())),
                    "{seen:?}"
                );
                delivered = true;
                break;
            }
        }
        assert!(
            delivered,
            "{binding}: no completed update reached the webhook: {:?}",
            got.lock().unwrap()
        );
    }
    server.abort();
}

/// The 1.x agent with `--grpc both`: its card lists the gRPC interface first, so a client that
/// forces nothing speaks gRPC; every operation and error then goes over gRPC.
#[cfg(feature = "grpc")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk1_grpc_v1() {
    interop::ensure_venvs_async().await.unwrap();
    let a = tokio::task::spawn_blocking(|| PyAgent::start_with(Sdk::V1, &["--grpc", "both"]))
        .await
        .unwrap()
        .unwrap();
    let auto = A2aClient::connect(a.url()).await.unwrap();
    assert_eq!(auto.interface().binding, Binding::Grpc);
    let c = client(a.url(), Binding::Grpc, Version::V1).await;
    exercise(
        &c,
        Caps {
            list: true,
            push_list_delete: true,
            subscribe_terminal_is_error: true,
        },
    )
    .await;
}
