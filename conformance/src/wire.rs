//! Wire replays: start a target binary on loopback, send each variant's requests, match the responses.
//!
//! A target is any command that listens on `127.0.0.1` and prints its listening URL on stdout
//! (`conformance/targets.json` names the commands). The first `http://127.0.0.1:PORT...` URL printed
//! is the base URL every fixture path is appended to; `captures` in the target definition pull more
//! variables out of stdout (e.g. a demo API key). The child is killed when the [`Target`] is dropped.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::fixture::{Step, Variant};
use crate::matcher::{Mismatch, Vars, match_optional, match_value, substitute, substitute_str};

/// How to start a target (an entry of `conformance/targets.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TargetSpec {
    /// Binary name, looked up next to the runner's own executable (the cargo target dir).
    pub bin: String,
    /// Arguments; the target must listen on an ephemeral loopback port and print its URL.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables captured from stdout: name -> regex with one capture group.
    #[serde(default)]
    pub captures: BTreeMap<String, String>,
    /// Extra path appended to the printed URL (e.g. an agent's path behind the gateway).
    #[serde(default)]
    pub base_path: Option<String>,
    /// Regex finding the base URL on a stdout line (group 1 if it has one, else the whole match);
    /// default: the first loopback `http(s)://` URL printed.
    #[serde(default)]
    pub url_pattern: Option<String>,
    /// Headers sent with every request (values may use variables, e.g. `Bearer ${api_key}`);
    /// a fixture's own header of the same name wins.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Fixed variables for fixtures (e.g. a path prefix that differs between targets).
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Replay only the cases that name this target in `targets` (a variant of another target,
    /// e.g. the agent with authentication on), not the cases that name none.
    #[serde(default)]
    pub explicit: bool,
    /// The target also serves the 1.0 gRPC binding on its port: every case is replayed over gRPC
    /// too (derived from its JSON-RPC 1.0 form, see [`crate::grpc`]).
    #[serde(default)]
    pub grpc: bool,
    /// Why the target is not replayed over gRPC (printed as a comment line), when it is not.
    #[serde(default)]
    pub no_grpc: Option<String>,
}

/// The targets file: target name -> how to start it.
pub type TargetsFile = BTreeMap<String, TargetSpec>;

/// The repository's targets file.
pub fn default_targets_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("targets.json")
}

/// Loads a targets file.
pub fn load_targets(path: &Path) -> Result<TargetsFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Why a target could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// The target does not exist yet (binary missing, or a stub that exits successfully without
    /// printing a URL): its cases are reported as skipped.
    Unavailable(String),
    /// The target exists but failed to start: its cases fail.
    Failed(String),
}

/// A running target.
pub struct Target {
    child: Child,
    /// The base URL (no trailing slash).
    pub base_url: String,
    /// Headers sent with every request (variables already substituted).
    pub headers: BTreeMap<String, String>,
    /// Variables available to fixtures: `base_url` plus the target's captures.
    pub vars: Vars,
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// URL printed by a target: the first loopback http(s) URL on a line.
fn url_re() -> Regex {
    Regex::new(r#"https?://(?:127\.0\.0\.1|localhost|\[::1\]):\d+[^\s"'<>]*"#)
        .unwrap_or_else(|_| unreachable!("static URL regex"))
}

/// Starts `spec` from `bin_dir` and waits (up to `wait`) for its URL and captures on stdout.
pub fn start(spec: &TargetSpec, bin_dir: &Path, wait: Duration) -> Result<Target, StartError> {
    let exe = bin_dir.join(format!("{}{}", spec.bin, std::env::consts::EXE_SUFFIX));
    if !exe.exists() {
        return Err(StartError::Unavailable(format!(
            "{} not built (no {})",
            spec.bin,
            exe.display()
        )));
    }
    let captures: Vec<(String, Regex)> = spec
        .captures
        .iter()
        .map(|(k, re)| {
            Regex::new(re)
                .map(|r| (k.clone(), r))
                .map_err(|e| StartError::Failed(format!("bad capture regex {k}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let mut child = Command::new(&exe)
        .args(&spec.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1")
        .spawn()
        .map_err(|e| StartError::Failed(format!("cannot start {}: {e}", exe.display())))?;
    let (tx, rx) = mpsc::channel::<Option<String>>();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(Some(line)).is_err() {
                    // Nobody listens any more: keep draining so the child never blocks on a full pipe.
                    continue;
                }
            }
            let _ = tx.send(None);
        });
    }
    let (etx, erx) = mpsc::channel::<String>();
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                match err.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        // Keep a bounded tail for error messages.
                        buf.extend_from_slice(&chunk[..n]);
                        if buf.len() > 16 * 1024 {
                            buf.drain(..buf.len() - 16 * 1024);
                        }
                    }
                }
            }
            let _ = etx.send(String::from_utf8_lossy(&buf).into_owned());
        });
    }
    let url_re = match &spec.url_pattern {
        Some(p) => {
            Regex::new(p).map_err(|e| StartError::Failed(format!("bad urlPattern {p}: {e}")))?
        }
        None => url_re(),
    };
    let mut base_url: Option<String> = None;
    let mut vars = Vars::new();
    let deadline = std::time::Instant::now() + wait;
    let mut stdout_seen = String::new();
    loop {
        let done = base_url.is_some() && captures.iter().all(|(k, _)| vars.contains_key(k));
        if done {
            break;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(Some(line)) => {
                if stdout_seen.len() < 4096 {
                    stdout_seen.push_str(&line);
                    stdout_seen.push('\n');
                }
                if base_url.is_none()
                    && let Some(c) = url_re.captures(&line)
                    && let Some(m) = c.get(1).or_else(|| c.get(0))
                {
                    base_url = Some(m.as_str().trim_end_matches('/').to_string());
                }
                for (k, re) in &captures {
                    if !vars.contains_key(k)
                        && let Some(c) = re.captures(&line).and_then(|c| c.get(1))
                    {
                        vars.insert(k.clone(), Value::String(c.as_str().to_string()));
                    }
                }
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                // stdout closed: the process ended (or closed stdout) before printing everything.
                let status = child.wait().ok();
                let stderr = erx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
                let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
                return Err(match status {
                    Some(s) if s.success() => StartError::Unavailable(format!(
                        "{} exited successfully without printing a listening URL (not implemented yet?)",
                        spec.bin
                    )),
                    s => StartError::Failed(format!(
                        "{} {} exited ({}) before printing its URL; stdout: {:?}; stderr tail: {tail}",
                        spec.bin,
                        spec.args.join(" "),
                        s.map(|s| s.to_string())
                            .unwrap_or_else(|| "unknown status".into()),
                        stdout_seen.trim()
                    )),
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(StartError::Failed(format!(
                    "{} printed no URL{} within {}s; stdout: {:?}",
                    spec.bin,
                    if base_url.is_some() {
                        " / captures"
                    } else {
                        ""
                    },
                    wait.as_secs(),
                    stdout_seen.trim()
                )));
            }
        }
    }
    for (k, v) in &spec.vars {
        vars.insert(k.clone(), Value::String(v.clone()));
    }
    let mut base = base_url.unwrap_or_default();
    if let Some(p) = &spec.base_path {
        base.push_str(&substitute_str(p, &vars));
    }
    vars.insert("base_url".into(), Value::String(base.clone()));
    let headers = spec
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), substitute_str(v, &vars)))
        .collect();
    Ok(Target {
        child,
        base_url: base,
        headers,
        vars,
    })
}

/// A value unique to this replay within the process and across runs.
pub(crate) fn run_id() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{t:x}-{n}")
}

/// Replays every step of `variant` against `target`; returns the failures (empty = pass).
pub async fn replay_variant(
    client: &reqwest::Client,
    target: &Target,
    variant: &Variant,
) -> Vec<String> {
    let mut vars = target.vars.clone();
    // `${run}`: unique per replay, for ids a sender must not reuse (messageId).
    vars.insert("run".into(), serde_json::json!(run_id()));
    let steps = variant.all_steps();
    if steps.is_empty() {
        return vec!["variant has no steps".into()];
    }
    for (i, step) in steps.iter().enumerate() {
        let fails = replay_step(client, target, step, &mut vars).await;
        if !fails.is_empty() {
            let prefix = if steps.len() > 1 {
                format!("step {}: ", i + 1)
            } else {
                String::new()
            };
            return fails.into_iter().map(|f| format!("{prefix}{f}")).collect();
        }
    }
    Vec::new()
}

async fn replay_step(
    client: &reqwest::Client,
    target: &Target,
    step: &Step,
    vars: &mut Vars,
) -> Vec<String> {
    let base_url = target.base_url.as_str();
    let req = &step.request;
    let Ok(method) = reqwest::Method::from_bytes(req.method.as_bytes()) else {
        return vec![format!("bad method {} in fixture", req.method)];
    };
    let url = format!("{base_url}{}", substitute_str(&req.path, vars));
    let mut builder = client.request(method, &url);
    let mut has_ct = false;
    for (k, v) in &target.headers {
        if !req.headers.keys().any(|h| h.eq_ignore_ascii_case(k)) {
            builder = builder.header(k.as_str(), v.as_str());
        }
    }
    for (k, v) in &req.headers {
        has_ct |= k.eq_ignore_ascii_case("content-type");
        builder = builder.header(k.as_str(), substitute_str(v, vars));
    }
    if let Some(body) = &req.body {
        if !has_ct {
            builder = builder.header("content-type", "application/json");
        }
        builder = builder.body(substitute(body, vars).to_string());
    } else if let Some(text) = &req.body_text {
        builder = builder.body(substitute_str(text, vars));
    }
    let resp = match builder.send().await {
        Ok(r) => r,
        Err(e) => return vec![format!("{} {url}: request failed: {e}", req.method)],
    };
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = match resp.text().await {
        Ok(t) => t,
        Err(e) => return vec![format!("reading the body failed: {e}")],
    };
    let want = &step.response;
    let mut fails = Vec::new();
    if status != want.status {
        fails.push(format!(
            "status: expected {}, found {status} (body {})",
            want.status,
            truncate(&text, 300)
        ));
    }
    for (name, expected) in &want.headers {
        let actual: Option<Value> = {
            let vals: Vec<&str> = headers
                .get_all(name.as_str())
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            (!vals.is_empty()).then(|| Value::String(vals.join(", ")))
        };
        for m in match_optional(&format!("header {name}"), expected, actual.as_ref(), vars) {
            fails.push(m.to_string());
        }
    }
    if let Some(events) = &want.events {
        match parse_sse(&text) {
            Ok(actual) => {
                let actual = Value::Array(actual);
                let expected = Value::Array(events.clone());
                fails.extend(prefixed("events", match_value(&expected, &actual, vars)));
            }
            Err(e) => fails.push(format!("events: {e}")),
        }
    } else if let Some(body) = &want.body {
        match serde_json::from_str::<Value>(&text) {
            Ok(actual) => fails.extend(prefixed("body", match_value(body, &actual, vars))),
            Err(e) => fails.push(format!("body: not JSON ({e}): {}", truncate(&text, 300))),
        }
    }
    fails
}

pub(crate) fn prefixed(what: &str, ms: Vec<Mismatch>) -> Vec<String> {
    ms.into_iter()
        .map(|m| {
            if m.path.is_empty() {
                format!("{what}: {}", m.reason)
            } else if m.path.starts_with('[') {
                format!("{what}{}: {}", m.path, m.reason)
            } else {
                format!("{what}.{}: {}", m.path, m.reason)
            }
        })
        .collect()
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Parses a `text/event-stream` body into the JSON value of each event's `data` (comments and
/// `event:`/`id:` fields are ignored; multi-line data is joined with `\n`).
pub fn parse_sse(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    let flush = |data: &mut Vec<&str>, out: &mut Vec<Value>| -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        let joined = data.join("\n");
        data.clear();
        let v = serde_json::from_str(&joined).map_err(|e| {
            format!(
                "event {} data is not JSON ({e}): {}",
                out.len(),
                truncate(&joined, 200)
            )
        })?;
        out.push(v);
        Ok(())
    };
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            flush(&mut data, &mut out)?;
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    flush(&mut data, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sse_events_are_split_and_parsed() {
        let body = ": heartbeat\n\ndata: {\"a\":1}\n\nevent: x\ndata: {\"b\":\ndata: 2}\r\n\r\n";
        assert_eq!(
            parse_sse(body).unwrap(),
            vec![json!({"a":1}), json!({"b":2})]
        );
        assert!(parse_sse("data: nope\n\n").is_err());
    }

    #[test]
    fn missing_binary_is_unavailable_not_failed() {
        let spec = TargetSpec {
            bin: "definitely-not-built-a2a-target".into(),
            args: vec![],
            captures: BTreeMap::new(),
            base_path: None,
            url_pattern: None,
            headers: BTreeMap::new(),
            vars: BTreeMap::new(),
            explicit: false,
            grpc: false,
            no_grpc: None,
        };
        let dir = tempfile::tempdir().unwrap();
        match start(&spec, dir.path(), Duration::from_secs(1)) {
            Err(StartError::Unavailable(_)) => {}
            other => panic!("expected Unavailable, got {:?}", other.err()),
        }
    }
}
