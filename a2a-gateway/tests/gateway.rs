//! End-to-end tests of the caller edge: version rules, content types, keys and scopes, refusal
//! statuses, method names. Real gateway, real echo peers, real SQLite files, all on loopback.
//! Translation: `gateway_translation.rs`; cards and peers: `gateway_peers.rs`; bindings, audit,
//! admin API and plugged steps: `gateway_ops.rs`.

use crate::common;

use a2a_gateway::config::ErrorStatusMode;
use a2a_gateway::errors::{SPEC_DOMAIN, Version};
use a2a_gateway::keys::Scope;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn version_rules() {
    let env = env(Version::V1).await;
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
    let env = env_with(Version::V1, |c| {
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
    let env = env_with(Version::V1, |c| c.serve_v1 = false).await;
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
    let env = env(Version::V1).await;
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
    let env = env(Version::V1).await;
    let (s, b) = env.rpc_key("/a2a/echo", None, send03("x"), "").await;
    assert_eq!(s, 401);
    assert_eq!(gw_code(&b), "a2a_unauthorized");
    let (_, read) = key_with(&env, &[Scope::Read], None);
    let (s, b) = env.rpc_key("/a2a/echo", None, send03("x"), &read).await;
    assert_eq!(s, 200);
    assert_eq!(b["error"]["code"], -32000);
    assert_eq!(gw_code(&b), "a2a_scope_denied");
    // a2a:read may read tasks (a task the workspace does not own is the gateway's own
    // TaskNotFound, never labelled as the peer's).
    let get = json!({"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"nope"}});
    let (_, b) = env.rpc_key("/a2a/echo", None, get.clone(), &read).await;
    assert_eq!(b["error"]["code"], -32001, "{b}");
    assert_eq!(gw_code(&b), "a2a_task_not_found");
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
    let env = env_with(Version::V1, |c| {
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
    let env = env(Version::V1).await;
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
