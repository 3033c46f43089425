//! The typed read of a 1.0 send: the request body read straight into [`SendMessageRequest`]
//! (no JSON tree of the params, of the message or of the envelope), with the message's exact
//! text kept for the handler's raw view (`RequestContext::raw`).
//!
//! Only for the common shape, where it gives exactly what the general path (a tree, then the
//! typed request read from it) gives: a 1.0 `SendMessage` / `SendStreamingMessage` whose typed
//! read succeeds and which has no `configuration` (that path also reads members the type does not
//! have, such as `blocking`, and inline push configs). Anything else, every malformed body
//! included, returns `None` and goes the general way, which answers it as before.

use a2a_types::envelope::RawId;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::model::SendMessageRequest;

/// A send read by type.
#[derive(Debug)]
pub(crate) struct TypedSend {
    /// The request (its `configuration` is `None`).
    pub request: SendMessageRequest,
    /// Where the message's JSON is, for the handler's raw view.
    pub raw: RawSource,
}

/// The request body a typed send was read from: the handler's raw view of the message is read
/// from it only if the handler asks (no copy of the text, no scan for its bounds before).
#[derive(Debug, Clone)]
pub(crate) struct RawSource {
    body: Bytes,
    /// The message is `params.message` (JSON-RPC), not `message` (HTTP+JSON).
    in_params: bool,
}

impl RawSource {
    /// The message as the general path's tree holds it (the body had no repeated member on
    /// the way to it, or the typed read would have failed).
    pub(crate) fn message(&self) -> Option<Value> {
        let mut v: Value = serde_json::from_slice(&self.body).ok()?;
        let p = if self.in_params {
            v.get_mut("params")?
        } else {
            &mut v
        };
        p.get_mut("message").map(Value::take)
    }
}

/// Whether a tree read of `body` could refuse what the typed read accepts. The typed read skips
/// the members its types do not have without checking them as a tree read does: text that is
/// not UTF-8, `\u` escapes of lone surrogates, numbers beyond `f64` and nesting deeper than
/// serde_json's limit. Such bodies (and, to keep the check short, any body with an escape of a
/// surrogate, a number with an exponent or more than 20 digits in a row, or nesting deeper than
/// 100) go the general way, which answers them as before.
fn tree_might_refuse(body: &[u8]) -> bool {
    if std::str::from_utf8(body).is_err() {
        return true;
    }
    let (mut i, mut depth, mut digits) = (0, 0usize, 0usize);
    while i < body.len() {
        match body[i] {
            b'"' => {
                // To the closing quote; an escape is checked, then skipped with its byte.
                i += 1;
                loop {
                    let Some(n) = memchr::memchr2(b'"', b'\\', &body[i..]) else {
                        return true;
                    };
                    i += n;
                    if body[i] == b'"' {
                        break;
                    }
                    if body.get(i + 1) == Some(&b'u')
                        && matches!(body.get(i + 2), Some(b'd' | b'D'))
                        && matches!(
                            body.get(i + 3),
                            Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                        )
                    {
                        return true;
                    }
                    i += 2;
                }
                digits = 0;
            }
            b'0'..=b'9' => {
                digits += 1;
                if digits > 20 {
                    return true;
                }
            }
            b'e' | b'E' if digits > 0 => return true,
            b'{' | b'[' => {
                depth += 1;
                if depth > 100 {
                    return true;
                }
                digits = 0;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                digits = 0;
            }
            _ => digits = 0,
        }
        i += 1;
    }
    false
}

/// The typed request, when it has no options (see the module doc).
fn without_options(request: SendMessageRequest) -> Option<SendMessageRequest> {
    request.configuration.is_none().then_some(request)
}

/// Reads an HTTP+JSON send body; `None`: use the tree.
pub(crate) fn rest_send(body: &Bytes) -> Option<TypedSend> {
    if tree_might_refuse(body) {
        return None;
    }
    let request = without_options(serde_json::from_slice(body).ok()?)?;
    Some(TypedSend {
        request,
        raw: RawSource {
            body: body.clone(),
            in_params: false,
        },
    })
}

/// The JSON-RPC members a send needs, in one pass: the params straight into their type. A
/// repeated member fails the read (the general path takes the last one), and so does a string
/// with escapes, where a borrow is not possible, or params of another method: all go the
/// general way.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a str>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    params: Option<SendMessageRequest>,
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

/// Reads a 1.0 JSON-RPC `SendMessage` / `SendStreamingMessage` body; `None`: use the
/// binding's general read (`server::jsonrpc::parse`).
pub(crate) fn jsonrpc_send(body: &Bytes) -> Option<JsonRpcSend> {
    // Other methods are not read twice: their bodies do not name a send.
    memchr::memmem::find(body, b"\"Send")?;
    if tree_might_refuse(body) {
        return None;
    }
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
        send: TypedSend {
            request: without_options(env.params?)?,
            raw: RawSource {
                body: body.clone(),
                in_params: true,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general path's reading of the same params.
    fn by_tree(params: &str) -> (SendMessageRequest, Value) {
        let mut v: Value = serde_json::from_str(params).unwrap();
        let req = SendMessageRequest::deserialize(&v).unwrap();
        (req, v.get_mut("message").map(Value::take).unwrap())
    }

    fn rest(p: &str) -> Option<TypedSend> {
        rest_send(&Bytes::copy_from_slice(p.as_bytes()))
    }

    fn rpc(b: &str) -> Option<JsonRpcSend> {
        jsonrpc_send(&Bytes::copy_from_slice(b.as_bytes()))
    }

    const PARAMS: [&str; 3] = [
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi \u00e9"}]}}"#,
        r#"{"tenant":"t","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},
           {"data":{"a":[1,2.5,null]}}],"metadata":{"k":"v"},"other":1},"metadata":{"z":1},
           "extra":[1]}"#,
        r#"{"message":{"messageId":"m","parts":[{"text":"x"}],"contextId":"c","taskId":"t"},
           "configuration":null}"#,
    ];

    #[test]
    fn typed_reads_agree_with_the_tree() {
        for p in PARAMS {
            let (req, raw) = by_tree(p);
            let t = rest(p).expect(p);
            assert_eq!(t.request, req, "{p}");
            assert_eq!(t.raw.message(), Some(raw.clone()), "{p}");
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{p}}}"#);
            let t = rpc(&body).expect(p);
            assert_eq!(t.send.request, req, "{p}");
            assert_eq!(t.send.raw.message(), Some(raw), "{p}");
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
            assert!(rest(p).is_none(), "{p}");
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{p}}}"#);
            assert!(rpc(&body).is_none(), "{p}");
        }
    }

    #[test]
    fn what_a_tree_read_refuses_goes_the_general_way() {
        let m = r#""message":{"messageId":"m","parts":[{"text":"x"}]}"#;
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for extra in [
            "1e400",
            "-1E400",
            "1.5e3",
            &"9".repeat(400),
            r#""\ud800""#,
            r#""a\uDBFFb""#,
            &deep,
        ] {
            let p = format!(r#"{{{m},"extra":{extra}}}"#);
            assert!(rest(&p).is_none(), "{p}");
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{p}}}"#);
            assert!(rpc(&body).is_none(), "{p}");
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","x":{extra},"params":{{{m}}}}}"#
            );
            assert!(rpc(&body).is_none(), "{body}");
        }
        let mut bad = format!(r#"{{{m},"extra":"#).into_bytes();
        bad.extend_from_slice(b"\"\xff\"}");
        assert!(rest_send(&Bytes::from(bad)).is_none());
        // What a tree read takes, the typed read takes too.
        for extra in [
            "1.5",
            "-0",
            "12345678901234567890",
            "true",
            "false",
            "null",
            r#""4e5b-1e9 \u00e9 \\ud800 \"q\"""#,
            r#"{"a":[1,{"b":"e"}]}"#,
        ] {
            let p = format!(r#"{{{m},"extra":{extra}}}"#);
            assert!(serde_json::from_str::<Value>(&p).is_ok(), "{p}");
            assert!(rest(&p).is_some(), "{p}");
        }
    }

    #[test]
    fn jsonrpc_sends_only() {
        let params = PARAMS[0];
        let body = |env: &str| env.replace("P", params);
        let ok = rpc(&body(
            r#"{"jsonrpc":"2.0","id":"a\u00e9","method":"SendMessage","params":P}"#,
        ))
        .unwrap();
        assert_eq!(ok.id.get(), r#""a\u00e9""#);
        assert!(!ok.streaming);
        let s = rpc(&body(
            r#"{"params":P,"method":"SendStreamingMessage","jsonrpc":"2.0"}"#,
        ))
        .unwrap();
        assert!(s.streaming && s.id.is_null());
        for env in [
            r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"SendMessage","params":P}"#,
            r#"{"id":1,"method":"SendMessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":null}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"SendMessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"\u0053endMessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"SendMessage","params":P}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":P,"params":P}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":P}]"#,
        ] {
            assert!(rpc(&body(env)).is_none(), "{env}");
        }
    }
}
