//! `cargo xtask features --matrix-only`: the feature matrix of the published crates
//! (docs/releases.md, "Checks in CI").
//!
//! Each published crate is tested in its default set and in its empty set
//! (`--no-default-features`); every feature at once is the workspace's test step (`cargo
//! nextest run --workspace`: the gateway turns every library feature on). A set is tested with
//! `cargo test --no-run` (a warning fails: cargo replays the warnings of fresh crates, so a
//! feature-gated import unused in one set fails here), then `cargo nextest run --profile ci`.
//! Each set's resolution (`cargo tree -e normal,build,dev -f '{p}|{f}'`: every package with its
//! features) decides what runs, and the output says why a set is not run:
//!
//! - a set that resolves exactly like an earlier set of the crate (the libraries' default is
//!   `[]`) or like the workspace's test step (every package of the set, with the same
//!   features) is not tested again;
//! - `cargo check` runs only for a set whose library build (without the dev-dependencies) is not
//!   part of a test build: dev-dependencies can turn features on (the client's tests serve gRPC
//!   through the agent, which turns the client's `http2` on), so the plain set is checked too.
//!
//! Then the hello agent (`a2a-agent/examples/hello`, its own package with default features):
//! `cargo test --locked --manifest-path a2a-agent/examples/hello/Cargo.toml`.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::features::{output_of, warnings_in};
use crate::{cargo, root};

/// Which test targets of a crate the matrix builds and runs.
#[derive(Clone, Copy)]
enum Targets {
    /// Unit tests of the library and binaries, and the integration tests.
    All,
    /// No tests, for the reason given: the sets are checked (`cargo check`).
    None(&'static str),
}

/// A published crate of the matrix.
struct Crate {
    name: &'static str,
    targets: Targets,
    /// Sets that are checked (`cargo check`), not tested, besides the default and empty sets.
    checks: &'static [&'static str],
}

/// The published crates, in dependency order. The client's own `--all-features` (its `cli`,
/// `grpc`, `signing` without what the agent and the gateway turn on) is checked as well.
const CRATES: &[Crate] = &[
    Crate {
        name: "a2ars-types",
        targets: Targets::All,
        checks: &[],
    },
    Crate {
        name: "a2ars-translate",
        targets: Targets::All,
        checks: &[],
    },
    Crate {
        name: "a2ars-pg",
        targets: Targets::All,
        checks: &[],
    },
    Crate {
        name: "a2ars-client",
        targets: Targets::All,
        checks: &["--all-features"],
    },
    Crate {
        name: "a2ars-agent",
        targets: Targets::All,
        checks: &[],
    },
    Crate {
        name: "a2ars-gateway",
        // Its unit tests alone take a minute to run and its build several: more than CI's
        // budget allows (docs/releases.md, "Checks in CI").
        targets: Targets::None(
            "its features change only its binary's allocator (jemalloc, in \
             src/bin/a2a-gateway.rs), and its tests run in the workspace's test step with its \
             default set",
        ),
        checks: &[],
    },
];

/// The tested sets: a name and cargo's flags.
const SETS: &[(&str, &[&str])] = &[
    ("default", &[]),
    ("no default features", &["--no-default-features"]),
];

/// Every package of a build with its features: `name vX (source)|f1,f2` lines.
type Resolution = BTreeSet<String>;

/// Tests and checks every published crate in each of its sets, then the hello package.
pub fn matrix() -> Result<()> {
    if std::env::var("A2A_CI_FEATURES").is_ok_and(|v| v == "0") {
        eprintln!("xtask: A2A_CI_FEATURES=0: feature matrix skipped");
        return Ok(());
    }
    eprintln!(
        "xtask: every feature at once (--all-features) is tested by the workspace's test step \
         (cargo nextest run --workspace: the gateway turns every library feature on); the \
         matrix tests the default set and the empty set of each published crate"
    );
    let workspace = Workspace {
        tests: resolution(&["--workspace"], true)?,
        build: resolution(&["--workspace"], false)?,
    };
    for krate in CRATES {
        one_crate(krate, &workspace)?;
    }
    hello()
}

/// What the workspace's own steps build: its tests (`cargo nextest run --workspace`, and `cargo
/// clippy --workspace --all-targets`), and its libraries and binaries (`cargo build
/// --workspace`).
struct Workspace {
    tests: Resolution,
    build: Resolution,
}

/// The sets of one crate: tested, checked, or skipped with the reason.
fn one_crate(krate: &Crate, workspace: &Workspace) -> Result<()> {
    let name = krate.name;
    // The test graphs already tested and the library graphs already built, with their set.
    let mut tested: Vec<(&str, Resolution)> = Vec::new();
    let mut built: Vec<(String, Resolution)> = Vec::new();
    for (set, flags) in SETS {
        let package: Vec<&str> = ["-p", name]
            .into_iter()
            .chain(flags.iter().copied())
            .collect();
        let tests = resolution(&package, true)?;
        let lib = resolution(&package, false)?;
        if let Some((other, _)) = tested.iter().find(|(_, r)| *r == tests) {
            eprintln!(
                "xtask: {name} ({set}): not tested again: its tests resolve to the same features \
                 as its {other} set, for the crate and every dependency (cargo tree -e features)"
            );
        } else if tests.is_subset(&workspace.tests) {
            eprintln!(
                "xtask: {name} ({set}): not tested again: every package of its tests has the \
                 same features in the workspace's test step, which runs them"
            );
        } else if let Targets::None(why) = krate.targets {
            eprintln!("xtask: {name} ({set}): not tested: {why}");
        } else {
            test(name, set, flags)?;
            // The test build compiles the library and binaries with these features.
            built.push((format!("its {set} set's test build"), tests.clone()));
        }
        tested.push((set, tests));
        if let Some((what, _)) = built.iter().find(|(_, r)| lib.is_subset(r)) {
            eprintln!(
                "xtask: {name} ({set}): not checked: its library and binaries resolve as in {what}"
            );
        } else if lib.is_subset(&workspace.tests) || lib.is_subset(&workspace.build) {
            eprintln!(
                "xtask: {name} ({set}): not checked: its library and binaries resolve as in the \
                 workspace's builds (cargo clippy --workspace, cargo build --workspace)"
            );
        } else {
            eprintln!(
                "xtask: {name} ({set}): checked: no test build compiles its library and \
                 binaries with this set's features"
            );
            check(name, set, flags)?;
            built.push((format!("its {set} set's check"), lib));
        }
    }
    for flags in krate.checks {
        check(name, flags, &[flags])?;
    }
    Ok(())
}

/// `cargo tree` of `args` (`-p CRATE [FLAGS]` or `--workspace`), with the dev-dependencies of
/// the selected packages (what their tests build) or without (what their library builds).
fn resolution(args: &[&str], dev: bool) -> Result<Resolution> {
    let mut c = cargo();
    c.arg("tree")
        .args(args)
        .args(["--prefix", "none", "-f", "{p}|{f}", "-e"])
        .arg(if dev {
            "normal,build,dev"
        } else {
            "normal,build"
        });
    let out = c
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .with_context(|| format!("could not start {c:?}"))?;
    if !out.status.success() {
        bail!(
            "{c:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(parse_tree(&String::from_utf8_lossy(&out.stdout)))
}

/// The `{p}|{f}` lines of `cargo tree --prefix none`, without the `(*)` of repeated packages and
/// without the feature name `default`: what it turns on is listed by name (`default,jemalloc`),
/// so a `default = []` (the libraries') resolves like `--no-default-features`.
fn parse_tree(stdout: &str) -> Resolution {
    stdout
        .lines()
        .map(|l| l.trim_end().trim_end_matches(" (*)"))
        .filter_map(|l| l.split_once('|'))
        .map(|(package, features)| {
            let kept: Vec<&str> = features
                .split(',')
                .filter(|f| !f.is_empty() && *f != "default")
                .collect();
            format!("{package}|{}", kept.join(","))
        })
        .collect()
}

/// Builds the tests of one set (a warning fails), then runs them with nextest.
fn test(name: &str, set: &str, flags: &[&str]) -> Result<()> {
    let started = Instant::now();
    let which = ["--lib", "--bins", "--tests"];
    let mut build = cargo();
    build
        .args(["test", "--no-run", "-p", name])
        .args(flags)
        .args(which);
    no_warnings(&format!("{name} ({set}) test build"), build)?;
    let mut run = cargo();
    run.args(["nextest", "run", "-p", name])
        .args(flags)
        .args(which)
        .args(["--profile", "ci"]);
    crate::run(&format!("{name} ({set}) tests"), run)?;
    eprintln!(
        "xtask: {name} ({set}) tested ({}) in {:.1}s",
        which.join(" "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo check` of one set of a crate (library and binaries); a warning fails.
fn check(name: &str, set: &str, flags: &[&str]) -> Result<()> {
    let started = Instant::now();
    let mut c = cargo();
    c.args(["check", "-p", name]).args(flags);
    no_warnings(&format!("{name} ({set}) check"), c)?;
    eprintln!(
        "xtask: {name} ({set}) checked in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The hello agent's own tests: its package, its lock file, `a2ars-agent` by path with default
/// features, as a new project builds it; in the workspace's target dir (unless
/// `CARGO_TARGET_DIR` says otherwise), so that the dependencies the matrix built are reused and
/// nothing is written under `a2a-agent/examples/hello/`.
fn hello() -> Result<()> {
    let started = Instant::now();
    let manifest = root()
        .join("a2a-agent")
        .join("examples")
        .join("hello")
        .join("Cargo.toml");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let cargo_test = |extra: &[&str]| {
        let mut c = cargo();
        c.args(["test", "--locked"])
            .args(extra)
            .arg("--target-dir")
            .arg(&target)
            .arg("--manifest-path")
            .arg(&manifest);
        c
    };
    no_warnings("hello agent test build", cargo_test(&["--no-run"]))?;
    crate::run("hello agent tests", cargo_test(&[]))?;
    eprintln!(
        "xtask: hello agent (a2a-agent/examples/hello, default features) tested in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs a cargo build; fails when it fails or prints a warning.
fn no_warnings(what: &str, cmd: Command) -> Result<()> {
    let out = output_of(cmd)?;
    let warnings = warnings_in(&out);
    if let Some(first) = warnings.first() {
        bail!("{what}: {} warning(s), first: {first}", warnings.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_lines_keep_package_and_features() {
        let out = "a2ars-types v0.1.0 (/w/a2a-types)|default,grpc\n\
                   serde v1.0.229|default,derive,std\n\
                   serde v1.0.229|default,derive,std (*)\n\
                   \n";
        let r = parse_tree(out);
        assert_eq!(r.len(), 2);
        assert!(r.contains("serde v1.0.229|derive,std"));
        assert!(r.contains("a2ars-types v0.1.0 (/w/a2a-types)|grpc"));
    }

    #[test]
    fn an_empty_default_is_no_default() {
        let default = parse_tree("a2ars-agent v0.1.0 (/w/a2a-agent)|default\n");
        let none = parse_tree("a2ars-agent v0.1.0 (/w/a2a-agent)|\n");
        assert_eq!(default, none);
        let gateway = parse_tree("a2ars-gateway v0.1.0 (/w/a2a-gateway)|default,jemalloc\n");
        let bare = parse_tree("a2ars-gateway v0.1.0 (/w/a2a-gateway)|\n");
        assert_ne!(gateway, bare);
    }

    #[test]
    fn a_feature_more_is_another_resolution() {
        let a = parse_tree("clap v4.6.9|std\nserde v1|std\n");
        let b = parse_tree("clap v4.6.9|std,wrap_help\nserde v1|std\n");
        assert_ne!(a, b);
        assert!(!a.is_subset(&b));
        assert!(parse_tree("serde v1|std\n").is_subset(&a));
    }
}
