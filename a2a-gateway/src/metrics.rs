//! Prometheus metrics of the gateway, on the same approach as the agent's
//! ([`a2a_agent::metrics`]: the `metrics` crate's Prometheus recorder, the same [`BUCKETS`]).
//! Every family is listed in [`names`] and in docs/operations.md ("Metrics").
//!
//! A recorder of its own per gateway rather than the global one, so several gateways in one
//! test process keep separate counts; [`Metrics::render`] writes the text exposition format.
//!
//! Cardinality is bounded: the first `metrics_label_cap` workspaces and agents seen get their
//! own label values, later ones are [`OTHER`]; codes, operations, decisions and steps share a
//! fixed bound ([`WORDS_CAP`]). A label costs one map read on the hop (a shared string, no copy).
//!
//! Requests refused before a key was accepted are not audited one by one; they are counted
//! here and logged sampled ([`Metrics::log_unaudited`]: the first [`LOG_FIRST`] per code, then
//! every [`LOG_EVERY`]th).

use foldhash::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use metrics::{Key, KeyName, Label, Level, Metadata, Recorder, SharedString};
use metrics_exporter_prometheus::{PrometheusHandle, PrometheusRecorder};

pub use a2a_agent::metrics::BUCKETS;

/// Unaudited refusals logged in full per code before sampling starts.
pub const LOG_FIRST: u64 = 10;
/// After [`LOG_FIRST`], one unaudited refusal in this many is logged per code.
pub const LOG_EVERY: u64 = 1000;
/// Default of `metrics_label_cap` (`crate::config::DEFAULT_METRICS_LABEL_CAP`): workspaces
/// (and agents) with a label value of their own.
pub const DEFAULT_LABEL_CAP: usize = 100;
/// The label value of the workspaces and agents past the cap (and of words past [`WORDS_CAP`]).
pub const OTHER: &str = "other";
/// The label value of a hop refused before its workspace or agent was known.
pub const NONE: &str = "none";
/// Distinct operations, codes, decisions and steps labelled (a fixed vocabulary in practice).
pub const WORDS_CAP: usize = 512;
/// Histogram samples recorded between two upkeeps of the recorder (which fold the samples
/// into the buckets; a scrape does it too).
const UPKEEP_EVERY: u64 = 4096;

/// The gateway's metric families.
pub mod names {
    /// Hops by `workspace`, `agent`, `operation`, `caller_version`, `decision`, `code` and
    /// `jsonrpc_code` (the refusal's JSON-RPC error code, `none` for an answer).
    pub const REQUESTS: &str = "a2a_requests_total";
    /// Hop latency, from the request to the answer (a stream: its start), by `operation`.
    pub const REQUEST_DURATION: &str = "a2a_request_duration_seconds";
    /// The peer's share of a hop: waiting for its answer's head and body (a stream: its head).
    pub const PEER_DURATION: &str = "a2a_peer_duration_seconds";
    /// The gateway's share of a hop that called a peer: hop latency minus peer time.
    pub const OVERHEAD: &str = "a2a_gateway_overhead_seconds";
    /// Requests refused for their key, by `reason`.
    pub const UNAUTHENTICATED: &str = "a2a_unauthenticated_total";
    /// Governance decisions by `step` and `decision`.
    pub const DECISIONS: &str = "a2a_governance_decisions_total";
    /// Approvals pending, by `workspace` (read from the approvals' index at scrape time).
    pub const APPROVALS_PENDING: &str = "a2a_approvals_pending";
    /// Streams open through the gateway now.
    pub const OPEN_STREAMS: &str = "a2a_open_streams";
    /// Store calls' latency (lock wait included), by `op` (`query`, `audit_batch`).
    pub const STORE_DURATION: &str = "a2a_store_duration_seconds";
    /// Store calls that failed, by `op`.
    pub const STORE_ERRORS: &str = "a2a_store_errors_total";
    /// PostgreSQL only: 1 while a notification listener of this replica is connected, 0 while
    /// it is away and the replica polls, by `listener` (`registry`, `holds`, `streams`).
    pub const LISTENER_UP: &str = "a2a_store_listener_up";
    /// PostgreSQL only: reads made by polling because a listener was away, by `listener`
    /// (`registry`: cached reads that asked for the epoch; `holds`: approval waits re-read).
    pub const POLLS: &str = "a2a_store_polls_total";
    /// Peer card resolutions by `result` (`fetched`, `fresh`, `revalidated`, `stale`, `error`).
    pub const CARD_FETCHES: &str = "a2a_peer_card_fetches_total";

    /// The families a gateway on PostgreSQL adds (`database = "postgres://…"`), with their
    /// type and help text; not in [`ALL`], which every gateway exposes.
    pub const POSTGRES_ONLY: &[(&str, &str, &str)] = &[
        (
            LISTENER_UP,
            "gauge",
            "PostgreSQL notification listener connected (1) or away, polling (0), by listener.",
        ),
        (
            POLLS,
            "counter",
            "Reads made by polling while a PostgreSQL listener was away, by listener.",
        ),
    ];

    /// Every family with its type and help text.
    pub const ALL: &[(&str, &str, &str)] = &[
        (
            REQUESTS,
            "counter",
            "Hops by workspace, agent, operation, caller version, decision, code and JSON-RPC code.",
        ),
        (
            REQUEST_DURATION,
            "histogram",
            "Hop latency in seconds (to a stream's start).",
        ),
        (
            PEER_DURATION,
            "histogram",
            "Peer time of a hop in seconds (to a stream's start).",
        ),
        (
            OVERHEAD,
            "histogram",
            "Gateway overhead of a hop in seconds: hop latency minus peer time.",
        ),
        (
            UNAUTHENTICATED,
            "counter",
            "Requests refused for their key, by reason.",
        ),
        (
            DECISIONS,
            "counter",
            "Governance decisions by step and decision.",
        ),
        (
            APPROVALS_PENDING,
            "gauge",
            "Held hops waiting for a decision, by workspace.",
        ),
        (OPEN_STREAMS, "gauge", "Streams open through the gateway."),
        (
            STORE_DURATION,
            "histogram",
            "Store call latency in seconds, lock wait included.",
        ),
        (STORE_ERRORS, "counter", "Store calls that failed."),
        (CARD_FETCHES, "counter", "Peer card resolutions by result."),
    ];
}

static META: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// Label values of one kind, the first `cap` distinct ones kept, later ones [`OTHER`].
struct LabelCap {
    cap: usize,
    map: RwLock<HashMap<Box<str>, SharedString>>,
}

impl LabelCap {
    fn new(cap: usize) -> LabelCap {
        LabelCap {
            cap,
            map: RwLock::default(),
        }
    }

    /// The label value of `v`: its own while there is room, else [`OTHER`].
    fn get(&self, v: &str) -> SharedString {
        if let Ok(m) = self.map.read() {
            if let Some(s) = m.get(v) {
                return s.clone();
            }
            if m.len() >= self.cap {
                return SharedString::const_str(OTHER);
            }
        }
        let Ok(mut m) = self.map.write() else {
            return SharedString::const_str(OTHER);
        };
        if let Some(s) = m.get(v) {
            return s.clone();
        }
        if m.len() >= self.cap {
            return SharedString::const_str(OTHER);
        }
        let s = SharedString::from(Arc::<str>::from(v));
        m.insert(v.into(), s.clone());
        s
    }
}

/// What labels one hop's sample.
pub struct HopLabels<'a> {
    /// The caller's workspace (`None` before a key was accepted).
    pub workspace: Option<&'a str>,
    /// The target agent (`None` before it was known).
    pub agent: Option<&'a str>,
    /// The operation (`message/send`, `push:notify`, ...).
    pub operation: &'a str,
    /// The caller's protocol version (`0.3`, `1.0`).
    pub caller_version: Option<&'a str>,
    /// The audited decision (`allowed`, `refused`; a push notification's outcome).
    pub decision: &'a str,
    /// `ok` or the gateway code of the refusal.
    pub code: &'a str,
    /// The refusal's JSON-RPC error code (`None`: an answer, or no JSON-RPC code).
    pub jsonrpc_code: Option<i64>,
}

/// The hop series' handles, kept per label set: a hop records through one map read (the
/// recorder's own lookup builds and hashes a key per series).
type HopSeries = RwLock<HashMap<[SharedString; 7], metrics::Counter>>;

/// The latency histograms of one operation.
#[derive(Clone)]
struct OpSeries {
    total: metrics::Histogram,
    peer: metrics::Histogram,
    overhead: metrics::Histogram,
}

struct Inner {
    /// The store's histograms, registered once (a store call records without a lookup).
    store_query: metrics::Histogram,
    store_batch: metrics::Histogram,
    hops: HopSeries,
    ops: RwLock<HashMap<SharedString, OpSeries>>,
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    workspaces: LabelCap,
    agents: LabelCap,
    words: LabelCap,
    unaudited: Mutex<HashMap<String, u64>>,
    samples: AtomicU64,
}

/// The registry; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new(DEFAULT_LABEL_CAP)
    }
}

impl Metrics {
    /// A registry labelling the first `label_cap` workspaces and agents (`metrics_label_cap`).
    pub fn new(label_cap: usize) -> Metrics {
        let recorder = a2a_agent::metrics::builder().build_recorder();
        for (name, _, help) in names::ALL.iter().chain(names::POSTGRES_ONLY) {
            recorder.describe_counter(KeyName::from_const_str(name), None, (*help).into());
        }
        let store_hist = |op: &'static str| {
            let labels = vec![Label::from_static_parts("op", op)];
            recorder.register_histogram(&Key::from_parts(names::STORE_DURATION, labels), &META)
        };
        let m = Metrics {
            inner: Arc::new(Inner {
                store_query: store_hist("query"),
                store_batch: store_hist("audit_batch"),
                hops: RwLock::default(),
                ops: RwLock::default(),
                handle: recorder.handle(),
                recorder,
                workspaces: LabelCap::new(label_cap),
                agents: LabelCap::new(label_cap),
                words: LabelCap::new(WORDS_CAP),
                unaudited: Mutex::default(),
                samples: AtomicU64::new(0),
            }),
        };
        // The store's families exist from the start (a dashboard's query finds them at zero).
        for op in ["query", "audit_batch"] {
            m.counter(
                names::STORE_ERRORS,
                vec![Label::from_static_parts("op", op)],
            )
            .increment(0);
        }
        m.gauge(names::OPEN_STREAMS, Vec::new()).set(0.0);
        m
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> metrics::Counter {
        self.inner
            .recorder
            .register_counter(&Key::from_parts(name, labels), &META)
    }

    fn gauge(&self, name: &'static str, labels: Vec<Label>) -> metrics::Gauge {
        self.inner
            .recorder
            .register_gauge(&Key::from_parts(name, labels), &META)
    }

    /// Counts `n` histogram samples; every [`UPKEEP_EVERY`] folds them into the buckets
    /// (bounded memory between scrapes).
    fn upkeep_due(&self, n: u64) {
        let before = self.inner.samples.fetch_add(n, Ordering::Relaxed);
        if before % UPKEEP_EVERY + n >= UPKEEP_EVERY {
            self.inner.handle.run_upkeep();
        }
    }

    fn word(&self, v: &str) -> SharedString {
        self.inner.words.get(v)
    }

    /// The workspace label of `id` ([`OTHER`] past the cap, [`NONE`] when unknown).
    pub fn workspace_label(&self, id: Option<&str>) -> SharedString {
        match id {
            Some(w) => self.inner.workspaces.get(w),
            None => SharedString::const_str(NONE),
        }
    }

    /// Counts one hop and its latency; `peer` is the time it waited for its peer (a stream:
    /// for the answer's head), from which the gateway's overhead is `total - peer`.
    pub fn hop(&self, l: &HopLabels<'_>, total: Duration, peer: Option<Duration>) {
        let op = self.word(l.operation);
        let agent = match l.agent {
            Some(a) => self.inner.agents.get(a),
            None => SharedString::const_str(NONE),
        };
        let key = [
            self.workspace_label(l.workspace),
            agent,
            op.clone(),
            self.word(l.caller_version.unwrap_or(NONE)),
            self.word(l.decision),
            self.word(l.code),
            match l.jsonrpc_code {
                Some(c) => self.word(&c.to_string()),
                None => SharedString::const_str(NONE),
            },
        ];
        self.hop_counter(key).increment(1);
        let series = self.op_series(op);
        series.total.record(total.as_secs_f64());
        if let Some(p) = peer {
            series.peer.record(p.as_secs_f64());
            series
                .overhead
                .record(total.saturating_sub(p).as_secs_f64());
        }
        self.upkeep_due(if peer.is_some() { 3 } else { 1 });
    }

    /// The `a2a_requests_total` series of a label set (registered on first use).
    fn hop_counter(&self, key: [SharedString; 7]) -> metrics::Counter {
        if let Ok(m) = self.inner.hops.read()
            && let Some(c) = m.get(&key)
        {
            return c.clone();
        }
        const NAMES: [&str; 7] = [
            "workspace",
            "agent",
            "operation",
            "caller_version",
            "decision",
            "code",
            "jsonrpc_code",
        ];
        let labels = NAMES
            .iter()
            .zip(key.iter())
            .map(|(k, v)| Label::new(*k, v.clone()))
            .collect();
        let c = self.counter(names::REQUESTS, labels);
        if let Ok(mut m) = self.inner.hops.write() {
            m.insert(key, c.clone());
        }
        c
    }

    /// The latency histograms of `op` (registered on first use).
    fn op_series(&self, op: SharedString) -> OpSeries {
        if let Ok(m) = self.inner.ops.read()
            && let Some(s) = m.get(&op)
        {
            return s.clone();
        }
        let h = |name: &'static str| {
            let key = Key::from_parts(name, vec![Label::new("operation", op.clone())]);
            self.inner.recorder.register_histogram(&key, &META)
        };
        let s = OpSeries {
            total: h(names::REQUEST_DURATION),
            peer: h(names::PEER_DURATION),
            overhead: h(names::OVERHEAD),
        };
        if let Ok(mut m) = self.inner.ops.write() {
            m.insert(op, s.clone());
        }
        s
    }

    /// Counts one governance decision of `step` (`policy`, `pii`, `kill`, ...).
    pub fn decision(&self, step: &str, decision: &str) {
        let labels = vec![
            Label::new("step", self.word(step)),
            Label::new("decision", self.word(decision)),
        ];
        self.counter(names::DECISIONS, labels).increment(1);
    }

    /// Counts the decisions of a hop's governance evidence (its audited JSON form).
    pub fn decisions(&self, evidence: &serde_json::Value) {
        let Some(list) = evidence.get("decisions").and_then(|d| d.as_array()) else {
            return;
        };
        for d in list {
            let step = d.get("step").and_then(|v| v.as_str()).unwrap_or(NONE);
            let decision = d.get("decision").and_then(|v| v.as_str()).unwrap_or(NONE);
            self.decision(step, decision);
        }
    }

    /// Counts one request refused because of its key (`reason`: `missing`, `invalid`,
    /// `expired`, `revoked`).
    pub fn unauthenticated(&self, reason: &'static str) {
        let labels = vec![Label::from_static_parts("reason", reason)];
        self.counter(names::UNAUTHENTICATED, labels).increment(1);
    }

    /// Times one store call of `op` (`query`, `audit_batch`), counting it as an error unless `ok`.
    pub fn store(&self, op: &'static str, took: Duration, ok: bool) {
        let h = if op == "audit_batch" {
            &self.inner.store_batch
        } else {
            &self.inner.store_query
        };
        h.record(took.as_secs_f64());
        self.upkeep_due(1);
        if !ok {
            self.counter(
                names::STORE_ERRORS,
                vec![Label::from_static_parts("op", op)],
            )
            .increment(1);
        }
    }

    /// Counts one peer card resolution by `result` (`fetched`, `fresh`, `revalidated`,
    /// `stale`, `error`).
    pub fn card_fetch(&self, result: &'static str) {
        let labels = vec![Label::from_static_parts("result", result)];
        self.counter(names::CARD_FETCHES, labels).increment(1);
    }

    /// Sets the gauges read at scrape time: open streams, and approvals pending by workspace
    /// (the workspaces past the cap summed under [`OTHER`]).
    pub fn set_scraped(&self, open_streams: usize, pending: &[(String, u64)]) {
        self.gauge(names::OPEN_STREAMS, Vec::new())
            .set(open_streams as f64);
        let mut by_label: HashMap<SharedString, u64> = HashMap::default();
        for (ws, n) in pending {
            *by_label.entry(self.workspace_label(Some(ws))).or_default() += n;
        }
        for (ws, n) in by_label {
            self.gauge(names::APPROVALS_PENDING, vec![Label::new("workspace", ws)])
                .set(n as f64);
        }
    }

    /// Sets the PostgreSQL listeners' state read at scrape time: `(listener, up, polls)`.
    pub fn set_listeners(&self, listeners: &[(&'static str, bool, Option<u64>)]) {
        for (name, up, polls) in listeners {
            let labels = || vec![Label::from_static_parts("listener", name)];
            self.gauge(names::LISTENER_UP, labels())
                .set(if *up { 1.0 } else { 0.0 });
            if let Some(n) = polls {
                self.counter(names::POLLS, labels()).absolute(*n);
            }
        }
    }

    /// Logs a refusal that gets no audit row (no key accepted), sampled per code: the first
    /// [`LOG_FIRST`], then every [`LOG_EVERY`]th, with the running count.
    pub fn log_unaudited(&self, trace_id: &str, operation: &str, code: &str) {
        let n = {
            let Ok(mut m) = self.inner.unaudited.lock() else {
                return;
            };
            let n = m.entry(code.to_owned()).or_default();
            *n += 1;
            *n
        };
        if n <= LOG_FIRST || n % LOG_EVERY == 0 {
            tracing::info!(trace_id = %trace_id, operation = %operation, code = %code, count = n, "refused before authentication (sampled)");
        }
    }

    /// Renders the text exposition format.
    pub fn render(&self) -> String {
        self.inner.handle.render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_past_the_cap_are_other() {
        let cap = LabelCap::new(2);
        assert_eq!(cap.get("a").as_ref(), "a");
        assert_eq!(cap.get("b").as_ref(), "b");
        assert_eq!(cap.get("c").as_ref(), OTHER);
        assert_eq!(cap.get("a").as_ref(), "a");
    }

    #[test]
    fn a_hop_is_rendered_with_its_labels_and_split_latency() {
        let m = Metrics::new(1);
        let l = HopLabels {
            workspace: Some("w1"),
            agent: Some("a1"),
            operation: "SendMessage",
            caller_version: Some("1.0"),
            decision: "allowed",
            code: "ok",
            jsonrpc_code: None,
        };
        // 10 ms of overhead: in the 0.01 bucket (bounds are inclusive), not in 0.005.
        m.hop(
            &l,
            Duration::from_millis(30),
            Some(Duration::from_millis(20)),
        );
        m.hop(
            &HopLabels {
                workspace: Some("w2"),
                agent: Some("a2"),
                ..l
            },
            Duration::from_millis(3),
            None,
        );
        let text = m.render();
        assert!(text.contains("workspace=\"w1\",agent=\"a1\""), "{text}");
        assert!(
            text.contains("workspace=\"other\",agent=\"other\""),
            "{text}"
        );
        assert!(
            text.contains(
                "a2a_gateway_overhead_seconds_bucket{operation=\"SendMessage\",le=\"0.005\"} 0"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "a2a_gateway_overhead_seconds_bucket{operation=\"SendMessage\",le=\"0.01\"} 1"
            ),
            "{text}"
        );
        assert!(text.contains("a2a_request_duration_seconds_count{operation=\"SendMessage\"} 2"));
    }
}
