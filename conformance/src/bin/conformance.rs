//! `conformance`: replays the fixtures under `conformance/fixtures/` and prints one line per case and a
//! closing `N passed, N failed` line; exits non-zero when anything failed.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use conformance::{fixture, runner, wire};

/// Command line.
#[derive(Parser)]
#[command(name = "conformance", about = "A2A conformance fixtures runner")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Replay fixtures (model suites in-process, wire suites against targets).
    Run {
        /// Fixture directory (one sub-directory per suite).
        #[arg(long)]
        fixtures: Option<PathBuf>,
        /// Only these suites (repeatable).
        #[arg(long = "suite")]
        suites: Vec<String>,
        /// Targets for wire suites: `agent`, `gateway` (repeatable); default: all in the targets file.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// Targets file (default: conformance/targets.json).
        #[arg(long)]
        targets_file: Option<PathBuf>,
        /// Directory holding the target binaries (default: this executable's directory).
        #[arg(long)]
        bin_dir: Option<PathBuf>,
        /// Seconds a target may take to print its URL.
        #[arg(long, default_value_t = 30)]
        start_timeout: u64,
        /// Per-request timeout in seconds.
        #[arg(long, default_value_t = 30)]
        request_timeout: u64,
    },
    /// List the cases without running them.
    List {
        /// Fixture directory.
        #[arg(long)]
        fixtures: Option<PathBuf>,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Cmd::List { fixtures } => {
            let dir = fixtures.unwrap_or_else(fixture::default_fixture_dir);
            let cases = fixture::load_all(&dir, &[]).map_err(anyhow::Error::msg)?;
            for c in cases {
                let kind = match c.case {
                    fixture::Case::Model(_) => "model",
                    fixture::Case::Wire(_) => "wire",
                };
                println!("{}/{} ({kind})", c.suite, c.name);
            }
            Ok(())
        }
        Cmd::Run {
            fixtures,
            suites,
            targets,
            targets_file,
            bin_dir,
            start_timeout,
            request_timeout,
        } => {
            let dir = fixtures.unwrap_or_else(fixture::default_fixture_dir);
            let cases = fixture::load_all(&dir, &suites).map_err(anyhow::Error::msg)?;
            let tfile = targets_file.unwrap_or_else(wire::default_targets_file);
            let tdefs = wire::load_targets(&tfile).map_err(anyhow::Error::msg)?;
            let bin_dir = match bin_dir {
                Some(d) => d,
                None => std::env::current_exe()
                    .context("locating the runner executable")?
                    .parent()
                    .map(PathBuf::from)
                    .context("runner executable has no directory")?,
            };
            for (suite, why) in fixture::FOREIGN_SUITES {
                if dir.join(suite).is_dir() {
                    println!("# suite {suite} not replayed here: {why}");
                }
            }
            let opts = runner::Options {
                targets,
                bin_dir,
                start_timeout: Duration::from_secs(start_timeout),
                request_timeout: Duration::from_secs(request_timeout),
            };
            let mut stdout = std::io::stdout().lock();
            let sum = runner::run(&cases, &tdefs, &opts, &mut stdout)?;
            println!("{}", sum.line());
            if sum.failed > 0 {
                eprintln!("conformance: {} replay(s) failed", sum.failed);
                std::process::exit(1);
            }
            if cases.is_empty() {
                bail!("no fixtures found under {}", dir.display());
            }
            Ok(())
        }
    }
}
