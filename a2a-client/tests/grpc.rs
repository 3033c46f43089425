//! Our client against our agent over gRPC (`grpc = true`): every operation, streams, push CRUD,
//! and the errors as `google.rpc.Status` read back into A2A errors: not found, not cancelable,
//! authentication (metadata credentials), the version (`a2a-version` metadata) and required
//! extensions. The official SDK on either side is in `interop_sdk.rs` / a2a-agent `tests/grpc.rs`.

use std::time::Duration;

use a2a_agent::{AgentCard, AgentConfig, AgentServer, Reply, RequestContext, handler_fn};
use a2a_client::auth::{ApiKeyLocation, Credential};
use a2a_client::{A2aClient, Binding, ErrorKind, Version};
use a2a_types::v1::{self, Message, SendMessageRequest, StreamResponse, TaskState};
use futures::StreamExt;

async fn agent(card: AgentCard, cfg: AgentConfig) -> a2a_agent::ServerHandle {
    let handler = handler_fn(|ctx: RequestContext| async move {
        if ctx.text().starts_with("slow") {
            ctx.emit("working").await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        ctx.emit("working on it").await;
        Ok(Reply::Text(format!("done: {}", ctx.text())))
    });
    let cfg = AgentConfig { grpc: true, ..cfg };
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    AgentServer::new(card, handler)
        .config(cfg)
        .serve(l)
        .await
        .unwrap()
}

fn open() -> AgentConfig {
    AgentConfig {
        validate_auth: false,
        allow_local_webhook_urls: true,
        ..AgentConfig::default()
    }
}

fn card() -> AgentCard {
    AgentCard::builder("g", "gRPC test agent", "1")
        .streaming(true)
        .push_notifications(true)
        .build()
}

async fn grpc_client(url: &str) -> A2aClient {
    let c = A2aClient::builder()
        .binding(Binding::Grpc)
        .timeout(Some(Duration::from_secs(30)))
        .connect(url)
        .await
        .unwrap();
    assert_eq!(c.interface().binding, Binding::Grpc);
    assert_eq!(c.interface().version, Version::V1);
    c
}

fn task(r: v1::SendMessageResponse) -> v1::Task {
    match r {
        v1::SendMessageResponse::Task(t) => t,
        other => panic!("not a task: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_over_grpc() {
    let a = agent(card(), open()).await;
    let c = grpc_client(a.url()).await;

    let t = task(c.send_message(Message::user_text("hi")).await.unwrap());
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(
        t.status.message.as_ref().map(|m| m.text()).as_deref(),
        Some("done: hi")
    );

    let events: Vec<StreamResponse> = c
        .stream(SendMessageRequest::new(Message::user_text("stream me")))
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    assert!(matches!(events[0], StreamResponse::Task(_)), "{events:?}");
    assert!(
        matches!(events.last(), Some(StreamResponse::StatusUpdate(s)) if s.status.state == TaskState::Completed),
        "{events:?}"
    );

    let got = c.get_task(&t.id, Some(0)).await.unwrap();
    assert_eq!(got.id, t.id);
    assert!(got.history.is_empty(), "historyLength 0: {got:?}");
    let listed = c.list_tasks(v1::ListTasksRequest::default()).await.unwrap();
    assert_eq!(listed.tasks.len(), 2, "{listed:?}");

    // a running task: subscribe, then cancel; the subscription ends with CANCELED
    let slow = task(
        c.send(
            SendMessageRequest::new(Message::user_text("slow")).with_configuration(
                v1::SendMessageConfiguration {
                    return_immediately: Some(true),
                    ..Default::default()
                },
            ),
        )
        .await
        .unwrap(),
    );
    let mut sub = c.subscribe(&slow.id).await.unwrap();
    let first = sub.next().await.unwrap().unwrap();
    assert!(
        matches!(first, StreamResponse::Task(ref x) if x.id == slow.id),
        "{first:?}"
    );
    let canceled = c.cancel_task(&slow.id).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let rest: Vec<StreamResponse> =
        tokio::time::timeout(Duration::from_secs(20), sub.collect::<Vec<_>>())
            .await
            .expect("subscription ends")
            .into_iter()
            .map(|e| e.unwrap())
            .collect();
    assert!(
        matches!(rest.last(), Some(StreamResponse::StatusUpdate(s)) if s.status.state == TaskState::Canceled),
        "{rest:?}"
    );

    // push config CRUD
    let mut cfg = v1::TaskPushNotificationConfig::new(&t.id, "http://127.0.0.1:9/hook");
    cfg.id = Some("c1".into());
    cfg.token = Some("tok".into());
    let created = c.create_push_config(cfg).await.unwrap();
    assert_eq!(created.id.as_deref(), Some("c1"));
    let fetched = c.get_push_config(&t.id, "c1").await.unwrap();
    assert_eq!(fetched.token.as_deref(), Some("tok"));
    let req = v1::ListTaskPushNotificationConfigsRequest {
        task_id: t.id.clone(),
        ..Default::default()
    };
    assert_eq!(
        c.list_push_configs(req.clone())
            .await
            .unwrap()
            .configs
            .len(),
        1
    );
    c.delete_push_config(&t.id, "c1").await.unwrap();
    assert!(c.list_push_configs(req).await.unwrap().configs.is_empty());

    // errors, read from google.rpc.Status
    let e = c.get_task("no-such-task", None).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TaskNotFound), "{e}");
    let e = c.cancel_task(&t.id).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TaskNotCancelable), "{e}");
    let e = c.get_push_config(&t.id, "c1").await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TaskNotFound), "{e}");
    let e = c.extended_card().await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::UnsupportedOperation), "{e}");
    a.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_version_and_extensions_travel_as_metadata() {
    let card = AgentCard::builder("k", "d", "1")
        .api_key_scheme("key", "header", "X-API-Key")
        .extension("urn:a2a:required", true)
        .build();
    let cfg = AgentConfig {
        api_key: Some("sekret".into()),
        ..AgentConfig::default()
    };
    let a = agent(card, cfg).await;
    let key = |v: &str| Credential::ApiKey {
        location: ApiKeyLocation::Header,
        name: "X-API-Key".into(),
        value: v.into(),
    };
    let builder = || {
        A2aClient::builder()
            .binding(Binding::Grpc)
            .timeout(Some(Duration::from_secs(30)))
    };
    // the card is public; every rpc needs the key
    let c = builder().connect(a.url()).await.unwrap();
    let e = c.send_message(Message::user_text("x")).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::Unauthenticated), "{e}");
    let c = builder()
        .credential(key("wrong"))
        .connect(a.url())
        .await
        .unwrap();
    let e = c.send_message(Message::user_text("x")).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::Unauthenticated), "{e}");
    // with the key, the required extension is still missing
    let c = builder()
        .credential(key("sekret"))
        .connect(a.url())
        .await
        .unwrap();
    let e = c.send_message(Message::user_text("x")).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::ExtensionSupportRequired), "{e}");
    // key and extension: served, and the activation is reported back
    let c = builder()
        .credential(key("sekret"))
        .extension("urn:a2a:required")
        .connect(a.url())
        .await
        .unwrap();
    let t = task(c.send_message(Message::user_text("x")).await.unwrap());
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(
        c.activated_extensions(),
        Some(vec!["urn:a2a:required".to_string()])
    );
    // a 0.3 label on the 1.0 service is refused (no card fetch: it would render the 0.3 card)
    let iface =
        a2a_client::SelectedInterface::direct(a.url().parse().unwrap(), Binding::Grpc, Version::V1);
    let c = builder()
        .credential(key("sekret"))
        .extension("urn:a2a:required")
        .header("A2A-Version", "0.3")
        .unwrap()
        .from_interface(iface)
        .unwrap();
    let e = c.send_message(Message::user_text("x")).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::VersionNotSupported), "{e}");
    a.shutdown().await;
}

#[tokio::test]
async fn an_agent_without_grpc_answers_unimplemented() {
    let cfg = AgentConfig {
        validate_auth: false,
        ..AgentConfig::default()
    };
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = AgentServer::new(card(), a2a_agent::demo::echo_handler())
        .config(cfg)
        .serve(l)
        .await
        .unwrap();
    let iface =
        a2a_client::SelectedInterface::direct(a.url().parse().unwrap(), Binding::Grpc, Version::V1);
    let c = A2aClient::builder().from_interface(iface).unwrap();
    let e = c.get_task("t", None).await.unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::MethodNotFound), "{e}");
    assert!(e.to_string().contains("gRPC"), "{e}");
    a.shutdown().await;
}

#[tokio::test]
async fn max_payload_size_bounds_grpc_messages() {
    let cfg = AgentConfig {
        max_payload_size: 2048,
        ..open()
    };
    let a = agent(card(), cfg).await;
    let c = grpc_client(a.url()).await;
    let e = c
        .send_message(Message::user_text("x".repeat(8 * 1024)))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("message length too large") || e.to_string().contains("2048"),
        "{e}"
    );
    // a message under the limit still goes through
    let t = task(c.send_message(Message::user_text("small")).await.unwrap());
    assert_eq!(t.status.state, TaskState::Completed);
    a.shutdown().await;
}
