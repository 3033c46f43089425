//! Prometheus metrics: `a2a_requests_total{operation,code}`,
//! `a2a_request_duration_seconds{operation}` (histogram) and
//! `a2a_unauthenticated_total{reason}` (key refusals: `missing`, `invalid`, `expired`,
//! `revoked`), rendered in the text exposition format.
//!
//! Requests refused before a key was accepted are not audited one by one; they are counted
//! here and logged sampled ([`Metrics::log_unaudited`]: the first [`LOG_FIRST`] per code, then
//! every [`LOG_EVERY`]th).
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

/// Unaudited refusals logged in full per code before sampling starts.
pub const LOG_FIRST: u64 = 10;
/// After [`LOG_FIRST`], one unaudited refusal in this many is logged per code.
pub const LOG_EVERY: u64 = 1000;

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(String, String), u64>,
    unauthenticated: BTreeMap<&'static str, u64>,
    unaudited: BTreeMap<String, u64>,
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

    /// Counts one request refused because of its key (`reason`: `missing`, `invalid`,
    /// `expired`, `revoked`).
    pub fn unauthenticated(&self, reason: &'static str) {
        let Ok(mut m) = self.inner.lock() else { return };
        *m.unauthenticated.entry(reason).or_default() += 1;
    }

    /// The count of key refusals for `reason`.
    pub fn unauthenticated_count(&self, reason: &str) -> u64 {
        let Ok(m) = self.inner.lock() else { return 0 };
        m.unauthenticated.get(reason).copied().unwrap_or(0)
    }

    /// Logs a refusal that gets no audit row (no key accepted), sampled per code: the first
    /// [`LOG_FIRST`], then every [`LOG_EVERY`]th, with the running count.
    pub fn log_unaudited(&self, trace_id: &str, operation: &str, code: &str) {
        let n = {
            let Ok(mut m) = self.inner.lock() else { return };
            let n = m.unaudited.entry(code.to_owned()).or_default();
            *n += 1;
            *n
        };
        if n <= LOG_FIRST || n % LOG_EVERY == 0 {
            tracing::info!(trace_id = %trace_id, operation = %operation, code = %code, count = n, "refused before authentication (sampled)");
        }
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
        out.push_str(
            "# HELP a2a_unauthenticated_total Requests refused for their key, by reason.\n",
        );
        out.push_str("# TYPE a2a_unauthenticated_total counter\n");
        for (reason, n) in &m.unauthenticated {
            let _ = writeln!(out, "a2a_unauthenticated_total{{reason=\"{reason}\"}} {n}");
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
