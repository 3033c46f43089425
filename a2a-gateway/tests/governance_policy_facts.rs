//! Policy facts mean what they say (issue 39, item 5), through a real gateway and a real peer:
//! the example policy of docs/gateway/governance.md decides real hops as its comments say (a file part
//! from a 0.3 caller and a 1.0 caller with bytes or a URL is `file`), `declared_skill` and
//! `declared_skill_on_card`, `message.bytes` counting the request's metadata, and a send with
//! an inline push config evaluated as `CreateTaskPushNotificationConfig` too.

use crate::common;

use a2a_gateway::errors::Version;
use common::gov::admin;
use common::*;
use serde_json::{Value, json};

fn rule_of(b: &Value) -> String {
    let d = &b["error"]["data"];
    if let Some(a) = d.as_array() {
        a[0]["metadata"]["rule"].as_str().unwrap_or("").to_owned()
    } else {
        d["rule"].as_str().unwrap_or("").to_owned()
    }
}

/// The example policy document of docs/gateway/governance.md ("Policy").
fn docs_example() -> Value {
    let doc = include_str!("../../docs/gateway/governance.md");
    let start = doc
        .find("{\"default\": \"allow\",\n \"rules\": [\n   {\"id\": \"no-secrets-out\"")
        .expect("docs/gateway/governance.md has the example policy");
    let end = doc[start..].find("\n```").expect("the example ends") + start;
    serde_json::from_str(&doc[start..end]).expect("the example is JSON")
}

fn with_parts(mut req: Value, parts: Value) -> Value {
    req["params"]["message"]["parts"] = parts;
    req
}

async fn put_policy(env: &Env, policy: Value) {
    let (s, b) = admin(env, "PUT", "/admin/workspaces/ws1/policy", Some(policy)).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn the_docs_example_policy_decides_real_hops() {
    let env = env_with(Version::V1, |_| {}).await;
    let peer = env.peers[0].url.clone();
    env.register("ws1", "billing", &peer, None);
    put_policy(&env, docs_example()).await;

    // small-text-only: a file part in every spelling is `file`.
    let file03 = json!([{"kind": "file", "file": {"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "a.txt"}}]);
    let url03 = json!([{"kind": "file", "file": {"uri": "https://example.org/a.pdf", "mimeType": "application/pdf"}}]);
    let raw10 = json!([{"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "a.txt"}]);
    let url10 = json!([{"url": "https://example.org/a.pdf", "mediaType": "application/pdf"}]);
    for (v, req) in [
        (None, with_parts(send03("x"), file03)),
        (None, with_parts(send03("x"), url03)),
        (Some("1.0"), with_parts(send10("x"), raw10)),
        (Some("1.0"), with_parts(send10("x"), url10)),
    ] {
        let (_, b) = env.rpc("/a2a/echo", v, req).await;
        assert_eq!(rule_of(&b), "small-text-only", "{v:?}: {b}");
    }
    // A short text goes through.
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("hello")).await;
    assert!(b["result"]["task"].is_object(), "{b}");

    // refunds-need-a-person: the declared skill on the message (or the request) of a send to
    // billing holds it for approval (no approval step here: refused as pending).
    let mut req = send10("refund order 7");
    req["params"]["message"]["metadata"] = json!({"skill": "refund"});
    let (_, b) = env.rpc("/a2a/billing", Some("1.0"), req).await;
    assert_eq!(rule_of(&b), "", "{b}");
    assert!(b.to_string().contains("approval"), "{b}");
    env.stop().await;
}

#[tokio::test]
async fn skill_bytes_and_inline_push_configs() {
    let env = env_with(Version::V1, |_| {}).await;
    put_policy(
        &env,
        json!({"default": "allow", "rules": [
            {"id": "no-webhooks", "when": "operation == 'CreateTaskPushNotificationConfig'", "decision": "deny"},
            {"id": "claimed-not-on-card", "when": "declared_skill != '' && !declared_skill_on_card", "decision": "deny"},
            {"id": "big", "when": "message.bytes > 4000", "decision": "deny"}]}),
    )
    .await;
    // The echo agent's card lists the skill `echo`.
    let mut req = send10("hi");
    req["params"]["message"]["metadata"] = json!({"skill": "echo"});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req).await;
    assert!(b["result"]["task"].is_object(), "{b}");
    let mut req = send10("hi");
    req["params"]["metadata"] = json!({"skill": "made-up"});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req).await;
    assert_eq!(rule_of(&b), "claimed-not-on-card", "{b}");
    // The message's declared skill is the one that counts when both name one.
    let mut req = send10("hi");
    req["params"]["metadata"] = json!({"skill": "echo"});
    req["params"]["message"]["metadata"] = json!({"skill": "made-up"});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req).await;
    assert_eq!(rule_of(&b), "claimed-not-on-card", "{b}");
    // message.bytes counts the request's metadata.
    let mut req = send10("hi");
    req["params"]["metadata"] = json!({"note": "n".repeat(5000)});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req).await;
    assert_eq!(rule_of(&b), "big", "{b}");
    // An inline push config is a CreateTaskPushNotificationConfig too, in both versions.
    let mut req = send10("hi");
    req["params"]["configuration"] =
        json!({"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}});
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req).await;
    assert_eq!(rule_of(&b), "no-webhooks", "{b}");
    let mut req = send03("hi");
    req["params"]["configuration"] =
        json!({"pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}});
    let (_, b) = env.rpc("/a2a/echo", None, req).await;
    assert_eq!(rule_of(&b), "no-webhooks", "{b}");
    let (_, hops) = admin(&env, "GET", "/admin/hops?workspace=ws1&limit=100", None).await;
    let pushed = hops
        .as_array()
        .expect("hops")
        .iter()
        .filter(|h| {
            h["governance"]["decisions"]
                .to_string()
                .contains("policy_push_config")
        })
        .count();
    assert_eq!(pushed, 2, "{hops}");
    env.stop().await;
}
