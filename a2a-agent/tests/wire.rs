//! Wire behaviour of issue #12 on real servers: the HTTP+JSON status tables (spec default, the
//! Camel guide's as a setting), JSON-RPC 401, request ids echoed on pre-dispatch errors, 0.3
//! streaming failures as one SSE error event, and the card forms per `A2A-Version`.

use crate::common;

use a2a_agent::error::RestStatusTable;
use a2a_agent::{AgentCard, AgentConfig};
use common::*;
use serde_json::{Value, json};

async fn completed_task(url: &str) -> String {
    let (st, v) = rest_post(url, "/message:send", json!({"message": msg("done")})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    v["task"]["id"].as_str().unwrap().to_string()
}

/// (status, body) of the four rows whose status differs between the tables.
async fn table_rows(url: &str) -> Vec<(&'static str, u16, Value)> {
    let id = completed_task(url).await;
    let mut out = Vec::new();
    let (st, v) = rest_post(url, &format!("/tasks/{id}:cancel"), json!({})).await;
    out.push(("cancel terminal", st, v));
    let r = post_1_0(format!("{url}/tasks/{id}:subscribe")).await;
    let st = r.status().as_u16();
    out.push(("subscribe terminal", st, r.json().await.unwrap()));
    let mut m = msg("again");
    m["taskId"] = json!(id);
    let (st, v) = rest_post(url, "/message:send", json!({"message": m})).await;
    out.push(("send on terminal", st, v));
    let r = post_text_plain(format!("{url}/message:send")).await;
    let st = r.status().as_u16();
    out.push(("content type", st, r.json().await.unwrap()));
    out
}

#[tokio::test]
async fn rest_statuses_follow_the_spec_table_by_default() {
    assert_eq!(
        AgentConfig::default().rest_status_table,
        RestStatusTable::Spec
    );
    let s = echo(open_config()).await;
    let reasons = [
        "TASK_NOT_CANCELABLE",
        "UNSUPPORTED_OPERATION",
        "UNSUPPORTED_OPERATION",
        "CONTENT_TYPE_NOT_SUPPORTED",
    ];
    for ((what, st, v), reason) in table_rows(s.url()).await.into_iter().zip(reasons) {
        assert_eq!(st, 400, "{what}: {v}");
        assert_eq!(
            v["error"]["code"], 400,
            "{what}: body code = HTTP status: {v}"
        );
        assert_eq!(v["error"]["details"][0]["reason"], reason, "{what}: {v}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn rest_statuses_follow_the_camel_table_when_set() {
    let cfg = AgentConfig {
        rest_status_table: RestStatusTable::Camel,
        ..open_config()
    };
    let s = echo(cfg).await;
    let want = [409, 405, 405, 415];
    for ((what, st, v), want) in table_rows(s.url()).await.into_iter().zip(want) {
        assert_eq!(st, want, "{what}: {v}");
        assert_eq!(
            v["error"]["code"], want,
            "{what}: body code = HTTP status: {v}"
        );
    }
    // Rows the tables share are unchanged: not found 404, empty body 400.
    let (st, v) = rest_get(s.url(), "/tasks/nope").await;
    assert_eq!((st, v["error"]["code"].clone()), (404, json!(404)), "{v}");
    s.shutdown().await;
}

#[cfg(feature = "cli")]
#[test]
fn rest_status_table_parses_from_toml_and_text() {
    let c = AgentConfig::from_toml("rest_status_table = \"camel\"").unwrap();
    assert_eq!(c.rest_status_table, RestStatusTable::Camel);
    assert!(AgentConfig::from_toml("rest_status_table = \"dvara\"").is_err());
    assert_eq!(
        "SPEC".parse::<RestStatusTable>().unwrap(),
        RestStatusTable::Spec
    );
    assert!("x".parse::<RestStatusTable>().is_err());
}

async fn raw_rpc(
    url: &str,
    headers: &[(&str, &str)],
    body: &'static str,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = client()
        .post(format!("{url}/"))
        .header("content-type", "application/json");
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let r = r.body(body).send().await.unwrap();
    let st = r.status().as_u16();
    let h = r.headers().clone();
    (st, h, r.json().await.unwrap())
}

#[tokio::test]
async fn jsonrpc_auth_failure_is_401_with_challenge_and_id() {
    let s = echo(AgentConfig::default()).await; // validate_auth, no scheme: every call refused
    let body = r#"{"jsonrpc":"2.0","id":"req-9","method":"GetTask","params":{"id":"x"}}"#;
    let (st, h, v) = raw_rpc(s.url(), &[("A2A-Version", "1.0")], body).await;
    assert_eq!(st, 401, "{v}");
    assert!(h.get("www-authenticate").is_some(), "{h:?}");
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], "req-9", "{v}");
    assert_eq!(v["error"]["code"], -32000, "{v}");
    // 0.3 form too.
    let body = r#"{"jsonrpc":"2.0","id":12,"method":"tasks/get","params":{"id":"x"}}"#;
    let (st, _, v) = raw_rpc(s.url(), &[], body).await;
    assert_eq!(st, 401, "{v}");
    assert_eq!(v["id"], 12, "{v}");
    s.shutdown().await;
}

#[tokio::test]
async fn jsonrpc_pre_dispatch_errors_echo_the_id() {
    let card = AgentCard::builder("ext", "d", "1")
        .extension("urn:x:required", true)
        .build();
    let s = start_with(
        card,
        a2a_agent::demo::echo_handler(),
        AgentConfig {
            max_payload_size: 512,
            ..open_config()
        },
    )
    .await;
    let body = r#"{"jsonrpc":"2.0","id":41,"method":"GetTask","params":{"id":"x"}}"#;
    // Unsupported version.
    let (st, _, v) = raw_rpc(s.url(), &[("A2A-Version", "9.9")], body).await;
    assert_eq!(v["error"]["code"], -32009, "{v}");
    assert_eq!(v["id"], 41, "version: {st} {v}");
    // Required extension missing.
    let (_, _, v) = raw_rpc(s.url(), &[("A2A-Version", "1.0")], body).await;
    assert_eq!(v["error"]["code"], -32008, "{v}");
    assert_eq!(v["id"], 41, "extension: {v}");
    // Wrong content type (the body is still JSON-RPC).
    let r = client()
        .post(format!("{}/", s.url()))
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", "urn:x:required")
        .header("content-type", "text/plain")
        .body(body)
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32005, "{v}");
    assert_eq!(v["id"], 41, "content type: {v}");
    // Over the limit: the body is not read, the id stays null.
    let big: &'static str = Box::leak(
        format!(
            r#"{{"jsonrpc":"2.0","id":41,"method":"GetTask","params":{{"id":"{}"}}}}"#,
            "x".repeat(1024)
        )
        .into_boxed_str(),
    );
    let (st, _, v) = raw_rpc(s.url(), &[("A2A-Version", "1.0")], big).await;
    assert_eq!(st, 413, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    s.shutdown().await;
}

async fn sse_text(resp: reqwest::Response) -> (String, String) {
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (ct, resp.text().await.unwrap())
}

#[tokio::test]
async fn v03_stream_failures_are_one_sse_error_event() {
    let s = echo(open_config()).await;
    for (method, params) in [
        ("tasks/resubscribe", json!({"id": "missing"})),
        (
            "message/stream",
            json!({"message": {"kind": "message", "messageId": "m1", "role": "user",
                "parts": [{"kind": "text", "text": "x"}], "taskId": "missing"}}),
        ),
    ] {
        let r = client()
            .post(format!("{}/", s.url()))
            .json(&json!({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": params}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{method}");
        let (ct, text) = sse_text(r).await;
        assert!(ct.starts_with("text/event-stream"), "{method}: {ct} {text}");
        let events: Vec<Value> = text
            .split("\n\n")
            .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data:")))
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect();
        assert_eq!(events.len(), 1, "{method}: {text}");
        assert_eq!(events[0]["id"], "s-1", "{method}: {text}");
        assert_eq!(events[0]["error"]["code"], -32001, "{method}: {text}");
    }
    // 1.0 keeps the plain JSON error.
    let (_, v) = rpc(s.url(), "SubscribeToTask", json!({"id": "missing"})).await;
    assert_eq!(v["error"]["code"], -32001, "{v}");
    s.shutdown().await;
}

async fn card(url: &str, version: Option<&str>) -> (reqwest::header::HeaderMap, Value) {
    let mut r = client().get(format!("{url}/.well-known/agent-card.json"));
    if let Some(v) = version {
        r = r.header("A2A-Version", v);
    }
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 200);
    let h = r.headers().clone();
    (h, r.json().await.unwrap())
}

#[tokio::test]
async fn card_forms_per_version_and_last_modified() {
    let s = echo(open_config()).await;
    let (h, v1) = card(s.url(), Some("1.0")).await;
    for k in [
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
    ] {
        assert!(v1.get(k).is_none(), "1.0 card has {k}: {v1}");
    }
    assert!(v1["supportedInterfaces"].as_array().unwrap().len() >= 2);
    let lm = h
        .get("last-modified")
        .expect("Last-Modified")
        .to_str()
        .unwrap()
        .to_string();
    assert!(lm.ends_with(" GMT") && lm.len() == 29, "{lm}");
    assert!(h.get("etag").is_some());
    let (_, bare) = card(s.url(), None).await;
    assert!(
        bare["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    assert!(bare["preferredTransport"].is_string(), "{bare}");
    assert!(bare["supportedInterfaces"].is_array(), "{bare}");
    // Both versions listed: the 0.3 card names the 0.3 HTTP+JSON interface as well.
    let (_, old) = card(s.url(), Some("0.3")).await;
    let mut transports: Vec<&str> = old["additionalInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["transport"].as_str())
        .collect();
    transports.extend(old["preferredTransport"].as_str());
    assert!(transports.contains(&"HTTP+JSON"), "{old}");
    assert!(transports.contains(&"JSONRPC"), "{old}");
    // If-Modified-Since with the same date: 304.
    let r = client()
        .get(format!("{}/.well-known/agent-card.json", s.url()))
        .header("If-Modified-Since", &lm)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    s.shutdown().await;

    // Only 1.0 interfaces: the header-less card gets no 0.3 members invented.
    let card_json = json!({
        "name": "one", "description": "d", "version": "1",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]
    });
    let s = start_with(
        AgentCard::from_json(card_json).unwrap(),
        a2a_agent::demo::echo_handler(),
        open_config(),
    )
    .await;
    let (_, bare) = card(s.url(), None).await;
    for k in ["url", "preferredTransport", "protocolVersion"] {
        assert!(
            bare.get(k).is_none(),
            "header-less 1.0-only card has {k}: {bare}"
        );
    }
    s.shutdown().await;
}
