//! The gRPC binding (A2A 1.0, `lf.a2a.v1.A2AService`), served on the same port as JSON-RPC and
//! HTTP+JSON when `grpc` is set: an HTTP/2 request whose `content-type` is `application/grpc*`
//! comes here instead of the HTTP pipeline, whatever its path.
//!
//! Each rpc runs the same operation as the JSON-RPC method of the same name
//! ([`crate::ops::dispatch_v`]): the request message is transcoded to its 1.0 JSON form (which
//! is the JSON-RPC `params`), and the result back to protobuf, by `a2a_types::grpc`. Metadata
//! are the HTTP/2 headers, so authentication (`authorization`, API key headers), `a2a-version`
//! and `a2a-extensions` are read by the same code as on the other bindings. Errors are
//! `google.rpc.Status` with an `ErrorInfo` detail and the spec's gRPC codes
//! (`a2a_types::grpc::status`). The wiring (content type, codec, unary and streaming calls) is
//! [`crate::edge::grpc`], shared with the gateway's gRPC callers.
//!
//! Only the 1.0 service is served: a request with `a2a-version: 0.3` is refused with
//! `VersionNotSupportedError`, and the 0.3 service (`a2a.v1.A2AService`) answers UNIMPLEMENTED.

use std::sync::Arc;

use a2a_types::grpc::{Rpc, status::to_status};
use axum::extract::Request;
use axum::response::Response;
use futures_util::StreamExt;
use http::HeaderMap;
use serde_json::Value;
use tonic::Status;

use super::admit::admit;
use super::sse::{Item, items};
use crate::edge::grpc::{Answer, EventStream, Reply, serve, status_response, unknown_method};
use crate::edge::version::{Version, requested_version};
use crate::error::{A2aError, ErrorKind};
use crate::model::StreamResponse;
use crate::ops::{self, Outcome};
use crate::state::{App, Call};

pub(crate) use crate::edge::grpc::{authority, is_grpc};

/// The status of an agent error; the `field` an error names is also its `google.rpc.BadRequest`
/// violation.
fn a2a_status(e: &A2aError) -> Status {
    crate::otel::note("a2a.refusal_code", e.kind.name_v1());
    let mut t = e.to_types();
    if let Some(field) = e.metadata.get("field") {
        t = t.with_field_violation(field.clone(), e.message.clone());
    }
    to_status(&t)
}

/// An error as a whole gRPC answer (the edge's refusals of a gRPC call).
pub(crate) fn refused(e: &A2aError) -> Response {
    status_response(a2a_status(e))
}

/// Serves one gRPC call.
pub(crate) async fn handle(app: Arc<App>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    if !app.cfg().grpc {
        return status_response(Status::unimplemented(
            "this agent does not serve the gRPC binding",
        ));
    }
    let Some(rpc) = Rpc::of_path(&path) else {
        return unknown_method(&path, "this agent");
    };
    crate::otel::note("rpc.system", "grpc");
    crate::otel::note("a2a.caller.binding", "GRPC");
    crate::otel::note("a2a.caller.version", Version::V1.as_str());
    let headers = req.headers().clone();
    let call = match admit_grpc(&app, headers).await {
        Ok(c) => c,
        Err(e) => return status_response(a2a_status(&e)),
    };
    let max = app.cfg().max_payload_size;
    serve(rpc, req, max, move |params| async move {
        let answer = if rpc.streaming {
            Answer::Stream(run_stream(&app, &call, rpc, params).await?)
        } else {
            Answer::Unary(run_unary(&app, &call, rpc, params).await?)
        };
        let mut reply = Reply::new(answer);
        let extensions = call.extensions.join(", ");
        if !extensions.is_empty()
            && let Ok(v) = http::HeaderValue::from_str(&extensions)
        {
            reply.headers.insert(crate::edge::names::A2A_EXTENSIONS, v);
        }
        Ok(reply)
    })
    .await
}

/// Version (1.0 only), authentication and extensions, from the metadata.
async fn admit_grpc(app: &App, headers: HeaderMap) -> Result<Call, A2aError> {
    match requested_version(&headers, None)? {
        None | Some(Version::V1) => {}
        Some(Version::V03) => {
            return Err(A2aError::new(
                ErrorKind::VersionNotSupported,
                "A2A 0.3 is not served over gRPC by this agent: use lf.a2a.v1.A2AService \
                 with a2a-version 1.0, or the JSON-RPC / HTTP+JSON binding for 0.3",
            )
            .with_meta("supportedVersions", "1.0"));
        }
    }
    let (caller, extensions) = admit(app, &headers, None).await?;
    Ok(Call {
        caller,
        extensions,
        headers: std::sync::Arc::new(headers),
        query: None,
    })
}

async fn run_unary(app: &App, call: &Call, rpc: &Rpc, params: Value) -> Result<Value, Status> {
    match ops::dispatch_v(app, call, rpc.name, params, Version::V1)
        .await
        .map(Outcome::into_unary)
    {
        Ok(Some(Ok(v))) => Ok(v),
        Ok(Some(Err(e))) | Err(e) => Err(a2a_status(&e)),
        Ok(None) => Err(Status::internal(format!(
            "{} produced a stream on a unary rpc",
            rpc.name
        ))),
    }
}

async fn run_stream(
    app: &App,
    call: &Call,
    rpc: &Rpc,
    params: Value,
) -> Result<EventStream, Status> {
    if rpc.name == "SendStreamingMessage"
        && params
            .pointer("/configuration/returnImmediately")
            .and_then(Value::as_bool)
            == Some(true)
    {
        return Err(a2a_status(&A2aError::new(
            ErrorKind::UnsupportedOperation,
            "returnImmediately is not supported on SendStreamingMessage",
        )));
    }
    let to_json =
        |ev: StreamResponse| serde_json::to_value(ev).map_err(|e| Status::internal(e.to_string()));
    match ops::dispatch_v(app, call, rpc.name, params, Version::V1).await {
        Ok(Outcome::Stream(sub)) => Ok(Box::pin(items(*sub).filter_map(move |item| {
            futures_util::future::ready(match item {
                // gRPC has no resume: a gap marker is an SSE comment only.
                Item::Gap(_) => None,
                Item::Event(_, ev, _) => Some(to_json(*ev)),
            })
        }))),
        Ok(Outcome::Single(ev)) => Ok(Box::pin(futures_util::stream::once(
            futures_util::future::ready(to_json(*ev)),
        ))),
        Ok(Outcome::Unary(_) | Outcome::Sent(_)) => Err(Status::internal(format!(
            "{} produced a unary result on a streaming rpc",
            rpc.name
        ))),
        Err(e) => Err(a2a_status(&e)),
    }
}
