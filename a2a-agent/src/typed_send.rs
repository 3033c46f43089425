//! The typed read of a 1.0 send: the request body read straight into [`SendMessageRequest`]
//! (no JSON tree of the params, of the message or of the envelope), with the message's exact
//! text kept for the handler's raw view ([`crate::handler::RequestContext::raw`]).
//!
//! Only for the common shape, where it gives exactly what the general path (a tree, then the
//! typed request read from it) gives: a 1.0 `SendMessage` / `SendStreamingMessage` whose typed
//! read succeeds and which has no `configuration` (that path also reads members the type does not
//! have, such as `blocking`, and inline push configs). Anything else, every malformed body
//! included, returns `None` and goes the general way, which answers it as before.

use a2a_types::envelope::RawId;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::SendMessageRequest;

/// A send read by type.
#[derive(Debug)]
pub(crate) struct TypedSend {
    /// The request (its `configuration` is `None`).
    pub request: SendMessageRequest,
    /// The `message` member's text, as the caller sent it.
    pub raw: Box<RawValue>,
}

/// The `message` member's text (the other members are skipped).
#[derive(Deserialize)]
struct MessageText<'a> {
    #[serde(borrow)]
    message: &'a RawValue,
}

/// Reads send params (the JSON-RPC `params` or the HTTP+JSON body); `None`: use the tree.
pub(crate) fn typed_send(params: &str) -> Option<TypedSend> {
    let request: SendMessageRequest = serde_json::from_str(params).ok()?;
    if request.configuration.is_some() {
        return None;
    }
    let text: MessageText<'_> = serde_json::from_str(params).ok()?;
    Some(TypedSend {
        request,
        raw: text.message.to_owned(),
    })
}

/// The JSON-RPC members a send needs, borrowed from the body. A repeated member fails the read
/// (the general path takes the last one), and so does a string with escapes, where a borrow is
/// not possible: both go the general way.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a str>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// A 1.0 JSON-RPC send read by type.
#[derive(Debug)]
pub(crate) struct JsonRpcSend {
    /// The caller's id, exactly.
    pub id: RawId,
    /// `SendStreamingMessage`.
    pub streaming: bool,
    /// The params.
    pub send: TypedSend,
}

/// Reads a 1.0 JSON-RPC `SendMessage` / `SendStreamingMessage` body; `None`: use
/// [`crate::jsonrpc::parse`].
pub(crate) fn jsonrpc_send(body: &[u8]) -> Option<JsonRpcSend> {
    let env: Envelope<'_> = serde_json::from_slice(body).ok()?;
    if env.jsonrpc != Some("2.0") {
        return None;
    }
    let streaming = match env.method? {
        "SendMessage" => false,
        "SendStreamingMessage" => true,
        _ => return None,
    };
    let id = match env.id {
        None => RawId::null(),
        Some(raw) => RawId::from_raw(raw)?,
    };
    Some(JsonRpcSend {
        id,
        streaming,
        send: typed_send(env.params?.get())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The general path's reading of the same params.
    fn by_tree(params: &str) -> (SendMessageRequest, Value) {
        let mut v: Value = serde_json::from_str(params).unwrap();
        let req = SendMessageRequest::deserialize(&v).unwrap();
        (req, v.get_mut("message").map(Value::take).unwrap())
    }

    #[test]
    fn typed_reads_agree_with_the_tree() {
        for p in [
            r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi \u00e9"}]}}"#,
            r#"{"tenant":"t","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},
               {"data":{"a":[1,2.5,null]}}],"metadata":{"k":"v"}},"metadata":{"z":1},"extra":[1]}"#,
            r#"{"message":{"messageId":"m","parts":[{"text":"x"}],"contextId":"c","taskId":"t"},
               "configuration":null}"#,
        ] {
            let t = typed_send(p).expect(p);
            let (req, raw) = by_tree(p);
            assert_eq!(t.request, req, "{p}");
            let raw_back: Value = serde_json::from_str(t.raw.get()).unwrap();
            assert_eq!(raw_back, raw, "{p}");
        }
    }

    #[test]
    fn other_shapes_go_the_general_way() {
        for p in [
            // Options: the general path also reads members the type does not have.
            r#"{"message":{"messageId":"m","parts":[{"text":"x"}]},"configuration":{"blocking":false}}"#,
            r#"{"message":{"messageId":"m","parts":[{"text":"x"}]},"configuration":{}}"#,
            // A repeated member (the tree keeps the last one).
            r#"{"message":{"messageId":"a","parts":[{"text":"x"}]},"message":{"messageId":"b","parts":[{"text":"y"}]}}"#,
            r#"{"message":"not a message"}"#,
            "{}",
            "[]",
            "null",
            "{",
        ] {
            assert!(typed_send(p).is_none(), "{p}");
        }
    }

    #[test]
    fn jsonrpc_sends_only() {
        let params = r#"{"message":{"messageId":"m","parts":[{"text":"x"}]}}"#;
        let body = |env: &str| env.replace("P", params);
        let ok = jsonrpc_send(
            body(r#"{"jsonrpc":"2.0","id":"a\u00e9","method":"SendMessage","params":P}"#)
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(ok.id.get(), r#""a\u00e9""#);
        assert!(!ok.streaming);
        let s = jsonrpc_send(
            body(r#"{"method":"SendStreamingMessage","params":P,"jsonrpc":"2.0"}"#).as_bytes(),
        )
        .unwrap();
        assert!(s.streaming && s.id.is_null());
        for env in [
            r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":P}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"SendMessage","params":P}"#,
            r#"{"id":1,"method":"SendMessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"SendMessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"SendMessage","params":P}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":P}]"#,
        ] {
            assert!(jsonrpc_send(body(env).as_bytes()).is_none(), "{env}");
        }
    }

    #[test]
    fn the_jsonrpc_read_agrees_with_the_general_one() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"SendMessage","extra":{"a":1},
            "params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}"#;
        let fast = jsonrpc_send(body).unwrap();
        let general = crate::jsonrpc::parse(body, Some(crate::negotiate::Version::V1)).unwrap();
        assert_eq!(fast.id, general.id);
        assert_eq!(general.method, "SendMessage");
        let (req, raw) = by_tree(&general.params.to_string());
        assert_eq!(fast.send.request, req);
        assert_eq!(
            serde_json::from_str::<Value>(fast.send.raw.get()).unwrap(),
            raw
        );
        assert_eq!(
            raw,
            json!({"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]})
        );
    }
}
