//! Model cases: a document of a named type in one dialect, parsed, serialized and strict-validated in-process.
//!
//! This file depends only on `serde`, `serde_json` and the sibling `registry` module, so
//! the a2a-types integration tests include it with `#[path]` (`a2a-types/tests/integration.rs`) and replays the same fixture files.

use serde::Deserialize;
use serde_json::Value;

use crate::registry;

/// A model case (`"kind": "model"` in a fixture file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelCase {
    /// What the case checks, in one sentence.
    pub description: String,
    /// `v1` (1.0 ProtoJSON), `v03` (0.3 JSON-RPC dialect) or `v03-rest` (0.3 HTTP+JSON dialect).
    pub dialect: String,
    /// The type name as the registry knows it (e.g. `SendMessageRequest`, `JsonRpcRequest`).
    #[serde(rename = "type")]
    pub type_name: String,
    /// Where the spec says so; free text.
    #[serde(default)]
    pub reference: Option<String>,
    /// The document under test.
    pub document: Value,
    /// What must happen.
    pub expect: Expect,
}

/// Expectations of a model case; every one given is checked.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// `"ok"`: the default (lenient) parse succeeds; `"error"`: it fails.
    #[serde(default)]
    pub parse: Option<ParseExpect>,
    /// `true`: parse then serialize gives back a JSON value equal to the document.
    #[serde(default)]
    pub round_trip: bool,
    /// The exact serialization expected after parsing, when it differs from the document
    /// (e.g. a naive 0.3 timestamp normalized to UTC `Z`).
    #[serde(default)]
    pub serialized: Option<Value>,
    /// The strict validator's violations, each `path: reason`, in any order; `[]` means strictly valid.
    #[serde(default)]
    pub strict: Option<Vec<String>>,
}

/// Expected outcome of the default parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParseExpect {
    /// Parses.
    Ok,
    /// Is refused.
    Error,
}

/// The result of replaying one model case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every expectation held.
    Pass,
    /// Some did not; the reasons.
    Fail(Vec<String>),
    /// The type is in [`registry::PENDING`] (not modelled yet); the stated reason.
    Pending(String),
}

/// Replays a model case against the registry.
pub fn replay(case: &ModelCase) -> Outcome {
    let Some(entry) = registry::find(&case.dialect, &case.type_name) else {
        if let Some(reason) = registry::pending_reason(&case.dialect, &case.type_name) {
            return Outcome::Pending(reason.to_string());
        }
        return Outcome::Fail(vec![format!(
            "unknown type {} in dialect {} (not in the registry, not pending)",
            case.type_name, case.dialect
        )]);
    };
    let mut fails = Vec::new();
    let exp = &case.expect;
    let wants_output = exp.round_trip || exp.serialized.is_some();
    if exp.parse.is_none() && !wants_output && exp.strict.is_none() {
        fails.push("fixture states no expectation".to_string());
    }
    let parsed = (entry.round_trip)(&case.document);
    match (&parsed, exp.parse) {
        (Ok(_), Some(ParseExpect::Error)) => {
            fails.push("default parse succeeded, expected it to fail".to_string())
        }
        (Err(e), Some(ParseExpect::Ok)) => fails.push(format!("default parse failed: {e}")),
        (Err(e), None) if wants_output => fails.push(format!("default parse failed: {e}")),
        _ => {}
    }
    if let Ok(out) = &parsed {
        if exp.round_trip && exp.serialized.is_none() && out != &case.document {
            fails.push(format!(
                "round trip differs: {}",
                diff(&case.document, out).join("; ")
            ));
        }
        if let Some(want) = &exp.serialized
            && out != want
        {
            fails.push(format!(
                "serialization differs: {}",
                diff(want, out).join("; ")
            ));
        }
    }
    if let Some(want) = &exp.strict {
        let mut got = (entry.strict)(&case.document);
        let mut want = want.clone();
        got.sort();
        want.sort();
        if got != want {
            let missing: Vec<_> = want.iter().filter(|w| !got.contains(w)).collect();
            let extra: Vec<_> = got.iter().filter(|g| !want.contains(g)).collect();
            fails.push(format!(
                "strict violations differ: missing {missing:?}, unexpected {extra:?}"
            ));
        }
    }
    if fails.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(fails)
    }
}

/// Structural differences between two JSON values, as `path: expected X, found Y` strings.
pub fn diff(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_at("", expected, actual, &mut out);
    out
}

fn diff_at(path: &str, e: &Value, a: &Value, out: &mut Vec<String>) {
    let at = |p: &str| {
        if p.is_empty() {
            "(root)".to_string()
        } else {
            p.to_string()
        }
    };
    match (e, a) {
        (Value::Object(eo), Value::Object(ao)) => {
            for (k, ev) in eo {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match ao.get(k) {
                    Some(av) => diff_at(&p, ev, av, out),
                    None => out.push(format!("{p}: missing")),
                }
            }
            for k in ao.keys().filter(|k| !eo.contains_key(*k)) {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                out.push(format!("{p}: unexpected member"));
            }
        }
        (Value::Array(ea), Value::Array(aa)) if ea.len() == aa.len() => {
            for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                diff_at(&format!("{path}[{i}]"), ev, av, out);
            }
        }
        _ if e == a => {}
        _ => out.push(format!("{}: expected {e}, found {a}", at(path))),
    }
}
