//! The fixture format: one case per JSON file under `conformance/fixtures/<suite>/` (see `docs/conformance.md`).
//!
//! A file holds either a model case (`"kind": "model"`, replayed in-process against `a2a-types`) or a wire
//! case (`"kind": "wire"`, replayed over HTTP against a target binary on loopback).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::model::ModelCase;

/// One fixture file, parsed.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Case {
    /// Parse / serialize / strict-validate a document in-process.
    Model(ModelCase),
    /// Requests replayed against a running target.
    Wire(WireCase),
}

/// A wire case: the same operation expressed per binding and version.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WireCase {
    /// What the case checks, in one sentence.
    pub description: String,
    /// Targets that must pass it (`agent`, `gateway`); default: every target.
    #[serde(default)]
    pub targets: Vec<String>,
    /// Where the spec says so (e.g. `S1 §3.1.1`); free text.
    #[serde(default)]
    pub reference: Option<String>,
    /// One entry per binding and version the case is replayed over.
    pub variants: Vec<Variant>,
}

/// One binding/version rendering of a wire case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Variant {
    /// Protocol binding: `JSONRPC` or `HTTP+JSON` (or `HTTP` for binding-independent requests like the card).
    /// gRPC replays are derived from the `JSONRPC` `1.0` variants (see [`crate::grpc`]).
    pub binding: String,
    /// Protocol version `0.3` or `1.0`.
    pub version: String,
    /// The exchanges, in order (later ones may use variables captured by earlier ones).
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Shorthand for a single step: its request.
    #[serde(default)]
    pub request: Option<Request>,
    /// Shorthand for a single step: its expected response.
    #[serde(default)]
    pub response: Option<Response>,
}

impl Variant {
    /// The steps, with the single-step shorthand expanded.
    pub fn all_steps(&self) -> Vec<Step> {
        let mut steps = self.steps.clone();
        if let (Some(request), Some(response)) = (&self.request, &self.response) {
            steps.insert(
                0,
                Step {
                    request: request.clone(),
                    response: response.clone(),
                },
            );
        }
        steps
    }
}

/// One request and its expected response.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What is sent.
    pub request: Request,
    /// What must come back.
    pub response: Response,
}

/// An HTTP request. Strings may use `${NAME}` variables (captures and target variables).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Request {
    /// HTTP method (`GET`, `POST`, ...).
    pub method: String,
    /// Path (and query) relative to the target's base URL, e.g. `/message:send?A2A-Version=1.0`.
    pub path: String,
    /// Request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// JSON body (sent with `Content-Type: application/json` unless a header says otherwise).
    #[serde(default)]
    pub body: Option<Value>,
    /// Raw body text, for malformed documents (exclusive with `body`).
    #[serde(default)]
    pub body_text: Option<String>,
}

/// The expected HTTP response.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Response {
    /// Expected status code.
    pub status: u16,
    /// Expected headers (names case-insensitive); values are strings or matchers, `"$absent"` for must-not-be-sent.
    #[serde(default)]
    pub headers: BTreeMap<String, Value>,
    /// Expected JSON body (with matchers).
    #[serde(default)]
    pub body: Option<Value>,
    /// Expected SSE events: the JSON of each `data:` field, in order (with matchers).
    #[serde(default)]
    pub events: Option<Vec<Value>>,
}

/// A fixture file and its suite.
#[derive(Debug, Clone)]
pub struct LoadedCase {
    /// Suite name (the directory under `fixtures/`).
    pub suite: String,
    /// Case name (the file stem).
    pub name: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The parsed case.
    pub case: Case,
}

/// Suites that are not replayed by this runner, with the reason.
pub const FOREIGN_SUITES: &[(&str, &str)] = &[(
    "translate",
    "0.3 <-> 1.0 translation pairs, replayed by the a2a-translate tests",
)];

/// The repository's fixture directory.
pub fn default_fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Loads every case of every suite under `dir` (sorted by suite, then name), skipping [`FOREIGN_SUITES`].
/// `suites` restricts loading to the named suites when non-empty.
pub fn load_all(dir: &Path, suites: &[String]) -> Result<Vec<LoadedCase>, String> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for suite_dir in entries {
        let suite = suite_dir.file_name().to_string_lossy().into_owned();
        if FOREIGN_SUITES.iter().any(|(s, _)| *s == suite) {
            continue;
        }
        if !suites.is_empty() && !suites.contains(&suite) {
            continue;
        }
        out.extend(load_suite(&suite_dir.path(), &suite)?);
    }
    Ok(out)
}

/// Loads the cases of one suite directory.
pub fn load_suite(dir: &Path, suite: &str) -> Result<Vec<LoadedCase>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let case: Case = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a valid fixture: {e}", path.display()))?;
            Ok(LoadedCase {
                suite: suite.to_string(),
                name: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path,
                case,
            })
        })
        .collect()
}
