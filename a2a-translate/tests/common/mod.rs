//! Shared by the fixture and oracle tests: load fixtures and run our translator on them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use a2a_translate::{
    ErrorObject, Method, Policy, StreamTranslator, Untranslatable, V1Request, V1Result, V03Request,
    V03Result, to_v1, to_v03,
};
use a2a_types::{v1, v03};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// One fixture file (format: docs/translation.md, "Fixture format").
#[derive(Debug, Clone)]
pub struct Fixture {
    pub file: PathBuf,
    pub doc: Value,
}

impl Fixture {
    pub fn name(&self) -> &str {
        self.doc["name"].as_str().unwrap()
    }
    pub fn kind(&self) -> &str {
        self.doc["kind"].as_str().unwrap()
    }
    pub fn dialect(&self) -> &str {
        self.doc["dialect"].as_str().unwrap()
    }
    pub fn direction(&self) -> &str {
        self.doc["direction"].as_str().unwrap()
    }
    pub fn policy(&self) -> Policy {
        match self.doc.get("policy").and_then(Value::as_str) {
            None | Some("strict") => Policy::Strict,
            Some("sdk_compatible") => Policy::SdkCompatible,
            Some(other) => panic!("{}: unknown policy {other}", self.name()),
        }
    }
    pub fn method(&self) -> Option<Method> {
        self.doc
            .get("method")
            .and_then(Value::as_str)
            .map(|m| Method::from_v1_name(m).unwrap())
    }
    /// The directions this fixture checks, with their source and target documents.
    pub fn checks(&self) -> Vec<(Dir, Value, Option<Value>)> {
        let mut out = Vec::new();
        for dir in [Dir::ToV1, Dir::ToV03] {
            if self.direction() != "both" && self.direction() != dir.name() {
                continue;
            }
            let (src, tgt) = match dir {
                Dir::ToV1 => ("v03", "v1"),
                Dir::ToV03 => ("v1", "v03"),
            };
            let Some(s) = self.doc.get(src) else { continue };
            let t = if self.doc.get("refusal").is_some() {
                None
            } else {
                Some(self.doc.get(tgt).cloned().unwrap_or(Value::Null))
            };
            out.push((dir, s.clone(), t));
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    ToV1,
    ToV03,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::ToV1 => "to_v1",
            Dir::ToV03 => "to_v03",
        }
    }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn fixture_dir() -> PathBuf {
    repo_root().join("conformance/fixtures/translate")
}

pub fn load_fixtures() -> Vec<Fixture> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(fixture_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            out.push(Fixture { file: p, doc });
        }
    }
    out.sort_by(|a, b| a.name().cmp(b.name()));
    out
}

/// What our translator produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub value: Value,
    pub omitted: Vec<String>,
    pub signatures_dropped: bool,
}

impl From<Value> for Outcome {
    fn from(value: Value) -> Self {
        Outcome {
            value,
            omitted: Vec::new(),
            signatures_dropped: false,
        }
    }
}

/// A failure to even parse the source document (a fixture bug, not a refusal).
#[derive(Debug)]
pub enum RunError {
    Parse(String),
    Refused(Untranslatable),
}

impl From<Untranslatable> for RunError {
    fn from(e: Untranslatable) -> Self {
        RunError::Refused(e)
    }
}

fn parse<T: DeserializeOwned>(v: Value) -> Result<T, RunError> {
    serde_json::from_value(v).map_err(|e| RunError::Parse(e.to_string()))
}

fn val(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

fn envelope(id: &Value, method: &str, params: Option<Value>) -> Value {
    let mut e = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        e["params"] = p;
    }
    e
}

/// Runs our translator on one fixture direction.
pub fn run(fx: &Fixture, dir: Dir, src: Value) -> Result<Outcome, RunError> {
    let policy = fx.policy();
    if fx.dialect() == "rest" {
        return rest::run(fx, dir, src, policy);
    }
    Ok(match (fx.kind(), dir) {
        ("request", Dir::ToV1) => {
            let r = V03Request::parse(src["method"].as_str().unwrap(), src.get("params").cloned())
                .map_err(|e| RunError::Parse(e.to_string()))?;
            let out = to_v1::request(r, policy)?;
            envelope(&src["id"], out.method_name(), out.params()).into()
        }
        ("request", Dir::ToV03) => {
            let r = V1Request::parse(src["method"].as_str().unwrap(), src.get("params").cloned())
                .map_err(|e| RunError::Parse(e.to_string()))?;
            let out = to_v03::request(r, policy)?;
            envelope(&src["id"], out.method_name(), out.params()).into()
        }
        ("message", Dir::ToV1) => val(to_v1::message(parse(src)?)?).into(),
        ("message", Dir::ToV03) => val(to_v03::message(parse(src)?, policy)?).into(),
        ("task", Dir::ToV1) => val(to_v1::task(parse(src)?)?).into(),
        ("task", Dir::ToV03) => val(to_v03::task(parse(src)?, policy)?).into(),
        ("push_config", Dir::ToV1) => val(to_v1::task_push_config(parse(src)?, policy)?).into(),
        ("push_config", Dir::ToV03) => val(to_v03::task_push_config(parse(src)?, policy)?).into(),
        ("stream_event", Dir::ToV1) => val(to_v1::stream_event(parse(src)?)?).into(),
        ("stream_event", Dir::ToV03) => val(to_v03::stream_event(parse(src)?, policy)?).into(),
        ("push_payload", Dir::ToV1) => val(to_v1::push_payload(parse(src)?)?).into(),
        ("push_payload", Dir::ToV03) => val(to_v03::push_payload(parse(src)?, policy)?).into(),
        ("stream", Dir::ToV1) => {
            let events: Vec<v03::StreamResult> = parse(src)?;
            let n = events.len();
            let mut out = Vec::new();
            for (i, e) in events.into_iter().enumerate() {
                let ends = to_v1::ends_stream(&e);
                out.push(val(
                    to_v1::stream_event(e).map_err(|e| e.under(&format!("[{i}]")))?
                ));
                assert!(
                    !ends || i + 1 == n,
                    "{}: final before the last event",
                    fx.name()
                );
            }
            Value::Array(out).into()
        }
        ("stream", Dir::ToV03) => {
            let events: Vec<v1::StreamResponse> = parse(src)?;
            let mut st = StreamTranslator::new(policy);
            let mut out = Vec::new();
            for (i, e) in events.into_iter().enumerate() {
                out.extend(st.push(e).map_err(|e| e.under(&format!("[{i}]")))?.map(val));
            }
            out.extend(st.finish().map(val));
            Value::Array(out).into()
        }
        ("result", Dir::ToV1) => {
            let m = fx.method().unwrap();
            let r = V03Result::parse(m, src).map_err(|e| RunError::Parse(e.to_string()))?;
            val(to_v1::result(r, policy)?.to_value()).into()
        }
        ("result", Dir::ToV03) => {
            let m = fx.method().unwrap();
            let r = V1Result::parse(m, src).map_err(|e| RunError::Parse(e.to_string()))?;
            val(to_v03::result(r, policy)?.to_value()).into()
        }
        ("card", Dir::ToV1) => {
            let t = to_v1::card(parse(src)?, policy)?;
            Outcome {
                value: val(t.card),
                omitted: t.omitted.iter().map(|o| o.path.clone()).collect(),
                signatures_dropped: t.signatures_dropped,
            }
        }
        ("card", Dir::ToV03) => {
            let t = to_v03::card(parse(src)?, policy)?;
            Outcome {
                value: val(t.card),
                omitted: t.omitted.iter().map(|o| o.path.clone()).collect(),
                signatures_dropped: t.signatures_dropped,
            }
        }
        ("error", Dir::ToV1) => val(to_v1::error(parse::<ErrorObject>(src)?)).into(),
        ("error", Dir::ToV03) => val(to_v03::error(parse::<ErrorObject>(src)?)).into(),
        (k, _) => return Err(RunError::Parse(format!("unknown kind {k}"))),
    })
}

mod rest {
    use super::*;
    use a2a_translate::CardTranslation;
    use a2a_types::v03::rest as r;

    fn card<C: serde::Serialize>(t: CardTranslation<C>) -> Outcome {
        Outcome {
            value: val(t.card),
            omitted: t.omitted.iter().map(|o| o.path.clone()).collect(),
            signatures_dropped: t.signatures_dropped,
        }
    }

    pub fn run(fx: &Fixture, dir: Dir, src: Value, policy: Policy) -> Result<Outcome, RunError> {
        use to_v1::rest as i;
        use to_v03::rest as o;
        let method = fx.method();
        Ok(match (fx.kind(), dir) {
            ("message", Dir::ToV1) => val(i::message(parse::<r::Message>(src)?, policy)?).into(),
            ("message", Dir::ToV03) => val(o::message(parse(src)?, policy)?).into(),
            ("task", Dir::ToV1) => val(i::task(parse::<r::Task>(src)?, policy)?).into(),
            ("task", Dir::ToV03) => val(o::task(parse(src)?, policy)?).into(),
            ("stream_event", Dir::ToV1) => {
                val(i::stream_event(parse::<r::StreamResponse>(src)?, policy)?).into()
            }
            ("stream_event", Dir::ToV03) => val(o::stream_event(parse(src)?, policy)?).into(),
            ("push_config", Dir::ToV1) => val(i::task_push_config(
                parse::<r::TaskPushNotificationConfig>(src)?,
                policy,
            )?)
            .into(),
            ("push_config", Dir::ToV03) => val(o::task_push_config(parse(src)?, policy)?).into(),
            ("send_message_request", Dir::ToV1) => val(i::send_message_request(
                parse::<r::SendMessageRequest>(src)?,
                policy,
            )?)
            .into(),
            ("send_message_request", Dir::ToV03) => {
                val(o::send_message_request(parse(src)?, policy)?).into()
            }
            ("result", Dir::ToV1) if method == Some(Method::SendMessage) => val(
                i::send_message_result(parse::<r::SendMessageResponse>(src)?, policy)?,
            )
            .into(),
            ("result", Dir::ToV03) if method == Some(Method::SendMessage) => {
                val(o::send_message_result(parse(src)?, policy)?).into()
            }
            ("result", Dir::ToV1) if method == Some(Method::ListTaskPushNotificationConfigs) => {
                val(i::list_push_configs_result(
                    parse::<r::ListTaskPushNotificationConfigResponse>(src)?,
                    policy,
                )?)
                .into()
            }
            ("result", Dir::ToV03) if method == Some(Method::ListTaskPushNotificationConfigs) => {
                val(o::list_push_configs_result(parse(src)?, policy)?).into()
            }
            ("card", Dir::ToV1) => card(i::card(parse::<r::AgentCard>(src)?, policy)?),
            ("card", Dir::ToV03) => card(o::card(parse(src)?, policy)?),
            (k, _) => return Err(RunError::Parse(format!("unknown REST kind {k}"))),
        })
    }
}
