//! PII in evasion forms end to end (issue 39, items 3 and 4), through a real gateway and real
//! peers: each form (fullwidth and Arabic-Indic digits, zero-width characters, no-break spaces
//! and en dashes, percent-encoding, base64, dotted groups) in a request's text, metadata, raw
//! text part, file name and split across two text parts; in a peer's answer text, metadata,
//! artifact name and description, raw text part, binary part and split parts; in a peer's error
//! reason; and split across two stream chunks of one artifact. In a `block` workspace no value
//! is delivered (to the peer or the caller); in a `redact` workspace every value is replaced.

use std::collections::HashMap;

use a2a_agent::handler::{HandlerError, Reply, RequestContext};
use a2a_agent::model::{Artifact, Message, Part};
use a2a_gateway::errors::Version;
use axum::body::Body;
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};

use crate::common::gov::{Fut, admin, agent, artifact_text};
use crate::common::{Env, card_peer, env, gw_code, send10};

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// Each evasion form: its name and the value as sent.
fn forms() -> Vec<(&'static str, String)> {
    vec![
        (
            "fullwidth card",
            "４１１１ １１１１ １１１１ １１１１".into(),
        ),
        ("arabic-indic ssn", "١٢٣-٤٥-٦٧٨٩".into()),
        (
            "zero-width email",
            "ann\u{200B}.lee@exa\u{200D}mple.org".into(),
        ),
        (
            "no-break space and en dash phone",
            "+44\u{00A0}20\u{2013}7946\u{2013}0958".into(),
        ),
        ("percent-encoded email", "ann.lee%40example.org".into()),
        ("base64 email", b64("write to ann.lee@example.org")),
        ("dotted iban", "DE89.3704.0044.0532.0130.00".into()),
    ]
}

/// The value cut in two at a character boundary near its middle.
fn halves(v: &str) -> (&str, &str) {
    let mut mid = v.len() / 2;
    while !v.is_char_boundary(mid) {
        mid += 1;
    }
    v.split_at(mid)
}

/// Whether `delivered` shows the value or either half of it.
fn shows(delivered: &str, v: &str) -> bool {
    let (a, b) = halves(v);
    delivered.contains(v) || delivered.contains(a) || delivered.contains(b)
}

/// `v` as text, with every `raw` member's bytes decoded beside it (a redacted inline file
/// carries its placeholder inside its base64).
fn readable(v: &Value) -> String {
    fn raws(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("raw", Value::String(s)) => {
                            let bytes = base64::engine::general_purpose::STANDARD
                                .decode(s)
                                .unwrap_or_default();
                            out.push_str(&String::from_utf8_lossy(&bytes));
                        }
                        _ => raws(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| raws(x, out)),
            _ => {}
        }
    }
    let mut out = v.to_string();
    raws(v, &mut out);
    out
}

/// The peer answering with form `i` at the place its request names (`PLACE i`).
fn peer(ctx: RequestContext) -> Fut {
    Box::pin(async move {
        let text = ctx.text();
        let mut words = text.split_whitespace();
        let place = words.next().unwrap_or("").to_owned();
        let i: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        let v = forms()[i].1.clone();
        let (a, b) = halves(&v);
        let msg = |m: Value| -> Result<Reply, HandlerError> {
            let m: Message =
                serde_json::from_value(m).map_err(|e| HandlerError::failed(e.to_string()))?;
            Ok(Reply::Message(m))
        };
        let raw = |media: &str| {
            let mut p = Part::raw(format!("data {v}\n").into_bytes());
            p.media_type = Some(media.into());
            p
        };
        match place.as_str() {
            "answer-text" => Ok(Reply::Text(format!("here: {v}"))),
            "answer-metadata" => msg(json!({"messageId": "m1", "role": "ROLE_AGENT",
                "parts": [{"text": "see metadata"}],
                "metadata": {"note": v, v.clone(): {"deep": [v]}}})),
            "answer-artifact" => {
                let art: Artifact = serde_json::from_value(json!({"artifactId": "a1",
                    "name": format!("file of {v}"), "description": v, "parts": [{"text": "ok"}]}))
                .map_err(|e| HandlerError::failed(e.to_string()))?;
                Ok(Reply::Artifacts(vec![art]))
            }
            "answer-raw" => Ok(Reply::Parts(vec![raw("text/plain")])),
            "answer-binary" => Ok(Reply::Parts(vec![raw("application/octet-stream")])),
            "answer-split" => Ok(Reply::Parts(vec![
                Part::text(format!("mail {a}")),
                Part::text(format!("{b} thanks")),
            ])),
            "stream-chunks" => {
                let art = |t: String| Artifact {
                    artifact_id: "out".into(),
                    parts: vec![Part::text(t)],
                    ..Artifact::new(vec![])
                };
                ctx.emit_artifact(art(format!("see {a}")), false, false)
                    .await;
                ctx.emit_artifact(art(format!("{b} now")), true, true).await;
                Ok(Reply::Empty)
            }
            _ => Ok(Reply::Text("nothing".into())),
        }
    })
}

/// A JSON-RPC peer whose every answer is an error with form `v` in its ErrorInfo reason.
async fn error_peer(v: &str) -> (String, tokio::task::JoinHandle<()>) {
    let body = json!({"jsonrpc": "2.0", "id": "1", "error": {"code": -32001,
        "message": format!("no task for {v}"),
        "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                  "reason": format!("TASK_NOT_FOUND {v}"), "domain": "a2a-protocol.org"}]}})
    .to_string();
    card_peer(move || {
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(body.clone()))
            .unwrap()
    })
    .await
}

/// The caller's requests carrying form `v` at each place: (place, params of SendMessage).
fn requests(v: &str) -> Vec<(&'static str, Value)> {
    let (a, b) = halves(v);
    let with_parts = |parts: Value| {
        let mut r = send10("x");
        r["params"]["message"]["parts"] = parts;
        r
    };
    let mut meta = send10("see metadata");
    meta["params"]["message"]["metadata"] = json!({"note": v});
    meta["params"]["metadata"] = json!({v: {"ext": [v]}});
    vec![
        ("request text", send10(&format!("mail {v}"))),
        ("request metadata", meta),
        (
            "request raw text part",
            with_parts(json!([{"raw": b64(&format!("data {v}\n")), "mediaType": "text/plain"}])),
        ),
        (
            "request file name",
            with_parts(json!([{"url": "https://files.example/f", "filename": format!("{v}.pdf")}])),
        ),
        (
            "request split parts",
            with_parts(json!([{"text": format!("mail {a}")}, {"text": format!("{b} thanks")}])),
        ),
    ]
}

const ANSWERS: [&str; 6] = [
    "answer-text",
    "answer-metadata",
    "answer-artifact",
    "answer-raw",
    "answer-binary",
    "answer-split",
];

async fn setup(
    rules: Value,
) -> (
    Env,
    a2a_agent::server::ServerHandle,
    Vec<tokio::task::JoinHandle<()>>,
) {
    let env = env(Version::V1).await;
    let leak = agent(peer).await;
    env.register("ws1", "leaky", leak.url(), None);
    let mut joins = Vec::new();
    for (i, (_, v)) in forms().iter().enumerate() {
        let (url, join) = error_peer(v).await;
        env.register("ws1", &format!("err{i}"), &url, None);
        joins.push(join);
    }
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/pii", Some(rules)).await;
    assert_eq!(s, 200, "{b}");
    (env, leak, joins)
}

/// Every place, every form: what reached the peer and the caller; `failures` lists leaks.
async fn run(env: &Env, block: bool) -> Vec<String> {
    let mut failures = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(what);
        }
    };
    for (i, (form, v)) in forms().iter().enumerate() {
        for (place, req) in requests(v) {
            let before = readable(&env.peers[0].last_body());
            let (_, body) = env.rpc("/a2a/echo", Some("1.0"), req).await;
            let seen = readable(&env.peers[0].last_body());
            let what = format!("{form} in {place}");
            if block {
                check(
                    gw_code(&body) == "a2a_pii_blocked",
                    format!("{what}: not blocked: {body}"),
                );
                check(
                    seen == before,
                    format!("{what}: the peer was called: {seen}"),
                );
            } else {
                check(body["result"].is_object(), format!("{what}: {body}"));
                check(!shows(&seen, v), format!("{what}: the peer got {seen}"));
                check(
                    seen.contains("[REDACTED:"),
                    format!("{what}: no placeholder in {seen}"),
                );
            }
            check(
                !shows(&readable(&body), v),
                format!("{what}: the caller got {body}"),
            );
        }
        for place in ANSWERS {
            let (_, body) = env
                .rpc("/a2a/leaky", Some("1.0"), send10(&format!("{place} {i}")))
                .await;
            let what = format!("{form} in {place}");
            let t = readable(&body);
            check(!shows(&t, v), format!("{what}: the caller got {t}"));
            if block {
                check(
                    gw_code(&body) == "a2a_pii_blocked",
                    format!("{what}: not blocked: {t}"),
                );
            } else {
                check(
                    t.contains("[REDACTED:"),
                    format!("{what}: no placeholder in {t}"),
                );
            }
        }
        // A peer's error: its reason is governed.
        let (_, body) = env
            .rpc(&format!("/a2a/err{i}"), Some("1.0"), send10("hello"))
            .await;
        let t = body.to_string();
        let what = format!("{form} in a peer's error reason");
        check(!shows(&t, v), format!("{what}: the caller got {t}"));
        if block {
            check(
                gw_code(&body) == "a2a_pii_blocked",
                format!("{what}: not blocked: {t}"),
            );
        } else {
            check(
                gw_code(&body) == "a2a_upstream_error" && t.contains("[REDACTED:"),
                format!("{what}: {t}"),
            );
        }
        // Split across two chunks of one artifact.
        let mut req = send10(&format!("stream-chunks {i}"));
        req["method"] = json!("SendStreamingMessage");
        let (_, _, events) = env.sse("/a2a/leaky", Some("1.0"), req).await;
        let all = serde_json::to_string(&events).unwrap();
        let what = format!("{form} split across stream chunks");
        check(!shows(&all, v), format!("{what}: the caller got {all}"));
        if block {
            let last = events.last().cloned().unwrap_or(Value::Null);
            check(
                gw_code(&last) == "a2a_pii_blocked",
                format!("{what}: {all}"),
            );
        } else {
            check(
                artifact_text(&events).contains("[REDACTED:"),
                format!("{what}: {all}"),
            );
        }
    }
    failures
}

#[tokio::test]
async fn evasion_forms_are_redacted_everywhere() {
    let (env, leak, joins) = setup(json!({"default_action": "redact"})).await;
    let failures = run(&env, false).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The audit has types and counts, never a value.
    let hops = env.store.audit(Some("ws1"), None, 0, 1000).unwrap();
    let all = serde_json::to_string(&hops).unwrap();
    for (form, v) in forms() {
        assert!(!shows(&all, &v), "{form} in the audit");
    }
    // A binary part scanned as text is recorded in the hop's evidence.
    assert!(all.contains("scan_as_text"), "{all}");
    env.stop().await;
    leak.shutdown().await;
    joins.iter().for_each(|j| j.abort());
}

#[tokio::test]
async fn evasion_forms_are_blocked_everywhere() {
    let (env, leak, joins) = setup(json!({"default_action": "block"})).await;
    let failures = run(&env, true).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A binary part is refused by default under a block rule, and the evidence says so.
    let hops = env.store.audit(Some("ws1"), None, 0, 1000).unwrap();
    let evidence: HashMap<String, usize> = hops
        .iter()
        .filter_map(|h| h.governance.as_ref())
        .flat_map(|g| g["decisions"].as_array().cloned().unwrap_or_default())
        .filter(|d| d["rule"] == "binary_parts")
        .fold(HashMap::new(), |mut m, d| {
            *m.entry(d["decision"].as_str().unwrap_or("").to_owned())
                .or_default() += 1;
            m
        });
    assert!(
        evidence.get("refuse").is_some_and(|n| *n >= forms().len()),
        "{evidence:?}"
    );
    env.stop().await;
    leak.shutdown().await;
    joins.iter().for_each(|j| j.abort());
}
