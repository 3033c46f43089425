//! An agent's latency and throughput over the last hour, drawn server-side as inline SVG from
//! the gateway's own per-hop measurements (the audit records' `latency_ms`; the Prometheus
//! metrics carry no agent label), one bucket per minute, with the numbers as a table too.

use std::fmt::Write;

use time::format_description::well_known::Rfc3339;

use super::html::esc;
use crate::state::GatewayState;

/// Minutes drawn.
const MINUTES: usize = 60;
/// Hops read at most for one chart.
const MAX_SAMPLES: i64 = 20_000;
const W: f64 = 600.0;
const H: f64 = 120.0;

/// One minute's hops: count, latency sum and maximum (ms).
#[derive(Clone, Copy, Default)]
struct Bucket {
    count: u64,
    sum: i64,
    max: i64,
}

/// Buckets `samples` (`(RFC 3339 time, latency ms)`) into the [`MINUTES`] minutes ending at
/// `now` (index 0 the oldest).
fn buckets(samples: &[(String, i64)], now: time::OffsetDateTime) -> Vec<Bucket> {
    let mut out = vec![Bucket::default(); MINUTES];
    for (ts, ms) in samples {
        let Ok(t) = time::OffsetDateTime::parse(ts, &Rfc3339) else {
            continue;
        };
        let age = (now - t).whole_minutes();
        if (0..MINUTES as i64).contains(&age) {
            let b = &mut out[MINUTES - 1 - age as usize];
            b.count += 1;
            b.sum += ms;
            b.max = b.max.max(*ms);
        }
    }
    out
}

/// The chart section of an agent's page.
pub(crate) async fn agent_chart(st: &GatewayState, ws: &str, agent: &str) -> String {
    use crate::store::backend::AuditStore;
    let now = time::OffsetDateTime::now_utc();
    let since = (now - time::Duration::minutes(MINUTES as i64))
        .format(&Rfc3339)
        .unwrap_or_default();
    let samples = match st
        .audit
        .latency_samples(ws, agent, &since, MAX_SAMPLES)
        .await
    {
        Ok(s) => s,
        Err(e) => return super::html::notice(&e.to_string(), true),
    };
    render(&buckets(&samples, now), agent)
}

fn render(b: &[Bucket], agent: &str) -> String {
    let total: u64 = b.iter().map(|x| x.count).sum();
    if total == 0 {
        return "<p>No hops to this agent in the last hour.</p>".into();
    }
    let max_count = b.iter().map(|x| x.count).max().unwrap_or(1).max(1) as f64;
    let max_ms = b.iter().map(|x| x.max).max().unwrap_or(1).max(1) as f64;
    let step = W / b.len() as f64;
    let mut bars = String::new();
    let mut avg_line = String::new();
    let mut max_line = String::new();
    let mut dots = String::new();
    for (i, x) in b.iter().enumerate() {
        let x0 = i as f64 * step;
        if x.count > 0 {
            let h = x.count as f64 / max_count * (H - 10.0);
            let _ = write!(
                bars,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" class="bar"/>"#,
                x0 + 1.0,
                H - h,
                (step - 2.0).max(1.0),
                h
            );
            let avg = x.sum as f64 / x.count as f64;
            let cx = x0 + step / 2.0;
            let ay = H - avg / max_ms * (H - 10.0);
            let _ = write!(avg_line, "{cx:.1},{ay:.1} ");
            let _ = write!(
                dots,
                r#"<circle cx="{cx:.1}" cy="{ay:.1}" r="3" class="dot-avg"/>"#
            );
            let _ = write!(
                max_line,
                "{cx:.1},{:.1} ",
                H - x.max as f64 / max_ms * (H - 10.0)
            );
        }
    }
    let mut rows = String::new();
    for (i, x) in b.iter().enumerate().filter(|(_, x)| x.count > 0) {
        let _ = write!(
            rows,
            "<tr><td>-{} min</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            MINUTES - 1 - i,
            x.count,
            x.sum / x.count.max(1) as i64,
            x.max
        );
    }
    let a = esc(agent);
    format!(
        r#"<figure class="chart"><svg viewBox="0 0 {W} {H}" role="img" aria-labelledby="tp-t">
<title id="tp-t">Hops per minute to {a} over the last hour: {total} in all, at most {mc} in a minute</title>{bars}</svg>
<figcaption>Throughput: hops per minute (at most {mc}).</figcaption></figure>
<figure class="chart"><svg viewBox="0 0 {W} {H}" role="img" aria-labelledby="lat-t">
<title id="lat-t">Latency of {a} per minute: average and maximum, up to {mm} ms</title>
<polyline points="{max_line}" class="line-max"/><polyline points="{avg_line}" class="line-avg"/>{dots}</svg>
<figcaption>Latency per minute: <span class="key-avg">average</span> and <span class="key-max">maximum</span> (up to {mm} ms).</figcaption></figure>
<details><summary>The numbers</summary><div class="scroll"><table><caption>Per minute</caption>
<thead><tr><th scope="col">Minute</th><th scope="col">Hops</th><th scope="col">Average ms</th><th scope="col">Max ms</th></tr></thead>
<tbody>{rows}</tbody></table></div></details>"#,
        mc = max_count as u64,
        mm = max_ms as i64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_by_minute_and_draws() {
        let now = time::OffsetDateTime::now_utc();
        let at = |mins: i64| {
            (now - time::Duration::minutes(mins))
                .format(&Rfc3339)
                .unwrap()
        };
        let samples = vec![(at(0), 10), (at(0), 30), (at(5), 7), (at(90), 1)];
        let b = buckets(&samples, now);
        assert_eq!(b[MINUTES - 1].count, 2);
        assert_eq!(b[MINUTES - 1].max, 30);
        assert_eq!(b[MINUTES - 6].count, 1);
        assert_eq!(
            b.iter().map(|x| x.count).sum::<u64>(),
            3,
            "90 min ago is out"
        );
        let svg = render(&b, "a<b");
        assert!(svg.contains("<rect") && svg.contains("polyline"));
        assert!(svg.contains("a&lt;b"));
        assert!(render(&buckets(&[], now), "x").contains("No hops"));
    }
}
