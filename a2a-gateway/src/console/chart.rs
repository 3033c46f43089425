//! Charts of the console, drawn server-side as inline SVG (no script): a time axis of one bucket
//! per minute (the oldest on the left, "now" on the right), a value axis with round ticks and
//! its unit, stacked bar series and line series, and a legend; [`render`] draws one. Every chart
//! comes with its numbers as a table (the caller's), for readers who cannot see it.
//!
//! [`agent_chart`] is an agent's latency and throughput over the last hour, from the gateway's
//! own per-hop measurements (the audit records' `latency_ms`; the Prometheus metrics carry no
//! agent label).

use std::fmt::Write;

use time::format_description::well_known::Rfc3339;

use super::html::esc;
use crate::state::GatewayState;

/// Minutes drawn.
pub(crate) const MINUTES: usize = 60;
/// Hops read at most for one chart.
const MAX_SAMPLES: i64 = 20_000;
/// The SVG's size (user units), and the plot area's margins.
const W: f64 = 640.0;
const H: f64 = 200.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 34.0;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    /// Bars, stacked on the bar series before it.
    Bar,
    /// A line through the buckets that have a value, with a dot on each.
    Line,
}

/// One series: its legend name, its CSS class (`bar-*` or `line-*`, console.css) and one value
/// per bucket (`None`: nothing that minute).
pub(crate) struct Series {
    pub name: String,
    pub class: &'static str,
    pub kind: Kind,
    pub values: Vec<Option<f64>>,
}

/// A chart: `id` names its title element, `title` is read out for the image, `unit` labels
/// the value axis (`hops/min`, `ms`); buckets are minutes, the last one now.
pub(crate) struct Chart<'a> {
    pub id: &'a str,
    pub title: String,
    pub unit: &'a str,
    pub series: Vec<Series>,
}

/// A round step for about `n` ticks up to `max` (1, 2 or 5 times a power of ten).
fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    (m * mag).max(1.0)
}

/// A tick's label: whole numbers without decimals.
fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.1}")
    }
}

/// Draws `c` (see the module doc).
pub(crate) fn render(c: &Chart<'_>) -> String {
    let n = c
        .series
        .iter()
        .map(|s| s.values.len())
        .max()
        .unwrap_or(0)
        .max(1);
    // The value axis covers the stacked bars and every line.
    let mut top = 0f64;
    for i in 0..n {
        let stacked: f64 = c
            .series
            .iter()
            .filter(|s| s.kind == Kind::Bar)
            .filter_map(|s| s.values.get(i).copied().flatten())
            .sum();
        top = top.max(stacked);
        for s in c.series.iter().filter(|s| s.kind == Kind::Line) {
            if let Some(Some(v)) = s.values.get(i) {
                top = top.max(*v);
            }
        }
    }
    let step = nice_step(top.max(1.0), 4.0);
    let ymax = ((top / step).ceil() * step).max(step);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let y = |v: f64| TOP + ph - v / ymax * ph;
    let slot = pw / n as f64;
    let mut out = format!(
        r#"<svg viewBox="0 0 {W} {H}" role="img" aria-labelledby="{id}"><title id="{id}">{t}</title>"#,
        id = esc(c.id),
        t = esc(&c.title)
    );
    // Value axis: grid lines, ticks and the unit.
    let mut v = 0.0;
    while v <= ymax + step / 2.0 {
        let yy = y(v);
        let _ = write!(
            out,
            r#"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="tick" text-anchor="end">{}</text>"#,
            W - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            tick_label(v)
        );
        v += step;
    }
    let _ = write!(
        out,
        r#"<text x="4" y="14" class="unit">{}</text>"#,
        esc(c.unit)
    );
    // Time axis: a tick every 10 minutes, "now" at the right.
    let _ = write!(
        out,
        r#"<line x1="{LEFT}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" class="axis"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{b:.1}" class="axis"/>"#,
        b = TOP + ph,
        r = W - RIGHT
    );
    for ago in (0..=n).rev().step_by(10) {
        let x = LEFT + (n - ago) as f64 * slot;
        let label = if ago == 0 {
            "now".to_owned()
        } else {
            format!("−{ago}")
        };
        let _ = write!(
            out,
            r#"<line x1="{x:.1}" y1="{b:.1}" x2="{x:.1}" y2="{b2:.1}" class="axis"/><text x="{x:.1}" y="{ty:.1}" class="tick" text-anchor="middle">{label}</text>"#,
            b = TOP + ph,
            b2 = TOP + ph + 4.0,
            ty = TOP + ph + 16.0,
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" class="unit" text-anchor="middle">minutes ago (UTC)</text>"#,
        LEFT + pw / 2.0,
        H - 3.0
    );
    // Bars, stacked in series order.
    let mut base = vec![0f64; n];
    for s in c.series.iter().filter(|s| s.kind == Kind::Bar) {
        for (i, v) in s.values.iter().enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else {
                continue;
            };
            let (y0, y1) = (y(base[i]), y(base[i] + v));
            base[i] += v;
            let _ = write!(
                out,
                r#"<rect x="{:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" class="{}"><title>{} min ago: {} {}</title></rect>"#,
                LEFT + i as f64 * slot + 1.0,
                (slot - 2.0).max(1.0),
                (y0 - y1).max(0.5),
                s.class,
                n - 1 - i,
                tick_label(v),
                esc(&s.name),
            );
        }
    }
    // Lines.
    for s in c.series.iter().filter(|s| s.kind == Kind::Line) {
        let mut points = String::new();
        let mut dots = String::new();
        for (i, v) in s.values.iter().enumerate() {
            if let Some(v) = v {
                let (cx, cy) = (LEFT + (i as f64 + 0.5) * slot, y(*v));
                let _ = write!(points, "{cx:.1},{cy:.1} ");
                let _ = write!(
                    dots,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" class="{}"/>"#,
                    s.class
                );
            }
        }
        let _ = write!(
            out,
            r#"<polyline points="{}" class="{}"/>{dots}"#,
            points.trim_end(),
            s.class
        );
    }
    // Legend, top right.
    let mut lx = W - RIGHT;
    let mut legend = String::new();
    for s in c.series.iter().rev() {
        let w = 18.0 + 6.5 * s.name.chars().count() as f64;
        lx -= w + 10.0;
        let swatch = match s.kind {
            Kind::Bar => format!(
                r#"<rect x="{lx:.1}" y="6" width="12" height="10" class="{}"/>"#,
                s.class
            ),
            Kind::Line => format!(
                r#"<line x1="{lx:.1}" y1="11" x2="{:.1}" y2="11" class="{}"/>"#,
                lx + 12.0,
                s.class
            ),
        };
        let _ = write!(
            legend,
            r#"{swatch}<text x="{:.1}" y="15" class="legend">{}</text>"#,
            lx + 16.0,
            esc(&s.name)
        );
    }
    let _ = write!(out, r#"<g class="legend">{legend}</g></svg>"#);
    out
}

/// One minute's hops: count, latency sum and maximum (ms).
#[derive(Clone, Copy, Default)]
struct Bucket {
    count: u64,
    sum: i64,
    max: i64,
}

/// The bucket (0 the oldest of [`MINUTES`]) of an RFC 3339 time, if within the last hour.
pub(crate) fn minute_of(ts: &str, now: time::OffsetDateTime) -> Option<usize> {
    let t = time::OffsetDateTime::parse(ts, &Rfc3339).ok()?;
    let age = (now - t).whole_minutes();
    (0..MINUTES as i64)
        .contains(&age)
        .then(|| MINUTES - 1 - age as usize)
}

/// Buckets `samples` (`(RFC 3339 time, latency ms)`) into the [`MINUTES`] minutes ending at
/// `now` (index 0 the oldest).
fn buckets(samples: &[(String, i64)], now: time::OffsetDateTime) -> Vec<Bucket> {
    let mut out = vec![Bucket::default(); MINUTES];
    for (ts, ms) in samples {
        if let Some(i) = minute_of(ts, now) {
            let b = &mut out[i];
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
    render_agent(&buckets(&samples, now), agent)
}

fn render_agent(b: &[Bucket], agent: &str) -> String {
    let total: u64 = b.iter().map(|x| x.count).sum();
    if total == 0 {
        return "<p>No hops to this agent in the last hour.</p>".into();
    }
    let max_count = b.iter().map(|x| x.count).max().unwrap_or(1);
    let max_ms = b.iter().map(|x| x.max).max().unwrap_or(0);
    let some = |f: &dyn Fn(&Bucket) -> f64| -> Vec<Option<f64>> {
        b.iter().map(|x| (x.count > 0).then(|| f(x))).collect()
    };
    let throughput = render(&Chart {
        id: "tp-t",
        title: format!(
            "Hops per minute to {agent} over the last hour: {total} in all, at most {max_count} in a minute"
        ),
        unit: "hops/min",
        series: vec![Series {
            name: "hops".into(),
            class: "bar",
            kind: Kind::Bar,
            values: some(&|x| x.count as f64),
        }],
    });
    let latency = render(&Chart {
        id: "lat-t",
        title: format!("Latency of {agent} per minute: average and maximum, up to {max_ms} ms"),
        unit: "ms",
        series: vec![
            Series {
                name: "average".into(),
                class: "line-avg",
                kind: Kind::Line,
                values: some(&|x| x.sum as f64 / x.count as f64),
            },
            Series {
                name: "maximum".into(),
                class: "line-max",
                kind: Kind::Line,
                values: some(&|x| x.max as f64),
            },
        ],
    });
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
    format!(
        r#"<figure class="chart">{throughput}
<figcaption>Throughput: hops per minute (at most {max_count}).</figcaption></figure>
<figure class="chart">{latency}
<figcaption>Latency per minute in milliseconds: <span class="key-avg">average</span> and <span class="key-max">maximum</span> (up to {max_ms} ms).</figcaption></figure>
<details><summary>The numbers</summary><div class="scroll"><table><caption>Per minute</caption>
<thead><tr><th scope="col">Minute</th><th scope="col">Hops</th><th scope="col">Average ms</th><th scope="col">Max ms</th></tr></thead>
<tbody>{rows}</tbody></table></div></details>"#,
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
        let svg = render_agent(&b, "a<b");
        assert!(svg.contains("<rect") && svg.contains("polyline"));
        assert!(svg.contains("a&lt;b"));
        assert!(render_agent(&buckets(&[], now), "x").contains("No hops"));
    }

    #[test]
    fn axes_have_round_ticks_units_and_a_legend() {
        assert_eq!(nice_step(37.0, 4.0), 10.0);
        assert_eq!(nice_step(4.0, 4.0), 1.0);
        assert_eq!(nice_step(900.0, 4.0), 500.0);
        let mut values = vec![None; MINUTES];
        values[MINUTES - 1] = Some(37.0);
        let svg = render(&Chart {
            id: "c",
            title: "t".into(),
            unit: "hops/min",
            series: vec![
                Series {
                    name: "allowed".into(),
                    class: "bar",
                    kind: Kind::Bar,
                    values: values.clone(),
                },
                Series {
                    name: "p99".into(),
                    class: "line-max",
                    kind: Kind::Line,
                    values,
                },
            ],
        });
        // Ticks 0..40 by 10, the unit, the time axis and both legend entries.
        for want in [
            ">0</text>",
            ">40</text>",
            ">hops/min</text>",
            ">now</text>",
            ">−60</text>",
            ">minutes ago (UTC)</text>",
            ">allowed</text>",
            ">p99</text>",
        ] {
            assert!(svg.contains(want), "{want} in {svg}");
        }
        assert!(!svg.contains(">50</text>"), "the axis stops at 40");
    }
}
