//! OpenTelemetry trace export of the `a2a-agent` binary (docs/operations.md, "Traces"): one
//! server span per request continuing the caller's `traceparent`, with the operation, version,
//! binding, task and context ids, status and refusal code; flushed on SIGTERM.

use serde_json::{Value, json};

use crate::common::bin;
use crate::common::otlp::{Got, Receiver, terminate};

async fn rpc(url: &str, traceparent: &str, method: &str, params: Value) -> Value {
    reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("traceparent", traceparent)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn one<'a>(spans: &'a [Got], trace: &str) -> &'a Got {
    let of: Vec<&Got> = spans
        .iter()
        .filter(|s| s.trace_id == trace && s.name == "a2a.request")
        .collect();
    assert_eq!(of.len(), 1, "one request span: {of:#?}");
    of[0]
}

fn attr<'a>(s: &'a Got, k: &str) -> &'a str {
    s.attrs
        .get(k)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no attribute {k}: {:?}", s.attrs))
}

async fn traced_requests(rx: Receiver, protocol: &str) {
    let mut agent = bin(
        &[
            "--echo",
            "--otlp-endpoint",
            &rx.url,
            "--otlp-protocol",
            protocol,
            "--service-name",
            "echo-under-test",
        ],
        &[("OTEL_SERVICE_NAME", "not-this-one")],
    );
    let t1 = "4bf92f3577b34da6a3ce929d0e0e4736";
    let sent = rpc(
        &agent.url,
        &format!("00-{t1}-00f067aa0ba902b7-01"),
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "contextId": "c1",
            "parts": [{"text": "hello"}]}}),
    )
    .await;
    let task_id = sent["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sent}"))
        .to_owned();
    let t2 = "0af7651916cd43dd8448eb211c80319c";
    let missing = rpc(
        &agent.url,
        &format!("00-{t2}-b7ad6b7169203331-01"),
        "GetTask",
        json!({"id": "no-such-task"}),
    )
    .await;
    assert!(missing["error"].is_object(), "{missing}");
    assert!(terminate(&mut agent.child).success());

    rx.wait_for(t1, "a2a.request").await;
    let spans = rx.wait_for(t2, "a2a.request").await;
    let s = one(&spans, t1);
    assert_eq!(s.parent, "00f067aa0ba902b7", "continues the caller's span");
    assert_eq!(s.kind, 2, "a server span");
    assert_eq!(s.service, "echo-under-test");
    for (k, v) in [
        ("a2a.operation", "SendMessage"),
        ("a2a.caller.version", "1.0"),
        ("a2a.caller.binding", "JSONRPC"),
        ("a2a.task_id", task_id.as_str()),
        ("a2a.context_id", "c1"),
        ("http.request.method", "POST"),
        ("http.response.status_code", "200"),
    ] {
        assert_eq!(attr(s, k), v, "{k}");
    }
    assert!(!s.attrs.contains_key("a2a.refusal_code"));
    assert!(!s.attrs.contains_key("target"), "{:?}", s.attrs);
    let s = one(&spans, t2);
    assert_eq!(attr(s, "a2a.operation"), "GetTask");
    assert_eq!(attr(s, "a2a.task_id"), "no-such-task");
    assert_eq!(attr(s, "a2a.refusal_code"), "TaskNotFoundError");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_spans_over_otlp_http() {
    traced_requests(Receiver::http().await, "http/protobuf").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_spans_over_otlp_grpc() {
    traced_requests(Receiver::grpc().await, "grpc").await;
}

/// A bad protocol is a configuration error naming it (exit 2), not a silent fallback.
#[test]
fn a_bad_otlp_protocol_is_refused_at_start() {
    let out = std::process::Command::new(crate::common::AGENT_BIN)
        .args([
            "serve",
            "--echo",
            "--check-config",
            "--otlp-endpoint",
            "http://127.0.0.1:1",
            "--otlp-protocol",
            "http/json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("http/json"));
}

/// A delegation carries the trace on: the child agent's request span is a child of the parent
/// agent's request span, in the caller's trace. In-process (the export is global to a process:
/// nextest runs each test in its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegation_continues_the_request_trace() {
    use a2a_agent::{AgentCard, AgentServer, Reply, RequestContext, handler_fn};
    use a2a_types::v1::Message;
    use tracing_subscriber::layer::SubscriberExt;

    let rx = Receiver::http().await;
    let export = a2a_agent::otel::Export::resolve(
        &a2a_agent::otel::Settings {
            endpoint: Some(&rx.url),
            ..Default::default()
        },
        "in-process",
        &|_| None,
    )
    .unwrap()
    .unwrap();
    let traces = a2a_agent::otel::Tracing::start(&export).unwrap();
    let _ = tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(traces.layer()),
    );
    let serve = |name: &'static str, h: std::sync::Arc<dyn a2a_agent::Handler>| async move {
        AgentServer::with_handler(AgentCard::identity(name, name, "1.0.0"), h)
            .validate_auth(false)
            .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
            .await
            .unwrap()
    };
    let child = serve(
        "child",
        std::sync::Arc::new(a2a_agent::demo::echo_handler()),
    )
    .await;
    let url = child.url().to_owned();
    let parent = serve(
        "parent",
        std::sync::Arc::new(handler_fn(move |ctx: RequestContext| {
            let url = url.clone();
            async move {
                let c = ctx
                    .delegate(url)
                    .send(Message::user_text(ctx.text()))
                    .await?;
                Ok(Reply::text(format!("parent got: {}", c.text())))
            }
        })),
    )
    .await;
    let t = "7bf92f3577b34da6a3ce929d0e0e4736";
    let out = rpc(
        parent.url(),
        &format!("00-{t}-00f067aa0ba902b7-01"),
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    )
    .await;
    assert!(out["result"].is_object(), "{out}");
    parent.shutdown().await;
    child.shutdown().await;
    tokio::task::spawn_blocking(move || traces.shutdown())
        .await
        .unwrap();
    let spans = rx.spans();
    let of_trace: Vec<&Got> = spans
        .iter()
        .filter(|s| s.trace_id == t && s.name == "a2a.request")
        .collect();
    let first = of_trace
        .iter()
        .find(|s| s.parent == "00f067aa0ba902b7")
        .unwrap_or_else(|| panic!("no parent request span: {spans:#?}"));
    // The child's send (streaming: the child streams), and its card fetch, are child spans.
    let under: Vec<Option<&str>> = of_trace
        .iter()
        .filter(|s| s.parent == first.span_id)
        .map(|s| s.attrs.get("a2a.operation").map(String::as_str))
        .collect();
    assert!(
        under.contains(&Some("SendStreamingMessage")) || under.contains(&Some("SendMessage")),
        "no child send under {}: {of_trace:#?}",
        first.span_id
    );
    assert!(under.contains(&None), "the card fetch: {under:?}");
}
