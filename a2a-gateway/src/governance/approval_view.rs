//! What an approver sees of a held request (issue 39): the queue's [`preview`] (the facts, every
//! part's kind and size, the start of the text) and, for one approval, the whole request as it
//! will be sent ([`request_view`]): every part and member, with sizes. Both show the request
//! after the workspace's PII rules ran on it (a `redact` rule's findings are placeholders;
//! findings a rule only records are shown, and counted in `pii`); webhook secrets of an inline
//! push config are shown as set, never their value.

use base64::Engine;
use serde_json::{Value, json};

use super::approval::Approval;
use crate::protocol::errors::Version;
use crate::protocol::ops::Operation;

/// Characters of text the queue's preview shows (the whole request: [`request_view`]).
pub const PREVIEW_CHARS: usize = 200;

/// The kind of a 1.0 part and the bytes of its content (text: UTF-8 bytes; data: its JSON;
/// raw: the decoded bytes; url: the URL), with its media type and file name when set.
fn part_size(p: &Value) -> Value {
    let (kind, bytes) = if let Some(t) = p.get("text").and_then(Value::as_str) {
        ("text", t.len())
    } else if let Some(d) = p.get("data") {
        ("data", d.to_string().len())
    } else if let Some(r) = p.get("raw").and_then(Value::as_str) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(r)
            .map(|b| b.len());
        ("raw", decoded.unwrap_or(r.len()))
    } else if let Some(u) = p.get("url").and_then(Value::as_str) {
        ("url", u.len())
    } else {
        ("unknown", p.to_string().len())
    };
    let mut out = json!({"kind": kind, "bytes": bytes});
    for k in ["mediaType", "filename"] {
        if let Some(v) = p.get(k).and_then(Value::as_str) {
            out[k] = json!(v);
        }
    }
    if let Some(m) = p.get("metadata") {
        out["metadataBytes"] = json!(m.to_string().len());
    }
    out
}

/// The sizes of a 1.0 SendMessage request: the whole request's JSON, each part, and the
/// metadata of the request and of its message.
fn sizes(p10: &Value) -> Value {
    let msg = p10.get("message");
    let parts: Vec<Value> = msg
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(|ps| ps.iter().map(part_size).collect())
        .unwrap_or_default();
    let len = |v: Option<&Value>| v.map_or(0, |v| v.to_string().len());
    json!({
        "bytes": p10.to_string().len(),
        "parts": parts,
        "metadataBytes": len(p10.get("metadata")),
        "messageMetadataBytes": len(msg.and_then(|m| m.get("metadata"))),
    })
}

/// The text parts of a 1.0 request, joined by a space.
fn text_of(p10: &Value) -> String {
    p10.get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// What the queue shows of a held request (1.0 params, the workspace's PII rules applied):
/// the operation, agent, skill, message facts and PII counts of the hop, the request's sizes
/// (every part's kind and size), and the first [`PREVIEW_CHARS`] characters of its text with
/// the count of all of them. The whole request is [`request_view`].
pub fn preview(params10: &Value, facts: &Value) -> Value {
    let text = text_of(params10);
    let chars = text.chars().count();
    let short: String = text.chars().take(PREVIEW_CHARS).collect();
    let s = sizes(params10);
    json!({
        "operation": facts["operation"],
        "agent": facts["agent"]["id"],
        "skill": facts["skill"],
        "message": facts["message"],
        "pii": facts["pii"],
        "bytes": s["bytes"],
        "parts": s["parts"],
        "text": short,
        "textChars": chars,
        "textComplete": chars <= PREVIEW_CHARS,
    })
}

/// The whole held request of `a` as it will be sent, for an approver: `request` (the stored
/// request in 1.0 form: every part and member; an inline push config's token and credentials
/// shown as set) and `sizes` (the request, each part, the metadata).
pub fn request_view(a: &Approval) -> Result<Value, String> {
    let stored: Value =
        serde_json::from_str(&a.params).map_err(|e| format!("stored request: {e}"))?;
    let caller = if a.caller_version == "0.3" {
        Version::V03
    } else {
        Version::V1
    };
    let mut p10 = crate::protocol::xlate::translate_request(
        Operation::SendMessage,
        caller,
        Version::V1,
        &stored,
    )
    .map_err(|r| format!("stored request: {}", r.message))?;
    if let Some(c) = p10.get_mut("configuration") {
        crate::protocol::secrets::hide_push_secrets(c);
    }
    let sizes = sizes(&p10);
    Ok(json!({"request": p10, "sizes": sizes}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_of_every_part() {
        let p = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [
            {"text": "héllo"},
            {"data": {"a": 1}},
            {"raw": "aGVsbG8=", "mediaType": "application/octet-stream", "filename": "h.bin"},
            {"url": "https://x/y"}
        ], "metadata": {"k": "v"}}, "metadata": {"skill": "refund"}});
        let s = sizes(&p);
        let parts = s["parts"].as_array().unwrap();
        assert_eq!(parts[0], json!({"kind": "text", "bytes": 6}));
        assert_eq!(parts[1], json!({"kind": "data", "bytes": 7}));
        assert_eq!(parts[2]["bytes"], 5);
        assert_eq!(parts[2]["filename"], "h.bin");
        assert_eq!(parts[3], json!({"kind": "url", "bytes": 11}));
        assert_eq!(s["metadataBytes"], 18);
        assert_eq!(s["messageMetadataBytes"], 9);
        assert_eq!(s["bytes"], p.to_string().len());
    }

    #[test]
    fn preview_says_when_the_text_goes_on() {
        let long = "a".repeat(PREVIEW_CHARS + 1);
        let p = json!({"message": {"parts": [{"text": long}, {"text": "then this"}]}});
        let v = preview(&p, &json!({}));
        assert_eq!(v["text"].as_str().unwrap().len(), PREVIEW_CHARS);
        assert_eq!(v["textComplete"], false);
        assert_eq!(v["textChars"], PREVIEW_CHARS + 11);
        assert_eq!(v["parts"].as_array().unwrap().len(), 2);
    }
}
