//! Push notifications: config operations in both versions and bindings, webhook delivery
//! (order, bodies, headers, retries, 410). The network guard's tables: `push_guard.rs`.

use crate::common;

use std::sync::Arc;

use a2a_agent::{AgentCard, AgentConfig, Reply, ServerHandle, handler_fn};
use common::{msg, rest_get, rest_post, rpc, rpc_v, start_with};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Mutex;

// ---------------------------------------------------------------------------------------------
// Webhook receiver and agent helpers.

#[derive(Debug, Clone)]
struct Hit {
    headers: http::HeaderMap,
    body: Value,
}

#[derive(Clone, Default)]
struct Receiver {
    hits: Arc<Mutex<Vec<Hit>>>,
    /// Statuses to answer, in order; then `default`.
    script: Arc<Mutex<VecDeque<u16>>>,
    default: Arc<Mutex<u16>>,
}

impl Receiver {
    async fn start(
        default: u16,
        script: &[u16],
    ) -> (Receiver, String, tokio::task::JoinHandle<()>) {
        let r = Receiver::default();
        *r.default.lock().unwrap() = default;
        r.script.lock().unwrap().extend(script.iter().copied());
        let r2 = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: http::HeaderMap, body: axum::body::Bytes| {
                let r = r2.clone();
                async move {
                    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    r.hits.lock().unwrap().push(Hit { headers, body });
                    let code = r
                        .script
                        .lock()
                        .unwrap()
                        .pop_front()
                        .unwrap_or(*r.default.lock().unwrap());
                    http::StatusCode::from_u16(code).unwrap()
                }
            }),
        );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", l.local_addr().unwrap());
        let j = tokio::spawn(async move {
            axum::serve(l, app).await.unwrap();
        });
        (r, url, j)
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// Wait (bounded) until `n` hits arrived.
    async fn wait_for(&self, n: usize) -> Vec<Hit> {
        for _ in 0..500 {
            if self.hits.lock().unwrap().len() >= n {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.hits()
    }
}

fn push_card(push: bool) -> AgentCard {
    AgentCard::from_json(json!({
        "name": "push-agent", "description": "push tests", "version": "1.0.0",
        "capabilities": {"streaming": true, "pushNotifications": push},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": []
    }))
    .unwrap()
}

fn push_config() -> AgentConfig {
    AgentConfig {
        validate_auth: false,
        allow_local_webhook_urls: true,
        push_retry_attempts: 3,
        push_retry_backoff: a2a_agent::config::Dur::from_millis(2),
        push_timeout: a2a_agent::config::Dur::from_millis(5000),
        ..AgentConfig::default()
    }
}

/// A handler that waits for a permit when the text is "wait", then emits two steps.
async fn agent(push: bool, cfg: AgentConfig) -> (ServerHandle, Arc<tokio::sync::Semaphore>) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let h = handler_fn(move |ctx: a2a_agent::RequestContext| {
        let g = g.clone();
        async move {
            if ctx.text() == "wait" {
                g.acquire().await.unwrap().forget();
            }
            ctx.emit("step one").await;
            ctx.emit("step two").await;
            Ok(Reply::text("done"))
        }
    });
    (start_with(push_card(push), h, cfg).await, gate)
}

fn states(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            h.body
                .pointer("/statusUpdate/status/state")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| {
                    h.body
                        .pointer("/artifactUpdate/artifact/artifactId")
                        .map(|_| "ARTIFACT".to_string())
                        .unwrap_or_default()
                })
        })
        .collect()
}

async fn inline_send(url: &str, hook: &str, extra: Value) -> Value {
    let mut cfg = json!({"url": hook, "token": "tok-1",
        "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}});
    if let (Some(c), Some(e)) = (cfg.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    let (_, r) = rpc(
        url,
        "SendMessage",
        json!({"message": msg("hi"), "configuration": {"taskPushNotificationConfig": cfg}}),
    )
    .await;
    r
}

/// How many deliveries one run of the handler produces with a 200 receiver.
async fn baseline_events() -> usize {
    let (rx, hook, j) = Receiver::start(200, &[]).await;
    let (srv, _) = agent(true, push_config()).await;
    let r = inline_send(srv.url(), &hook, json!({})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{r}"
    );
    // Wait for the terminal delivery.
    let mut n = 0;
    for _ in 0..500 {
        let s = states(&rx.hits());
        if s.last().map(String::as_str) == Some("TASK_STATE_COMPLETED") {
            n = s.len();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    srv.shutdown().await;
    j.abort();
    assert!(n >= 3, "WORKING x2 and COMPLETED at least");
    n
}

#[tokio::test]
async fn v1_inline_config_delivers_ordered_stream_responses_with_auth_headers() {
    let (rx, hook, j) = Receiver::start(200, &[]).await;
    let (srv, _) = agent(true, push_config()).await;
    let r = inline_send(srv.url(), &hook, json!({})).await;
    let task_id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let n = baseline_events().await;
    let hits = rx.wait_for(n).await;
    assert_eq!(hits.len(), n);
    let s = states(&hits);
    assert_eq!(s.last().unwrap(), "TASK_STATE_COMPLETED", "{s:?}");
    // Ordered: the WORKING updates carry "step one" before "step two".
    let texts: Vec<String> = hits
        .iter()
        .filter_map(|h| h.body.pointer("/statusUpdate/status/message/parts/0/text"))
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let one = texts.iter().position(|t| t == "step one").unwrap();
    let two = texts.iter().position(|t| t == "step two").unwrap();
    assert!(one < two, "{texts:?}");
    for h in &hits {
        assert_eq!(h.headers["content-type"], "application/a2a+json");
        assert_eq!(h.headers["authorization"], "Bearer hook-secret");
        assert_eq!(h.headers["x-a2a-notification-token"], "tok-1");
        let tid = h
            .body
            .pointer("/statusUpdate/taskId")
            .or_else(|| h.body.pointer("/artifactUpdate/taskId"))
            .and_then(Value::as_str);
        assert_eq!(tid, Some(task_id.as_str()));
    }
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn v03_config_gets_the_task_in_03_form_and_crud_works() {
    let (rx, hook, j) = Receiver::start(200, &[]).await;
    let (srv, gate) = agent(true, push_config()).await;
    let url = srv.url().to_string();
    // 0.3 send that returns at once and waits for the gate.
    let (_, r) = rpc_v(
        &url,
        "message/send",
        json!({"message": {"kind": "message", "messageId": "m03", "role": "user",
            "parts": [{"kind": "text", "text": "wait"}]},
            "configuration": {"blocking": false}}),
        None,
    )
    .await;
    let task_id = r["result"]["id"].as_str().unwrap().to_string();
    // set / get / list in the 0.3 shapes.
    let (_, set) = rpc_v(
        &url,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": task_id, "pushNotificationConfig": {"id": "c03", "url": hook,
            "token": "t03", "authentication": {"schemes": ["Basic"], "credentials": "dXNlcjpwdw=="}}}),
        None,
    )
    .await;
    assert_eq!(set["result"]["taskId"], task_id, "{set}");
    assert_eq!(
        set["result"]["pushNotificationConfig"]["id"], "c03",
        "{set}"
    );
    let (_, get) = rpc_v(
        &url,
        "tasks/pushNotificationConfig/get",
        json!({"id": task_id, "pushNotificationConfigId": "c03"}),
        None,
    )
    .await;
    assert_eq!(
        get["result"]["pushNotificationConfig"]["url"], hook,
        "{get}"
    );
    let (_, list) = rpc_v(
        &url,
        "tasks/pushNotificationConfig/list",
        json!({"id": task_id}),
        None,
    )
    .await;
    let arr = list["result"].as_array().cloned().unwrap_or_else(|| {
        list["result"]["configs"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    });
    assert_eq!(arr.len(), 1, "{list}");
    gate.add_permits(1);
    let mut hits = Vec::new();
    for _ in 0..500 {
        hits = rx.hits();
        if hits
            .last()
            .is_some_and(|h| h.body["status"]["state"] == "completed")
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let last = hits.last().expect("deliveries");
    assert_eq!(last.body["kind"], "task", "{}", last.body);
    assert_eq!(last.body["id"], task_id);
    assert_eq!(last.body["status"]["state"], "completed");
    for h in &hits {
        assert_eq!(h.headers["content-type"], "application/json");
        assert_eq!(h.headers["authorization"], "Basic dXNlcjpwdw==");
        assert_eq!(h.headers["x-a2a-notification-token"], "t03");
    }
    // delete, then get is a not-found error.
    let (_, del) = rpc_v(
        &url,
        "tasks/pushNotificationConfig/delete",
        json!({"id": task_id, "pushNotificationConfigId": "c03"}),
        None,
    )
    .await;
    assert!(del.get("error").is_none(), "{del}");
    let (_, get) = rpc_v(
        &url,
        "tasks/pushNotificationConfig/get",
        json!({"id": task_id, "pushNotificationConfigId": "c03"}),
        None,
    )
    .await;
    assert_eq!(get["error"]["code"], -32001, "{get}");
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn v1_rest_crud_and_paging() {
    let (srv, gate) = agent(true, push_config()).await;
    let url = srv.url().to_string();
    let (_, r) = rest_post(
        &url,
        "/message:send",
        json!({"message": msg("wait"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    for i in 0..3 {
        let (st, c) = rest_post(
            &url,
            &format!("/tasks/{tid}/pushNotificationConfigs"),
            json!({"id": format!("c{i}"), "url": "http://127.0.0.1:9/hook"}),
        )
        .await;
        assert_eq!(st, 200, "{c}");
        assert_eq!(c["taskId"], tid);
    }
    let (_, p1) = rest_get(
        &url,
        &format!("/tasks/{tid}/pushNotificationConfigs?pageSize=2"),
    )
    .await;
    assert_eq!(p1["configs"].as_array().unwrap().len(), 2, "{p1}");
    let tok = p1["nextPageToken"].as_str().unwrap();
    let (_, p2) = rest_get(
        &url,
        &format!("/tasks/{tid}/pushNotificationConfigs?pageSize=2&pageToken={tok}"),
    )
    .await;
    assert_eq!(p2["configs"][0]["id"], "c2", "{p2}");
    assert!(p2.get("nextPageToken").is_none_or(|t| t == ""), "{p2}");
    let (st, g) = rest_get(&url, &format!("/tasks/{tid}/pushNotificationConfigs/c1")).await;
    assert_eq!((st, g["id"].as_str()), (200, Some("c1")));
    let del = common::client()
        .delete(format!("{url}/tasks/{tid}/pushNotificationConfigs/c1"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 200);
    let (st, _) = rest_get(&url, &format!("/tasks/{tid}/pushNotificationConfigs/c1")).await;
    assert_eq!(st, 404);
    // SSRF refusal: InvalidParams (400).
    let (st, e) = rest_post(
        &url,
        &format!("/tasks/{tid}/pushNotificationConfigs"),
        json!({"url": "http://10.0.0.1/hook"}),
    )
    .await;
    assert_eq!(st, 400, "{e}");
    // Unknown task: 404.
    let (st, _) = rest_post(
        &url,
        "/tasks/nope/pushNotificationConfigs",
        json!({"url": "http://127.0.0.1:9/hook"}),
    )
    .await;
    assert_eq!(st, 404);
    // 0.3 REST create and get on the same task.
    let resp = common::client()
        .post(format!("{url}/v1/tasks/{tid}/pushNotificationConfigs"))
        .json(
            &json!({"name": format!("tasks/{tid}/pushNotificationConfigs/r03"),
            "pushNotificationConfig": {"id": "r03", "url": "http://127.0.0.1:9/hook"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["pushNotificationConfig"]["id"], "r03", "{b}");
    // ... and the 0.3 proto's request with the proto field names (a2a-sdk 1.x's 0.3 client),
    // the config id given only beside the config.
    let resp = common::client()
        .post(format!("{url}/v1/tasks/{tid}/pushNotificationConfigs"))
        .json(
            &json!({"parent": format!("tasks/{tid}"), "config_id": "p03",
            "config": {"push_notification_config": {"url": "http://127.0.0.1:9/p03"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (st, g) = rest_get(&url, &format!("/tasks/{tid}/pushNotificationConfigs/p03")).await;
    assert_eq!(
        (st, g["url"].as_str()),
        (200, Some("http://127.0.0.1:9/p03")),
        "{g}"
    );
    gate.add_permits(1);
    srv.shutdown().await;
}

#[tokio::test]
async fn registration_refuses_ssrf_urls_and_requires_capability() {
    // Production policy: even loopback is refused.
    let cfg = AgentConfig {
        allow_local_webhook_urls: false,
        ..push_config()
    };
    let (srv, gate) = agent(true, cfg).await;
    let url = srv.url().to_string();
    let (_, r) = rpc(
        &url,
        "SendMessage",
        json!({"message": msg("wait"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let tid = r["result"]["task"]["id"].as_str().unwrap().to_string();
    for bad in [
        "http://127.0.0.1:1/hook",
        "https://127.0.0.1/hook",
        "https://169.254.169.254/latest",
        "https://[::ffff:10.0.0.1]/",
        "https://2130706433/",
        "https://metadata.google.internal/",
    ] {
        let (_, e) = rpc(
            &url,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": tid, "url": bad}),
        )
        .await;
        assert_eq!(e["error"]["code"], -32602, "{bad}: {e}");
    }
    // Inline on a send too.
    let (_, e) = rpc(
        &url,
        "SendMessage",
        json!({"message": msg("x"), "configuration": {"taskPushNotificationConfig": {"url": "https://10.0.0.8/"}}}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32602, "{e}");
    gate.add_permits(1);
    srv.shutdown().await;

    // Capability off: -32003 (JSON-RPC) / 400 (REST, the spec table).
    let (srv, _) = agent(false, push_config()).await;
    let url = srv.url().to_string();
    let (_, e) = rpc(
        &url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "t", "url": "http://127.0.0.1:1/"}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32003, "{e}");
    let (_, e) = rpc_v(
        &url,
        "tasks/pushNotificationConfig/get",
        json!({"id": "t"}),
        None,
    )
    .await;
    assert_eq!(e["error"]["code"], -32003, "{e}");
    let (st, _) = rest_get(&url, "/tasks/t/pushNotificationConfigs").await;
    assert_eq!(st, 400);
    srv.shutdown().await;
}

#[tokio::test]
async fn retries_on_503_with_backoff_then_succeeds() {
    let n = baseline_events().await;
    // The first two attempts fail: the first event is delivered three times, the rest once.
    let (rx, hook, j) = Receiver::start(200, &[503, 503]).await;
    let (srv, _) = agent(true, push_config()).await;
    inline_send(srv.url(), &hook, json!({})).await;
    let hits = rx.wait_for(n + 2).await;
    assert_eq!(hits.len(), n + 2);
    assert_eq!(hits[0].body, hits[1].body);
    assert_eq!(hits[1].body, hits[2].body);
    assert_ne!(hits[2].body, hits[3].body);
    assert_eq!(states(&hits).last().unwrap(), "TASK_STATE_COMPLETED");
    srv.shutdown().await;
    j.abort();

    // Always 503: each event is tried 1 + pushRetryAttempts times.
    let (rx, hook, j) = Receiver::start(503, &[]).await;
    let (srv, _) = agent(true, push_config()).await;
    let r = inline_send(srv.url(), &hook, json!({})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "webhook failures never fail the task"
    );
    let hits = rx.wait_for(n * 4).await;
    assert_eq!(hits.len(), n * 4);
    srv.shutdown().await;
    j.abort();
}

#[tokio::test]
async fn no_retry_on_400_and_410_deregisters() {
    let n = baseline_events().await;
    let (rx, hook, j) = Receiver::start(400, &[]).await;
    let (srv, _) = agent(true, push_config()).await;
    inline_send(srv.url(), &hook, json!({})).await;
    let hits = rx.wait_for(n).await;
    // Give any (wrong) retry a chance to show up, then count: one attempt per event.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(rx.hits().len(), n, "{:?}", states(&hits));
    srv.shutdown().await;
    j.abort();

    // The runtime's WORKING update (before the handler waits) is accepted; then 410.
    let (rx, hook, j) = Receiver::start(410, &[200]).await;
    let (srv, gate) = agent(true, push_config()).await;
    let url = srv.url().to_string();
    let (_, r) = rpc(
        &url,
        "SendMessage",
        json!({"message": msg("wait"), "configuration": {"returnImmediately": true,
            "taskPushNotificationConfig": {"id": "g1", "url": hook}}}),
    )
    .await;
    let tid = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let (_, g) = rpc(
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "g1"}),
    )
    .await;
    assert_eq!(g["result"]["id"], "g1", "{g}");
    rx.wait_for(1).await;
    gate.add_permits(1);
    rx.wait_for(2).await;
    let mut gone = false;
    for _ in 0..500 {
        let (_, g) = rpc(
            &url,
            "GetTaskPushNotificationConfig",
            json!({"taskId": tid, "id": "g1"}),
        )
        .await;
        if g["error"]["code"] == -32001 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone, "410 deregisters the config");
    common::wait_task(&url, &tid, |s| s == "TASK_STATE_COMPLETED").await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(rx.hits().len(), 2, "nothing after 410");
    srv.shutdown().await;
    j.abort();
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_configs_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = AgentConfig {
        sqlite_path: Some(dir.path().join("tasks.db")),
        shutdown_grace: a2a_agent::config::Dur::from_millis(50),
        ..push_config()
    };
    let (srv, _gate) = agent(true, cfg.clone()).await;
    let url = srv.url().to_string();
    let (_, r) = rpc(
        &url,
        "SendMessage",
        json!({"message": msg("wait"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let tid = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let (_, c) = rpc(
        &url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "keep", "url": "http://127.0.0.1:9/hook", "token": "t"}),
    )
    .await;
    assert_eq!(c["result"]["id"], "keep", "{c}");
    srv.shutdown().await;

    let (srv, _gate) = agent(true, cfg).await;
    let url = srv.url().to_string();
    let (_, g) = rpc(
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "keep"}),
    )
    .await;
    assert_eq!(g["result"]["token"], "t", "{g}");
    assert_eq!(g["result"]["url"], "http://127.0.0.1:9/hook");
    srv.shutdown().await;
}

#[tokio::test]
async fn inline_config_on_a_follow_up_send_and_on_a_stream() {
    let (rx, hook, j) = Receiver::start(200, &[]).await;
    let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
        if ctx.text() == "first" {
            return Ok(Reply::input_required("more please"));
        }
        Ok(Reply::text("thanks"))
    });
    let srv = start_with(push_card(true), h, push_config()).await;
    let url = srv.url().to_string();
    let (_, r) = rpc(&url, "SendMessage", json!({"message": msg("first")})).await;
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{r}"
    );
    let tid = r["result"]["task"]["id"].as_str().unwrap().to_string();
    assert!(rx.hits().is_empty(), "no config yet");
    // The follow-up turn brings a config: it belongs to the existing task.
    let mut m = msg("second");
    m["taskId"] = tid.clone().into();
    let resp = common::client()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
            "message": m, "configuration": {"taskPushNotificationConfig": {"id": "late", "url": hook}}}}))
        .send()
        .await
        .unwrap();
    let evs = common::sse_events(resp).await;
    assert!(!evs.is_empty());
    let mut hits = Vec::new();
    for _ in 0..500 {
        hits = rx.hits();
        if states(&hits).last().map(String::as_str) == Some("TASK_STATE_COMPLETED") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        states(&hits).last().unwrap(),
        "TASK_STATE_COMPLETED",
        "{:?}",
        states(&hits)
    );
    assert!(hits.iter().all(|h| h.body.to_string().contains(&tid)));
    let (_, g) = rpc(
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "late"}),
    )
    .await;
    assert_eq!(g["result"]["taskId"], tid, "{g}");
    srv.shutdown().await;
    j.abort();
}

/// Figure, not a check: `cargo test -p a2ars-agent --release --test integration push:: -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn measure_delivery_rate() {
    let (rx, hook, j) = Receiver::start(200, &[]).await;
    let h = handler_fn(|ctx: a2a_agent::RequestContext| async move {
        for i in 0..500 {
            ctx.emit(format!("step {i}")).await;
        }
        Ok(Reply::text("done"))
    });
    let srv = start_with(push_card(true), h, push_config()).await;
    let t0 = std::time::Instant::now();
    inline_send(srv.url(), &hook, json!({})).await;
    let emitted = t0.elapsed();
    for _ in 0..3000 {
        if rx.hits.lock().unwrap().len() >= 502 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let n = rx.hits.lock().unwrap().len();
    let all = t0.elapsed();
    println!(
        "push: {n} deliveries to one config in {all:?} ({:.0}/s); task finished after {emitted:?}",
        n as f64 / all.as_secs_f64()
    );
    srv.shutdown().await;
    j.abort();
}
