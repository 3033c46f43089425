//! The gRPC row of the agent benchmark (`a2a-agent/bench/run.sh`): a closed-loop load generator,
//! the gRPC counterpart of the wrk runs. `CONNS` HTTP/2 connections each keep one echo
//! `SendMessage` in flight for `SECS` seconds; every request has a new `messageId` (as the wrk
//! scripts do), patched into bytes encoded once, so the generator costs little CPU beside the
//! agent on the same machine.
//!
//! `cargo run --release -p a2ars-agent --features grpc --example grpc_load -- 127.0.0.1:PORT 16 10`
//! prints `RESULT <req/s> <p50 ms> <p99 ms> <requests> <errors>`.

use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

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

const PLACEHOLDER: &str = "00000000-0000-4000-8000-000000000000";

fn template() -> Result<(Vec<u8>, usize), String> {
    let req = serde_json::json!({"message": {"messageId": PLACEHOLDER, "role": "ROLE_USER",
        "parts": [{"text": "hello bench"}]}});
    let bytes = a2a_types::grpc::encode_json("lf.a2a.v1.SendMessageRequest", &req)
        .map_err(|e| e.to_string())?;
    let at = bytes
        .windows(PLACEHOLDER.len())
        .position(|w| w == PLACEHOLDER.as_bytes())
        .ok_or("placeholder not found")?;
    Ok((bytes, at))
}

async fn worker(origin: http::Uri, until: Instant, tpl: (Vec<u8>, usize)) -> (Vec<u32>, u64) {
    let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
    connector.set_nodelay(true);
    let channel = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build::<_, tonic::body::Body>(connector);
    let mut grpc = tonic::client::Grpc::with_origin(channel, origin);
    let path: http::uri::PathAndQuery = match "/lf.a2a.v1.A2AService/SendMessage".parse() {
        Ok(p) => p,
        Err(_) => return (Vec::new(), 1),
    };
    let (mut buf, at) = tpl;
    let mut lat = Vec::new();
    let mut errors = 0;
    while Instant::now() < until {
        let id = uuid::Uuid::new_v4().hyphenated().to_string();
        buf[at..at + id.len()].copy_from_slice(id.as_bytes());
        let mut req = tonic::Request::new(Bytes::copy_from_slice(&buf));
        if let Ok(v) = "1.0".parse() {
            req.metadata_mut().insert("a2a-version", v);
        }
        let t0 = Instant::now();
        let ok = match grpc.ready().await {
            Ok(()) => grpc.unary(req, path.clone(), Raw).await.is_ok(),
            Err(_) => false,
        };
        if ok {
            lat.push(t0.elapsed().as_micros().min(u32::MAX as u128) as u32);
        } else {
            errors += 1;
        }
    }
    (lat, errors)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target = args.get(1).map(String::as_str).unwrap_or("127.0.0.1:8080");
    let conns: usize = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(1);
    let secs: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let host = target
        .split("://")
        .last()
        .unwrap_or(target)
        .trim_end_matches('/');
    let origin: http::Uri = match format!("http://{host}").parse() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("grpc_load: bad target {target:?}: {e}");
            std::process::exit(2);
        }
    };
    let tpl = match template() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("grpc_load: {e}");
            std::process::exit(1);
        }
    };
    let started = Instant::now();
    let until = started + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..conns)
        .map(|_| tokio::spawn(worker(origin.clone(), until, tpl.clone())))
        .collect();
    let mut lat = Vec::new();
    let mut errors = 0;
    for t in tasks {
        if let Ok((l, e)) = t.await {
            lat.extend(l);
            errors += e;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .map(|us| *us as f64 / 1000.0)
            .unwrap_or(0.0)
    };
    println!(
        "RESULT {:.0} {:.3} {:.3} {} {}",
        lat.len() as f64 / elapsed,
        pct(0.5),
        pct(0.99),
        lat.len(),
        errors
    );
}
