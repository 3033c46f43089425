//! The matcher engine: compares an actual JSON value with an expected one that may contain matchers.
//!
//! Matchers are JSON strings starting with `$` (see `docs/conformance.md`):
//!
//! | matcher | matches |
//! | --- | --- |
//! | `"$any"` | any value (the member must be present) |
//! | `"$absent"` | as an object member value: the member must not be present |
//! | `"$any_string"` | any string |
//! | `"$non_empty_string"` | any string except `""` |
//! | `"$number"` | any number |
//! | `"$bool"` | `true` or `false` |
//! | `"$object"` / `"$array"` | any object / any array |
//! | `"$uuid"` | a string holding a UUID (any version, hyphenated) |
//! | `"$timestamp"` | an RFC 3339 timestamp in UTC (`Z`) |
//! | `"$timestamp_any"` | an ISO 8601 date-time, with or without zone (what 0.3 peers send) |
//! | `"$regex:RE"` | a string matching the regular expression `RE` (anchored) |
//! | `"$capture:NAME"` | any value; it is remembered as variable `NAME` |
//! | `"${NAME}"` | exactly the value of variable `NAME` (also substituted inside longer strings) |
//! | `"$$..."` | the literal string `"$..."` |
//!
//! Objects match member by member and must have no members beyond the expected ones, unless the expected
//! object has the member `"$extra": true`. Arrays match element by element and must have the same length,
//! unless the expected array's first element is the string `"$prefix"` (then the actual array may be longer).

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

/// Variables bound by `$capture:NAME` and read by `${NAME}`.
pub type Vars = BTreeMap<String, Value>;

/// One mismatch: where (a JSON path like `result.status.state`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// JSON path of the mismatching value (`""` is the root).
    pub path: String,
    /// What was expected and what was found.
    pub reason: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "(root): {}", self.reason)
        } else {
            write!(f, "{}: {}", self.path, self.reason)
        }
    }
}

/// Matches `actual` against `expected`, binding captures into `vars`; returns every mismatch found.
pub fn match_value(expected: &Value, actual: &Value, vars: &mut Vars) -> Vec<Mismatch> {
    let mut out = Vec::new();
    match_at("", expected, Some(actual), vars, &mut out);
    out
}

/// Matches an optional actual value (`None` = the member is absent).
pub fn match_optional(
    path: &str,
    expected: &Value,
    actual: Option<&Value>,
    vars: &mut Vars,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    match_at(path, expected, actual, vars, &mut out);
    out
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 120 {
        let mut end = 117;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s
    }
}

fn match_at(
    path: &str,
    expected: &Value,
    actual: Option<&Value>,
    vars: &mut Vars,
    out: &mut Vec<Mismatch>,
) {
    let mut fail = |reason: String| {
        out.push(Mismatch {
            path: path.to_string(),
            reason,
        })
    };
    if let Value::String(s) = expected
        && let Some(m) = s.strip_prefix('$')
        && !m.starts_with('$')
        && !m.starts_with('{')
    {
        if m == "absent" {
            if let Some(a) = actual {
                fail(format!("expected absent, found {}", short(a)));
            }
            return;
        }
        let Some(a) = actual else {
            fail(format!("missing (expected {s})"));
            return;
        };
        if let Err(reason) = matcher(m, a, vars) {
            fail(reason);
        }
        return;
    }
    let Some(actual) = actual else {
        fail(format!("missing (expected {})", short(expected)));
        return;
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let extra_ok = e.get("$extra") == Some(&Value::Bool(true));
            for (k, ev) in e {
                if k == "$extra" {
                    continue;
                }
                match_at(&child(path, k), ev, a.get(k), vars, out);
            }
            if !extra_ok {
                for k in a.keys() {
                    if !e.contains_key(k) {
                        out.push(Mismatch {
                            path: child(path, k),
                            reason: format!("unexpected member (value {})", short(&a[k])),
                        });
                    }
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            let (prefix, e) = match e.first() {
                Some(Value::String(s)) if s == "$prefix" => (true, &e[1..]),
                _ => (false, &e[..]),
            };
            if (!prefix && e.len() != a.len()) || a.len() < e.len() {
                fail(format!(
                    "expected {}{} elements, found {}",
                    if prefix { "at least " } else { "" },
                    e.len(),
                    a.len()
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a.iter()).enumerate() {
                match_at(&format!("{path}[{i}]"), ev, Some(av), vars, out);
            }
        }
        (Value::String(e), Value::String(a)) => {
            let want = substitute_str(e, vars);
            if &want != a {
                fail(format!(
                    "expected {}, found {}",
                    short(&Value::String(want)),
                    short(actual)
                ));
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            if e != a && e.as_f64() != a.as_f64() {
                fail(format!("expected {e}, found {a}"));
            }
        }
        (e, a) => {
            if e != a {
                fail(format!("expected {}, found {}", short(e), short(a)));
            }
        }
    }
}

fn matcher(m: &str, a: &Value, vars: &mut Vars) -> Result<(), String> {
    let kind = |want: &str| format!("expected {want}, found {}", short(a));
    match m {
        "any" => Ok(()),
        "any_string" => a.is_string().then_some(()).ok_or_else(|| kind("a string")),
        "non_empty_string" => match a.as_str() {
            Some(s) if !s.is_empty() => Ok(()),
            _ => Err(kind("a non-empty string")),
        },
        "number" => a.is_number().then_some(()).ok_or_else(|| kind("a number")),
        "bool" => a
            .is_boolean()
            .then_some(())
            .ok_or_else(|| kind("a boolean")),
        "object" => a.is_object().then_some(()).ok_or_else(|| kind("an object")),
        "array" => a.is_array().then_some(()).ok_or_else(|| kind("an array")),
        "uuid" => match a.as_str() {
            Some(s) if is_uuid(s) => Ok(()),
            _ => Err(kind("a UUID")),
        },
        "timestamp" => match a.as_str() {
            Some(s) if is_utc_timestamp(s) => Ok(()),
            _ => Err(kind("an RFC 3339 UTC timestamp")),
        },
        "timestamp_any" => match a.as_str() {
            Some(s) if is_any_timestamp(s) => Ok(()),
            _ => Err(kind("an ISO 8601 date-time")),
        },
        _ => {
            if let Some(re) = m.strip_prefix("regex:") {
                let re = Regex::new(&format!("^(?:{re})$"))
                    .map_err(|e| format!("bad $regex in fixture: {e}"))?;
                match a.as_str() {
                    Some(s) if re.is_match(s) => Ok(()),
                    _ => Err(kind(&format!("a string matching /{}/", re.as_str()))),
                }
            } else if let Some(name) = m.strip_prefix("capture:") {
                if let Some(prev) = vars.get(name) {
                    if prev != a {
                        return Err(format!(
                            "capture {name} already bound to {}, found {}",
                            short(prev),
                            short(a)
                        ));
                    }
                } else {
                    vars.insert(name.to_string(), a.clone());
                }
                Ok(())
            } else {
                Err(format!("unknown matcher ${m} in fixture"))
            }
        }
    }
}

/// Whether `s` is a hyphenated UUID (8-4-4-4-12 hex digits).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn timestamp_re(utc_only: bool) -> Regex {
    let zone = if utc_only {
        "Z"
    } else {
        "(?:[Zz]|[+-]\\d{2}:?\\d{2})?"
    };
    // Fixed pattern: compiling it cannot fail.
    Regex::new(&format!(
        "^\\d{{4}}-\\d{{2}}-\\d{{2}}[Tt]\\d{{2}}:\\d{{2}}:\\d{{2}}(?:\\.\\d{{1,9}})?{zone}$"
    ))
    .unwrap_or_else(|_| unreachable!("static timestamp regex"))
}

/// Whether `s` is an RFC 3339 timestamp in UTC (`...Z`).
pub fn is_utc_timestamp(s: &str) -> bool {
    timestamp_re(true).is_match(s)
}

/// Whether `s` is an ISO 8601 date-time, with or without a zone.
pub fn is_any_timestamp(s: &str) -> bool {
    timestamp_re(false).is_match(s)
}

/// Replaces every `${NAME}` in `s` by the variable's value (strings inserted bare, others as JSON).
/// A string that is exactly `$$...` loses one `$`. Unknown variables are left as they are.
pub fn substitute_str(s: &str, vars: &Vars) -> String {
    if let Some(rest) = s.strip_prefix("$$") {
        return format!("${rest}");
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                match vars.get(name) {
                    Some(Value::String(v)) => out.push_str(v),
                    Some(v) => out.push_str(&v.to_string()),
                    None => out.push_str(&rest[start..start + 3 + end]),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Substitutes variables throughout a JSON value (for request bodies). A string that is exactly
/// `${NAME}` becomes the variable's value with its JSON type.
pub fn substitute(v: &Value, vars: &Vars) -> Value {
    match v {
        Value::String(s) => {
            if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
                && let Some(val) = vars.get(name)
            {
                return val.clone();
            }
            Value::String(substitute_str(s, vars))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), substitute(x, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(expected: Value, actual: Value) -> Vec<String> {
        let mut vars = Vars::new();
        match_value(&expected, &actual, &mut vars)
            .into_iter()
            .map(|m| m.to_string())
            .collect()
    }

    #[test]
    fn exact_values_match_and_differences_are_reported_with_paths() {
        assert!(check(json!({"a": [1, "x"]}), json!({"a": [1, "x"]})).is_empty());
        assert_eq!(
            check(json!({"a": {"b": 1}}), json!({"a": {"b": 2}})),
            ["a.b: expected 1, found 2"]
        );
        assert_eq!(
            check(json!({"a": [1]}), json!({"a": [1, 2]})),
            ["a: expected 1 elements, found 2"]
        );
    }

    #[test]
    fn unexpected_members_fail_unless_extra_allowed() {
        assert_eq!(
            check(json!({"a": 1}), json!({"a": 1, "b": 2})),
            ["b: unexpected member (value 2)"]
        );
        assert!(check(json!({"a": 1, "$extra": true}), json!({"a": 1, "b": 2})).is_empty());
    }

    #[test]
    fn type_matchers() {
        assert!(check(json!("$any_string"), json!("x")).is_empty());
        assert_eq!(check(json!("$any_string"), json!(1)).len(), 1);
        assert!(check(json!("$number"), json!(1.5)).is_empty());
        assert!(
            check(
                json!("$uuid"),
                json!("9229e770-767c-417b-a0b0-f0741243c589")
            )
            .is_empty()
        );
        assert_eq!(check(json!("$uuid"), json!("not-a-uuid")).len(), 1);
        assert!(check(json!("$timestamp"), json!("2025-10-28T10:30:00.000Z")).is_empty());
        assert_eq!(
            check(json!("$timestamp"), json!("2025-04-02T16:59:25.331844")).len(),
            1
        );
        assert!(check(json!("$timestamp_any"), json!("2025-04-02T16:59:25.331844")).is_empty());
        assert!(
            check(
                json!("$regex:TASK_STATE_[A-Z_]+"),
                json!("TASK_STATE_WORKING")
            )
            .is_empty()
        );
        assert_eq!(
            check(json!("$regex:a"), json!("ab")).len(),
            1,
            "regex is anchored"
        );
        assert!(check(json!("$$literal"), json!("$literal")).is_empty());
    }

    #[test]
    fn absent_matcher() {
        assert!(check(json!({"a": "$absent"}), json!({})).is_empty());
        assert_eq!(
            check(json!({"a": "$absent"}), json!({"a": null})),
            ["a: expected absent, found null"]
        );
        assert_eq!(
            check(json!({"a": "$any"}), json!({})),
            ["a: missing (expected $any)"]
        );
    }

    #[test]
    fn captures_bind_and_are_reused() {
        let mut vars = Vars::new();
        assert!(
            match_value(
                &json!({"id": "$capture:task"}),
                &json!({"id": "t-1"}),
                &mut vars
            )
            .is_empty()
        );
        assert_eq!(vars["task"], json!("t-1"));
        assert!(
            match_value(&json!({"id": "${task}"}), &json!({"id": "t-1"}), &mut vars).is_empty()
        );
        assert_eq!(
            match_value(&json!({"id": "${task}"}), &json!({"id": "t-2"}), &mut vars).len(),
            1
        );
        assert_eq!(
            substitute(&json!({"p": "/tasks/${task}:cancel", "n": "${n}"}), &vars),
            json!({"p": "/tasks/t-1:cancel", "n": "${n}"})
        );
        vars.insert("n".into(), json!(5));
        assert_eq!(substitute(&json!({"n": "${n}"}), &vars), json!({"n": 5}));
    }

    #[test]
    fn prefix_arrays() {
        assert!(check(json!(["$prefix", 1]), json!([1, 2, 3])).is_empty());
        assert_eq!(check(json!(["$prefix", 1, 2]), json!([1])).len(), 1);
    }
}
