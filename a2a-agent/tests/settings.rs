//! Camel-parity settings of issue #12: every `AgentConfig` field is a TOML key, a flag and an
//! env var (one definition), the `binding` setting, `--name` & co. over a `--card` file, the
//! slow-subscriber overflow policy, `pageSize` capped, "server busy".

use crate::common;

use a2a_agent::AgentConfig;
use a2a_agent::config::{ConfigArgs, ServedBindings};
use a2a_agent::fanout::OverflowPolicy;
use a2a_agent::model::{StreamResponse, TaskState};
use common::*;
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

#[test]
fn every_config_field_is_a_toml_key_a_flag_and_an_env_var() {
    // The TOML keys are the serialized field names; the flags are generated from the same list.
    let toml_keys: Vec<String> = serde_json::to_value(AgentConfig::default())
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut fields: Vec<String> = ConfigArgs::FIELDS.iter().map(|s| s.to_string()).collect();
    let mut keys = toml_keys.clone();
    fields.sort();
    keys.sort();
    assert_eq!(fields, keys);
    let out = Command::new(crate::common::AGENT_BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for k in &toml_keys {
        let flag = format!("--{}", k.replace('_', "-"));
        let env = format!("A2A_AGENT_{}", k.to_ascii_uppercase());
        assert!(help.contains(&flag), "{flag} missing from serve --help");
        assert!(help.contains(&env), "{env} missing from serve --help");
    }
    // Each field parses from TOML.
    for (k, v) in [
        ("push_timeout", "\"5ms\""),
        ("allow_local_webhook_urls", "true"),
        ("oidc_min_refresh", "\"7s\""),
        ("binding", "\"rest\""),
        ("sse_overflow_policy", "\"drop-oldest\""),
    ] {
        AgentConfig::from_toml(&format!("{k} = {v}")).unwrap_or_else(|e| panic!("{k}: {e}"));
    }
}

async fn card(url: &str) -> Value {
    client()
        .get(format!("{url}/.well-known/agent-card.json"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn bindings(card: &Value) -> Vec<String> {
    card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn flags_beat_env_beat_toml_for_formerly_toml_only_fields() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("agent.toml");
    std::fs::write(
        &toml,
        "binding = \"jsonrpc\"\nrest_status_table = \"camel\"\nvalidate_auth = false\n",
    )
    .unwrap();
    let toml = toml.to_str().unwrap();
    // TOML only: JSON-RPC only.
    let b = bin(&["--echo", "--config", toml], &[]);
    assert_eq!(bindings(&card(&b.url).await), ["JSONRPC", "JSONRPC"]);
    let (st, _) = rest_get(&b.url, "/tasks").await;
    assert_eq!(st, 404, "HTTP+JSON is not served");
    drop(b);
    // Env over TOML.
    let b = bin(
        &["--echo", "--config", toml],
        &[("A2A_AGENT_BINDING", "rest")],
    );
    assert_eq!(bindings(&card(&b.url).await), ["HTTP+JSON", "HTTP+JSON"]);
    // The TOML's camel table still applies: cancel of an unknown task is 404, of a terminal 409.
    let (_, v) = rest_post(&b.url, "/message:send", json!({"message": msg("x")})).await;
    let id = v["task"]["id"].as_str().unwrap().to_string();
    let (st, _) = rest_post(&b.url, &format!("/tasks/{id}:cancel"), json!({})).await;
    assert_eq!(st, 409);
    let r = client()
        .post(format!("{}/", b.url))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "x"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32601, "JSON-RPC form: {v}");
    drop(b);
    // Flag over env.
    let b = bin(
        &["--echo", "--config", toml, "--binding", "both"],
        &[("A2A_AGENT_BINDING", "rest")],
    );
    assert_eq!(bindings(&card(&b.url).await).len(), 4);
    drop(b);
    // A formerly TOML-only field by env: push_timeout_ms (parses, serves).
    let b = bin(
        &["--echo", "--no-validate-auth"],
        &[
            ("A2A_AGENT_PUSH_TIMEOUT_MS", "1500"),
            ("A2A_AGENT_OIDC_MIN_REFRESH_MS", "1000"),
        ],
    );
    assert_eq!(card(&b.url).await["name"], "echo");
    drop(b);
    // A bad value is refused at start.
    let out = Command::new(crate::common::AGENT_BIN)
        .args(["serve", "--echo", "--port", "0"])
        .env("A2A_AGENT_SSE_OVERFLOW_POLICY", "lose-all")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("sse-overflow-policy"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn identity_flags_override_the_card_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("card.json");
    std::fs::write(
        &path,
        json!({"name": "file-name", "description": "file description", "version": "0.1.0",
            "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S",
            "description": "d", "tags": []}]})
        .to_string(),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let b = bin(
        &[
            "--echo",
            "--card",
            p,
            "--no-validate-auth",
            "--name",
            "flag-name",
            "--agent-version",
            "2.0.0",
        ],
        &[],
    );
    let c = card(&b.url).await;
    assert_eq!(c["name"], "flag-name");
    assert_eq!(c["version"], "2.0.0");
    assert_eq!(c["description"], "file description", "not overridden");
    assert_eq!(c["skills"][0]["id"], "s");
}

#[tokio::test]
async fn binding_setting_in_the_library_shapes_the_card_and_routes() {
    let cfg = AgentConfig {
        binding: ServedBindings::Rest,
        ..open_config()
    };
    let s = echo(cfg).await;
    let c = card(s.url()).await;
    assert_eq!(bindings(&c), ["HTTP+JSON", "HTTP+JSON"]);
    let (st, v) = rpc(s.url(), "GetTask", json!({"id": "x"})).await;
    assert_eq!(st, 404, "{v}");
    let (st, _) = rest_post(s.url(), "/message:send", json!({"message": msg("x")})).await;
    assert_eq!(st, 200);
    s.shutdown().await;
}

fn text_of(e: &StreamResponse) -> String {
    match e {
        StreamResponse::StatusUpdate(u) => u
            .status
            .message
            .as_ref()
            .map(|m| m.text())
            .unwrap_or_default(),
        StreamResponse::Task(_) => "task".into(),
        _ => String::new(),
    }
}

#[tokio::test]
async fn slow_subscriber_policies_end_to_end() {
    // drop-newest (the default): the first events, then the final one.
    assert_eq!(
        AgentConfig::default().sse_overflow_policy,
        OverflowPolicy::DropNewest
    );
    let got = unread_stream(20, OverflowPolicy::DropNewest).await;
    let texts: Vec<String> = got.iter().map(text_of).collect();
    assert!(texts.len() <= 5, "{texts:?}");
    assert!(!texts.contains(&"task".to_string()), "{texts:?}");
    assert_eq!(
        texts.last().unwrap(),
        "done",
        "the final event is delivered: {texts:?}"
    );
    match got.last().unwrap() {
        StreamResponse::StatusUpdate(u) => assert_eq!(u.status.state, TaskState::Completed),
        o => panic!("{o:?}"),
    }
    // drop-oldest: the last events before the final one.
    let texts: Vec<String> = unread_stream(20, OverflowPolicy::DropOldest)
        .await
        .iter()
        .map(text_of)
        .collect();
    assert_eq!(texts.last().unwrap(), "done", "{texts:?}");
    assert!(texts.contains(&"e19".to_string()), "{texts:?}");
    assert!(!texts.contains(&"e0".to_string()), "{texts:?}");
    // disconnect: the stream ends early, without the final event.
    let texts: Vec<String> = unread_stream(20, OverflowPolicy::Disconnect)
        .await
        .iter()
        .map(text_of)
        .collect();
    assert!(texts.len() <= 4, "{texts:?}");
    assert!(!texts.contains(&"done".to_string()), "{texts:?}");
}

#[tokio::test]
async fn page_size_is_capped_and_capacity_says_server_busy() {
    let cfg = AgentConfig {
        max_concurrent_tasks: 1,
        ..open_config()
    };
    let s = echo(cfg).await;
    let (st, v) = rest_get(s.url(), "/tasks?pageSize=500").await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["pageSize"], 100, "{v}");
    let id = start_slow(s.url()).await;
    let (_, v) = rpc(s.url(), "SendMessage", json!({"message": msg("x")})).await;
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server busy"),
        "{v}"
    );
    let (st, v) = rest_post(s.url(), "/message:send", json!({"message": msg("x")})).await;
    assert_eq!(st, 429, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server busy")
    );
    rpc(s.url(), "CancelTask", json!({"id": id})).await;
    s.shutdown().await;
}

#[tokio::test]
async fn page_tokens_are_not_shifted_by_tasks_created_while_paging() {
    let s = echo(open_config()).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let (_, v) = rpc(
            s.url(),
            "SendMessage",
            json!({"message": msg(&format!("t{i}"))}),
        )
        .await;
        ids.push(v["result"]["task"]["id"].as_str().unwrap().to_string());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (_, p1) = rpc(s.url(), "ListTasks", json!({"pageSize": 2})).await;
    let first: Vec<&str> = p1["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(first, [ids[2].as_str(), ids[1].as_str()], "{p1}");
    let token = p1["result"]["nextPageToken"].as_str().unwrap().to_string();
    for i in 0..2 {
        rpc(
            s.url(),
            "SendMessage",
            json!({"message": msg(&format!("new{i}"))}),
        )
        .await;
    }
    let (_, p2) = rpc(
        s.url(),
        "ListTasks",
        json!({"pageSize": 2, "pageToken": token}),
    )
    .await;
    let second: Vec<&str> = p2["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        second,
        [ids[0].as_str()],
        "the next page continues where the first ended: {p2}"
    );
    s.shutdown().await;
}

/// `workers` sizes the binary's runtime (flag here; TOML and env like every field; the binary
/// prints the runtime's worker count as `WORKERS n`), and the agent answers on it.
#[tokio::test]
async fn workers_sizes_the_binary_runtime() {
    for n in ["1", "3"] {
        let args = ["serve", "--echo", "--port", "0", "--workers", n];
        let (mut child, url, line) = spawn_agent(&args, Some("WORKERS "));
        assert_eq!(line, Some(format!("WORKERS {n}")));
        let (status, v) = rpc(&url, "SendMessage", json!({"message": msg("hi")})).await;
        assert_eq!(status, 200, "{v}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
