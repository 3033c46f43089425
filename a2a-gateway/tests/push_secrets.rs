//! Webhook secrets are never returned to a caller (issue 39, item 7): a push config's token and
//! `authentication.credentials` read as `[REDACTED]` in the answers of Create, Get and List, in
//! every version and binding (JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0 and 0.3, gRPC), sealed or
//! direct delivery; an `a2a:read` key asks for the config another key set. The caller's own
//! webhook in those answers is not read by the workspace's PII rules.

use crate::common;

use a2a_client::{A2aClient, Binding};
use a2a_gateway::errors::Version;
use a2a_gateway::keys::Scope;
use common::*;
use serde_json::{Value, json};

const TOKEN: &str = "tok-very-secret";
const CRED: &str = "cred-very-secret";
const REDACTED: &str = "[REDACTED]";

/// Every push config object in an answer of either version (1.0 configs, 0.3
/// `pushNotificationConfig`s), alone, in a list or under `configs`.
fn configs(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().flat_map(configs).collect(),
        Value::Object(o) => {
            if o.contains_key("url") {
                return vec![v];
            }
            o.values().flat_map(configs).collect()
        }
        _ => Vec::new(),
    }
}

/// `answer` shows a config, with its token and credentials set but hidden.
fn hidden(what: &str, answer: &Value) {
    let text = answer.to_string();
    assert!(
        !text.contains(TOKEN) && !text.contains(CRED),
        "{what}: {text}"
    );
    let found = configs(answer);
    assert!(!found.is_empty(), "{what}: no config in {text}");
    for c in found {
        assert_eq!(c["token"], REDACTED, "{what}: {text}");
        assert_eq!(
            c["authentication"]["credentials"], REDACTED,
            "{what}: {text}"
        );
    }
}

async fn rest(env: &Env, version: Option<&str>, path: &str, key: &str) -> Value {
    let mut req = env.http.get(env.url(path)).bearer_auth(key);
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let r = req.send().await.unwrap();
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_answers_never_carry_webhook_secrets() {
    for sealed in [false, true] {
        let env = env_with(Version::V1, |c| {
            c.serve_grpc = true;
            if sealed {
                c.push_direct_workspaces = Vec::new();
                c.push_callback_base_url = Some(format!("http://{}", c.listen));
            }
        })
        .await;
        let peer = env.peers[0].url.clone();
        bind_task(&env, &peer, "t1", "echo");
        // The writer sets the config with a token and credentials.
        let set = json!({"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig",
            "params":{"taskId":"t1","id":"c1","url":"https://8.8.8.8/a2a","token": TOKEN,
            "authentication": {"scheme": "Bearer", "credentials": CRED}}});
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), set).await;
        assert_eq!(b["result"]["id"], "c1", "{b}");
        hidden("create 1.0", &b["result"]);
        let set03 = json!({"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set",
            "params":{"taskId":"t1","pushNotificationConfig":{"id":"c2",
            "url":"https://8.8.8.8/b","token": TOKEN,
            "authentication": {"schemes": ["Basic"], "credentials": CRED}}}});
        let (_, b) = env.rpc("/a2a/echo", None, set03).await;
        hidden("create 0.3", &b["result"]);

        // A reader (a2a:read) asks, in every version and binding.
        let (_, reader) = key_with(&env, &[Scope::Read], None);
        let rpc = |v: Option<&str>, m: &str, p: Value| {
            (
                v.map(str::to_owned),
                json!({"jsonrpc":"2.0","id":1,"method": m,"params": p}),
            )
        };
        for (v, body) in [
            rpc(
                Some("1.0"),
                "GetTaskPushNotificationConfig",
                json!({"taskId":"t1","id":"c1"}),
            ),
            rpc(
                Some("1.0"),
                "ListTaskPushNotificationConfigs",
                json!({"taskId":"t1"}),
            ),
            rpc(
                None,
                "tasks/pushNotificationConfig/get",
                json!({"id":"t1","pushNotificationConfigId":"c1"}),
            ),
            rpc(
                None,
                "tasks/pushNotificationConfig/list",
                json!({"id":"t1"}),
            ),
        ] {
            let what = format!("{} {v:?} sealed={sealed}", body["method"]);
            let (s, b) = env.rpc_key("/a2a/echo", v.as_deref(), body, &reader).await;
            assert_eq!(s, 200, "{what}: {b}");
            assert!(b.get("error").is_none(), "{what}: {b}");
            hidden(&what, &b["result"]);
        }
        for v in [Some("1.0"), None] {
            let one = rest(
                &env,
                v,
                "/a2a/echo/v1/tasks/t1/pushNotificationConfigs/c1",
                &reader,
            )
            .await;
            hidden(&format!("HTTP+JSON get {v:?}"), &one);
            let all = rest(
                &env,
                v,
                "/a2a/echo/v1/tasks/t1/pushNotificationConfigs",
                &reader,
            )
            .await;
            hidden(&format!("HTTP+JSON list {v:?}"), &all);
        }
        let c = A2aClient::builder()
            .binding(Binding::Grpc)
            .header("authorization", &format!("Bearer {reader}"))
            .unwrap()
            .connect(&env.url("/a2a/echo"))
            .await
            .unwrap();
        assert_eq!(c.interface().binding, Binding::Grpc);
        let one = c.get_push_config("t1", "c1").await.unwrap();
        hidden("gRPC get", &serde_json::to_value(&one).unwrap());
        let all = c
            .list_push_configs(a2a_types::v1::ListTaskPushNotificationConfigsRequest {
                task_id: "t1".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        hidden("gRPC list", &serde_json::to_value(&all).unwrap());
        // Only answers hide them: asked directly, the peer holds the caller's token (direct
        // delivery) or the gateway's own callback and token (sealed: the gateway keeps the
        // caller's and sends them with each notification).
        let at_peer: Value = env
            .http
            .post(&peer)
            .header("A2A-Version", "1.0")
            .json(
                &json!({"jsonrpc":"2.0","id":"g","method":"GetTaskPushNotificationConfig",
                "params":{"taskId":"t1","id":"c1"}}),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let token = at_peer["result"]["token"].as_str().unwrap_or("");
        assert_eq!(token == TOKEN, !sealed, "{at_peer}");
        assert!(!token.is_empty() && token != REDACTED, "{at_peer}");
        env.stop().await;
    }
}

/// The caller's own webhook, which the gateway writes back into push config answers from its
/// records, is not read by the workspace's PII rules (issue 39: only what the peer wrote is):
/// with rules that block IPv4 addresses (the webhook's host, and the gateway's callback host
/// the peer holds) and e-mails, configs whose webhook carries both are set, read and listed in
/// 1.0 and 0.3, and shown as the caller set them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callers_own_webhook_is_not_read_by_pii_rules() {
    let env = env_with(Version::V1, |c| {
        c.push_direct_workspaces = Vec::new();
        c.push_callback_base_url = Some(format!("http://{}", c.listen));
    })
    .await;
    let (s, b) = common::gov::admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/pii",
        Some(json!({"default_action": "record", "actions": {"IPV4": "block", "EMAIL": "block"}})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let peer = env.peers[0].url.clone();
    bind_task(&env, &peer, "t1", "echo");
    let (u1, u2) = (
        "https://8.8.8.8/a2a?for=ann@example.org",
        "https://8.8.4.4/b?for=bob@example.com",
    );
    let rpc = |v: Option<&str>, m: &str, p: Value| {
        (
            v.map(str::to_owned),
            json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": p}),
        )
    };
    for (v, body) in [
        rpc(
            Some("1.0"),
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t1", "id": "c1", "url": u1, "token": TOKEN,
                "authentication": {"scheme": "Bearer", "credentials": CRED}}),
        ),
        rpc(
            None,
            "tasks/pushNotificationConfig/set",
            json!({"taskId": "t1", "pushNotificationConfig": {"id": "c2", "url": u2,
                "authentication": {"schemes": ["Basic"], "credentials": CRED}}}),
        ),
        rpc(
            Some("1.0"),
            "GetTaskPushNotificationConfig",
            json!({"taskId": "t1", "id": "c1"}),
        ),
        rpc(
            None,
            "tasks/pushNotificationConfig/get",
            json!({"id": "t1", "pushNotificationConfigId": "c2"}),
        ),
        rpc(
            Some("1.0"),
            "ListTaskPushNotificationConfigs",
            json!({"taskId": "t1"}),
        ),
        rpc(
            None,
            "tasks/pushNotificationConfig/list",
            json!({"id": "t1"}),
        ),
    ] {
        let what = format!("{} {v:?}", body["method"]);
        let (s, b) = env.rpc("/a2a/echo", v.as_deref(), body).await;
        assert_eq!(s, 200, "{what}: {b}");
        assert!(b.get("error").is_none(), "{what}: {b}");
        let found = configs(&b["result"]);
        assert!(!found.is_empty(), "{what}: {b}");
        for c in found {
            let url = c["url"].as_str().unwrap_or("");
            assert!(url == u1 || url == u2, "{what}: {b}");
            let auth = &c["authentication"];
            let scheme = auth["scheme"]
                .as_str()
                .or(auth["schemes"][0].as_str())
                .unwrap_or("");
            assert_eq!(
                scheme,
                if url == u1 { "Bearer" } else { "Basic" },
                "{what}: {b}"
            );
            assert_eq!(auth["credentials"], REDACTED, "{what}: {b}");
        }
    }
    env.stop().await;
}
