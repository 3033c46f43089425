//! The HTTP+JSON caller binding (`/a2a/{agent}/v1/...`; 0.3 requests are converted by
//! [`crate::edge::rest03`]): the edge steps of
//! [`crate::hop::STEPS`] for HTTP+JSON, path and query into params, one [`Operation`] handed
//! to [`crate::hop::execute`], and the answer (JSON or SSE) as HTTP+JSON.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};
use tracing::Instrument;

use a2a_agent::edge::routes::{Op as RestOp, parse_decoded_op};

use crate::edge::record::record;
use crate::hop::auth::authenticate;
use crate::hop::call::Call;
use crate::hop::execute;
use crate::protocol::ops::GatewayOp;
use crate::protocol::ops::Operation;
use crate::{
    edge::content_type_ok, edge::negotiate_on, edge::refusal::rest_refusal,
    edge::requested_version, protocol::render::json_response,
};
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

pub(crate) async fn rest_entry(
    st: Arc<GatewayState>,
    agent: String,
    headers: HeaderMap,
    query: Option<String>,
    op: Operation,
    body: Option<Bytes>,
    params_from_path: Value,
) -> Response {
    let mut call = Call::new(&headers, Binding::HttpJson);
    call.audit.target = Some(agent.clone());
    call.audit.operation = Some(op.name_03().to_owned());
    call.audit.client_method = Some(format!("HTTP+JSON {}", op.path()));
    call.version = Version::V1;
    // Both versions on the same routes (see `crate::edge::rest03`): a request that names no version
    // is 0.3 (S1 §3.6.2: empty = 0.3); without `serve_v1` only 0.3 is served.
    let requested = requested_version(&headers, query.as_deref());
    let (serves, advertised): (&[Version], &[&str]) = if st.config().serve_v1 {
        (&[Version::V1, Version::V03], &["0.3", "1.0"])
    } else {
        (&[Version::V03], &["0.3"])
    };
    let v03 = match negotiate_on(requested.as_deref(), serves, Some(advertised)) {
        Ok(v) => v == Version::V03,
        // A refused 0.x version is answered in the 0.3 form, anything else in 1.0's.
        Err((r, Version::V03)) => {
            return crate::edge::refusal::rest03_refusal(&st, &mut call, r);
        }
        Err((r, _)) => return rest_refusal(&st, &mut call, r),
    };
    let refuse = |st: &GatewayState, call: &mut Call, r: Refusal| {
        if v03 {
            crate::edge::refusal::rest03_refusal(st, call, r)
        } else {
            rest_refusal(st, call, r)
        }
    };
    if body.is_some()
        && let Err(r) = content_type_ok(&headers)
    {
        return refuse(&st, &mut call, r);
    }
    let key = call.step("key");
    let principal = authenticate(&st, &headers).await;
    drop(key);
    let principal = match principal {
        Ok(p) => p,
        Err(r) => return refuse(&st, &mut call, r),
    };
    call.audit.workspace_id = Some(principal.workspace_id.clone());
    call.audit.key_id = Some(principal.key_id.clone());
    if v03 {
        call.push_as = Some(Version::V03);
    }
    let max_chars = st.config().limits.max_message_chars;
    let params = if v03 {
        crate::edge::rest03::params(op, body.as_deref(), &params_from_path, query.as_deref())
            .and_then(|p| {
                crate::edge::wire::parse_rest_body(
                    Some(p.to_string().as_bytes()),
                    &json!({}),
                    max_chars,
                )
            })
    } else {
        crate::edge::wire::parse_rest_body(body.as_deref(), &params_from_path, max_chars)
    };
    let params = match params {
        Ok(p) => p,
        Err(r) => return refuse(&st, &mut call, r),
    };
    let span = call.hop_span(op, &agent, &principal.workspace_id);
    let upstream = match crate::tasks::resume::subscribe_from(op, &headers) {
        Ok(u) => u,
        Err(r) => return refuse(&st, &mut call, r),
    };
    let run = execute(&st, &mut call, &agent, &principal, op, params).instrument(span);
    let answer = crate::tasks::resume::with_upstream(upstream, run).await;
    let answered = answer.is_ok();
    let mut resp = match answer {
        Err(r) => refuse(&st, &mut call, r),
        Ok(a) if v03 => crate::edge::rest03::answer(&st, &mut call, op, a),
        Ok(Answer::Unary(result)) => {
            record(&st, &mut call, None);
            json_response(StatusCode::OK, call.json_content_type(), &result)
        }
        Ok(Answer::Passed(p)) => {
            record(&st, &mut call, None);
            crate::protocol::render::json_text_response(
                StatusCode::OK,
                call.json_content_type(),
                p.text().to_owned(),
            )
        }
        Ok(Answer::Stream(events)) => {
            record(&st, &mut call, None);
            let trace = call.trace_id.clone();
            let mapped = events.flat_map(move |item| {
                futures::stream::iter(match item {
                    Ok(ev) => {
                        let (ev, id, gap) = crate::tasks::resume::untag(ev);
                        crate::tasks::resume::sse_events(ev.map(|e| e.to_string()), id, gap)
                    }
                    Err(r) => vec![a2a_agent::edge::sse::error(
                        r.status_body(&trace).to_string(),
                    )],
                })
            });
            a2a_agent::edge::sse::response(mapped, None)
        }
    };
    if answered && resp.status().is_success() {
        let caller = if v03 { Version::V03 } else { Version::V1 };
        crate::governance::extensions::answer_headers(
            call.ext_activated.as_deref(),
            caller,
            resp.headers_mut(),
        );
    }
    crate::trust::stamp(resp, call.audit.signature_trust.as_deref())
}

pub(crate) fn query_params(query: Option<&str>) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    // JSON names taken from a proto name, with that name.
    let mut from_snake: Vec<(String, String)> = Vec::new();
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            if k.eq_ignore_ascii_case("a2a-version") {
                continue;
            }
            // A query member under its proto name (`page_size`) is read under its JSON name, as
            // a body member is; given under both, both stay and validation refuses the pair.
            let k = match a2a_types::strict::snake_to_camel(&k) {
                Some(c) if !out.contains_key(&c) => {
                    from_snake.push((c.clone(), k.into_owned()));
                    std::borrow::Cow::Owned(c)
                }
                Some(_) => k,
                None => {
                    if let Some(i) = from_snake.iter().position(|(c, _)| *c == k) {
                        let (c, snake) = from_snake.swap_remove(i);
                        if let Some(v) = out.remove(&c) {
                            out.insert(snake, v);
                        }
                    }
                    k
                }
            };
            let val = match k.as_ref() {
                "pageSize" | "historyLength" => v
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(v.into_owned())),
                "includeArtifacts" => Value::Bool(v == "true"),
                _ => Value::String(v.into_owned()),
            };
            out.insert(k.into_owned(), val);
        }
    }
    out
}

pub(crate) async fn rest_send(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::SendMessage,
        Some(body),
        json!({}),
    )
    .await
}

pub(crate) async fn rest_stream(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::SendStreamingMessage,
        Some(body),
        json!({}),
    )
    .await
}

pub(crate) async fn rest_list(
    State(st): State<Arc<GatewayState>>,
    Path(agent): Path<String>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let p = Value::Object(query_params(q.as_deref()));
    rest_entry(st, agent, headers, q, Operation::ListTasks, None, p).await
}

pub(crate) async fn rest_task_get(
    State(st): State<Arc<GatewayState>>,
    Path((agent, id)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    // The verb split of `tasks/{id}:verb` is the shared route table's.
    if let Some(RestOp::Subscribe(task)) = parse_decoded_op(&["tasks", &id]) {
        return rest_entry(
            st,
            agent,
            headers,
            q,
            Operation::SubscribeToTask,
            None,
            json!({"id": task}),
        )
        .await;
    }
    let mut p = query_params(q.as_deref());
    p.insert("id".into(), json!(id));
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::GetTask,
        None,
        Value::Object(p),
    )
    .await
}

pub(crate) async fn rest_task_post(
    State(st): State<Arc<GatewayState>>,
    Path((agent, id)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = (!body.is_empty()).then_some(body);
    let (op, body, task) = match parse_decoded_op(&["tasks", &id]) {
        Some(RestOp::Cancel(task)) => (Operation::CancelTask, body, task),
        Some(RestOp::Subscribe(task)) => (Operation::SubscribeToTask, None, task),
        _ => {
            let mut call = Call::new(&headers, Binding::HttpJson);
            call.version = Version::V1;
            let r = Refusal::method_not_found(&format!("POST tasks/{id}"));
            // In the caller's version's form (none named: 0.3).
            let requested = requested_version(&headers, q.as_deref());
            let v = match crate::edge::negotiate(requested.as_deref(), st.config().serve_v1) {
                Ok(v) | Err((_, v)) => v,
            };
            return match v {
                Version::V03 => crate::edge::refusal::rest03_refusal(&st, &mut call, r),
                Version::V1 => rest_refusal(&st, &mut call, r),
            };
        }
    };
    rest_entry(st, agent, headers, q, op, body, json!({"id": task})).await
}

pub(crate) async fn rest_push_list(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    let mut p = query_params(q.as_deref());
    p.insert("taskId".into(), json!(task));
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::ListTaskPushNotificationConfigs,
        None,
        Value::Object(p),
    )
    .await
}

pub(crate) async fn rest_push_set(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task)): Path<(String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::CreateTaskPushNotificationConfig,
        Some(body),
        json!({"taskId": task}),
    )
    .await
}

pub(crate) async fn rest_push_get(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task, cfg)): Path<(String, String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::GetTaskPushNotificationConfig,
        None,
        json!({"taskId": task, "id": cfg}),
    )
    .await
}

pub(crate) async fn rest_push_delete(
    State(st): State<Arc<GatewayState>>,
    Path((agent, task, cfg)): Path<(String, String, String)>,
    RawQuery(q): RawQuery,
    headers: HeaderMap,
) -> Response {
    rest_entry(
        st,
        agent,
        headers,
        q,
        Operation::DeleteTaskPushNotificationConfig,
        None,
        json!({"taskId": task, "id": cfg}),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::query_params;
    use serde_json::json;

    #[test]
    fn query_members_under_proto_names_are_read_under_json_names() {
        let q = query_params(Some("page_size=2&history_length=1&include_artifacts=true"));
        assert_eq!(
            serde_json::Value::Object(q),
            json!({"pageSize": 2, "historyLength": 1, "includeArtifacts": true})
        );
        // Both spellings, in either order: both stay, so validation refuses the pair.
        for q in ["page_size=2&pageSize=3", "pageSize=3&page_size=2"] {
            let m = query_params(Some(q));
            assert_eq!(m.len(), 2, "{q}: {m:?}");
            assert!(
                m.contains_key("pageSize") && m.contains_key("page_size"),
                "{q}"
            );
        }
    }
}
