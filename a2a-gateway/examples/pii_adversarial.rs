//! PII scanning on ordinary prose and on adversarial corpora, each at two sizes (issue 39).
//!
//! `cargo xtask bench pii` runs it (release build); by hand:
//! `cargo run --release -p a2ars-gateway --example pii_adversarial [-- [--only NAME]
//! [--rounds N] [MIB ...]]` (default sizes 1 and 2 MiB, 5 rounds).
//!
//! Each corpus (`src/pii/corpus.rs`, built in code) is scanned as one text with `find`, the way
//! a request's one large text part is. The figure is MB (10^6 bytes) per second of the CPU time
//! of the scanning thread (from `/proc/thread-self/schedstat`; wall time where that file is
//! missing), so it is a figure per core that other processes on the machine change little; the
//! best of up to `N` rounds (fewer when they take more than a second; a round repeats the scan
//! for at least 50 ms, as the kernel counts CPU time in ticks). The wall-clock figure
//! of the larger size and the load are printed too. `x2` is the CPU time at the larger size
//! over the time at the smaller: about 2 for a scan linear in its input (the doubling test,
//! `pii/cost_tests.rs`, checks the same with a deterministic step count). A report, never an
//! assertion.
//!
//! Then detection quality on the labelled corpus `tests/data/pii_corpus.json` (positives in every
//! evasion form, negatives that look like them): per detector, how many positives were found
//! exactly (recall), how many findings were right (precision), and the evasion forms missed.
//! `tests/pii_table.rs` asserts the same figures (recall 100 %, no false positive).

use std::hint::black_box;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use a2a_gateway::pii::{PiiKind, find};

#[path = "../src/pii/corpus.rs"]
mod corpus;

const MIB: usize = 1 << 20;

/// CPU time of this thread so far (`None` where the kernel does not say).
fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Best CPU time (wall time without `schedstat`) and best wall time of `find` over `text`, and
/// the findings.
fn measure(text: &str, rounds: usize) -> (Duration, Duration, usize) {
    let (mut best_cpu, mut best_wall) = (Duration::MAX, Duration::MAX);
    let mut spent = Duration::ZERO;
    let mut found = 0;
    for _ in 0..rounds {
        // A round repeats the scan for at least 50 ms: the kernel's CPU time moves in ticks.
        let (start, cpu) = (Instant::now(), cpu_time());
        let mut reps = 0u32;
        while reps == 0 || start.elapsed() < Duration::from_millis(50) {
            found = black_box(find(black_box(text))).len();
            reps += 1;
        }
        let total = start.elapsed();
        let wall = total / reps;
        let used = match (cpu, cpu_time()) {
            (Some(a), Some(b)) if b > a => (b - a) / reps,
            _ => wall,
        };
        best_cpu = best_cpu.min(used);
        best_wall = best_wall.min(wall);
        spent += total;
        if spent > Duration::from_secs(1) {
            break;
        }
    }
    (best_cpu, best_wall, found)
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn main() {
    let mut only: Option<String> = None;
    let mut rounds = 5;
    let mut sizes: Vec<usize> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let rounds_arg = (a == "--rounds").then(|| args.next()).flatten();
        if a == "--only" {
            only = args.next();
        } else if let Some(n) = rounds_arg.and_then(|r| r.parse().ok()) {
            rounds = n;
        } else if let Ok(n) = a.parse::<usize>() {
            sizes.push(n);
        } else {
            eprintln!("usage: pii_adversarial [--only NAME] [--rounds N] [MIB ...]");
            std::process::exit(2);
        }
    }
    if sizes.is_empty() {
        sizes = vec![1, 2];
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("machine: {cores} cores, load average {}", load.trim());
    let clock = if cpu_time().is_some() {
        "MB per CPU second"
    } else {
        "MB/s (wall: no schedstat)"
    };
    println!("{clock}, best of {rounds} rounds; `wall`: MB/s of the last size by the clock");
    print!("{:<18}", "corpus");
    for s in &sizes {
        print!(" {:>9}", format!("{s} MiB"));
    }
    println!(" {:>6} {:>6} {:>8}  what", "x2", "wall", "findings");
    let mut worst: Option<(&str, f64)> = None;
    for c in corpus::CORPORA {
        if only.as_deref().is_some_and(|o| o != c.name) {
            continue;
        }
        print!("{:<18}", c.name);
        let mut times = Vec::new();
        let (mut found, mut wall_rate) = (0, 0.0);
        for &s in &sizes {
            let text = (c.build)(s * MIB);
            let (t, wall, f) = measure(&text, rounds);
            let rate = mbps(text.len(), t);
            print!(" {rate:>9.1}");
            times.push(t);
            (found, wall_rate) = (f, mbps(text.len(), wall));
            if c.name != "prose" && worst.is_none_or(|(_, w)| rate < w) {
                worst = Some((c.name, rate));
            }
        }
        let ratio = match (times.first(), times.last()) {
            (Some(a), Some(b)) if times.len() > 1 => b.as_secs_f64() / a.as_secs_f64(),
            _ => f64::NAN,
        };
        println!(" {ratio:>6.2} {wall_rate:>6.1} {found:>8}  {}", c.about);
    }
    if let Some((name, rate)) = worst {
        println!("slowest adversarial corpus: {name} at {rate:.1} MB/s");
    }
    quality();
}

/// Found exactly, missed, and wrong findings of one detector.
#[derive(Default)]
struct Tally {
    found: u32,
    missed: u32,
    wrong: u32,
    missed_forms: Vec<String>,
}

/// Precision and recall per detector on the labelled corpus.
fn quality() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pii_corpus.json");
    let corpus: serde_json::Value = match std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
    {
        Some(c) => c,
        None => {
            println!("no corpus at {path}");
            return;
        }
    };
    let list = |k: &str| corpus[k].as_array().cloned().unwrap_or_default();
    let (positives, negatives) = (list("positives"), list("negatives"));
    let kind_of = |v: &serde_json::Value| serde_json::from_value::<PiiKind>(v.clone()).ok();
    let mut tally: BTreeMap<PiiKind, Tally> = BTreeMap::new();
    for p in &positives {
        let (Some(kind), Some(want), Some(text)) =
            (kind_of(&p["kind"]), p["match"].as_str(), p["text"].as_str())
        else {
            continue;
        };
        let mut hit = false;
        for f in find(text) {
            if f.kind == kind && text.get(f.range.clone()) == Some(want) {
                hit = true;
            } else {
                tally.entry(f.kind).or_default().wrong += 1;
            }
        }
        let t = tally.entry(kind).or_default();
        if hit {
            t.found += 1;
        } else {
            t.missed += 1;
            t.missed_forms
                .push(p["form"].as_str().unwrap_or("plain").to_owned());
        }
    }
    for n in &negatives {
        for f in find(n["text"].as_str().unwrap_or("")) {
            tally.entry(f.kind).or_default().wrong += 1;
        }
    }
    println!(
        "\ndetection on tests/data/pii_corpus.json: {} positives, {} negatives",
        positives.len(),
        negatives.len()
    );
    println!(
        "{:<14} {:>9} {:>7} {:>6} {:>10} {:>8}  missed forms",
        "detector", "positives", "found", "wrong", "precision", "recall"
    );
    for (kind, t) in &tally {
        let pct = |a: u32, b: u32| {
            if b == 0 {
                100.0
            } else {
                100.0 * f64::from(a) / f64::from(b)
            }
        };
        println!(
            "{:<14} {:>9} {:>7} {:>6} {:>9.1}% {:>7.1}%  {}",
            kind.name(),
            t.found + t.missed,
            t.found,
            t.wrong,
            pct(t.found, t.found + t.wrong),
            pct(t.found, t.found + t.missed),
            t.missed_forms.join(", ")
        );
    }
}
