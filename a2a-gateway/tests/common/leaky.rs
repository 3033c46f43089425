//! The attack suite's peer (issue 39, `tests/attack_table.rs`): a JSON-RPC peer of A2A 1.0 or
//! 0.3 that puts known PII values into every member it answers. The values are positives of
//! `tests/data/pii_corpus.json` (an e-mail, a card number, an SSN, each plainly and in several
//! evasion forms: fullwidth and other digit scripts, zero-width characters, separators,
//! percent-encoding, base64) and one e-mail split across two text parts or two stream chunks.
//!
//! What it answers: a task (status message, history, artifacts with names, descriptions, text,
//! data keys and values, file names, URLs, inline text files, metadata keys and values) to
//! SendMessage, GetTask, CancelTask and ListTasks; the same in stream events to
//! SendStreamingMessage and SubscribeToTask; an error whose ErrorInfo reason, message and
//! metadata carry PII to a message saying `error`; a task whose state is a PII text (an answer
//! the gateway cannot read, whose message would quote it) to `invalid`; its card, and the same
//! card to GetExtendedAgentCard. Push configs it is given are kept for the test to notify.
//! Push config answers of its own making (a Create on a task named `t-cfg-*`, every Get and
//! List, and the inline config of a send echoed in the send's answer): a URL of its own
//! carrying a value, or the callback it was given; a token, an authentication scheme and
//! credentials, and members of no version (`note`), each carrying values.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde_json::{Value, json};

use a2a_gateway::protocol::errors::Version;
use a2a_gateway::protocol::ops::Operation;
use a2a_gateway::protocol::xlate;

/// One planted value: its kind, the evasion form (`plain` when written plainly) and the text.
#[derive(Debug, Clone)]
pub struct Plant {
    pub kind: &'static str,
    pub form: String,
    pub text: String,
}

/// The (kind, corpus form) pairs planted; `None` is the plain form.
const FORMS: [(&str, Option<&str>); 15] = [
    ("EMAIL", None),
    ("EMAIL", Some("fullwidth")),
    ("EMAIL", Some("zero-width space")),
    ("EMAIL", Some("percent-encoded")),
    ("EMAIL", Some("base64")),
    ("PAYMENT_CARD", None),
    ("PAYMENT_CARD", Some("arabic-indic digits")),
    ("PAYMENT_CARD", Some("dots")),
    ("PAYMENT_CARD", Some("en dash")),
    ("PAYMENT_CARD", Some("base64")),
    ("US_SSN", None),
    ("US_SSN", Some("fullwidth")),
    ("US_SSN", Some("no-break space")),
    ("US_SSN", Some("en dash")),
    ("US_SSN", Some("base64")),
];

/// An e-mail split across two text parts of one message, or two chunks of one artifact.
pub const SPLIT: [&str; 2] = ["write to ann.lee@exa", "mple.org please"];

/// The extension the peer's card declares (allowed in the suite's workspaces, so that the
/// governed card lists it with its description and params).
pub const EXT: &str = "https://ext.example/leaky";

/// A fixed status timestamp.
const TS: &str = "2025-01-02T03:04:05Z";

/// The planted values, read once from the corpus: for each pair of [`FORMS`], the first
/// positive of that kind and form whose value is the suite's ([`super::leaks::TARGETS`]).
pub fn plants() -> &'static [Plant] {
    static PLANTS: OnceLock<Vec<Plant>> = OnceLock::new();
    PLANTS.get_or_init(|| {
        let raw = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/pii_corpus.json"
        ))
        .expect("the corpus");
        let corpus: Value = serde_json::from_str(&raw).expect("corpus JSON");
        let positives = corpus["positives"].as_array().expect("positives");
        FORMS
            .iter()
            .map(|(kind, form)| {
                let p = positives
                    .iter()
                    .find(|p| {
                        p["kind"] == *kind
                            && p["form"].as_str() == *form
                            && super::leaks::kinds_in(p["text"].as_str().unwrap_or(""))
                                .contains(kind)
                    })
                    .unwrap_or_else(|| panic!("no {kind} {form:?} positive of the suite's value"));
                Plant {
                    kind,
                    form: form.unwrap_or("plain").to_owned(),
                    text: p["text"].as_str().unwrap_or("").to_owned(),
                }
            })
            .collect()
    })
}

/// The planted values in turn, from the first, round and round.
struct Cycle(usize);

impl Cycle {
    fn next(&mut self) -> String {
        let p = plants();
        let t = p[self.0 % p.len()].text.clone();
        self.0 += 1;
        t
    }
}

fn pct(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

fn meta(c: &mut Cycle) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("note".into(), json!(c.next()));
    m.insert(c.next(), json!(true));
    Value::Object(m)
}

fn message(c: &mut Cycle, id: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_AGENT",
        "parts": [{"text": c.next()}, {"text": SPLIT[0]}, {"text": SPLIT[1]}],
        "metadata": meta(c)})
}

fn artifact(c: &mut Cycle, id: &str) -> Value {
    let mut data = serde_json::Map::new();
    data.insert("note".into(), json!(c.next()));
    data.insert(c.next(), json!("value"));
    data.insert("list".into(), json!([c.next()]));
    let b64 = base64::engine::general_purpose::STANDARD.encode(c.next());
    json!({"artifactId": id, "name": c.next(), "description": c.next(), "parts": [
        {"text": c.next()},
        {"data": Value::Object(data)},
        {"url": format!("https://files.example/{}", pct(&c.next())), "filename": c.next(),
            "mediaType": "text/plain"},
        {"raw": b64, "mediaType": "text/plain", "filename": "notes.txt"}],
        "metadata": meta(c)})
}

/// A 1.0 task `id` in `state` with every planted value in it (each at least once).
pub fn task(id: &str, state: &str) -> Value {
    let c = &mut Cycle(0);
    json!({"id": id, "contextId": "c-leaky",
        "status": {"state": state, "timestamp": TS, "message": message(c, "m-status")},
        "artifacts": [artifact(c, "a-1")],
        "history": [message(c, "m-history")],
        "metadata": meta(c)})
}

/// A 1.0 push notification of task `id`: a status update (`artifact` false) or an artifact
/// update, each with every planted value.
pub fn notification(id: &str, artifact_update: bool) -> Value {
    let c = &mut Cycle(0);
    if artifact_update {
        json!({"artifactUpdate": {"taskId": id, "contextId": "c-leaky",
            "artifact": artifact(c, "a-push"), "lastChunk": true, "metadata": meta(c)}})
    } else {
        json!({"statusUpdate": {"taskId": id, "contextId": "c-leaky",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": TS,
                "message": message(c, "m-push")}, "metadata": meta(c)}})
    }
}

/// The events (1.0) of a stream of task `id` ending in `last` state: the task, an e-mail split
/// across two chunks of one artifact, a whole artifact, a status update.
fn events(id: &str, last: &str) -> Vec<Value> {
    let c = &mut Cycle(3);
    let chunk = |t: &str, append: bool, last: bool| {
        json!({"artifactUpdate": {"taskId": id, "contextId": "c-leaky",
            "artifact": {"artifactId": "a-split", "parts": [{"text": t}]},
            "append": append, "lastChunk": last}})
    };
    vec![
        json!({"task": task(id, "TASK_STATE_WORKING")}),
        chunk(SPLIT[0], false, false),
        chunk(SPLIT[1], true, true),
        json!({"artifactUpdate": {"taskId": id, "contextId": "c-leaky",
            "artifact": artifact(c, "a-2"), "lastChunk": true}}),
        json!({"statusUpdate": {"taskId": id, "contextId": "c-leaky",
            "status": {"state": last, "timestamp": TS, "message": message(c, "m-last")},
            "metadata": meta(c)}}),
    ]
}

/// The peer's card at `base` in `version`, every text member carrying planted values.
pub fn card(base: &str, version: Version) -> Value {
    let c = &mut Cycle(0);
    let mut params = serde_json::Map::new();
    params.insert("note".into(), json!(c.next()));
    params.insert(c.next(), json!(1));
    let mut card = json!({"name": c.next(), "description": c.next(), "version": "1.0.0",
        "provider": {"organization": c.next(),
            "url": format!("https://provider.example/{}", pct(&c.next()))},
        "documentationUrl": format!("https://docs.example/{}", pct(&c.next())),
        "iconUrl": format!("https://icons.example/{}", pct(&c.next())),
        "capabilities": {"streaming": true, "pushNotifications": true,
            "extensions": [{"uri": EXT, "description": c.next(), "params": Value::Object(params)}]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "leak", "name": c.next(), "description": c.next(),
            "tags": [c.next(), c.next()], "examples": [c.next(), c.next()]}]});
    match version {
        Version::V1 => {
            card["supportedInterfaces"] =
                json!([{"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]);
        }
        Version::V03 => {
            card["protocolVersion"] = json!("0.3.0");
            card["url"] = json!(base);
            card["preferredTransport"] = json!("JSONRPC");
        }
    }
    card
}

/// A push config of the peer's making for `task` (1.0): a webhook URL of its own carrying an
/// e-mail (`url` `None`) or the callback it was given, a token, an authentication scheme (a
/// card number) and credentials, and a member of no version (`note`, an SSN).
pub fn config(task: &str, id: &str, url: Option<&str>) -> Value {
    let p = plants();
    let url = match url {
        Some(u) => u.to_owned(),
        None => format!("https://hooks.example/{}", pct(&p[0].text)),
    };
    json!({"taskId": task, "id": id, "url": url, "token": p[1].text,
        "authentication": {"scheme": p[5].text, "credentials": p[6].text}, "note": p[10].text})
}

/// A push config answer (1.0 `r`) in `v`: a 0.3 answer gets the members of no version back
/// after the typed translation dropped them (beside and inside each `pushNotificationConfig`).
fn config_answer(id: &Value, op: Operation, v: Version, r: Value) -> Response {
    let r = match v {
        Version::V1 => r,
        Version::V03 => {
            let mut out = xlate::result(op, Version::V1, v, &r).unwrap_or(r);
            add_notes(&mut out);
            out
        }
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": r})).into_response()
}

/// Puts a `note` beside and inside every 0.3 `pushNotificationConfig` in `v`. A governed hop
/// reads a 0.3 answer into 1.0, which drops them (they are never redacted, only gone), so they
/// carry kinds the config's URL and scheme carry anyway.
fn add_notes(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(add_notes),
        Value::Object(o) => {
            if let Some(inner) = o.get_mut("pushNotificationConfig") {
                inner["note"] = json!(plants()[2].text);
                o.insert("note".into(), json!(plants()[7].text));
            }
        }
        _ => {}
    }
}

/// The key of a send's inline push config in `v`.
fn inline_key(v: Version) -> &'static str {
    match v {
        Version::V1 => "taskPushNotificationConfig",
        Version::V03 => "pushNotificationConfig",
    }
}

/// A running leaky peer.
pub struct LeakyPeer {
    /// Base URL, also the JSON-RPC endpoint.
    pub url: String,
    push: Arc<Mutex<HashMap<String, (String, String)>>>,
    join: tokio::task::JoinHandle<()>,
}

impl LeakyPeer {
    /// The (callback URL, token) of the push config the peer was given for `task`.
    pub fn push_config(&self, task: &str) -> Option<(String, String)> {
        self.push.lock().ok()?.get(task).cloned()
    }

    pub fn stop(self) {
        self.join.abort();
    }
}

#[derive(Clone)]
struct Ctx {
    version: Version,
    card: Value,
    push: Arc<Mutex<HashMap<String, (String, String)>>>,
}

/// Starts a leaky peer speaking `version` over JSON-RPC on 127.0.0.1.
pub async fn start(version: Version) -> LeakyPeer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let push = Arc::new(Mutex::new(HashMap::new()));
    let ctx = Ctx {
        version,
        card: card(&url, version),
        push: push.clone(),
    };
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(|State(c): State<Ctx>| async move { axum::Json(c.card.clone()) }),
        )
        .route("/", post(rpc))
        .with_state(ctx);
    let join = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    LeakyPeer { url, push, join }
}

/// The text of a message's parts (either version).
fn text_of(params: &Value) -> String {
    params["message"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// A JSON-RPC error whose every member carries PII (1.0: an ErrorInfo whose reason is a PII
/// text; 0.3 has no ErrorInfo, its `data` carries it).
fn error(id: &Value, v: Version) -> Value {
    let c = &mut Cycle(0);
    let data = match v {
        Version::V1 => json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": c.next(), "domain": "a2a-protocol.org", "metadata": {"note": c.next()}}]),
        Version::V03 => json!({"note": c.next()}),
    };
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": c.next(), "data": data}})
}

async fn rpc(State(c): State<Ctx>, body: axum::body::Bytes) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = req["id"].clone();
    let v = c.version;
    let Ok(op) = a2a_gateway::protocol::ops::from_method(req["method"].as_str().unwrap_or(""), v)
    else {
        return axum::Json(error(&id, v)).into_response();
    };
    let p = &req["params"];
    let ok = |r: Value| {
        let r = match v {
            Version::V1 => r,
            Version::V03 => xlate::result(op, Version::V1, v, &r).unwrap_or(r),
        };
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": r})).into_response()
    };
    let tid = p["id"].as_str().unwrap_or("").to_owned();
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => {
            let text = text_of(p);
            let streaming = op == Operation::SendStreamingMessage;
            // A task of its own per send: the peer is shared by the suite's workspaces.
            let tid = format!("t-{}", p["message"]["messageId"].as_str().unwrap_or(""));
            if text.contains("error") && streaming {
                let first = json!({"task": task(&tid, "TASK_STATE_WORKING")});
                return sse(&id, vec![first], Some(error(&id, v)), v);
            }
            if text.contains("error") {
                return axum::Json(error(&id, v)).into_response();
            }
            if text.contains("invalid") {
                let mut t = task(&tid, "TASK_STATE_COMPLETED");
                if v == Version::V03 {
                    t = xlate::result(Operation::GetTask, Version::V1, v, &t).unwrap_or(t);
                }
                t["status"]["state"] = json!(plants()[0].text);
                let r = match v {
                    Version::V1 => json!({"task": t}),
                    Version::V03 => t,
                };
                return axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": r}))
                    .into_response();
            }
            if streaming {
                return sse(&id, events(&tid, "TASK_STATE_COMPLETED"), None, v);
            }
            let given = &p["configuration"][inline_key(v)];
            if let Some(url) = given["url"].as_str() {
                // The inline push config echoed in the task, with members of the peer's own.
                let mut echo = config("", "cfg-inline", Some(url));
                let t = task(&tid, "TASK_STATE_COMPLETED");
                let r = match v {
                    Version::V1 => {
                        let mut r = json!({"task": t});
                        r["task"][inline_key(v)] = echo;
                        r
                    }
                    Version::V03 => {
                        let mut t =
                            xlate::result(Operation::GetTask, Version::V1, v, &t).unwrap_or(t);
                        // The 0.3 form: `schemes`, no task id.
                        let scheme = echo["authentication"]["scheme"].take();
                        let cred = echo["authentication"]["credentials"].take();
                        echo["authentication"] = json!({"schemes": [scheme], "credentials": cred});
                        if let Some(o) = echo.as_object_mut() {
                            o.remove("taskId");
                        }
                        t[inline_key(v)] = echo;
                        t
                    }
                };
                return axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": r}))
                    .into_response();
            }
            ok(json!({"task": task(&tid, "TASK_STATE_COMPLETED")}))
        }
        Operation::GetTask => ok(task(&tid, "TASK_STATE_WORKING")),
        Operation::CancelTask => ok(task(&tid, "TASK_STATE_CANCELED")),
        Operation::SubscribeToTask => sse(&id, events(&tid, "TASK_STATE_WORKING"), None, v),
        Operation::ListTasks => ok(json!({"tasks": [task("t-list", "TASK_STATE_WORKING")],
            "nextPageToken": "", "pageSize": 50, "totalSize": 1})),
        Operation::CreateTaskPushNotificationConfig => {
            let cfg = match v {
                Version::V1 => p.clone(),
                Version::V03 => p["pushNotificationConfig"].clone(),
            };
            let task = p["taskId"].as_str().unwrap_or("").to_owned();
            let url = cfg["url"].as_str().unwrap_or("").to_owned();
            let token = cfg["token"].as_str().unwrap_or("").to_owned();
            if let Ok(mut m) = c.push.lock() {
                m.insert(task.clone(), (url.clone(), token.clone()));
            }
            if task.starts_with("t-cfg") {
                return config_answer(&id, op, v, config(&task, "cfg-peer", None));
            }
            ok(json!({"taskId": task, "id": "cfg-1", "url": url, "token": token}))
        }
        Operation::GetTaskPushNotificationConfig => {
            let (task, cfg) = match v {
                Version::V1 => (&p["taskId"], &p["id"]),
                Version::V03 => (&p["id"], &p["pushNotificationConfigId"]),
            };
            let (task, cfg) = (task.as_str().unwrap_or(""), cfg.as_str().unwrap_or(""));
            config_answer(&id, op, v, config(task, cfg, None))
        }
        Operation::ListTaskPushNotificationConfigs => {
            let task = match v {
                Version::V1 => &p["taskId"],
                Version::V03 => &p["id"],
            };
            let task = task.as_str().unwrap_or("");
            // The config it was given (the gateway's callback), then one of its own making.
            let given = c.push.lock().ok().and_then(|m| m.get(task).cloned());
            let mut configs: Vec<Value> = given
                .map(|(url, _)| config(task, "cfg-1", Some(&url)))
                .into_iter()
                .collect();
            configs.push(config(task, "cfg-peer", None));
            let r = json!({"configs": configs, "nextPageToken": "", "note": plants()[11].text});
            config_answer(&id, op, v, r)
        }
        Operation::GetExtendedAgentCard => {
            axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": c.card})).into_response()
        }
        _ => axum::Json(error(&id, v)).into_response(),
    }
}

/// An SSE answer of `events` (1.0, sent in `v`), then `err` as the last event when given.
fn sse(id: &Value, events: Vec<Value>, err: Option<Value>, v: Version) -> Response {
    let mut items: Vec<Result<Event, Infallible>> = events
        .into_iter()
        .map(|e| {
            let e = match v {
                Version::V1 => e,
                Version::V03 => xlate::event(e, Version::V1, v).unwrap_or(Value::Null),
            };
            let data = json!({"jsonrpc": "2.0", "id": id, "result": e});
            Ok(Event::default().data(data.to_string()))
        })
        .collect();
    if let Some(e) = err {
        items.push(Ok(Event::default().data(e.to_string())));
    }
    Sse::new(futures::stream::iter(items)).into_response()
}
