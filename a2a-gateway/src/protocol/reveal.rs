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
