//! gRPC bad input (issue 40): each case is raw protobuf sent to the agent's gRPC binding, and
//! the answer is INVALID_ARGUMENT with the field's path (a value no JSON can say, a wrong wire
//! type, a bad string, an unknown enum value) or NOT_FOUND (a long unknown id), never
//! INTERNAL; and the status stays small: no caller value over 256 bytes comes back, so a 100 KB
//! task id no longer pushes the trailers past HTTP/2's header limit (RESOURCE_EXHAUSTED).

use crate::common;

use common::grpc_raw::{call, encode, with_double};
use common::*;
use serde_json::{Value, json};
use tonic::Code;

/// One case: name, rpc, metadata, body, the code, the violation path (if any).
pub type Case = (
    &'static str,
    &'static str,
    Vec<(&'static str, String)>,
    Vec<u8>,
    Code,
    Option<&'static str>,
);

/// A length-delimited protobuf field.
fn len_field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2];
    let mut n = bytes.len();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend_from_slice(bytes);
    out
}

/// The table, shared with the gateway's test (which adds the `tenant` each request names).
pub fn cases(extra: &Value) -> Vec<Case> {
    let with = |mut v: Value| {
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v
    };
    let long = "x".repeat(100_000);
    let send = |part: Value| {
        with(json!({"message": {"messageId": "m-1", "role": "ROLE_USER",
            "parts": [{"text": "hi"}, part]}}))
    };
    let req = "lf.a2a.v1.SendMessageRequest";
    let tenant = |body: Vec<u8>| {
        let mut b = match extra.get("tenant").and_then(Value::as_str) {
            Some(t) => len_field(1, t.as_bytes()),
            None => Vec::new(),
        };
        b.extend(body);
        b
    };
    // Timestamp { seconds: i64::MAX } as ListTasksRequest.status_timestamp_after (7).
    let mut ts = vec![0x08];
    ts.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    vec![
        (
            "NaN in a part's data list",
            "SendMessage",
            vec![],
            with_double(req, &send(json!({"data": [1, 2.5]})), 2.5, f64::NAN),
            Code::InvalidArgument,
            Some("message.parts[1].data[1]"),
        ),
        (
            "Infinity in message metadata",
            "SendMessage",
            vec![],
            with_double(
                req,
                &with(json!({"message": {"messageId": "m-2", "role": "ROLE_USER",
                    "parts": [{"text": "hi"}], "metadata": {"score": 2.5}}})),
                2.5,
                f64::INFINITY,
            ),
            Code::InvalidArgument,
            Some("message.metadata.score"),
        ),
        (
            "-Infinity in a streaming send's request metadata",
            "SendStreamingMessage",
            vec![],
            with_double(
                req,
                &with(json!({"message": {"messageId": "m-3", "role": "ROLE_USER",
                    "parts": [{"text": "hi"}]}, "metadata": {"a": {"b": [2.5]}}})),
                2.5,
                f64::NEG_INFINITY,
            ),
            Code::InvalidArgument,
            Some("metadata.a.b[0]"),
        ),
        (
            "timestamp out of range",
            "ListTasks",
            vec![],
            tenant(len_field(7, &ts)),
            Code::InvalidArgument,
            Some("statusTimestampAfter"),
        ),
        (
            "task id as a varint (wrong wire type)",
            "GetTask",
            vec![],
            tenant(vec![0x10, 0x01]),
            Code::InvalidArgument,
            Some("id"),
        ),
        (
            "task id not UTF-8",
            "GetTask",
            vec![],
            tenant(len_field(2, &[0xff, 0xfe, 0xfd])),
            Code::InvalidArgument,
            Some("id"),
        ),
        (
            "unknown role number",
            "SendMessage",
            vec![],
            tenant(len_field(
                2,
                &[
                    len_field(1, b"m-4"),
                    vec![0x20, 0x63],
                    len_field(5, &len_field(1, b"hi")),
                ]
                .concat(),
            )),
            Code::InvalidArgument,
            Some("message.role"),
        ),
        (
            "long unknown task id: GetTask",
            "GetTask",
            vec![],
            encode("lf.a2a.v1.GetTaskRequest", &with(json!({"id": long}))),
            Code::NotFound,
            None,
        ),
        (
            "long unknown task id: CancelTask",
            "CancelTask",
            vec![],
            encode("lf.a2a.v1.CancelTaskRequest", &with(json!({"id": long}))),
            Code::NotFound,
            None,
        ),
        (
            "long unknown task id: SubscribeToTask",
            "SubscribeToTask",
            vec![],
            encode(
                "lf.a2a.v1.SubscribeToTaskRequest",
                &with(json!({"id": long})),
            ),
            Code::NotFound,
            None,
        ),
        (
            "long unknown task id in a send",
            "SendMessage",
            vec![],
            encode(
                req,
                &with(json!({"message": {"messageId": "m-5", "role": "ROLE_USER",
                    "taskId": long, "parts": [{"text": "hi"}]}})),
            ),
            Code::NotFound,
            None,
        ),
        (
            "long A2A-Version",
            "GetTask",
            vec![("a2a-version", format!("9.{}", "9".repeat(8_000)))],
            encode("lf.a2a.v1.GetTaskRequest", &with(json!({"id": "t"}))),
            Code::FailedPrecondition,
            None,
        ),
    ]
}

/// Runs the table against the gRPC binding at `addr` with `metadata` on every call.
pub async fn run(addr: std::net::SocketAddr, metadata: &[(&'static str, String)], extra: &Value) {
    let run_of = "x".repeat(257);
    let nines = "9".repeat(257);
    for (name, rpc, meta, body, code, path) in cases(extra) {
        let mut all: Vec<(&'static str, &str)> =
            metadata.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.extend(meta.iter().map(|(k, v)| (*k, v.as_str())));
        let out = call(addr, rpc, &all, body).await;
        assert_eq!(out.code, code, "{name}: {out:?}");
        assert!(out.trailer_bytes < 4096, "{name}: {} bytes", out.trailer_bytes);
        assert!(
            !out.message.contains(&run_of) && !out.message.contains(&nines),
            "{name}: {}",
            out.message
        );
        if let Some(p) = path {
            assert_eq!(out.violations(), vec![p.to_owned()], "{name}: {out:?}");
            assert!(out.message.contains(p), "{name}: {}", out.message);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_grpc_input_is_invalid_argument_or_not_found_with_small_trailers() {
    let cfg = a2a_agent::AgentConfig {
        grpc: true,
        ..open_config()
    };
    let s = echo(cfg).await;
    run(s.local_addr(), &[], &json!({})).await;
    s.shutdown().await;
}
