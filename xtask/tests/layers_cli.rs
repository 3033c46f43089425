//! `xtask layers --root <fixture>`: exit status and output of the command itself.

use std::path::Path;
use std::process::{Command, Output};

fn layers(fixture: &str) -> (Output, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/layers")
        .join(fixture);
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("layers")
        .arg("--root")
        .arg(&root)
        .output()
        .expect("xtask runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out, text)
}

#[test]
fn clean_fixture_passes() {
    let (out, text) = layers("clean");
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("layers fake/src: 4 entries, 3 layers, 9 imports, 0 upward, no loop"),
        "{text}"
    );
}

#[test]
fn each_broken_fixture_fails_saying_why() {
    for (fixture, why) in [
        (
            "upward",
            "upward import: fake/src/ids.rs:32 -> fake/src/edge/http.rs",
        ),
        ("loop", "import loop among entries edge, store"),
        (
            "missing",
            "fake/src/extra.rs: not in the layer list of docs/architecture.md",
        ),
        (
            "nofolder",
            "layers block for fake/src, which is not a folder",
        ),
    ] {
        let (out, text) = layers(fixture);
        assert!(!out.status.success(), "{fixture}: {text}");
        assert!(text.contains(why), "{fixture}: {text}");
        assert!(
            text.contains("problem(s) against the layer lists"),
            "{fixture}: {text}"
        );
    }
}

#[test]
fn no_block_passes_checking_nothing() {
    let (out, text) = layers("none");
    assert!(out.status.success(), "{text}");
    assert!(text.contains("nothing checked"), "{text}");
}
