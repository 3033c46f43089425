//! End-to-end tests: real gateway, real echo peers, real SQLite files, all on loopback.

use crate::common;

use a2a_gateway::config::ErrorStatusMode;
use a2a_gateway::demo::start_echo;
use a2a_gateway::errors::{GATEWAY_DOMAIN, SPEC_DOMAIN, Version};
use a2a_gateway::keys::Scope;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn version_rules() {
    let env = env(Version::V10).await;
    // none = 0.3, patch ignored, query parameter honoured.
    let (s, b) = env.rpc("/a2a/echo", None, send03("hi")).await;
    assert_eq!(s, 200);
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let (_, b) = env.rpc("/a2a/echo", Some("0.3.1"), send03("hi")).await;
    assert_eq!(b["result"]["kind"], "task");
    let (_, b) = env
        .rpc("/a2a/echo?A2A-Version=1.0", None, send10("hi"))
        .await;
    assert!(b["result"]["task"].is_object(), "{b}");
    // Other versions: refused (HTTP 200, like every JSON-RPC refusal) before authentication, in the form by the requested version.
    let (s, b) = env
        .rpc_key("/a2a/echo", Some("0.5"), send03("x"), "wrong")
        .await;
    assert_eq!(s, 200);
    assert_eq!(b["error"]["code"], -32009);
    assert_eq!(b["error"]["data"]["type"], "VersionNotSupportedError");
    assert_eq!(
        b["error"]["data"]["supportedVersions"],
        json!(["0.3", "1.0"])
    );
    assert_eq!(b["id"], Value::Null);
    let (s, b) = env
        .rpc_key("/a2a/echo", Some("2.0"), send03("x"), "wrong")
        .await;
    assert_eq!(s, 200);
    let info = &b["error"]["data"][0];
    assert_eq!(info["reason"], "VERSION_NOT_SUPPORTED");
    assert_eq!(info["domain"], SPEC_DOMAIN);
    assert_eq!(info["metadata"]["supportedVersions"], "0.3,1.0");
    env.stop().await;
    // The DVARA API's 400 for a refused version: `json_rpc_error_status = "refusal"`.
    let env = env_with(Version::V10, |c| {
        c.json_rpc_error_status = a2a_gateway::config::ErrorStatusMode::Refusal
    })
    .await;
    let (s, b) = env
        .rpc_key("/a2a/echo", Some("2.0"), send03("x"), "wrong")
        .await;
    assert_eq!(s, 400);
    assert_eq!(b["error"]["code"], -32009);
    env.stop().await;
}

#[tokio::test]
async fn serve_v1_false_holds_at_03() {
    let env = env_with(Version::V10, |c| c.serve_v1 = false).await;
    let (s, b) = env.rpc("/a2a/echo", Some("1.0"), send10("x")).await;
    assert_eq!(s, 200);
    assert_eq!(
        b["error"]["data"][0]["metadata"]["supportedVersions"],
        "0.3"
    );
    // The 1.0 peer is reached as 0.3 only if it offers 0.3; the echo peer offers only 1.0.
    let (_, b) = env.rpc("/a2a/echo", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_protocol_unsupported", "{b}");
    env.stop().await;
}

#[tokio::test]
async fn content_types() {
    let env = env(Version::V10).await;
    let resp = env
        .http
        .post(env.url("/a2a/echo"))
        .header("content-type", "text/plain")
        .bearer_auth(&env.key)
        .body(send03("x").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 415);
    assert_eq!(
        resp.headers()["accept"],
        "application/json, application/a2a+json"
    );
    let b: Value = resp.json().await.unwrap();
    assert_eq!(gw_code(&b), "a2a_unsupported_media_type");
    // a2a+json accepted; answered in a2a+json only when that is all the client accepts.
    let resp = env
        .http
        .post(env.url("/a2a/echo"))
        .header("content-type", "application/a2a+json")
        .header("accept", "application/a2a+json")
        .bearer_auth(&env.key)
        .body(send03("x").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "application/a2a+json");
    env.stop().await;
}

#[tokio::test]
async fn keys_scopes_revocation_expiry() {
    let env = env(Version::V10).await;
    let (s, b) = env.rpc_key("/a2a/echo", None, send03("x"), "").await;
    assert_eq!(s, 401);
    assert_eq!(gw_code(&b), "a2a_unauthorized");
    let (_, read) = key_with(&env, &[Scope::Read], None);
    let (s, b) = env.rpc_key("/a2a/echo", None, send03("x"), &read).await;
    assert_eq!(s, 200);
    assert_eq!(b["error"]["code"], -32000);
    assert_eq!(gw_code(&b), "a2a_scope_denied");
    // a2a:read may read tasks (the peer answers task-not-found, passed through).
    let get = json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"nope"}});
    let (_, b) = env.rpc_key("/a2a/echo", None, get.clone(), &read).await;
    assert_eq!(b["error"]["code"], -32001, "{b}");
    assert_eq!(gw_code(&b), "a2a_upstream_error");
    assert!(
        !b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("echo agent")
    );
    let (id, send) = key_with(&env, &[Scope::Send], None);
    let (_, b) = env.rpc_key("/a2a/echo", None, get, &send).await;
    assert_eq!(gw_code(&b), "a2a_scope_denied");
    env.store.revoke_key(&id).unwrap();
    let (s, _) = env.rpc_key("/a2a/echo", None, send03("x"), &send).await;
    assert_eq!(s, 401);
    let (_, expired) = key_with(&env, &[], Some(1));
    let (s, b) = env.rpc_key("/a2a/echo", None, send03("x"), &expired).await;
    assert_eq!(s, 401);
    assert!(b["error"]["message"].as_str().unwrap().contains("expired"));
    // A tampered key with a valid id is refused.
    let mut tampered = env.key.clone();
    tampered.pop();
    tampered.push('Z');
    let (s, _) = env.rpc_key("/a2a/echo", None, send03("x"), &tampered).await;
    assert_eq!(s, 401);
    env.stop().await;
}

#[tokio::test]
async fn refusal_status_mode() {
    let env = env_with(Version::V10, |c| {
        c.json_rpc_error_status = ErrorStatusMode::Refusal
    })
    .await;
    let (_, read) = key_with(&env, &[Scope::Read], None);
    let (s, b) = env.rpc_key("/a2a/echo", None, send03("x"), &read).await;
    assert_eq!((s, gw_code(&b).as_str()), (403, "a2a_scope_denied"));
    let (s, _) = env.rpc("/a2a/ghost", None, send03("x")).await;
    assert_eq!(s, 404);
    env.stop().await;
}

#[tokio::test]
async fn method_names() {
    let env = env(Version::V10).await;
    let (s, b) = env
        .rpc(
            "/a2a/echo",
            None,
            json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(b["error"]["code"], -32601);
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tasks/get")
    );
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}),
        )
        .await;
    assert!(b["error"]["message"].as_str().unwrap().contains("GetTask"));
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            None,
            json!({"jsonrpc":"2.0","id":1,"params":{}}),
        )
        .await;
    assert_eq!(b["error"]["code"], -32600);
    let (_, b) = env
        .rpc(
            "/a2a/echo",
            None,
            json!({"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard"}),
        )
        .await;
    assert_eq!(b["error"]["code"], -32601);
    // Path routes name the operation.
    let (_, b) = env
        .rpc("/a2a/echo/message:send", None, send03("via path"))
        .await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let (_, b) = env.rpc("/a2a/echo/tasks:get", None, send03("x")).await;
    assert_eq!(b["error"]["code"], -32600);
    let (_, b) = env.rpc("/a2a/echo/bogus:op", None, send03("x")).await;
    assert_eq!(b["error"]["code"], -32601);
    // Not JSON.
    let resp = env
        .http
        .post(env.url("/a2a/echo"))
        .header("content-type", "application/json")
        .bearer_auth(&env.key)
        .body("{nope")
        .send()
        .await
        .unwrap();
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["code"], -32700);
    env.stop().await;
}

#[tokio::test]
async fn translation_both_ways_and_refusals() {
    for peer in [Version::V10, Version::V03] {
        let env = env(peer).await;
        let (_, b) = env.rpc("/a2a/echo", None, send03("hello")).await;
        assert_eq!(b["result"]["kind"], "task", "{peer:?} {b}");
        assert_eq!(b["result"]["status"]["state"], "completed");
        assert_eq!(
            b["result"]["artifacts"][0]["parts"][0],
            json!({"kind":"text","text":"echo: hello"})
        );
        let tid = b["result"]["id"].as_str().unwrap().to_owned();
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("hello")).await;
        assert_eq!(
            b["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{peer:?} {b}"
        );
        assert_eq!(b["result"]["task"]["history"][0]["role"], "ROLE_USER");
        // get and cancel
        let (_, b) = env
            .rpc(
                "/a2a/echo",
                Some("1.0"),
                json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":tid}}),
            )
            .await;
        assert_eq!(b["result"]["id"], tid.as_str(), "{b}");
        assert!(b["result"].get("kind").is_none());
        let (_, b) = env
            .rpc(
                "/a2a/echo",
                Some("1.0"),
                json!({"jsonrpc":"2.0","id":"c","method":"CancelTask","params":{"id":tid}}),
            )
            .await;
        assert_eq!(b["error"]["code"], -32002);
        assert_eq!(b["error"]["data"][0]["reason"], "TASK_NOT_CANCELABLE");
        assert_eq!(
            b["error"]["data"][0]["metadata"]["code"],
            "a2a_upstream_error"
        );
        // unknown member -> -32602 with path, nothing sent
        let bad = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":
            {"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":"a"},{"image":{}}]}}});
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), bad).await;
        assert_eq!(b["error"]["code"], -32602);
        assert!(
            b["error"]["message"]
                .as_str()
                .unwrap()
                .contains("params.message.parts[1]: unknown member image")
        );
        let role = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":
            {"messageId": uuid::Uuid::new_v4().to_string(),"role":"user","parts":[{"text":"a"}]}}});
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), role).await;
        assert_eq!(b["error"]["code"], -32602);
        if peer == Version::V03 {
            let f = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":
                {"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":"a","filename":"a.txt"}]}}});
            let (_, b) = env.rpc("/a2a/echo", Some("1.0"), f).await;
            assert_eq!(b["error"]["code"], -32004);
            assert_eq!(
                b["error"]["data"][0]["metadata"]["code"],
                "a2a_untranslatable"
            );
            // ListTasks, which 0.3 does not have, from the gateway's own records.
            let (_, b) = env
                .rpc(
                    "/a2a/echo",
                    Some("1.0"),
                    json!({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}),
                )
                .await;
            assert!(
                b["result"]["tasks"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["id"] == tid.as_str())),
                "{b}"
            );
        } else {
            let (_, b) = env
                .rpc(
                    "/a2a/echo",
                    Some("1.0"),
                    json!({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}),
                )
                .await;
            assert!(b["result"]["tasks"].is_array(), "{b}");
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn streams_translated_without_done() {
    for peer in [Version::V10, Version::V03] {
        let env = env(peer).await;
        let mut req = send03("s");
        req["method"] = json!("message/stream");
        let (s, ct, events) = env.sse("/a2a/echo", None, req).await;
        assert_eq!(s, 200);
        assert!(ct.starts_with("text/event-stream"));
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(events[0]["result"]["kind"], "task");
        assert_eq!(events[2]["result"]["kind"], "status-update");
        assert_eq!(events[2]["result"]["final"], true);
        assert!(events.iter().all(|e| e["id"] == "1"));
        let mut req = send10("s");
        req["method"] = json!("SendStreamingMessage");
        let (_, _, events) = env.sse("/a2a/echo/message:stream", Some("1.0"), req).await;
        assert!(
            events[1]["result"]["artifactUpdate"].is_object(),
            "{events:?}"
        );
        assert!(events[2]["result"]["statusUpdate"].get("final").is_none());
        let tid = events[0]["result"]["task"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        // resubscribe
        let (_, _, events) = env
            .sse(
                "/a2a/echo",
                Some("1.0"),
                json!({"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":tid}}),
            )
            .await;
        if peer == Version::V10 {
            assert_eq!(events[0]["result"]["task"]["id"], tid.as_str());
        } else {
            // The gateway reads the task first (a 0.3 peer does not send it): it is completed,
            // and a 1.0 subscribe on a terminal task is UnsupportedOperationError (S1 §3.1.6).
            let (_, b) = env
                .rpc(
                    "/a2a/echo",
                    Some("1.0"),
                    json!({"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":tid}}),
                )
                .await;
            assert_eq!(b["error"]["code"], -32004, "{b}");
            assert!(events.is_empty(), "{events:?}");
        }
        // refusal before the stream opens is a plain JSON-RPC error
        let (_, ct, events) = env
            .sse(
                "/a2a/echo",
                Some("1.0"),
                json!({"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":"ghost"}}),
            )
            .await;
        assert!(ct.starts_with("application/json"), "{ct}");
        assert!(events.is_empty());
        env.stop().await;
    }
    let env = env_with(Version::V10, |c| c.streaming_enabled = false).await;
    let mut req = send03("s");
    req["method"] = json!("message/stream");
    // A refused 0.3 streaming call is one SSE error event (as the official SDK servers answer).
    let (_, ct, events) = env.sse("/a2a/echo", None, req).await;
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(gw_code(&events[0]), "a2a_streaming_disabled");
    env.stop().await;
}

#[tokio::test]
async fn push_config_crud_and_paging_for_03_peer() {
    for peer in [Version::V10, Version::V03] {
        let env = env(peer).await;
        // "t1" never passed through the gateway: bind it to the caller (see `ownership`).
        bind_task(&env, &env.peers[0].url.clone(), "t1", "echo");
        // A public literal address (no DNS; the echo peer never delivers). Documentation ranges
        // such as 203.0.113.0/24 are refused by the shared SSRF policy (a2a_agent::net_guard).
        for cid in ["c1", "c2", "c3"] {
            let set = json!({"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":
                {"taskId":"t1","id":cid,"url":"https://8.8.8.8/a2a","token":"tok"}});
            let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set).await;
            assert_eq!(b["result"]["id"], cid, "{peer:?} {b}");
            assert_eq!(b["result"]["taskId"], "t1");
        }
        let get = json!({"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"t1","pushNotificationConfigId":"c2"}});
        let (_, b) = env.rpc("/a2a/echo", None, get).await;
        assert_eq!(b["result"]["pushNotificationConfig"]["id"], "c2", "{b}");
        let list = json!({"jsonrpc":"2.0","id":1,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"t1","pageSize":2}});
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), list).await;
        let configs = b["result"]["configs"].as_array().unwrap();
        if peer == Version::V03 {
            assert_eq!(configs.len(), 2, "{b}");
            let token = b["result"]["nextPageToken"].as_str().unwrap().to_owned();
            assert!(!token.is_empty());
            let next = json!({"jsonrpc":"2.0","id":1,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"t1","pageSize":2,"pageToken":token}});
            let (_, b) = env.rpc("/a2a/echo", Some("1.0"), next).await;
            assert_eq!(b["result"]["configs"].as_array().unwrap().len(), 1);
            assert_eq!(b["result"]["nextPageToken"], "");
            let foreign = json!({"jsonrpc":"2.0","id":1,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"t1","pageToken":"gw1.1.deadbeef"}});
            let (_, b) = env.rpc("/a2a/echo", Some("1.0"), foreign).await;
            assert_eq!(b["error"]["code"], -32602);
        } else {
            assert_eq!(configs.len(), 3);
        }
        let del = json!({"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/delete","params":{"id":"t1","pushNotificationConfigId":"c1"}});
        let (_, b) = env.rpc("/a2a/echo", None, del).await;
        assert_eq!(b["result"], Value::Null, "{b}");
        let list03 = json!({"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/list","params":{"id":"t1"}});
        let (_, b) = env.rpc("/a2a/echo", None, list03).await;
        assert_eq!(b["result"].as_array().unwrap().len(), 2, "{b}");
        // Webhooks at internal addresses are refused before the peer is contacted.
        let set = json!({"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":
            {"taskId":"t1","url":"https://169.254.169.254/hook"}});
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set).await;
        assert_eq!(b["error"]["code"], -32602);
        env.stop().await;
    }
}

#[tokio::test]
async fn message_limit_checked_first() {
    let env = env_with(Version::V10, |c| c.limits.max_message_chars = 10).await;
    // Over the limit and also invalid: the limit answers first.
    let mut req = send03("this text is longer than ten");
    req["params"]["message"]["parts"][0]["bogus"] = json!(1);
    let (s, b) = env.rpc("/a2a/echo", None, req).await;
    assert_eq!(s, 200);
    assert_eq!(gw_code(&b), "a2a_message_too_large");
    let (_, b) = env.rpc("/a2a/echo", None, send03("short")).await;
    assert_eq!(b["result"]["kind"], "task");
    env.stop().await;
}

#[tokio::test]
async fn workspace_isolation() {
    let env = env(Version::V10).await;
    let peer_url = env.peers[0].url.clone();
    env.register("ws2", "other", &peer_url, None);
    let (_, b1) = env.rpc("/a2a/other", None, send03("x")).await;
    let (_, b2) = env.rpc("/a2a/nothing", None, send03("x")).await;
    assert_eq!(gw_code(&b1), "a2a_agent_not_found");
    assert_eq!(b1["error"]["code"], b2["error"]["code"]);
    assert_eq!(
        b1["error"]["message"]
            .as_str()
            .unwrap()
            .replace("other", "X"),
        b2["error"]["message"]
            .as_str()
            .unwrap()
            .replace("nothing", "X")
    );
    env.stop().await;
}

#[tokio::test]
async fn governed_card_per_version_with_etag() {
    let env = env(Version::V10).await;
    let peer_url = env.peers[0].url.clone();
    env.register("ws1", "filtered", &peer_url, Some(vec!["echo"]));
    let get = |path: &str, version: Option<&str>, etag: Option<&str>, key: &str| {
        let mut r = env.http.get(env.url(path)).bearer_auth(key);
        if let Some(v) = version {
            r = r.header("A2A-Version", v);
        }
        if let Some(e) = etag {
            r = r.header("If-None-Match", e);
        }
        r.send()
    };
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["cache-control"], "private, max-age=60");
    assert!(
        resp.headers()["vary"]
            .to_str()
            .unwrap()
            .contains("A2A-Version")
    );
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    let card: Value = resp.json().await.unwrap();
    let base = env.url("/a2a/filtered");
    assert_eq!(
        card["supportedInterfaces"][0],
        json!({"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})
    );
    assert_eq!(card["supportedInterfaces"][1]["protocolVersion"], "0.3");
    assert_eq!(
        card["supportedInterfaces"][2]["protocolBinding"],
        "HTTP+JSON"
    );
    assert_eq!(card["url"], base.as_str());
    assert_eq!(card["protocolVersion"], "0.3");
    assert_eq!(card["capabilities"]["extendedAgentCard"], false);
    assert!(card.get("signatures").is_none());
    assert_eq!(card["skills"].as_array().unwrap().len(), 1);
    assert_eq!(card["skills"][0]["id"], "echo");
    assert_eq!(
        card["securitySchemes"]["a2aGatewayKey"]["httpAuthSecurityScheme"]["scheme"],
        "bearer"
    );
    // 304 with the tag; 401 wins over the tag.
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        None,
        Some(&etag),
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 304);
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        None,
        Some(&etag),
        "bad",
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // 0.3 card: pure 0.3, different tag.
    let resp = get(
        "/a2a/filtered/.well-known/agent-card.json",
        Some("0.3"),
        None,
        &env.key,
    )
    .await
    .unwrap();
    let etag03 = resp.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(etag03, etag);
    let c03: Value = resp.json().await.unwrap();
    assert!(c03.get("supportedInterfaces").is_none());
    assert_eq!(c03["preferredTransport"], "JSONRPC");
    assert_eq!(c03["supportsAuthenticatedExtendedCard"], false);
    assert_eq!(
        c03["securitySchemes"]["a2aGatewayKey"],
        json!({"type":"http","scheme":"bearer","description":"Workspace API key of the A2A gateway"})
    );
    assert_eq!(c03["security"], json!([{"a2aGatewayKey": []}]));
    // Unfiltered agent: both skills; different tag for a different card.
    let resp = get(
        "/a2a/echo/.well-known/agent-card.json",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_ne!(resp.headers()["etag"].to_str().unwrap(), etag);
    let c: Value = resp.json().await.unwrap();
    assert_eq!(c["skills"].as_array().unwrap().len(), 2);
    // Bad version; query parameter does not pick the card version.
    let resp = get(
        "/a2a/echo/.well-known/agent-card.json",
        Some("3.1"),
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let resp = get(
        "/a2a/echo/.well-known/agent-card.json?A2A-Version=0.3&refresh=true",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    let c: Value = resp.json().await.unwrap();
    assert!(c["supportedInterfaces"].is_array());
    // Missing agent: 404; 1.0 clients get google.rpc.Status, header-less get the legacy form.
    let resp = get(
        "/a2a/ghost/.well-known/agent-card.json",
        None,
        None,
        &env.key,
    )
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["code"], "a2a_agent_not_found");
    let resp = get(
        "/a2a/ghost/.well-known/agent-card.json",
        Some("1.0"),
        None,
        &env.key,
    )
    .await
    .unwrap();
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["status"], "NOT_FOUND");
    assert_eq!(b["error"]["details"][0]["domain"], GATEWAY_DOMAIN);
    env.stop().await;
}

#[tokio::test]
async fn interface_selection_and_url_checks_against_real_peers() {
    let env = env(Version::V10).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let grpc = json!({"name":"g","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url":format!("127.0.0.1:{port}"),"protocolBinding":"GRPC","protocolVersion":"0.3"},
                               {"url":format!("http://127.0.0.1:{port}/"),"protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}]});
    let grpc_peer = start_echo(l, Version::V10, Some(grpc)).await.unwrap();
    env.register("ws1", "grpc", &grpc_peer.url, None);
    let (s, b) = env.rpc("/a2a/grpc", None, send03("x")).await;
    assert_eq!(s, 200);
    assert_eq!(gw_code(&b), "a2a_peer_protocol_unsupported");
    let msg = b["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("gRPC is supported at A2A 1.0 only") && msg.contains("supportedInterfaces[1]"),
        "{msg}"
    );

    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere = json!({"name":"e","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url":"http://localhost:1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]});
    let peer = start_echo(l, Version::V10, Some(elsewhere)).await.unwrap();
    env.register("ws1", "elsewhere", &peer.url, None);
    let (_, b) = env.rpc("/a2a/elsewhere", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("registered endpoint")
    );

    // Registered endpoints at internal addresses are refused outside development mode.
    let prod = env_with(Version::V10, |c| c.dev_mode = false).await;
    let (_, b) = prod.rpc("/a2a/echo", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused", "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("plain http")
    );
    grpc_peer.shutdown().await;
    peer.shutdown().await;
    prod.stop().await;
    env.stop().await;
}

async fn html_peer() -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::{get, post};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let card = a2a_gateway::demo::echo_card(&url, Version::V10);
    let app = axum::Router::new()
        .route("/.well-known/agent-card.json", get(move || async move { axum::Json(card.clone()) }))
        .route(
            "/",
            post(|body: String| async move {
                if body.contains("SendStreamingMessage") {
                    ([("content-type", "application/json")], "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"weird\":true}}").into_response()
                } else if body.contains("GetTask") {
                    ([("content-type", "application/json")], "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"error\":{\"code\":-32009,\"message\":\"no\"}}").into_response()
                } else if body.contains("CancelTask") {
                    ([("content-type", "application/json")], "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"task\":1,\"x\":2}}").into_response()
                } else {
                    ([("content-type", "text/html")], "<html>oops</html>").into_response()
                }
            }),
        );
    use axum::response::IntoResponse;
    let h = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, h)
}

#[tokio::test]
async fn upstream_failures() {
    let env = env(Version::V10).await;
    let (url, h) = html_peer().await;
    env.register("ws1", "html", &url, None);
    bind_task(&env, &url, "t", "html");
    let (_, b) = env.rpc("/a2a/html", Some("1.0"), send10("x")).await;
    assert_eq!(gw_code(&b), "a2a_upstream_content_type", "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("text/html")
    );
    let (_, b) = env
        .rpc(
            "/a2a/html",
            Some("1.0"),
            json!({"jsonrpc":"2.0","id":"1","method":"GetTask","params":{"id":"t"}}),
        )
        .await;
    assert_eq!(gw_code(&b), "a2a_peer_version_not_supported");
    assert!(b["error"]["message"].as_str().unwrap().contains("html"));
    let (_, b) = env
        .rpc(
            "/a2a/html",
            None,
            json!({"jsonrpc":"2.0","id":"1","method":"tasks/cancel","params":{"id":"t"}}),
        )
        .await;
    assert_eq!(b["error"]["code"], -32006, "{b}");
    assert_eq!(gw_code(&b), "a2a_upstream_invalid_response");
    // An unreachable peer.
    env.register("ws1", "down", "http://127.0.0.1:9/", None);
    let (_, b) = env.rpc("/a2a/down", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_card_unavailable", "{b}");
    h.abort();
    env.stop().await;
}

#[tokio::test]
async fn http_json_binding_for_callers() {
    let env = env(Version::V03).await;
    let resp = env
        .http
        .post(env.url("/a2a/echo/v1/message:send"))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .body(
            json!({"message":{"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":"rest"}]}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let b: Value = resp.json().await.unwrap();
    let tid = b["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(b["task"]["artifacts"][0]["parts"][0]["text"], "echo: rest");
    let resp = env
        .http
        .get(env.url(&format!("/a2a/echo/v1/tasks/{tid}")))
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["status"]["state"], "TASK_STATE_COMPLETED");
    let resp = env
        .http
        .get(env.url("/a2a/echo/v1/tasks/ghost"))
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    let resp = env
        .http
        .post(env.url(&format!("/a2a/echo/v1/tasks/{tid}:cancel")))
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let resp = env
        .http
        .post(env.url("/a2a/echo/v1/message:stream"))
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .bearer_auth(&env.key)
        .body(
            json!({"message":{"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":"rest"}]}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    assert!(events[0]["task"].is_object(), "{text}");
    assert!(events[2]["statusUpdate"].is_object());
    let resp = env
        .http
        .get(env.url("/a2a/echo/v1/tasks"))
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    let b: Value = resp.json().await.unwrap();
    // ListTasks at the 0.3 peer, served from the gateway's records.
    assert!(
        b["tasks"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["id"] == tid.as_str())),
        "{b}"
    );
    // No A2A-Version is 0.3 (S1 §3.6.2): served in the 0.3 HTTP+JSON dialect (ProtoJSON of the
    // 0.3 proto) on the same path.
    let resp = env
        .http
        .get(env.url(&format!("/a2a/echo/v1/tasks/{tid}")))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["id"], tid.as_str(), "{b}");
    assert_eq!(b["status"]["state"], "TASK_STATE_COMPLETED", "{b}");
    // ListTasks is not a 0.3 operation.
    let resp = env
        .http
        .get(env.url("/a2a/echo/v1/tasks"))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["code"], -32601, "{b}");
    env.stop().await;
}

#[tokio::test]
async fn audit_metrics_and_trace_propagation() {
    let env = env(Version::V03).await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let resp = env
        .http
        .post(env.url("/a2a/echo"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .bearer_auth(&env.key)
        .body(send10("audit me").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let peer_headers = env.peers[0].last_headers();
    let tp = peer_headers
        .iter()
        .find(|(k, _)| k == "traceparent")
        .unwrap();
    assert!(tp.1.contains(trace));
    assert!(
        peer_headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer peer-cred")
    );
    assert!(
        peer_headers
            .iter()
            .any(|(k, v)| k == "a2a-version" && v == "0.3")
    );
    let (_, read) = key_with(&env, &[Scope::Read], None);
    let _ = env.rpc_key("/a2a/echo", None, send03("x"), &read).await;

    let hops: Value = env
        .http
        .get(env.url("/admin/hops?workspace=ws1&agent=echo"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let hops = hops.as_array().unwrap();
    let first = hops.iter().find(|h| h["traceId"] == trace).unwrap();
    assert_eq!(first["operation"], "message/send");
    assert_eq!(first["clientMethod"], "SendMessage");
    assert_eq!(first["peerMethod"], "message/send");
    assert_eq!(first["clientVersion"], "1.0");
    assert_eq!(first["peerVersion"], "0.3");
    assert_eq!(first["peerBinding"], "JSONRPC");
    assert_eq!(first["decision"], "allowed");
    let denied = hops
        .iter()
        .find(|h| h["errorCode"] == "a2a_scope_denied")
        .unwrap();
    assert_eq!(denied["status"], 403);
    assert_eq!(denied["decision"], "refused");
    // JSON lines export and the admin token.
    let resp = env
        .http
        .get(env.url("/admin/audit"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    assert!(text.lines().count() >= 2);
    for l in text.lines() {
        serde_json::from_str::<Value>(l).unwrap();
    }
    let resp = env
        .http
        .get(env.url("/admin/audit"))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // Append-only.
    assert!(env.store.execute_raw("DELETE FROM audit").is_err());
    assert!(
        env.store
            .execute_raw("UPDATE audit SET decision = 'x'")
            .is_err()
    );
    let metrics = env
        .http
        .get(env.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("a2a_requests_total{operation=\"message/send\",code=\"ok\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics
            .contains("a2a_requests_total{operation=\"message/send\",code=\"a2a_scope_denied\"} 1")
    );
    assert!(metrics.contains("a2a_request_duration_seconds_count{operation=\"message/send\"} 2"));
    env.stop().await;
}

#[tokio::test]
async fn admin_api_manages_registry() {
    let env = env(Version::V10).await;
    let post = |path: &str, body: Value| {
        env.http
            .post(env.url(path))
            .bearer_auth(ADMIN)
            .json(&body)
            .send()
    };
    let r = post("/admin/workspaces", json!({"id": "ws3"}))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let r = post("/admin/workspaces", json!({"id": "ws3"}))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let peer = env.peers[0].url.clone();
    let r = post(
        "/admin/workspaces/ws3/agents",
        json!({"agentId": "e", "endpoint": peer, "credential": "s3cret"}),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let listed: Value = env
        .http
        .get(env.url("/admin/workspaces/ws3/agents"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["agentId"], "e");
    assert!(
        listed[0].get("credential").is_none(),
        "credentials are never listed"
    );
    let k: Value = post(
        "/admin/workspaces/ws3/keys",
        json!({"scopes": ["a2a:send"]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let key = k["key"].as_str().unwrap().to_owned();
    let (_, b) = env.rpc_key("/a2a/e", None, send03("hi"), &key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let keys: Value = env
        .http
        .get(env.url("/admin/workspaces/ws3/keys"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(keys[0].get("key").is_none());
    let r = env
        .http
        .post(env.url(&format!(
            "/admin/keys/{}/revoke",
            k["keyId"].as_str().unwrap()
        )))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (s, _) = env.rpc_key("/a2a/e", None, send03("hi"), &key).await;
    assert_eq!(s, 401);
    env.stop().await;
}

/// A step of another implementation, plugged in after the gateway's own: refuses hops that
/// arrive deep in a delegation chain.
struct DenyDeep;
impl a2a_gateway::seams::Step for DenyDeep {
    fn name(&self) -> &'static str {
        "deny-deep"
    }
    fn active(&self, _hop: &a2a_gateway::seams::Hop) -> bool {
        true
    }
    fn request(
        &self,
        hop: &a2a_gateway::seams::Hop,
        _params: &mut Value,
        _ev: &mut a2a_gateway::seams::Evidence,
    ) -> Result<(), a2a_gateway::errors::Refusal> {
        if hop.chain.len() >= 2 {
            return Err(a2a_gateway::errors::Refusal::internal("policy: too deep"));
        }
        Ok(())
    }
}

#[tokio::test]
async fn plugged_steps_are_called_and_hops_counted() {
    use a2a_gateway::governance::{
        Governance, approval::SqliteApprovals, loops::ChainKey, store::SqliteGov,
    };
    let dir = tempfile::tempdir().unwrap();
    let store = a2a_gateway::store::Store::open(&dir.path().join("s.db")).unwrap();
    store.create_workspace("ws1", "One").unwrap();
    let (_, key) = store.create_key("ws1", &[], None, None).unwrap();
    let peer = start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        Version::V10,
        None,
    )
    .await
    .unwrap();
    store
        .upsert_agent(&a2a_gateway::store::Agent {
            workspace_id: "ws1".into(),
            agent_id: "echo".into(),
            endpoint: peer.url.clone(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .unwrap();
    let config = a2a_gateway::config::Config {
        dev_mode: true,
        delegation_key: Some("k".into()),
        ..Default::default()
    };
    let governance = Governance::new(
        std::sync::Arc::new(SqliteGov::new(store.clone())),
        std::sync::Arc::new(SqliteApprovals::new(store.clone())),
        &config.governance(),
    )
    .with_step(std::sync::Arc::new(DenyDeep));
    let gw = a2a_gateway::server::Gateway::new(config, store)
        .unwrap()
        .with_governance(governance)
        .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let key_k = ChainKey::new(b"k");
    let chain = |n: usize| key_k.sign(&(0..n).map(|i| format!("ws1/a{i}")).collect::<Vec<_>>());
    let call = |hops: &str| {
        let depth = hops.parse::<usize>().unwrap() - 1;
        http.post(format!("{}/a2a/echo", gw.base_url()))
            .header("content-type", "application/json")
            .header("x-a2a-gateway-hops", hops)
            .header("a2a-delegation-chain", chain(depth))
            .bearer_auth(&key)
            .body(send03("x").to_string())
            .send()
    };
    let b: Value = call("1").await.unwrap().json().await.unwrap();
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let sent = peer.last_headers();
    assert!(
        sent.iter()
            .any(|(k, v)| k == "x-a2a-gateway-hops" && v == "2"),
        "{sent:?}"
    );
    let b: Value = call("3").await.unwrap().json().await.unwrap();
    assert_eq!(b["error"]["data"]["code"], "a2a_internal_error", "{b}");
    gw.shutdown().await;
    peer.shutdown().await;
}

#[tokio::test]
async fn entry_tenant_and_path_are_used() {
    let env = env(Version::V10).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let card = json!({"name":"t","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url": url, "protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"acme"}]});
    let peer = start_echo(l, Version::V10, Some(card)).await.unwrap();
    // Registered with a path: the card is read at <endpoint>/.well-known (404) then the origin's.
    env.register("ws1", "tenant", &format!("{}/agents/t", peer.url), None);
    let (_, b) = env.rpc("/a2a/tenant", None, send03("x")).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let sent = peer.last_body();
    assert_eq!(sent["params"]["tenant"], "acme", "{sent}");
    assert_eq!(sent["method"], "SendMessage");
    peer.shutdown().await;
    env.stop().await;
}
