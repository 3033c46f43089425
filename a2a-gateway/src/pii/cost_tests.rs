//! The doubling test: on every corpus of `corpus.rs`, scanning `2n` bytes costs at most about
//! twice the steps of scanning `n` bytes (`steps.rs` counts them), so no input makes the scan
//! super-linear. Deterministic: it counts steps, it never times.

use super::corpus::CORPORA;
use super::{find, steps};

/// Steps of one `find` over `text`.
fn steps_of(text: &str) -> u64 {
    steps::take();
    let found = find(text);
    std::hint::black_box(found);
    steps::take()
}

/// Slack for what does not grow with the input (the last unit of a corpus, fixed checks).
const CONSTANT: f64 = 4096.0;

#[test]
fn doubling_the_input_at_most_doubles_the_work() {
    let mut failures = Vec::new();
    for n in [16 << 10, 64 << 10] {
        for c in CORPORA {
            let (small, large) = ((c.build)(n), (c.build)(2 * n));
            let (a, b) = (steps_of(&small), steps_of(&large));
            let per_byte = b as f64 / large.len() as f64;
            eprintln!(
                "{:<18} n={n:>7}: {a:>10} -> {b:>10} steps (x{:.2}, {per_byte:.1}/byte)",
                c.name,
                b as f64 / a as f64
            );
            if b as f64 > 2.2 * a as f64 + CONSTANT {
                failures.push(format!("{} ({}) at {n}: {a} -> {b}", c.name, c.about));
            }
            // Linear also means a bounded cost per byte, whatever the corpus.
            if per_byte > 64.0 {
                failures.push(format!("{} at {n}: {per_byte:.1} steps per byte", c.name));
            }
        }
    }
    assert!(failures.is_empty(), "super-linear: {failures:#?}");
}

#[test]
fn the_counter_counts() {
    let text = "-----BEGIN RSA PRIVATE KEY-----\n".repeat(64);
    assert!(steps_of(&text) >= text.len() as u64);
    assert!(steps_of("") < 64);
}
