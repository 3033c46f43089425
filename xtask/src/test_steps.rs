//! `cargo xtask test`: the project's one test command, as named steps run in order (the first
//! failing step stops the run), with the jobs started in the background beside them.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{
    background, cargo, conformance, docs_check, features, fuzz, instructions, layers, proto,
    public_api, release, root, run, schema,
};

/// One named step of `cargo xtask test`.
struct Step {
    name: &'static str,
    run: fn() -> Result<()>,
}

pub fn test() -> Result<()> {
    let steps = [
        Step {
            name: "format check (cargo fmt --all -- --check)",
            run: || {
                let mut c = cargo();
                c.args(["fmt", "--all", "--", "--check"]);
                run("cargo fmt --check", c)
            },
        },
        Step {
            name: "layer lists (cargo xtask layers: the layers blocks of docs/architecture.md)",
            run: || layers::run(&root(), None),
        },
        Step {
            name: "test prerequisites set up in the background (cargo xtask setup: python venvs, chromium, PostgreSQL; joined before the feature matrix)",
            run: start_setup,
        },
        Step {
            name: "lint (cargo clippy --workspace --all-targets -- -D warnings)",
            run: || {
                let mut c = cargo();
                c.args([
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ]);
                run("cargo clippy", c)
            },
        },
        Step {
            name: "public-API snapshots current (cargo xtask public-api --check)",
            run: || public_api::public_api(true),
        },
        Step {
            name: "fuzz targets' build started in the background (joined before the tests; only when A2A_CI_FUZZ_SECS > 0)",
            run: || {
                if fuzz_secs() == 0 {
                    return Ok(());
                }
                fuzz::start_background_build()
            },
        },
        Step {
            name: "feature matrix (cargo xtask features --matrix-only: each published crate tested with default features and with none, the hello agent's tests; every feature is the next step; A2A_CI_FEATURES=0 skips)",
            run: || {
                // The matrix never shares the CPU with the fuzz build, and its tests need what
                // the setup installs.
                background::join(&SETUP)?;
                fuzz::join_background_build()?;
                features::features(true, false)
            },
        },
        Step {
            name: "tests, every feature (cargo nextest run --workspace --lib --bins --tests --profile ci)",
            run: || {
                // The tests never share the CPU with the fuzz build.
                fuzz::join_background_build()?;
                // Examples are not tests: the lint step checks that they compile.
                let mut c = cargo();
                c.args([
                    "nextest",
                    "run",
                    "--workspace",
                    "--lib",
                    "--bins",
                    "--tests",
                    "--profile",
                    "ci",
                ]);
                run("cargo nextest", c)
            },
        },
        Step {
            name: "doctests (cargo test --doc --workspace)",
            run: || {
                let mut c = cargo();
                c.args(["test", "--doc", "--workspace"]);
                run("cargo test --doc", c)
            },
        },
        Step {
            name: "instruction counts within 10 % of the baseline (cargo xtask instructions: callgrind on the debug binaries the tests ran)",
            run: || instructions::instructions(false),
        },
        Step {
            name: "packages and semver (cargo xtask package; A2A_CI_PACKAGE_VERIFY=0 skips building them)",
            run: || {
                let verify = std::env::var("A2A_CI_PACKAGE_VERIFY").map_or(true, |v| v != "0");
                release::package(verify)
            },
        },
        Step {
            name: "conformance (cargo xtask conformance)",
            run: || conformance(&[]),
        },
        Step {
            name: "one feature set (cargo xtask features --unify-only: build --workspace, then -p a2ars-gateway)",
            run: || features::features(false, true),
        },
        Step {
            name: "getting-started commands run (cargo xtask docs-check)",
            run: docs_check::docs_check,
        },
        Step {
            name: "schemas current (cargo xtask schema --check)",
            run: || schema(true),
        },
        Step {
            name: "gRPC descriptor current (cargo xtask proto --check)",
            run: || proto(true),
        },
        Step {
            name: "fuzz, briefly (cargo xtask fuzz --secs $A2A_CI_FUZZ_SECS; unset or 0 skips)",
            run: || {
                let secs = fuzz_secs();
                if secs == 0 {
                    eprintln!(
                        "xtask: fuzzing skipped (A2A_CI_FUZZ_SECS unset or 0; `cargo xtask fuzz` runs it)"
                    );
                    return Ok(());
                }
                fuzz::fuzz(secs, None).map(|_| ())
            },
        },
    ];
    let total = Instant::now();
    for (i, step) in steps.iter().enumerate() {
        let started = Instant::now();
        eprintln!(
            "\nxtask test: step {}/{}: {}",
            i + 1,
            steps.len(),
            step.name
        );
        if let Err(err) = (step.run)() {
            background::abandon(&SETUP);
            fuzz::abandon_background_build();
            bail!(
                "step {}/{} `{}` FAILED: {err:#}\nxtask test: stopping at the first failing step",
                i + 1,
                steps.len(),
                step.name
            );
        }
        eprintln!(
            "xtask test: step {}/{} ok ({:.1}s)",
            i + 1,
            steps.len(),
            started.elapsed().as_secs_f64()
        );
    }
    eprintln!(
        "\nxtask test: all {} steps passed ({:.1}s)",
        steps.len(),
        total.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask setup`, started in the background by [`start_setup`].
static SETUP: std::sync::Mutex<Option<background::Job>> = std::sync::Mutex::new(None);

/// Starts `cargo xtask setup` (this program, `setup`) in the background: it mostly waits on the
/// network (Python packages, Debian's packages) while the lint step uses the CPU.
fn start_setup() -> Result<()> {
    let mut c = Command::new(std::env::current_exe().context("the xtask program's path")?);
    c.arg("setup").current_dir(root());
    let job = background::start(
        "the test prerequisites' setup (cargo xtask setup)",
        c,
        release::target_dir().join("xtask-setup.log"),
    )?;
    *SETUP.lock().map_err(|_| anyhow::anyhow!("poisoned"))? = Some(job);
    Ok(())
}

/// Seconds each fuzz target runs in `cargo xtask test` (`A2A_CI_FUZZ_SECS`; unset or 0 skips).
fn fuzz_secs() -> u64 {
    std::env::var("A2A_CI_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
