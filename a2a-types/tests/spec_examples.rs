//! Every ```` ```json ```` example of both specification texts (`conformance/spec/`, copies of the
//! 1.0 and 0.3 `specification.md`) is classified by content, parsed into its type and serialized
//! back to an equal JSON value. Examples that cannot pass as printed are listed in
//! `spec::KNOWN_BROKEN` with the reason; non-A2A fragments in `spec::UNCLASSIFIABLE`. An example
//! that is neither passing nor listed fails the test, and so does a listed one that passes.

use crate::{model, registry, spec};

use serde_json::Value;
use spec::{Class, Example};

/// What happened to one example.
#[derive(Debug)]
enum Checked {
    /// Every target parsed and round-tripped.
    Pass(Vec<String>),
    /// Not JSON, or a target failed (reason).
    Broken(String),
    /// Classified as no A2A type (reason).
    Unclassified(String),
    /// Every target parsed, but the serialization differs (`pointer path: difference` lines).
    Differs(Vec<String>),
}

fn check(ex: &Example) -> Checked {
    let doc: Value = match serde_json::from_str(&ex.text) {
        Ok(v) => v,
        Err(e) => return Checked::Broken(format!("invalid JSON: {e}")),
    };
    let targets = match spec::classify_example(ex, &doc) {
        Class::Unclassifiable(r) => return Checked::Unclassified(r),
        Class::Typed(t) => t,
    };
    let mut passed = Vec::new();
    let mut diffs = Vec::new();
    for t in &targets {
        let Some(sub) = doc.pointer(&t.pointer) else {
            return Checked::Broken(format!(
                "classifier pointer {} not in the document",
                t.pointer
            ));
        };
        let Some(entry) = registry::find(t.dialect, t.type_name) else {
            return Checked::Broken(format!(
                "type {} {} not in the registry",
                t.dialect, t.type_name
            ));
        };
        match (entry.round_trip)(sub) {
            Err(e) => {
                return Checked::Broken(format!(
                    "{} {} at `{}`: parse failed: {e}",
                    t.dialect, t.type_name, t.pointer
                ));
            }
            Ok(out) if &out != sub => {
                for d in model::diff(sub, &out) {
                    diffs.push(if t.pointer.is_empty() {
                        d
                    } else {
                        format!("{} {d}", t.pointer)
                    });
                }
            }
            Ok(_) => passed.push(format!("{} {}@{}", t.dialect, t.type_name, t.pointer)),
        }
    }
    if diffs.is_empty() {
        Checked::Pass(passed)
    } else {
        Checked::Differs(diffs)
    }
}

#[test]
fn every_spec_json_example_parses_and_round_trips_or_is_listed() {
    let examples = spec::all_examples();
    let mut problems = Vec::new();
    let mut report = Vec::new();
    let (mut pass, mut broken, mut unclassified, mut normalized, mut targets) = (0, 0, 0, 0, 0);
    for ex in &examples {
        let id = ex.id();
        let r = check(ex);
        report.push(format!("{}: {r:?}", ex.location()));
        if let Some((_, want, why)) = spec::KNOWN_DIFFS.iter().find(|(i, _, _)| *i == id) {
            match &r {
                Checked::Differs(got) if got.iter().map(String::as_str).eq(want.iter().copied()) => {
                    normalized += 1
                }
                other => problems.push(format!(
                    "{}: listed in spec::KNOWN_DIFFS ({why}) with differences {want:?}, but got {other:?}",
                    ex.location()
                )),
            }
            continue;
        }
        match (&r, spec::known_broken(&id), spec::unclassifiable(&id)) {
            (Checked::Differs(d), None, None) => problems.push(format!(
                "{}: round trip differs and is not listed: {}",
                ex.location(),
                d.join("; ")
            )),
            (Checked::Differs(d), Some(why), _) => problems.push(format!(
                "{}: listed as known broken ({why}) but parses (differences {d:?}): move it to spec::KNOWN_DIFFS",
                ex.location()
            )),
            (Checked::Pass(t), None, None) => {
                pass += 1;
                targets += t.len();
            }
            (Checked::Broken(_), Some(_), _) => broken += 1,
            (Checked::Unclassified(_), _, Some(_)) => unclassified += 1,
            (Checked::Pass(_), Some(why), _) => problems.push(format!(
                "{}: listed as known broken ({why}) but passes: remove it from spec::KNOWN_BROKEN",
                ex.location()
            )),
            (Checked::Broken(e), None, _) => {
                problems.push(format!("{}: FAILS and is not listed: {e}", ex.location()))
            }
            (Checked::Unclassified(e), Some(why), None) => problems.push(format!(
                "{}: listed as known broken ({why}) but is unclassifiable ({e})",
                ex.location()
            )),
            (Checked::Unclassified(e), None, _) => problems.push(format!(
                "{}: unclassifiable ({e}) and not in spec::UNCLASSIFIABLE",
                ex.location()
            )),
            (_, None, Some(why)) => problems.push(format!(
                "{}: listed as unclassifiable ({why}) but was classified: {r:?}",
                ex.location()
            )),
        }
    }
    // Every list entry names a real example.
    let ids: Vec<String> = examples.iter().map(Example::id).collect();
    let listed = spec::KNOWN_BROKEN
        .iter()
        .chain(spec::UNCLASSIFIABLE)
        .map(|(i, _)| *i)
        .chain(spec::KNOWN_DIFFS.iter().map(|(i, _, _)| *i));
    for id in listed {
        if !ids.iter().any(|i| i == id) {
            problems.push(format!("list entry {id} names no example"));
        }
    }
    eprintln!("{}", report.join("\n"));
    eprintln!(
        "{} examples: {pass} pass ({targets} typed targets), {normalized} parse with known differences, {broken} known broken, {unclassified} unclassifiable",
        examples.len()
    );
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    assert!(
        pass + normalized >= 55,
        "only {pass} + {normalized} examples pass"
    );
}

#[test]
fn the_extracted_examples_include_known_ones() {
    let examples = spec::all_examples();
    let find = |id: &str| examples.iter().find(|e| e.id() == id).unwrap();
    assert!(find("v1.0#15").text.contains("\"GetTask\""));
    assert!(
        find("v0.3#1")
            .text
            .contains("GeoSpatial Route Planner Agent")
    );
    // The SSE transcript of S0 §9.3 yields one example per event.
    assert!(find("v0.3#8.5").text.contains("\"final\": true"));
}
