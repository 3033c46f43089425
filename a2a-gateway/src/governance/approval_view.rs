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
/// Parts the preview describes (their kind and size); `partsOmitted` counts the others.
pub const PREVIEW_PARTS: usize = 16;
/// Characters of a name the preview shows (the skill, the agent, a part's media type and file
/// name); a longer one is cut there and ends with `…`.
pub const PREVIEW_NAME_CHARS: usize = 100;
/// Bytes of a preview's JSON at most, whatever the request: [`PREVIEW_PARTS`] parts, names of
/// [`PREVIEW_NAME_CHARS`] and [`PREVIEW_CHARS`] of text, each character escaped at worst.
/// The queue lists previews, never requests, so a page costs this much per approval.
pub const PREVIEW_MAX_BYTES: usize = 32 * 1024;

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

/// `v` when it is a string of at most [`PREVIEW_NAME_CHARS`] characters, else its start and `…`.
fn clip(v: &Value) -> Value {
    match v.as_str() {
        Some(t) if t.chars().count() > PREVIEW_NAME_CHARS => {
            let mut c: String = t.chars().take(PREVIEW_NAME_CHARS).collect();
            c.push('…');
            json!(c)
        }
        _ => v.clone(),
    }
}

/// What the queue shows of a held request (1.0 params, the workspace's PII rules applied):
/// the operation, agent, skill, message facts and PII counts of the hop, the request's size,
/// the kind and size of its first [`PREVIEW_PARTS`] parts (`partsOmitted`: how many more), and
/// the first [`PREVIEW_CHARS`] characters of its text with the count of all of them. Names are
/// cut at [`PREVIEW_NAME_CHARS`]: the preview is at most [`PREVIEW_MAX_BYTES`]. The whole
/// request is [`request_view`].
pub fn preview(params10: &Value, facts: &Value) -> Value {
    let text = text_of(params10);
    let chars = text.chars().count();
    let short: String = text.chars().take(PREVIEW_CHARS).collect();
    let s = sizes(params10);
    let all = s["parts"].as_array().map_or(0, Vec::len);
    let parts: Vec<Value> = s["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .take(PREVIEW_PARTS)
        .map(|p| {
            let mut p = p.clone();
            for k in ["mediaType", "filename"] {
                if let Some(v) = p.get_mut(k) {
                    *v = clip(v);
                }
            }
            p
        })
        .collect();
    let mut out = json!({
        "operation": facts["operation"],
        "agent": clip(&facts["agent"]["id"]),
        "skill": clip(&facts["skill"]),
        "message": facts["message"],
        "pii": facts["pii"],
        "bytes": s["bytes"],
        "parts": parts,
        "text": short,
        "textChars": chars,
        "textComplete": chars <= PREVIEW_CHARS,
    });
    if all > PREVIEW_PARTS {
        out["partsOmitted"] = json!(all - PREVIEW_PARTS);
    }
    out
}

/// The whole held request of `a` as it will be sent, for an approver: `request` (the stored
/// request in 1.0 form: every part and member; an inline push config's token and credentials
/// shown as set) and `sizes` (the request, each part, the metadata).
pub fn request_view(a: &Approval) -> Result<Value, String> {
    let stored: Value =
        serde_json::from_str(&a.params).map_err(|e| format!("stored request: {e}"))?;
    let caller = if a.summary.caller_version == "0.3" {
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

    /// The worst request for a preview: many parts, every name and the text long and made of
    /// characters JSON escapes to six bytes. Its preview stays under the bound.
    #[test]
    fn preview_is_bounded_whatever_the_request() {
        let name = "\u{1}".repeat(10_000);
        let part = json!({"raw": "aGVsbG8=", "mediaType": name, "filename": name,
            "metadata": {"k": name}});
        let mut parts = vec![json!({"text": name})];
        parts.extend(std::iter::repeat_n(part, 200));
        let p = json!({"message": {"parts": parts}, "metadata": {"skill": name}});
        let facts = json!({"operation": "SendMessage", "agent": {"id": name}, "skill": name,
            "message": {"bytes": 1, "text_chars": 1, "parts": 201, "part_kinds": ["text", "file"]},
            "pii": {"EMAIL": 0}});
        let v = preview(&p, &facts);
        let bytes = v.to_string().len();
        assert!(bytes <= PREVIEW_MAX_BYTES, "{bytes} bytes");
        assert!(
            bytes > PREVIEW_MAX_BYTES / 2,
            "the worst case is near the bound: {bytes}"
        );
        assert_eq!(v["parts"].as_array().unwrap().len(), PREVIEW_PARTS);
        assert_eq!(v["partsOmitted"], 201 - PREVIEW_PARTS);
        assert_eq!(
            v["skill"].as_str().unwrap().chars().count(),
            PREVIEW_NAME_CHARS + 1
        );
        assert_eq!(
            v["parts"][1]["filename"].as_str().unwrap().chars().count(),
            PREVIEW_NAME_CHARS + 1
        );
        assert_eq!(
            v["parts"][1]["metadataBytes"],
            json!({"k": name}).to_string().len()
        );
    }
}
