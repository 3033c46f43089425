//! Version translation at the gateway's edge (0.3 <-> 1.0): a thin adapter over
//! `a2a-translate` (translation, refusals with paths) and `a2a-types` (typed models, the strict
//! validator).
//!
//! Every document is read once into the typed model of its own version (0.3 JSON-RPC dialect or
//! 1.0), requests are validated strictly in the caller's version (unknown members, bad enum
//! values: -32602 with the JSON path), then translated under [`Policy::Strict`]: anything the
//! target version cannot carry is refused with its path, never dropped.

use a2a_translate::{
    Method, Policy, StreamTranslator, Untranslatable, V1Request, V1Result, V03Request, V03Result,
};
use a2a_translate::{to_v1, to_v03};
use a2a_types::strict::{self, Violation};
use a2a_types::{v1, v03};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::protocol::ops::GatewayOp;
use crate::protocol::ops::Operation;
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// Why an answer could not be translated.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerError {
    /// The answer does not follow its version (-32006 `a2a_upstream_invalid_response`).
    Invalid(String),
    /// It cannot be carried in the caller's version (`a2a_upstream_untranslatable`).
    Untranslatable(String),
}

type R<T> = Result<T, String>;

/// The gateway refuses rather than guesses wherever the spec leaves a choice.
const POLICY: Policy = Policy::Strict;

fn join(v: &[Violation]) -> R<()> {
    if v.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = v.iter().map(ToString::to_string).collect();
    Err(shown.join("; "))
}

fn at(path: &str, sub: &str) -> String {
    match sub {
        "" | "$" => path.to_owned(),
        s if s.starts_with('[') => format!("{path}{s}"),
        s => format!("{path}.{s}"),
    }
}

/// Lenient typed read (unknown members ignored) with the failure's JSON path under `path`.
fn read<T: DeserializeOwned>(v: &Value, path: &str) -> R<T> {
    strict::parse_value_ref::<T>(v).map_err(|e| format!("{}: {}", at(path, &e.path), e.message))
}

fn write(v: impl Serialize) -> Value {
    // The models serialize infallibly (string keys, no non-finite floats by construction).
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn refused(e: Untranslatable, path: &str) -> String {
    e.under(path).to_string()
}

/// Validates a message strictly in its own version (-32602 with the path).
pub fn validate_message(msg: &Value, version: Version, path: &str) -> R<()> {
    let v = match version {
        Version::V1 => strict::Validator::for_type::<v1::Message>().validate_at(msg, path),
        Version::V03 => strict::Validator::for_type::<v03::Message>()
            .with_options(strict::Options::JSON)
            .validate_at(msg, path),
    };
    join(&v)
}

/// Translates a message of the other version into version `to`.
pub fn message(m: &Value, to: Version, path: &str) -> R<Value> {
    match to {
        Version::V1 => {
            let m: v03::Message = read(m, path)?;
            to_v1::message(m).map(write).map_err(|e| refused(e, path))
        }
        Version::V03 => {
            let m: v1::Message = read(m, path)?;
            to_v03::message(m, POLICY)
                .map(write)
                .map_err(|e| refused(e, path))
        }
    }
}

/// Translates a task of the other version into version `to`.
pub fn task(t: &Value, to: Version, path: &str) -> R<Value> {
    match to {
        Version::V1 => {
            let t: v03::Task = read(t, path)?;
            to_v1::task(t).map(write).map_err(|e| refused(e, path))
        }
        Version::V03 => {
            let t: v1::Task = read(t, path)?;
            to_v03::task(t, POLICY)
                .map(write)
                .map_err(|e| refused(e, path))
        }
    }
}

/// Checks that a task is readable in its own version (id, status, a state of that version).
pub fn validate_task(t: &Value, v: Version, path: &str) -> R<()> {
    match v {
        Version::V1 => read::<v1::Task>(t, path).map(drop),
        Version::V03 => read::<v03::Task>(t, path).map(drop),
    }
}

/// Translates one stream event (or a send result, which has the same shapes minus updates).
///
/// Stateless (streams use [`Events`]; this serves send results, push bodies and single
/// events): a 1.0 status update gets `final: true` in 0.3 when its state is terminal **or
/// interrupted** (`input-required`, `auth-required`), since a 1.0 stream closes on both.
/// `a2a-translate`'s stateless `to_v03::stream_event` marks terminal states only. An event
/// already in version `to` is checked and returned as it came (taken by value: no copy).
pub fn event(ev: Value, from: Version, to: Version) -> Result<Value, AnswerError> {
    let inv = AnswerError::Invalid;
    let ut = AnswerError::Untranslatable;
    match from {
        Version::V03 => {
            let e: v03::StreamResult = read(&ev, "result").map_err(inv)?;
            if to == Version::V03 {
                return Ok(ev);
            }
            to_v1::stream_event(e)
                .map(write)
                .map_err(|e| ut(refused(e, "result")))
        }
        Version::V1 => {
            let e: v1::StreamResponse = read(&ev, "result").map_err(inv)?;
            if to == Version::V1 {
                return Ok(ev);
            }
            let interrupted = matches!(&e, v1::StreamResponse::StatusUpdate(s)
                if s.status.state.is_interrupted());
            let mut out = to_v03::stream_event(e, POLICY).map_err(|e| ut(refused(e, "result")))?;
            if let v03::StreamResult::StatusUpdate(s) = &mut out
                && interrupted
            {
                s.is_final = true;
            }
            Ok(write(out))
        }
    }
}

/// Stateful translation of one event stream from the peer's version to the caller's.
///
/// For a 1.0 peer and a 0.3 caller this is `a2a-translate`'s [`StreamTranslator`]: a status
/// update in an interrupted state is held until the next event shows whether the stream goes
/// on (`final: false`) or ends ([`Events::finish`], `final: true`); terminal states are final at
/// once. Other version pairs translate event by event like [`event`].
#[derive(Debug)]
pub struct Events {
    from: Version,
    to: Version,
    st: StreamTranslator,
}

impl Events {
    /// A translator for one stream.
    pub fn new(from: Version, to: Version) -> Self {
        Events {
            from,
            to,
            st: StreamTranslator::new(POLICY),
        }
    }

    /// Translates one peer event; returns the caller's events ready to send (zero to two).
    /// Taken by value: an event already in the caller's version goes on as it came, checked
    /// but not copied.
    pub fn push(&mut self, ev: Value) -> Result<Vec<Value>, AnswerError> {
        if !(self.from == Version::V1 && self.to == Version::V03) {
            return event(ev, self.from, self.to).map(|v| vec![v]);
        }
        let e: v1::StreamResponse = read(&ev, "result").map_err(AnswerError::Invalid)?;
        let out = self
            .st
            .push(e)
            .map_err(|e| AnswerError::Untranslatable(refused(e, "result")))?;
        Ok(out.map(write).collect())
    }

    /// The peer's stream ended cleanly: the held interrupted status, now `final: true`.
    pub fn finish(&mut self) -> Option<Value> {
        self.st.finish().map(write)
    }
}

/// Translates a push-notification body (a `StreamResponse` in 1.0, the bare `kind` object in
/// 0.3) from the peer's version to the subscriber's; status updates get `final` like
/// [`event`].
pub fn push_payload(body: Value, from: Version, to: Version) -> Result<Value, AnswerError> {
    event(body, from, to)
}

/// Translates request `params` of `op` from the caller's version to the peer's.
/// Errors: -32602 for what the caller's version does not define, -32004 for what the peer's
/// version cannot carry.
pub fn request(
    op: Operation,
    from: Version,
    to: Version,
    params: &Value,
) -> Result<Value, Refusal> {
    validate_request(op, from, params)?;
    translate_request(op, from, to, params)
}

/// The strict validation of [`request`] alone: `params` of `op` in the caller's version
/// (-32602 with the JSON path). The pipeline runs it once per hop, before anything else reads
/// the params.
pub fn validate_request(op: Operation, from: Version, params: &Value) -> Result<(), Refusal> {
    if !params.is_object() {
        return Err(Refusal::invalid_params("params: must be an object"));
    }
    let violations = params_validator(op, from).map(|v| v.validate_at(params, "params"));
    join(&violations.unwrap_or_default()).map_err(|e| Refusal::invalid_params(&e))
}

/// The strict validator of `op`'s params in the caller's own version. The gateway also accepts
/// `tasks/list` from 0.3 callers (no 0.3 JSON-RPC method; read with the 1.0 ListTasks shape).
fn params_validator(op: Operation, from: Version) -> Option<strict::Validator> {
    match (from, op) {
        (Version::V03, Operation::ListTasks) | (Version::V1, _) => {
            Some(strict::v1_params_validator(op))
        }
        (Version::V03, _) => op.to_v03().and_then(v03::params_validator),
    }
}

/// [`validate_request`] that also puts every member given under its proto (snake_case) name
/// under its JSON name (`task_id` -> `taskId`, at any depth; keys of open maps such as
/// `metadata` are data and stay). The pipeline runs it once per hop, first: ownership,
/// idempotency, push sealing, paging, governance and the request sent to the peer then read one
/// spelling. The same member under both spellings is refused (-32602).
pub fn normalize_request(op: Operation, from: Version, params: &mut Value) -> Result<(), Refusal> {
    if !params.is_object() {
        return Err(Refusal::invalid_params("params: must be an object"));
    }
    let violations = params_validator(op, from).map(|v| v.validate_normalize_at(params, "params"));
    join(&violations.unwrap_or_default()).map_err(|e| Refusal::invalid_params(&e))
}

/// The translation of [`request`] alone, for params already checked with
/// [`validate_request`] (the typed reads of a version change still refuse what they cannot
/// read, -32602).
pub fn translate_request(
    op: Operation,
    from: Version,
    to: Version,
    params: &Value,
) -> Result<Value, Refusal> {
    if !params.is_object() {
        return Err(Refusal::invalid_params("params: must be an object"));
    }
    if from == to {
        return Ok(params.clone());
    }
    let bad = |e: a2a_translate::rpc::ParseError| Refusal::invalid_params(&format!("params: {e}"));
    let un = |e: Untranslatable| Refusal::untranslatable(&e.to_string());
    match to {
        Version::V03 => {
            let mut p = params.clone();
            if let Some(m) = p.as_object_mut() {
                // The tenant names the gateway's own interface, and the gateway pages push
                // configuration lists for 0.3 peers itself: neither is the peer's business.
                m.remove("tenant");
                if op == Operation::ListTaskPushNotificationConfigs {
                    m.remove("pageSize");
                    m.remove("pageToken");
                }
            }
            // 1.0 `historyLength: 0` (no history) has no 0.3 form: the peer is asked for the
            // least it can be asked for, and the answer is trimmed (`crate::protocol::history::trim_history`).
            for at in ["/historyLength", "/configuration/historyLength"] {
                if let Some(h) = p.pointer_mut(at)
                    && h.as_i64() == Some(0)
                {
                    *h = json!(to_v03::history_request(Some(0)));
                }
            }
            let r = V1Request::parse(op.name_10(), Some(p)).map_err(bad)?;
            let r = to_v03::request(r, POLICY).map_err(un)?;
            Ok(r.params().unwrap_or_else(|| json!({})))
        }
        Version::V1 => {
            if op == Operation::ListTasks {
                return Ok(params.clone());
            }
            let r = V03Request::parse(op.name_03(), Some(params.clone())).map_err(bad)?;
            let r = to_v1::request(r, POLICY).map_err(un)?;
            Ok(r.params().unwrap_or_else(|| json!({})))
        }
    }
}

/// Translates a unary result of `op` from the peer's version to the caller's.
pub fn result(
    op: Operation,
    from: Version,
    to: Version,
    res: &Value,
) -> Result<Value, AnswerError> {
    result_owned(op, from, to, res.clone())
}

/// [`result`] of a result the caller no longer needs: in the same version it is checked and
/// handed back as it is (one copy fewer).
pub fn result_owned(
    op: Operation,
    from: Version,
    to: Version,
    res: Value,
) -> Result<Value, AnswerError> {
    let inv = AnswerError::Invalid;
    let ut = AnswerError::Untranslatable;
    match op {
        Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            return event(res, from, to);
        }
        // 0.3 has no ListTasks: a 0.3 caller gets the 1.0 shape with 0.3 tasks, the nearest (as
        // the agent answers).
        Operation::ListTasks if from == Version::V1 && to == Version::V03 => {
            let mut out = res;
            if let Some(tasks) = out.get_mut("tasks").and_then(Value::as_array_mut) {
                for (i, t) in tasks.iter_mut().enumerate() {
                    *t = task(t, Version::V03, &format!("result.tasks[{i}]")).map_err(ut)?;
                }
            }
            return Ok(out);
        }
        // Nothing to read in a delete answer: each version has its own empty result.
        Operation::DeleteTaskPushNotificationConfig => {
            return Ok(match to {
                Version::V03 => Value::Null,
                Version::V1 => json!({}),
            });
        }
        _ => {}
    }
    // The gateway's operation is a2a-translate's method: one table, a2a-types'.
    let m: Method = op;
    match from {
        Version::V03 => {
            if to == Version::V03 {
                V03Result::parse(m, &res).map_err(|e| inv(e.to_string()))?;
                return Ok(res);
            }
            let r = V03Result::parse(m, res).map_err(|e| inv(e.to_string()))?;
            let mut out = to_v1::result(r, POLICY)
                .map_err(|e| ut(e.to_string()))?
                .to_value();
            if op == Operation::ListTaskPushNotificationConfigs
                && let Some(o) = out.as_object_mut()
            {
                // The gateway's paging reads an explicit (empty) token for "last page".
                o.entry("nextPageToken").or_insert_with(|| json!(""));
            }
            Ok(out)
        }
        Version::V1 => {
            if to == Version::V1 {
                V1Result::parse(m, &res).map_err(|e| inv(e.to_string()))?;
                return Ok(res);
            }
            let r = V1Result::parse(m, res).map_err(|e| inv(e.to_string()))?;
            to_v03::result(r, POLICY)
                .map(|r| r.to_value())
                .map_err(|e| ut(e.to_string()))
        }
    }
}

/// Reads a peer card (either version) into the 1.0 shape the gateway works in.
///
/// A 0.3 card that does not parse as a 0.3 `AgentCard` is returned as it is (the gateway only
/// reads descriptive members, capabilities and skills from it).
pub fn card_to_v1(card: &Value) -> Value {
    if card.get("supportedInterfaces").is_some() {
        return card.clone();
    }
    match read::<v03::AgentCard>(card, "card") {
        Ok(c) => match to_v1::card(c, POLICY) {
            Ok(t) => write(t.card),
            Err(_) => card.clone(),
        },
        Err(_) => card.clone(),
    }
}

/// Writes a 1.0 card in the 0.3 shape. Returns the card and the security schemes left out
/// (`{"scheme", "path", "reason"}`), for `x-a2a-security-schemes-omitted`.
pub fn card_v1_to_v03(card: &Value) -> (Value, Vec<Value>) {
    let fallback = || {
        let mut m = card.as_object().cloned().unwrap_or_default();
        m.remove("supportedInterfaces");
        m.remove("signatures");
        (Value::Object(m), Vec::new())
    };
    let Ok(c) = read::<v1::AgentCard>(card, "card") else {
        return fallback();
    };
    let Ok(t) = to_v03::card(c, POLICY) else {
        return fallback();
    };
    let omitted = t
        .omitted
        .iter()
        .filter_map(|o| {
            let name = o.path.strip_prefix("securitySchemes.")?;
            Some(json!({"scheme": name, "path": o.path, "reason": o.reason}))
        })
        .collect();
    (write(t.card), omitted)
}

/// Total characters of text across a message (either version): text parts only; strings inside
/// data parts are not counted (the DVARA API's limit is on text).
pub fn message_text_chars(params: &Value) -> usize {
    params
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .map(|t| t.chars().count())
                .sum()
        })
        .unwrap_or(0)
}
#[cfg(test)]
mod tests;
