//! A caller's successful CancelTask ends the caller's open streams of that task: once the peer
//! answers with a task in a terminal state, every stream the gateway relays for the same
//! workspace, agent and task (SendStreamingMessage and SubscribeToTask) gets that final status
//! update, in its caller's version, and is closed by the gateway, even when the peer keeps its
//! own stream open. The streams are the session kill's registry ([`crate::governance::kill`]).

use serde_json::{Value, json};

use crate::protocol::errors::Version;
use crate::protocol::ops::Operation;
use crate::protocol::xlate;
use crate::{protocol::answer::Answer, state::GatewayState};

/// After `op` answered `answer` (in `caller`'s version): a CancelTask whose task is terminal
/// ends the open streams of `workspace`'s `agent` on that task. Returns how many it ended.
pub(crate) fn after_cancel(
    st: &GatewayState,
    workspace: &str,
    agent: &str,
    op: Operation,
    caller: Version,
    answer: &Answer,
) -> usize {
    let (Operation::CancelTask, Answer::Unary(res)) = (op, answer) else {
        return 0;
    };
    let Ok(task) = xlate::result(op, caller, Version::V1, res) else {
        return 0;
    };
    let Some(event) = final_update(&task) else {
        return 0;
    };
    let Some(id) = task.get("id").and_then(Value::as_str) else {
        return 0;
    };
    st.governance.streams.end_task(workspace, agent, id, &event)
}

/// The final status update (1.0 `StreamResponse`) of a 1.0 task in a terminal state.
fn final_update(task: &Value) -> Option<Value> {
    let status = task.get("status")?;
    let state: a2a_types::v1::TaskState =
        serde_json::from_value(status.get("state")?.clone()).ok()?;
    if !state.is_terminal() {
        return None;
    }
    Some(json!({"statusUpdate": {
        "taskId": task.get("id")?,
        "contextId": task.get("contextId").cloned().unwrap_or_else(|| json!("")),
        "status": status,
    }}))
}

/// Whether a relayed event (1.0 or 0.3 form) puts its task in a terminal state: after it, a
/// stream ended by a cancel sends no second final update.
pub(crate) fn is_terminal_event(ev: &Value) -> bool {
    let state = [
        &["statusUpdate", "status", "state"][..],
        &["task", "status", "state"],
        &["status", "state"],
    ]
    .iter()
    .find_map(|path| crate::protocol::member(ev, path))
    .and_then(Value::as_str);
    matches!(
        state,
        Some(
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
                | "completed"
                | "failed"
                | "canceled"
                | "rejected"
        )
    )
}

/// The events (in the caller's version `to`) a stream ended by [`after_cancel`] sends: the final
/// update, unless the stream already sent its task's terminal state.
pub(crate) fn closing_events(final_event: &Value, to: Version, already_final: bool) -> Vec<Value> {
    if already_final {
        return Vec::new();
    }
    match xlate::event(final_event.clone(), Version::V1, to) {
        Ok(ev) => vec![ev],
        Err(e) => {
            tracing::warn!("final update not translated: {e:?}");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_events_in_both_versions() {
        assert!(is_terminal_event(
            &json!({"statusUpdate": {"status": {"state": "TASK_STATE_CANCELED"}}})
        ));
        assert!(is_terminal_event(
            &json!({"kind": "status-update", "status": {"state": "canceled"}, "final": true})
        ));
        assert!(!is_terminal_event(
            &json!({"task": {"status": {"state": "TASK_STATE_WORKING"}}})
        ));
        assert!(!is_terminal_event(&json!({"artifactUpdate": {}})));
    }

    #[test]
    fn the_final_update_of_a_canceled_task_reads_in_both_versions() {
        let task = json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELED"}});
        let ev = final_update(&task).unwrap();
        assert_eq!(ev["statusUpdate"]["taskId"], "t");
        let v03 = closing_events(&ev, Version::V03, false);
        assert_eq!(v03[0]["kind"], "status-update");
        assert_eq!(v03[0]["final"], true);
        assert_eq!(v03[0]["status"]["state"], "canceled");
        assert!(closing_events(&ev, Version::V1, true).is_empty());
        let working =
            json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}});
        assert!(final_update(&working).is_none());
    }
}
