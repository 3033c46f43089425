//! A raw gRPC caller for tests (the agent's, and the gateway's through `#[path]`): protobuf
//! bytes in, the status code, message and the size of what the server sent beside them out.
//! Raw bytes, so a test can send what no JSON can say (NaN in a `Value`, a wrong wire type).

#![allow(dead_code)]

use std::net::SocketAddr;

use bytes::{Buf, BufMut, Bytes};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
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
        req.metadata_mut().insert(*k, v.parse().expect("metadata value"));
    }
    let streaming = matches!(rpc, "SendStreamingMessage" | "SubscribeToTask");
    let answer = if streaming {
        match grpc.server_streaming(req, path, Raw).await {
            Ok(r) => r.into_inner().message().await.map(|m| m.unwrap_or_default()),
            Err(s) => Err(s),
        }
    } else {
        grpc.unary(req, path, Raw).await.map(tonic::Response::into_inner)
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
