//! OpenTelemetry trace export of the `a2a-gateway` binary (docs/operations.md, "Traces"): a
//! small OTLP receiver on loopback gets one hop span per hop continuing the caller's
//! `traceparent`, with child spans for its steps and the A2A attributes; the audit row, the
//! error body and the peer's `traceparent` carry the span's trace id; the export is flushed on
//! SIGTERM; without an endpoint nothing is exported and propagation is as before.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::otlp::{Got, Receiver, terminate};
use crate::common::seed_file;

/// A peer agent answering "ok" that keeps the `traceparent` of each send it gets.
async fn peer() -> (a2a_agent::ServerHandle, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let server = a2a_agent::AgentServer::new(
        a2a_agent::AgentCard::builder("p", "Echo", "1.0.0").build(),
        a2a_agent::handler_fn(move |c: a2a_agent::RequestContext| {
            let keep = keep.clone();
            async move {
                if let Some(tp) = c.headers().get("traceparent").and_then(|v| v.to_str().ok()) {
                    keep.lock().unwrap().push(tp.to_owned());
                }
                Ok(a2a_agent::Reply::direct_text("ok"))
            }
        }),
    )
    .validate_auth(false)
    .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
    .await
    .unwrap();
    (server, seen)
}

/// `a2a-gateway serve` on 127.0.0.1:0 with `extra` flags and `env`; the child and its base URL.
fn gateway(
    db: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (std::process::Child, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--dev"])
        .args(extra)
        .arg("--database")
        .arg(db);
    for k in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_SERVICE_NAME",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (child, base, _) = crate::common::spawn_gateway_cmd(cmd);
    (child, base)
}

async fn send(base: &str, agent: &str, key: &str, traceparent: &str) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}/a2a/{agent}"))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .header("traceparent", traceparent)
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
             "contextId": "ctx-1", "parts": [{"text": "hi"}]}}}),
        )
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

fn attr<'a>(s: &'a Got, k: &str) -> &'a str {
    s.attrs
        .get(k)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("span {} has no attribute {k}: {:?}", s.name, s.attrs))
}

/// The hop of trace `trace`, its step spans' names, and the spans of that trace.
fn hop_of<'a>(spans: &'a [Got], trace: &str) -> (&'a Got, Vec<&'a str>) {
    let hops: Vec<&Got> = spans
        .iter()
        .filter(|s| s.trace_id == trace && s.name == "a2a.hop")
        .collect();
    assert_eq!(hops.len(), 1, "one hop span per hop: {hops:#?}");
    let hop = hops[0];
    let steps = spans
        .iter()
        .filter(|s| s.trace_id == trace && s.parent == hop.span_id)
        .map(|s| s.name.as_str())
        .collect();
    (hop, steps)
}

/// Runs the traced hops against a gateway exporting to `rx` with `protocol`, and checks them.
async fn traced_hops(rx: Receiver, protocol: &str) {
    let (peer, seen) = peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    let (mut child, base) = gateway(
        &db,
        &[
            "--otlp-endpoint",
            &rx.url,
            "--otlp-protocol",
            protocol,
            "--otlp-headers",
            "x-collector-token=from%20setting",
        ],
        // The setting's headers win over the variable; the service name comes from it.
        &[
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-token=from-env"),
            ("OTEL_SERVICE_NAME", "gw-under-test"),
        ],
    );
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller_span = "00f067aa0ba902b7";
    let (status, body) = send(&base, "p", &key, &format!("00-{trace}-{caller_span}-01")).await;
    assert_eq!(status, 200, "{body}");
    // A refused hop: the error's trace id is its span's (the caller's trace).
    let refused_trace = "0af7651916cd43dd8448eb211c80319c";
    let (_, err) = send(
        &base,
        "nobody",
        &key,
        &format!("00-{refused_trace}-b7ad6b7169203331-01"),
    )
    .await;
    let err_text = err.to_string();
    assert!(err_text.contains(refused_trace), "{err_text}");
    // A hop without a traceparent starts a trace (checked below through its audit row).
    let resp = reqwest::Client::new()
        .post(format!("{base}/a2a/p"))
        .bearer_auth(&key)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "none"}}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success() || resp.status().is_client_error());
    assert!(terminate(&mut child).success());

    let spans = rx.wait_for(trace, "a2a.hop").await;
    let (hop, steps) = hop_of(&spans, trace);
    assert_eq!(
        hop.parent, caller_span,
        "the hop continues the caller's span"
    );
    assert_eq!(hop.kind, 2, "a server span");
    assert_eq!(hop.service, "gw-under-test");
    for (k, v) in [
        ("a2a.operation", "SendMessage"),
        ("a2a.caller.version", "1.0"),
        ("a2a.caller.binding", "JSONRPC"),
        ("a2a.workspace", "ws"),
        ("a2a.agent", "p"),
        ("a2a.context_id", "ctx-1"),
        ("a2a.decision", "allowed"),
    ] {
        assert_eq!(attr(hop, k), v, "{k}");
    }
    assert!(!attr(hop, "a2a.peer.version").is_empty());
    assert!(!attr(hop, "a2a.peer.binding").is_empty());
    assert!(
        !hop.attrs.contains_key("a2a.refusal_code"),
        "{:?}",
        hop.attrs
    );
    for step in [
        "edge",
        "key",
        "governance",
        "translation",
        "peer call",
        "audit",
    ] {
        assert!(steps.contains(&step), "step {step:?} missing: {steps:?}");
    }
    // The peer got a traceparent of the same trace naming the gateway's "peer call" span.
    let peer_call = spans
        .iter()
        .find(|s| s.trace_id == trace && s.name == "peer call")
        .unwrap();
    let got = seen.lock().unwrap().clone();
    assert_eq!(
        got,
        vec![format!("00-{trace}-{}-01", peer_call.span_id)],
        "the peer's traceparent"
    );
    // The audit row's trace id is the span's.
    let store = a2a_gateway::store::Store::open(&db).unwrap();
    let rows = store.trace_records(trace).unwrap();
    assert!(!rows.is_empty(), "no audit row of trace {trace}");
    assert!(rows.iter().all(|r| r.trace_id == trace));

    // The refused hop: its attributes, and no peer call.
    let spans = rx.wait_for(refused_trace, "a2a.hop").await;
    let (hop, steps) = hop_of(&spans, refused_trace);
    assert_eq!(attr(hop, "a2a.decision"), "refused");
    assert_eq!(attr(hop, "a2a.refusal_code"), "a2a_agent_not_found");
    assert!(!steps.contains(&"peer call"), "{steps:?}");
    let refused_rows = store.trace_records(refused_trace).unwrap();
    assert_eq!(refused_rows.len(), 1);
    assert_eq!(refused_rows[0].decision, "refused");

    // Every audit row's trace id is the trace of one exported hop span; the hop that came
    // without a traceparent is a root span of a new trace.
    let rows = store.audit(None, None, 0, 100).unwrap();
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let fresh = rows
        .iter()
        .find(|r| r.trace_id != trace && r.trace_id != refused_trace)
        .unwrap();
    let spans = rx.wait_for(&fresh.trace_id, "a2a.hop").await;
    let (hop, _) = hop_of(&spans, &fresh.trace_id);
    assert_eq!(hop.parent, "", "a root span");
    assert_eq!(attr(hop, "a2a.operation"), "GetTask");

    // The export requests carried the setting's header, not the variable's.
    let headers = rx.headers();
    assert!(!headers.is_empty());
    for h in &headers {
        assert_eq!(
            h.get("x-collector-token").and_then(|v| v.to_str().ok()),
            Some("from setting")
        );
    }
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hop_spans_over_otlp_http_continue_the_callers_trace() {
    traced_hops(Receiver::http().await, "http/protobuf").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hop_spans_over_otlp_grpc_continue_the_callers_trace() {
    traced_hops(Receiver::grpc().await, "grpc").await;
}

/// Without an endpoint (only variables of other signals set) nothing is exported, and the
/// traceparent goes on as before: the caller's trace id, in the audit row and to the peer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_endpoint_no_export_and_propagation_as_before() {
    let rx = Receiver::http().await;
    let (peer, seen) = peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", peer.url());
    let (mut child, base) = gateway(
        &db,
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", &rx.url),
            ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", &rx.url),
            ("OTEL_SERVICE_NAME", "gw-off"),
        ],
    );
    let trace = "5bf92f3577b34da6a3ce929d0e0e4736";
    let (status, body) = send(&base, "p", &key, &format!("00-{trace}-00f067aa0ba902b7-01")).await;
    assert_eq!(status, 200, "{body}");
    assert!(terminate(&mut child).success());
    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with(&format!("00-{trace}-")), "{got:?}");
    assert_ne!(got[0], format!("00-{trace}-00f067aa0ba902b7-01"));
    let store = a2a_gateway::store::Store::open(&db).unwrap();
    assert!(!store.trace_records(trace).unwrap().is_empty());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(rx.spans().is_empty(), "{:?}", rx.spans());
    assert!(rx.headers().is_empty());
    peer.shutdown().await;
}
