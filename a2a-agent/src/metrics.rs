//! What the agent's and the gateway's `/metrics` share: one approach (the `metrics` crate and
//! its Prometheus exporter), the histogram buckets ([`BUCKETS`]) and the recorder built with
//! them ([`builder`], [`install`]). Both binaries name their families `a2a_*` (the agent's
//! `a2a_agent_*`), count in `_total` counters and time in `_seconds` histograms over
//! [`BUCKETS`] (docs/operations.md, "Metrics").
//!
//! The agent records through the global recorder (the `metrics::counter!` macros), installed by
//! the binary's `--metrics` ([`install`]); an embedder installs its own and hands the handle to
//! [`crate::server::AgentServer::metrics`].

#[cfg(feature = "prometheus")]
use metrics_exporter_prometheus::{BuildError, PrometheusBuilder, PrometheusHandle};

/// Histogram bucket bounds in seconds, the same on both binaries.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[cfg(feature = "prometheus")]
/// The Prometheus builder with [`BUCKETS`] for every histogram (not summaries).
pub fn builder() -> PrometheusBuilder {
    // `set_buckets` refuses only an empty list.
    match PrometheusBuilder::new().set_buckets(&BUCKETS) {
        Ok(b) => b,
        Err(_) => PrometheusBuilder::new(),
    }
}

#[cfg(feature = "prometheus")]
/// Installs the global recorder ([`builder`]), describes the agent's families (their `# HELP`
/// lines) and returns the handle that renders it.
pub fn install() -> Result<PrometheusHandle, BuildError> {
    let handle = builder().install_recorder()?;
    describe();
    Ok(handle)
}

#[cfg(feature = "prometheus")]
/// The help text of the agent's families, through the installed recorder.
fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    describe_counter!("a2a_agent_requests_total", "Requests by HTTP status.");
    describe_histogram!(
        "a2a_agent_request_duration_seconds",
        "Request latency in seconds."
    );
    describe_counter!(
        "a2a_agent_task_turns_total",
        "Turns ended, by the task's state then."
    );
    describe_gauge!(names::TASKS_LIVE, "Tasks in the live registry.");
    describe_gauge!(names::TASK_QUEUE_DEPTH, "Sends waiting for a task slot.");
    describe_gauge!(
        names::PUSH_QUEUE_DEPTH,
        "Push notifications queued or in flight."
    );
    describe_counter!(
        names::PUSH_DELIVERIES,
        "Push notifications ended, by result."
    );
    describe_counter!(
        names::PUSH_FAILURES,
        "Push attempts that failed (5xx or I/O)."
    );
}

/// The agent's families, for the scrape-time gauges the server sets before rendering.
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
pub(crate) mod names {
    /// Tasks waiting for a slot (`max_concurrent_tasks`, `task_queue_size`).
    pub const TASK_QUEUE_DEPTH: &str = "a2a_agent_task_queue_depth";
    /// Tasks in the live registry (running or with open streams).
    pub const TASKS_LIVE: &str = "a2a_agent_tasks_live";
    /// Push notifications queued or in flight.
    pub const PUSH_QUEUE_DEPTH: &str = "a2a_agent_push_queue_depth";
    /// Push notifications ended, by `result`.
    pub const PUSH_DELIVERIES: &str = "a2a_agent_push_deliveries_total";
    /// Push attempts that failed (5xx or I/O; retried while attempts are left).
    pub const PUSH_FAILURES: &str = "a2a_agent_push_failures_total";
}
