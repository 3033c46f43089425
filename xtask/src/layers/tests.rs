//! The checker against the fixture trees of `xtask/tests/fixtures/layers/` (each a fake crate and
//! its own docs/architecture.md), and the path extraction on its own.

use std::path::{Path, PathBuf};

use super::imports::{Found, paths_in};
use super::{Report, check};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/layers")
        .join(name)
}

fn check_fixture(name: &str) -> Report {
    check(&fixture(name), None).expect("fixture readable")
}

fn has(report: &Report, needle: &str) -> bool {
    report.problems.iter().any(|p| p.contains(needle))
}

#[test]
fn clean_crate_passes() {
    let r = check_fixture("clean");
    assert_eq!(r.problems, Vec::<String>::new());
    assert_eq!(
        r.summaries,
        ["layers fake/src: 4 entries, 3 layers, 9 imports, 0 upward, no loop"]
    );
}

#[test]
fn upward_import_names_both_files_and_the_line() {
    let r = check_fixture("upward");
    assert!(
        has(
            &r,
            "upward import: fake/src/ids.rs:32 -> fake/src/edge/http.rs (ids.rs is below edge)"
        ),
        "{r:#?}"
    );
    assert!(r.summaries[0].contains("1 upward"), "{r:#?}");
}

#[test]
fn sibling_loop_fails() {
    let r = check_fixture("loop");
    assert!(has(&r, "import loop among entries edge, store"), "{r:#?}");
    assert!(
        has(
            &r,
            "store -> edge (fake/src/store/cache.rs:8 -> fake/src/edge.rs)"
        ),
        "{r:#?}"
    );
    assert!(!has(&r, "upward"), "siblings may import each other: {r:#?}");
}

#[test]
fn file_missing_from_the_list_fails() {
    let r = check_fixture("missing");
    assert_eq!(
        r.problems,
        ["fake/src/extra.rs: not in the layer list of docs/architecture.md"]
    );
}

#[test]
fn no_block_checks_nothing_and_passes() {
    let r = check_fixture("none");
    assert!(r.problems.is_empty());
    assert_eq!(
        r.summaries,
        ["layers: docs/architecture.md has no layers block; nothing checked"]
    );
}

#[test]
fn block_for_a_missing_folder_fails() {
    let r = check_fixture("nofolder");
    assert_eq!(
        r.problems,
        ["docs/architecture.md:1: layers block for fake/src, which is not a folder"]
    );
}

/// A throwaway tree under the temp dir: `files` are (path, text) pairs.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-layers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn loop_between_files_of_one_folder_fails() {
    let dir = scratch(
        "fileloop",
        &[
            ("docs/architecture.md", "```layers src\nedge\n```\n"),
            ("src/lib.rs", "mod edge;\n"),
            ("src/edge/mod.rs", "mod a;\nmod b;\npub use self::a::A;\n"),
            ("src/edge/a.rs", "pub struct A(super::b::B);\n"),
            (
                "src/edge/b.rs",
                "pub struct B;\nfn f() { let _ = crate::edge::A; }\n",
            ),
        ],
    );
    let r = check(&dir, None).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        r.problems,
        [
            "import loop among files src/edge/a.rs, src/edge/b.rs, src/edge/mod.rs: \
          src/edge/a.rs:1 -> src/edge/b.rs; src/edge/b.rs:2 -> src/edge/mod.rs; \
          src/edge/mod.rs:3 -> src/edge/a.rs"
        ]
    );
}

#[test]
fn list_mistakes_are_reported() {
    let dir = scratch(
        "listed",
        &[
            (
                "docs/architecture.md",
                "```layers src\nlib.rs\nedge edge/a.rs\nedge\ngone.rs\n```\n",
            ),
            ("src/lib.rs", "mod edge;\n"),
            ("src/edge.rs", "mod a;\n"),
            ("src/edge/a.rs", "\n"),
        ],
    );
    let r = check(&dir, None).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        r.problems,
        [
            "src: `lib.rs` in the layer list: lib.rs, main.rs and bin/ are roots, never listed",
            "src: `edge` is in the layer list twice",
            "src: layer entry `gone.rs` covers no .rs file",
            "src/edge/a.rs: covered by more than one entry (edge, edge/a.rs)",
        ]
    );
}

fn found(src: &str, here: &[&str]) -> Vec<(String, usize)> {
    let here: Vec<String> = here.iter().map(|s| s.to_string()).collect();
    paths_in(src, &here)
        .into_iter()
        .map(|Found { path, line }| (path.join("::"), line))
        .collect()
}

#[test]
fn use_trees_inline_paths_and_relative_paths() {
    let src = "use crate::a::{b, c::{self, D as E}, *};\n\
               pub(crate) use super::f\n    ::G;\n\
               fn x() { self::h::i(); crate::j::K::new(); }\n";
    let mut got = found(src, &["m", "n"]);
    got.sort();
    let want = [
        ("a", 1),
        ("a::b", 1),
        ("a::c", 1),
        ("a::c::D", 1),
        ("j::K::new", 4),
        ("m::f::G", 3),
        ("m::n::h::i", 4),
    ];
    let want: Vec<(String, usize)> = want.iter().map(|(p, l)| (p.to_string(), *l)).collect();
    assert_eq!(got, want);
}

#[test]
fn comments_strings_macros_and_visibilities_are_not_imports() {
    let src = "// crate::a\n/* crate::b /* crate::c */ crate::d */\n\
               const S: &str = \"crate::e \\\" crate::f\";\n\
               const R: &str = r##\"crate::g \"# crate::h\"##;\n\
               const C: char = '\"'; fn l<'a>(x: &'a str) {}\n\
               macro_rules! m { () => { $crate::i::J }; }\n\
               pub(in crate::k) fn vis() {}\n\
               use crate::last;\n";
    assert_eq!(found(src, &[]), [("last".to_string(), 8)]);
}

#[test]
fn inline_modules_shift_relative_paths() {
    let src = "mod tests {\n    use super::x;\n    fn f() { self::g(); }\n}\nuse self::y;\n";
    assert_eq!(
        found(src, &["a"]),
        [
            ("a::x".to_string(), 2),
            ("a::tests::g".to_string(), 3),
            ("a::y".to_string(), 5)
        ]
    );
}
