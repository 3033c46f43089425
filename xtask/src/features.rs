//! `cargo xtask features`: the feature matrix of the published crates and the check that the
//! workspace builds one feature set (docs/releases.md, "Features").
//!
//! - The matrix: each published crate tested in its default and empty sets, and the hello
//!   agent's package (see [`crate::matrix`]).
//! - The feature set: `cargo build --workspace`, then `cargo build -p a2ars-gateway`; the
//!   second must compile nothing but the gateway itself (a dependency built twice means a
//!   single-package build unifies features differently from the workspace build, and the
//!   README's commands would not reuse each other's build).

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, run};

/// Runs the matrix, then the feature-set check.
pub fn features(matrix: bool, unify: bool) -> Result<()> {
    if matrix {
        crate::matrix::matrix()?;
    }
    if unify {
        self::unify()?;
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
fn compiled_by(cmd: Command) -> Result<Vec<String>> {
    Ok(compiled_packages(&output_of(cmd)?))
}

/// Runs a cargo command, echoes and returns its stderr; fails when the command fails.
pub fn output_of(mut cmd: Command) -> Result<String> {
    eprintln!("xtask: running {cmd:?}");
    let out = cmd
        .env("CARGO_TERM_COLOR", "never")
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprint!("{err}");
    if !out.status.success() {
        bail!("{cmd:?} failed ({})", out.status);
    }
    Ok(err)
}

/// The `warning: ...` lines of cargo's output, without its summary lines.
pub fn warnings_in(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            l.starts_with("warning: ") && !l.contains("generated ") && !l.contains(" warning")
        })
        .map(str::to_string)
        .collect()
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

    #[test]
    fn warnings_are_found_and_summaries_are_not() {
        let err = "warning: unused import: `std::path::Path`\n  --> src/a.rs:3:5\n\
                   warning: `a2ars-agent` (lib) generated 1 warning\n\
                   \x20   Finished `dev` profile\n";
        assert_eq!(
            warnings_in(err),
            ["warning: unused import: `std::path::Path`"]
        );
        assert!(warnings_in("    Checking a v0.1.0\n    Finished `dev`\n").is_empty());
    }
}
