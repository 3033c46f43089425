//! The gRPC edge shared by the agent and the gateway (A2A 1.0, `lf.a2a.v1.A2AService`): which
//! requests are gRPC calls, the `host:port` a card lists, and [`serve`], which decodes one call
//! with the rpc's codec (`a2a_types::grpc`), runs it as a unary or server-streaming rpc and
//! renders the answer or the `google.rpc.Status` error.
//!
//! The caller of [`serve`] only turns the request's 1.0 JSON form (the JSON-RPC `params`) into a
//! [`Reply`]: authentication, version and the operation stay in the agent (`server::grpc`) and
//! the gateway (`grpc_edge`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use a2a_types::grpc::Rpc;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures_util::Stream;
use http::HeaderMap;
use serde_json::Value;
use tonic::Status;
use tonic::metadata::MetadataMap;

/// Whether a request is a gRPC call (`content-type: application/grpc`, `application/grpc+proto`).
pub fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.get(..16)
                .is_some_and(|p| p.eq_ignore_ascii_case("application/grpc"))
        })
}

/// The `host:port` of a public URL, a card's gRPC interface url (`addr` when the URL has none).
pub fn authority(url: &str, addr: std::net::SocketAddr) -> String {
    match url::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            _ => addr.to_string(),
        },
        Err(_) => addr.to_string(),
    }
}

/// A status as a whole HTTP response (`grpc-status` in the headers, no message).
pub fn status_response(s: Status) -> Response {
    s.into_http::<Body>()
}

/// The UNIMPLEMENTED answer to a path that is not an rpc of the 1.0 service.
pub fn unknown_method(path: &str, who: &str) -> Response {
    status_response(Status::unimplemented(format!(
        "unknown method {}: {who} serves {} (A2A 1.0)",
        a2a_types::elide::elide(path),
        a2a_types::grpc::SERVICE
    )))
}

/// The events of a server-streaming rpc; an `Err` ends the stream with that status.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Value, Status>> + Send>>;

/// What one call produced, in 1.0 JSON (ProtoJSON of the rpc's response message).
pub enum Answer {
    /// The response of a unary rpc (`Value::Null`: `google.protobuf.Empty`).
    Unary(Value),
    /// The events of a streaming rpc.
    Stream(EventStream),
}

/// A call's answer and the response headers to send with it (e.g. `a2a-extensions`).
pub struct Reply {
    /// The answer.
    pub answer: Answer,
    /// Extra response headers (gRPC initial metadata).
    pub headers: HeaderMap,
}

impl Reply {
    /// An answer with no extra headers.
    pub fn new(answer: Answer) -> Reply {
        Reply {
            answer,
            headers: HeaderMap::new(),
        }
    }
}

fn response<T>(headers: HeaderMap, body: T) -> tonic::Response<T> {
    tonic::Response::from_parts(
        MetadataMap::from_headers(headers),
        body,
        tonic::Extensions::default(),
    )
}

/// Serves one call of `rpc`: decodes the request (at most `max_message` bytes), hands its 1.0
/// JSON to `run` and encodes the answer; an `Err` of `run` is the call's status. A unary answer
/// to a streaming rpc is sent as its only event; a stream answering a unary rpc is INTERNAL.
pub async fn serve<F, Fut>(rpc: &'static Rpc, req: Request, max_message: usize, run: F) -> Response
where
    F: FnOnce(Value) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Reply, Status>> + Send + 'static,
{
    let codec = match rpc.server_codec() {
        Ok(c) => c,
        Err(e) => return status_response(e),
    };
    let mut grpc = tonic::server::Grpc::new(codec)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(usize::MAX);
    // tonic's services are `FnMut`; a server call decodes exactly one request.
    let run = std::sync::Arc::new(Mutex::new(Some(run)));
    let take = move || {
        run.lock()
            .ok()
            .and_then(|mut r| r.take())
            .ok_or_else(|| Status::internal("the call was already served"))
    };
    let resp = if rpc.streaming {
        let svc = tower::service_fn(move |r: tonic::Request<Value>| {
            let run = take();
            async move {
                let reply = run?(r.into_inner()).await?;
                let stream: EventStream = match reply.answer {
                    Answer::Stream(s) => s,
                    Answer::Unary(v) => Box::pin(futures_util::stream::once(async move { Ok(v) })),
                };
                Ok::<_, Status>(response(reply.headers, stream))
            }
        });
        grpc.server_streaming(svc, req).await
    } else {
        let svc = tower::service_fn(move |r: tonic::Request<Value>| {
            let run = take();
            async move {
                let reply = run?(r.into_inner()).await?;
                let v = match reply.answer {
                    Answer::Unary(Value::Null) => Value::Object(Default::default()),
                    Answer::Unary(v) => v,
                    Answer::Stream(_) => {
                        return Err(Status::internal(format!(
                            "{} produced a stream on a unary rpc",
                            rpc.name
                        )));
                    }
                };
                Ok::<_, Status>(response(reply.headers, v))
            }
        });
        grpc.unary(svc, req).await
    };
    resp.map(Body::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_content_types() {
        let mut h = HeaderMap::new();
        assert!(!is_grpc(&h));
        for (ct, yes) in [
            ("application/grpc", true),
            ("application/grpc+proto", true),
            ("Application/GRPC", true),
            ("application/json", false),
            ("application/grp", false),
        ] {
            h.insert(http::header::CONTENT_TYPE, ct.parse().expect("value"));
            assert_eq!(is_grpc(&h), yes, "{ct}");
        }
    }

    #[test]
    fn card_authority() {
        let addr: std::net::SocketAddr = "127.0.0.1:9".parse().expect("addr");
        assert_eq!(
            authority("http://127.0.0.1:8080/a2a", addr),
            "127.0.0.1:8080"
        );
        assert_eq!(
            authority("https://agent.example.com/x", addr),
            "agent.example.com:443"
        );
        assert_eq!(authority("not a url", addr), "127.0.0.1:9");
    }
}
