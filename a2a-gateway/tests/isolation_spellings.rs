//! Field spellings (issue 39, item 0): A2A 1.0 requests may name members by their proto names
//! (`task_id`, `message_id`, `page_size`, ...) as ProtoJSON parsers must accept. The gateway reads
//! every request once into the JSON names, so ownership, idempotency, push sealing and paging see
//! what the peer will see. With workspace A's key, every operation naming workspace B's task under
//! a proto name (or mixing spellings) answers exactly like one naming a task that never existed,
//! and B's task is untouched; the same member under both names is refused before the peer; A's own
//! calls under proto names answer as they do under JSON names.

use crate::common;
use crate::isolation::{create, raw, rust_agent};

use a2a_gateway::errors::Version;
use common::*;
use reqwest::Method;
use serde_json::{Value, json};

const HOOK: &str = "https://8.8.8.8/a2a";

fn id() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn rpc(m: &str, p: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": m, "params": p})
}

/// A 1.0 message naming `task` as `task_id`; `mixed` keeps the JSON name `messageId`.
fn snake_msg(task: &str, mixed: bool) -> Value {
    let mut m = json!({"role": "ROLE_USER", "task_id": task, "parts": [{"text": "hi"}]});
    m[if mixed { "messageId" } else { "message_id" }] = json!(id());
    m
}

/// The probes on `task`: (label, method, path, A2A-Version, body).
fn probes(agent: &str, task: &str) -> Vec<(String, Method, String, Option<&'static str>, Value)> {
    let root = format!("/a2a/{agent}");
    let v1 = format!("{root}/v1");
    let mut out = Vec::new();
    for mixed in [false, true] {
        let tag = if mixed { "mixed" } else { "snake" };
        for m in ["SendMessage", "SendStreamingMessage"] {
            out.push((
                format!("1.0 {m} {tag}"),
                Method::POST,
                root.clone(),
                Some("1.0"),
                rpc(m, json!({"message": snake_msg(task, mixed)})),
            ));
        }
        for (l, p) in [("message:send", "send"), ("message:stream", "stream")] {
            out.push((
                format!("HTTP+JSON {p} {tag}"),
                Method::POST,
                format!("{v1}/{l}"),
                Some("1.0"),
                json!({"message": snake_msg(task, mixed)}),
            ));
        }
    }
    for (m, p) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"task_id": task, "id": "cfg", "url": HOOK}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"task_id": task, "id": "cfg"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"task_id": task})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"task_id": task, "id": "cfg"}),
        ),
        (
            "ListTaskPushNotificationConfigs paged",
            json!({"task_id": task, "page_size": 1}),
        ),
    ] {
        let method = m.split(' ').next().unwrap_or(m);
        out.push((
            format!("1.0 {m} snake"),
            Method::POST,
            root.clone(),
            Some("1.0"),
            rpc(method, p),
        ));
    }
    out
}

/// The answer of one probe as compared: status, content type, body with `task` masked.
async fn answer(
    env: &Env,
    key: &str,
    (m, p, v, b): (Method, &str, Option<&str>, &Value),
) -> (u16, String, String) {
    let (s, ct, body) = raw(env, m, p, v, key, Some(b.clone())).await;
    (s, ct, String::from_utf8_lossy(&body).into_owned())
}

/// What the peer holds of `task` (as B sees it): state and history length.
async fn task_state(env: &Env, key: &str, task: &str) -> (Value, usize) {
    let (_, _, body) = raw(
        env,
        Method::POST,
        "/a2a/shared",
        Some("1.0"),
        key,
        Some(rpc("GetTask", json!({"id": task}))),
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    let t = &v["result"];
    assert_eq!(t["id"], json!(task), "{v}");
    (
        t["status"]["state"].clone(),
        t["history"].as_array().map_or(0, Vec::len),
    )
}

#[tokio::test]
async fn proto_names_pass_the_same_ownership_checks() {
    let agent = rust_agent().await;
    let env = env(Version::V1).await;
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws1", "shared", agent.url(), None);
    env.register("ws2", "shared", agent.url(), None);

    let b_task = create(&env, "shared", &key_b).await;
    let (s, _, body) = raw(
        &env,
        Method::POST,
        "/a2a/shared",
        Some("1.0"),
        &key_b,
        Some(rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": b_task, "id": "cfg", "url": HOOK, "token": "b-secret"}),
        )),
    )
    .await;
    assert_eq!(s, 200, "{}", String::from_utf8_lossy(&body));
    let before = task_state(&env, &key_b, &b_task).await;

    let ghost = format!("never-{}", id());
    for ((label, m, p, v, b), (_, gm, gp, gv, gb)) in probes("shared", &b_task)
        .into_iter()
        .zip(probes("shared", &ghost))
    {
        let got = answer(&env, &env.key, (m, &p, v, &b)).await;
        let want = answer(&env, &env.key, (gm, &gp, gv, &gb)).await;
        assert_eq!(got.0, want.0, "{label}: {got:?} vs {want:?}");
        assert_eq!(got.1, want.1, "{label}");
        assert_eq!(
            got.2.replace(&b_task, "T"),
            want.2.replace(&ghost, "T"),
            "{label}"
        );
        assert!(
            got.2.contains("-32001") || got.2.contains("NOT_FOUND"),
            "{label}: {}",
            got.2
        );
        assert!(!got.2.contains(&b_task), "{label} leaks the id: {}", got.2);
        assert!(!got.2.contains("b-secret"), "{label} leaks B's token");
    }

    // The same member under both names: refused before anything else reads it, whichever
    // spelling names B's task.
    let a_task = create(&env, "shared", &env.key).await;
    for (mine, theirs) in [("taskId", "task_id"), ("task_id", "taskId")] {
        let mut msg = json!({"messageId": id(), "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        msg[mine] = json!(a_task);
        msg[theirs] = json!(b_task);
        let (s, _, body) = raw(
            &env,
            Method::POST,
            "/a2a/shared",
            Some("1.0"),
            &env.key,
            Some(rpc("SendMessage", json!({"message": msg.clone()}))),
        )
        .await;
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(s, 200, "{v}");
        assert_eq!(v["error"]["code"], -32602, "{mine}/{theirs}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("conflicting members"),
            "{v}"
        );
        let (s, _, body) = raw(
            &env,
            Method::POST,
            "/a2a/shared/v1/message:send",
            Some("1.0"),
            &env.key,
            Some(json!({"message": msg})),
        )
        .await;
        assert_eq!(s, 400, "{}", String::from_utf8_lossy(&body));
    }
    // A push config on A's own task (path) naming B's task in the body under its proto name.
    let (s, _, body) = raw(
        &env,
        Method::POST,
        &format!("/a2a/shared/v1/tasks/{a_task}/pushNotificationConfigs"),
        Some("1.0"),
        &env.key,
        Some(json!({"task_id": b_task, "id": "cfg", "url": HOOK})),
    )
    .await;
    assert_eq!(s, 400, "{}", String::from_utf8_lossy(&body));
    // 0.3 JSON-RPC knows only the JSON names: a proto name is an unknown member.
    let (_, _, body) = raw(
        &env,
        Method::POST,
        "/a2a/shared",
        None,
        &env.key,
        Some(rpc(
            "message/send",
            json!({"message": {"kind": "message", "messageId": id(), "role": "user",
                "task_id": b_task, "parts": [{"kind": "text", "text": "hi"}]}}),
        )),
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");

    // B's task and config are untouched.
    assert_eq!(task_state(&env, &key_b, &b_task).await, before);
    let (_, _, body) = raw(
        &env,
        Method::POST,
        "/a2a/shared",
        Some("1.0"),
        &key_b,
        Some(rpc(
            "ListTaskPushNotificationConfigs",
            json!({"taskId": b_task}),
        )),
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v["result"]["configs"].as_array().map(Vec::len),
        Some(1),
        "{v}"
    );
    env.stop().await;
    agent.shutdown().await;
}

#[tokio::test]
async fn own_calls_under_proto_names_answer_as_under_json_names() {
    let agent = rust_agent().await;
    let env = env(Version::V1).await;
    let (_, key_b) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws1", "shared", agent.url(), None);
    env.register("ws2", "shared", agent.url(), None);
    let mut mine = Vec::new();
    for _ in 0..3 {
        mine.push(create(&env, "shared", &env.key).await);
        create(&env, "shared", &key_b).await;
    }
    let call = |m: &str, p: Value| {
        let body = rpc(m, p);
        let env = &env;
        async move {
            let (s, _, b) = raw(
                env,
                Method::POST,
                "/a2a/shared",
                Some("1.0"),
                &env.key,
                Some(body),
            )
            .await;
            assert_eq!(s, 200);
            serde_json::from_slice::<Value>(&b).unwrap()
        }
    };
    // GetTask: history_length like historyLength.
    let a = call("GetTask", json!({"id": mine[0], "historyLength": 0})).await;
    let b = call("GetTask", json!({"id": mine[0], "history_length": 0})).await;
    assert!(a["result"]["id"].is_string(), "{a}");
    assert_eq!(a, b);
    // ListTasks paging by page_size: A's own three, two then one, over JSON-RPC and HTTP+JSON.
    let page = call("ListTasks", json!({"page_size": 2})).await;
    assert_eq!(
        page["result"]["tasks"].as_array().map(Vec::len),
        Some(2),
        "{page}"
    );
    assert_eq!(page["result"]["totalSize"], 3, "{page}");
    let token = page["result"]["nextPageToken"].as_str().unwrap().to_owned();
    let next = call("ListTasks", json!({"page_size": 2, "page_token": token})).await;
    assert_eq!(
        next["result"]["tasks"].as_array().map(Vec::len),
        Some(1),
        "{next}"
    );
    let (s, _, body) = raw(
        &env,
        Method::GET,
        "/a2a/shared/v1/tasks?page_size=2",
        Some("1.0"),
        &env.key,
        None,
    )
    .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["tasks"].as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(v["totalSize"], 3, "{v}");
    let (s, _, _) = raw(
        &env,
        Method::GET,
        "/a2a/shared/v1/tasks?page_size=2&pageSize=1",
        Some("1.0"),
        &env.key,
        None,
    )
    .await;
    assert_eq!(s, 400);

    // Idempotent sends: a message_id is the messageId the records keep.
    let mid = id();
    let first = call(
        "SendMessage",
        json!({"message": {"message_id": mid, "role": "ROLE_USER", "parts": [{"text": "one"}]}}),
    )
    .await;
    let first_task = first["result"]["task"]["id"].as_str().unwrap().to_owned();
    let again = call(
        "SendMessage",
        json!({"message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": "one"}]}}),
    )
    .await;
    assert_eq!(again["result"]["task"]["id"], json!(first_task), "{again}");
    let changed = call(
        "SendMessage",
        json!({"message": {"message_id": mid, "role": "ROLE_USER", "parts": [{"text": "two"}]}}),
    )
    .await;
    assert_eq!(changed["error"]["code"], -32602, "{changed}");

    // Push configs on A's own task under proto names: created, listed, read, deleted.
    let t = &mine[1];
    let made = call(
        "CreateTaskPushNotificationConfig",
        json!({"task_id": t, "id": "c1", "url": HOOK}),
    )
    .await;
    assert_eq!(made["result"]["id"], "c1", "{made}");
    assert_eq!(made["result"]["taskId"], json!(t), "{made}");
    let listed = call("ListTaskPushNotificationConfigs", json!({"task_id": t})).await;
    assert_eq!(
        listed["result"]["configs"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let got = call(
        "GetTaskPushNotificationConfig",
        json!({"task_id": t, "id": "c1"}),
    )
    .await;
    assert_eq!(got["result"]["id"], "c1", "{got}");
    let gone = call(
        "DeleteTaskPushNotificationConfig",
        json!({"task_id": t, "id": "c1"}),
    )
    .await;
    assert!(gone.get("error").is_none(), "{gone}");
    let listed = call("ListTaskPushNotificationConfigs", json!({"taskId": t})).await;
    assert_eq!(
        listed["result"]["configs"].as_array().map_or(0, Vec::len),
        0,
        "{listed}"
    );
    env.stop().await;
    agent.shutdown().await;
}
