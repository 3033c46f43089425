//! Issue 37 item 2: the agent's last differences from the Camel guide, each observed on the
//! real agent (the library's server, or the binary for a card file) with the spec's table (the
//! default) and with the Camel table (`rest_status_table = "camel"`, the Camel-compatible mode).

use crate::common;

use a2a_agent::AgentConfig;
use a2a_agent::auth::{AuthRequest, Authenticator, CallerProfile};
use a2a_agent::error::RestStatusTable;
use a2a_agent::prelude::*;
use async_trait::async_trait;
use common::*;
use serde_json::{Value, json};

/// Both modes: (the table, its name in TOML).
const MODES: [(RestStatusTable, &str); 2] = [
    (RestStatusTable::Spec, "spec"),
    (RestStatusTable::Camel, "camel"),
];

fn cfg(table: RestStatusTable) -> AgentConfig {
    AgentConfig {
        rest_status_table: table,
        ..open_config()
    }
}

fn streaming_card() -> AgentCard {
    AgentCard::builder("camel-wire", "Camel guide differences", "1.0.0")
        .streaming(true)
        .build()
}

/// A REST 1.0 `message:stream` of `body`; its events.
async fn rest_stream(url: &str, body: Value) -> Vec<Value> {
    let r = client()
        .post(format!("{url}/message:stream"))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    sse_events(r).await
}

/// The text of the first part of `m`.
fn text(m: &Value) -> &str {
    m["parts"][0]["text"].as_str().unwrap_or("")
}

#[cfg(feature = "cli")]
/// A card file with the legacy `security` (card and skill) and no `securityRequirements`: the
/// 1.0 card says `securityRequirements` (no `security`), the 0.3 card `security`, the card
/// without a version header keeps the file's `security` beside; the key is required.
#[tokio::test]
async fn legacy_security_is_served_as_security_requirements() {
    let dir = tempfile::tempdir().unwrap();
    let card = json!({
        "name": "legacy", "description": "a draft card", "version": "1.0.0",
        "capabilities": {},
        "supportedInterfaces": [
            {"url": "http://localhost:1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://localhost:1", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ],
        "securitySchemes": {"apikey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}},
        "security": [{"apikey": []}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": [],
            "security": [{"apikey": ["read"]}]}]
    });
    let card_path = dir.path().join("card.json");
    std::fs::write(&card_path, card.to_string()).unwrap();
    for (_, mode) in MODES {
        let file = dir.path().join("a.toml");
        std::fs::write(
            &file,
            format!("apiKey = \"k-1\"\nrest_status_table = \"{mode}\"\n"),
        )
        .unwrap();
        let b = bin(
            &[
                "--echo",
                "--card",
                card_path.to_str().unwrap(),
                "--config",
                file.to_str().unwrap(),
            ],
            &[],
        );
        let get = |version: Option<&'static str>| {
            let url = b.url.clone();
            async move {
                let mut r = client().get(format!("{url}/.well-known/agent-card.json"));
                if let Some(v) = version {
                    r = r.header("A2A-Version", v);
                }
                r.send().await.unwrap().json::<Value>().await.unwrap()
            }
        };
        let v1 = get(Some("1.0")).await;
        assert_eq!(
            v1["securityRequirements"],
            json!([{"schemes": {"apikey": {"list": []}}}]),
            "{mode}: {v1}"
        );
        assert_eq!(
            v1["skills"][0]["securityRequirements"],
            json!([{"schemes": {"apikey": {"list": ["read"]}}}]),
            "{mode}: {v1}"
        );
        assert!(v1.get("security").is_none(), "{mode}: {v1}");
        assert!(v1["skills"][0].get("security").is_none(), "{mode}: {v1}");
        let v03 = get(Some("0.3")).await;
        assert_eq!(v03["security"], json!([{"apikey": []}]), "{mode}: {v03}");
        assert_eq!(
            v03["skills"][0]["security"],
            json!([{"apikey": ["read"]}]),
            "{mode}: {v03}"
        );
        let bare = get(None).await;
        assert_eq!(bare["security"], json!([{"apikey": []}]), "{mode}: {bare}");
        assert_eq!(bare["securityRequirements"], v1["securityRequirements"]);
        // The requirement is enforced.
        let send = |key: Option<&'static str>| {
            let url = b.url.clone();
            async move {
                let mut r = client()
                    .post(format!("{url}/"))
                    .header("A2A-Version", "1.0")
                    .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": msg("hi")}}));
                if let Some(k) = key {
                    r = r.header("X-API-Key", k);
                }
                r.send().await.unwrap().status().as_u16()
            }
        };
        assert_eq!(
            (send(Some("k-1")).await, send(None).await),
            (200, 401),
            "{mode}"
        );
    }
}

/// The handler reads the request's `configuration` as sent, unknown members included (JSON-RPC
/// and HTTP+JSON; 0.3 translated); `None` without one.
#[tokio::test]
async fn handlers_read_the_request_configuration() {
    for (table, mode) in MODES {
        let h = handler_fn(|ctx: RequestContext| async move {
            Ok(Reply::text(
                ctx.configuration()
                    .cloned()
                    .unwrap_or(Value::Null)
                    .to_string(),
            ))
        });
        let s = start_with(streaming_card(), h, cfg(table)).await;
        let conf = json!({"historyLength": 3, "blocking": true, "x-tone": "formal",
            "x-ext": {"depth": 2}});
        let reply = |v: &Value| -> Value {
            let m = &v["result"]["task"]["status"]["message"];
            serde_json::from_str(text(m)).unwrap_or(Value::Null)
        };
        let (_, v) = rpc(
            s.url(),
            "SendMessage",
            json!({"message": msg("a"), "configuration": conf}),
        )
        .await;
        assert_eq!(reply(&v), conf, "{mode} JSON-RPC: {v}");
        let (_, v) = rest_post(
            s.url(),
            "/message:send",
            json!({"message": msg("b"), "configuration": conf}),
        )
        .await;
        let m = &v["task"]["status"]["message"];
        let got: Value = serde_json::from_str(text(m)).unwrap();
        assert_eq!(got, conf, "{mode} HTTP+JSON: {v}");
        let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("c")})).await;
        assert_eq!(reply(&v), Value::Null, "{mode}: {v}");
        // 0.3: its members in 1.0 terms, unknown ones kept.
        let (_, v) = rpc_v(
            s.url(),
            "message/send",
            json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
                "parts": [{"kind": "text", "text": "d"}]},
                "configuration": {"blocking": true, "x-tone": "formal"}}),
            Some("0.3"),
        )
        .await;
        let got: Value = serde_json::from_str(
            v["result"]["status"]["message"]["parts"][0]["text"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(got["x-tone"], "formal", "{mode} 0.3: {v}");
        assert_eq!(got["returnImmediately"], false, "{mode} 0.3: {v}");
        // 0.3 HTTP+JSON (its `pushNotification` spelling is known, not passed on).
        let r = client()
            .post(format!("{}/v1/message:send", s.url()))
            .header("content-type", "application/json")
            .json(
                &json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
                "content": [{"text": "e"}]},
                "configuration": {"blocking": true, "x-tone": "formal"}}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{mode} 0.3 REST");
        let v: Value = r.json().await.unwrap();
        let t = v["task"]["status"]["update"]["content"][0]["text"]
            .as_str()
            .or_else(|| v["task"]["status"]["message"]["content"][0]["text"].as_str())
            .unwrap_or_else(|| panic!("{mode} 0.3 REST: {v}"));
        let got: Value = serde_json::from_str(t).unwrap();
        assert_eq!(got["x-tone"], "formal", "{mode} 0.3 REST: {v}");
        s.shutdown().await;
    }
}

/// Sub-task texts computed from the work's result and error; the id named on every progress
/// message of the scope; without a name, the id is the call site, the same on every run.
#[tokio::test]
async fn sub_task_texts_come_from_the_result_or_the_error_and_the_id_is_stable() {
    fn scope<T>() -> SubTask<T> {
        SubTask::new()
    }
    let (a, b) = (
        scope::<()>().stable_id().into_owned(),
        scope::<u8>().stable_id().into_owned(),
    );
    assert_eq!(a, b, "one call site, one id");
    assert!(a.contains("camel_wire.rs:"), "{a}");
    assert_ne!(a, SubTask::<()>::new().stable_id(), "another call site");
    assert_eq!(SubTask::<()>::new().id("draft").stable_id(), "draft");

    for (table, mode) in MODES {
        let h = handler_fn(|ctx: RequestContext| async move {
            let found = ctx
                .sub_task(
                    SubTask::new()
                        .id("search-docs")
                        .before("Searching docs...")
                        .after_with(|docs: &Vec<&str>| format!("Docs found: {}", docs.len())),
                    async { Ok(vec!["a", "b", "c"]) },
                )
                .await?;
            let failed = ctx
                .sub_task(
                    SubTask::<()>::new()
                        .id("draft-answer")
                        .after("never")
                        .on_error(|e| format!("Error drafting answer: {e}")),
                    async { Err(HandlerError::failed("no model")) },
                )
                .await;
            let e = failed.expect_err("the work's error propagates");
            Ok(Reply::text(format!("{} docs; {e}", found.len())))
        });
        let s = start_with(streaming_card(), h, cfg(table)).await;
        let evs = rest_stream(s.url(), json!({"message": msg("go")})).await;
        let progress: Vec<(String, Value)> = evs
            .iter()
            .filter(|e| e["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING")
            .map(|e| &e["statusUpdate"]["status"]["message"])
            .filter(|m| m.is_object())
            .map(|m| (text(m).to_owned(), m["metadata"]["subTaskId"].clone()))
            .collect();
        assert_eq!(
            progress,
            vec![
                ("Searching docs...".into(), json!("search-docs")),
                ("Docs found: 3".into(), json!("search-docs")),
                (
                    "Error drafting answer: no model".into(),
                    json!("draft-answer")
                ),
            ],
            "{mode}: {evs:?}"
        );
        let last = evs.last().unwrap();
        assert_eq!(
            text(&last["statusUpdate"]["status"]["message"]),
            "3 docs; no model",
            "{mode}: {last}"
        );
        s.shutdown().await;
    }
}

/// `emit_message_event`: with the Camel table a `Message` event in the task's stream (which
/// goes on to the end), with the spec's a WORKING status update carrying the message; in the
/// task's history either way.
#[tokio::test]
async fn an_intermediate_message_is_a_message_event_in_the_camel_mode() {
    for (table, mode) in MODES {
        let h = handler_fn(|ctx: RequestContext| async move {
            ctx.emit_message_event(Message::agent_text("Intermediate finding..."))
                .await;
            Ok(Reply::text("Final answer"))
        });
        let s = start_with(streaming_card(), h, cfg(table)).await;
        for binding in ["HTTP+JSON", "JSON-RPC"] {
            let evs: Vec<Value> = if binding == "HTTP+JSON" {
                rest_stream(s.url(), json!({"message": msg("go")})).await
            } else {
                stream_text(s.url(), "go")
                    .await
                    .into_iter()
                    .map(|e| e["result"].clone())
                    .collect()
            };
            let messages: Vec<&Value> = evs.iter().filter_map(|e| e.get("message")).collect();
            let carried: Vec<&Value> = evs
                .iter()
                .map(|e| &e["statusUpdate"]["status"]["message"])
                .filter(|m| text(m) == "Intermediate finding...")
                .collect();
            let task_id = evs[0]["task"]["id"].as_str().unwrap().to_owned();
            if table == RestStatusTable::Camel {
                assert_eq!(messages.len(), 1, "{mode} {binding}: {evs:?}");
                assert_eq!(text(messages[0]), "Intermediate finding...");
                assert_eq!(messages[0]["role"], "ROLE_AGENT");
                assert_eq!(messages[0]["taskId"], json!(task_id));
                assert!(carried.is_empty(), "{mode} {binding}: {evs:?}");
            } else {
                assert!(messages.is_empty(), "{mode} {binding}: {evs:?}");
                assert_eq!(carried.len(), 1, "{mode} {binding}: {evs:?}");
            }
            // The stream goes on to the end.
            let last = evs.last().unwrap();
            assert_eq!(
                last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
                "{mode} {binding}: {evs:?}"
            );
            let (_, t) = rpc(s.url(), "GetTask", json!({"id": task_id})).await;
            let history: Vec<&str> = t["result"]["history"]
                .as_array()
                .unwrap()
                .iter()
                .map(text)
                .collect();
            assert!(
                history.contains(&"Intermediate finding..."),
                "{mode} {binding}: {history:?}"
            );
        }
        s.shutdown().await;
    }
}

/// A handler that waits until its task is canceled.
fn waiting() -> impl Handler {
    handler_fn(|ctx: RequestContext| async move {
        ctx.cancelled().await;
        Ok(Reply::Empty)
    })
}

/// The capacity refusal: 429 / -32000 `ResourceExhaustedError` in both tables; its ErrorInfo
/// reason `RESOURCE_EXHAUSTED` (spec) or `SERVER_BUSY` (the Camel guide's `ServerBusyError`).
#[tokio::test]
async fn the_capacity_refusal_is_server_busy_in_the_camel_mode() {
    for (table, mode) in MODES {
        let c = AgentConfig {
            max_concurrent_tasks: 1,
            ..cfg(table)
        };
        let s = start_with(streaming_card(), waiting(), c).await;
        let first = send_async(s.url(), "one").await;
        let reason = if table == RestStatusTable::Camel {
            "SERVER_BUSY"
        } else {
            "RESOURCE_EXHAUSTED"
        };
        let (st, v) = rest_post(s.url(), "/message:send", json!({"message": msg("two")})).await;
        assert_eq!(st, 429, "{mode}: {v}");
        assert_eq!(v["error"]["status"], "RESOURCE_EXHAUSTED", "{mode}: {v}");
        assert_eq!(v["error"]["details"][0]["reason"], reason, "{mode}: {v}");
        let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("three")})).await;
        assert_eq!(v["error"]["code"], -32000, "{mode}: {v}");
        assert_eq!(v["error"]["data"][0]["reason"], reason, "{mode}: {v}");
        let (_, c) = rpc(s.url(), "CancelTask", json!({"id": first})).await;
        assert!(c["result"].is_object(), "{mode}: {c}");
        s.shutdown().await;
    }
}

/// A push operation on an agent without push support: `PushNotificationNotSupportedError`
/// (-32003, 400) with the spec's table, `UnsupportedOperationError` (-32004, 405) with Camel's.
#[tokio::test]
async fn push_without_support_is_unsupported_operation_in_the_camel_mode() {
    for (table, mode) in MODES {
        let s = start_with(streaming_card(), waiting(), cfg(table)).await;
        let id = send_async(s.url(), "one").await;
        let (code, status, reason) = if table == RestStatusTable::Camel {
            (-32004, 405, "UNSUPPORTED_OPERATION")
        } else {
            (-32003, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
        };
        let (_, v) = rpc(
            s.url(),
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": "https://example.com/hook"}),
        )
        .await;
        assert_eq!(v["error"]["code"], code, "{mode}: {v}");
        let (st, v) = rest_get(s.url(), &format!("/tasks/{id}/pushNotificationConfigs")).await;
        assert_eq!(st, status, "{mode}: {v}");
        assert_eq!(v["error"]["details"][0]["reason"], reason, "{mode}: {v}");
        // An inline push config of a send too.
        let (_, v) = rpc(
            s.url(),
            "SendMessage",
            json!({"message": msg("x"), "configuration": {"returnImmediately": true,
                "taskPushNotificationConfig": {"url": "https://example.com/hook"}}}),
        )
        .await;
        assert_eq!(v["error"]["code"], code, "{mode}: {v}");
        let _ = rpc(s.url(), "CancelTask", json!({"id": id})).await;
        s.shutdown().await;
    }
}

/// `X-User: name` is a token subject of issuer `test`.
struct HeaderAuth;

#[async_trait]
impl Authenticator for HeaderAuth {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError> {
        let user = req
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| A2aError::new(ErrorKind::Unauthenticated, "who are you?"))?;
        Ok(CallerProfile {
            scheme: "oauth2".into(),
            subject: Some(user.to_string()),
            issuer: Some("test".into()),
            ..Default::default()
        })
    }
}

/// Another caller's task: 404 `TaskNotFoundError` with the spec's table (as for a missing
/// task), 403 `AuthorizationError` (-32000) with Camel's, for every operation on it; a missing
/// task stays 404 in both.
#[tokio::test]
async fn a_foreign_task_is_403_in_the_camel_mode() {
    for (table, mode) in MODES {
        let card = AgentCard::builder("owned", "tasks per caller", "1.0.0")
            .streaming(true)
            .push_notifications(true)
            .build();
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = AgentConfig {
            validate_auth: true,
            allow_local_webhook_urls: true,
            rest_status_table: table,
            ..AgentConfig::default()
        };
        let s = AgentServer::new(card, waiting())
            .config(c)
            .authenticator(std::sync::Arc::new(HeaderAuth))
            .serve(l)
            .await
            .unwrap();
        let url = s.url().to_owned();
        let call = |user: &'static str, method: &'static str, params: Value| {
            let url = url.clone();
            async move {
                let r = client()
                    .post(format!("{url}/"))
                    .header("A2A-Version", "1.0")
                    .header("x-user", user)
                    .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
                    .send()
                    .await
                    .unwrap();
                r.json::<Value>().await.unwrap()
            }
        };
        let rest = |user: &'static str, get: bool, path: String| {
            let url = url.clone();
            async move {
                let r = if get {
                    client().get(format!("{url}{path}"))
                } else {
                    client().post(format!("{url}{path}"))
                };
                let r = r
                    .header("A2A-Version", "1.0")
                    .header("x-user", user)
                    .send()
                    .await
                    .unwrap();
                let st = r.status().as_u16();
                (st, r.json::<Value>().await.unwrap_or(Value::Null))
            }
        };
        let v = call(
            "ada",
            "SendMessage",
            json!({"message": msg("mine"), "configuration": {"returnImmediately": true}}),
        )
        .await;
        let id = v["result"]["task"]["id"].as_str().unwrap().to_owned();
        let (code, status, reason) = if table == RestStatusTable::Camel {
            (-32000, 403, "AUTHORIZATION")
        } else {
            (-32001, 404, "TASK_NOT_FOUND")
        };
        let mut cont = msg("yours?");
        cont["taskId"] = json!(id);
        for (method, params) in [
            ("GetTask", json!({"id": id})),
            ("CancelTask", json!({"id": id})),
            ("SubscribeToTask", json!({"id": id})),
            ("SendMessage", json!({"message": cont})),
            (
                "CreateTaskPushNotificationConfig",
                json!({"taskId": id, "url": "http://127.0.0.1:9/hook"}),
            ),
        ] {
            let v = call("bob", method, params).await;
            assert_eq!(v["error"]["code"], code, "{mode} {method}: {v}");
            assert_eq!(
                v["error"]["data"][0]["reason"], reason,
                "{mode} {method}: {v}"
            );
        }
        for (get, path) in [
            (true, format!("/tasks/{id}")),
            (false, format!("/tasks/{id}:cancel")),
        ] {
            let (st, v) = rest("bob", get, path.clone()).await;
            assert_eq!(st, status, "{mode} {path}: {v}");
            assert_eq!(
                v["error"]["details"][0]["reason"], reason,
                "{mode} {path}: {v}"
            );
        }
        // A missing task is 404 in both.
        let (st, _) = rest("bob", true, "/tasks/no-such-task".into()).await;
        assert_eq!(st, 404, "{mode}");
        // The owner still reaches it.
        let v = call("ada", "CancelTask", json!({"id": id})).await;
        assert!(v["result"].is_object(), "{mode}: {v}");
        s.shutdown().await;
    }
}

#[cfg(feature = "cli")]
/// Events a slow subscriber loses are logged at warn, once per 10 s however many overflow.
#[test]
fn dropped_stream_events_are_logged_at_warn_rate_limited() {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    for (table, mode) in MODES {
        let buf = Buf::default();
        let w = buf.clone();
        let sub = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || w.clone())
            .finish();
        let _g = tracing::subscriber::set_default(sub);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // 40 updates into a queue of 4: dozens of overflows.
        let c = AgentConfig {
            sse_queue_capacity: 4,
            ..cfg(table)
        };
        let got = rt.block_on(unread_stream_with(40, c));
        assert!(got.len() < 41, "{mode}: events were dropped");
        let logs = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let warns: Vec<&str> = logs
            .lines()
            .filter(|l| l.contains("WARN") && l.contains("events dropped"))
            .collect();
        assert_eq!(warns.len(), 1, "{mode}: {logs}");
        assert!(warns[0].contains("DropNewest"), "{mode}: {}", warns[0]);
    }
}
