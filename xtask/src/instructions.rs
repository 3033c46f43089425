//! `cargo xtask instructions`: the instruction-count guard (issue 38). Runs
//! `a2a-gateway/bench/callgrind.sh` against the debug binaries (`valgrind --tool=callgrind`
//! counts instructions, not seconds: repeatable on a loaded machine) and compares the
//! instructions per request of one gateway hop, of the agent behind it and of the agent called
//! directly, on each binding and per stream, with the committed baseline
//! [`BASELINE`]. More than [`TOLERANCE`] above the baseline fails; more than that below asks for
//! the baseline to be updated (`--update`), so that the next slowdown is measured from there.
//!
//! Why the debug binaries: `cargo xtask test` has just built them for the tests, so the guard
//! costs a minute of valgrind rather than a release build of the workspace (several minutes on
//! CI's two cores). Their counts are not the release figures of docs/benchmarks.md (unoptimised
//! code runs about ten times the instructions), but work added to a hop (a second parse, an extra
//! copy of the body, another store call) shows in both.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, root, run};

/// The committed baseline, relative to the repository root.
pub const BASELINE: &str = "a2a-gateway/bench/instructions-baseline.txt";
/// Allowed change either way before the guard speaks, as a fraction of the baseline.
pub const TOLERANCE: f64 = 0.10;
/// Requests measured per case, after [`WARMUP`] unmeasured ones.
const REQUESTS: u32 = 100;
const WARMUP: u32 = 20;

/// One measured figure: (case, process) -> instructions per request.
type Counts = BTreeMap<(String, String), u64>;

/// Measures, then checks against the baseline (`update`: rewrites it instead).
pub fn instructions(update: bool) -> Result<()> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        bail!("valgrind is needed (Debian: apt-get install valgrind)");
    }
    // The same units as the test step builds (`nextest run --workspace --lib --bins --tests`):
    // after `cargo xtask test`'s tests this is a no-op, and the binaries measured are the ones
    // the tests ran.
    let mut build = cargo();
    build.args(["build", "--workspace", "--lib", "--bins", "--tests"]);
    run("cargo build (debug binaries)", build)?;
    let measured = measure()?;
    let path = root().join(BASELINE);
    if update {
        return write_baseline(&path, &measured);
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading {} (make it with --update)", path.display()))?;
    let baseline = parse(&text)?;
    let verdicts = compare(&baseline, &measured);
    let mut failed = false;
    let mut faster = false;
    for v in &verdicts {
        eprintln!("{}", v.line);
        failed |= v.over;
        faster |= v.under;
    }
    if failed {
        bail!(
            "instructions per request grew more than {:.0} % over {BASELINE}: find the cause \
             (a2a-gateway/bench/callgrind.sh with BENCH_KEEP=1, then callgrind_annotate), or, if \
             the extra work is wanted, say why in the commit and run `cargo xtask instructions --update`",
            TOLERANCE * 100.0
        );
    }
    if faster {
        eprintln!(
            "xtask: some counts fell more than {:.0} % below the baseline: run `cargo xtask \
             instructions --update` and commit it so that the guard measures from there",
            TOLERANCE * 100.0
        );
    }
    Ok(())
}

/// Runs the callgrind script on the debug binaries and reads its `NAME: Ir per request:` lines.
fn measure() -> Result<Counts> {
    let script = root().join("a2a-gateway/bench/callgrind.sh");
    let out = Command::new("sh")
        .arg(&script)
        .args([REQUESTS.to_string(), WARMUP.to_string()])
        .env("BENCH_PROFILE", "debug")
        .env("CARGO_TARGET_DIR", crate::release::target_dir())
        .current_dir(root())
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "{} failed ({}):\n{stdout}\n{}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let counts = parse_script(&stdout);
    if counts.is_empty() {
        bail!("{} printed no counts:\n{stdout}", script.display());
    }
    Ok(counts)
}

/// Reads `gw-jsonrpc: Ir per request: agent 1060201, gateway 3694388` lines. The gateway's
/// count of a direct case is its idle work while the agent was measured: not a figure.
fn parse_script(stdout: &str) -> Counts {
    let mut counts = Counts::new();
    for line in stdout.lines() {
        let Some((case, rest)) = line.split_once(": Ir per request: ") else {
            continue;
        };
        for part in rest.split(", ") {
            let Some((process, n)) = part.split_once(' ') else {
                continue;
            };
            if case.starts_with("direct") && process == "gateway" {
                continue;
            }
            if let Ok(n) = n.trim().parse() {
                counts.insert((case.to_string(), process.to_string()), n);
            }
        }
    }
    counts
}

/// Reads the baseline: `case process count` per line, `#` comments.
fn parse(text: &str) -> Result<Counts> {
    let mut counts = Counts::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [case, process, n] = fields[..] else {
            bail!("{BASELINE}:{}: expected `case process count`", i + 1);
        };
        let n = n
            .parse()
            .with_context(|| format!("{BASELINE}:{}: count", i + 1))?;
        counts.insert((case.to_string(), process.to_string()), n);
    }
    Ok(counts)
}

/// One printed comparison.
struct Verdict {
    line: String,
    over: bool,
    under: bool,
}

/// Compares each baseline figure with its measurement; a figure missing from the measurement
/// is a failure (the script stopped measuring something the guard covers).
fn compare(baseline: &Counts, measured: &Counts) -> Vec<Verdict> {
    baseline
        .iter()
        .map(|((case, process), &base)| {
            let name = format!("{case} {process}");
            match measured.get(&(case.clone(), process.clone())) {
                None => Verdict {
                    line: format!("{name:<24} baseline {base:>10}  not measured  FAIL"),
                    over: true,
                    under: false,
                },
                Some(&now) => {
                    let ratio = now as f64 / base.max(1) as f64;
                    let over = ratio > 1.0 + TOLERANCE;
                    let under = ratio < 1.0 - TOLERANCE;
                    let mark = if over {
                        "FAIL"
                    } else if under {
                        "faster"
                    } else {
                        "ok"
                    };
                    Verdict {
                        line: format!(
                            "{name:<24} baseline {base:>10}  now {now:>10}  x{ratio:.3}  {mark}"
                        ),
                        over,
                        under,
                    }
                }
            }
        })
        .collect()
}

fn write_baseline(path: &PathBuf, counts: &Counts) -> Result<()> {
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut text = format!(
        "# Instructions per request of the debug binaries under callgrind, checked by\n\
         # `cargo xtask instructions` (a step of `cargo xtask test`) with a {:.0} % tolerance.\n\
         # Written by `cargo xtask instructions --update` ({rustc}; {REQUESTS} requests per case\n\
         # after {WARMUP} warm-up ones). case process instructions-per-request\n",
        TOLERANCE * 100.0
    );
    for ((case, process), n) in counts {
        text.push_str(&format!("{case} {process} {n}\n"));
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_lines_are_read_and_idle_gateway_counts_skipped() {
        let out = "direct http://x, gateway http://y\n\
                   gw-jsonrpc: Ir per request: agent 1060201, gateway 3694388\n\
                   direct-rest: Ir per request: agent 972594, gateway 90\n\
                   N=100 W=20\n";
        let c = parse_script(out);
        assert_eq!(c.len(), 3);
        assert_eq!(c[&("gw-jsonrpc".into(), "gateway".into())], 3694388);
        assert_eq!(c[&("direct-rest".into(), "agent".into())], 972594);
        assert!(!c.contains_key(&("direct-rest".into(), "gateway".into())));
    }

    #[test]
    fn growth_beyond_the_tolerance_fails_and_a_missing_figure_fails() {
        let base = parse("# c\ngw-jsonrpc gateway 1000\ngw-rest gateway 1000\nx agent 1000\n")
            .expect("parse");
        let mut now = Counts::new();
        now.insert(("gw-jsonrpc".into(), "gateway".into()), 1099);
        now.insert(("gw-rest".into(), "gateway".into()), 1101);
        let v = compare(&base, &now);
        assert!(!v[0].over && !v[0].under);
        assert!(v[1].over);
        assert!(v[2].over, "{}", v[2].line);
        now.insert(("gw-jsonrpc".into(), "gateway".into()), 899);
        assert!(compare(&base, &now)[0].under);
    }

    #[test]
    fn a_malformed_baseline_line_is_refused() {
        assert!(parse("gw-jsonrpc gateway\n").is_err());
        assert!(parse("gw-jsonrpc gateway many\n").is_err());
    }
}
