//! JSON type names, display-path segments and member spellings (snake_case to lowerCamelCase).

use serde_json::Value;

pub(in crate::strict) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(super) fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

pub(super) fn push_index(path: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "[{i}]");
}

pub(super) fn push_member(path: &mut String, name: &str) {
    let simple = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '-');
    if simple {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
    } else {
        path.push('[');
        path.push_str(&Value::String(name.to_owned()).to_string());
        path.push(']');
    }
}

/// The JSON (lowerCamelCase) name of a proto (snake_case) member name: `task_id` -> `taskId`;
/// `None` for a name without `_`.
pub fn snake_to_camel(s: &str) -> Option<String> {
    if !s.contains('_') {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    Some(out)
}
