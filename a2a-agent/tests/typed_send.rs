//! A 1.0 send without `configuration` is read straight into its type (no JSON trees), the
//! handler's raw message and headers are produced when it asks, and a published event is moved
//! into the replay log: the handler, the answer and the task kept afterwards are the same as on
//! the general path.

use crate::common::*;
use a2a_agent::handler::{Reply, RequestContext, handler_fn};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// What the handler saw: (raw message, typed message as JSON, header names).
type Seen = Arc<Mutex<Vec<(Value, Value, Vec<String>)>>>;

#[tokio::test]
async fn the_handler_sees_the_same_message_and_headers_on_every_path() {
    let seen: Seen = Arc::default();
    let seen2 = seen.clone();
    let h = handler_fn(move |ctx: RequestContext| {
        let seen = seen2.clone();
        async move {
            let mut names: Vec<String> = ctx.headers().keys().map(|k| k.to_string()).collect();
            names.sort();
            let typed = serde_json::to_value(ctx.message()).unwrap();
            seen.lock().unwrap().push((ctx.raw().clone(), typed, names));
            Ok(Reply::text("ok"))
        }
    });
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let message = |n: usize| {
        json!({"messageId": format!("{}-{n}", uuid()), "role": "ROLE_USER",
            "parts": [{"text": "caf\u{e9} \"q\""}, {"data": {"n": 1.5, "big": 12345678901234_i64,
                "list": [1, null, true, "x"]}}],
            "metadata": {"k": {"nested": ["a"]}}, "extensions": ["urn:x"],
            "notInTheType": {"kept": "in the raw view"}})
    };
    let post = |path: &str, body: Value| {
        client()
            .post(format!("{}{path}", s.url()))
            .header("A2A-Version", "1.0")
            .header("content-type", "application/json")
            .header("Authorization", "Bearer hidden")
            .header("X-API-Key", "hidden")
            .header("X-Custom-Thing", "visible")
            .json(&body)
            .send()
    };
    let config = json!({"blocking": true});
    let mut sent = Vec::new();
    for (i, (path, with_config)) in [
        ("/", false),
        ("/", true),
        ("/message:send", false),
        ("/message:send", true),
    ]
    .into_iter()
    .enumerate()
    {
        let m = message(i);
        let mut params = json!({"message": m.clone()});
        if with_config {
            params["configuration"] = config.clone();
        }
        let body = if path == "/" {
            json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": params})
        } else {
            params
        };
        let r = post(path, body).await.unwrap();
        assert_eq!(r.status(), 200, "{path} {with_config}");
        let v: Value = r.json().await.unwrap();
        let task = if path == "/" {
            &v["result"]["task"]
        } else {
            &v["task"]
        };
        assert_eq!(state(task), "TASK_STATE_COMPLETED", "{v}");
        sent.push(m);
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4);
    // The typed message without what differs per send (its id, its task's ids).
    let bare = |t: &Value| {
        let mut t = t.clone();
        for k in ["messageId", "taskId", "contextId"] {
            assert!(t[k].is_string(), "{t}");
            t.as_object_mut().unwrap().remove(k);
        }
        t
    };
    for (i, (raw, typed, names)) in seen.iter().enumerate() {
        assert_eq!(
            raw, &sent[i],
            "path {i}: the raw view is the message as sent"
        );
        assert_eq!(
            bare(typed),
            bare(&seen[0].1),
            "path {i}: the same typed message"
        );
        assert_eq!(typed["metadata"], sent[i]["metadata"], "{typed}");
        assert_eq!(names, &seen[0].2, "path {i}: the same headers");
        assert!(names.contains(&"x-custom-thing".to_string()), "{names:?}");
        assert!(
            !names
                .iter()
                .any(|n| n == "authorization" || n == "x-api-key"),
            "{names:?}"
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_task_answered_by_a_blocking_send_stays_readable_with_its_events() {
    let s = echo(open_config()).await;
    for path in ["/", "/message:send"] {
        let params = json!({"message": msg("hello")});
        let answer = if path == "/" {
            let (st, v) = rpc(s.url(), "SendMessage", params).await;
            assert_eq!(st, 200);
            v["result"]["task"].clone()
        } else {
            let (st, v) = rest_post(s.url(), path, params).await;
            assert_eq!(st, 200);
            v["task"].clone()
        };
        assert_eq!(state(&answer), "TASK_STATE_COMPLETED", "{answer}");
        let id = answer["id"].as_str().unwrap().to_string();
        assert_eq!(
            answer["history"].as_array().map(Vec::len),
            Some(2),
            "{answer}"
        );
        // GetTask and ListTasks: the task as answered.
        let (_, got) = rpc(s.url(), "GetTask", json!({"id": id})).await;
        assert_eq!(got["result"], answer, "GetTask");
        let (_, list) = rpc(s.url(), "ListTasks", json!({})).await;
        let listed = list["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id.as_str())
            .cloned()
            .expect("listed");
        assert_eq!(listed["history"], answer["history"], "ListTasks");
        assert_eq!(listed["status"], answer["status"], "ListTasks");
        // SubscribeToTask from the start: the kept events, the last one the answered status.
        let r = client()
            .post(format!("{}/", s.url()))
            .header("A2A-Version", "1.0")
            .header("Last-Event-ID", "0")
            .json(
                &json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask",
                "params": {"id": id}}),
            )
            .send()
            .await
            .unwrap();
        let evs = sse_events(r).await;
        let states: Vec<&str> = evs
            .iter()
            .map(|e| {
                e["result"]["statusUpdate"]["status"]["state"]
                    .as_str()
                    .unwrap_or("?")
            })
            .collect();
        assert_eq!(
            states,
            ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"],
            "{evs:?}"
        );
        assert_eq!(
            evs[1]["result"]["statusUpdate"]["status"], answer["status"],
            "{evs:?}"
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn the_text_view_joins_the_text_parts_with_newlines() {
    let s = echo(open_config()).await;
    for (parts, want) in [
        (
            json!([{"text": "a"}, {"data": {"x": 1}}, {"text": "b"}, {"text": ""}]),
            "a\nb\n",
        ),
        (json!([{"data": {"x": 1}}]), ""),
        (json!([{"text": "only"}]), "only"),
    ] {
        let m = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": parts});
        let (st, v) = rpc(s.url(), "SendMessage", json!({"message": m})).await;
        assert_eq!(st, 200, "{v}");
        let task = &v["result"]["task"];
        assert_eq!(
            task["status"]["message"]["parts"][0]["text"], want,
            "{parts}: {task}"
        );
    }
    s.shutdown().await;
}
