//! The overview's figures. From the audit (every replica's hops on PostgreSQL): the last hour's
//! hops per minute, refusals by code, hops held for approval, hop latency percentiles per
//! minute, the gateway overhead and peer time of each hop and the peers with errors
//! ([`Window`]). From this replica's metrics (the same text `/metrics` serves): the same split
//! as its histograms hold it, read as Prometheus' `histogram_quantile` reads them
//! ([`Histogram`]), and the requests refused before a key was accepted (never audited).

use std::collections::BTreeMap;

use time::format_description::well_known::Rfc3339;

use super::chart::{MINUTES, minute_of};
use super::hop_filter::{Kind, is_hop, kind};
use crate::state::GatewayState;
use crate::store::backend::AuditStore;
use crate::store::{AuditRecord, HopFilter, StoreError};

/// Hops read at most for one overview (the newest first).
pub(crate) const MAX_HOPS: usize = 20_000;

/// One minute of the window.
#[derive(Clone, Default, Debug)]
pub(crate) struct Minute {
    pub allowed: u64,
    pub refused: u64,
    pub held: u64,
    /// Hop latencies (ms).
    pub latency: Vec<i64>,
}

/// A peer's errors in the window.
#[derive(Clone, Debug)]
pub(crate) struct PeerErrors {
    pub count: u64,
    /// The newest: its sequence number, time and code.
    pub last_seq: i64,
    pub last_ts: String,
    pub last_code: String,
}

/// The audit's figures of the last [`MINUTES`] minutes.
#[derive(Default, Debug)]
pub(crate) struct Window {
    /// Index 0 the oldest minute.
    pub minutes: Vec<Minute>,
    pub hops: u64,
    pub refused: u64,
    pub held: u64,
    /// Decisions on held hops in the window (`approved`, `denied`).
    pub decisions: BTreeMap<String, u64>,
    pub by_code: BTreeMap<String, u64>,
    /// By (workspace, agent).
    pub peers: BTreeMap<(String, String), PeerErrors>,
    /// Stopped at [`MAX_HOPS`]: the oldest minutes are missing.
    pub capped: bool,
    /// The peer time and the gateway's own time (microseconds) of each hop that called its
    /// peer, in the audit's order.
    pub peer_us: Vec<i64>,
    pub overhead_us: Vec<i64>,
}

/// Whether a refusal's code says the peer (or the way to it) failed, not the caller.
pub(crate) fn peer_error(code: &str) -> bool {
    code.starts_with("a2a_peer_")
        || code.starts_with("a2a_upstream_")
        || matches!(
            code,
            "a2a_card_unavailable"
                | "a2a_card_signature_invalid"
                | "a2a_response_too_large"
                | "a2a_stream_too_large"
        )
}

/// The `p` quantile (0..=1) of `v` (nearest rank; `v` is sorted here).
pub(crate) fn percentile(v: &mut [i64], p: f64) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

impl Window {
    /// Adds one audit row (`now` ends the window).
    pub(crate) fn add(&mut self, r: &AuditRecord, now: time::OffsetDateTime) {
        if self.minutes.is_empty() {
            self.minutes = vec![Minute::default(); MINUTES];
        }
        let Some(i) = minute_of(&r.ts, now) else {
            return;
        };
        let k = kind(r);
        if let Kind::Decision { state, .. } = &k {
            *self.decisions.entry(state.clone()).or_default() += 1;
        }
        if !is_hop(r) {
            return;
        }
        let m = &mut self.minutes[i];
        self.hops += 1;
        m.latency.push(r.latency_ms);
        if let (Some(p), Some(o)) = (r.peer_us, r.overhead_us) {
            self.peer_us.push(p);
            self.overhead_us.push(o);
        }
        if r.decision == "refused" {
            self.refused += 1;
            m.refused += 1;
            let code = r.error_code.clone().unwrap_or_else(|| "—".into());
            *self.by_code.entry(code.clone()).or_default() += 1;
            if peer_error(&code) {
                let key = (
                    r.workspace_id.clone().unwrap_or_default(),
                    r.target.clone().unwrap_or_default(),
                );
                let e = self.peers.entry(key).or_insert(PeerErrors {
                    count: 0,
                    last_seq: r.seq,
                    last_ts: r.ts.clone(),
                    last_code: code.clone(),
                });
                e.count += 1;
                if r.seq >= e.last_seq {
                    (e.last_seq, e.last_ts, e.last_code) = (r.seq, r.ts.clone(), code);
                }
            }
        } else if matches!(k, Kind::Held(_)) {
            self.held += 1;
            m.held += 1;
        } else {
            m.allowed += 1;
        }
    }

    /// Reads the last hour's rows of `workspace` (all: `None`), newest first, at most
    /// [`MAX_HOPS`]. The walk stops at the first page that reaches rows older than the window
    /// (by a margin for replicas' clocks): the audit's times grow with its sequence numbers,
    /// so this reads the window's rows and one page more, however long the log is (a time
    /// condition in the query would have the database look at every older row).
    pub(crate) async fn read(
        st: &GatewayState,
        workspace: Option<&str>,
        now: time::OffsetDateTime,
    ) -> Result<Window, StoreError> {
        let start = now - time::Duration::minutes(MINUTES as i64 + 2);
        let start = start.format(&Rfc3339).unwrap_or_default();
        let f = HopFilter {
            workspace: workspace.map(str::to_owned),
            ..HopFilter::default()
        };
        let mut w = Window {
            minutes: vec![Minute::default(); MINUTES],
            ..Window::default()
        };
        let mut before = None;
        let mut read = 0;
        loop {
            let batch = st.audit.hop_page(&f, before, BATCH).await?;
            let full = batch.len() as i64 == BATCH;
            let mut past = false;
            for r in &batch {
                w.add(r, now);
                before = Some(r.seq);
                // RFC 3339 UTC times compare as text up to the second.
                past |= r.ts.get(..19).unwrap_or(&r.ts) < start.get(..19).unwrap_or(&start);
            }
            read += batch.len();
            if !full || past {
                return Ok(w);
            }
            if read >= MAX_HOPS {
                w.capped = true;
                return Ok(w);
            }
        }
    }
}

/// Rows read per store call.
const BATCH: i64 = 1000;

/// One histogram family of the exposition, its series' buckets summed: `(upper bound,
/// cumulative count)` in bound order, the last `+Inf`.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Histogram {
    pub buckets: Vec<(f64, f64)>,
}

impl Histogram {
    /// The `family` histogram of the exposition `text`, every series summed (`None`: absent).
    pub(crate) fn parse(text: &str, family: &str) -> Option<Histogram> {
        let prefix = format!("{family}_bucket{{");
        let mut sums: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(&prefix) else {
                continue;
            };
            let Some((labels, value)) = rest.rsplit_once("} ") else {
                continue;
            };
            let Some(le) = labels
                .split(',')
                .find_map(|l| l.trim().strip_prefix("le=\""))
                .map(|v| v.trim_end_matches('"'))
            else {
                continue;
            };
            let bound = if le == "+Inf" {
                f64::INFINITY
            } else {
                match le.parse::<f64>() {
                    Ok(b) => b,
                    Err(_) => continue,
                }
            };
            let Ok(n) = value.trim().parse::<f64>() else {
                continue;
            };
            let e = sums.entry(bound.to_bits()).or_insert((bound, 0.0));
            e.1 += n;
        }
        if sums.is_empty() {
            return None;
        }
        let mut buckets: Vec<(f64, f64)> = sums.into_values().collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(Histogram { buckets })
    }

    /// Samples counted.
    pub(crate) fn count(&self) -> f64 {
        self.buckets.last().map_or(0.0, |b| b.1)
    }

    /// The `q` quantile as `histogram_quantile` computes it: linear within the bucket holding
    /// the rank (from 0 for the first), the highest finite bound when the rank is in `+Inf`.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total <= 0.0 {
            return None;
        }
        let rank = q * total;
        let mut prev = (0.0, 0.0);
        for &(bound, cum) in &self.buckets {
            if cum >= rank {
                if bound.is_infinite() {
                    return Some(prev.0);
                }
                if cum == prev.1 {
                    return Some(bound);
                }
                return Some(prev.0 + (bound - prev.0) * (rank - prev.1) / (cum - prev.1));
            }
            prev = (bound, cum);
        }
        Some(prev.0)
    }
}

/// The sum of every series of a counter family in the exposition (0 when absent).
pub(crate) fn counter_sum(text: &str, family: &str) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(family)
                .is_some_and(|r| r.starts_with('{') || r.starts_with(' '))
        })
        .filter_map(|l| l.rsplit_once(' ').and_then(|(_, v)| v.parse::<f64>().ok()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# TYPE a2a_gateway_overhead_seconds histogram
a2a_gateway_overhead_seconds_bucket{operation="a",le="0.005"} 1
a2a_gateway_overhead_seconds_bucket{operation="a",le="0.01"} 3
a2a_gateway_overhead_seconds_bucket{operation="a",le="+Inf"} 4
a2a_gateway_overhead_seconds_bucket{operation="b",le="0.005"} 1
a2a_gateway_overhead_seconds_bucket{operation="b",le="0.01"} 1
a2a_gateway_overhead_seconds_bucket{operation="b",le="+Inf"} 1
a2a_gateway_overhead_seconds_sum{operation="a"} 0.1
a2a_unauthenticated_total{reason="missing"} 2
a2a_unauthenticated_total{reason="invalid"} 3
"#;

    #[test]
    fn histograms_sum_their_series_and_give_quantiles() {
        let h = Histogram::parse(TEXT, "a2a_gateway_overhead_seconds").unwrap();
        assert_eq!(
            h.buckets,
            vec![(0.005, 2.0), (0.01, 4.0), (f64::INFINITY, 5.0)]
        );
        assert_eq!(h.count(), 5.0);
        // Rank 2.5 of 5: halfway between 0.005 (2) and 0.01 (4), a quarter of the way.
        let p50 = h.quantile(0.5).unwrap();
        assert!((p50 - 0.00625).abs() < 1e-12, "{p50}");
        // Rank 4.95 is in +Inf: the highest finite bound.
        assert_eq!(h.quantile(0.99), Some(0.01));
        assert!(Histogram::parse(TEXT, "a2a_peer_duration_seconds").is_none());
        assert_eq!(counter_sum(TEXT, "a2a_unauthenticated_total"), 5.0);
        assert_eq!(counter_sum(TEXT, "a2a_unauthenticated"), 0.0);
    }

    #[test]
    fn the_window_counts_hops_refusals_holds_and_peer_errors() {
        let now = time::OffsetDateTime::now_utc();
        let ts = now.format(&Rfc3339).unwrap();
        let hop = |seq: i64, decision: &str, code: Option<&str>| AuditRecord {
            seq,
            ts: ts.clone(),
            workspace_id: Some("w".into()),
            target: Some("echo".into()),
            operation: Some("message/send".into()),
            decision: decision.into(),
            error_code: code.map(Into::into),
            latency_ms: seq,
            ..Default::default()
        };
        let mut w = Window::default();
        for s in 1..=5 {
            w.add(&hop(s, "allowed", None), now);
        }
        w.add(&hop(6, "refused", Some("a2a_policy_denied")), now);
        w.add(&hop(7, "refused", Some("a2a_peer_unreachable")), now);
        let mut held = hop(8, "allowed", None);
        held.governance = Some(serde_json::json!({"approval": {"id": "x"}}));
        w.add(&held, now);
        let mut decided = hop(9, "allowed", None);
        decided.client_method = Some("approval:approved".into());
        w.add(&decided, now);
        let mut old = hop(10, "allowed", None);
        old.ts = "2000-01-01T00:00:00Z".into();
        w.add(&old, now);
        assert_eq!((w.hops, w.refused, w.held), (8, 2, 1));
        assert_eq!(w.by_code["a2a_policy_denied"], 1);
        assert_eq!(w.decisions["approved"], 1);
        assert_eq!(w.peers.len(), 1);
        assert_eq!(w.peers[&("w".into(), "echo".into())].last_seq, 7);
        let last = &w.minutes[MINUTES - 1];
        assert_eq!((last.allowed, last.refused, last.held), (5, 2, 1));
        let mut lat = last.latency.clone();
        assert_eq!(percentile(&mut lat, 0.5), Some(4));
        assert_eq!(percentile(&mut lat, 0.99), Some(8));
        assert!(!peer_error("a2a_policy_denied") && peer_error("a2a_upstream_error"));
    }
}
