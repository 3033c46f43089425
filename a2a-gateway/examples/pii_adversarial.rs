//! PII scanning on ordinary prose and on adversarial corpora, each at two sizes (issue 39).
//!
//! `cargo xtask bench pii` runs it (release build); by hand:
//! `cargo run --release -p a2ars-gateway --example pii_adversarial [-- [--only NAME] [MIB ...]]`
//! (default sizes 1 and 2 MiB).
//!
//! Each corpus (`src/pii/corpus.rs`, built in code) is scanned as one text with `find`, the way
//! a request's one large text part is. Each figure is the best of up to 5 rounds (fewer when a
//! round takes more than a second), so the machine's load weighs as little as it can; the load
//! is printed too. `x2` is the time at the larger size over the time at the smaller: about 2
//! for a scan linear in its input (the doubling test, `pii/cost_tests.rs`, checks the same with a
//! deterministic step count). A report, never an assertion.

use std::hint::black_box;
use std::time::{Duration, Instant};

use a2a_gateway::pii::find;

#[path = "../src/pii/corpus.rs"]
mod corpus;

const MIB: usize = 1 << 20;

/// Best time of `find` over `text`, and the findings.
fn measure(text: &str) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut spent = Duration::ZERO;
    let mut found = 0;
    for _ in 0..5 {
        let start = Instant::now();
        found = black_box(find(black_box(text))).len();
        let t = start.elapsed();
        best = best.min(t);
        spent += t;
        if spent > Duration::from_secs(1) {
            break;
        }
    }
    (best, found)
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn main() {
    let mut only: Option<String> = None;
    let mut sizes: Vec<usize> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--only" {
            only = args.next();
        } else if let Ok(n) = a.parse::<usize>() {
            sizes.push(n);
        } else {
            eprintln!("usage: pii_adversarial [--only NAME] [MIB ...]");
            std::process::exit(2);
        }
    }
    if sizes.is_empty() {
        sizes = vec![1, 2];
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("machine: {cores} cores, load average {}", load.trim());
    print!("{:<18}", "corpus");
    for s in &sizes {
        print!(" {:>11}", format!("{s} MiB MB/s"));
    }
    println!(" {:>6} {:>9}  what", "x2", "findings");
    let mut worst: Option<(&str, f64)> = None;
    for c in corpus::CORPORA {
        if only.as_deref().is_some_and(|o| o != c.name) {
            continue;
        }
        print!("{:<18}", c.name);
        let mut times = Vec::new();
        let mut found = 0;
        for &s in &sizes {
            let text = (c.build)(s * MIB);
            let (t, f) = measure(&text);
            let rate = mbps(text.len(), t);
            print!(" {rate:>11.2}");
            times.push(t);
            found = f;
            if c.name != "prose" && worst.is_none_or(|(_, w)| rate < w) {
                worst = Some((c.name, rate));
            }
        }
        let ratio = match (times.first(), times.last()) {
            (Some(a), Some(b)) if times.len() > 1 => b.as_secs_f64() / a.as_secs_f64(),
            _ => f64::NAN,
        };
        println!(" {ratio:>6.2} {found:>9}  {}", c.about);
    }
    if let Some((name, rate)) = worst {
        println!("slowest adversarial corpus: {name} at {rate:.1} MB/s");
    }
}
