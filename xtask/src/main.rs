//! Project chores for a2a-rs, run as `cargo xtask <command>` (the alias lives in `.cargo/config.toml`).
//!
//! - `cargo xtask test`: the project's one test command (fmt check, layer lists, clippy `-D warnings`,
//!   Python venvs, the console tests' browser (chromium + chromium-driver, installed with apt-get when
//!   missing, see [`browser`]), PostgreSQL's server binaries for the throwaway clusters of the
//!   store tests (Debian's `postgresql`, installed when missing, see [`postgres`]), nextest, doctests, packaging and semver, conformance, the getting-started commands, schema check).
//!   It stops at the first failing step.
//! - `cargo xtask layers [--root DIR] [--doc FILE]`: holds each crate's internal imports (`crate::`,
//!   `super::`, `self::` paths) against the `layers` blocks of `docs/architecture.md`: every file in
//!   one entry, no upward import, no import loop among files or entries (see [`layers`]). Run by
//!   `cargo xtask test` right after the format check.
//! - `cargo xtask conformance [ARGS]`: builds the workspace binaries and runs the conformance runner.
//! - `cargo xtask schema [--check]`: exports the JSON Schemas of a2a-types into `schemas/`, or checks
//!   that the committed files are current.
//! - `cargo xtask proto [--check]`: compiles `a2a-types/proto/a2a.proto` with protox (no system
//!   `protoc`) into the descriptor set the gRPC binding embeds, or checks the committed one is current.
//! - `cargo xtask fuzz [--secs N] [TARGET]`: builds the libFuzzer targets of `fuzz/` with coverage
//!   instrumentation on the stable toolchain (no cargo-fuzz needed, see [`fuzz`]) and runs each for
//!   N seconds (default 60), printing executions and crashes. `cargo xtask test` runs them briefly
//!   only when `A2A_CI_FUZZ_SECS` is set above 0 (their instrumented build of the whole tree costs
//!   about 15 CPU-minutes, half of CI's 30-minute budget on 2 cores).
//! - `cargo xtask bench [--secs N] [--no-build]`: the gateway benchmark (`a2a-gateway/bench/run.sh`):
//!   release build; first the gateway beside the proxy floor with the servers on one CPU and wrk
//!   on the other, medians of three rounds (`split.sh`), then the a2a-agent echo agent called
//!   directly and through the gateway with wrk (SendMessage on JSON-RPC and HTTP+JSON at 1 and
//!   16 connections, streams) and the ratios gateway/direct of the same run (see
//!   docs/benchmarks.md).
//! - `cargo xtask bench --store postgres [--secs N] [--no-build]`: the echo hop through a
//!   gateway on SQLite and one on PostgreSQL (a throwaway cluster, fsync on) in the same run, at
//!   1 and 16 connections: hops/s, gateway and PostgreSQL CPU per hop; then three replicas behind
//!   the loopback load balancer (`a2a-gateway/bench/stores.sh`, docs/replicas.md "Sizing").
//! - `cargo xtask bench pii [-- ARGS]`: PII scanning throughput (release build of the example
//!   `a2a-gateway/examples/pii_adversarial.rs`): MB/s of `find` on ordinary prose and on
//!   adversarial corpora (PEM headers, near-miss cards, e-mails, IPv6, digit runs, JWT-like
//!   tokens, and the normalisation's: fullwidth and other digits, zero-width characters,
//!   escapes, base64), each at 1 and 2 MiB so that a doubling shows; then precision and recall
//!   per detector on the labelled corpus `a2a-gateway/tests/data/pii_corpus.json`; ARGS go to
//!   the example (`--only NAME`, sizes in MiB). A report, never a pass or fail.
//! - `cargo xtask cluster [--release] [--replicas N] [--port P]`: a throwaway PostgreSQL, N
//!   (3) `a2a-gateway serve` replicas on it, a round-robin load balancer on loopback and the
//!   echo agent registered in a workspace; prints the addresses, a key and commands to try;
//!   Ctrl-C or SIGTERM stops everything (see [`cluster`], docs/replicas.md "Try it").
//! - `cargo xtask soak [--minutes N] [--workers W] [-- GATEWAY FLAGS]`: the soak of
//!   `a2a-gateway/examples/soak.rs` against the release binaries (docs/benchmarks.md, "Soak").
//!
//! - `cargo xtask package [--no-verify]`: `cargo package` of every published crate in dependency
//!   order (types, translate, client, agent, gateway), built from the packaged sources, then the
//!   semver check against the last `v*` tag (skipped, saying why, without a tag or without
//!   cargo-semver-checks). Run by `cargo xtask test`.
//! - `cargo xtask features [--matrix-only | --unify-only]`: the feature matrix, then the check
//!   that `cargo build -p a2ars-gateway` right after `cargo build --workspace` compiles nothing
//!   but the gateway (see [`features`]). The matrix tests each published crate with its default
//!   features and with `--no-default-features` (`cargo test --no-run`, a warning fails, then
//!   `cargo nextest run`; the gateway is checked only), once when two sets resolve to the same
//!   features for the crate and all its dependencies, or not again when the workspace's test
//!   step builds the same (it says which and why); `cargo check` of a set whose plain build no
//!   test build covers, and of the client's `--all-features`; then the hello agent's own tests
//!   (`a2a-agent/examples/hello`). Every feature at once is the workspace's test step. Both run
//!   in `cargo xtask test` (the matrix before the workspace's tests, the check after the
//!   conformance step's workspace build); see [`matrix`].
//! - `cargo xtask public-api [--check]`: the public-API snapshots `docs/public-api/*.txt` of the
//!   library crates (see [`public_api`]); `cargo xtask test` checks them.
//! - `cargo xtask docs-check`: runs the command blocks of docs/getting-started.md marked
//!   `# check` against the debug binaries, each in an empty folder with free ports (see
//!   [`docs_check`]). Run by `cargo xtask test` after the conformance step.
//! - `cargo xtask dist [--debug | --profile P] [--out DIR] [--no-build]`: release build and one installable
//!   bundle `{bin}-{version}-{target}.tar.gz` per binary under `target/dist/`: the binary, the
//!   servers' sample settings, systemd unit, Dockerfile and README, the licence (see [`dist`],
//!   docs/operations.md "Deploy"); also the archives `cargo binstall` fetches.
//!
//! Dependencies: `clap` (argument parsing), `anyhow` (error reporting), `tar` and `flate2` (the
//! bundles' archives); everything else is `std::process::Command`, so this crate builds in
//! seconds on a fresh clone.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

mod background;
mod browser;
mod cluster;
mod dist;
mod docs_check;
mod features;
mod fuzz;
mod instructions;
mod layers;
mod matrix;
mod packages;
mod postgres;
mod public_api;
mod release;
mod test_steps;

/// Command line of `cargo xtask`.
#[derive(Parser)]
#[command(name = "xtask", about = "a2a-rs project chores")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// The chores.
#[derive(Subcommand)]
enum Cmd {
    /// The one test command: fmt, layers, clippy, venvs, nextest, doctests, packages, conformance,
    /// docs-check, schema check.
    Test,
    /// Check each crate's internal imports against the `layers` blocks of docs/architecture.md.
    Layers {
        /// The repository root the blocks' source folders are relative to (default: this workspace).
        #[arg(long)]
        root: Option<PathBuf>,
        /// The document holding the blocks (default: ROOT/docs/architecture.md).
        #[arg(long)]
        doc: Option<PathBuf>,
    },
    /// Build the workspace binaries and run the conformance runner (extra ARGS go to the runner).
    Conformance {
        /// Arguments passed to the `conformance` binary (default: `run`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Export the JSON Schema of every top-level a2a-types type into `schemas/`.
    Schema {
        /// Fail if the committed files differ from what would be generated.
        #[arg(long)]
        check: bool,
    },
    /// Compile `a2a-types/proto/a2a.proto` (protox, no protoc) into the descriptor set the `grpc`
    /// feature embeds (`a2a-types/proto/a2a_v1.binpb`).
    Proto {
        /// Fail if the committed descriptor differs from what would be generated.
        #[arg(long)]
        check: bool,
    },
    /// Create the Python venvs used by the interop tests (`interop/setup_venvs.py`).
    Pyenv,
    /// Install what the tests need besides Rust when missing: the Python venvs, and Debian's
    /// chromium, chromium-driver and postgresql (apt-get, as root).
    Setup,
    /// Run the coverage-guided fuzz targets of `fuzz/` for a bounded time each.
    Fuzz {
        /// Seconds per target.
        #[arg(long, default_value_t = 60)]
        secs: u64,
        /// Only this target (default: all of them).
        target: Option<String>,
    },
    /// `cargo package` every published crate in dependency order, then the semver check.
    Package {
        /// Only package (file list, manifests, lock files); do not build the packaged sources.
        #[arg(long)]
        no_verify: bool,
    },
    /// A soak through the release gateway binary (sends, streams, cancels, subscribes, listings
    /// at 10 %): prints RSS, fds and database size every 10 s and each operation's p50/p99;
    /// fails on any error or growth (example `soak` of a2a-gateway).
    Soak {
        /// Minutes to run.
        #[arg(long, default_value_t = 30.0)]
        minutes: f64,
        /// Concurrent workers.
        #[arg(long, default_value_t = 8)]
        workers: usize,
        /// Extra `a2a-gateway serve` flags (after `--`), e.g. retention settings.
        #[arg(last = true)]
        gateway_args: Vec<String>,
    },
    /// One installable bundle per binary under target/dist/ (for GitHub releases, binstall):
    /// the binary, sample settings, systemd unit, Dockerfile, README, licence.
    Dist {
        /// Bundle debug binaries (the dev profile; quick, for tests).
        #[arg(long, conflicts_with = "profile")]
        debug: bool,
        /// Cargo profile of the binaries.
        #[arg(long, default_value = "release")]
        profile: String,
        /// Folder of the archives [default: target/dist].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Bundle the binaries already built for the profile (no cargo build).
        #[arg(long)]
        no_build: bool,
    },
    /// The feature matrix of the published crates (tests per feature set) and the check that
    /// `cargo build -p a2ars-gateway` reuses `cargo build --workspace`.
    Features {
        /// Only the feature matrix.
        #[arg(long, conflicts_with = "unify_only")]
        matrix_only: bool,
        /// Only the workspace feature-set check.
        #[arg(long)]
        unify_only: bool,
    },
    /// Write the public-API snapshots `docs/public-api/{package}.txt` (`--check`: compare).
    PublicApi {
        /// Fail if a committed snapshot differs from the sources.
        #[arg(long)]
        check: bool,
    },
    /// Run the `# check` command blocks of docs/getting-started.md against the debug binaries.
    DocsCheck,
    /// Instruction-count guard: instructions per gateway hop and per agent echo request of the
    /// debug binaries under callgrind, against a2a-gateway/bench/instructions-baseline.txt
    /// (fails above +10 %).
    Instructions {
        /// Rewrite the baseline with this run's counts instead of checking.
        #[arg(long)]
        update: bool,
    },
    /// The replicas demo: a throwaway PostgreSQL, three `a2a-gateway serve` replicas on it, a
    /// loopback load balancer and the echo agent; prints addresses, a key and commands to try;
    /// Ctrl-C stops everything.
    Cluster {
        /// Release build of the binaries (default: debug).
        #[arg(long)]
        release: bool,
        /// Number of replicas.
        #[arg(long, default_value_t = 3)]
        replicas: usize,
        /// The load balancer's port on 127.0.0.1 (0: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Gateway benchmark (release build, wrk): gateway/proxy floor, then gateway/direct.
    /// `bench pii`: PII scanning MB/s on prose and adversarial corpora.
    Bench {
        /// Seconds per wrk run.
        #[arg(long, default_value_t = 10)]
        secs: u64,
        /// Use the release binaries already built.
        #[arg(long)]
        no_build: bool,
        /// What to measure: `gateway` (the default) or `pii`.
        #[arg(default_value = "gateway")]
        what: String,
        /// `postgres`: the echo hop through a gateway on SQLite and one on PostgreSQL in the
        /// same run, then three replicas behind a load balancer (`a2a-gateway/bench/stores.sh`).
        #[arg(long, value_parser = ["sqlite", "postgres"], default_value = "sqlite")]
        store: String,
        /// Arguments passed to the PII benchmark (`--only NAME`, sizes in MiB).
        #[arg(last = true)]
        args: Vec<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Test => test_steps::test(),
        Cmd::Layers { root: dir, doc } => layers::run(&dir.unwrap_or_else(root), doc.as_deref()),
        Cmd::Conformance { args } => conformance(&args),
        Cmd::Schema { check } => schema(check),
        Cmd::Proto { check } => proto(check),
        Cmd::Pyenv => pyenv().map(|_| ()),
        Cmd::Setup => packages::setup(),
        Cmd::Fuzz { secs, target } => fuzz::fuzz(secs, target.as_deref()).map(|_| ()),
        Cmd::Bench {
            secs,
            no_build,
            what,
            store,
            args,
        } => match what.as_str() {
            "gateway" if store == "postgres" => bench_stores(secs, no_build),
            "gateway" => bench(secs, no_build),
            "pii" => bench_pii(&args),
            other => Err(anyhow::anyhow!(
                "unknown benchmark {other}; benchmarks: gateway, pii"
            )),
        },
        Cmd::Cluster {
            release,
            replicas,
            port,
        } => cluster::cluster(release, replicas, port),
        Cmd::Package { no_verify } => release::package(!no_verify),
        Cmd::Dist {
            debug,
            profile,
            out,
            no_build,
        } => dist::dist(&dist::Options {
            profile: if debug { "dev".into() } else { profile },
            out,
            no_build,
        })
        .map(|_| ()),
        Cmd::DocsCheck => docs_check::docs_check(),
        Cmd::Instructions { update } => instructions::instructions(update),
        Cmd::Features {
            matrix_only,
            unify_only,
        } => features::features(!unify_only, !matrix_only),
        Cmd::PublicApi { check } => public_api::public_api(check),
        Cmd::Soak {
            minutes,
            workers,
            gateway_args,
        } => soak(minutes, workers, &gateway_args),
    };
    if let Err(err) = result {
        eprintln!("xtask: error: {err:#}");
        std::process::exit(1);
    }
}

/// The workspace root (the parent of this crate's manifest directory).
fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The cargo that runs us (so toolchain overrides carry over).
fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root());
    cmd
}

/// Runs `cmd`, failing with `what` when it exits non-zero.
fn run(what: &str, mut cmd: Command) -> Result<()> {
    eprintln!("xtask: running {what}: {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("{what}: could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Runs the gateway benchmark script from the workspace root.
fn bench(secs: u64, no_build: bool) -> Result<()> {
    let mut c = Command::new("sh");
    c.current_dir(root())
        .arg("a2a-gateway/bench/run.sh")
        .arg(secs.to_string());
    if no_build {
        c.arg("--no-build");
    }
    run("gateway benchmark", c)
}

/// Runs the store benchmark script (SQLite and PostgreSQL, then three replicas behind a load
/// balancer) from the workspace root.
fn bench_stores(secs: u64, no_build: bool) -> Result<()> {
    if !postgres::present() {
        bail!("no PostgreSQL server binaries (initdb): run `cargo xtask setup` (as root) first");
    }
    let mut c = Command::new("sh");
    c.current_dir(root())
        .arg("a2a-gateway/bench/stores.sh")
        .arg(secs.to_string());
    if no_build {
        c.arg("--no-build");
    }
    run("store benchmark", c)
}

/// Builds the release binaries and runs the soak example against them.
fn soak(minutes: f64, workers: usize, gateway_args: &[String]) -> Result<()> {
    let mut b = cargo();
    b.args([
        "build",
        "--release",
        "-p",
        "a2ars-gateway",
        "--bin",
        "a2a-gateway",
        "--example",
        "soak",
        "-p",
        "a2ars-agent",
        "--bin",
        "a2a-agent",
    ]);
    run("release build for the soak", b)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let mut c = Command::new(target.join("release/examples/soak"));
    c.current_dir(root())
        .args([
            "--minutes",
            &minutes.to_string(),
            "--workers",
            &workers.to_string(),
        ])
        .arg("--bin-dir")
        .arg(target.join("release"))
        .arg("--")
        .args(gateway_args);
    run("soak", c)
}

/// Runs the PII scanning benchmark (release build of the example `pii_adversarial`).
fn bench_pii(args: &[String]) -> Result<()> {
    let mut c = cargo();
    c.args([
        "run",
        "--release",
        "-p",
        "a2ars-gateway",
        "--example",
        "pii_adversarial",
        "--",
    ])
    .args(args);
    run("PII scanning benchmark", c)
}

/// Runs the a2a-types example `proto_descriptor` (protox lives in its dev-dependencies, so the
/// xtask itself stays light).
fn proto(check: bool) -> Result<()> {
    let mut c = cargo();
    c.args([
        "run",
        "-q",
        "-p",
        "a2ars-types",
        "--features",
        "grpc",
        "--example",
        "proto_descriptor",
        "--",
        if check { "check" } else { "write" },
    ]);
    run("proto descriptor", c)
}

/// Runs `interop/setup_venvs.py` when the interop harness exists. Returns whether it ran.
fn pyenv() -> Result<bool> {
    let script = root().join("interop").join("setup_venvs.py");
    if !script.exists() {
        eprintln!(
            "xtask: {} not present; no venvs to set up",
            script.display()
        );
        return Ok(false);
    }
    let mut c = Command::new("python3");
    c.arg(&script).current_dir(root());
    run("python venv setup", c)?;
    Ok(true)
}

fn conformance(args: &[String]) -> Result<()> {
    // Build every binary first so the runner finds the agent and gateway next to itself.
    let mut build = cargo();
    build.args(["build", "--workspace", "--bins", "--quiet"]);
    run("cargo build --workspace --bins", build)?;
    let mut c = cargo();
    c.args([
        "run",
        "--quiet",
        "-p",
        "conformance",
        "--bin",
        "conformance",
        "--",
    ]);
    if args.is_empty() {
        c.arg("run");
    } else {
        c.args(args);
    }
    run("conformance runner", c)
}

fn schema(check: bool) -> Result<()> {
    let mut c = cargo();
    c.args([
        "run",
        "--quiet",
        "-p",
        "conformance",
        "--bin",
        "export-schemas",
        "--",
        "--out",
    ]);
    c.arg(root().join("schemas"));
    if check {
        c.arg("--check");
    }
    run(
        if check {
            "schema check"
        } else {
            "schema export"
        },
        c,
    )
}
