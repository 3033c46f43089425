//! PII scanning throughput (issue 14), beside baselines measured in the same run.
//!
//! `cargo run --release -p a2ars-gateway --example pii_bench [-- MB]`
//!
//! Builds a deterministic mixed corpus of A2A 1.0 messages (about `MB` megabytes of JSON,
//! default 8): mostly English prose in text parts, one message in four with a JSON data part
//! (records with ids, dates, amounts), and about one PII item per 2 KB (e-mail, phone, card,
//! IBAN, SSN, IP addresses, keys), then prints MB/s for:
//! - `find` over every text and data string, beside a byte-counting loop over the same strings
//!   (the floor of any pass over the bytes);
//! - the same for that prose with every digit, `@` and `:` taken out (what no detector starts
//!   on: the cost of looking at ordinary text);
//! - parse + `scan_value` (redact all) + serialize of each message, beside parse + serialize of
//!   the same bytes (what the gateway does to a body anyway).
//!
//! The measurements are interleaved in 7 rounds and each figure is the best round, so the
//! machine's load weighs on a figure and its baseline alike; the load is printed too.

use std::hint::black_box;
use std::time::{Duration, Instant};

use a2a_gateway::pii::{PiiAction, PiiRules, find, scan_value};
use serde_json::{Value, json};

// The prose vocabulary of the adversarial corpora: one list for both benchmarks.
#[allow(dead_code)]
#[path = "../src/pii/corpus.rs"]
mod corpus;
use corpus::{NUMBERS, PII, WORDS};

/// A small deterministic generator (xorshift), so every run scans the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn sentence(rng: &mut Rng, out: &mut String, pii_every: usize) {
    let n = 8 + rng.below(14);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        match rng.below(100) {
            0..=6 => out.push_str(rng.pick(NUMBERS)),
            _ => out.push_str(rng.pick(WORDS)),
        }
        if rng.below(pii_every) == 0 {
            out.push(' ');
            out.push_str(rng.pick(PII));
        }
    }
    out.push_str(". ");
}

fn message(rng: &mut Rng, i: usize) -> Value {
    let mut text = String::new();
    let target = 300 + rng.below(1500);
    while text.len() < target {
        // About one PII item per 2 KB of prose (~6 bytes a word).
        sentence(rng, &mut text, 330);
    }
    let mut parts = vec![json!({ "text": text })];
    if i.is_multiple_of(4) {
        let rows: Vec<Value> = (0..10)
            .map(|r| {
                json!({"id": format!("ord-{}", 100_000 + rng.below(900_000)), "date": "2026-12-04",
                       "amount": rng.below(100_000) as f64 / 100.0, "status": rng.pick(WORDS),
                       "note": if r == 3 { rng.pick(PII).to_owned() } else { rng.pick(WORDS).to_owned() }})
            })
            .collect();
        parts.push(json!({ "data": { "rows": rows } }));
    }
    json!({"message": {"messageId": format!("m-{i}"), "role": "ROLE_AGENT", "parts": parts,
                       "metadata": {"trace": format!("trace-{i}")}}})
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Rounds of measurements; each figure is the best round.
const ROUNDS: usize = 7;

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(8);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    let mut total = 0;
    while total < mb * 1_000_000 {
        let v = message(&mut rng, bodies.len());
        let b = serde_json::to_vec(&v).unwrap();
        total += b.len();
        bodies.push(b);
    }
    let values: Vec<Value> = bodies
        .iter()
        .map(|b| serde_json::from_slice(b).unwrap())
        .collect();
    let mut texts = Vec::new();
    values.iter().for_each(|v| strings(v, &mut texts));
    let text_bytes: usize = texts.iter().map(|t| t.len()).sum();
    let findings: usize = texts.iter().map(|t| find(t).len()).sum();
    let rules = PiiRules {
        default_action: PiiAction::Redact,
        ..PiiRules::default()
    };

    // Prose with nothing any detector starts on: no digits, `@` or `:`.
    let plain: Vec<String> = texts
        .iter()
        .map(|t| {
            t.chars()
                .filter(|c| !c.is_ascii_digit() && *c != '@' && *c != ':')
                .collect()
        })
        .collect();
    let plain_bytes: usize = plain.iter().map(String::len).sum();

    let count = |ts: &[&str]| {
        let n: usize = ts
            .iter()
            .map(|t| t.bytes().filter(|&b| b == b'\n' || b == b'@').count())
            .sum();
        black_box(n);
    };
    let finds = |ts: &[&str]| {
        let n: usize = ts.iter().map(|t| find(black_box(t)).len()).sum();
        black_box(n);
    };
    let plain_refs: Vec<&str> = plain.iter().map(String::as_str).collect();
    // Rounds interleave the measurements, so that the machine's load weighs on all alike; each
    // figure is the best round.
    let mut t = [Duration::MAX; 6];
    for _ in 0..ROUNDS {
        let runs: [&dyn Fn(); 6] = [
            &|| count(&texts),
            &|| finds(&texts),
            &|| count(&plain_refs),
            &|| finds(&plain_refs),
            &|| {
                for b in &bodies {
                    let v: Value = serde_json::from_slice(black_box(b)).unwrap();
                    black_box(serde_json::to_vec(&v).unwrap());
                }
            },
            &|| {
                for b in &bodies {
                    let mut v: Value = serde_json::from_slice(black_box(b)).unwrap();
                    black_box(scan_value(&mut v, &rules));
                    black_box(serde_json::to_vec(&v).unwrap());
                }
            },
        ];
        for (k, run) in runs.iter().enumerate() {
            let start = Instant::now();
            run();
            t[k] = t[k].min(start.elapsed());
        }
    }
    let [
        count_loop,
        find_time,
        plain_count,
        plain_find,
        roundtrip,
        scanned,
    ] = t;

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "corpus: {} messages, {:.1} MB of JSON, {:.1} MB in {} strings, {findings} findings",
        bodies.len(),
        total as f64 / 1e6,
        text_bytes as f64 / 1e6,
        texts.len()
    );
    println!("machine: {cores} cores, load average {}", load.trim());
    let (f, c) = (mbps(text_bytes, find_time), mbps(text_bytes, count_loop));
    println!(
        "find:       {f:8.1} MB/s   byte-count loop {c:8.1} MB/s   ratio {:.2}",
        f / c
    );
    let (f, c) = (
        mbps(plain_bytes, plain_find),
        mbps(plain_bytes, plain_count),
    );
    println!(
        "find, prose without digits, @ or : ({:.1} MB): {f:8.1} MB/s   byte-count loop {c:8.1} MB/s   ratio {:.2}",
        plain_bytes as f64 / 1e6,
        f / c
    );
    let (s, r) = (mbps(total, scanned), mbps(total, roundtrip));
    println!(
        "scan_value: {s:8.1} MB/s   (parse+scan+serialize)   parse+serialize {r:8.1} MB/s   ratio {:.2}",
        s / r
    );
}
