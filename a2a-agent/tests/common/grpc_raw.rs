//! A raw gRPC caller for tests (the agent's, and the gateway's through `#[path]`): protobuf
//! bytes in, the status code, message and the size of what the server sent beside them out.
//! Raw bytes, so a test can send what no JSON can say (NaN in a `Value`, a wrong wire type);
//! and the table of bad input both servers must answer the same way ([`cases`], [`run`]).

#![allow(dead_code)]

use std::net::SocketAddr;

use bytes::{Buf, BufMut, Bytes};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};

/// A codec of already encoded messages.
#[derive(Clone, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// What one call gave.
#[derive(Debug)]
pub struct Outcome {
    /// The status code (`Ok` for an answer).
    pub code: Code,
    /// The status message.
    pub message: String,
    /// Bytes of the status message, its details and the other trailers.
    pub trailer_bytes: usize,
    /// The error status, whole.
    pub status: Option<Status>,
    /// The answer (the first event of a stream).
    pub reply: Option<Bytes>,
}

impl Outcome {
    /// The `google.rpc.BadRequest` field paths of the status.
    pub fn violations(&self) -> Vec<String> {
        self.status
            .as_ref()
            .map(|s| a2a_types::grpc::status::from_status(s).field_violations)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.field)
            .collect()
    }

    /// The `ErrorInfo` reason of the status, whatever its domain.
    pub fn reason(&self) -> Option<String> {
        self.status
            .as_ref()
            .and_then(a2a_types::grpc::status::any_reason)
    }
}

fn from_status(s: Status) -> Outcome {
    let others: usize = s
        .metadata()
        .clone()
        .into_headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len())
        .sum();
    Outcome {
        code: s.code(),
        message: s.message().to_owned(),
        trailer_bytes: s.message().len() + s.details().len() + others,
        status: Some(s),
        reply: None,
    }
}

/// Calls `rpc` of `lf.a2a.v1.A2AService` at `addr` with `body` (protobuf bytes) and `metadata`.
pub async fn call(
    addr: SocketAddr,
    rpc: &str,
    metadata: &[(&'static str, &str)],
    body: Vec<u8>,
) -> Outcome {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let channel = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build::<_, tonic::body::Body>(connector);
    let origin: http::Uri = format!("http://{addr}").parse().expect("origin");
    let mut grpc = tonic::client::Grpc::with_origin(channel, origin);
    grpc.ready().await.expect("ready");
    let path: http::uri::PathAndQuery = format!("/lf.a2a.v1.A2AService/{rpc}")
        .parse()
        .expect("path");
    let mut req = tonic::Request::new(Bytes::from(body));
    for (k, v) in metadata {
        req.metadata_mut()
            .insert(*k, v.parse().expect("metadata value"));
    }
    let streaming = matches!(rpc, "SendStreamingMessage" | "SubscribeToTask");
    let answer = if streaming {
        match grpc.server_streaming(req, path, Raw).await {
            Ok(r) => r
                .into_inner()
                .message()
                .await
                .map(|m| m.unwrap_or_default()),
            Err(s) => Err(s),
        }
    } else {
        grpc.unary(req, path, Raw)
            .await
            .map(tonic::Response::into_inner)
    };
    match answer {
        Ok(reply) => Outcome {
            code: Code::Ok,
            message: String::new(),
            trailer_bytes: 0,
            status: None,
            reply: Some(reply),
        },
        Err(s) => from_status(s),
    }
}

/// `json` (ProtoJSON of `message_type`) as protobuf bytes.
pub fn encode(message_type: &str, json: &serde_json::Value) -> Vec<u8> {
    a2a_types::grpc::encode_json(message_type, json).expect("encodes")
}

/// [`encode`] with the 8-byte double `from` replaced by `to` (NaN, Infinity: no JSON has them).
pub fn with_double(message_type: &str, json: &serde_json::Value, from: f64, to: f64) -> Vec<u8> {
    let mut b = encode(message_type, json);
    let (from, to) = (from.to_le_bytes(), to.to_le_bytes());
    let at = b.windows(8).position(|w| w == from).expect("the double");
    b[at..at + 8].copy_from_slice(&to);
    b
}

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
        assert!(
            out.trailer_bytes < 4096,
            "{name}: {} bytes",
            out.trailer_bytes
        );
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
