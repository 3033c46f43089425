//! What A2A 1.0 promises a caller and a 0.3 peer cannot do, done by the gateway itself:
//!
//! - SubscribeToTask starts with the Task (S1 §3.1.6), while a 0.3 peer's `tasks/resubscribe`
//!   only relays live events: the gateway opens the peer's subscription, then reads the task
//!   with GetTask and sends it first; a task in a terminal state is UnsupportedOperationError;
//! - ListTasks (S1 §3.1.4), which 0.3 does not have: served from the gateway's ownership records
//!   of the owner's tasks at that peer, each task read with GetTask (bounded concurrency; a task
//!   the peer no longer knows is left out), filtered, ordered and paged by the gateway.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use a2a_types::v1::TaskState;

use crate::protocol::history;
use crate::protocol::ops::Operation;
use crate::protocol::xlate;
use crate::{hop::listing::ListPage, hop::listing::status_timestamp};
use crate::{outbound, outbound::PeerCall};
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
use crate::{tasks::ownership::Owner, tasks::ownership::OwnershipStore};

/// Most recent ownership records a ListTasks call reads (older tasks are not listed).
pub const MAX_LISTED_TASKS: usize = 1000;
/// GetTask calls in flight at once while a ListTasks call reads its tasks.
pub const LIST_FETCH_CONCURRENCY: usize = 8;

/// The state of a 1.0 task (`status.state`), if it reads.
fn state(task: &Value) -> Option<TaskState> {
    serde_json::from_value(task.pointer("/status/state")?.clone()).ok()
}

/// A 1.0 caller's SubscribeToTask at a 0.3 peer: the Task first, then the peer's live events,
/// and, when the peer's stream ends without a terminal event (some 0.3 servers close it after a
/// cancel without sending the canceled update), the task's final state read from the peer.
/// `ctx.caller` is 1.0; `peer_params` are the 0.3 params (`{"id"}`).
pub(crate) async fn subscribe(
    st: &Arc<GatewayState>,
    ctx: &PeerCall<'_>,
    peer_params: Value,
) -> Result<Answer, Refusal> {
    let id = peer_params.get("id").cloned().unwrap_or(Value::Null);
    // The subscription first, so that nothing that happens after the task is read is missed.
    let live = ctx.call(Operation::SubscribeToTask, peer_params).await;
    let task = match ctx.call(Operation::GetTask, json!({ "id": id })).await? {
        Answer::Unary(t) => t,
        Answer::Passed(p) => p.into_value(),
        Answer::Stream(_) => return Err(Refusal::upstream_invalid_response("expected a task")),
    };
    if state(&task).is_some_and(TaskState::is_terminal) {
        return Err(Refusal::unsupported_operation(
            "SubscribeToTask on a task in a terminal state",
        ));
    }
    let Answer::Stream(events) = live? else {
        return Err(Refusal::upstream_invalid_response(
            "expected an event stream",
        ));
    };
    let first = futures::stream::once(async move { Ok(json!({ "task": task })) });
    let ended = Arc::new(AtomicBool::new(false));
    let seen = ended.clone();
    let events = events.inspect(move |ev| {
        // a terminal event, or an error (the final event of its own), ends the caller's stream
        let last = match ev {
            Ok(v) => ["/statusUpdate", "/task"].iter().any(|at| {
                v.pointer(at)
                    .and_then(state)
                    .is_some_and(TaskState::is_terminal)
            }),
            Err(_) => true,
        };
        if last {
            seen.store(true, Ordering::Relaxed);
        }
    });
    let tail = final_state(FinalRead::of(st, ctx, id), ended);
    let tail = futures::stream::once(tail).filter_map(|ev| async move { ev.map(Ok) });
    Ok(Answer::Stream(Box::pin(first.chain(events).chain(tail))))
}

/// What reading a task's final state after the caller's stream needs, owned (the stream outlives
/// the hop's borrowed [`PeerCall`]).
struct FinalRead {
    st: Arc<GatewayState>,
    agent: crate::store::Agent,
    chosen: crate::peer::Chosen,
    traceparent: String,
    hops: u32,
    max_resp: u64,
    max_stream: u64,
    gov: Option<Arc<crate::governance::HopGov>>,
    id: Value,
}

impl FinalRead {
    fn of(st: &Arc<GatewayState>, ctx: &PeerCall<'_>, id: Value) -> FinalRead {
        FinalRead {
            st: st.clone(),
            agent: ctx.agent.clone(),
            chosen: ctx.chosen.clone(),
            traceparent: ctx.traceparent.clone(),
            hops: ctx.hops,
            max_resp: ctx.max_resp,
            max_stream: ctx.max_stream,
            gov: ctx.gov.clone(),
            id,
        }
    }
}

/// Once the peer's stream has ended without a terminal event (`ended` false): the task read from
/// the peer, as a final status update when it has reached a terminal state.
async fn final_state(r: FinalRead, ended: Arc<AtomicBool>) -> Option<Value> {
    if ended.load(Ordering::Relaxed) {
        return None;
    }
    let ctx = PeerCall {
        st: &r.st,
        agent: &r.agent,
        chosen: &r.chosen,
        caller: Version::V1,
        traceparent: r.traceparent,
        hops: r.hops,
        id: json!(crate::ids::id_hex(8)),
        max_resp: r.max_resp,
        max_stream: r.max_stream,
        gov: r.gov,
        open: None,
    };
    let Ok(Answer::Unary(task)) = ctx.call(Operation::GetTask, json!({ "id": r.id })).await else {
        return None;
    };
    state(&task).filter(|s| s.is_terminal())?;
    Some(json!({"statusUpdate": {
        "taskId": task.get("id"),
        "contextId": task.get("contextId"),
        "status": task.get("status"),
    }}))
}

/// The 1.0 ListTasks filters of a request.
struct Filters {
    context: Option<String>,
    status: Option<TaskState>,
    after: Option<OffsetDateTime>,
    artifacts: bool,
    history: Option<usize>,
}

impl Filters {
    fn read(params: &Value) -> Result<Filters, Refusal> {
        let status = match params.get("status") {
            None | Some(Value::Null) => None,
            Some(v) => Some(serde_json::from_value::<TaskState>(v.clone()).map_err(|_| {
                Refusal::invalid_params(&format!("params.status: not a task state: {v}"))
            })?),
        };
        let after = match params.get("statusTimestampAfter").and_then(Value::as_str) {
            None => None,
            Some(t) => Some(OffsetDateTime::parse(t, &Rfc3339).map_err(|e| {
                Refusal::invalid_params(&format!(
                    "params.statusTimestampAfter: not an RFC 3339 timestamp: {e}"
                ))
            })?),
        };
        Ok(Filters {
            context: params
                .get("contextId")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            status: status.filter(|s| *s != TaskState::Unspecified),
            after,
            artifacts: params.get("includeArtifacts").and_then(Value::as_bool) == Some(true),
            history: history::history_limit(Operation::GetTask, Version::V1, params),
        })
    }

    fn keeps(&self, task: &Value) -> bool {
        let context = task.get("contextId").and_then(Value::as_str);
        self.context.as_deref().is_none_or(|c| context == Some(c))
            && self.status.is_none_or(|s| state(task) == Some(s))
            && self
                .after
                .is_none_or(|a| status_timestamp(task).is_some_and(|t| t >= a))
    }

    /// The task as listed: artifacts only when asked for, history trimmed.
    fn shape(&self, mut task: Value) -> Value {
        if !self.artifacts
            && let Some(o) = task.as_object_mut()
        {
            o.remove("artifacts");
        }
        history::trim_history(Operation::GetTask, self.history, &mut task);
        task
    }
}

/// ListTasks for a 0.3 peer, from the owner's records (see the module documentation). `params`
/// are the caller's ListTasks params (the 1.0 shape, also for 0.3 JSON-RPC callers); the answer
/// is in the caller's version.
pub(crate) async fn list(
    st: &GatewayState,
    ctx: &PeerCall<'_>,
    owners: &dyn OwnershipStore,
    endpoint: &str,
    owner: &Owner,
    params: &Value,
) -> Result<Answer, Refusal> {
    let page = ListPage::read(st, owner, params)?;
    let filters = Filters::read(params)?;
    let records = owners
        .list(endpoint, owner, 0, i64::MAX)
        .map_err(|e| Refusal::internal(&e.to_string()))?;
    let skip = records.len().saturating_sub(MAX_LISTED_TASKS);
    // Each task in 1.0 terms, whatever the caller's version.
    let v1 = PeerCall {
        st: ctx.st,
        agent: ctx.agent,
        chosen: ctx.chosen,
        caller: Version::V1,
        traceparent: ctx.traceparent.clone(),
        hops: ctx.hops,
        id: ctx.id.clone(),
        max_resp: ctx.max_resp,
        max_stream: ctx.max_stream,
        gov: ctx.gov.clone(),
        open: None,
    };
    let history = filters.history;
    let fetched: Vec<Result<Option<Value>, Refusal>> =
        futures::stream::iter(records.into_iter().skip(skip))
            .map(|(_, id)| {
                let v1 = &v1;
                let mut get = json!({ "id": id });
                if let Some(h) = history {
                    get["historyLength"] = json!(h);
                }
                async move {
                    let p = outbound::peer_params(
                        Operation::GetTask,
                        Version::V1,
                        v1.chosen,
                        &get,
                        false,
                    )?;
                    match v1.call(Operation::GetTask, p).await {
                        Ok(Answer::Unary(t)) => Ok(Some(t)),
                        Ok(Answer::Passed(p)) => Ok(Some(p.into_value())),
                        Ok(Answer::Stream(_)) => {
                            Err(Refusal::upstream_invalid_response("expected a task"))
                        }
                        // A task the peer no longer knows is not listed.
                        Err(r) if r.rpc_code == -32001 => Ok(None),
                        Err(r) => Err(r),
                    }
                }
            })
            .buffer_unordered(LIST_FETCH_CONCURRENCY)
            .collect()
            .await;
    let mut tasks = Vec::new();
    for t in fetched {
        if let Some(t) = t?
            && filters.keeps(&t)
        {
            tasks.push(filters.shape(t));
        }
    }
    // Newest status first (S1 §3.1.4); ties and tasks without a timestamp by id.
    tasks.sort_by(|a, b| {
        status_timestamp(b).cmp(&status_timestamp(a)).then_with(|| {
            a.get("id")
                .and_then(Value::as_str)
                .cmp(&b.get("id").and_then(Value::as_str))
        })
    });
    let out = page.answer(st, tasks, json!({}));
    xlate::result(Operation::ListTasks, Version::V1, ctx.caller, &out)
        .map(Answer::Unary)
        .map_err(outbound::map_answer_error)
}
