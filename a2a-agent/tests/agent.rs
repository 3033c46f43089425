//! Integration tests: real servers on 127.0.0.1:0 driven over HTTP: sends and their precedence,
//! get, REST routes, streams, subscribe, cancel, turns, failures, list. Versions, content types,
//! limits and the card: `agent_edge.rs`.

use crate::common;

use a2a_agent::{AgentConfig, HandlerError, Reply, RequestContext, handler_fn};
use common::*;
use serde_json::{Value, json};

// ---------- send, precedence, get ----------

#[tokio::test]
async fn jsonrpc_send_blocking_completes_with_echo() {
    let s = echo(open_config()).await;
    let (st, v) = rpc(s.url(), "SendMessage", json!({"message": msg("hello")})).await;
    assert_eq!(st, 200);
    let task = &v["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED");
    assert_eq!(task["status"]["message"]["parts"][0]["text"], "hello");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(v["id"], 7);
    s.shutdown().await;
}

#[tokio::test]
async fn send_precedence_return_immediately_wins_over_blocking() {
    let s = echo(open_config()).await;
    // returnImmediately=false beats blocking=false: blocking call, COMPLETED.
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("a"), "configuration": {"returnImmediately": false, "blocking": false}}),
    )
    .await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    // blocking=false alone: returns at once while the slow handler runs.
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("slow"), "configuration": {"blocking": false}}),
    )
    .await;
    let t = &v["result"]["task"];
    assert!(
        matches!(state(t), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
        "{v}"
    );
    let id = t["id"].as_str().unwrap().to_string();
    let (_, c) = rpc(s.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&c["result"]), "TASK_STATE_CANCELED");
    s.shutdown().await;
}

#[tokio::test]
async fn send_precedence_header_then_endpoint_default() {
    let cfg = AgentConfig {
        return_immediately: true,
        ..open_config()
    };
    let s = echo(cfg).await;
    // Endpoint default: return immediately.
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("slow")})).await;
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_ne!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    rpc(s.url(), "CancelTask", json!({"id": id})).await;
    // The per-request header overrides the endpoint default.
    let resp = client()
        .post(format!("{}/", s.url()))
        .header("A2A-Version", "1.0")
        .header("A2A-Return-Immediately", "false")
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message": msg("quick")}}))
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED");
    s.shutdown().await;
}

#[tokio::test]
async fn non_blocking_then_poll_and_history_length() {
    let s = echo(open_config()).await;
    let id = send_async(s.url(), "sleep:20 hi").await;
    let t = wait_task(s.url(), &id, |st| st == "TASK_STATE_COMPLETED").await;
    assert_eq!(t["history"].as_array().unwrap().len(), 2, "{t}");
    let (_, v) = rpc(s.url(), "GetTask", json!({"id": id, "historyLength": 1})).await;
    let h = v["result"]["history"].as_array().unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0]["role"], "ROLE_AGENT");
    let (_, v) = rpc(s.url(), "GetTask", json!({"id": id, "historyLength": 0})).await;
    assert!(v["result"].get("history").is_none());
    let (_, v) = rpc(s.url(), "GetTask", json!({"id": id, "historyLength": -1})).await;
    assert_eq!(v["error"]["code"], -32602);
    // historyLength on send
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("x"), "configuration": {"historyLength": 1}}),
    )
    .await;
    assert_eq!(v["result"]["task"]["history"].as_array().unwrap().len(), 1);
    s.shutdown().await;
}

#[tokio::test]
async fn unknown_task_errors_both_bindings() {
    let s = echo(open_config()).await;
    let (st, v) = rpc(s.url(), "GetTask", json!({"id": "nope"})).await;
    assert_eq!(st, 200);
    assert_eq!(v["error"]["code"], -32001);
    assert_eq!(v["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
    assert_eq!(
        v["error"]["data"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );
    let (st, v) = rest_get(s.url(), "/tasks/nope").await;
    assert_eq!(st, 404);
    assert_eq!(v["error"]["status"], "NOT_FOUND");
    assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    s.shutdown().await;
}

#[tokio::test]
async fn jsonrpc_envelope_errors() {
    let s = echo(open_config()).await;
    let c = client();
    let r = c
        .post(format!("{}/", s.url()))
        .header("A2A-Version", "1.0")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32700);
    let r = c
        .post(format!("{}/", s.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"id": 1}))
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32600);
    let (_, v) = rpc(s.url(), "NoSuchMethod", json!({})).await;
    assert_eq!(v["error"]["code"], -32601);
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": {"messageId": "x", "parts": []}}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32602);
    // 0.3 method names under a 1.0 header are unknown methods.
    let (_, v) = rpc(s.url(), "message/send", json!({})).await;
    assert_eq!(v["error"]["code"], -32601);
    s.shutdown().await;
}

// ---------- REST and colon routing ----------

#[tokio::test]
async fn rest_colon_routes_send_and_stream_do_not_collide() {
    let s = echo(open_config()).await;
    let (st, v) = rest_post(s.url(), "/message:send", json!({"message": msg("rest hi")})).await;
    assert_eq!(st, 200);
    assert_eq!(state(&v["task"]), "TASK_STATE_COMPLETED");
    let id = v["task"]["id"].as_str().unwrap().to_string();
    let resp = client()
        .post(format!("{}/message:stream", s.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": msg("stream me")}))
        .send()
        .await
        .unwrap();
    let evs = sse_events(resp).await;
    assert!(evs[0].get("task").is_some(), "{evs:?}");
    assert!(evs.last().unwrap().get("statusUpdate").is_some());
    let (st, v) = rest_get(s.url(), &format!("/tasks/{id}")).await;
    assert_eq!(st, 200);
    assert_eq!(v["id"], id.as_str());
    let (st, v) = rest_post(s.url(), &format!("/tasks/{id}:cancel"), json!({})).await;
    assert_eq!(st, 400, "{v}");
    assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_CANCELABLE");
    let (st, _) = rest_post(s.url(), &format!("/tasks/{id}:bogus"), json!({})).await;
    assert_eq!(st, 404);
    // tenant prefix
    let (st, v) = rest_post(s.url(), "/acme/message:send", json!({"message": msg("t")})).await;
    assert_eq!(st, 200, "{v}");
    s.shutdown().await;
}

#[tokio::test]
async fn stream_carries_every_event_in_order_and_ends_after_terminal() {
    let s = echo(open_config()).await;
    let evs = stream_text(s.url(), "stream please").await;
    let kinds: Vec<String> = evs
        .iter()
        .map(|e| {
            let r = &e["result"];
            if r.get("task").is_some() {
                "task".to_string()
            } else if let Some(su) = r.get("statusUpdate") {
                format!("status:{}", su["status"]["state"].as_str().unwrap())
            } else if r.get("artifactUpdate").is_some() {
                "artifact".to_string()
            } else {
                format!("other:{r}")
            }
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "task",
            "status:TASK_STATE_WORKING",
            "status:TASK_STATE_WORKING",
            "status:TASK_STATE_WORKING",
            "artifact",
            "status:TASK_STATE_COMPLETED"
        ]
    );
    assert_eq!(evs[0]["id"], "s1");
    assert_eq!(
        evs[2]["result"]["statusUpdate"]["status"]["message"]["parts"][0]["text"],
        "echo: step 1"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn subscribe_get_and_post_and_terminal_subscribe_refused() {
    let s = echo(open_config()).await;
    let id = start_slow(s.url()).await;
    let url = s.url().to_string();
    let id2 = id.clone();
    let sub_post = tokio::spawn(async move {
        let r = post_1_0(format!("{url}/tasks/{id2}:subscribe")).await;
        sse_events(r).await
    });
    let url = s.url().to_string();
    let id3 = id.clone();
    let sub_get = tokio::spawn(async move {
        let r = client()
            .get(format!("{url}/tasks/{id3}:subscribe"))
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap();
        sse_events(r).await
    });
    // Wait until both subscribers are attached: the live task has a sender; poll via cancel timing is
    // racy, so give the subscribers a chance by polling GetTask a few times first.
    for _ in 0..20 {
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let (_, c) = rpc(s.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&c["result"]), "TASK_STATE_CANCELED");
    for evs in [sub_post.await.unwrap(), sub_get.await.unwrap()] {
        assert!(evs[0].get("task").is_some(), "{evs:?}");
        let last = evs.last().unwrap();
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED",
            "{evs:?}"
        );
    }
    // terminal: UnsupportedOperationError
    let r = post_1_0(format!("{}/tasks/{id}:subscribe", s.url())).await;
    assert_eq!(r.status(), 400);
    let (_, v) = rpc(s.url(), "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(v["error"]["code"], -32004);
    // cancel terminal: -32002
    let (_, v) = rpc(s.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(v["error"]["code"], -32002);
    s.shutdown().await;
}

#[tokio::test]
async fn cancel_tells_running_handler_to_stop() {
    let (tx, rx) = tokio::sync::oneshot::channel::<bool>();
    let tx = std::sync::Mutex::new(Some(tx));
    let h = handler_fn(move |ctx: RequestContext| {
        let tx = tx.lock().unwrap().take();
        async move {
            ctx.cancelled().await;
            if let Some(tx) = tx {
                let _ = tx.send(true);
            }
            Err(HandlerError::failed("stopped"))
        }
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let id = send_async(s.url(), "x").await;
    wait_task(s.url(), &id, |st| st == "TASK_STATE_WORKING").await;
    let (_, c) = rpc(s.url(), "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&c["result"]), "TASK_STATE_CANCELED");
    assert!(rx.await.unwrap());
    let t = wait_task(s.url(), &id, |st| st != "TASK_STATE_WORKING").await;
    assert_eq!(state(&t), "TASK_STATE_CANCELED");
    s.shutdown().await;
}

#[tokio::test]
async fn multi_turn_input_required_then_completed() {
    let s = echo(open_config()).await;
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("need input")}),
    )
    .await;
    let t = &v["result"]["task"];
    assert_eq!(state(t), "TASK_STATE_INPUT_REQUIRED");
    let id = t["id"].as_str().unwrap();
    let mut m = msg("here it is");
    m["taskId"] = json!(id);
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": m})).await;
    let t2 = &v["result"]["task"];
    assert_eq!(state(t2), "TASK_STATE_COMPLETED");
    assert_eq!(t2["id"], id);
    assert_eq!(t2["history"].as_array().unwrap().len(), 4);
    // a terminal task takes no more messages
    let mut m = msg("again");
    m["taskId"] = json!(id);
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": m})).await;
    assert_eq!(v["error"]["code"], -32004);
    // unknown task id
    let mut m = msg("x");
    m["taskId"] = json!("nope");
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": m})).await;
    assert_eq!(v["error"]["code"], -32001);
    s.shutdown().await;
}

#[tokio::test]
async fn handler_failure_fails_task_and_typed_error_maps() {
    let s = echo(open_config()).await;
    let (_, v) = rpc(
        s.url(),
        "SendMessage",
        json!({"message": msg("please fail")}),
    )
    .await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_FAILED");
    s.shutdown().await;
    let h = handler_fn(|_ctx: RequestContext| async move {
        Err::<Reply, _>(HandlerError::a2a(
            a2a_agent::ErrorKind::InvalidParams,
            "bad input",
        ))
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("x")})).await;
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["error"]["message"], "bad input");
    s.shutdown().await;
}

#[tokio::test]
async fn async_timeout_fails_the_task() {
    let cfg = AgentConfig {
        async_timeout: a2a_agent::config::Dur::from_millis(30),
        ..open_config()
    };
    let s = echo(cfg).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("slow")})).await;
    let t = &v["result"]["task"];
    assert_eq!(state(t), "TASK_STATE_FAILED");
    assert!(
        t["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
    s.shutdown().await;
}

// ---------- list ----------

#[tokio::test]
async fn list_tasks_paging_filters_and_tokens() {
    let s = echo(open_config()).await;
    let mut ctx_ids = vec![];
    for i in 0..5 {
        let mut m = msg(&format!("n{i}"));
        if i < 3 {
            m["contextId"] = json!("ctx-a");
        }
        let (_, v) = rpc(s.url(), "SendMessage", json!({"message": m})).await;
        ctx_ids.push(
            v["result"]["task"]["contextId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let (_, v) = rpc(s.url(), "ListTasks", json!({})).await;
    let r = &v["result"];
    assert_eq!(r["totalSize"], 5);
    assert_eq!(r["pageSize"], 50);
    assert_eq!(r["nextPageToken"], "");
    assert!(r["tasks"][0].get("artifacts").is_none());
    // paging
    let mut seen = vec![];
    let mut token = String::new();
    loop {
        let (_, v) = rpc(
            s.url(),
            "ListTasks",
            json!({"pageSize": 2, "pageToken": token}),
        )
        .await;
        let r = &v["result"];
        for t in r["tasks"].as_array().unwrap() {
            seen.push(t["id"].as_str().unwrap().to_string());
        }
        token = r["nextPageToken"].as_str().unwrap().to_string();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(seen.len(), 5);
    seen.dedup();
    assert_eq!(seen.len(), 5);
    // filter by context
    let (_, v) = rpc(
        s.url(),
        "ListTasks",
        json!({"contextId": "ctx-a", "pageSize": 2}),
    )
    .await;
    assert_eq!(v["result"]["totalSize"], 3);
    let tok = v["result"]["nextPageToken"].as_str().unwrap().to_string();
    assert!(!tok.is_empty());
    // token bound to the filters
    let (_, v) = rpc(
        s.url(),
        "ListTasks",
        json!({"pageSize": 2, "pageToken": tok}),
    )
    .await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    // numeric offsets rejected
    let (_, v) = rpc(s.url(), "ListTasks", json!({"pageToken": "2"})).await;
    assert_eq!(v["error"]["code"], -32602);
    let (_, v) = rpc(s.url(), "ListTasks", json!({"pageSize": 0})).await;
    assert_eq!(v["error"]["code"], -32602);
    // Above 100: capped (the Camel guide), not refused.
    let (_, v) = rpc(s.url(), "ListTasks", json!({"pageSize": 101})).await;
    assert_eq!(v["result"]["pageSize"], 100, "{v}");
    // statusTimestampAfter
    let (_, v) = rpc(
        s.url(),
        "ListTasks",
        json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(v["result"]["totalSize"], 0, "{v}");
    let (_, v) = rpc(
        s.url(),
        "ListTasks",
        json!({"statusTimestampAfter": "2000-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(v["result"]["totalSize"], 5);
    // status filter + REST
    let (st, v) = rest_get(
        s.url(),
        "/tasks?status=TASK_STATE_COMPLETED&pageSize=100&includeArtifacts=true",
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(v["totalSize"], 5);
    let (st, _) = rest_get(s.url(), "/tasks?status=TASK_STATE_NOPE").await;
    assert_eq!(st, 400);
    let (st, v) = rest_get(s.url(), "/tasks?pageToken=10").await;
    assert_eq!(st, 400);
    assert_eq!(v["error"]["details"][0]["reason"], "INVALID_PARAMS");
    s.shutdown().await;
}
