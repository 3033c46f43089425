//! Workspace policies through a real gateway and a real peer: each attribute a policy sees
//! deciding a hop (the full table of decisions × attributes is `governance_policy_table.rs`),
//! validation on save, explain, the audit evidence, the operator's default-deny switch and
//! isolation between workspaces.

use crate::common;

use a2a_gateway::config::{ErrorStatusMode, PolicyDefault};
use a2a_gateway::errors::Version;
use a2a_gateway::governance::loops::ChainKey;
use a2a_gateway::keys::Scope;
use common::gov::admin;
use common::*;
use serde_json::{Value, json};

const KEY: &str = "delegation-test-key";

fn rule(id: &str, when: &str, decision: &str) -> Value {
    json!({"id": id, "when": when, "decision": decision})
}

fn policy() -> Value {
    json!({"rules": [
        rule("deny-agent", "agent.id == 'blocked'", "deny"),
        rule("deny-scoped-key", "agent.id == 'e-key' && size(key.scopes) > 0 && key.scopes.exists(s, s == 'a2a:send')", "deny"),
        rule("deny-get", "agent.id == 'e-op' && operation == 'GetTask'", "deny"),
        rule("deny-skill", "agent.id == 'e-skill' && skill == 'forbidden'", "deny"),
        rule("approve-card-skill", "agent.id == 'e-card' && 'echo' in agent.skills", "approve"),
        rule("deny-03", "agent.id == 'e-ver' && version == '0.3'", "deny"),
        rule("deny-rest", "agent.id == 'e-bind' && binding == 'HTTP+JSON'", "deny"),
        rule("deny-big", "agent.id == 'e-msg' && message.bytes > 2000", "deny"),
        rule("deny-data", "agent.id == 'e-msg' && 'data' in message.part_kinds", "deny"),
        rule("deny-email", "agent.id == 'e-pii' && pii.EMAIL > 0", "deny"),
        rule("deny-deep", "agent.id == 'e-chain' && chain.depth >= 2", "deny"),
        rule("redact-always", "agent.id == 'e-time' && time.unix > 0 && time.hour >= 0 && time.weekday < 7", "redact"),
        rule("allow-ws", "workspace == 'ws1'", "allow"),
    ]})
}

async fn send_key(env: &Env, agent: &str, v: Option<&str>, body: Value, key: &str) -> Value {
    env.rpc_key(&format!("/a2a/{agent}"), v, body, key).await.1
}

fn rule_of(b: &Value) -> String {
    let d = &b["error"]["data"];
    if let Some(a) = d.as_array() {
        a[0]["metadata"]["rule"].as_str().unwrap_or("").to_owned()
    } else {
        d["rule"].as_str().unwrap_or("").to_owned()
    }
}

#[tokio::test]
async fn policy_attributes_validation_explain_and_audit() {
    let env = env_with(Version::V1, |c| c.delegation_key = Some(KEY.into())).await;
    let peer = env.peers[0].url.clone();
    for a in [
        "blocked", "e-key", "e-op", "e-skill", "e-card", "e-ver", "e-bind", "e-msg", "e-pii",
        "e-chain", "e-time",
    ] {
        env.register("ws1", a, &peer, None);
    }
    // Validation on save: the rule and the problem are named; nothing is stored.
    let (s, b) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/policy",
        Some(json!({"rules": [rule("bad", "agent.id ==", "deny")]})),
    )
    .await;
    assert_eq!(s, 400, "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rules[0].when"),
        "{b}"
    );
    let (s, b) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/policy",
        Some(json!({"rules": [rule("bad", "agnt.id == 'x'", "deny")]})),
    )
    .await;
    // A name the hop's facts lack (an attribute, a member, an operation): 422 with the names
    // that exist (issue 39), never a rule that denies every hop at hop time.
    assert_eq!(s, 422, "{b}");
    for (when, named) in [
        ("agent.idd == 1", "known members of agent: id, skills"),
        ("operation == 'SendMesage'", "operations: SendMessage"),
    ] {
        let (s, b) = admin(
            &env,
            "PUT",
            "/admin/workspaces/ws1/policy",
            Some(json!({"rules": [rule("bad", when, "deny")]})),
        )
        .await;
        assert_eq!(s, 422, "{when}: {b}");
        let m = b["error"]["message"].as_str().unwrap_or_default();
        assert!(
            m.contains("rules[0].when") && m.contains(named),
            "{when}: {b}"
        );
    }
    assert_eq!(
        admin(&env, "GET", "/admin/workspaces/ws1/policy", None)
            .await
            .0,
        404
    );
    let (s, b) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{b}");
    // PII is recorded (not changed) so that policies see the findings.
    let (s, _) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/pii",
        Some(json!({"default_action": "record"})),
    )
    .await;
    assert_eq!(s, 200);

    let key = env.key.clone();
    let (_, scoped) = key_with(&env, &[Scope::Read, Scope::Send], None);
    let chain = |n: usize| {
        ChainKey::new(KEY.as_bytes()).sign(&(0..n).map(|i| format!("ws1/x{i}")).collect::<Vec<_>>())
    };
    // agent
    let b = send_key(&env, "blocked", None, send03("t-agent"), &key).await;
    assert_eq!(
        (gw_code(&b).as_str(), rule_of(&b).as_str()),
        ("a2a_policy_denied", "deny-agent"),
        "{b}"
    );
    assert_eq!(b["error"]["code"], -32000);
    assert!(
        !env.peers[0].last_body().to_string().contains("t-agent"),
        "peer was called"
    );
    let b = send_key(&env, "echo", None, send03("t-allowed"), &key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    // key scopes
    let b = send_key(&env, "e-key", None, send03("t-key"), &scoped).await;
    assert_eq!(rule_of(&b), "deny-scoped-key", "{b}");
    let b = send_key(&env, "e-key", None, send03("t-key2"), &key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    // operation: the send is allowed, GetTask of its task is denied.
    let b = send_key(&env, "e-op", Some("1.0"), send10("t-op"), &key).await;
    let tid = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let b = send_key(
        &env,
        "e-op",
        Some("1.0"),
        json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": tid}}),
        &key,
    )
    .await;
    assert_eq!(rule_of(&b), "deny-get", "{b}");
    assert_eq!(b["error"]["data"][0]["reason"], "A2A_POLICY_DENIED", "{b}");
    // skill (metadata.skill), in both versions
    let mut req = send03("t-skill");
    req["params"]["metadata"] = json!({"skill": "forbidden"});
    assert_eq!(
        rule_of(&send_key(&env, "e-skill", None, req, &key).await),
        "deny-skill"
    );
    let mut req = send10("t-skill");
    req["params"]["metadata"] = json!({"skill": "forbidden"});
    assert_eq!(
        rule_of(&send_key(&env, "e-skill", Some("1.0"), req, &key).await),
        "deny-skill"
    );
    let b = send_key(&env, "e-skill", None, send03("t-skill-ok"), &key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    // the card's skills: approval required: held (a gateway task), the peer not called
    let b = send_key(&env, "e-card", None, send03("t-card"), &key).await;
    assert_eq!(b["result"]["status"]["state"], "submitted", "{b}");
    assert!(
        b["result"]["id"]
            .as_str()
            .unwrap()
            .starts_with("gw-approval-"),
        "{b}"
    );
    assert!(
        !env.peers[0].last_body().to_string().contains("t-card"),
        "peer was called"
    );
    // version
    assert_eq!(
        rule_of(&send_key(&env, "e-ver", None, send03("t-ver"), &key).await),
        "deny-03"
    );
    let b = send_key(&env, "e-ver", Some("1.0"), send10("t-ver"), &key).await;
    assert!(b["result"]["task"].is_object(), "{b}");
    // binding: HTTP+JSON denied (its own status), JSON-RPC allowed
    let r = env
        .http
        .post(env.url("/a2a/e-bind/v1/message:send"))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .bearer_auth(&key)
        .body(send10("t-bind")["params"].to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["error"]["details"][0]["metadata"]["rule"], "deny-rest",
        "{body}"
    );
    assert!(send_key(&env, "e-bind", None, send03("t-bind"), &key).await["result"].is_object());
    // message size and part kinds
    let big = "x".repeat(3000);
    assert_eq!(
        rule_of(&send_key(&env, "e-msg", None, send03(&big), &key).await),
        "deny-big"
    );
    let mut req = send03("t-data");
    req["params"]["message"]["parts"] = json!([{"kind": "data", "data": {"a": 1}}]);
    assert_eq!(
        rule_of(&send_key(&env, "e-msg", None, req, &key).await),
        "deny-data"
    );
    assert!(send_key(&env, "e-msg", None, send03("small"), &key).await["result"].is_object());
    // PII findings
    let b = send_key(
        &env,
        "e-pii",
        None,
        send03("write to alice@example.com"),
        &key,
    )
    .await;
    assert_eq!(rule_of(&b), "deny-email", "{b}");
    assert!(send_key(&env, "e-pii", None, send03("no pii"), &key).await["result"].is_object());
    // delegation chain depth
    let call = |depth: usize| {
        env.http
            .post(env.url("/a2a/e-chain"))
            .header("content-type", "application/json")
            .header("a2a-delegation-chain", chain(depth))
            .bearer_auth(&key)
            .body(send03("t-chain").to_string())
            .send()
    };
    let b: Value = call(1).await.unwrap().json().await.unwrap();
    assert_eq!(rule_of(&b), "deny-deep", "{b}");
    let b: Value = call(0).await.unwrap().json().await.unwrap();
    assert!(b["result"].is_object(), "{b}");
    // time → redact: the email never reaches the peer
    let b = send_key(&env, "e-time", None, send03("mail bob@example.org"), &key).await;
    assert!(b["result"].is_object(), "{b}");
    let seen = env.peers[0].last_body().to_string();
    assert!(
        !seen.contains("bob@example.org") && seen.contains("[REDACTED:EMAIL]"),
        "{seen}"
    );

    // The audit evidence: rule ids and decisions, PII by type and count, never the PII.
    let (_, hops) = admin(&env, "GET", "/admin/hops?workspace=ws1&limit=1000", None).await;
    let hops = hops.as_array().unwrap();
    let denied = hops
        .iter()
        .find(|h| h["target"] == "e-pii" && h["errorCode"] == "a2a_policy_denied")
        .expect("audited denial");
    let g = &denied["governance"];
    assert!(
        g["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["step"] == "policy" && d["decision"] == "deny" && d["rule"] == "deny-email"),
        "{g}"
    );
    assert_eq!(g["pii"]["EMAIL"], 1, "{g}");
    assert!(
        !hops
            .iter()
            .any(|h| h.to_string().contains("alice@example.com"))
    );
    let redacted = hops.iter().find(|h| h["target"] == "e-time").unwrap();
    assert!(
        redacted["governance"]["decisions"]
            .to_string()
            .contains("redact-always")
    );

    // Explain: which rule decides a hop, for the saved policy or an unsaved one.
    let (s, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/policy:explain",
        Some(json!({"hop": {"agent": {"id": "e-ver"}, "version": "0.3"}})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        (b["decision"].as_str(), b["rule"].as_str()),
        (Some("deny"), Some("deny-03")),
        "{b}"
    );
    let (_, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/policy:explain",
        Some(json!({"hop": {"agent": {"id": "e-ver"}, "version": "1.0"}})),
    )
    .await;
    assert_eq!(b["rule"], "allow-ws", "{b}");
    let (_, b) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/policy:explain",
        Some(json!({"policy": {"default": "deny", "rules": []}, "hop": {}})),
    )
    .await;
    assert_eq!(
        (b["decision"].as_str(), b["rule"].as_str()),
        (Some("deny"), Some("default"))
    );
    let (s, _) = admin(
        &env,
        "POST",
        "/admin/workspaces/ws1/policy:explain",
        Some(json!({"hop": {"nope": 1}})),
    )
    .await;
    assert_eq!(s, 400);

    // Another workspace: ws1's policy does not apply, and ws2 has none to read.
    let (_, ws2key) = env.store.create_key("ws2", &[], None, None).unwrap();
    env.register("ws2", "blocked", &peer, None);
    let b = send_key(&env, "blocked", None, send03("ws2"), &ws2key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    assert_eq!(
        admin(&env, "GET", "/admin/workspaces/ws2/policy", None)
            .await
            .0,
        404
    );
    // Removing the policy lets the hop through again (the cache is invalidated on write).
    assert_eq!(
        admin(&env, "DELETE", "/admin/workspaces/ws1/policy", None)
            .await
            .0,
        204
    );
    let b = send_key(&env, "blocked", None, send03("after delete"), &key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    env.stop().await;
}

#[tokio::test]
async fn default_deny_switch_and_refusal_status() {
    let env = env_with(Version::V03, |c| {
        c.policy_default = PolicyDefault::Deny;
        c.json_rpc_error_status = ErrorStatusMode::Refusal;
    })
    .await;
    let (s, b) = env.rpc("/a2a/echo", None, send03("hi")).await;
    assert_eq!(
        (s, gw_code(&b).as_str(), rule_of(&b).as_str()),
        (403, "a2a_policy_denied", "default"),
        "{b}"
    );
    let (s, b) = env.rpc("/a2a/echo", Some("1.0"), send10("hi")).await;
    assert_eq!(s, 403);
    assert_eq!(b["error"]["data"][0]["domain"], "a2a-rs.dev", "{b}");
    // A policy whose default allows, with one deny rule.
    let (s, _) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/policy",
        Some(json!({"default": "allow", "rules": [rule("no-cancel", "operation == 'CancelTask'", "deny")]})),
    )
    .await;
    assert_eq!(s, 200);
    let (s, b) = env.rpc("/a2a/echo", None, send03("hi")).await;
    assert_eq!(
        (s, b["result"]["kind"].as_str()),
        (200, Some("task")),
        "{b}"
    );
    env.stop().await;
}

/// A rule saved in dry-run mode records what it would decide in the hop's evidence
/// (`policy_dry_run`) and lets the rules after it decide; switched to enforcing, it decides.
#[tokio::test]
async fn dry_run_rules_record_what_they_would_decide() {
    let env = env_with(Version::V03, |_| {}).await;
    let trial = json!({"id": "trial-deny", "when": "message.bytes > 10", "decision": "deny", "dry_run": true});
    let (s, b) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/policy",
        Some(json!({"default": "allow", "rules": [trial]})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let (_, b) = admin(&env, "GET", "/admin/workspaces/ws1/policy", None).await;
    assert_eq!(b["rules"][0]["dry_run"], true, "{b}");
    let (s, b) = env
        .rpc("/a2a/echo", None, send03("a message longer than ten bytes"))
        .await;
    assert_eq!(
        (s, b["result"]["kind"].as_str()),
        (200, Some("task")),
        "{b}"
    );
    let (_, hops) = admin(&env, "GET", "/admin/hops?workspace=ws1&limit=10", None).await;
    let d = hops[0]["governance"]["decisions"].clone();
    let d = d.as_array().expect("decisions");
    assert!(
        d.iter().any(|d| d["step"] == "policy_dry_run"
            && d["decision"] == "deny"
            && d["rule"] == "trial-deny"),
        "{d:?}"
    );
    assert!(
        d.iter()
            .any(|d| d["step"] == "policy" && d["decision"] == "allow" && d["rule"] == "default"),
        "{d:?}"
    );
    // Enforced, the same rule denies.
    let enforced = json!({"id": "trial-deny", "when": "message.bytes > 10", "decision": "deny"});
    let (s, _) = admin(
        &env,
        "PUT",
        "/admin/workspaces/ws1/policy",
        Some(json!({"default": "allow", "rules": [enforced]})),
    )
    .await;
    assert_eq!(s, 200);
    let (_, b) = env
        .rpc("/a2a/echo", None, send03("a message longer than ten bytes"))
        .await;
    assert_eq!(rule_of(&b), "trial-deny", "{b}");
    env.stop().await;
}
