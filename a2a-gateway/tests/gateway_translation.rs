//! End-to-end tests of translation between 0.3 and 1.0 (both ways, refusals, streams, push
//! config paging for a 0.3 peer), the message limit and workspace isolation.

use crate::common;

use a2a_gateway::errors::Version;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn translation_both_ways_and_refusals() {
    for peer in [Version::V1, Version::V03] {
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
    for peer in [Version::V1, Version::V03] {
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
        if peer == Version::V1 {
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
    let env = env_with(Version::V1, |c| c.streaming_enabled = false).await;
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
    for peer in [Version::V1, Version::V03] {
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
    let env = env_with(Version::V1, |c| c.limits.max_message_chars = 10).await;
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
    let env = env(Version::V1).await;
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
