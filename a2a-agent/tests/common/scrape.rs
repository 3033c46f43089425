//! A Prometheus text exposition, parsed: the families its `# TYPE` lines declare and its samples
//! (the agent's tests read the agent's `/metrics` with it too).

use std::collections::{BTreeMap, BTreeSet};

/// One sample line.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// A parsed scrape.
#[derive(Debug, Default)]
pub struct Scrape {
    /// Family name -> type (`counter`, `gauge`, `histogram`).
    pub families: BTreeMap<String, String>,
    pub samples: Vec<Sample>,
}

impl Scrape {
    pub fn parse(text: &str) -> Scrape {
        let mut s = Scrape::default();
        for line in text.lines() {
            if let Some(t) = line.strip_prefix("# TYPE ") {
                let mut it = t.split_whitespace();
                if let (Some(n), Some(k)) = (it.next(), it.next()) {
                    s.families.insert(n.to_owned(), k.to_owned());
                }
                continue;
            }
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let (head, value) = line.rsplit_once(' ').expect("sample line");
            let (name, labels) = match head.split_once('{') {
                Some((n, rest)) => (n, parse_labels(rest.trim_end_matches('}'))),
                None => (head, BTreeMap::new()),
            };
            let value = match value {
                "+Inf" => f64::INFINITY,
                v => v.parse().expect("sample value"),
            };
            s.samples.push(Sample {
                name: name.to_owned(),
                labels,
                value,
            });
        }
        s
    }

    /// The samples of `name` whose labels include every pair of `want`.
    pub fn matching<'a>(
        &'a self,
        name: &'a str,
        want: &'a [(&str, &str)],
    ) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples.iter().filter(move |s| {
            s.name == name
                && want
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
    }

    /// The sum of [`Scrape::matching`] samples (0 when none).
    pub fn sum(&self, name: &str, want: &[(&str, &str)]) -> f64 {
        self.matching(name, want).map(|s| s.value).sum()
    }

    /// The distinct values of `label` among the samples of `name`.
    pub fn values(&self, name: &str, label: &str) -> BTreeSet<String> {
        self.matching(name, &[])
            .filter_map(|s| s.labels.get(label).cloned())
            .collect()
    }
}

fn parse_labels(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = s;
    while let Some((k, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(match n {
                            'n' => '\n',
                            other => other,
                        });
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        out.insert(k.trim_start_matches(',').trim().to_owned(), value);
        rest = &after[end..];
    }
    out
}

/// The metric names a PromQL expression reads: `a2a_*` identifiers outside string literals,
/// histogram series (`_bucket`, `_sum`, `_count`) named by their family.
pub fn promql_metrics(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_str = false;
    let b = expr.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            in_str = !in_str;
            i += 1;
            continue;
        }
        let starts = !in_str
            && expr[i..].starts_with("a2a_")
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if starts {
            let end = expr[i..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .map_or(expr.len(), |n| i + n);
            out.insert(expr[i..end].to_owned());
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// The family a series name belongs to, given the scrape's families.
pub fn family_of<'a>(scrape: &'a Scrape, series: &str) -> Option<&'a str> {
    if let Some((name, _)) = scrape.families.get_key_value(series) {
        return Some(name);
    }
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = series.strip_suffix(suffix)
            && let Some((name, kind)) = scrape.families.get_key_value(base)
            && kind == "histogram"
        {
            return Some(name);
        }
    }
    None
}
