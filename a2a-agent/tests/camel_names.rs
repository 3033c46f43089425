//! The Camel guide's route parameters read as written (issue 37, items 1 and 4): each row of
//! docs/settings-map.md's Camel table set by its Camel name in the `--config` file of the real
//! binary, and the behaviour observed; values that cannot be honoured refuse the start, naming
//! the key. Also the deprecated names of the settings convention (issue 34, item 8).

use crate::common;

use a2a_agent::AgentConfig;
use a2a_agent::config::Dur;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Writes `toml` (and `card`, when given) into `dir` and starts the binary with them.
fn start(dir: &Path, toml: &str, card: Option<Value>, args: &[&str]) -> Bin {
    let file = dir.join("camel.toml");
    std::fs::write(&file, toml).unwrap();
    let mut all = vec!["--config".to_owned(), file.to_str().unwrap().to_owned()];
    if let Some(c) = card {
        let p = dir.join("card.json");
        std::fs::write(&p, c.to_string()).unwrap();
        all.extend(["--card".to_owned(), p.to_str().unwrap().to_owned()]);
    }
    all.extend(args.iter().map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    bin(&all, &[])
}

/// A card with these `capabilities` and security schemes (every one required, alone).
fn card(caps: Value, schemes: Value) -> Value {
    let reqs: Vec<Value> = schemes
        .as_object()
        .map(|o| {
            o.keys()
                .map(|k| json!({"schemes": {k: {"list": []}}}))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "name": "camel", "description": "copied from a route", "version": "1.0.0",
        "capabilities": caps, "securitySchemes": schemes, "securityRequirements": reqs,
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    })
}

async fn card_json(url: &str) -> Value {
    client()
        .get(format!("{url}/.well-known/agent-card.json"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `a2a-agent serve --check-config` with `toml` as the file: (success, stderr).
fn check(toml: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.toml");
    std::fs::write(&file, toml).unwrap();
    let mut c = Command::new(crate::common::AGENT_BIN);
    c.args([
        "serve",
        "--echo",
        "--check-config",
        "--config",
        file.to_str().unwrap(),
    ])
    .args(args)
    .env_remove("A2A_AGENT_LOG");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Rows: the card from parameters (`name`, `description`, `version`), `protocolBinding` with
/// each value the Camel guide names, `basePath`.
#[tokio::test]
async fn card_binding_and_base_path_by_their_camel_names() {
    let dir = tempfile::tempdir().unwrap();
    let b = start(
        dir.path(),
        "name = \"Weather Agent\"\ndescription = \"Provides weather forecasts\"\n\
         version = \"1.0.0\"\nvalidateAuth = false\n",
        None,
        &["--echo"],
    );
    let c = card_json(&b.url).await;
    assert_eq!(
        (&c["name"], &c["description"], &c["version"]),
        (
            &json!("Weather Agent"),
            &json!("Provides weather forecasts"),
            &json!("1.0.0")
        ),
        "{c}"
    );
    drop(b);
    // (value as written, the binding served, the one not served: (REST status, JSON-RPC status))
    for (value, served, other_status) in [
        ("JSONRPC", "JSONRPC", (404, 200)),
        ("HTTP+JSON", "HTTP+JSON", (200, 404)),
        ("jsonrpc", "JSONRPC", (404, 200)),
        ("rest", "HTTP+JSON", (200, 404)),
    ] {
        let b = start(
            dir.path(),
            &format!("protocolBinding = \"{value}\"\nvalidateAuth = false\n"),
            None,
            &["--echo"],
        );
        let c = card_json(&b.url).await;
        let bindings: Vec<&str> = c["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["protocolBinding"].as_str().unwrap())
            .collect();
        assert!(
            !bindings.is_empty() && bindings.iter().all(|x| *x == served),
            "{value}: {bindings:?}"
        );
        let (rest, _) = rest_post(&b.url, "/message:send", json!({"message": msg("hi")})).await;
        let (rpc_status, _) = rpc(&b.url, "SendMessage", json!({"message": msg("hi")})).await;
        assert_eq!((rest, rpc_status), other_status, "{value}");
    }
    let b = start(
        dir.path(),
        "basePath = \"/a2a\"\nvalidateAuth = false\n",
        None,
        &["--echo"],
    );
    // The printed URL (and the card's) is the base path.
    let root = b
        .url
        .strip_suffix("/a2a")
        .expect("the URL ends with the base path");
    let (st, v) = rpc(
        &format!("{root}/a2a"),
        "SendMessage",
        json!({"message": msg("under the base path")}),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    assert!(v["result"].is_object(), "{v}");
    let c = card_json(&b.url).await;
    assert!(
        c["supportedInterfaces"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/a2a"),
        "{c}"
    );
    let (st, _) = rpc(root, "SendMessage", json!({"message": msg("at the root")})).await;
    assert_eq!(st, 404, "nothing is served outside basePath");
}

/// A file, a card, the request's header and the expected HTTP+JSON status.
type Row<'a> = (&'a str, &'a Value, Option<(&'a str, &'a str)>, u16);

/// Rows: `validateAuth`, `apiKey`, `apiKeyHeader`, `bearerToken`.
#[tokio::test]
async fn authentication_by_its_camel_names() {
    let dir = tempfile::tempdir().unwrap();
    let open = card(json!({}), json!({}));
    let api_key = card(
        json!({}),
        json!({"apikey": {"apiKeySecurityScheme": {"location": "header"}}}),
    );
    let bearer = card(
        json!({}),
        json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}}),
    );
    let rows: &[Row] = &[
        ("validateAuth = false", &open, None, 200),
        ("validateAuth = true", &open, None, 401),
        (
            "apiKey = \"k-1\"\napiKeyHeader = \"X-API-Key\"",
            &api_key,
            Some(("X-API-Key", "k-1")),
            200,
        ),
        (
            "apiKey = \"k-1\"\napiKeyHeader = \"X-API-Key\"",
            &api_key,
            Some(("Authorization", "k-1")),
            401,
        ),
        (
            "bearerToken = \"t-1\"",
            &bearer,
            Some(("Authorization", "Bearer t-1")),
            200,
        ),
        ("bearerToken = \"t-1\"", &bearer, None, 401),
    ];
    for (toml, card, header, want) in rows {
        let b = start(dir.path(), toml, Some((*card).clone()), &["--echo"]);
        let mut r = client()
            .post(format!("{}/message:send", b.url))
            .header("content-type", "application/a2a+json")
            .header("A2A-Version", "1.0")
            .json(&json!({"message": msg("hi")}));
        if let Some((k, v)) = header {
            r = r.header(*k, *v);
        }
        let st = r.send().await.unwrap().status().as_u16();
        assert_eq!(st, *want, "{toml} with {header:?}");
    }
}

/// Rows: `returnImmediately`, `asyncTimeout` (ms), `maxConcurrentTasks`, `taskQueueSize`
/// (the busy refusal), `maxPayloadSize`, `sseHeartbeatInterval` (ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_and_limits_by_their_camel_names() {
    let dir = tempfile::tempdir().unwrap();
    let streaming = card(json!({"streaming": true}), json!({}));
    let b = start(
        dir.path(),
        "validateAuth = false\nreturnImmediately = true\nasyncTimeout = 2000\n\
         maxConcurrentTasks = 1\ntaskQueueSize = 1\nmaxPayloadSize = 3000\n",
        Some(streaming.clone()),
        &["--exec", "sleep 30; cat"],
    );
    // returnImmediately: the task comes back unfinished.
    let (_, first) = rpc(&b.url, "SendMessage", json!({"message": msg("one")})).await;
    let first_id = first["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert_ne!(
        state(&first["result"]["task"]),
        "TASK_STATE_COMPLETED",
        "{first}"
    );
    // taskQueueSize 1: the second async send queues; the third is refused as busy.
    let (_, second) = rpc(&b.url, "SendMessage", json!({"message": msg("two")})).await;
    assert_eq!(
        state(&second["result"]["task"]),
        "TASK_STATE_SUBMITTED",
        "{second}"
    );
    let (st, third) = rest_post(&b.url, "/message:send", json!({"message": msg("3")})).await;
    assert_eq!(st, 429, "{third}");
    // The spec's name for it (the Camel guide's table says ServerBusyError), "server busy".
    assert_eq!(third["error"]["status"], "RESOURCE_EXHAUSTED", "{third}");
    assert!(
        third["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("server busy"),
        "{third}"
    );
    let (_, third) = rpc(&b.url, "SendMessage", json!({"message": msg("three")})).await;
    assert_eq!(third["error"]["code"], -32000, "{third}");
    // asyncTimeout 2000 (ms): the 30 s command fails.
    let t = wait_task(&b.url, &first_id, |s| s == "TASK_STATE_FAILED").await;
    assert_eq!(state(&t), "TASK_STATE_FAILED");
    // maxPayloadSize 3000 (bytes): 413 on HTTP+JSON.
    let big = "x".repeat(4000);
    let (st, _) = rest_post(&b.url, "/message:send", json!({"message": msg(&big)})).await;
    assert_eq!(st, 413);
    drop(b);
    // sseHeartbeatInterval 100 (ms): comment lines while the command runs.
    let b = start(
        dir.path(),
        "validateAuth = false\nsseHeartbeatInterval = 100\n",
        Some(streaming),
        &["--exec", "sleep 1; cat"],
    );
    let resp = client()
        .post(format!("{}/message:stream", b.url))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .json(&json!({"message": msg("beat")}))
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    let comments = text.lines().filter(|l| l.starts_with(':')).count();
    assert!(comments >= 2, "heartbeat comments every 100 ms: {text}");
}

/// A webhook on 127.0.0.1:0 answering 503 and counting the deliveries of a final status.
async fn failing_webhook() -> (String, Arc<Mutex<usize>>) {
    let finals = Arc::new(Mutex::new(0usize));
    let f = finals.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let f = f.clone();
            async move {
                let v: Value = serde_json::from_slice(&body).unwrap_or_default();
                if v["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED" {
                    *f.lock().unwrap() += 1;
                }
                axum::http::StatusCode::SERVICE_UNAVAILABLE
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, finals)
}

/// Rows: `allowLocalWebhookUrls`, `pushRetryAttempts`, `pushRetryBackoffMs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_delivery_by_its_camel_names() {
    let dir = tempfile::tempdir().unwrap();
    let push = card(json!({"pushNotifications": true}), json!({}));
    let (hook, finals) = failing_webhook().await;
    // Without allowLocalWebhookUrls a loopback webhook is refused.
    let b = start(
        dir.path(),
        "validateAuth = false\n",
        Some(push.clone()),
        &["--exec", "sleep 1; cat"],
    );
    let (_, v) = rpc(
        &b.url,
        "SendMessage",
        json!({"message": msg("x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (_, c) = rpc(
        &b.url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "url": hook}),
    )
    .await;
    assert_eq!(c["error"]["code"], -32602, "{c}");
    drop(b);
    let b = start(
        dir.path(),
        "validateAuth = false\nallowLocalWebhookUrls = true\npushRetryAttempts = 2\n\
         pushRetryBackoffMs = 20\n",
        Some(push),
        &["--exec", "sleep 1; cat"],
    );
    let (_, v) = rpc(
        &b.url,
        "SendMessage",
        json!({"message": msg("x"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (_, c) = rpc(
        &b.url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "url": hook}),
    )
    .await;
    assert!(c["result"].is_object(), "allowed: {c}");
    wait_task(&b.url, &id, |s| s == "TASK_STATE_COMPLETED").await;
    // The first attempt and 2 retries (20 ms, 40 ms), then no more (bounded wait).
    for _ in 0..300 {
        if *finals.lock().unwrap() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(*finals.lock().unwrap(), 3);
}

/// Row: `camel.rest.enableCors`, as a table and as a quoted dotted key.
#[tokio::test]
async fn cors_by_the_camel_rest_name() {
    let dir = tempfile::tempdir().unwrap();
    for (toml, allowed) in [
        ("[camel.rest]\nenableCors = true\n", true),
        ("\"camel.rest.enableCors\" = true\n", true),
        ("\"camel.rest.enableCors\" = false\n", false),
    ] {
        let b = start(
            dir.path(),
            &format!("validateAuth = false\n{toml}"),
            None,
            &["--echo"],
        );
        let r = client()
            .request(reqwest::Method::OPTIONS, format!("{}/message:send", b.url))
            .header("Origin", "http://browser.example")
            .header("Access-Control-Request-Method", "POST")
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.headers().contains_key("access-control-allow-origin"),
            allowed,
            "{toml}"
        );
    }
}

/// Row `sseQueueCapacity`: a subscriber that reads nothing keeps that many events (and the
/// final one); a larger capacity keeps them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_queue_capacity_by_its_camel_name() {
    // (capacity, fewest and most events the subscriber gets: 20 progress updates and the end)
    for (capacity, least, most) in [(4usize, 1usize, 5usize), (100, 21, 30)] {
        let cfg = AgentConfig::from_toml(&format!(
            "sseQueueCapacity = {capacity}\nvalidateAuth = false\n"
        ))
        .unwrap();
        assert_eq!(cfg.sse_queue_capacity, capacity);
        let got = unread_stream_with(20, cfg).await;
        assert!(
            (least..=most).contains(&got.len()),
            "capacity {capacity}: {} events",
            got.len()
        );
    }
}

/// Rows `dataFormat` (each value the Camel guide names: the text and the message JSON are both
/// there) and `httpServerComponent` (each value: colon paths are literal, so `/message:stream`
/// streams and `/message:send` answers once, as with jetty and undertow).
#[tokio::test]
async fn data_format_and_http_server_component_by_their_camel_names() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["PAYLOAD", "POJO", "RAW"] {
        let b = start(
            dir.path(),
            &format!("validateAuth = false\ndataFormat = \"{format}\"\n"),
            None,
            &[
                "--exec",
                "printf '%s|' \"$(cat)\"; printf '%s' \"$A2A_MESSAGE\"",
            ],
        );
        let m = msg("payload text");
        let (_, v) = rpc(&b.url, "SendMessage", json!({"message": m})).await;
        let out = v["result"]["task"]["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{format}: {v}"));
        let (text, raw) = out.split_once('|').unwrap();
        assert_eq!(text, "payload text", "{format}");
        let raw: Value = serde_json::from_str(raw).unwrap();
        assert_eq!(raw["messageId"], m["messageId"], "{format}: {raw}");
    }
    let streaming = card(json!({"streaming": true}), json!({}));
    for component in ["platform-http", "jetty", "undertow"] {
        let b = start(
            dir.path(),
            &format!("validateAuth = false\nhttpServerComponent = \"{component}\"\n"),
            Some(streaming.clone()),
            &["--echo"],
        );
        let r = client()
            .post(format!("{}/message:stream", b.url))
            .header("content-type", "application/a2a+json")
            .header("A2A-Version", "1.0")
            .json(&json!({"message": msg("s")}))
            .send()
            .await
            .unwrap();
        let events = sse_events(r).await;
        assert!(events.len() >= 2, "{component}: a stream: {events:?}");
        let (st, v) = rest_post(&b.url, "/message:send", json!({"message": msg("u")})).await;
        assert_eq!(st, 200, "{component}");
        assert!(
            v["task"].is_object() || v["message"].is_object(),
            "{component}: {v}"
        );
    }
}

/// Row: the Camel guide's error table, set by its TOML name (`rest_status_table = "camel"`):
/// 409 for a terminal cancel, 405 for push on an agent without push, 403 for a foreign task's
/// reason name; the spec's table otherwise.
#[tokio::test]
async fn the_camel_error_table_by_its_setting() {
    let dir = tempfile::tempdir().unwrap();
    for (table, cancel, push) in [("camel", 409, 405), ("spec", 400, 400)] {
        let b = start(
            dir.path(),
            &format!("validateAuth = false\nrest_status_table = \"{table}\"\n"),
            None,
            &["--echo"],
        );
        let (_, v) = rpc(&b.url, "SendMessage", json!({"message": msg("done")})).await;
        let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
        let (st, v) = rest_post(&b.url, &format!("/tasks/{id}:cancel"), json!({})).await;
        assert_eq!(st, cancel, "{table}: {v}");
        let (st, v) = rest_get(&b.url, &format!("/tasks/{id}/pushNotificationConfigs")).await;
        assert_eq!(st, push, "{table}: {v}");
    }
}

/// Values that cannot be honoured refuse the start naming the key; accepted ones with nothing
/// to set are noted; the `camel.oauth` client is the introspection client.
#[test]
fn camel_values_are_honoured_or_refused_naming_the_key() {
    for (toml, key) in [
        ("agentCard = \"#myCard\"", "agentCard"),
        ("oauthProfile = \"keycloak\"", "oauthProfile"),
        (
            "[camel.oauth.kc]\ntoken-endpoint = \"http://kc/token\"",
            "camel.oauth.kc.token-endpoint",
        ),
        ("protocolBinding = \"GRPC\"", "protocolBinding"),
        ("dataFormat = \"XML\"", "dataFormat"),
        ("asyncTimeout = \"soon\"", "asyncTimeout"),
        ("validateAuth = \"maybe\"", "validateAuth"),
        (
            "returnImmediately = true\nreturn_immediately = false",
            "returnImmediately",
        ),
    ] {
        let (ok, err) = check(toml, &[], &[]);
        assert!(!ok && err.contains(key), "{toml}: {err}");
    }
    for (toml, note) in [
        ("dataFormat = \"RAW\"", "dataFormat"),
        ("httpServerComponent = \"undertow\"", "httpServerComponent"),
    ] {
        let (ok, err) = check(toml, &[], &[]);
        assert!(ok && err.contains(note), "{toml}: {err}");
    }
    let c = AgentConfig::from_toml(
        "oidc_introspection_url = \"https://kc/introspect\"\n\
         [camel.oauth.kc]\nclient-id = \"agent\"\nclient-secret = \"s\"\n",
    )
    .unwrap();
    let oidc = c.oidc().unwrap();
    assert_eq!(
        (oidc.client_id.as_deref(), oidc.client_secret.as_deref()),
        (Some("agent"), Some("s"))
    );
}

/// Issue 34 item 8: durations with units under one name; the old names (file, environment,
/// flags) still read, each with a warning naming the old and the new; switches with `--no-`.
#[test]
fn old_names_still_read_with_a_warning() {
    let c = AgentConfig::from_toml("async_timeout_ms = 250\nidempotency_window_s = 60").unwrap();
    assert_eq!(
        (c.async_timeout, c.idempotency_window),
        (Dur::from_millis(250), Dur::from_secs(60))
    );
    let c = AgentConfig::from_toml("async_timeout = \"250ms\"\npush_timeout = \"2s\"").unwrap();
    assert_eq!(
        (c.async_timeout, c.push_timeout),
        (Dur::from_millis(250), Dur::from_secs(2))
    );
    let err = AgentConfig::from_toml("async_timeout = 300")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unit"), "{err}");
    let (ok, err) = check(
        "shutdown_grace_ms = 20\n",
        &["--push-timeout-ms", "1500", "--grpc", "false"],
        &[("A2A_AGENT_OIDC_MIN_REFRESH_MS", "1000")],
    );
    assert!(ok, "{err}");
    for (old, new) in [
        ("shutdown_grace_ms", "shutdown_grace = \"20ms\""),
        ("--push-timeout-ms", "--push-timeout=1500ms"),
        ("--grpc false", "--no-grpc"),
        (
            "A2A_AGENT_OIDC_MIN_REFRESH_MS",
            "A2A_AGENT_OIDC_MIN_REFRESH=1000ms",
        ),
    ] {
        assert!(
            err.lines()
                .any(|l| l.contains("WARN") && l.contains(old) && l.contains(new)),
            "{old} -> {new}: {err}"
        );
    }
    let (ok, err) = check("", &["--no-validate-auth", "--grpc"], &[]);
    assert!(ok && !err.contains("WARN"), "{err}");
    let help = Command::new(crate::common::AGENT_BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for switch in ["--no-validate-auth", "--no-return-immediately", "--no-grpc"] {
        assert!(help.contains(switch), "{switch}");
    }
}
