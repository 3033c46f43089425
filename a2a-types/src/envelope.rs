//! The JSON-RPC request envelope as a server reads it, with the `id` kept as its exact JSON text.
//!
//! [`jsonrpc::Id`](crate::jsonrpc::Id) stores numbers as `serde_json::Number`, which (without
//! serde_json's `arbitrary_precision`) turns integers beyond `i64`/`u64` into floats. A server
//! must echo the caller's id exactly, so [`parse_envelope`] keeps it as a [`RawId`] (the id's own
//! JSON text, checked to be a string, a number or `null`) and [`RawId::result_text`] /
//! [`RawId::error_text`] write responses around that text.
//!
//! Refusals ([`EnvelopeError`]): a body that is not JSON (`-32700`), a batch (an array: batches
//! are not supported), any other non-object, and an id that is an object, array or boolean
//! (`-32600`, answered with `id: null`).

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON-RPC id kept as its exact JSON text: a string, a number of any size, or `null`.
#[derive(Debug, Clone)]
pub struct RawId(Box<RawValue>);

impl PartialEq for RawId {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for RawId {}

impl Default for RawId {
    fn default() -> Self {
        RawId::null()
    }
}

impl RawId {
    /// The `null` id.
    pub fn null() -> RawId {
        RawId(RawValue::NULL.to_owned())
    }

    /// The id in `raw` if it is a string, a number or `null`.
    pub fn from_raw(raw: &RawValue) -> Option<RawId> {
        let text = raw.get().trim();
        match text.as_bytes().first()? {
            b'"' | b'-' | b'0'..=b'9' | b'n' => {
                RawValue::from_string(text.to_owned()).ok().map(RawId)
            }
            _ => None,
        }
    }

    /// The id's JSON text, exactly as the caller sent it.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        self.0.get() == "null"
    }

    /// The id as a JSON value when a `serde_json::Value` carries it exactly (strings, null,
    /// numbers that print back to the same text); `None` for, e.g., integers beyond `u64`.
    pub fn to_exact_value(&self) -> Option<Value> {
        let v: Value = serde_json::from_str(self.get()).ok()?;
        match &v {
            Value::Number(n) if n.to_string() != self.get() => None,
            _ => Some(v),
        }
    }

    /// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` as text.
    pub fn result_text(&self, result: &Value) -> String {
        self.member_text("result", result)
    }

    /// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` as text, serialised straight from a typed
    /// value (no JSON tree in between). Fails only when `result` cannot be serialised as JSON.
    pub fn result_text_of<T: Serialize + ?Sized>(&self, result: &T) -> serde_json::Result<String> {
        self.try_member_text("result", result)
    }

    /// [`RawId::result_text_of`] as UTF-8 bytes (no text check of what serde_json wrote), in a
    /// buffer of at least `capacity` bytes: a caller that knows about how large its answers are
    /// saves the buffer's regrowths.
    pub fn result_bytes_of<T: Serialize + ?Sized>(
        &self,
        result: &T,
        capacity: usize,
    ) -> serde_json::Result<Vec<u8>> {
        self.member_bytes("result", result, capacity)
    }

    /// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` with `result` already JSON text, written
    /// as it is (the caller vouches that it is one checked JSON value, e.g. a peer's answer
    /// passed through).
    pub fn result_text_raw(&self, result: &str) -> String {
        let mut out = self.open_text("result", result.len());
        out.push_str(result);
        out.push('}');
        out
    }

    /// `{"jsonrpc":"2.0","id":<id>,"error":<error>}` as text.
    pub fn error_text(&self, error: &Value) -> String {
        self.member_text("error", error)
    }

    /// `{"jsonrpc":"2.0","id":<id>,"<name>":<value>}`, serialised straight into one buffer
    /// (not through `fmt`, which costs several times more per token on hot paths).
    fn member_text(&self, name: &str, value: &Value) -> String {
        // Writing a `Value` into a Vec cannot fail (string keys, finite numbers).
        self.try_member_text(name, value).unwrap_or_default()
    }

    fn try_member_text<T: Serialize + ?Sized>(
        &self,
        name: &str,
        value: &T,
    ) -> serde_json::Result<String> {
        let out = self.member_bytes(name, value, 256)?;
        // Only UTF-8 went in: the id is a `str`, serde_json writes UTF-8.
        Ok(String::from_utf8(out).unwrap_or_default())
    }

    fn member_bytes<T: Serialize + ?Sized>(
        &self,
        name: &str,
        value: &T,
        capacity: usize,
    ) -> serde_json::Result<Vec<u8>> {
        let mut out = self.open(name, capacity);
        serde_json::to_writer(&mut out, value)?;
        out.push(b'}');
        Ok(out)
    }

    /// `{"jsonrpc":"2.0","id":<id>,"<name>":` in a buffer with room for `capacity` more bytes.
    fn open(&self, name: &str, capacity: usize) -> Vec<u8> {
        self.open_text(name, capacity).into_bytes()
    }

    /// [`Self::open`] as text (what follows is text too: no UTF-8 check of the whole).
    fn open_text(&self, name: &str, capacity: usize) -> String {
        let id = self.get();
        let mut out = String::with_capacity(40 + id.len() + name.len() + capacity);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(id);
        out.push_str(",\"");
        out.push_str(name);
        out.push_str("\":");
        out
    }
}

impl fmt::Display for RawId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for RawId {
    /// Exact with the `serde_json` serializer; other serializers see the raw value's own form.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// What was wrong with an envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvelopeErrorKind {
    /// The body is not JSON (`-32700`).
    NotJson,
    /// The body is a JSON array: batch requests are not supported (`-32600`).
    Batch,
    /// The body is JSON but not an object (`-32600`).
    NotObject,
    /// The id is an object, an array or a boolean (`-32600`).
    BadId,
}

/// A refused envelope; the answer's id is always `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeError {
    /// Which refusal.
    pub kind: EnvelopeErrorKind,
    /// A description naming what was wrong.
    pub detail: String,
}

impl EnvelopeError {
    /// The JSON-RPC code: `-32700` for [`EnvelopeErrorKind::NotJson`], else `-32600`.
    pub fn code(&self) -> i64 {
        match self.kind {
            EnvelopeErrorKind::NotJson => crate::error::ErrorKind::JsonParse.code(),
            _ => crate::error::ErrorKind::InvalidRequest.code(),
        }
    }
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.detail, self.code())
    }
}

impl std::error::Error for EnvelopeError {}

/// A JSON-RPC request object: its exact id and every other member as JSON values.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The id (`null` when absent).
    pub id: RawId,
    /// True when the body had an `id` member (false for a notification).
    pub has_id: bool,
    /// The other members (`jsonrpc`, `method`, `params`, ...), unchecked.
    pub members: Map<String, Value>,
}

impl Envelope {
    /// The `method` member if it is a string.
    pub fn method(&self) -> Option<&str> {
        self.members.get("method").and_then(Value::as_str)
    }
}

/// Reads a JSON-RPC request body: JSON, a single object, an id that is a string, number or null.
/// The members other than `id` are returned unchecked for the caller's own rules.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, EnvelopeError> {
    // One pass: the id as its raw text, every other member straight into a value.
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed = serde::Deserializer::deserialize_map(&mut de, Members).and_then(|m| {
        de.end()?;
        Ok(m)
    });
    let (raw_id, members) = match parsed {
        Ok(m) => m,
        Err(e) => return Err(not_an_object(body, e)),
    };
    let id = match &raw_id {
        None => RawId::null(),
        Some(v) => RawId::from_raw(v).ok_or_else(|| EnvelopeError {
            kind: EnvelopeErrorKind::BadId,
            detail: "id must be a string, a number or null".into(),
        })?,
    };
    Ok(Envelope {
        id,
        has_id: raw_id.is_some(),
        members,
    })
}

/// Reads a JSON object as its `id` (raw text; the last one when repeated) and its other members
/// (the last of a repeated name wins).
struct Members;

impl<'de> serde::de::Visitor<'de> for Members {
    type Value = (Option<Box<RawValue>>, Map<String, Value>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut id = None;
        let mut members = Map::new();
        while let Some(k) = a.next_key::<String>()? {
            if k == "id" {
                id = Some(a.next_value::<Box<RawValue>>()?);
            } else {
                let v: Value = a.next_value()?;
                members.insert(k, v);
            }
        }
        Ok((id, members))
    }
}

fn not_an_object(body: &[u8], e: serde_json::Error) -> EnvelopeError {
    if let Err(syntax) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return EnvelopeError {
            kind: EnvelopeErrorKind::NotJson,
            detail: syntax.to_string(),
        };
    }
    let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'[') {
        EnvelopeError {
            kind: EnvelopeErrorKind::Batch,
            detail: "batch requests are not supported; send one request object".into(),
        }
    } else if first == Some(b'{') {
        // An object the map could not hold (e.g. a key that is not valid UTF-8 text).
        EnvelopeError {
            kind: EnvelopeErrorKind::NotJson,
            detail: e.to_string(),
        }
    } else {
        EnvelopeError {
            kind: EnvelopeErrorKind::NotObject,
            detail: "the body must be a JSON-RPC request object".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(b: &str) -> EnvelopeErrorKind {
        parse_envelope(b.as_bytes()).unwrap_err().kind
    }

    #[test]
    fn a_raw_result_is_written_as_it_is() {
        let id = parse_envelope(br#"{"jsonrpc":"2.0","id":7,"method":"m"}"#)
            .unwrap()
            .id;
        let raw = r#"{ "task" : {"id":"t\u00e9"} }"#;
        assert_eq!(
            id.result_text_raw(raw),
            format!(r#"{{"jsonrpc":"2.0","id":7,"result":{raw}}}"#)
        );
        let v: Value = serde_json::from_str(raw).unwrap();
        let back: Value = serde_json::from_str(&id.result_text_raw(raw)).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<Value>(&id.result_text(&v)).unwrap()
        );
    }

    #[test]
    fn result_bytes_are_the_result_text() {
        let id = parse_envelope(br#"{"jsonrpc":"2.0","id":"x\u00e9","method":"m"}"#)
            .unwrap()
            .id;
        let v = serde_json::json!({"a": [1, "\u{e9}\n"], "b": null});
        for cap in [0, 1024] {
            let bytes = id.result_bytes_of(&v, cap).unwrap();
            assert_eq!(bytes, id.result_text(&v).into_bytes());
            assert!(bytes.capacity() >= cap);
        }
    }

    #[test]
    fn ids_kept_exactly() {
        for id in [
            "-9223372036854775809",
            "18446744073709551616",
            "1.50",
            "1e400",
            "\"a\\u00e9\"",
            "7",
            "null",
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id": {id} ,"method":"m"}}"#);
            let e = parse_envelope(body.as_bytes()).unwrap();
            assert_eq!(e.id.get(), id);
            assert!(e.has_id);
            assert_eq!(
                e.id.result_text(&Value::Null),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#)
            );
        }
        let e = parse_envelope(br#"{"jsonrpc":"2.0","method":"m"}"#).unwrap();
        assert!(e.id.is_null() && !e.has_id);
        assert_eq!(e.method(), Some("m"));
    }

    #[test]
    fn texts_write_the_value_as_serde_json_does() {
        let id = RawId::from_raw(&RawValue::from_string("\"r-1\"".into()).unwrap()).unwrap();
        let v =
            serde_json::json!({"task": {"id": "t\"1\\", "parts": [{"text": "é\n😀"}, 1.5, null]}});
        assert_eq!(
            id.result_text(&v),
            format!(r#"{{"jsonrpc":"2.0","id":"r-1","result":{v}}}"#)
        );
        let e = serde_json::json!({"code": -32001, "message": "Task not found"});
        assert_eq!(
            id.error_text(&e),
            format!(r#"{{"jsonrpc":"2.0","id":"r-1","error":{e}}}"#)
        );
    }

    #[test]
    fn exact_values() {
        let id = |s: &str| RawId::from_raw(&RawValue::from_string(s.into()).unwrap()).unwrap();
        assert_eq!(id("7").to_exact_value(), Some(Value::from(7)));
        assert_eq!(id("\"x\"").to_exact_value(), Some(Value::from("x")));
        assert_eq!(id("18446744073709551616").to_exact_value(), None);
        assert_eq!(id("-9223372036854775809").to_exact_value(), None);
    }

    #[test]
    fn members_are_read_in_one_pass_the_last_of_a_name_winning() {
        let e = parse_envelope(
            br#"{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":[1,{"y":null}]},"id":"2","method":"b"}"#,
        )
        .unwrap();
        assert_eq!(e.id.get(), "\"2\"");
        assert!(e.has_id);
        assert_eq!(e.method(), Some("b"));
        assert_eq!(
            e.members["params"],
            serde_json::json!({"x": [1, {"y": null}]})
        );
        assert!(!e.members.contains_key("id"));
        assert_eq!(e.members.len(), 3);
        assert_eq!(kind(r#"{"id":1} x"#), EnvelopeErrorKind::NotJson);
        assert_eq!(
            kind(r#"{"id":1,"params":[1,]}"#),
            EnvelopeErrorKind::NotJson
        );
    }

    #[test]
    fn refusals() {
        assert_eq!(kind("{"), EnvelopeErrorKind::NotJson);
        assert_eq!(kind(""), EnvelopeErrorKind::NotJson);
        assert_eq!(kind("[]"), EnvelopeErrorKind::Batch);
        assert_eq!(
            kind(r#" [{"jsonrpc":"2.0","id":1,"method":"m"}]"#),
            EnvelopeErrorKind::Batch
        );
        assert_eq!(kind("3"), EnvelopeErrorKind::NotObject);
        assert_eq!(kind("null"), EnvelopeErrorKind::NotObject);
        for id in ["{}", "[1]", "true", "false"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
            let e = parse_envelope(body.as_bytes()).unwrap_err();
            assert_eq!((e.kind, e.code()), (EnvelopeErrorKind::BadId, -32600));
        }
        assert_eq!(parse_envelope(b"\xff").unwrap_err().code(), -32700);
    }
}
