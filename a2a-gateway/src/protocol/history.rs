//! History lengths in the caller's terms, whatever the peer's version: in 1.0 `historyLength: 0`
//! is no history and unset no limit, in 0.3 `0` is no limit (P0; the official SDKs read it so).
//! A 1.0 `0` toward a 0.3 peer is asked as `1` (`crate::protocol::xlate::request`); every GetTask and
//! SendMessage answer (and the Task event of a streamed send) is then trimmed to the caller's
//! limit here.

use a2a_translate::to_v1;
use futures::StreamExt;
use serde_json::Value;

use crate::protocol::answer::Answer;
use crate::protocol::errors::Version;
use crate::protocol::ops::Operation;

/// The history limit a caller's request of `op` sets, in 1.0 terms (`None`: no limit): GetTask's
/// `historyLength` or a send's `configuration.historyLength`, where a 0.3 `0` means no limit
/// (`a2a_translate::to_v1::history_length`) and a 1.0 `0` means no history.
pub fn history_limit(op: Operation, caller: Version, params: &Value) -> Option<usize> {
    let at: &[&str] = match op {
        Operation::GetTask => &["historyLength"],
        Operation::SendMessage | Operation::SendStreamingMessage => {
            &["configuration", "historyLength"]
        }
        _ => return None,
    };
    let h = super::member(params, at)
        .and_then(Value::as_i64)
        .and_then(|h| i32::try_from(h).ok());
    let h = match caller {
        Version::V03 => to_v1::history_length(h),
        Version::V1 => h,
    };
    h.and_then(|n| usize::try_from(n).ok())
}

/// [`trim_history`] over a stream's events (the Task event of a streamed send).
pub(crate) fn trim_stream(answer: Answer, limit: Option<usize>) -> Answer {
    match (answer, limit) {
        (Answer::Stream(events), Some(_)) => Answer::Stream(Box::pin(events.map(move |ev| {
            ev.map(|mut v| {
                trim_history(Operation::SendMessage, limit, &mut v);
                v
            })
        }))),
        (a, _) => a,
    }
}

/// Trims the history of the task a unary answer of `op` carries (in either version) to `limit`
/// messages, the most recent kept; `0` removes the member. The peer may not be able to say the
/// limit (a 0.3 peer cannot be asked for no history) or may ignore it.
pub fn trim_history(op: Operation, limit: Option<usize>, answer: &mut Value) {
    let Some(limit) = limit else { return };
    let task = match op {
        Operation::GetTask => Some(answer),
        Operation::SendMessage | Operation::SendStreamingMessage => {
            if answer.get("kind").and_then(Value::as_str) == Some("task") {
                Some(answer)
            } else {
                answer.get_mut("task")
            }
        }
        _ => None,
    };
    let Some(task) = task.and_then(Value::as_object_mut) else {
        return;
    };
    if limit == 0 {
        task.remove("history");
    } else if let Some(Value::Array(h)) = task.get_mut("history")
        && h.len() > limit
    {
        h.drain(..h.len() - limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xlate::request;
    use serde_json::json;

    #[test]
    fn history_lengths_in_the_callers_terms() {
        let zero = json!({"id": "t", "historyLength": 0});
        // 1.0 0 (no history) toward a 0.3 peer: asked as 1, the answer is trimmed.
        assert_eq!(
            request(Operation::GetTask, Version::V1, Version::V03, &zero).unwrap(),
            json!({"id": "t", "historyLength": 1})
        );
        let send = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}]},
            "configuration": {"historyLength": 0}});
        let out = request(Operation::SendMessage, Version::V1, Version::V03, &send).unwrap();
        assert_eq!(out["configuration"]["historyLength"], 1, "{out}");
        // 0.3 0 (no limit) toward a 1.0 peer: unset.
        assert_eq!(
            request(Operation::GetTask, Version::V03, Version::V1, &zero).unwrap(),
            json!({"id": "t"})
        );
        assert_eq!(history_limit(Operation::GetTask, Version::V03, &zero), None);
        assert_eq!(
            history_limit(Operation::GetTask, Version::V1, &zero),
            Some(0)
        );
        assert_eq!(
            history_limit(Operation::SendMessage, Version::V1, &send),
            Some(0)
        );
        let mut t = json!({"id": "t", "history": [1, 2, 3]});
        trim_history(Operation::GetTask, Some(2), &mut t);
        assert_eq!(t["history"], json!([2, 3]));
        trim_history(Operation::GetTask, None, &mut t);
        assert_eq!(t["history"], json!([2, 3]));
        trim_history(Operation::GetTask, Some(0), &mut t);
        assert!(t.get("history").is_none(), "{t}");
        let mut r = json!({"task": {"id": "t", "history": [1, 2]}});
        trim_history(Operation::SendMessage, Some(1), &mut r);
        assert_eq!(r["task"]["history"], json!([2]));
        let mut r = json!({"kind": "task", "id": "t", "history": [1, 2]});
        trim_history(Operation::SendMessage, Some(0), &mut r);
        assert!(r.get("history").is_none(), "{r}");
        let msg = json!({"message": {"messageId": "m", "history": [1]}});
        let mut r = msg.clone();
        trim_history(Operation::SendMessage, Some(0), &mut r);
        assert_eq!(r, msg);
    }
}
