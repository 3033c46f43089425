//! `cargo xtask fuzz`: builds the libFuzzer targets of `fuzz/` with the stable toolchain and runs
//! each for a bounded time.
//!
//! The build passes the same coverage instrumentation cargo-fuzz uses without a sanitizer
//! (`-Cpasses=sancov-module`, 8-bit counters, PC table, compare tracing, `--cfg fuzzing`, debug
//! assertions), so neither a nightly toolchain nor an installed `cargo-fuzz` is needed. The flags
//! apply to the target only (`--target <host>`), not to build scripts and proc macros. Panics are
//! what the targets look for; a crash fails the command and leaves its input under
//! `fuzz/artifacts/<target>/`.

use std::process::Command;
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

use crate::{background, cargo, root, run};

/// The fuzz targets of `fuzz/` (see `fuzz/Cargo.toml`).
pub const TARGETS: &[&str] = &[
    "types_strict",
    "agent_request",
    "gateway_request",
    "pii_scan",
];

const RUSTFLAGS: &str = "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions";

/// The host triple, from `rustc -vV`.
pub(crate) fn host() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .context("could not run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_owned())
        .context("rustc -vV printed no host line")
}

/// Builds the targets, then fuzzes each (or only `only`) for `secs` seconds; prints one line of
/// figures per target.
pub fn fuzz(secs: u64, only: Option<&str>) -> Result<Vec<String>> {
    let targets: Vec<&str> = match only {
        Some(t) if TARGETS.contains(&t) => vec![t],
        Some(t) => bail!("unknown fuzz target {t}; targets: {}", TARGETS.join(", ")),
        None => TARGETS.to_vec(),
    };
    let host = host()?;
    let dir = root().join("fuzz");
    join_background_build()?;
    run("cargo build (fuzz targets)", build_command(&host))?;
    let mut summary = Vec::new();
    for t in targets {
        let corpus = dir.join("corpus").join(t);
        let artifacts = dir.join("artifacts").join(t);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let bin = dir.join("target").join(&host).join("release").join(t);
        let mut c = Command::new(&bin);
        c.arg(format!("-artifact_prefix={}/", artifacts.display()))
            .arg(format!("-max_total_time={secs}"))
            .arg("-print_final_stats=1")
            .arg(&corpus);
        eprintln!("xtask: fuzzing {t} for {secs}s: {c:?}");
        let out = c
            .output()
            .with_context(|| format!("could not start {}", bin.display()))?;
        let log = String::from_utf8_lossy(&out.stderr).to_string();
        let stat = |name: &str| {
            log.lines()
                .find_map(|l| l.strip_prefix(&format!("stat::{name}:")))
                .map(|v| v.trim().to_owned())
                .unwrap_or_else(|| "?".into())
        };
        let inputs = std::fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0);
        let line = format!(
            "{t}: {} executions in {secs}s ({} exec/s), corpus {inputs} inputs, {}",
            stat("number_of_executed_units"),
            stat("average_exec_per_sec"),
            if out.status.success() {
                "0 crashes".to_owned()
            } else {
                format!("CRASH ({})", out.status)
            }
        );
        eprintln!("xtask: {line}");
        if !out.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            for l in tail.into_iter().rev() {
                eprintln!("{l}");
            }
            bail!(
                "fuzz target {t} found a crash (input under {})",
                artifacts.display()
            );
        }
        summary.push(line);
    }
    eprintln!("\nxtask fuzz: {}", summary.join("\nxtask fuzz: "));
    Ok(summary)
}

/// The instrumented build of the fuzz targets (`fuzz/target`, its own target directory).
fn build_command(host: &str) -> Command {
    let dir = root().join("fuzz");
    let mut b = cargo();
    b.current_dir(&dir)
        .env("RUSTFLAGS", RUSTFLAGS)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .args(["build", "--release", "--bins", "--target", host]);
    b
}

/// The fuzz targets' build started in the background by [`start_background_build`].
static BACKGROUND: Mutex<Option<background::Job>> = Mutex::new(None);

/// Starts the fuzz targets' build in the background, its output to a file. `cargo xtask test`
/// starts it after the lint step and joins it ([`join_background_build`]) before the tests,
/// which must not share the CPU with it.
pub fn start_background_build() -> Result<()> {
    let job = background::start(
        "the fuzz targets' build",
        build_command(&host()?),
        root().join("fuzz/target/background-build.log"),
    )?;
    *BACKGROUND.lock().map_err(|_| anyhow::anyhow!("poisoned"))? = Some(job);
    Ok(())
}

/// Waits for the background build, if one was started; its failure fails with its output.
pub fn join_background_build() -> Result<()> {
    background::join(&BACKGROUND)
}

/// Stops the background build, if one runs (a step before the tests failed).
pub fn abandon_background_build() {
    background::abandon(&BACKGROUND)
}
