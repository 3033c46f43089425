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
//! [`Value`] path writes members sorted); the JSON is the same, except that a member repeated
//! inside a free-form object (`metadata`) stays repeated where the [`Value`] path kept the last
//! (a repeated member of a typed object is refused by the check and takes that path).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use a2a_types::v1::{Message, SendMessageResponse, Task};

use crate::protocol::ops::Operation;
use crate::protocol::reveal::TaskFacts;
use crate::{protocol::errors::Binding, protocol::errors::Version};

/// A checked 1.0 `SendMessage` result, as the peer's JSON text.
#[derive(Debug, Clone)]
pub struct Passed {
    text: String,
    /// The task the answer names (`task.id`, or the message's `taskId`).
    task_id: Option<String>,
    /// A direct message answer's `message` member, as JSON text.
    message: Option<String>,
    /// What a task answer says of the task's status (the listing's records).
    status: Option<TaskFacts>,
    /// A task answer's `task` member, as JSON text, when the task has ended (kept for
    /// listings: `crate::tasks::terminal`).
    ended: Option<String>,
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
        v == Version::V1 && matches!(b, Binding::JsonRpc | Binding::HttpJson)
    };
    op == Operation::SendMessage && plain(caller) && plain(peer) && !edits
}

/// A member that is there, whatever its value (`null` included).
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<IgnoredAny>, D::Error> {
    IgnoredAny::deserialize(d).map(Some)
}

/// The top-level members of a send result, read once: what the answer check reads (the
/// `task` / `message` oneof of [`a2a_types::v1::SendMessageResponse`], with its rules: a `null`
/// member is absent, both present is refused) and what the steps after the call read first
/// (`reveal::revealed_task`, the idempotency outcome).
#[derive(Deserialize)]
#[serde(field_identifier)]
enum Key {
    #[serde(rename = "task")]
    Task,
    #[serde(rename = "message")]
    Message,
    /// Members no 1.0 send result has, which `revealed_task` would read first.
    #[serde(
        rename = "kind",
        alias = "taskId",
        alias = "statusUpdate",
        alias = "artifactUpdate"
    )]
    Odd,
    #[serde(other)]
    Other,
}

/// See [`Key`].
struct Scan<'a> {
    found: Option<SendMessageResponse>,
    /// The `message` member's text, whatever its value.
    message: Option<&'a RawValue>,
    /// The `task` member's text, whatever its value.
    task: Option<&'a RawValue>,
    odd: bool,
}

impl<'de> Deserialize<'de> for Scan<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Scan<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a SendMessageResponse object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Scan<'de>, A::Error> {
                use serde::de::Error;
                let mut scan = Scan {
                    found: None,
                    message: None,
                    task: None,
                    odd: false,
                };
                let put = |scan: &mut Scan<'de>, v: SendMessageResponse| {
                    if scan.found.is_some() {
                        return Err(A::Error::custom("both task and message"));
                    }
                    scan.found = Some(v);
                    Ok(())
                };
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Task => {
                            let raw: &'de RawValue = map.next_value()?;
                            scan.task = Some(raw);
                            let t: Option<Task> =
                                serde_json::from_str(raw.get()).map_err(A::Error::custom)?;
                            if let Some(t) = t {
                                put(&mut scan, SendMessageResponse::Task(t))?;
                            }
                        }
                        Key::Message => {
                            let raw: &'de RawValue = map.next_value()?;
                            scan.message = Some(raw);
                            let m: Option<Message> =
                                serde_json::from_str(raw.get()).map_err(A::Error::custom)?;
                            if let Some(m) = m {
                                put(&mut scan, SendMessageResponse::Message(m))?;
                            }
                        }
                        Key::Odd => {
                            scan.odd = true;
                            map.next_value::<IgnoredAny>()?;
                        }
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(scan)
            }
        }
        d.deserialize_map(V)
    }
}

impl Passed {
    /// Checks `text`, a 1.0 peer's `SendMessage` result, as the [`Value`] path does; `None`
    /// when the answer should take that path (it fails the check, or a step would read it
    /// differently there).
    pub(crate) fn send_result(text: &str) -> Option<Passed> {
        let has = |t: &str, n: &str| memchr::memmem::find(t.as_bytes(), n.as_bytes()).is_some();
        // A key written with escapes reads as its name only once decoded: the `Value` path
        // decodes it, so the checks below leave such answers to it. Extension lists are kept
        // to the forwarded URIs on the `Value` path as well.
        if has(text, "\\u") || has(text, "\"extensions\"") {
            return None;
        }
        // One pass: the check (`a2a_translate::V1Result::parse` reads the same oneof) and
        // the members the steps read.
        let scan: Scan = serde_json::from_str(text).ok()?;
        if scan.odd {
            return None;
        }
        let mut status = None;
        let mut ended = None;
        let (task_id, message) = match scan.found? {
            // `revealed_task` reads `task.id` only when present; a `message` member beside
            // the task (`null`, say) reads as a message answer to the idempotency step.
            SendMessageResponse::Task(t) if t.id.is_empty() || scan.message.is_some() => {
                return None;
            }
            SendMessageResponse::Task(t) => {
                if t.status.state.is_terminal() {
                    ended = scan.task.map(|r| r.get().to_owned());
                }
                status = Some(TaskFacts {
                    task_id: t.id.clone(),
                    context_id: t.context_id,
                    state: t.status.state,
                    status_at: t
                        .status
                        .timestamp
                        .map(|s| crate::protocol::reveal::nanos(s.to_offset_date_time())),
                });
                (Some(t.id), None)
            }
            // `revealed_task` reads `message.taskId`, not its `task_id` alias.
            SendMessageResponse::Message(_)
                if scan.message.is_some_and(|m| has(m.get(), "\"task_id\"")) =>
            {
                return None;
            }
            SendMessageResponse::Message(m) => {
                (m.task_id, scan.message.map(|r| r.get().to_owned()))
            }
        };
        Some(Passed {
            text: text.to_owned(),
            task_id,
            message,
            status,
            ended,
        })
    }

    /// The result's JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The task the answer reveals (what `reveal::revealed_task` reads from its JSON).
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// What a task answer says of the task's status.
    pub fn status(&self) -> Option<&TaskFacts> {
        self.status.as_ref()
    }

    /// A task answer's task, as JSON text, when it has ended (completed, failed, canceled,
    /// rejected): the peer's own content, whole (a passed answer had no `historyLength`).
    pub fn ended_task(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// The direct message of a message answer, as JSON (what the idempotency record keeps).
    pub(crate) fn message(&self) -> Option<Value> {
        serde_json::from_str(self.message.as_deref()?).ok()
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
    use crate::protocol::xlate;
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
        let out = xlate::result_owned(Operation::SendMessage, Version::V1, Version::V1, v.clone())
            .expect("checked");
        let task = crate::protocol::reveal::revealed_task(&out);
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
        let mut snake = message();
        let t = snake["message"]
            .as_object_mut()
            .unwrap()
            .remove("taskId")
            .unwrap();
        snake["message"]["task_id"] = t;
        let mut no_id = task();
        no_id["task"].as_object_mut().unwrap().remove("id");
        for v in [with_kind, message_null, top_task_id, ext, snake, no_id] {
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

    /// An ended task's text is offered as the peer wrote it (member order and spacing); an
    /// open task or a message answer offers none.
    #[test]
    fn only_ended_tasks_are_offered_for_listings() {
        let text = r#"{"task": {"status": {"state": "TASK_STATE_FAILED"},  "id": "t9", "contextId": "c"}}"#;
        let p = Passed::send_result(text).unwrap();
        assert_eq!(
            p.ended_task(),
            Some(r#"{"status": {"state": "TASK_STATE_FAILED"},  "id": "t9", "contextId": "c"}"#)
        );
        let mut open = task();
        open["task"]["status"]["state"] = json!("TASK_STATE_INPUT_REQUIRED");
        let p = Passed::send_result(&open.to_string()).unwrap();
        assert_eq!(p.ended_task(), None);
        assert!(p.status().is_some());
        let msg =
            json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}});
        assert_eq!(
            Passed::send_result(&msg.to_string()).unwrap().ended_task(),
            None
        );
    }

    #[test]
    fn only_unedited_1_0_sends_pass() {
        use Binding::*;
        use Version::*;
        let send = Operation::SendMessage;
        for c in [JsonRpc, HttpJson] {
            for p in [JsonRpc, HttpJson] {
                assert!(passable(send, (V1, c), (V1, p), false));
                assert!(!passable(send, (V1, c), (V1, p), true));
                assert!(!passable(send, (V03, c), (V1, p), false));
                assert!(!passable(send, (V1, c), (V03, p), false));
                assert!(!passable(Operation::GetTask, (V1, c), (V1, p), false));
            }
            assert!(!passable(send, (V1, c), (V1, Grpc), false));
            assert!(!passable(send, (V1, Grpc), (V1, c), false));
        }
    }
}
