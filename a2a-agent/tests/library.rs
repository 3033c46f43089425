//! Library API of issue #12 on real servers: direct Message replies (both bindings, both
//! versions, blocking and streaming), the current task and the filtered headers in
//! `RequestContext`, `emit_status`, and the `CardBuilder` capability setters.

use crate::common;

use a2a_agent::model::{Message, Part, Role, TaskState};
use a2a_agent::{AgentCard, Reply, RequestContext, handler_fn};
use common::*;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// "direct ..." answers with a direct message; anything else completes a task.
async fn direct_agent() -> a2a_agent::ServerHandle {
    let h = handler_fn(|ctx: RequestContext| async move {
        let t = ctx.text();
        if let Some(rest) = t.strip_prefix("direct ") {
            Ok(Reply::direct_text(format!("re: {rest}")))
        } else {
            Ok(Reply::text(t))
        }
    })
    .direct_replies();
    start_with(a2a_agent::demo::echo_card(), h, open_config()).await
}

async fn raw_sse(resp: reqwest::Response) -> Vec<Value> {
    sse_events(resp).await
}

#[tokio::test]
async fn direct_message_blocking_both_bindings_both_versions() {
    let s = direct_agent().await;
    // 1.0 JSON-RPC
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("direct hi")})).await;
    let m = &v["result"]["message"];
    assert!(v["result"].get("task").is_none(), "{v}");
    assert_eq!(m["role"], "ROLE_AGENT", "{v}");
    assert_eq!(m["parts"][0]["text"], "re: hi", "{v}");
    assert!(m.get("taskId").is_none(), "{v}");
    // 1.0 HTTP+JSON
    let (st, v) = rest_post(
        s.url(),
        "/message:send",
        json!({"message": msg("direct a")}),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(v["message"]["parts"][0]["text"], "re: a", "{v}");
    assert!(v.get("task").is_none(), "{v}");
    // 0.3 JSON-RPC
    let m03 = json!({"kind": "message", "messageId": uuid(), "role": "user",
        "parts": [{"kind": "text", "text": "direct b"}]});
    let (_, v) = rpc_v(s.url(), "message/send", json!({"message": m03}), None).await;
    assert_eq!(v["result"]["kind"], "message", "{v}");
    assert_eq!(v["result"]["role"], "agent", "{v}");
    assert_eq!(v["result"]["parts"][0]["text"], "re: b", "{v}");
    // 0.3 HTTP+JSON
    let r = client()
        .post(format!("{}/v1/message:send", s.url()))
        .json(
            &json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
            "content": [{"text": "direct c"}]}}),
        )
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert!(v.get("message").is_some() || v.get("msg").is_some(), "{v}");
    // No task is left behind.
    let (_, v) = rpc(s.url(), "ListTasks", json!({})).await;
    assert_eq!(v["result"]["tasks"].as_array().unwrap().len(), 0, "{v}");
    // A normal answer still makes a task.
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("plain")})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    s.shutdown().await;
}

#[tokio::test]
async fn direct_message_streaming_is_one_message_event() {
    let s = direct_agent().await;
    let evs = stream_text(s.url(), "direct s").await;
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0]["result"]["message"]["parts"][0]["text"], "re: s");
    let r = client()
        .post(format!("{}/message:stream", s.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": msg("direct r")}))
        .send()
        .await
        .unwrap();
    let evs = raw_sse(r).await;
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0]["message"]["parts"][0]["text"], "re: r", "{evs:?}");
    // 0.3 JSON-RPC stream: one event, a message.
    let r = client()
        .post(format!("{}/", s.url()))
        .json(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "message/stream", "params": {"message":
            {"kind": "message", "messageId": uuid(), "role": "user",
             "parts": [{"kind": "text", "text": "direct o"}]}}}),
        )
        .send()
        .await
        .unwrap();
    let evs = raw_sse(r).await;
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0]["result"]["kind"], "message", "{evs:?}");
    // A task answer still streams the task first.
    let evs = stream_text(s.url(), "x").await;
    assert!(evs[0]["result"].get("task").is_some(), "{evs:?}");
    assert!(evs.len() >= 2, "{evs:?}");
    s.shutdown().await;
}

#[tokio::test]
async fn direct_reply_after_the_task_was_seen_completes_the_task() {
    // Without the declaration a stream starts with the task; the direct reply completes it.
    let h = handler_fn(|_ctx: RequestContext| async move { Ok(Reply::direct_text("late")) });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let evs = stream_text(s.url(), "x").await;
    assert!(evs[0]["result"].get("task").is_some(), "{evs:?}");
    let last = &evs.last().unwrap()["result"]["statusUpdate"]["status"];
    assert_eq!(last["state"], "TASK_STATE_COMPLETED", "{evs:?}");
    assert_eq!(last["message"]["parts"][0]["text"], "late", "{evs:?}");
    // Return-immediately: the caller has the task, which completes with the message.
    let id = send_async(s.url(), "y").await;
    let t = wait_task(s.url(), &id, |st| st == "TASK_STATE_COMPLETED").await;
    assert_eq!(t["status"]["message"]["parts"][0]["text"], "late", "{t}");
    s.shutdown().await;
}

#[tokio::test]
async fn context_exposes_the_task_on_follow_up_and_filtered_headers() {
    type Seen = Arc<Mutex<Vec<(Option<Value>, Vec<String>)>>>;
    let seen: Seen = Arc::default();
    let seen2 = seen.clone();
    let h = handler_fn(move |ctx: RequestContext| {
        let seen = seen2.clone();
        async move {
            let task = ctx.task().map(|t| serde_json::to_value(t).unwrap());
            let names: Vec<String> = ctx.headers().keys().map(|k| k.to_string()).collect();
            let first = task.is_none();
            seen.lock().unwrap().push((task, names));
            if first {
                ctx.emit_artifact(
                    a2a_agent::model::Artifact {
                        artifact_id: "a1".into(),
                        name: Some("draft".into()),
                        parts: vec![Part::text("v1")],
                        ..Default::default()
                    },
                    false,
                    true,
                )
                .await;
                Ok(Reply::input_required("more?"))
            } else {
                Ok(Reply::text("done"))
            }
        }
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let send = |m: Value| {
        client()
            .post(format!("{}/", s.url()))
            .header("A2A-Version", "1.0")
            .header("Authorization", "Bearer secret-token")
            .header("Cookie", "sid=1")
            .header("X-API-Key", "k")
            .header("X-Custom-Thing", "visible")
            .header("X-Auth-Token", "hidden")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": m}}))
            .send()
    };
    let v: Value = send(msg("start")).await.unwrap().json().await.unwrap();
    let id = v["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_INPUT_REQUIRED");
    let mut m = msg("answer");
    m["taskId"] = json!(id);
    let v: Value = send(m).await.unwrap().json().await.unwrap();
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].0.is_none(), "first turn has no prior task");
    let prior = seen[1].0.as_ref().expect("follow-up sees the task");
    assert_eq!(prior["id"], id.as_str());
    assert_eq!(prior["artifacts"][0]["name"], "draft", "{prior}");
    assert_eq!(
        prior["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{prior}"
    );
    let hist = prior["history"].as_array().unwrap();
    assert_eq!(hist[0]["parts"][0]["text"], "start", "{prior}");
    assert!(
        hist.iter().any(|m| m["parts"][0]["text"] == "more?"),
        "{prior}"
    );
    assert!(
        !hist.iter().any(|m| m["parts"][0]["text"] == "answer"),
        "{prior}"
    );
    for (_, names) in &seen {
        assert!(names.contains(&"x-custom-thing".to_string()), "{names:?}");
        assert!(names.contains(&"a2a-version".to_string()), "{names:?}");
        for hidden in [
            "authorization",
            "cookie",
            "x-api-key",
            "x-auth-token",
            "host",
        ] {
            assert!(
                !names.contains(&hidden.to_string()),
                "{hidden} in {names:?}"
            );
        }
    }
    s.shutdown().await;
}

#[test]
fn visible_headers_drops_hop_by_hop_and_credentials() {
    let mut h = http::HeaderMap::new();
    for (k, v) in [
        ("connection", "close, x-hop"),
        ("x-hop", "1"),
        ("keep-alive", "5"),
        ("transfer-encoding", "chunked"),
        ("proxy-authorization", "x"),
        ("x-my-key", "s"),
        ("x-client-secret", "s"),
        ("x-auth-token", "t"),
        ("apikey", "k"),
        ("my-api-key-2", "k"),
        ("accept", "application/json"),
        ("x-request-id", "r1"),
    ] {
        h.insert(http::HeaderName::from_static(k), v.parse().unwrap());
    }
    let out = a2a_agent::handler::visible_headers(&h, &["x-my-key".to_string()]);
    let names: Vec<&str> = out.keys().map(|k| k.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.contains(&"accept") && names.contains(&"x-request-id"),
        "{names:?}"
    );
}

#[tokio::test]
async fn emit_status_without_message() {
    let h = handler_fn(|ctx: RequestContext| async move {
        ctx.emit_status(TaskState::Working, None).await;
        ctx.emit_status(
            TaskState::Working,
            Some(Message::new(Role::Agent, vec![Part::text("half way")])),
        )
        .await;
        Ok(Reply::text("ok"))
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let evs = stream_text(s.url(), "x").await;
    let updates: Vec<&Value> = evs
        .iter()
        .filter_map(|e| e["result"].get("statusUpdate"))
        .collect();
    // The runtime's WORKING, the bare one, the one with the message, COMPLETED.
    assert_eq!(updates.len(), 4, "{evs:?}");
    assert!(updates[1]["status"].get("message").is_none(), "{evs:?}");
    assert_eq!(
        updates[2]["status"]["message"]["parts"][0]["text"],
        "half way"
    );
    assert_eq!(updates[2]["status"]["message"]["role"], "ROLE_AGENT");
    s.shutdown().await;
}

#[test]
fn card_builder_sets_every_capability() {
    let c = AgentCard::builder("n", "d", "1")
        .streaming(false)
        .push_notifications(true)
        .extended_agent_card(true)
        .extension("urn:a", false)
        .extension_with("urn:b", true, Some("bee"), json!({"k": 1}))
        .capability("custom", json!(true))
        .build();
    let caps = &c.json()["capabilities"];
    assert_eq!(caps["streaming"], false);
    assert_eq!(caps["pushNotifications"], true);
    assert_eq!(caps["extendedAgentCard"], true);
    assert_eq!(caps["extensions"][0]["uri"], "urn:a");
    assert_eq!(caps["extensions"][1]["description"], "bee");
    assert_eq!(caps["extensions"][1]["params"]["k"], 1);
    assert_eq!(caps["extensions"][1]["required"], true);
    assert_eq!(caps["custom"], true);
    assert!(!c.streaming() && c.push_notifications());
    // The built card is a valid served card.
    assert!(AgentCard::from_json(c.json().clone()).is_ok());
}
