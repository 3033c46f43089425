//! JSON-RPC error `data`: 0.3 `any` <-> 1.0 list of `google.protobuf.Any` (hazards H34, H35).

use serde_json::{Map, Value, json};

/// `@type` of `google.rpc.ErrorInfo`.
pub const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `@type` of a `google.protobuf.Struct` detail (ProtoJSON `Any` of a well-known type: `value`).
pub const STRUCT: &str = "type.googleapis.com/google.protobuf.Struct";
/// `@type` of a `google.protobuf.Value` detail.
pub const VALUE: &str = "type.googleapis.com/google.protobuf.Value";
/// ErrorInfo domain of A2A errors.
pub const A2A_DOMAIN: &str = "a2a-protocol.org";

/// The ErrorInfo `reason` of an A2A error code (S1 §5.4), if the code is an A2A error.
pub fn reason_of(code: i64) -> Option<&'static str> {
    Some(match code {
        -32001 => "TASK_NOT_FOUND",
        -32002 => "TASK_NOT_CANCELABLE",
        -32003 => "PUSH_NOTIFICATION_NOT_SUPPORTED",
        -32004 => "UNSUPPORTED_OPERATION",
        -32005 => "CONTENT_TYPE_NOT_SUPPORTED",
        -32006 => "INVALID_AGENT_RESPONSE",
        -32007 => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        -32008 => "EXTENSION_SUPPORT_REQUIRED",
        -32009 => "VERSION_NOT_SUPPORTED",
        _ => return None,
    })
}

fn error_info(reason: &str, metadata: Option<Map<String, Value>>) -> Value {
    let mut o = Map::new();
    o.insert("@type".into(), ERROR_INFO.into());
    o.insert("reason".into(), reason.into());
    o.insert("domain".into(), A2A_DOMAIN.into());
    if let Some(m) = metadata {
        o.insert("metadata".into(), Value::Object(m));
    }
    Value::Object(o)
}

fn is_string_map(m: &Map<String, Value>) -> bool {
    m.values().all(Value::is_string)
}

fn is_any_list(v: &Value) -> bool {
    matches!(v, Value::Array(items) if items.iter().all(|i| i.get("@type").is_some_and(Value::is_string)))
}

/// 0.3 `data` (any) -> 1.0 `data` (details list), for `code`.
///
/// - a list of `@type` objects is already a details list and is kept;
/// - for an A2A code, an `ErrorInfo` with the code's reason comes first; a string-map object
///   becomes its `metadata`, anything else follows as a `Struct`/`Value` detail;
/// - for other codes, the data follows as a `Struct`/`Value` detail;
/// - absent data gives the bare `ErrorInfo` (A2A codes) or no data.
pub fn data_to_v1(code: i64, data: Option<Value>) -> Option<Value> {
    if let Some(d) = &data
        && is_any_list(d)
    {
        return data;
    }
    let reason = reason_of(code);
    let mut out = Vec::new();
    match (reason, data) {
        (Some(r), None) => out.push(error_info(r, None)),
        (None, None) => return None,
        (Some(r), Some(Value::Object(m))) if is_string_map(&m) => out.push(error_info(r, Some(m))),
        (r, Some(other)) => {
            if let Some(r) = r {
                out.push(error_info(r, None));
            }
            let ty = if other.is_object() { STRUCT } else { VALUE };
            out.push(json!({"@type": ty, "value": other}));
        }
    }
    Some(Value::Array(out))
}

/// 1.0 `data` (details list) -> 0.3 `data` (any), for `code`: the inverse of [`data_to_v1`].
pub fn data_to_v03(code: i64, data: Value) -> Option<Value> {
    let Value::Array(items) = &data else {
        // Not a details list (a non-conforming 1.0 peer): keep it, 0.3 data is `any`.
        return Some(data);
    };
    let reason = reason_of(code);
    let is_own_info = |v: &Value| {
        v.get("@type").and_then(Value::as_str) == Some(ERROR_INFO)
            && v.get("domain").and_then(Value::as_str) == Some(A2A_DOMAIN)
            && reason.is_some()
            && v.get("reason").and_then(Value::as_str) == reason
            && v.as_object().is_some_and(|o| {
                o.keys()
                    .all(|k| matches!(k.as_str(), "@type" | "reason" | "domain" | "metadata"))
            })
            && v.get("metadata").is_none_or(Value::is_object)
    };
    let wrapped = |v: &Value| -> Option<Value> {
        let ty = v.get("@type").and_then(Value::as_str)?;
        let obj = v.as_object()?;
        if obj.len() != 2 {
            return None;
        }
        let inner = obj.get("value")?;
        match ty {
            STRUCT if inner.is_object() => Some(inner.clone()),
            VALUE if !inner.is_object() => Some(inner.clone()),
            _ => None,
        }
    };
    match items.as_slice() {
        [info] if is_own_info(info) => info.get("metadata").cloned(),
        [info, detail] if is_own_info(info) && info.get("metadata").is_none() => {
            wrapped(detail).or(Some(data))
        }
        [detail] if reason.is_none() => wrapped(detail).or(Some(data)),
        _ => Some(data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_not_found_round_trip() {
        let d03 = json!({"taskId": "t-1"});
        let d1 = data_to_v1(-32001, Some(d03.clone())).unwrap();
        assert_eq!(d1[0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(d1[0]["metadata"], d03);
        assert_eq!(data_to_v03(-32001, d1), Some(d03));
    }

    #[test]
    fn scalar_and_nested_data_ride_in_well_known_types() {
        for (code, d) in [
            (-32603, json!("boom")),
            (-32001, json!({"n": {"x": 1}})),
            (-32001, json!([1, 2])),
        ] {
            let d1 = data_to_v1(code, Some(d.clone())).unwrap();
            assert_eq!(data_to_v03(code, d1), Some(d), "{code}");
        }
    }

    #[test]
    fn no_data_gets_bare_error_info_for_a2a_codes_only() {
        let d1 = data_to_v1(-32002, None).unwrap();
        assert_eq!(d1.as_array().unwrap().len(), 1);
        assert_eq!(data_to_v03(-32002, d1), None);
        assert_eq!(data_to_v1(-32602, None), None);
    }

    #[test]
    fn foreign_details_are_verbatim() {
        let d =
            json!([{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []}]);
        assert_eq!(data_to_v1(-32602, Some(d.clone())), Some(d.clone()));
        assert_eq!(data_to_v03(-32602, d.clone()), Some(d));
    }
}
