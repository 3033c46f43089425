//! What a caller or a webhook received, and the suite's values searched in it (issue 39): a
//! search that does not depend on the gateway's detectors. Every string (and every key) of what
//! was received is read in every form an evasion could take: as written, percent-decoded, and
//! with each base64-looking token decoded (twice over); each reading is folded to a canonical
//! form (NFKC, digits of every script to ASCII, everything but letters, digits and `@`
//! dropped, lower case) and searched for the canonical values of [`TARGETS`]. The text parts
//! and chunks received are also read joined, in order, so that a value split across two parts
//! or two stream chunks is found.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use base64::Engine;
use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// The suite's values, canonical: (kind, value).
pub const TARGETS: [(&str, &str); 3] = [
    ("EMAIL", "annlee@exampleorg"),
    ("PAYMENT_CARD", "4111111111111111"),
    ("US_SSN", "123456789"),
];

/// Everything one call (or one webhook) received: JSON values (bodies, events, gRPC messages)
/// and texts (headers, status messages, bodies that were not JSON).
#[derive(Debug, Default, Clone)]
pub struct Got {
    pub values: Vec<Value>,
    pub texts: Vec<String>,
}

impl Got {
    pub fn value(&mut self, v: Value) {
        self.values.push(v);
    }

    pub fn text(&mut self, t: impl Into<String>) {
        self.texts.push(t.into());
    }

    /// A body: JSON when it parses, else SSE `data:` lines as JSON, and always its text.
    pub fn body(&mut self, text: &str) {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            self.values.push(v);
        } else {
            for d in text.lines().filter_map(|l| l.strip_prefix("data:")) {
                if let Ok(v) = serde_json::from_str::<Value>(d.trim()) {
                    self.values.push(v);
                }
            }
        }
        self.texts.push(text.to_owned());
    }

    pub fn extend(&mut self, other: Got) {
        self.values.extend(other.values);
        self.texts.extend(other.texts);
    }

    /// Every string and key, and the text members joined in order.
    fn strings(&self) -> Vec<String> {
        let mut out = self.texts.clone();
        let mut joined = String::new();
        for v in &self.values {
            walk(v, &mut out, &mut joined);
        }
        out.push(joined);
        out
    }

    /// The kinds of [`TARGETS`] found in what was received.
    pub fn leaks(&self) -> BTreeSet<&'static str> {
        self.strings().iter().flat_map(|s| kinds_in(s)).collect()
    }

    /// The strings received that carry a value of [`TARGETS`] (what a failure shows).
    pub fn leaking(&self) -> Vec<String> {
        self.strings()
            .into_iter()
            .filter(|s| !kinds_in(s).is_empty())
            .map(|s| s.chars().take(200).collect())
            .collect()
    }

    /// Whether any string received contains `needle` as written.
    pub fn contains(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
            || self.values.iter().any(|v| v.to_string().contains(needle))
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.texts.is_empty()
    }
}

/// What webhooks received, by path.
pub type Hooks = Arc<Mutex<HashMap<String, Got>>>;

/// A webhook receiver on 127.0.0.1: its base URL (`{base}/hook/{name}`), and what each
/// `name` received (headers and bodies).
pub async fn hooks() -> (String, Hooks) {
    let seen: Hooks = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/hook/{name}",
        axum::routing::post(
            move |axum::extract::Path(name): axum::extract::Path<String>,
                  headers: axum::http::HeaderMap,
                  body: String| {
                let s = s.clone();
                async move {
                    let mut got = Got::default();
                    for (k, v) in &headers {
                        got.text(format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())));
                    }
                    got.body(&body);
                    s.lock().unwrap().entry(name).or_default().extend(got);
                    axum::http::StatusCode::OK
                }
            },
        ),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, seen)
}

fn walk(v: &Value, out: &mut Vec<String>, joined: &mut String) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| walk(x, out, joined)),
        Value::Object(o) => {
            for (k, x) in o {
                out.push(k.clone());
                if k == "text"
                    && let Some(t) = x.as_str()
                {
                    joined.push_str(t);
                }
                walk(x, out, joined);
            }
        }
        _ => {}
    }
}

/// The kinds of [`TARGETS`] in one string, in any of its readings.
pub fn kinds_in(s: &str) -> BTreeSet<&'static str> {
    let mut readings = Vec::new();
    readings_of(s, 0, &mut readings);
    let canon: Vec<String> = readings.iter().map(|r| canonical(r)).collect();
    TARGETS
        .iter()
        .filter(|(_, t)| canon.iter().any(|c| c.contains(t)))
        .map(|(k, _)| *k)
        .collect()
}

/// `s`, percent-decoded, and each base64-looking token decoded, recursively (depth 3).
fn readings_of(s: &str, depth: usize, out: &mut Vec<String>) {
    out.push(s.to_owned());
    if depth == 3 {
        return;
    }
    let pct = percent_decode(s);
    if pct != s {
        readings_of(&pct, depth + 1, out);
    }
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || "+/=_-".contains(c);
    for token in s.split(|c: char| !is_b64(c)).filter(|t| t.len() >= 12) {
        let t = token.trim_end_matches('=');
        let engines = [
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        if let Some(bytes) = engines.iter().find_map(|e| e.decode(t).ok()) {
            readings_of(&String::from_utf8_lossy(&bytes), depth + 1, out);
        }
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A decimal digit of any script as its ASCII digit (its place in its run of ten).
fn ascii_digit(c: char) -> Option<char> {
    if c.is_ascii_digit() {
        return Some(c);
    }
    if get_general_category(c) != GeneralCategory::DecimalNumber {
        return None;
    }
    let mut zero = c as u32;
    while let Some(p) = zero.checked_sub(1).and_then(char::from_u32) {
        if get_general_category(p) != GeneralCategory::DecimalNumber {
            break;
        }
        zero -= 1;
    }
    char::from_digit((c as u32 - zero) % 10, 10)
}

/// NFKC, digits folded, only letters, digits and `@` kept, lower case.
pub fn canonical(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.nfkc() {
        if let Some(d) = ascii_digit(c) {
            out.push(d);
        } else if c == '@' {
            out.push(c);
        } else if c.is_alphabetic() {
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[test]
fn every_form_of_the_corpus_reads_as_its_value() {
    for p in super::leaky::plants() {
        assert!(kinds_in(&p.text).contains(p.kind), "{p:?}");
    }
    assert!(kinds_in(&super::leaky::SPLIT.concat()).contains("EMAIL"));
    assert!(!kinds_in(super::leaky::SPLIT[0]).contains("EMAIL"));
    for clean in ["[REDACTED:EMAIL]", "task-12345678", "2025-01-02T03:04:05Z"] {
        assert!(kinds_in(clean).is_empty(), "{clean}");
    }
}
