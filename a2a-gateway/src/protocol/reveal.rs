//! Where a task id sits in an answer or a stream event, in either version's shape.

use serde_json::Value;

/// The task id an answer or stream event reveals (either version's shape), if any.
pub fn revealed_task(v: &Value) -> Option<String> {
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_owned);
    if v.get("kind").and_then(Value::as_str) == Some("task") {
        return s("/id");
    }
    s("/task/id")
        .or_else(|| s("/taskId"))
        .or_else(|| s("/message/taskId"))
        .or_else(|| s("/statusUpdate/taskId"))
        .or_else(|| s("/artifactUpdate/taskId"))
}

/// The id of a task inside a ListTasks answer entry.
pub fn listed_task_id(v: &Value) -> Option<&str> {
    v.get("id").and_then(Value::as_str)
}

/// What an answer, stream event or push notification says of a task's status, in 1.0 terms
/// (the records ListTasks is answered from, `crate::tasks::ownership`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFacts {
    /// The task.
    pub task_id: String,
    /// Its context, when named.
    pub context_id: Option<String>,
    /// Its state.
    pub state: a2a_types::v1::TaskState,
    /// The status timestamp in Unix nanoseconds, when it has one that reads.
    pub status_at: Option<i64>,
}

/// The status a Task or status update reveals (either version's shape: a 1.0 Task, `task` or
/// `statusUpdate` member; a 0.3 `kind: task` or `kind: status-update` object), if any. Messages
/// and artifact updates reveal none.
pub fn revealed_status(v: &Value) -> Option<TaskFacts> {
    if let Some(t) = v.get("task").filter(|t| t.is_object()) {
        return status_of(t, "id");
    }
    if let Some(u) = v.get("statusUpdate").filter(|u| u.is_object()) {
        return status_of(u, "taskId");
    }
    match v.get("kind").and_then(Value::as_str) {
        Some("task") | None => status_of(v, "id"),
        Some("status-update") => status_of(v, "taskId"),
        Some(_) => None,
    }
}

fn status_of(o: &Value, id: &str) -> Option<TaskFacts> {
    let task_id = o.get(id)?.as_str()?;
    let status = o.get("status")?;
    Some(TaskFacts {
        task_id: task_id.to_owned(),
        context_id: o
            .get("contextId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        state: task_state(status.get("state")?.as_str()?)?,
        status_at: status
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(status_nanos),
    })
}

/// A state by its 1.0 name, its 0.3 name, or the 0.3 proto's (`TASK_STATE_CANCELLED`).
pub fn task_state(s: &str) -> Option<a2a_types::v1::TaskState> {
    use a2a_types::v1::TaskState;
    if s == "TASK_STATE_CANCELLED" {
        return Some(TaskState::Canceled);
    }
    TaskState::from_name(s).or_else(|| {
        serde_json::from_value::<a2a_types::v03::TaskState>(Value::String(s.to_owned()))
            .ok()
            .map(a2a_translate::to_v1::task_state)
    })
}

/// An RFC 3339 status timestamp in Unix nanoseconds (the listing's order and its
/// `statusTimestampAfter` filter).
pub fn status_nanos(t: &str) -> Option<i64> {
    let t = time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()?;
    Some(nanos(t))
}

/// `t` in Unix nanoseconds, saturated to the range of an `i64` (years 1677 to 2262): the order
/// holds, and a time past it compares as the largest.
pub fn nanos(t: time::OffsetDateTime) -> i64 {
    let n = t.unix_timestamp_nanos();
    i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::v1::TaskState;
    use serde_json::json;

    #[test]
    fn statuses_of_either_version() {
        let st = json!({"state": "TASK_STATE_WORKING", "timestamp": "1970-01-01T00:00:01Z"});
        let want = |id: &str, s: TaskState, at: Option<i64>| TaskFacts {
            task_id: id.into(),
            context_id: Some("c".into()),
            state: s,
            status_at: at,
        };
        let one = Some(want("t", TaskState::Working, Some(1_000_000_000)));
        assert_eq!(status_nanos("2999-01-01T00:00:00Z"), Some(i64::MAX));
        let task = json!({"id": "t", "contextId": "c", "status": st});
        assert_eq!(revealed_status(&task), one);
        assert_eq!(revealed_status(&json!({ "task": task })), one);
        let up = json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": st}});
        assert_eq!(revealed_status(&up), one);
        let v03 = json!({"kind": "status-update", "taskId": "t", "contextId": "c",
            "status": {"state": "input-required"}, "final": true});
        assert_eq!(
            revealed_status(&v03),
            Some(want("t", TaskState::InputRequired, None))
        );
        let v03 = json!({"kind": "task", "id": "t", "contextId": "c",
            "status": {"state": "canceled"}});
        assert_eq!(
            revealed_status(&v03),
            Some(want("t", TaskState::Canceled, None))
        );
        for none in [
            json!({"message": {"messageId": "m", "taskId": "t"}}),
            json!({"kind": "message", "taskId": "t"}),
            json!({"artifactUpdate": {"taskId": "t"}}),
            json!({"kind": "artifact-update", "taskId": "t", "status": st}),
        ] {
            assert_eq!(revealed_status(&none), None, "{none}");
        }
    }
}
