//! A small OTLP trace receiver on 127.0.0.1:0 for the trace export tests (shared with the
//! gateway's tests): HTTP/protobuf (`POST /v1/traces`) or the collector's gRPC `TraceService`,
//! keeping every span it is sent and the headers of the export requests.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;

/// One received span, flattened.
#[derive(Debug, Clone)]
pub struct Got {
    /// `service.name` of its resource.
    pub service: String,
    /// Span name.
    pub name: String,
    /// Trace id, 32 hex.
    pub trace_id: String,
    /// Span id, 16 hex.
    pub span_id: String,
    /// Parent span id, 16 hex ("" for a root).
    pub parent: String,
    /// `SpanKind` as its number (2 = server).
    pub kind: i32,
    /// String, integer and boolean attributes as text.
    pub attrs: HashMap<String, String>,
}

#[derive(Default)]
struct Inner {
    spans: Vec<Got>,
    headers: Vec<http::HeaderMap>,
}

/// The receiver: its URL, the spans and headers it got.
#[derive(Clone)]
pub struct Receiver {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn text(v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

impl Inner {
    fn take(&mut self, req: ExportTraceServiceRequest, headers: http::HeaderMap) {
        self.headers.push(headers);
        for rs in req.resource_spans {
            let service = rs
                .resource
                .iter()
                .flat_map(|r| r.attributes.iter())
                .find(|a| a.key == "service.name")
                .map(|a| text(&a.value))
                .unwrap_or_default();
            for ss in rs.scope_spans {
                for s in ss.spans {
                    self.spans.push(Got {
                        service: service.clone(),
                        name: s.name,
                        trace_id: hex(&s.trace_id),
                        span_id: hex(&s.span_id),
                        parent: hex(&s.parent_span_id),
                        kind: s.kind,
                        attrs: s
                            .attributes
                            .iter()
                            .map(|a| (a.key.clone(), text(&a.value)))
                            .collect(),
                    });
                }
            }
        }
    }
}

struct Grpc(Arc<Mutex<Inner>>);

#[tonic::async_trait]
impl TraceService for Grpc {
    async fn export(
        &self,
        req: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let headers = req.metadata().clone().into_headers();
        self.0.lock().unwrap().take(req.into_inner(), headers);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Receiver {
    /// An OTLP/HTTP receiver (`POST /v1/traces`, protobuf bodies).
    pub async fn http() -> Receiver {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let st = inner.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: http::HeaderMap, body: Bytes| {
                let st = st.clone();
                async move {
                    match ExportTraceServiceRequest::decode(body) {
                        Ok(req) => {
                            st.lock().unwrap().take(req, headers);
                            let out = ExportTraceServiceResponse::default().encode_to_vec();
                            (
                                http::StatusCode::OK,
                                [("content-type", "application/x-protobuf")],
                                out,
                            )
                        }
                        Err(_) => (
                            http::StatusCode::BAD_REQUEST,
                            [("content-type", "text/plain")],
                            b"not an ExportTraceServiceRequest".to_vec(),
                        ),
                    }
                }
            }),
        );
        Receiver::serve(app, inner).await
    }

    /// An OTLP/gRPC receiver (the collector's `TraceService/Export`, HTTP/2 without TLS).
    pub async fn grpc() -> Receiver {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let svc = TraceServiceServer::new(Grpc(inner.clone()));
        let app = axum::Router::new().route_service(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            svc,
        );
        Receiver::serve(app, inner).await
    }

    async fn serve(app: axum::Router, inner: Arc<Mutex<Inner>>) -> Receiver {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        Receiver { url, inner }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Got> {
        self.inner.lock().unwrap().spans.clone()
    }

    /// The headers of every export request received so far.
    pub fn headers(&self) -> Vec<http::HeaderMap> {
        self.inner.lock().unwrap().headers.clone()
    }

    /// Waits (10 s at most) until a span of trace `trace_id` named `name` arrived; all spans.
    pub async fn wait_for(&self, trace_id: &str, name: &str) -> Vec<Got> {
        for _ in 0..200 {
            let spans = self.spans();
            if spans
                .iter()
                .any(|s| s.trace_id == trace_id && s.name == name)
            {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "no span {name:?} of trace {trace_id} received; got {:#?}",
            self.spans()
        );
    }
}

/// Sends SIGTERM to `child` and waits (20 s at most) for it to exit; its exit status.
pub fn terminate(child: &mut std::process::Child) -> std::process::ExitStatus {
    // SAFETY: kill(2) on the pid of a child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    for _ in 0..400 {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("the process did not exit within 20 s of SIGTERM");
}
