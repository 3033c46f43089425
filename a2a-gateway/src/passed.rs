//! A peer's unary answer passed through as text (issue 11): when no step of the hop needs to
//! change it, a 1.0 peer's `SendMessage` result goes to a 1.0 caller as the peer wrote it,
//! without being read into a [`Value`] tree and written back (about 40 k instructions per hop).
//!
//! The answer is still checked as before ("answer checks and translation": read into the
//! typed 1.0 model, straight from the text); the steps after the call read what they need from
//! the facts gathered here (the task it reveals, for ownership and idempotency). Anything out of
//! the ordinary (a refused check, members no 1.0 answer has, an escaped key, an `extensions`
//! list to filter) takes the [`Value`] path instead, so the caller sees what it saw before: the
//! same refusal, the same answer. The text is the peer's (its member order and spacing; the
//! [`Value`] path writes members sorted); the JSON is the same.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::errors::{Binding, Version};
use crate::ops::Operation;

/// A checked 1.0 `SendMessage` result, as the peer's JSON text.
#[derive(Debug, Clone)]
pub struct Passed {
    text: String,
    /// The task the answer names (`task.id`, or the message's `taskId`).
    task_id: Option<String>,
    /// Whether the answer is a direct message (`message`).
    message: bool,
}

/// Whether the hop may pass its peer's answer through: the operation, versions and bindings
/// let the answer reach the caller unchanged (a 1.0 JSON-RPC or HTTP+JSON caller, a 1.0
/// JSON-RPC or HTTP+JSON peer), and no step after the call edits it (`edits`).
pub(crate) fn passable(
    op: Operation,
    caller: (Version, Binding),
    peer: (Version, Binding),
    edits: bool,
) -> bool {
    let plain = |(v, b): (Version, Binding)| {
        v == Version::V10 && matches!(b, Binding::JsonRpc | Binding::HttpJson)
    };
    op == Operation::SendMessage && plain(caller) && plain(peer) && !edits
}

/// A member that is there, whatever its value (`null` included).
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<IgnoredAny>, D::Error> {
    IgnoredAny::deserialize(d).map(Some)
}

/// A member's raw text, whatever its value (`null` included).
fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The top-level members of a send result that decide what the steps after the call read
/// (`ownership::revealed_task`, the idempotency outcome).
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(default, borrow, deserialize_with = "raw")]
    message: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    kind: Option<IgnoredAny>,
    #[serde(default, rename = "taskId", deserialize_with = "present")]
    task_id: Option<IgnoredAny>,
    #[serde(default, rename = "statusUpdate", deserialize_with = "present")]
    status_update: Option<IgnoredAny>,
    #[serde(default, rename = "artifactUpdate", deserialize_with = "present")]
    artifact_update: Option<IgnoredAny>,
}

impl Passed {
    /// Checks `text`, a 1.0 peer's `SendMessage` result, as the [`Value`] path does; `None`
    /// when the answer should take that path (it fails the check, or a step would read it
    /// differently there).
    pub(crate) fn send_result(text: &str) -> Option<Passed> {
        use a2a_translate::{Method, V1Result};
        use a2a_types::v1::SendMessageResponse;
        // A key written with escapes reads as its name only once decoded: the `Value` path
        // decodes it, so the checks below (which look at the text) leave such answers to it.
        // Extension lists are kept to the forwarded URIs on the `Value` path as well.
        let finder = |n: &str| memchr::memmem::find(text.as_bytes(), n.as_bytes()).is_some();
        if finder("\\u") || finder("\"extensions\"") {
            return None;
        }
        let V1Result::SendMessage(typed) = V1Result::parse(Method::SendMessage, text).ok()? else {
            return None;
        };
        let peek: Peek = serde_json::from_str(text).ok()?;
        // Members a 1.0 send result does not have, which `ownership::revealed_task` or the
        // idempotency outcome would read first.
        if peek.kind.is_some()
            || peek.task_id.is_some()
            || peek.status_update.is_some()
            || peek.artifact_update.is_some()
        {
            return None;
        }
        let (task_id, message) = match typed {
            // A `message` member beside the task (`null`, say) reads as a message there.
            SendMessageResponse::Task(_) if peek.message.is_some() => return None,
            SendMessageResponse::Task(t) => (Some(t.id), false),
            SendMessageResponse::Message(m) => (m.task_id, true),
        };
        Some(Passed {
            text: text.to_owned(),
            task_id,
            message,
        })
    }

    /// The result's JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The task the answer reveals (what `ownership::revealed_task` reads from its JSON).
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The direct message of a message answer, as JSON (what the idempotency record keeps).
    pub(crate) fn message(&self) -> Option<Value> {
        if !self.message {
            return None;
        }
        let peek: Peek = serde_json::from_str(&self.text).ok()?;
        serde_json::from_str(peek.message?.get()).ok()
    }

    /// The answer as a [`Value`] (for a step or an edge that works on one).
    pub fn into_value(self) -> Value {
        // Checked JSON: it parses.
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xlate;
    use serde_json::json;

    fn task() -> Value {
        json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"},
            "history": [{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}],
            "artifacts": [{"artifactId": "a1", "parts": [{"text": "hi"}]}]}})
    }

    fn message() -> Value {
        json!({"message": {"messageId": "m2", "role": "ROLE_AGENT", "taskId": "t9",
            "parts": [{"text": "hi"}], "metadata": {"k": [1, 2.5, null, "x"]}}})
    }

    /// What the `Value` path gives: the result checked and handed back, and the task it
    /// reveals.
    fn old_path(v: &Value) -> (Value, Option<String>) {
        let out = xlate::result_owned(
            Operation::SendMessage,
            Version::V10,
            Version::V10,
            v.clone(),
        )
        .expect("checked");
        let task = crate::ownership::revealed_task(&out);
        (out, task)
    }

    #[test]
    fn a_passed_answer_is_the_value_paths_answer() {
        for v in [task(), message()] {
            // Spaced as a peer may write it: the JSON is what counts.
            let text = serde_json::to_string_pretty(&v).unwrap();
            let p = Passed::send_result(&text).expect("passes");
            let (old, old_task) = old_path(&v);
            assert_eq!(
                serde_json::from_str::<Value>(p.text()).unwrap(),
                old,
                "{text}"
            );
            assert_eq!(p.task_id().map(str::to_owned), old_task);
            assert_eq!(p.message(), v.get("message").cloned());
            assert_eq!(p.clone().into_value(), old);
        }
    }

    #[test]
    fn unusual_answers_take_the_value_path() {
        let mut with_kind = task();
        with_kind["kind"] = json!("task");
        let mut message_null = task();
        message_null["message"] = Value::Null;
        let mut top_task_id = message();
        top_task_id["taskId"] = json!("other");
        let mut ext = message();
        ext["message"]["extensions"] = json!(["urn:x"]);
        for v in [with_kind, message_null, top_task_id, ext] {
            assert!(Passed::send_result(&v.to_string()).is_none(), "{v}");
        }
        // Refused by the check (no task or message; both), or an escaped key.
        for text in [
            r#"{}"#,
            r#"{"task": {"id": "t"}, "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []}}"#,
            r#"{"\u0074ask": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}"#,
            r#"{"task": {"id": "t", "id": "u", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}"#,
            "not json",
        ] {
            assert!(Passed::send_result(text).is_none(), "{text}");
        }
    }

    #[test]
    fn only_unedited_1_0_sends_pass() {
        use Binding::*;
        use Version::*;
        let send = Operation::SendMessage;
        for c in [JsonRpc, HttpJson] {
            for p in [JsonRpc, HttpJson] {
                assert!(passable(send, (V10, c), (V10, p), false));
                assert!(!passable(send, (V10, c), (V10, p), true));
                assert!(!passable(send, (V03, c), (V10, p), false));
                assert!(!passable(send, (V10, c), (V03, p), false));
                assert!(!passable(Operation::GetTask, (V10, c), (V10, p), false));
            }
            assert!(!passable(send, (V10, c), (V10, Grpc), false));
            assert!(!passable(send, (V10, Grpc), (V10, c), false));
        }
    }
}
