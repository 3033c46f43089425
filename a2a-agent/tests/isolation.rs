//! Per-caller isolation: every operation of a second caller on the first caller's task is
//! refused exactly like an operation on a missing task, in both versions and both bindings,
//! while the task is live (running) — including a live subscribe and a cancel.

use crate::common;

use a2a_agent::auth::{AuthRequest, Authenticator, CallerProfile};
use a2a_agent::{A2aError, AgentCard, AgentConfig, AgentServer, Reply, handler_fn};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// `X-User: name` is a token subject of issuer `test`.
struct HeaderAuth;

#[async_trait]
impl Authenticator for HeaderAuth {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<CallerProfile, A2aError> {
        let user = req
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| A2aError::new(a2a_agent::ErrorKind::Unauthenticated, "who are you?"))?;
        Ok(CallerProfile {
            scheme: "oauth2".into(),
            subject: Some(user.to_string()),
            issuer: Some("test".into()),
            ..Default::default()
        })
    }
}

struct Env {
    url: String,
    http: reqwest::Client,
}

impl Env {
    async fn call(
        &self,
        user: &str,
        method: reqwest::Method,
        path: &str,
        version: &str,
        body: Option<Value>,
    ) -> (u16, String) {
        let mut r = self
            .http
            .request(method, format!("{}{path}", self.url))
            .header("x-user", user);
        if !version.is_empty() {
            r = r.header("A2A-Version", version);
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let st = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = if ct.starts_with("text/event-stream") {
            // A stream means the operation was accepted: read the first event.
            let mut s = resp.bytes_stream();
            let first = futures::StreamExt::next(&mut s).await;
            format!("STREAM {first:?}")
        } else {
            resp.text().await.unwrap()
        };
        (st, text)
    }

    async fn rpc(&self, user: &str, version: &str, method: &str, params: Value) -> (u16, String) {
        self.call(
            user,
            reqwest::Method::POST,
            "/",
            version,
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})),
        )
        .await
    }
}

fn card() -> AgentCard {
    AgentCard::from_json(json!({
        "name": "iso", "description": "isolation", "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    }))
    .unwrap()
}

fn v03_msg(task: &str) -> Value {
    json!({"message": {"kind": "message", "messageId": common::uuid(), "role": "user",
        "parts": [{"kind": "text", "text": "again"}], "taskId": task}})
}

#[tokio::test]
async fn second_caller_sees_the_first_callers_live_task_as_missing() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let h = handler_fn(move |ctx: a2a_agent::RequestContext| {
        let g = g.clone();
        async move {
            tokio::select! {
                p = g.acquire() => p.unwrap().forget(),
                _ = ctx.cancelled() => return Ok(Reply::text("canceled")),
            }
            ctx.emit("after gate").await;
            Ok(Reply::text("done"))
        }
    });
    let cfg = AgentConfig {
        allow_local_webhook_urls: true,
        ..AgentConfig::default()
    };
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let srv = AgentServer::new(card(), h)
        .config(cfg)
        .authenticator(Arc::new(HeaderAuth))
        .serve(l)
        .await
        .unwrap();
    let env = Env {
        url: srv.url().to_string(),
        http: reqwest::Client::new(),
    };
    // Alice's live task.
    let (_, r) = env
        .rpc(
            "alice",
            "1.0",
            "SendMessage",
            json!({"message": common::msg("wait"), "configuration": {"returnImmediately": true}}),
        )
        .await;
    let r: Value = serde_json::from_str(&r).unwrap();
    let tid = r["result"]["task"]["id"].as_str().unwrap().to_string();
    // Alice registers a push config on it.
    let (_, c) = env
        .rpc(
            "alice",
            "1.0",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": tid, "id": "cfg", "url": "http://127.0.0.1:9/hook"}),
        )
        .await;
    assert!(c.contains("\"cfg\""), "{c}");

    const MISSING: &str = "00000000-0000-0000-0000-000000000000";
    type Op = (
        &'static str,
        reqwest::Method,
        String,
        &'static str,
        Option<Value>,
    );
    let ops = |t: &str| -> Vec<Op> {
        use reqwest::Method as M;
        let rpc = |v: &'static str, m: &str, p: Value| {
            (
                "jsonrpc",
                M::POST,
                "/".to_string(),
                v,
                Some(json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": p})),
            )
        };
        vec![
            // 1.0 JSON-RPC
            rpc("1.0", "GetTask", json!({"id": t})),
            rpc("1.0", "CancelTask", json!({"id": t})),
            rpc("1.0", "SubscribeToTask", json!({"id": t})),
            rpc(
                "1.0",
                "SendMessage",
                json!({"message": {"messageId": "mx", "role": "ROLE_USER",
                    "parts": [{"text": "x"}], "taskId": t}}),
            ),
            rpc(
                "1.0",
                "SendStreamingMessage",
                json!({"message": {"messageId": "my", "role": "ROLE_USER",
                    "parts": [{"text": "x"}], "taskId": t}}),
            ),
            rpc(
                "1.0",
                "CreateTaskPushNotificationConfig",
                json!({"taskId": t, "url": "http://127.0.0.1:9/x"}),
            ),
            rpc(
                "1.0",
                "GetTaskPushNotificationConfig",
                json!({"taskId": t, "id": "cfg"}),
            ),
            rpc(
                "1.0",
                "ListTaskPushNotificationConfigs",
                json!({"taskId": t}),
            ),
            rpc(
                "1.0",
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": t, "id": "cfg"}),
            ),
            // 0.3 JSON-RPC
            rpc("", "tasks/get", json!({"id": t})),
            rpc("", "tasks/cancel", json!({"id": t})),
            rpc("", "tasks/resubscribe", json!({"id": t})),
            rpc("", "message/send", v03_msg(t)),
            rpc("", "message/stream", v03_msg(t)),
            rpc(
                "",
                "tasks/pushNotificationConfig/set",
                json!({"taskId": t, "pushNotificationConfig": {"url": "http://127.0.0.1:9/x"}}),
            ),
            rpc(
                "",
                "tasks/pushNotificationConfig/get",
                json!({"id": t, "pushNotificationConfigId": "cfg"}),
            ),
            rpc("", "tasks/pushNotificationConfig/list", json!({"id": t})),
            rpc(
                "",
                "tasks/pushNotificationConfig/delete",
                json!({"id": t, "pushNotificationConfigId": "cfg"}),
            ),
            // 1.0 REST
            ("rest", M::GET, format!("/tasks/{t}"), "1.0", None),
            ("rest", M::POST, format!("/tasks/{t}:cancel"), "1.0", None),
            (
                "rest",
                M::POST,
                format!("/tasks/{t}:subscribe"),
                "1.0",
                None,
            ),
            (
                "rest",
                M::POST,
                "/message:send".into(),
                "1.0",
                Some(json!({"message": {"messageId": "mz", "role": "ROLE_USER",
                    "parts": [{"text": "x"}], "taskId": t}})),
            ),
            (
                "rest",
                M::POST,
                format!("/tasks/{t}/pushNotificationConfigs"),
                "1.0",
                Some(json!({"url": "http://127.0.0.1:9/x"})),
            ),
            (
                "rest",
                M::GET,
                format!("/tasks/{t}/pushNotificationConfigs"),
                "1.0",
                None,
            ),
            (
                "rest",
                M::GET,
                format!("/tasks/{t}/pushNotificationConfigs/cfg"),
                "1.0",
                None,
            ),
            (
                "rest",
                M::DELETE,
                format!("/tasks/{t}/pushNotificationConfigs/cfg"),
                "1.0",
                None,
            ),
            // 0.3 REST
            ("rest", M::GET, format!("/v1/tasks/{t}"), "", None),
            ("rest", M::POST, format!("/v1/tasks/{t}:cancel"), "", None),
            (
                "rest",
                M::POST,
                format!("/v1/tasks/{t}:subscribe"),
                "",
                None,
            ),
            (
                "rest",
                M::POST,
                "/v1/message:send".into(),
                "",
                Some(json!({"message": {"messageId": "mw", "role": "ROLE_USER",
                    "content": [{"text": "x"}], "taskId": t}})),
            ),
            (
                "rest",
                M::GET,
                format!("/v1/tasks/{t}/pushNotificationConfigs"),
                "",
                None,
            ),
        ]
    };
    let foreign = ops(&tid);
    let missing = ops(MISSING);
    assert!(foreign.len() >= 30);
    for (f, m) in foreign.into_iter().zip(missing) {
        let what = format!("{} {} {} {:?}", f.0, f.1, f.2, f.4);
        let (fs, fb) = env.call("bob", f.1, &f.2, f.3, f.4).await;
        let (ms, mb) = env.call("bob", m.1, &m.2, m.3, m.4).await;
        assert_eq!(fs, ms, "{what}: status");
        assert_eq!(fb.replace(&tid, MISSING), mb, "{what}: body");
        assert!(
            mb.contains("-32001") || mb.contains("TASK_NOT_FOUND") || ms == 404,
            "{what}: {ms} {mb}"
        );
    }
    // Bob's list is empty; Alice's has the task, still working, config still there.
    let (_, l) = env
        .call("bob", reqwest::Method::GET, "/tasks", "1.0", None)
        .await;
    assert!(!l.contains(&tid), "{l}");
    let (_, l) = env
        .call("alice", reqwest::Method::GET, "/tasks", "1.0", None)
        .await;
    assert!(l.contains(&tid), "{l}");
    let (_, g) = env
        .rpc(
            "alice",
            "1.0",
            "GetTaskPushNotificationConfig",
            json!({"taskId": tid, "id": "cfg"}),
        )
        .await;
    assert!(g.contains("\"cfg\""), "bob's delete did nothing: {g}");
    let (_, t) = env.rpc("alice", "1.0", "GetTask", json!({"id": tid})).await;
    assert!(
        t.contains("TASK_STATE_WORKING"),
        "bob's cancel did nothing: {t}"
    );
    // Alice's live subscribe works and sees the rest of the task.
    let sub = env
        .http
        .post(format!("{}/tasks/{tid}:subscribe", env.url))
        .header("x-user", "alice")
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    gate.add_permits(1);
    let evs = common::sse_events(sub).await;
    assert!(evs.len() >= 2, "{evs:?}");
    assert_eq!(evs[0]["task"]["id"], tid);
    srv.shutdown().await;
}

#[tokio::test]
async fn second_caller_cannot_cancel_but_owner_can() {
    let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
        ctx.cancelled().await;
        Ok(Reply::text("stopped"))
    });
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let srv = AgentServer::new(card(), h)
        .authenticator(Arc::new(HeaderAuth))
        .serve(l)
        .await
        .unwrap();
    let url = srv.url().to_string();
    let http = reqwest::Client::new();
    let r: Value = http
        .post(format!("{url}/message:send"))
        .header("x-user", "alice")
        .header("A2A-Version", "1.0")
        .json(&json!({"message": common::msg("x"), "configuration": {"returnImmediately": true}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    let cancel = |user: &'static str| {
        let (http, url, tid) = (http.clone(), url.clone(), tid.clone());
        async move {
            http.post(format!("{url}/tasks/{tid}:cancel"))
                .header("x-user", user)
                .header("A2A-Version", "1.0")
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(cancel("bob").await, 404);
    assert_eq!(cancel("alice").await, 200);
    srv.shutdown().await;
}

async fn card_agent(cap: Option<bool>, extended: bool) -> a2a_agent::ServerHandle {
    let mut c = json!({
        "name": "cards", "description": "public", "version": "1.0.0",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    if let Some(b) = cap {
        c["capabilities"]["extendedAgentCard"] = b.into();
    }
    let h = handler_fn(|_ctx: a2a_agent::RequestContext| async move { Ok(Reply::text("x")) });
    let mut s =
        AgentServer::new(AgentCard::from_json(c).unwrap(), h).authenticator(Arc::new(HeaderAuth));
    if extended {
        s = s.extended_card(
            AgentCard::from_json(json!({
                "name": "cards", "description": "extended for members", "version": "1.0.0",
                "capabilities": {"streaming": true, "extendedAgentCard": true},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "secret", "name": "Secret skill", "description": "members only",
                    "tags": ["x"]}]
            }))
            .unwrap(),
        );
    }
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    s.serve(l).await.unwrap()
}

#[tokio::test]
async fn extended_card_for_authenticated_callers() {
    let srv = card_agent(Some(true), true).await;
    let env = Env {
        url: srv.url().to_string(),
        http: reqwest::Client::new(),
    };
    // 1.0 JSON-RPC, 0.3 JSON-RPC, 1.0 REST, 0.3 REST.
    let (_, b) = env
        .rpc("alice", "1.0", "GetExtendedAgentCard", json!({}))
        .await;
    let b: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(b["result"]["skills"][0]["id"], "secret", "{b}");
    assert_eq!(b["result"]["description"], "extended for members");
    let (_, b) = env
        .rpc(
            "alice",
            "",
            "agent/getAuthenticatedExtendedCard",
            Value::Null,
        )
        .await;
    let b: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(b["result"]["skills"][0]["id"], "secret", "{b}");
    assert!(b["result"]["url"].is_string(), "0.3 card shape: {b}");
    let (st, b) = env
        .call(
            "alice",
            reqwest::Method::GET,
            "/extendedAgentCard",
            "1.0",
            None,
        )
        .await;
    assert_eq!(st, 200, "{b}");
    assert!(b.contains("members only"));
    let (st, b) = env
        .call("alice", reqwest::Method::GET, "/v1/card", "", None)
        .await;
    assert_eq!(st, 200, "{b}");
    let v: Value = serde_json::from_str(&b).unwrap();
    assert!(v["url"].is_string() && b.contains("members only"), "{b}");
    // Unauthenticated: refused, while the public card stays public.
    let r = env
        .http
        .get(format!("{}/extendedAgentCard", env.url))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = env
        .http
        .get(format!("{}/.well-known/agent-card.json", env.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(!r.text().await.unwrap().contains("members only"));
    srv.shutdown().await;

    // Declared but not configured: ExtendedAgentCardNotConfigured (-32007).
    let srv = card_agent(Some(true), false).await;
    let env2 = Env {
        url: srv.url().to_string(),
        http: reqwest::Client::new(),
    };
    let (_, b) = env2
        .rpc("alice", "1.0", "GetExtendedAgentCard", json!({}))
        .await;
    assert!(b.contains("-32007"), "{b}");
    let (_, b) = env2
        .rpc(
            "alice",
            "",
            "agent/getAuthenticatedExtendedCard",
            Value::Null,
        )
        .await;
    assert!(b.contains("-32007"), "{b}");
    srv.shutdown().await;

    // Capability off (even with a card configured): UnsupportedOperation (-32004).
    for cap in [None, Some(false)] {
        let srv = card_agent(cap, true).await;
        let env3 = Env {
            url: srv.url().to_string(),
            http: reqwest::Client::new(),
        };
        let (_, b) = env3
            .rpc("alice", "1.0", "GetExtendedAgentCard", json!({}))
            .await;
        assert!(b.contains("-32004"), "{b}");
        let (st, _) = env3
            .call(
                "alice",
                reqwest::Method::GET,
                "/extendedAgentCard",
                "1.0",
                None,
            )
            .await;
        assert!(st >= 400);
        srv.shutdown().await;
    }
}
