//! The JSON-RPC 2.0 binding (`POST {base}/`): every 1.0 method, and the 0.3 methods through the
//! edge translation.

use super::sse::sse_response;
use crate::edge;
use crate::edge::version::Version;
use crate::error::{A2aError, ErrorKind};
use crate::ops::{self, Outcome};
use crate::state::{App, Call};
use a2a_types::envelope::{EnvelopeError, EnvelopeErrorKind, RawId, parse_envelope};
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;

fn text_json(body: impl Into<axum::body::Body>) -> Response {
    let mut r = Response::new(body.into());
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn reply(id: &RawId, result: Value) -> Response {
    text_json(id.result_text(&result))
}

fn reply_err(id: &RawId, e: &A2aError, v: Version) -> Response {
    crate::otel::note("a2a.refusal_code", e.kind.name_v1());
    text_json(id.error_text(&e.jsonrpc_error(v)))
}

/// A 1.0 stream event as one JSON-RPC answer's text, written straight from the typed event; an
/// event that cannot be written (no A2A event is one) is an internal error's answer instead.
fn event_text(id: &RawId, ev: &crate::model::StreamResponse) -> String {
    // Room for a whole event at once, as for a send's answer (no regrowth of the buffer).
    let text = id
        .result_bytes_of(ev, ops::SENT_CAPACITY)
        .map_err(|e| e.to_string())
        .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()));
    text.unwrap_or_else(|e| id.error_text(&A2aError::internal(e).jsonrpc_error(Version::V1)))
}

/// The JSON-RPC answers of the 0.3 events one event becomes (a failed translation: its error's
/// answer).
fn v03_event_texts(
    id: &RawId,
    tr: &mut edge::V03Stream,
    ev: crate::model::StreamResponse,
    last: bool,
) -> Vec<String> {
    tr.push(ev, last)
        .into_iter()
        .map(|r| match r {
            Ok(v) => id.result_text(&v),
            Err(e) => id.error_text(&e.jsonrpc_error(Version::V03)),
        })
        .collect()
}

/// The envelope refusal as an A2A error (the answer's id is `null`).
fn envelope_error(e: &EnvelopeError) -> A2aError {
    match e.kind {
        EnvelopeErrorKind::NotJson => A2aError::new(
            ErrorKind::JsonParse,
            format!("Invalid JSON payload: {}", e.detail),
        ),
        _ => A2aError::new(
            ErrorKind::InvalidRequest,
            format!("Request payload validation error: {}", e.detail),
        ),
    }
}

/// A JSON-RPC request read at the edge: the exact id, the version, the 1.0 method and params.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The caller's id, exactly.
    pub id: RawId,
    /// The version whose forms the answer uses.
    pub version: Version,
    /// The 1.0 method name.
    pub method: String,
    /// The 1.0 params (0.3 requests translated).
    pub params: Value,
}

/// Reads a JSON-RPC body (pure: no state). `explicit` is the negotiated `A2A-Version`, if any.
/// A refusal comes with the id and the version to answer with.
pub fn parse(body: &[u8], explicit: Option<Version>) -> Result<Parsed, (RawId, A2aError, Version)> {
    let fallback_v = explicit.unwrap_or(Version::V03);
    // The id is kept as the caller's exact text; ids of other JSON types and batches are refused.
    let mut env =
        parse_envelope(body).map_err(|e| (RawId::null(), envelope_error(&e), fallback_v))?;
    // Taken out of the envelope (not copied): the rest is only looked at.
    let params = env.members.remove("params").unwrap_or(Value::Null);
    let id = env.id.clone();
    let obj = &env.members;
    let Some(method) = env.method() else {
        return Err((
            id,
            A2aError::new(
                ErrorKind::InvalidRequest,
                "Request payload validation error: not a JSON-RPC 2.0 request",
            ),
            fallback_v,
        ));
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((
            id,
            A2aError::new(
                ErrorKind::InvalidRequest,
                "Request payload validation error: jsonrpc must be \"2.0\"",
            ),
            fallback_v,
        ));
    }
    let is_v1_name = a2a_types::jsonrpc::V1Method::from_name(method).is_some();
    // No version named: 0.3 (S1 §3.6.2), whatever the method name; a 1.0 name is then unknown.
    let version = explicit.unwrap_or(Version::V03);
    let (m1, p1) = match version {
        Version::V1 if !is_v1_name => {
            return Err((
                id,
                A2aError::new(
                    ErrorKind::MethodNotFound,
                    format!("Method not found: {method}"),
                ),
                version,
            ));
        }
        Version::V1 => (method.to_owned(), params),
        Version::V03 => match edge::v03_jsonrpc_request(method, params) {
            Ok((m, p)) => (m.to_owned(), p),
            Err(e) => return Err((id, e, version)),
        },
    };
    Ok(Parsed {
        id,
        version,
        method: m1,
        params: p1,
    })
}

pub(crate) async fn handle(
    app: &App,
    explicit: Option<Version>,
    call: &Call,
    body: Bytes,
) -> Response {
    crate::otel::note("a2a.caller.binding", "JSONRPC");
    // A 1.0 send of the common shape is read by type (no JSON trees); the rest as a tree.
    if explicit == Some(Version::V1)
        && let Some(s) = crate::typed_send::jsonrpc_send(&body)
    {
        crate::otel::note("a2a.caller.version", Version::V1.as_str());
        let m1 = if s.streaming {
            "SendStreamingMessage"
        } else {
            "SendMessage"
        };
        let out = ops::send_op(
            app,
            call,
            s.streaming,
            ops::SendParams::Typed(Box::new(s.send)),
        )
        .await;
        return answer(app, &s.id, Version::V1, m1, out);
    }
    let Parsed {
        id,
        version,
        method: m1,
        params: p1,
    } = match parse(&body, explicit) {
        Ok(p) => p,
        Err((id, e, v)) => return reply_err(&id, &e, v),
    };
    crate::otel::note("a2a.caller.version", version.as_str());
    let out = ops::dispatch_v(app, call, &m1, p1, version).await;
    answer(app, &id, version, &m1, out)
}

/// The answer to 1.0 method `m1` called in `version`, with id `id`.
fn answer(
    app: &App,
    id: &RawId,
    version: Version,
    m1: &str,
    out: Result<Outcome, A2aError>,
) -> Response {
    let heartbeat = app.cfg().sse_heartbeat_interval.get();
    // 0.3 `message/stream` and `tasks/resubscribe`: a failure is one SSE error event (as the
    // official SDK servers answer; the 0.3 SDK client refuses a JSON body there).
    let v03_stream =
        version == Version::V03 && matches!(m1, "SendStreamingMessage" | "SubscribeToTask");
    match out {
        Err(e) if v03_stream => edge::sse::single(id.error_text(&e.jsonrpc_error(version))),
        Err(e) => reply_err(id, &e, version),
        Ok(Outcome::Sent(r)) if version == Version::V1 => {
            match id.result_bytes_of(&*r, ops::SENT_CAPACITY) {
                Ok(bytes) => text_json(bytes),
                Err(e) => reply_err(id, &A2aError::internal(e.to_string()), version),
            }
        }
        Ok(out @ (Outcome::Unary(_) | Outcome::Sent(_))) => {
            let r = out
                .into_unary()
                .unwrap_or_else(|| Err(A2aError::internal("no unary result")));
            match r.and_then(|r| match version {
                Version::V1 => Ok(r),
                Version::V03 => edge::v03_result(m1, r),
            }) {
                Ok(r) => reply(id, r),
                Err(e) => reply_err(id, &e, version),
            }
        }
        Ok(Outcome::Single(ev)) => {
            let data = match version {
                Version::V1 => vec![event_text(id, &ev)],
                Version::V03 => v03_event_texts(id, &mut edge::V03Stream::new(false), *ev, true),
            };
            edge::sse::response(
                futures_util::stream::iter(data.into_iter().map(edge::sse::data)),
                None,
            )
        }
        Ok(Outcome::Stream(sub)) => {
            let id2 = id.clone();
            match version {
                Version::V1 => {
                    sse_response(*sub, heartbeat, move |ev, _| vec![event_text(&id2, &ev)])
                }
                Version::V03 => {
                    let mut tr = edge::V03Stream::new(false);
                    sse_response(*sub, heartbeat, move |ev, last| {
                        v03_event_texts(&id2, &mut tr, ev, last)
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SendMessageRequest;
    use serde::Deserialize;
    use serde_json::json;

    /// The typed read of a 1.0 send (`typed_send`) and this binding's general read agree.
    #[test]
    fn the_jsonrpc_read_agrees_with_the_general_one() {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"SendMessage","extra":{"a":1},
            "params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}"#;
        let fast =
            crate::typed_send::jsonrpc_send(&Bytes::copy_from_slice(body.as_bytes())).unwrap();
        let general = parse(body.as_bytes(), Some(Version::V1)).unwrap();
        assert_eq!(fast.id, general.id);
        assert_eq!(general.method, "SendMessage");
        // The general path's reading of the same params.
        let mut v = general.params.clone();
        let req = SendMessageRequest::deserialize(&v).unwrap();
        let raw = v.get_mut("message").map(Value::take).unwrap();
        assert_eq!(fast.send.request, req);
        assert_eq!(fast.send.raw.message(), Some(raw.clone()));
        assert_eq!(
            raw,
            json!({"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]})
        );
    }
}
