//! Reading either SDK's JSON dumps: task state, stream event kind, status text.

use serde_json::Value;

/// The task state in a dump of either SDK, normalised to the 0.3 spelling: `completed`,
/// `input-required`, `canceled`, ... Accepts a Task, a `{"task": ..}` send result, a status
/// update event (`{"statusUpdate": ..}` in 1.x, `kind: status-update` in 0.3) or a push body.
/// Returns an empty string when there is no state.
pub fn task_state(v: &Value) -> String {
    let status = status_of(v);
    let raw = status["state"].as_str().unwrap_or_default();
    raw.trim_start_matches("TASK_STATE_")
        .to_lowercase()
        .replace('_', "-")
}

/// The status of a Task, a `{"task": ..}` send result or a status update event (1.x
/// `{"statusUpdate": ..}`, 0.3 `kind: status-update`) in either SDK's dump (`Null` when none).
fn status_of(v: &Value) -> &Value {
    if let Some(t) = v.get("task") {
        &t["status"]
    } else if let Some(u) = v.get("statusUpdate") {
        &u["status"]
    } else {
        &v["status"]
    }
}

/// The kind of a stream event in a dump of either SDK: `task`, `status`, `artifact`, `message`,
/// or `unknown`.
pub fn event_kind(ev: &Value) -> &'static str {
    match ev.get("kind").and_then(Value::as_str) {
        Some("task") => "task",
        Some("status-update") => "status",
        Some("artifact-update") => "artifact",
        Some("message") => "message",
        _ if ev.get("task").is_some() => "task",
        _ if ev.get("statusUpdate").is_some() => "status",
        _ if ev.get("artifactUpdate").is_some() => "artifact",
        _ if ev.get("message").is_some() => "message",
        _ => "unknown",
    }
}

/// The text of the first part of the status message of a Task / send result / status event, in
/// either SDK's dump (`""` when absent).
pub fn status_text(v: &Value) -> String {
    let status = status_of(v);
    status["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
