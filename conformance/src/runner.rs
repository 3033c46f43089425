//! The runner: replays loaded cases (model cases in-process, wire cases against targets) and reports
//! one line per case plus a closing `N passed, N failed` line.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use crate::fixture::{Case, LoadedCase};
use crate::grpc;
use crate::model::{self, Outcome};
use crate::wire::{self, StartError, TargetsFile};

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Targets for wire cases (names in the targets file); empty = every target in the file.
    pub targets: Vec<String>,
    /// Where target binaries are (default: the directory of the running executable).
    pub bin_dir: PathBuf,
    /// How long a target may take to print its URL.
    pub start_timeout: Duration,
    /// Per-request timeout.
    pub request_timeout: Duration,
}

/// Counts of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Replays whose every expectation held.
    pub passed: usize,
    /// Replays with at least one failed expectation.
    pub failed: usize,
    /// Replays not run: their target does not exist yet, or the case has no gRPC form.
    pub skipped: usize,
    /// Model cases whose type is listed as pending in the registry.
    pub pending: usize,
}

impl Summary {
    /// The closing line.
    pub fn line(&self) -> String {
        format!(
            "{} passed, {} failed ({} skipped, {} pending)",
            self.passed, self.failed, self.skipped, self.pending
        )
    }
}

/// Runs `cases`, writing one line per replay to `out`.
pub fn run(
    cases: &[LoadedCase],
    targets: &TargetsFile,
    opts: &Options,
    out: &mut dyn Write,
) -> std::io::Result<Summary> {
    let mut sum = Summary::default();
    for lc in cases {
        if let Case::Model(m) = &lc.case {
            let id = format!("{}/{} [{} {}]", lc.suite, lc.name, m.dialect, m.type_name);
            match model::replay(m) {
                Outcome::Pass => {
                    sum.passed += 1;
                    writeln!(out, "PASS {id}")?;
                }
                Outcome::Fail(reasons) => {
                    sum.failed += 1;
                    writeln!(out, "FAIL {id} {}", reasons.join(" | "))?;
                }
                Outcome::Pending(reason) => {
                    sum.pending += 1;
                    writeln!(out, "PENDING {id} {reason}")?;
                }
            }
        }
    }
    let wire_cases: Vec<_> = cases
        .iter()
        .filter_map(|lc| match &lc.case {
            Case::Wire(w) => Some((lc, w)),
            Case::Model(_) => None,
        })
        .collect();
    if wire_cases.is_empty() {
        return Ok(sum);
    }
    let target_names: Vec<String> = if opts.targets.is_empty() {
        targets.keys().cloned().collect()
    } else {
        opts.targets.clone()
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            writeln!(out, "FAIL (runner) cannot start the async runtime: {e}")?;
            sum.failed += 1;
            return Ok(sum);
        }
    };
    let client = match reqwest::Client::builder()
        .timeout(opts.request_timeout)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            writeln!(out, "FAIL (runner) cannot build the HTTP client: {e}")?;
            sum.failed += 1;
            return Ok(sum);
        }
    };
    for tname in &target_names {
        let explicit = targets.get(tname).is_some_and(|t| t.explicit);
        let mine: Vec<_> = wire_cases
            .iter()
            .filter(|(_, w)| (w.targets.is_empty() && !explicit) || w.targets.contains(tname))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let started = match targets.get(tname) {
            None => Err(StartError::Failed(format!(
                "target {tname} is not in the targets file"
            ))),
            Some(spec) => wire::start(spec, &opts.bin_dir, opts.start_timeout),
        };
        let target = match started {
            Ok(t) => {
                writeln!(out, "# target {tname} listening at {}", t.base_url)?;
                t
            }
            Err(err) => {
                let (word, reason) = match &err {
                    StartError::Unavailable(r) => ("SKIP", r),
                    StartError::Failed(r) => ("FAIL", r),
                };
                let serves_grpc = targets.get(tname).is_some_and(|t| t.grpc);
                for (lc, w) in &mine {
                    let grpc_lines = if serves_grpc {
                        grpc::derive(w).len()
                    } else {
                        0
                    };
                    let lines = w
                        .variants
                        .iter()
                        .map(|v| (v.binding.as_str(), v.version.as_str()))
                        .chain(std::iter::repeat_n((grpc::BINDING, "1.0"), grpc_lines));
                    for (binding, version) in lines {
                        writeln!(
                            out,
                            "{word} {}/{} [{binding} {version}] on {tname}: {reason}",
                            lc.suite, lc.name
                        )?;
                        match err {
                            StartError::Unavailable(_) => sum.skipped += 1,
                            StartError::Failed(_) => sum.failed += 1,
                        }
                    }
                }
                continue;
            }
        };
        for (lc, w) in &mine {
            for v in &w.variants {
                let fails = rt.block_on(wire::replay_variant(&client, &target, v));
                let id = format!(
                    "{}/{} [{} {}] on {tname}",
                    lc.suite, lc.name, v.binding, v.version
                );
                if fails.is_empty() {
                    sum.passed += 1;
                    writeln!(out, "PASS {id}")?;
                } else {
                    sum.failed += 1;
                    writeln!(out, "FAIL {id} {}", fails.join(" | "))?;
                }
            }
        }
        match targets.get(tname) {
            Some(spec) if spec.grpc => {
                replay_grpc(&rt, &mine, &target, tname, opts, &mut sum, out)?;
            }
            Some(spec) => {
                if let Some(why) = &spec.no_grpc {
                    writeln!(out, "# target {tname} not replayed over gRPC: {why}")?;
                }
            }
            None => {}
        }
        drop(target);
    }
    Ok(sum)
}

/// Replays the gRPC form of each case of `mine` against `target` (one line per case: `PASS`,
/// `FAIL`, or `SKIP` with the reason the case has no gRPC form).
fn replay_grpc(
    rt: &tokio::runtime::Runtime,
    mine: &[&(&LoadedCase, &crate::fixture::WireCase)],
    target: &wire::Target,
    tname: &str,
    opts: &Options,
    sum: &mut Summary,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let channel = rt.block_on(async { grpc::channel() });
    for (lc, w) in mine {
        let replays = grpc::derive(w);
        let several = replays.len() > 1;
        for (i, replay) in replays.into_iter().enumerate() {
            let nth = if several {
                format!(" #{}", i + 1)
            } else {
                String::new()
            };
            let id = format!(
                "{}/{} [{} 1.0{nth}] on {tname}",
                lc.suite,
                lc.name,
                grpc::BINDING
            );
            match replay {
                Err(why) => {
                    sum.skipped += 1;
                    writeln!(out, "SKIP {id}: {why}")?;
                }
                Ok(steps) => {
                    let fails =
                        rt.block_on(grpc::replay(&channel, target, &steps, opts.request_timeout));
                    if fails.is_empty() {
                        sum.passed += 1;
                        writeln!(out, "PASS {id}")?;
                    } else {
                        sum.failed += 1;
                        writeln!(out, "FAIL {id} {}", fails.join(" | "))?;
                    }
                }
            }
        }
    }
    Ok(())
}
