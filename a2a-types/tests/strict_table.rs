//! The strict validator table: every `conformance/fixtures/strict/*.json` case (at least 40 bad
//! documents, each with its expected `path: reason` violations) replayed against `a2a_types::strict`,
//! plus the model fixtures (`model-v1`, `model-v03`, `model-v03-rest`: parse / serialize). The
//! same cases run in `cargo xtask conformance`; the replay code is shared with the runner.

use crate::model;

use std::path::{Path, PathBuf};

use model::{ModelCase, Outcome};

fn fixtures(suite: &str) -> Vec<(PathBuf, ModelCase)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/fixtures")
        .join(suite);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let kind = v.as_object_mut().and_then(|o| o.remove("kind"));
            assert_eq!(
                kind,
                Some("model".into()),
                "{}: not a model case",
                p.display()
            );
            let case: ModelCase = serde_json::from_value(v)
                .unwrap_or_else(|e| panic!("{}: bad fixture: {e}", p.display()));
            (p, case)
        })
        .collect()
}

fn replay_suite(suite: &str) -> usize {
    let cases = fixtures(suite);
    let mut failures = Vec::new();
    for (path, case) in &cases {
        match model::replay(case) {
            Outcome::Pass => {}
            Outcome::Fail(reasons) => failures.push(format!(
                "{}: {}",
                path.file_name().unwrap().to_string_lossy(),
                reasons.join(" | ")
            )),
            Outcome::Pending(reason) => failures.push(format!(
                "{}: pending ({reason}); nothing may stay pending",
                path.display()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn strict_table_has_at_least_40_bad_documents_and_all_match() {
    let cases = fixtures("strict");
    let bad: Vec<_> = cases
        .iter()
        .filter(|(_, c)| c.expect.strict.as_ref().is_some_and(|s| !s.is_empty()))
        .collect();
    assert!(bad.len() >= 40, "only {} bad documents", bad.len());
    // Every expected violation names a path and a reason.
    for (p, c) in &bad {
        for v in c.expect.strict.as_ref().unwrap() {
            let (path, reason) = v
                .split_once(": ")
                .unwrap_or_else(|| panic!("{}: `{v}` is not `path: reason`", p.display()));
            assert!(
                !path.is_empty() && !reason.is_empty(),
                "{}: {v}",
                p.display()
            );
        }
    }
    // The table covers each kind of violation the validator knows.
    let all: Vec<&String> = bad
        .iter()
        .flat_map(|(_, c)| c.expect.strict.as_ref().unwrap())
        .collect();
    for needle in [
        "unknown member",
        "missing required member",
        "bad enum value",
        "wrong discriminator",
        "missing one of",
        "conflicting members",
        "wrong type",
        "too few items",
        "bad base64",
        "bad timestamp",
        "bad int32",
    ] {
        assert!(
            all.iter().any(|v| v.contains(needle)),
            "no case for `{needle}`"
        );
    }
    replay_suite("strict");
}

#[test]
fn model_fixtures_v1() {
    assert!(replay_suite("model-v1") >= 10);
}

#[test]
fn model_fixtures_v03() {
    assert!(replay_suite("model-v03") >= 10);
}

#[test]
fn model_fixtures_v03_rest() {
    assert!(replay_suite("model-v03-rest") >= 5);
}

#[test]
fn a_wrong_expectation_is_reported() {
    // The replay must be able to fail: a valid document with an invented violation.
    let case: ModelCase = serde_json::from_value(serde_json::json!({
        "description": "self-check",
        "dialect": "v1",
        "type": "Part",
        "document": {"text": "hi"},
        "expect": {"strict": ["$: unknown member text"], "roundTrip": true}
    }))
    .unwrap();
    match model::replay(&case) {
        Outcome::Fail(r) => assert!(
            r[0].contains("missing [\"$: unknown member text\"]"),
            "{r:?}"
        ),
        other => panic!("expected a failure, got {other:?}"),
    }
}
