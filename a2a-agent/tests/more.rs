//! Integration tests: 0.3 bindings, auth, extensions, stores, slow subscribers, CORS, exec, binary.

use crate::common;

use a2a_agent::auth::CallerProfile;
use a2a_agent::handler::SubTask;
use a2a_agent::model::{StreamResponse, TaskState};
use a2a_agent::tasks::Emitter;
use a2a_agent::{
    AgentCard, AgentConfig, ExtensionHandler, HandlerError, Reply, RequestContext, handler_fn,
};
use common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

// ---------- 0.3 ----------

fn msg03(text: &str) -> Value {
    json!({"kind": "message", "messageId": uuid(), "role": "user", "parts": [{"kind": "text", "text": text}]})
}

#[tokio::test]
async fn v03_jsonrpc_send_get_cancel_and_errors() {
    let s = echo(open_config()).await;
    let (st, v) = rpc_v(
        s.url(),
        "message/send",
        json!({"message": msg03("hi 0.3")}),
        None,
    )
    .await;
    assert_eq!(st, 200);
    let t = &v["result"];
    assert_eq!(t["kind"], "task", "{v}");
    assert_eq!(t["status"]["state"], "completed");
    assert_eq!(t["status"]["message"]["parts"][0]["text"], "hi 0.3");
    let id = t["id"].as_str().unwrap();
    let (_, v) = rpc_v(
        s.url(),
        "tasks/get",
        json!({"id": id, "historyLength": 1}),
        Some("0.3"),
    )
    .await;
    assert_eq!(v["result"]["history"].as_array().unwrap().len(), 1);
    let (_, v) = rpc_v(s.url(), "tasks/cancel", json!({"id": id}), None).await;
    assert_eq!(v["error"]["code"], -32002);
    let (_, v) = rpc_v(s.url(), "tasks/get", json!({"id": "nope"}), None).await;
    assert_eq!(v["error"]["code"], -32001);
    // 0.3 errors carry an object `data`, not the 1.0 array
    assert!(v["error"]["data"].is_object(), "{v}");
    let (_, v) = rpc_v(s.url(), "message/bogus", json!({}), None).await;
    assert_eq!(v["error"]["code"], -32601);
    // 1.0 method with a 0.3 header is unknown
    let (_, v) = rpc_v(
        s.url(),
        "SendMessage",
        json!({"message": msg("x")}),
        Some("0.3"),
    )
    .await;
    assert_eq!(v["error"]["code"], -32601);
    // blocking=false (0.3) returns at once
    let (_, v) = rpc_v(
        s.url(),
        "message/send",
        json!({"message": msg03("slow"), "configuration": {"blocking": false}}),
        None,
    )
    .await;
    let st = v["result"]["status"]["state"].as_str().unwrap();
    assert!(st == "submitted" || st == "working", "{v}");
    let id = v["result"]["id"].as_str().unwrap();
    let (_, v) = rpc_v(s.url(), "tasks/cancel", json!({"id": id}), None).await;
    assert_eq!(v["result"]["status"]["state"], "canceled");
    s.shutdown().await;
}

#[tokio::test]
async fn v03_jsonrpc_stream_ends_with_final() {
    let s = echo(open_config()).await;
    let resp = client()
        .post(format!("{}/", s.url()))
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "message/stream", "params": {"message": msg03("stream it")}}))
        .send()
        .await
        .unwrap();
    let evs = sse_events(resp).await;
    assert_eq!(evs[0]["result"]["kind"], "task", "{evs:?}");
    let last = &evs.last().unwrap()["result"];
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    assert!(evs.iter().any(|e| e["result"]["kind"] == "artifact-update"));
    s.shutdown().await;
}

#[tokio::test]
async fn v03_rest_send_get_and_stream() {
    let s = echo(open_config()).await;
    let body = json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": "rest 0.3"}]}});
    let r = client()
        .post(format!("{}/v1/message:send", s.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    let t = &v["task"];
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    let id = t["id"].as_str().unwrap();
    let r = client()
        .get(format!("{}/v1/tasks/{id}", s.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client()
        .get(format!("{}/v1/tasks/nope", s.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["code"], -32001);
    let body = json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "content": [{"text": "stream"}]}});
    let r = client()
        .post(format!("{}/v1/message:stream", s.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    let evs = sse_events(r).await;
    assert!(evs[0].get("task").is_some(), "{evs:?}");
    let last = evs.last().unwrap();
    assert_eq!(last["statusUpdate"]["final"], true, "{evs:?}");
    s.shutdown().await;
}

// ---------- auth ----------

fn key_card(location: &str) -> AgentCard {
    AgentCard::builder("k", "d", "1")
        .api_key_scheme("key", location, "X-API-Key")
        .build()
}

fn auth_cfg() -> AgentConfig {
    AgentConfig {
        api_key: Some("sekret".into()),
        bearer_token: Some("tok".into()),
        ..AgentConfig::default()
    }
}

#[tokio::test]
async fn api_key_header_query_cookie() {
    for loc in ["header", "query", "cookie"] {
        let s = start_with(key_card(loc), a2a_agent::demo::echo_handler(), auth_cfg()).await;
        let body =
            json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message": msg("x")}});
        let no = client()
            .post(format!("{}/", s.url()))
            .header("A2A-Version", "1.0")
            .json(&body)
            .send()
            .await
            .unwrap();
        let v: Value = no.json().await.unwrap();
        assert_eq!(v["error"]["code"], -32000, "{loc}: {v}");
        assert_eq!(v["error"]["data"][0]["reason"], "AUTHENTICATION");
        let wrong = client()
            .post(format!("{}/message:send", s.url()))
            .header("A2A-Version", "1.0")
            .header("X-API-Key", "nope")
            .json(&json!({"message": msg("x")}))
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401, "{loc}");
        let req = client()
            .post(format!("{}/", s.url()))
            .header("A2A-Version", "1.0")
            .json(&body);
        let req = match loc {
            "header" => req.header("X-API-Key", "sekret"),
            "query" => client()
                .post(format!("{}/?X-API-Key=sekret", s.url()))
                .header("A2A-Version", "1.0")
                .json(&body),
            _ => req.header("cookie", "a=b; X-API-Key=sekret"),
        };
        let v: Value = req.send().await.unwrap().json().await.unwrap();
        assert_eq!(
            state(&v["result"]["task"]),
            "TASK_STATE_COMPLETED",
            "{loc}: {v}"
        );
        // the card stays public
        let r = client()
            .get(format!("{}/.well-known/agent-card.json", s.url()))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        s.shutdown().await;
    }
}

#[tokio::test]
async fn bearer_and_or_of_and_requirements() {
    let card = AgentCard::builder("b", "d", "1")
        .bearer_scheme("bearer")
        .build();
    let s = start_with(card, a2a_agent::demo::echo_handler(), auth_cfg()).await;
    let (st, _) = rest_get(s.url(), "/tasks").await;
    assert_eq!(st, 401);
    let r = client()
        .get(format!("{}/tasks", s.url()))
        .header("A2A-Version", "1.0")
        .bearer_auth("tok")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = client()
        .get(format!("{}/tasks", s.url()))
        .header("A2A-Version", "1.0")
        .bearer_auth("tok2")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    s.shutdown().await;
    // AND: both schemes in one requirement
    let mut v = AgentCard::builder("b", "d", "1")
        .bearer_scheme("bearer")
        .api_key_scheme("key", "header", "X-API-Key")
        .build()
        .json()
        .clone();
    v["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}, "key": {"list": []}}}]);
    let s = start_with(
        AgentCard::from_json(v.clone()).unwrap(),
        a2a_agent::demo::echo_handler(),
        auth_cfg(),
    )
    .await;
    let only_bearer = client()
        .get(format!("{}/tasks", s.url()))
        .header("A2A-Version", "1.0")
        .bearer_auth("tok")
        .send()
        .await
        .unwrap();
    assert_eq!(only_bearer.status(), 401);
    let both = client()
        .get(format!("{}/tasks", s.url()))
        .header("A2A-Version", "1.0")
        .bearer_auth("tok")
        .header("X-API-Key", "sekret")
        .send()
        .await
        .unwrap();
    assert_eq!(both.status(), 200);
    s.shutdown().await;
    // OR: either requirement
    v["securityRequirements"] = json!([{"schemes": {"bearer": {}}}, {"schemes": {"key": {}}}]);
    let s = start_with(
        AgentCard::from_json(v).unwrap(),
        a2a_agent::demo::echo_handler(),
        auth_cfg(),
    )
    .await;
    let key = client()
        .get(format!("{}/tasks", s.url()))
        .header("A2A-Version", "1.0")
        .header("X-API-Key", "sekret")
        .send()
        .await
        .unwrap();
    assert_eq!(key.status(), 200);
    let bearer = client()
        .get(format!("{}/tasks", s.url()))
        .header("A2A-Version", "1.0")
        .bearer_auth("tok")
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), 200);
    s.shutdown().await;
}

// ---------- extensions ----------

struct Counting(Arc<AtomicUsize>);

#[async_trait::async_trait]
impl ExtensionHandler for Counting {
    fn uri(&self) -> &str {
        "urn:opt"
    }
    async fn before(&self, decl: &Value, _ctx: &RequestContext) -> Result<(), HandlerError> {
        assert_eq!(decl["params"]["x"], 1);
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    async fn after(&self, _d: &Value, _c: &RequestContext, out: &mut Result<Reply, HandlerError>) {
        self.0.fetch_add(10, Ordering::SeqCst);
        if let Ok(Reply::Text(t)) = out {
            t.push_str(" +ext");
        }
    }
}

#[tokio::test]
async fn extensions_validated_echoed_and_handled() {
    let mut card = AgentCard::builder("e", "d", "1")
        .extension("urn:req", true)
        .build()
        .json()
        .clone();
    card["capabilities"]["extensions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"uri": "urn:opt", "params": {"x": 1}}));
    let count = Arc::new(AtomicUsize::new(0));
    let h = handler_fn(
        |ctx: RequestContext| async move { Ok(Reply::text(ctx.extensions().join(","))) },
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = a2a_agent::AgentServer::new(AgentCard::from_json(card).unwrap(), h)
        .config(open_config())
        .extension_handler(Arc::new(Counting(count.clone())))
        .serve(l)
        .await
        .unwrap();
    let send = |ext: Option<&'static str>, legacy: bool| {
        let url = s.url().to_string();
        async move {
            let mut r = client()
                .post(format!("{url}/message:send"))
                .header("A2A-Version", "1.0")
                .json(&json!({"message": msg("x")}));
            if let Some(e) = ext {
                r = r.header(
                    if legacy {
                        "X-A2A-Extensions"
                    } else {
                        "A2A-Extensions"
                    },
                    e,
                );
            }
            r.send().await.unwrap()
        }
    };
    let r = send(None, false).await;
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["error"]["details"][0]["reason"],
        "EXTENSION_SUPPORT_REQUIRED"
    );
    let r = send(Some("urn:req, urn:unknown"), false).await;
    assert_eq!(r.status(), 400);
    let r = send(Some("urn:req, urn:opt"), false).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["a2a-extensions"], "urn:req, urn:opt");
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["task"]["status"]["message"]["parts"][0]["text"],
        "urn:req,urn:opt +ext"
    );
    assert_eq!(count.load(Ordering::SeqCst), 11);
    let r = send(Some("urn:req"), true).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        count.load(Ordering::SeqCst),
        11,
        "the handler is only invoked when negotiated"
    );
    s.shutdown().await;
}

// ---------- emit, sub-task ----------

#[tokio::test]
async fn emit_without_task_is_noop_unless_scope_asks_to_fail() {
    let e = Emitter::inactive();
    e.emit("nothing").await;
    let ok: Result<i32, HandlerError> = SubTask::new().before("b").run(&e, async { Ok(1) }).await;
    assert_eq!(ok.unwrap(), 1);
    let err: Result<i32, HandlerError> = SubTask::new()
        .fail_if_no_task(true)
        .run(&e, async { Ok(1) })
        .await;
    assert!(err.is_err());
}

#[tokio::test]
async fn sub_task_messages_and_error_propagation() {
    let h = handler_fn(|ctx: RequestContext| async move {
        ctx.sub_task(SubTask::new().before("searching").after("found"), async {
            Ok(())
        })
        .await?;
        ctx.sub_task(
            SubTask::new()
                .before("drafting")
                .on_error(|e| format!("error drafting: {e}")),
            async { Err::<(), _>(HandlerError::failed("boom")) },
        )
        .await?;
        Ok(Reply::text("unreachable"))
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("x")})).await;
    let t = &v["result"]["task"];
    assert_eq!(state(t), "TASK_STATE_FAILED");
    assert_eq!(t["status"]["message"]["parts"][0]["text"], "boom");
    let texts: Vec<&str> = t["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        vec![
            "x",
            "searching",
            "found",
            "drafting",
            "error drafting: boom",
            "boom"
        ]
    );
    s.shutdown().await;
}

// ---------- stores ----------

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_store_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = AgentConfig {
        sqlite_path: Some(dir.path().join("tasks.db")),
        ..open_config()
    };
    let s = echo(cfg.clone()).await;
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("persist me")}),
    )
    .await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    s.shutdown().await;
    let s = echo(cfg).await;
    let (_, v) = rpc(s.url(), "GetTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_COMPLETED", "{v}");
    assert_eq!(
        v["result"]["status"]["message"]["parts"][0]["text"],
        "persist me"
    );
    let (_, v) = rpc(s.url(), "ListTasks", json!({})).await;
    assert_eq!(v["result"]["totalSize"], 1);
    s.shutdown().await;
}

#[tokio::test]
async fn memory_store_is_bounded() {
    use a2a_agent::store::{MemoryStore, StoredTask, TaskStore};
    let st = MemoryStore::new(3, std::time::Duration::from_secs(3600));
    for i in 0..10 {
        let mut t = a2a_agent::model::Task::new(TaskState::Completed);
        t.id = format!("t{i}");
        st.put(StoredTask {
            task: t,
            owner: String::new(),
        })
        .await
        .unwrap();
    }
    assert_eq!(st.count().await.unwrap(), 3);
    assert!(st.get("t9").await.unwrap().is_some());
    assert!(st.get("t0").await.unwrap().is_none());
    // non-terminal tasks are never evicted
    for i in 0..5 {
        let mut t = a2a_agent::model::Task::new(TaskState::Working);
        t.id = format!("w{i}");
        st.put(StoredTask {
            task: t,
            owner: String::new(),
        })
        .await
        .unwrap();
    }
    assert!(st.get("w0").await.unwrap().is_some());
    // zero TTL: terminal tasks expire
    let st = MemoryStore::new(100, std::time::Duration::ZERO);
    let mut t = a2a_agent::model::Task::new(TaskState::Completed);
    t.id = "x".into();
    st.put(StoredTask {
        task: t,
        owner: String::new(),
    })
    .await
    .unwrap();
    assert!(st.get("x").await.unwrap().is_none());
}

// ---------- slow subscriber ----------

#[tokio::test]
async fn slow_subscriber_skips_to_the_snapshot_and_sees_the_end() {
    let got = unread_stream(50, a2a_agent::fanout::OverflowPolicy::Snapshot).await;
    assert!(got.len() <= 4, "the queue stays within its bound: {got:?}");
    assert!(
        got.iter().any(|e| matches!(e, StreamResponse::Task(_))),
        "skipped events are replaced by the task snapshot: {got:?}"
    );
    match got.last().unwrap() {
        StreamResponse::StatusUpdate(s) => assert_eq!(s.status.state, TaskState::Completed),
        StreamResponse::Task(t) => assert_eq!(t.status.state, TaskState::Completed),
        other => panic!("{other:?}"),
    }
}

// ---------- CORS ----------

#[tokio::test]
async fn cors_preflight_and_exposed_headers() {
    let cfg = AgentConfig {
        cors_allowed_origins: vec!["http://ok.example".into()],
        ..open_config()
    };
    let s = echo(cfg).await;
    let r = client()
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/message:send", s.url()),
        )
        .header("Origin", "http://ok.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "a2a-version, content-type",
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://ok.example"
    );
    let r = client()
        .post(format!("{}/message:send", s.url()))
        .header("Origin", "http://ok.example")
        .header("A2A-Version", "1.0")
        .json(&json!({"message": msg("x")}))
        .send()
        .await
        .unwrap();
    let exposed = r.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(exposed.contains("a2a-version") && exposed.contains("a2a-extensions"));
    let r = client()
        .post(format!("{}/message:send", s.url()))
        .header("Origin", "http://evil.example")
        .header("A2A-Version", "1.0")
        .json(&json!({"message": msg("x")}))
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());
    s.shutdown().await;
}

// ---------- exec ----------

#[tokio::test]
async fn exec_handler_progress_answer_and_failure() {
    let h = a2a_agent::exec::ExecHandler::new("echo progress-line >&2; tr a-z A-Z");
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("hello")})).await;
    let t = &v["result"]["task"];
    assert_eq!(state(t), "TASK_STATE_COMPLETED", "{v}");
    assert_eq!(t["status"]["message"]["parts"][0]["text"], "HELLO");
    assert!(
        t["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["parts"][0]["text"] == "progress-line")
    );
    s.shutdown().await;
    let h = a2a_agent::exec::ExecHandler::new(
        "echo \"got $A2A_TASK_ID\" >&2; echo bad-thing >&2; exit 3",
    );
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("x")})).await;
    let t = &v["result"]["task"];
    assert_eq!(state(t), "TASK_STATE_FAILED");
    assert!(
        t["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("bad-thing")
    );
    s.shutdown().await;
}

#[tokio::test]
async fn canceling_an_exec_turn_kills_what_the_program_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("alive");
    // A background subshell (a grandchild of the agent) that keeps writing a mark (for 5 s at
    // most, should it survive).
    let h = a2a_agent::exec::ExecHandler::new(format!(
        "(i=0; while [ $i -lt 100 ]; do date > {}; sleep 0.05; i=$((i+1)); done) & sleep 5",
        marker.display()
    ));
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let id = send_async(s.url(), "go").await;
    for _ in 0..500 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(marker.exists(), "the program did not start");
    let (_, v) = rpc(s.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&v["result"]), "TASK_STATE_CANCELED", "{v}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let _ = std::fs::remove_file(&marker);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!marker.exists(), "the background child outlived the cancel");
    s.shutdown().await;
}

// ---------- binary ----------

#[cfg(feature = "cli")]
#[tokio::test]
async fn binary_prints_listening_line_and_serves() {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(crate::common::AGENT_BIN)
        .args([
            "serve",
            "--echo",
            "--port",
            "0",
            "--no-validate-auth",
            "--metrics",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    let url = first.strip_prefix("LISTENING ").unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"));
    let second = lines.next_line().await.unwrap().unwrap();
    assert!(second.contains("curl"));
    let (_, v) = rpc(&url, "SendMessage", json!({"message": msg("bin")})).await;
    assert_eq!(
        v["result"]["task"]["status"]["message"]["parts"][0]["text"],
        "bin"
    );
    child.kill().await.unwrap();
}

// ---------- shutdown, config ----------

#[tokio::test]
async fn graceful_shutdown_lets_running_tasks_finish_then_fails_the_rest() {
    let cfg = AgentConfig {
        shutdown_grace: a2a_agent::config::Dur::from_millis(5_000),
        ..open_config()
    };
    let s = echo(cfg).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("sleep:100 finish me"), "configuration": {"returnImmediately": true}})).await;
    let quick = v["result"]["task"]["id"].as_str().unwrap().to_string();
    let mgr = s.manager().clone();
    s.shutdown().await;
    let anon = CallerProfile::anonymous();
    assert_eq!(
        mgr.get(&quick, None, &anon).await.unwrap().status.state,
        TaskState::Completed
    );

    let cfg = AgentConfig {
        shutdown_grace: a2a_agent::config::Dur::from_millis(20),
        ..open_config()
    };
    let s = echo(cfg).await;
    let slow = start_slow(s.url()).await;
    let url = s.url().to_string();
    let mgr = s.manager().clone();
    s.shutdown().await;
    let t = mgr.get(&slow, None, &anon).await.unwrap();
    assert_eq!(t.status.state, TaskState::Failed);
    // no longer accepting
    assert!(
        client()
            .get(format!("{url}/.well-known/agent-card.json"))
            .send()
            .await
            .is_err()
    );
}

#[cfg(feature = "cli")]
#[test]
fn toml_config_with_defaults() {
    let c = AgentConfig::from_toml(
        "max_payload_size = 10\nvalidate_auth = false\nbase_path = \"a2a/\"",
    )
    .unwrap();
    assert_eq!(c.max_payload_size, 10);
    assert!(!c.validate_auth);
    assert_eq!(c.base(), "/a2a");
    assert_eq!(c.sse_queue_capacity, 1000);
    assert_eq!(c.async_timeout, a2a_agent::config::Dur::from_secs(300));
    assert!(AgentConfig::from_toml("no_such_option = 1").is_err());
}

#[tokio::test]
async fn base_path_prefixes_every_endpoint() {
    let cfg = AgentConfig {
        base_path: "/a2a".into(),
        ..open_config()
    };
    let s = echo(cfg).await;
    assert!(s.url().ends_with("/a2a"));
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("based")})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    let (st, _) = rest_post(s.url(), "/message:send", json!({"message": msg("x")})).await;
    assert_eq!(st, 200);
    let r = client()
        .post(format!("{}/message:send", s.url().trim_end_matches("/a2a")))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": msg("x")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    s.shutdown().await;
}
