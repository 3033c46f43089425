//! The generated JSON Schemas (schemars, exported to `schemas/` by `cargo xtask schema`) accept
//! every spec example the models accept (checked with the `jsonschema` crate), and accept what
//! the models serialize; they reject documents the models refuse.

use crate::{registry, spec};

use serde_json::{Value, json};

fn validator(dialect: &str, name: &str) -> jsonschema::Validator {
    let entry = registry::find(dialect, name).unwrap_or_else(|| panic!("{dialect} {name}"));
    let schema = (entry.schema)();
    jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("schema of {dialect} {name} does not compile: {e}"))
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_registered_schema_compiles() {
    let entries = registry::entries();
    assert!(entries.len() >= 100, "{} types", entries.len());
    for e in entries {
        let _ = validator(e.dialect, e.name);
    }
}

#[test]
fn schemas_validate_the_spec_examples() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for ex in spec::all_examples() {
        let id = ex.id();
        if spec::known_broken(&id).is_some() || spec::unclassifiable(&id).is_some() {
            continue;
        }
        let known_diff = spec::KNOWN_DIFFS.iter().any(|(i, _, _)| *i == id);
        let doc: Value = serde_json::from_str(&ex.text).unwrap();
        let spec::Class::Typed(targets) = spec::classify_example(&ex, &doc) else {
            panic!("{id} is not classified");
        };
        for t in targets {
            let sub = doc.pointer(&t.pointer).unwrap();
            let v = validator(t.dialect, t.type_name);
            let entry = registry::find(t.dialect, t.type_name).unwrap();
            let out = (entry.round_trip)(sub).unwrap();
            // The example as printed (unless it is known to lack REQUIRED members) ...
            if !known_diff {
                for e in errors(&v, sub) {
                    problems.push(format!(
                        "{} {} {}: {e}",
                        ex.location(),
                        t.type_name,
                        t.pointer
                    ));
                }
            }
            // ... and what the models make of it.
            for e in errors(&v, &out) {
                problems.push(format!(
                    "{} {} {} (serialized): {e}",
                    ex.location(),
                    t.type_name,
                    t.pointer
                ));
            }
            checked += 1;
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    assert!(checked >= 40, "only {checked} targets checked");
}

#[test]
fn schemas_reject_what_the_models_refuse() {
    let cases = [
        ("v1", "Part", json!({"text": "a", "url": "https://x"})),
        (
            "v1",
            "Message",
            json!({"messageId": "m", "role": "user", "parts": [{"text": "x"}]}),
        ),
        ("v1", "TaskStatus", json!({"state": "TASK_STATE_CANCELLED"})),
        ("v03", "Part", json!({"kind": "data", "data": [1, 2]})),
        ("v03", "Part", json!({"kind": "image", "text": "x"})),
        (
            "v03",
            "TaskStatus",
            json!({"state": "TASK_STATE_COMPLETED"}),
        ),
        (
            "v03-rest",
            "TaskStatus",
            json!({"state": "TASK_STATE_CANCELED"}),
        ),
    ];
    for (d, t, doc) in cases {
        let entry = registry::find(d, t).unwrap();
        assert!(
            (entry.round_trip)(&doc).is_err(),
            "{d} {t} model accepts {doc}"
        );
        assert!(
            !validator(d, t).is_valid(&doc),
            "{d} {t} schema accepts {doc} which the model refuses"
        );
    }
}
