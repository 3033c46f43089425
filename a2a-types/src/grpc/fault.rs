//! Where a gRPC request message goes wrong, as a field path: the caller's bad input is
//! INVALID_ARGUMENT with a `google.rpc.BadRequest` violation naming the field (never INTERNAL).
//!
//! Two walks, both run only once decoding has failed (nothing is added to a good request):
//! [`wire_fault`] reads the protobuf bytes field by field against the descriptor (a wire type
//! the field cannot have, a string that is not UTF-8, a truncated length), and [`value_fault`]
//! reads a decoded message for what has no ProtoJSON form (NaN or Infinity in a
//! `google.protobuf.Value`, a `Timestamp` or `Duration` out of range). Paths use the JSON names
//! (`message.metadata.score`, `message.parts[0].data.items[2]`); `Struct`, `Value` and
//! `ListValue` are transparent, as in their JSON form. Map keys are elided ([`crate::elide`]).

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage, Value,
};

use crate::elide::elide;

/// A field path and what is wrong there.
pub type Fault = (String, String);

/// Deepest nesting walked (prost's own recursion limit).
const MAX_DEPTH: usize = 100;

const STRUCT: &str = "google.protobuf.Struct";
const VALUE: &str = "google.protobuf.Value";
const LIST: &str = "google.protobuf.ListValue";

fn fault(path: &str, why: impl Into<String>) -> Fault {
    (path.to_owned(), why.into())
}

fn push_name(path: &mut String, name: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
}

/// A message whose fields JSON does not name: `Struct`, `Value`, `ListValue`, map entries.
fn transparent(desc: &MessageDescriptor) -> bool {
    desc.is_map_entry() || matches!(desc.full_name(), STRUCT | VALUE | LIST)
}

// ---------------------------------------------------------------------------------------------
// The bytes
// ---------------------------------------------------------------------------------------------

/// The first field of `bytes` (a `desc` message that did not decode) that is wrong.
pub fn wire_fault(desc: &MessageDescriptor, bytes: &[u8]) -> Option<Fault> {
    let mut path = String::new();
    walk_bytes(desc, bytes, &mut path, 0).err()
}

fn varint(buf: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let (&b, rest) = buf.split_first()?;
        *buf = rest;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if buf.len() < n {
        return None;
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Some(head)
}

/// The wire type a field's values have (a packed repeated scalar also comes as 2).
fn wire_of(kind: &Kind) -> u8 {
    match kind {
        Kind::Message(_) | Kind::String | Kind::Bytes => 2,
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 1,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 5,
        _ => 0,
    }
}

fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => m.full_name().to_owned(),
        Kind::Enum(e) => e.full_name().to_owned(),
        k => format!("{k:?}").to_ascii_lowercase(),
    }
}

fn walk_bytes(
    desc: &MessageDescriptor,
    mut buf: &[u8],
    path: &mut String,
    depth: usize,
) -> Result<(), Fault> {
    if depth > MAX_DEPTH {
        return Err(fault(path, "nested too deeply"));
    }
    let mut seen: Vec<(u32, usize)> = Vec::new();
    while !buf.is_empty() {
        let tag = varint(&mut buf).ok_or_else(|| fault(path, "truncated field tag"))?;
        let wire = (tag & 7) as u8;
        let number = u32::try_from(tag >> 3).unwrap_or(0);
        let value: &[u8] = match wire {
            0 => varint(&mut buf)
                .map(|_| &[][..])
                .ok_or_else(|| fault(path, "truncated varint"))?,
            1 => take(&mut buf, 8).ok_or_else(|| fault(path, "truncated fixed64"))?,
            2 => {
                let len = varint(&mut buf).ok_or_else(|| fault(path, "truncated length"))?;
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                take(&mut buf, len).ok_or_else(|| fault(path, "length past the message end"))?
            }
            5 => take(&mut buf, 4).ok_or_else(|| fault(path, "truncated fixed32"))?,
            // Groups (not in a2a.proto) and invalid wire types: the location is this message.
            _ => return Err(fault(path, format!("unsupported wire type {wire}"))),
        };
        let Some(field) = desc.get_field(number) else {
            continue;
        };
        let at = path.len();
        name_field(desc, &field, &mut seen, path);
        let kind = field.kind();
        let expected = wire_of(&kind);
        let packed = wire == 2 && field.is_list() && expected != 2;
        if wire != expected && !packed {
            return Err(fault(
                path,
                format!("wrong wire type for a {} field", kind_name(&kind)),
            ));
        }
        match kind {
            Kind::Message(m) if field.is_map() => walk_entry(&m, value, path, depth + 1)?,
            Kind::Message(m) => walk_bytes(&m, value, path, depth + 1)?,
            Kind::String if std::str::from_utf8(value).is_err() => {
                return Err(fault(path, "a string that is not valid UTF-8"));
            }
            _ => {}
        }
        path.truncate(at);
    }
    Ok(())
}

/// Appends the field's step to `path`: its JSON name, `[i]` for the i-th element of a list
/// (nothing for the fields of `Struct`, `Value` and `ListValue`, which JSON does not show).
fn name_field(
    desc: &MessageDescriptor,
    field: &FieldDescriptor,
    seen: &mut Vec<(u32, usize)>,
    path: &mut String,
) {
    if !transparent(desc) {
        push_name(path, field.json_name());
    }
    if field.is_list() {
        let i = match seen.iter_mut().find(|(n, _)| *n == field.number()) {
            Some((_, c)) => {
                *c += 1;
                *c
            }
            None => {
                seen.push((field.number(), 0));
                0
            }
        };
        path.push_str(&format!("[{i}]"));
    }
}

/// A map entry: its key names the step; the entry is then walked as a transparent message
/// (a wrong wire type or a bad value inside is at `map.key`).
fn walk_entry(
    entry: &MessageDescriptor,
    bytes: &[u8],
    path: &mut String,
    depth: usize,
) -> Result<(), Fault> {
    let mut key = String::new();
    let mut buf = bytes;
    while !buf.is_empty() {
        let Some(tag) = varint(&mut buf) else { break };
        let slice = match tag & 7 {
            0 => varint(&mut buf).map(|v| {
                if tag >> 3 == 1 {
                    key = v.to_string();
                }
                &[][..]
            }),
            1 => take(&mut buf, 8),
            2 => varint(&mut buf).and_then(|l| take(&mut buf, usize::try_from(l).ok()?)),
            5 => take(&mut buf, 4),
            _ => None,
        };
        let Some(slice) = slice else { break };
        if tag >> 3 == 1 && tag & 7 == 2 {
            key = String::from_utf8_lossy(slice).into_owned();
        }
    }
    push_name(path, &elide(&key));
    walk_bytes(entry, bytes, path, depth)
}

// ---------------------------------------------------------------------------------------------
// The decoded message
// ---------------------------------------------------------------------------------------------

/// The first value of `msg` that has no ProtoJSON form.
pub fn value_fault(msg: &DynamicMessage) -> Option<Fault> {
    let mut path = String::new();
    walk_message(msg, &mut path, 0).err()
}

fn int_field(msg: &DynamicMessage, name: &str) -> i64 {
    msg.get_field_by_name(name)
        .and_then(|v| v.as_i64().or_else(|| v.as_i32().map(i64::from)))
        .unwrap_or(0)
}

fn walk_message(msg: &DynamicMessage, path: &mut String, depth: usize) -> Result<(), Fault> {
    if depth > MAX_DEPTH {
        return Err(fault(path, "nested too deeply"));
    }
    let desc = msg.descriptor();
    let name = desc.full_name();
    match name {
        "google.protobuf.Timestamp" => {
            let (s, n) = (int_field(msg, "seconds"), int_field(msg, "nanos"));
            // 0001-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z (the Timestamp definition).
            if !(-62_135_596_800..=253_402_300_799).contains(&s) || !(0..=999_999_999).contains(&n)
            {
                return Err(fault(path, "a timestamp outside years 1 to 9999"));
            }
        }
        "google.protobuf.Duration" => {
            let (s, n) = (int_field(msg, "seconds"), int_field(msg, "nanos"));
            if !(-315_576_000_000..=315_576_000_000).contains(&s)
                || !(-999_999_999..=999_999_999).contains(&n)
                || (s > 0 && n < 0)
                || (s < 0 && n > 0)
            {
                return Err(fault(path, "a duration out of range"));
            }
        }
        _ => {}
    }
    for (field, value) in msg.fields() {
        let at = path.len();
        if !transparent(&desc) {
            push_name(path, field.json_name());
        }
        walk_value(value, name == VALUE, path, depth)?;
        path.truncate(at);
    }
    Ok(())
}

fn walk_value(v: &Value, in_value: bool, path: &mut String, depth: usize) -> Result<(), Fault> {
    match v {
        Value::F64(x) if in_value && !x.is_finite() => Err(fault(
            path,
            "NaN and Infinity are not numbers JSON can carry (google.protobuf.Value)",
        )),
        Value::Message(m) => walk_message(m, path, depth + 1),
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                let at = path.len();
                path.push_str(&format!("[{i}]"));
                walk_value(item, in_value, path, depth)?;
                path.truncate(at);
            }
            Ok(())
        }
        Value::Map(entries) => {
            for (k, item) in entries {
                let at = path.len();
                let key = match k {
                    MapKey::String(s) => elide(s).into_owned(),
                    MapKey::Bool(b) => b.to_string(),
                    MapKey::I32(n) => n.to_string(),
                    MapKey::I64(n) => n.to_string(),
                    MapKey::U32(n) => n.to_string(),
                    MapKey::U64(n) => n.to_string(),
                };
                push_name(path, &key);
                walk_value(item, false, path, depth)?;
                path.truncate(at);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::{descriptor, json_to_message, message_to_json};
    use prost::Message as _;
    use serde_json::json;

    /// `json` as `full_name` bytes with each 8-byte double `from` replaced by `to`.
    fn bytes_with(full_name: &str, json: serde_json::Value, from: f64, to: f64) -> Vec<u8> {
        let desc = descriptor(full_name).expect("descriptor");
        let mut b = json_to_message(&desc, &json)
            .expect("valid")
            .encode_to_vec();
        let (from, to) = (from.to_le_bytes(), to.to_le_bytes());
        let at = b.windows(8).position(|w| w == from).expect("the double");
        b[at..at + 8].copy_from_slice(&to);
        b
    }

    fn send(part: serde_json::Value) -> serde_json::Value {
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}, part]}})
    }

    #[test]
    fn non_finite_numbers_are_found_with_their_path() {
        let req = "lf.a2a.v1.SendMessageRequest";
        for (bad, part, path) in [
            (
                f64::NAN,
                json!({"data": {"items": [1, 2.5]}}),
                "message.parts[1].data.items[1]",
            ),
            (
                f64::INFINITY,
                json!({"text": "b", "metadata": {"score": 2.5}}),
                "message.parts[1].metadata.score",
            ),
        ] {
            let b = bytes_with(req, send(part), 2.5, bad);
            let desc = descriptor(req).expect("descriptor");
            let msg = DynamicMessage::decode(desc.clone(), b.as_slice()).expect("decodes");
            assert!(message_to_json(&msg).is_err(), "{bad}");
            let (p, why) = value_fault(&msg).expect("found");
            assert_eq!(p, path);
            assert!(why.contains("NaN"), "{why}");
            // The bytes are fine as protobuf: the wire walk finds nothing.
            assert_eq!(wire_fault(&desc, &b), None);
        }
    }

    #[test]
    fn timestamps_out_of_range_are_found() {
        let desc = descriptor("lf.a2a.v1.ListTasksRequest").expect("descriptor");
        let mut msg = json_to_message(
            &desc,
            &json!({"statusTimestampAfter": "2024-01-01T00:00:00Z"}),
        )
        .expect("valid");
        let ts = msg
            .get_field_by_name_mut("status_timestamp_after")
            .and_then(|v| v.as_message_mut())
            .expect("timestamp");
        ts.set_field_by_name("seconds", Value::I64(i64::MAX));
        assert!(message_to_json(&msg).is_err());
        let (p, _) = value_fault(&msg).expect("found");
        assert_eq!(p, "statusTimestampAfter");
    }

    #[test]
    fn wrong_wire_types_and_bad_strings_are_found() {
        let desc = descriptor("lf.a2a.v1.SendMessageRequest").expect("descriptor");
        // message (field 2) { parts (field 5, a message) as a varint }.
        let inner = [0x28, 0x01];
        let mut b = vec![0x12, inner.len() as u8];
        b.extend_from_slice(&inner);
        assert!(DynamicMessage::decode(desc.clone(), b.as_slice()).is_err());
        let (p, why) = wire_fault(&desc, &b).expect("found");
        assert_eq!(p, "message.parts[0]");
        assert!(why.contains("wrong wire type"), "{why}");
        // message { message_id (field 1) = invalid UTF-8 }.
        let inner = [0x0a, 0x02, 0xff, 0xfe];
        let mut b = vec![0x12, inner.len() as u8];
        b.extend_from_slice(&inner);
        assert!(DynamicMessage::decode(desc.clone(), b.as_slice()).is_err());
        let (p, why) = wire_fault(&desc, &b).expect("found");
        assert_eq!(p, "message.messageId");
        assert!(why.contains("UTF-8"), "{why}");
        // A length past the end.
        let (p, _) = wire_fault(&desc, &[0x12, 0x7f, 0x00]).expect("found");
        assert_eq!(p, "");
    }

    #[test]
    fn map_keys_name_the_step_and_are_elided() {
        let desc = descriptor("lf.a2a.v1.SendMessageRequest").expect("descriptor");
        let key = "k".repeat(10_000);
        let b = bytes_with(
            "lf.a2a.v1.SendMessageRequest",
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}]},
                   "metadata": {key.clone(): {"inner": 2.5}}}),
            2.5,
            f64::NEG_INFINITY,
        );
        let msg = DynamicMessage::decode(desc, b.as_slice()).expect("decodes");
        let (p, _) = value_fault(&msg).expect("found");
        assert!(p.starts_with("metadata.kkk"), "{p}");
        assert!(p.ends_with("(10000 bytes).inner"), "{p}");
        assert!(p.len() < 300);
    }
}
