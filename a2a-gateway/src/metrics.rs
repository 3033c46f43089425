//! Prometheus metrics: `a2a_requests_total{operation,code}` and
//! `a2a_request_duration_seconds{operation}` (histogram), rendered in the text exposition format.
//!
//! A small in-process registry rather than a global recorder, so several gateways in one test
//! process keep separate counts.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

/// Histogram bucket bounds in seconds.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(String, String), u64>,
    durations: BTreeMap<String, ([u64; BUCKETS.len()], u64, f64)>,
}

/// The registry; cheap to clone.
#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Mutex<Inner>>,
}

impl Metrics {
    /// Counts one request of `operation` that ended with `code` (`ok` or a gateway code).
    pub fn record(&self, operation: &str, code: &str, seconds: f64) {
        let Ok(mut m) = self.inner.lock() else { return };
        *m.requests
            .entry((operation.to_owned(), code.to_owned()))
            .or_default() += 1;
        let e = m
            .durations
            .entry(operation.to_owned())
            .or_insert(([0; BUCKETS.len()], 0, 0.0));
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                e.0[i] += 1;
            }
        }
        e.1 += 1;
        e.2 += seconds;
    }

    /// Renders the text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(m) = self.inner.lock() else { return out };
        out.push_str("# HELP a2a_requests_total A2A requests by operation and outcome code.\n");
        out.push_str("# TYPE a2a_requests_total counter\n");
        for ((op, code), n) in &m.requests {
            let _ = writeln!(
                out,
                "a2a_requests_total{{operation=\"{op}\",code=\"{code}\"}} {n}"
            );
        }
        out.push_str("# HELP a2a_request_duration_seconds A2A request latency.\n");
        out.push_str("# TYPE a2a_request_duration_seconds histogram\n");
        for (op, (buckets, count, sum)) in &m.durations {
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "a2a_request_duration_seconds_bucket{{operation=\"{op}\",le=\"{b}\"}} {}",
                    buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "a2a_request_duration_seconds_bucket{{operation=\"{op}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "a2a_request_duration_seconds_sum{{operation=\"{op}\"}} {sum}"
            );
            let _ = writeln!(
                out,
                "a2a_request_duration_seconds_count{{operation=\"{op}\"}} {count}"
            );
        }
        out
    }
}
