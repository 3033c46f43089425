//! What the client puts on the wire and how it reads odd answers, against a scripted local agent:
//! tenant on every request (path for HTTP+JSON, `params.tenant` for JSON-RPC), service headers,
//! credentials, one retry after a 401 with a refreshed OAuth2 token, SSE heartbeats and error
//! events, JSON errors instead of a stream, non-A2A HTTP errors, idle streams.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_client::auth::{Credential, OAuth2ClientCredentials};
use a2a_client::select::{Binding, SelectedInterface, Version};
use a2a_client::{A2aClient, ClientError, ErrorKind};
use a2a_types::v1;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    path: String,
    query: String,
    headers: HeaderMap,
    body: Value,
}

type Script = Arc<dyn Fn(&Seen, usize) -> Response + Send + Sync>;

struct Fake {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn fake(script: Script) -> Fake {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let app = Router::new().fallback(move |req: Request| {
        let log = log.clone();
        let script = script.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let s = Seen {
                method: parts.method,
                path: parts.uri.path().to_string(),
                query: parts.uri.query().unwrap_or("").to_string(),
                headers: parts.headers,
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            };
            let n = {
                let mut l = log.lock().unwrap();
                l.push(s.clone());
                l.len() - 1
            };
            script(&s, n)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Fake {
        base: format!("http://{addr}"),
        seen,
        server,
    }
}

fn json_response(status: StatusCode, v: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn sse(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

fn task_json(id: &str) -> Value {
    json!({"id": id, "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}})
}

/// A 1.0 agent answering every operation with a plausible result.
fn v1_answers(s: &Seen, _n: usize) -> Response {
    if s.path.ends_with("agent-card.json") {
        return Response::new(Body::empty());
    }
    let result = |method: &str| -> Value {
        match method {
            "SendMessage" => json!({"task": task_json("t1")}),
            "GetTask" | "CancelTask" => task_json("t1"),
            "ListTasks" => {
                json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0})
            }
            "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => {
                json!({"id": "p", "taskId": "t1", "url": "http://h/x"})
            }
            "ListTaskPushNotificationConfigs" => json!({"configs": []}),
            "GetExtendedAgentCard" => json!({"name": "x", "description": "", "version": "1",
                "supportedInterfaces": [], "capabilities": {}, "defaultInputModes": [],
                "defaultOutputModes": [], "skills": []}),
            _ => json!({}),
        }
    };
    if s.method == Method::POST && s.body.get("jsonrpc").is_some() {
        let method = s.body["method"].as_str().unwrap_or("");
        if method == "SendStreamingMessage" || method == "SubscribeToTask" {
            return sse(
                "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":\"t1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n",
            );
        }
        return json_response(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": s.body["id"], "result": result(method)}),
        );
    }
    let p = s.path.as_str();
    let method = if p.ends_with("message:send") {
        "SendMessage"
    } else if p.ends_with("message:stream") || p.ends_with(":subscribe") {
        return sse(
            "data: {\"task\":{\"id\":\"t1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n",
        );
    } else if p.ends_with(":cancel") {
        "CancelTask"
    } else if p.ends_with("/tasks") {
        "ListTasks"
    } else if p.ends_with("/pushNotificationConfigs") && s.method == Method::GET {
        "ListTaskPushNotificationConfigs"
    } else if p.contains("/pushNotificationConfigs") && s.method != Method::DELETE {
        "GetTaskPushNotificationConfig"
    } else if p.ends_with("extendedAgentCard") {
        "GetExtendedAgentCard"
    } else if s.method == Method::DELETE {
        "Delete"
    } else {
        "GetTask"
    };
    json_response(StatusCode::OK, result(method))
}

async fn every_operation(c: &A2aClient) {
    c.send_message(v1::Message::user_text("hi")).await.unwrap();
    let s = c
        .stream(v1::SendMessageRequest::new(v1::Message::user_text("hi")))
        .await
        .unwrap();
    assert_eq!(s.collect::<Vec<_>>().await.len(), 1);
    c.get_task("t1", Some(2)).await.unwrap();
    c.list_tasks(v1::ListTasksRequest {
        page_size: Some(5),
        status: Some(v1::TaskState::Working),
        ..Default::default()
    })
    .await
    .unwrap();
    c.cancel_task("t1").await.unwrap();
    let s = c.subscribe("t1").await.unwrap();
    assert_eq!(s.collect::<Vec<_>>().await.len(), 1);
    c.create_push_config(v1::TaskPushNotificationConfig::new("t1", "http://h/x"))
        .await
        .unwrap();
    c.get_push_config("t1", "p").await.unwrap();
    c.list_push_configs(v1::ListTaskPushNotificationConfigsRequest {
        task_id: "t1".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    c.delete_push_config("t1", "p").await.unwrap();
    c.extended_card().await.unwrap();
}

fn iface(base: &str, binding: Binding) -> SelectedInterface {
    SelectedInterface::direct(format!("{base}/a2a").parse().unwrap(), binding, Version::V1)
        .with_tenant("acme")
}

#[tokio::test]
async fn rest_tenant_paths_query_and_headers() {
    let f = fake(Arc::new(v1_answers)).await;
    let c = A2aClient::builder()
        .extension("urn:ext:one")
        .extension("urn:ext:two")
        .credential(Credential::api_key_header("X-API-Key", "k"))
        .from_interface(iface(&f.base, Binding::HttpJson))
        .unwrap();
    every_operation(&c).await;
    let seen = f.seen.lock().unwrap().clone();
    let got: Vec<(String, String)> = seen
        .iter()
        .map(|s| (format!("{} {}", s.method, s.path), s.query.clone()))
        .collect();
    let want = [
        ("POST /a2a/acme/message:send", ""),
        ("POST /a2a/acme/message:stream", ""),
        ("GET /a2a/acme/tasks/t1", "historyLength=2"),
        (
            "GET /a2a/acme/tasks",
            "status=TASK_STATE_WORKING&pageSize=5",
        ),
        ("POST /a2a/acme/tasks/t1:cancel", ""),
        ("GET /a2a/acme/tasks/t1:subscribe", ""),
        ("POST /a2a/acme/tasks/t1/pushNotificationConfigs", ""),
        ("GET /a2a/acme/tasks/t1/pushNotificationConfigs/p", ""),
        ("GET /a2a/acme/tasks/t1/pushNotificationConfigs", ""),
        ("DELETE /a2a/acme/tasks/t1/pushNotificationConfigs/p", ""),
        ("GET /a2a/acme/extendedAgentCard", ""),
    ];
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for ((path, query), (wp, wq)) in got.iter().zip(want) {
        assert_eq!(path, wp);
        // query member order follows the model's field order; compare as sets
        let mut a: Vec<&str> = query.split('&').filter(|x| !x.is_empty()).collect();
        let mut b: Vec<&str> = wq.split('&').filter(|x| !x.is_empty()).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{path}");
    }
    for s in &seen {
        assert_eq!(s.headers["a2a-version"], "1.0", "{}", s.path);
        assert_eq!(s.headers["a2a-extensions"], "urn:ext:one, urn:ext:two");
        assert_eq!(s.headers["x-api-key"], "k");
        // tenant travels in the path only
        assert!(s.body.get("tenant").is_none(), "{}: {}", s.path, s.body);
    }
    assert_eq!(seen[0].body["message"]["parts"][0]["text"], "hi");
    assert_eq!(seen[4].body["id"], "t1");
    assert_eq!(seen[6].body["url"], "http://h/x");
}

#[tokio::test]
async fn jsonrpc_tenant_in_every_params() {
    let f = fake(Arc::new(v1_answers)).await;
    let c = A2aClient::builder()
        .credential(Credential::Bearer("tok".into()))
        .from_interface(iface(&f.base, Binding::JsonRpc))
        .unwrap();
    every_operation(&c).await;
    let seen = f.seen.lock().unwrap().clone();
    let methods: Vec<&str> = seen
        .iter()
        .map(|s| s.body["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "SendMessage",
            "SendStreamingMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            "SubscribeToTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
            "GetExtendedAgentCard",
        ]
    );
    for s in &seen {
        assert_eq!(s.path, "/a2a");
        assert_eq!(s.body["jsonrpc"], "2.0");
        assert_eq!(s.body["params"]["tenant"], "acme", "{}", s.body);
        assert_eq!(s.headers["authorization"], "Bearer tok");
        assert_eq!(s.headers["a2a-version"], "1.0");
    }
    assert_eq!(seen[2].body["params"]["historyLength"], 2);
}

#[tokio::test]
async fn tenant_comes_from_the_selected_card_entry() {
    let f = fake(Arc::new(|s: &Seen, n| {
        if s.path == "/.well-known/agent-card.json" {
            return json_response(StatusCode::OK, json!({
                "supportedInterfaces": [
                    {"url": "grpc:1", "protocolBinding": "GRPC", "protocolVersion": "0.3", "tenant": "no"},
                    {"url": format!("http://{}/rpc", s.headers["host"].to_str().unwrap()),
                     "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t-7"}]}));
        }
        v1_answers(s, n)
    }))
    .await;
    let c = A2aClient::connect(&f.base).await.unwrap();
    assert_eq!(c.interface().tenant.as_deref(), Some("t-7"));
    c.get_task("t1", None).await.unwrap();
    let seen = f.seen.lock().unwrap().clone();
    assert_eq!(seen[1].path, "/rpc");
    assert_eq!(seen[1].body["params"]["tenant"], "t-7");
}

#[tokio::test]
async fn oauth2_token_refreshed_once_after_401() {
    let f = fake(Arc::new(|s: &Seen, n| {
        if s.path == "/token" {
            return json_response(
                StatusCode::OK,
                json!({"access_token": format!("tok-{n}"), "token_type": "Bearer", "expires_in": 3600}),
            );
        }
        // The first agent call's token is refused (e.g. revoked); a fresh one is accepted.
        if s.headers["authorization"] == "Bearer tok-0" {
            return (StatusCode::UNAUTHORIZED, "expired").into_response();
        }
        v1_answers(s, n)
    }))
    .await;
    let oauth = OAuth2ClientCredentials::new(
        reqwest::Client::new(),
        format!("{}/token", f.base).parse().unwrap(),
        "id",
        "secret",
    );
    let c = A2aClient::builder()
        .credential(Credential::OAuth2(Arc::new(oauth)))
        .from_interface(iface(&f.base, Binding::HttpJson))
        .unwrap();
    let t = c.get_task("t1", None).await.unwrap();
    assert_eq!(t.id, "t1");
    let seen: Vec<String> = f
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(
        seen,
        [
            "/token",
            "/a2a/acme/tasks/t1",
            "/token",
            "/a2a/acme/tasks/t1"
        ]
    );
    // The refreshed token is cached: the next call makes no token request.
    c.get_task("t1", None).await.unwrap();
    assert_eq!(f.seen.lock().unwrap().len(), 5);
}

#[tokio::test]
async fn sse_heartbeats_ignored_and_error_events_surface() {
    let f = fake(Arc::new(|s: &Seen, _| {
        if s.body.get("jsonrpc").is_some() {
            // heartbeat comments, a multi-line data event, then an in-stream JSON-RPC error
            sse(": ping\n\n: ping\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n\
                 data: \"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n\
                 : ping\n\n\
                 data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"gone\"}}\n\n")
        } else {
            sse("data: {\"task\":{\"id\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n\
                 event: error\n\
                 data: {\"error\":{\"code\":400,\"status\":\"FAILED_PRECONDITION\",\"message\":\"no\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"UNSUPPORTED_OPERATION\"}]}}\n\n")
        }
    }))
    .await;
    let rpc = A2aClient::builder()
        .from_interface(SelectedInterface::direct(
            f.base.parse().unwrap(),
            Binding::JsonRpc,
            Version::V1,
        ))
        .unwrap();
    let items: Vec<_> = rpc.subscribe("t").await.unwrap().collect().await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(matches!(&items[0], Ok(v1::StreamResponse::StatusUpdate(_))));
    assert_eq!(
        items[1].as_ref().unwrap_err().kind(),
        Some(ErrorKind::TaskNotFound)
    );

    let rest = A2aClient::builder()
        .from_interface(SelectedInterface::direct(
            f.base.parse().unwrap(),
            Binding::HttpJson,
            Version::V1,
        ))
        .unwrap();
    let items: Vec<_> = rest.subscribe("t").await.unwrap().collect().await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(
        items[1].as_ref().unwrap_err().kind(),
        Some(ErrorKind::UnsupportedOperation)
    );
}

#[tokio::test]
async fn errors_before_a_stream_and_non_a2a_errors() {
    let f = fake(Arc::new(|s: &Seen, _| {
        if s.path.ends_with("/rpc") {
            // A JSON-RPC error answered as plain JSON instead of a stream.
            return json_response(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": s.body["id"], "error": {"code": -32004, "message": "no streaming",
                    "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_OPERATION"}]}}),
            );
        }
        (StatusCode::BAD_GATEWAY, [(header::CONTENT_TYPE, "text/html")], "<html>proxy down</html>").into_response()
    }))
    .await;
    let rpc = A2aClient::builder()
        .from_interface(SelectedInterface::direct(
            format!("{}/rpc", f.base).parse().unwrap(),
            Binding::JsonRpc,
            Version::V1,
        ))
        .unwrap();
    let Err(err) = rpc
        .stream(v1::SendMessageRequest::new(v1::Message::user_text("x")))
        .await
    else {
        panic!("a JSON error reply must fail the stream call");
    };
    assert_eq!(err.kind(), Some(ErrorKind::UnsupportedOperation), "{err}");

    let rest = A2aClient::builder()
        .from_interface(SelectedInterface::direct(
            f.base.parse().unwrap(),
            Binding::HttpJson,
            Version::V1,
        ))
        .unwrap();
    // A 502 is retried (a read is idempotent); the last one is kept inside the spent retries.
    let err = rest.get_task("t", None).await.unwrap_err();
    let ClientError::RetriesExhausted { attempts, last, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*attempts, 3);
    assert!(
        matches!(&**last, ClientError::Http { status: 502, body, .. } if body.contains("proxy down")),
        "{err}"
    );
}

#[tokio::test]
async fn idle_stream_times_out() {
    let f = fake(Arc::new(|_: &Seen, _| {
        let first = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(
            b"data: {\"task\":{\"id\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n",
        ))]);
        let body = Body::from_stream(first.chain(futures::stream::pending()));
        ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
    }))
    .await;
    let c = A2aClient::builder()
        .stream_idle_timeout(Some(Duration::from_millis(200)))
        .from_interface(SelectedInterface::direct(
            f.base.parse().unwrap(),
            Binding::HttpJson,
            Version::V1,
        ))
        .unwrap();
    let items: Vec<_> = c.subscribe("t").await.unwrap().collect().await;
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    assert!(
        matches!(items[1], Err(ClientError::StreamIdle(_))),
        "{:?}",
        items[1]
    );
}

#[tokio::test]
async fn list_tasks_is_refused_locally_for_0_3() {
    let f = fake(Arc::new(v1_answers)).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let c = A2aClient::builder()
            .from_interface(SelectedInterface::direct(
                f.base.parse().unwrap(),
                binding,
                Version::V03,
            ))
            .unwrap();
        let err = c.list_tasks(Default::default()).await.unwrap_err();
        assert_eq!(err.kind(), Some(ErrorKind::UnsupportedOperation));
        assert!(err.a2a().unwrap().local);
    }
    assert!(f.seen.lock().unwrap().is_empty(), "nothing may be sent");
}

#[tokio::test]
async fn activated_extensions_are_read_from_the_answer() {
    let f = fake(Arc::new(|s: &Seen, n| {
        let mut r = v1_answers(s, n);
        if s.headers.get("a2a-extensions").is_some() {
            r.headers_mut()
                .insert("A2A-Extensions", "urn:ext:one".parse().unwrap());
        }
        r
    }))
    .await;
    let base = SelectedInterface::direct(f.base.parse().unwrap(), Binding::JsonRpc, Version::V1);
    let plain = A2aClient::builder().from_interface(base.clone()).unwrap();
    plain.get_task("t1", None).await.unwrap();
    assert_eq!(plain.activated_extensions(), None);
    let c = A2aClient::builder()
        .extension("urn:ext:one")
        .extension("urn:ext:unknown")
        .from_interface(base)
        .unwrap();
    assert_eq!(c.activated_extensions(), None);
    c.get_task("t1", None).await.unwrap();
    assert_eq!(
        c.activated_extensions(),
        Some(vec!["urn:ext:one".to_string()])
    );
    let seen = f.seen.lock().unwrap().clone();
    assert_eq!(
        seen[1].headers["x-a2a-extensions"],
        "urn:ext:one, urn:ext:unknown"
    );
}
