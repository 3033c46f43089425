//! The 0.3 HTTP+JSON caller binding. 0.3 REST paths (`/v1/message:send`, `/v1/tasks/{id}:cancel`,
//! ...) under the 0.3 interface URL `/a2a/{agent}` are the same paths as the 1.0 ones under
//! `/a2a/{agent}/v1`, so both versions share the routes of [`crate::edge::rest`]; the negotiated
//! version (none or empty `A2A-Version` = 0.3) decides. A 0.3 request is turned into its 1.0
//! params here (by the agent's 0.3 edge, `a2a_agent::edge`, the same code the agent serves 0.3
//! REST with), runs the pipeline as a 1.0 call, and the 1.0 answer is turned back into the 0.3
//! dialect: ProtoJSON of the 0.3 proto, errors as `{code, message, data}` with the refusal's
//! HTTP status.

use crate::edge::refusal::rest03_refusal;
use crate::protocol::ops::GatewayOp;
use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

use a2a_agent::edge::{V03Stream, sse, v03_rest_push_request, v03_rest_result, v03_rest_send};

use crate::edge::record::record;
use crate::hop::call::Call;
use crate::protocol::ops::Operation;
use crate::protocol::render::json_response;
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

fn refused(e: a2a_agent::error::A2aError) -> Refusal {
    Refusal::invalid_params(&e.to_string())
}

/// The 1.0 params of a 0.3 REST request: `body` (the 0.3 form) and what the path and query gave
/// (`from_path`, already in 1.0 names).
pub(crate) fn params(
    op: Operation,
    body: Option<&[u8]>,
    from_path: &Value,
    query: Option<&str>,
) -> Result<Value, Refusal> {
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            let b = body.unwrap_or_default();
            let v: Value =
                serde_json::from_slice(b).map_err(|e| Refusal::parse_error(&e.to_string()))?;
            if !v.is_object() {
                return Err(Refusal::invalid_params("body: must be an object"));
            }
            v03_rest_send(v).map_err(refused)
        }
        Operation::CreateTaskPushNotificationConfig => {
            let task = from_path
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or("");
            let b = Bytes::copy_from_slice(body.unwrap_or_default());
            v03_rest_push_request(&Method::POST, task, None, query, &b)
                .map(|(_, p)| p)
                .map_err(refused)
        }
        Operation::ListTasks => Err(Refusal::method_not_found(
            "GET /v1/tasks: ListTasks is not an operation of A2A 0.3",
        )),
        _ => {
            let mut p = from_path.clone();
            // 0.3 ProtoJSON: `historyLength` 0 is proto3's unset, all of the history.
            if p.get("historyLength").and_then(Value::as_i64) == Some(0)
                && let Some(o) = p.as_object_mut()
            {
                o.remove("historyLength");
            }
            Ok(p)
        }
    }
}

/// The 1.0 answer of `op` in the 0.3 HTTP+JSON dialect.
pub(crate) fn answer(st: &GatewayState, call: &mut Call, op: Operation, a: Answer) -> Response {
    call.audit.client_version = Some("0.3".into());
    let unary = |st: &GatewayState, call: &mut Call, v: Value| match v03_rest_result(
        op.name(Version::V1),
        v,
    ) {
        Ok(body) => {
            record(st, call, None);
            json_response(StatusCode::OK, "application/json", &body)
        }
        Err(e) => rest03_refusal(st, call, Refusal::upstream_untranslatable(&e.to_string())),
    };
    match a {
        Answer::Unary(v) => unary(st, call, v),
        // Not chosen for these callers (`crate::protocol::passed::passable`); read like any other.
        Answer::Passed(p) => unary(st, call, p.into_value()),
        Answer::Stream(events) => {
            record(st, call, None);
            let trace = call.trace_id.clone();
            let mut tr = V03Stream::new(true);
            let mapped = events.flat_map(move |item| {
                let (item, id, mut gap) = match item {
                    Ok(ev) => match crate::tasks::resume::untag(ev) {
                        (Some(ev), id, gap) => (Ok(ev), id, gap),
                        (None, _, gap) => {
                            return futures::stream::iter(crate::tasks::resume::sse_events(
                                None, None, gap,
                            ));
                        }
                    },
                    Err(r) => (Err(r), None, None),
                };
                let out = match item {
                    Ok(ev) => match serde_json::from_value::<a2a_types::v1::StreamResponse>(ev) {
                        Ok(ev) => {
                            let last = ev.closes_live_stream();
                            tr.push(ev, last)
                                .into_iter()
                                .flat_map(|r| match r {
                                    Ok(v) => crate::tasks::resume::sse_events(
                                        Some(v.to_string()),
                                        id.clone(),
                                        gap.take(),
                                    ),
                                    Err(e) => vec![error_event(
                                        &Refusal::upstream_untranslatable(&e.to_string()),
                                        &trace,
                                    )],
                                })
                                .collect()
                        }
                        Err(e) => vec![error_event(
                            &Refusal::upstream_invalid_response(&e.to_string()),
                            &trace,
                        )],
                    },
                    Err(r) => vec![error_event(&r, &trace)],
                };
                futures::stream::iter(out)
            });
            sse::response(mapped, None)
        }
    }
}

/// A stream's error event: the 0.3 error object.
fn error_event(r: &Refusal, trace: &str) -> axum::response::sse::Event {
    sse::error(r.jsonrpc_error(Version::V03, trace).to_string())
}
