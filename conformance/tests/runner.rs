//! The runner against a real loopback HTTP target (`mock-target`), and its start-up failure modes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use conformance::fixture::{self, Case};
use conformance::runner::{self, Options, Summary};
use conformance::wire::{TargetSpec, TargetsFile};

fn selftest_cases() -> Vec<fixture::LoadedCase> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/selftest");
    fixture::load_all(&dir, &[]).unwrap()
}

fn mock_targets(bin: &str, args: &[&str]) -> TargetsFile {
    let mut captures = BTreeMap::new();
    captures.insert("token".to_string(), r"token: (\S+)".to_string());
    let mut t = TargetsFile::new();
    t.insert(
        "mock".into(),
        TargetSpec {
            bin: bin.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            captures,
            base_path: None,
            url_pattern: Some(r"listening on (\S+)".into()),
            headers: [("X-Target-Token".to_string(), "${token}".to_string())].into(),
            vars: [("echo".to_string(), "/echo".to_string())].into(),
            explicit: false,
            grpc: false,
            no_grpc: None,
        },
    );
    t
}

fn run(targets: &TargetsFile, bin_dir: PathBuf) -> (Summary, String) {
    let opts = Options {
        targets: vec![],
        bin_dir,
        start_timeout: Duration::from_secs(20),
        request_timeout: Duration::from_secs(20),
    };
    let mut out = Vec::new();
    let sum = runner::run(&selftest_cases(), targets, &opts, &mut out).unwrap();
    (sum, String::from_utf8(out).unwrap())
}

#[test]
fn replays_wire_cases_against_a_loopback_target() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_mock-target"));
    let (sum, out) = run(
        &mock_targets("mock-target", &[]),
        exe.parent().unwrap().into(),
    );
    assert!(
        out.contains("# target mock listening at http://127.0.0.1:"),
        "{out}"
    );
    assert!(out.contains("PASS mock/card [HTTP 1.0] on mock"), "{out}");
    assert!(
        out.contains("PASS mock/echo-capture [JSONRPC 0.3] on mock"),
        "{out}"
    );
    assert!(
        out.contains("PASS mock/stream [HTTP+JSON 1.0] on mock"),
        "{out}"
    );
    let fail = out
        .lines()
        .find(|l| l.starts_with("FAIL mock/wrong-status"))
        .unwrap_or_else(|| panic!("no FAIL line: {out}"));
    assert!(fail.contains("status: expected 200, found 404"), "{fail}");
    assert!(
        fail.contains("body.error: expected \"found\", found \"not found\""),
        "{fail}"
    );
    assert_eq!(
        sum,
        Summary {
            passed: 3,
            failed: 1,
            skipped: 0,
            pending: 0
        }
    );
}

#[test]
fn a_missing_or_stub_target_is_skipped_and_a_crashing_one_fails() {
    let (sum, out) = run(&mock_targets("no-such-binary", &[]), std::env::temp_dir());
    assert_eq!((sum.skipped, sum.failed, sum.passed), (4, 0, 0), "{out}");
    assert!(out.lines().all(|l| l.starts_with("SKIP")), "{out}");

    // A stub that exits successfully without printing a URL (like `fn main() {}`): skipped.
    let sh = Path::new("/bin/sh");
    if sh.exists() {
        let (sum, out) = run(&mock_targets("sh", &["-c", "exit 0"]), "/bin".into());
        assert_eq!((sum.skipped, sum.failed), (4, 0), "{out}");
        let (sum, out) = run(
            &mock_targets("sh", &["-c", "echo boom >&2; exit 3"]),
            "/bin".into(),
        );
        assert_eq!((sum.skipped, sum.failed), (0, 4), "{out}");
        assert!(out.contains("boom"), "stderr tail is reported: {out}");
    }
}

#[test]
fn every_repository_fixture_loads() {
    let cases = fixture::load_all(&fixture::default_fixture_dir(), &[]).unwrap();
    for c in &cases {
        if let Case::Wire(w) = &c.case {
            assert!(!w.variants.is_empty(), "{}: no variants", c.path.display());
            for v in &w.variants {
                assert!(
                    !v.all_steps().is_empty(),
                    "{}: a variant without steps",
                    c.path.display()
                );
                assert!(
                    ["JSONRPC", "HTTP+JSON", "HTTP"].contains(&v.binding.as_str()),
                    "{}: binding {}",
                    c.path.display(),
                    v.binding
                );
                assert!(
                    ["0.3", "1.0"].contains(&v.version.as_str()),
                    "{}",
                    c.path.display()
                );
            }
        }
    }
}

#[test]
fn an_explicit_target_replays_only_the_cases_that_name_it() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_mock-target"));
    let mut targets = mock_targets("mock-target", &[]);
    if let Some(t) = targets.get_mut("mock") {
        t.explicit = true;
    }
    // The self-test cases name no target: an explicit target replays none of them.
    let (sum, out) = run(&targets, exe.parent().unwrap().into());
    assert_eq!(sum, Summary::default(), "{out}");
    assert!(!out.contains("# target mock"), "not even started: {out}");
}

#[test]
fn a_grpc_target_gets_one_grpc_line_per_case_and_cases_without_a_grpc_form_are_skipped() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_mock-target"));
    let mut targets = mock_targets("mock-target", &[]);
    if let Some(t) = targets.get_mut("mock") {
        t.grpc = true;
    }
    let (sum, out) = run(&targets, exe.parent().unwrap().into());
    // None of the self-test cases has a JSON-RPC 1.0 form: each gRPC replay is a SKIP with its
    // reason, counted as skipped and never as passed.
    for (case, why) in [
        ("card", "agent card over plain HTTP"),
        ("echo-capture", "0.3 only"),
        ("stream", "HTTP+JSON-only case"),
        ("wrong-status", "HTTP+JSON-only case"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("SKIP mock/{case} [GRPC 1.0] on mock: ")))
            .unwrap_or_else(|| panic!("no gRPC line for {case}: {out}"));
        assert!(line.contains(why), "{line}");
    }
    assert_eq!(
        sum,
        Summary {
            passed: 3,
            failed: 1,
            skipped: 4,
            pending: 0
        }
    );

    // A gRPC target that cannot start: its gRPC replays are skipped with the others.
    let mut missing = mock_targets("no-such-binary", &[]);
    if let Some(t) = missing.get_mut("mock") {
        t.grpc = true;
    }
    let (sum, out) = run(&missing, std::env::temp_dir());
    assert_eq!((sum.skipped, sum.failed, sum.passed), (8, 0, 0), "{out}");

    // A target that does not serve gRPC says why, and replays nothing over it.
    if let Some(t) = targets.get_mut("mock") {
        t.grpc = false;
        t.no_grpc = Some("it speaks HTTP/1 only".into());
    }
    let (sum, out) = run(&targets, exe.parent().unwrap().into());
    assert!(
        out.contains("# target mock not replayed over gRPC: it speaks HTTP/1 only"),
        "{out}"
    );
    assert!(!out.contains("[GRPC"), "{out}");
    assert_eq!(sum.skipped, 0, "{out}");
}
