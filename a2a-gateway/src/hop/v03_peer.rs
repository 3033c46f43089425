//! What A2A 1.0 promises a caller and a 0.3 peer cannot do, done by the gateway itself:
//!
//! - SubscribeToTask starts with the Task (S1 §3.1.6), while a 0.3 peer's `tasks/resubscribe`
//!   only relays live events: the gateway opens the peer's subscription, then reads the task
//!   with GetTask and sends it first; a task in a terminal state is UnsupportedOperationError;
//! - ListTasks (S1 §3.1.4), which 0.3 does not have: served from the gateway's records of the
//!   owner's tasks, as at every peer (`super::list_tasks`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use serde_json::{Value, json};

use a2a_types::v1::TaskState;

use crate::outbound::PeerCall;
use crate::protocol::ops::Operation;
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// GetTask calls in flight at once while a ListTasks call reads its tasks.
pub use super::list_tasks::LIST_FETCH_CONCURRENCY;

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
        peer_nanos: Default::default(),
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
