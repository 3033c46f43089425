//! `cargo xtask features`: the feature matrix of the published crates and the check that the
//! workspace builds one feature set (docs/releases.md, "Features").
//!
//! - The matrix: `cargo clippy -p CRATE -- -D warnings` for each distinct feature set of each
//!   published crate (default, `--no-default-features`, `--all-features`; a set equal to
//!   another is run once), libraries and binaries, so a feature-gated import or item that is
//!   unused in one set fails here. The tests run with every feature (`cargo nextest run
//!   --workspace`: the gateway turns every library feature on, and each library's tests turn its
//!   own on through a dev-dependency on itself).
//! - The feature set: `cargo build --workspace`, then `cargo build -p a2ars-gateway`; the
//!   second must compile nothing but the gateway itself (a dependency built twice means a
//!   single-package build unifies features differently from the workspace build, and the
//!   README's commands would not reuse each other's build).

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{cargo, run};

/// Each published crate and the feature sets that differ for it (`""` is the default set).
const MATRIX: &[(&str, &[&str])] = &[
    // default = [] : the default set is the `--no-default-features` set.
    ("a2ars-types", &["--no-default-features", "--all-features"]),
    ("a2ars-pg", &[""]),
    ("a2ars-translate", &[""]),
    ("a2ars-client", &["--no-default-features", "--all-features"]),
    ("a2ars-agent", &["--no-default-features", "--all-features"]),
    // default = ["jemalloc"].
    (
        "a2ars-gateway",
        &["", "--no-default-features", "--all-features"],
    ),
];

/// Runs the matrix, then the feature-set check.
pub fn features(matrix: bool, unify: bool) -> Result<()> {
    if matrix {
        self::matrix()?;
    }
    if unify {
        self::unify()?;
    }
    Ok(())
}

/// `cargo clippy` of every published crate in each of its feature sets.
fn matrix() -> Result<()> {
    for (krate, sets) in MATRIX {
        for set in *sets {
            let started = Instant::now();
            let mut c = cargo();
            c.args(["clippy", "-p", krate]);
            if !set.is_empty() {
                c.arg(set);
            }
            c.args(["--", "-D", "warnings"]);
            let shown = if set.is_empty() { "default" } else { set };
            run(&format!("clippy {krate} ({shown})"), c)?;
            eprintln!(
                "xtask: {krate} ({shown}) ok in {:.1}s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// `cargo build --workspace`, then `cargo build -p a2ars-gateway`: the second compiles nothing
/// but the gateway.
fn unify() -> Result<()> {
    let mut all = cargo();
    all.args(["build", "--workspace"]);
    run("cargo build --workspace", all)?;
    let mut one = cargo();
    one.args(["build", "-p", "a2ars-gateway"]);
    let extra = compiled_by(one)?;
    let others: Vec<&String> = extra.iter().filter(|p| *p != "a2ars-gateway").collect();
    if !others.is_empty() {
        bail!(
            "`cargo build -p a2ars-gateway` after `cargo build --workspace` compiled {} other \
             package(s): {} (a feature set differs: turn the feature on in a2a-gateway/Cargo.toml, \
             see docs/releases.md \"Features\")",
            others.len(),
            others
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    eprintln!("xtask: the gateway build reused the workspace build (compiled: {extra:?})");
    Ok(())
}

/// Runs a cargo build and returns the packages it compiled (its `Compiling NAME` lines).
fn compiled_by(mut cmd: Command) -> Result<Vec<String>> {
    eprintln!("xtask: running {cmd:?}");
    let out = cmd
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    eprint!("{err}");
    if !out.status.success() {
        bail!("{cmd:?} failed ({})", out.status);
    }
    Ok(compiled_packages(&err))
}

/// The package names of cargo's `Compiling NAME vX (...)` lines.
pub fn compiled_packages(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("Compiling "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_lines_name_their_packages() {
        let err = "   Compiling a2ars-agent v0.1.0 (/w/a2a-agent)\n\
                   \x20  Compiling a2ars-gateway v0.1.0 (/w/a2a-gateway)\n\
                   \x20   Finished `dev` profile [unoptimized] target(s) in 3.2s\n";
        assert_eq!(compiled_packages(err), ["a2ars-agent", "a2ars-gateway"]);
        assert!(compiled_packages("    Finished `dev` profile\n").is_empty());
    }
}
