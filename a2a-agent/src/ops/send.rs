//! A send in 1.0 terms: its params (a JSON tree or read by type), how long the caller waits
//! (`returnImmediately` and its overrides), handed to the task manager.

use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::caller::CallerProfile;
use crate::error::{A2aError, ErrorKind};
use crate::handler::Headers;
use crate::model::{Message, SendMessageRequest, Task};
use crate::tasks::{SendAnswer, SendExtras, SendInput, SendMode, TaskManager};
use crate::typed_send::TypedSend;

/// A SendMessage result: a `SendMessageResponse` whose task is shared (the live task's), so
/// that answering needs no copy of it. Serialised as `SendMessageResponse` is.
pub(crate) enum SendResult {
    /// `task`.
    Task(Arc<Task>),
    /// `message`.
    Message(Message),
}

impl Serialize for SendResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // What the derive writes for `SendMessageResponse` (externally tagged, camelCase).
        match self {
            SendResult::Task(t) => {
                s.serialize_newtype_variant("SendMessageResponse", 0, "task", &**t)
            }
            SendResult::Message(m) => {
                s.serialize_newtype_variant("SendMessageResponse", 1, "message", m)
            }
        }
    }
}

/// The per-request knobs of a send besides its body.
pub(crate) struct SendKnobs {
    /// The per-request override header (`A2A-Return-Immediately`).
    pub header_override: Option<bool>,
    /// The endpoint default.
    pub endpoint_default: bool,
}

/// `returnImmediately` resolution, highest wins: `configuration.returnImmediately`, then
/// `configuration.blocking=false` (typed inverse), then the per-request override, then the
/// endpoint default.
pub fn resolve_return_immediately(
    params: &Value,
    header_override: Option<bool>,
    endpoint_default: bool,
) -> bool {
    let cfg = params.get("configuration");
    if let Some(b) = cfg
        .and_then(|c| {
            c.get("returnImmediately")
                .or_else(|| c.get("return_immediately"))
        })
        .and_then(Value::as_bool)
    {
        return b;
    }
    if let Some(b) = cfg.and_then(|c| c.get("blocking")).and_then(Value::as_bool) {
        return !b;
    }
    header_override.unwrap_or(endpoint_default)
}

/// The typed request, the caller's message JSON and its `configuration` as sent (both taken
/// out of `params`).
pub(crate) fn parse_send(
    mut params: Value,
) -> Result<(SendMessageRequest, Value, Option<Value>), A2aError> {
    if params.is_null() || params.as_object().is_some_and(|o| o.is_empty()) {
        return Err(
            A2aError::new(ErrorKind::ContentTypeNotSupported, "empty SendMessage body")
                .with_status(400),
        );
    }
    // Read from the tree in place (no copy of it).
    let req = SendMessageRequest::deserialize(&params).map_err(|e| {
        A2aError::invalid_as::<SendMessageRequest>("SendMessageRequest", &params, e)
    })?;
    let raw = params
        .get_mut("message")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let configuration = params
        .get_mut("configuration")
        .map(Value::take)
        .filter(|c| !c.is_null());
    Ok((req, raw, configuration))
}

/// The params of a send: a JSON tree, or read by type (`typed_send`).
pub(crate) enum SendParams {
    /// The params as a tree (every version and shape).
    Tree(Value),
    /// A 1.0 send without `configuration`, read straight into its type.
    Typed(Box<TypedSend>),
}

pub(crate) async fn send(
    mgr: &TaskManager,
    params: SendParams,
    caller: CallerProfile,
    extensions: Vec<String>,
    knobs: SendKnobs,
    streaming: bool,
    headers: Headers,
) -> Result<SendAnswer, A2aError> {
    let immediately =
        |p: &Value| resolve_return_immediately(p, knobs.header_override, knobs.endpoint_default);
    let mode = if streaming {
        SendMode::Stream
    } else if match &params {
        SendParams::Tree(p) => immediately(p),
        // No `configuration`: what the tree's resolution gives for params without one.
        SendParams::Typed(_) => immediately(&Value::Null),
    } {
        SendMode::ReturnImmediately
    } else {
        SendMode::Blocking
    };
    let (request, raw_message, raw_text, configuration) = match params {
        SendParams::Tree(p) => {
            let (req, raw, configuration) = parse_send(p)?;
            (req, raw, None, configuration)
        }
        SendParams::Typed(t) => {
            let TypedSend { request, raw } = *t;
            (request, Value::Null, Some(raw), None)
        }
    };
    mgr.send_with(
        SendInput {
            request,
            raw_message,
            caller,
            extensions,
            mode,
            headers: http::HeaderMap::new(),
        },
        SendExtras {
            raw: raw_text,
            headers: Some(headers),
            configuration,
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_send_result_is_written_as_a_send_message_response() {
        use crate::model::{Message, Part, Role, SendMessageResponse, Task};
        use std::sync::Arc;
        let m = Message {
            message_id: "m1".into(),
            role: Role::Agent,
            parts: vec![Part::text("hi \"there\"")],
            ..Default::default()
        };
        let t = Task {
            id: "t1".into(),
            context_id: Some("c1".into()),
            history: vec![m.clone()],
            ..Default::default()
        };
        let text = serde_json::to_string::<super::SendResult>;
        assert_eq!(
            text(&super::SendResult::Task(Arc::new(t.clone()))).ok(),
            serde_json::to_string(&SendMessageResponse::Task(t)).ok()
        );
        assert_eq!(
            text(&super::SendResult::Message(m.clone())).ok(),
            serde_json::to_string(&SendMessageResponse::Message(m)).ok()
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn precedence() {
        let p = json!({"configuration": {"returnImmediately": false, "blocking": false}});
        assert!(!resolve_return_immediately(&p, Some(true), true));
        let p = json!({"configuration": {"blocking": false}});
        assert!(resolve_return_immediately(&p, Some(false), false));
        let p = json!({"configuration": {"blocking": true}});
        assert!(!resolve_return_immediately(&p, Some(true), true));
        let p = json!({"configuration": {}});
        assert!(resolve_return_immediately(&p, Some(true), false));
        assert!(!resolve_return_immediately(&p, Some(false), true));
        assert!(resolve_return_immediately(&p, None, true));
        assert!(!resolve_return_immediately(&json!({}), None, false));
    }
}
