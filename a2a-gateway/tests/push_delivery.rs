//! Direct push delivery as a per-workspace setting (issue 15): `a2a.push.delivery` through the
//! admin API, per workspace; the deprecated fleet-wide `push_direct_workspaces` list still
//! applies to workspaces without the setting.

use a2a_gateway::errors::Version;
use serde_json::json;

use crate::common::gov::admin;
use crate::common::*;

fn set(task: &str) -> serde_json::Value {
    json!({"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":
        {"taskId": task, "id": "c1", "url": "https://8.8.8.8/a2a", "token": "tok"}})
}

#[tokio::test]
async fn direct_delivery_is_a_workspace_setting() {
    // No fleet-wide list and no callback base URL.
    let env = env_with(Version::V1, |c| c.push_direct_workspaces.clear()).await;
    let echo = env.peers[0].url.clone();
    env.register("ws2", "echo", &echo, None);
    bind_task(&env, &echo, "t1", "echo");
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set("t1")).await;
    assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
    let (s, b) = admin(
        &env,
        "PATCH",
        "/admin/workspaces/ws1/settings",
        Some(json!({"a2a.push.delivery": "direct"})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["a2a.push.delivery.source"], "workspace");
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set("t1")).await;
    assert_eq!(b["result"]["url"], "https://8.8.8.8/a2a", "{b}");
    // ws2 keeps its own (default) delivery.
    let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
    let ws2_task = {
        use a2a_gateway::ownership::Owner;
        env.store
            .bind_task(
                &echo,
                "t2",
                &Owner {
                    workspace_id: "ws2".into(),
                    agent_id: "echo".into(),
                },
            )
            .unwrap();
        "t2"
    };
    let (_, b) = env
        .rpc_key("/a2a/echo", Some("1.0"), set(ws2_task), &k2)
        .await;
    assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
    // Through the gateway without a callback base URL: refused, saying why.
    let (_, b) = admin(
        &env,
        "PATCH",
        "/admin/workspaces/ws1/settings",
        Some(json!({"a2a.push.delivery": "gateway"})),
    )
    .await;
    assert_eq!(b["a2a.push.delivery"], "gateway");
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set("t1")).await;
    assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
    // Bad values are refused.
    let (s, _) = admin(
        &env,
        "PATCH",
        "/admin/workspaces/ws1/settings",
        Some(json!({"a2a.push.delivery": "carrier-pigeon"})),
    )
    .await;
    assert_eq!(s, 400);
    env.stop().await;
}

#[tokio::test]
async fn the_deprecated_fleet_list_is_the_default_and_the_setting_wins() {
    // `env` lists ws1 and ws2 in push_direct_workspaces.
    let env = env(Version::V1).await;
    let echo = env.peers[0].url.clone();
    bind_task(&env, &echo, "t1", "echo");
    let (_, b) = admin(&env, "GET", "/admin/workspaces/ws1/settings", None).await;
    assert_eq!(b["a2a.push.delivery"], "direct");
    assert_eq!(
        b["a2a.push.delivery.source"],
        "push_direct_workspaces (deprecated)"
    );
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set("t1")).await;
    assert_eq!(b["result"]["id"], "c1", "{b}");
    admin(
        &env,
        "PATCH",
        "/admin/workspaces/ws1/settings",
        Some(json!({"a2a.push.delivery": "gateway"})),
    )
    .await;
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set("t1")).await;
    assert_eq!(gw_code(&b), "a2a_push_not_available", "{b}");
    env.stop().await;
}

/// An oversize notification sent without `Content-Length` (chunked) is refused after the token
/// check with a JSON body naming `a2a_push_too_large`, not a bare 413.
#[tokio::test]
async fn oversize_chunked_notification_gets_a_json_refusal() {
    let env = env_with(Version::V1, |c| c.limits.max_push_bytes = 1024).await;
    env.store
        .insert_push_callback(&a2a_gateway::store::PushCallback {
            callback_id: "cb-big".into(),
            workspace_id: "ws1".into(),
            agent_id: "echo".into(),
            task_id: "t1".into(),
            config_id: None,
            url: "https://8.8.8.8/hook".into(),
            token: None,
            auth_scheme: None,
            auth_credentials: None,
            caller_version: "1.0".into(),
            peer_version: "1.0".into(),
            notify_token: "peer-token".into(),
        })
        .unwrap();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..8).map(|_| Ok(vec![b' '; 512])).collect();
    let resp = env
        .http
        .post(env.url("/a2a/echo/push:notify/cb-big"))
        .header("content-type", "application/json")
        .header("x-a2a-notification-token", "peer-token")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let b: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(
        b["error"]["details"][0]["metadata"]["code"], "a2a_push_too_large",
        "{b}"
    );
    env.stop().await;
}
