//! The governance commands of the `a2a-gateway admin` CLI against a running gateway on the same
//! database: `policy-set` (validated; from stdin), `policy-get`, `policy-explain`,
//! `policy-delete`, `pii-set`/`pii-get`/`pii-delete`, `kill` (a context and a single task),
//! `kill-lift` and `kill-list`, and `audit-export` showing each hop's governance evidence. The running gateway sees the database writes within its cache time
//! (`governance::CACHE_TTL`, 5 s): the test waits for them with a bounded retry.

use crate::common;

use std::time::{Duration, Instant};

use a2a_gateway::errors::Version;
use common::*;
use serde_json::{Value, json};

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// `a2a-gateway admin --database <env's db> ARGS` with `stdin`.
async fn cli(env: &Env, args: &[&str], stdin: &str) -> Out {
    let db = env._dir.path().join("gw.db");
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
            .args(["admin", "--database"])
            .arg(db)
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(mut i) = child.stdin.take() {
            i.write_all(stdin.as_bytes()).unwrap();
        }
        let o = child.wait_with_output().unwrap();
        Out {
            ok: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    })
    .await
    .unwrap()
}

fn skilled(skill: &str, text: &str) -> Value {
    let mut r = send10(text);
    r["params"]["metadata"] = json!({"skill": skill});
    r
}

/// Sends `req` until `done` holds for the answer (at most 15 s: three cache times).
async fn until(env: &Env, req: &Value, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (_, b) = env.rpc("/a2a/echo", Some("1.0"), req.clone()).await;
        if done(&b) || start.elapsed() > Duration::from_secs(15) {
            return b;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn governance_cli_drives_a_running_gateway() {
    let env = env(Version::V1).await;
    // Tasks and a context to kill, made before the kills.
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("first")).await;
    let task = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), send10("second")).await;
    let other_task = b["result"]["task"]["id"].as_str().unwrap().to_owned();
    let get = |id: &str| json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": id}});

    // policy-set validates: a broken rule is refused, naming it, and nothing is stored.
    let bad = json!({"rules": [{"id": "bad", "when": "skill ==", "decision": "deny"}]});
    let o = cli(&env, &["policy-set", "ws1", "-"], &bad.to_string()).await;
    assert!(!o.ok, "{}", o.stdout);
    assert!(o.stderr.contains("rules[0].when"), "{}", o.stderr);
    let o = cli(&env, &["policy-get", "ws1"], "").await;
    assert!(!o.ok && o.stderr.contains("no policy"), "{}", o.stderr);
    // A valid policy from stdin, PII rules, a task kill and a context kill.
    let policy = json!({"rules": [
        {"id": "no-refunds", "when": "skill == 'refund'", "decision": "deny"},
        {"id": "ok-ws", "when": "workspace == 'ws1'", "decision": "allow"}
    ]});
    let o = cli(&env, &["policy-set", "ws1", "-"], &policy.to_string()).await;
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.json()["rules"][0]["id"], "no-refunds");
    let o = cli(&env, &["policy-get", "ws1"], "").await;
    assert_eq!(o.json()["rules"][1]["id"], "ok-ws", "{}", o.stdout);
    let o = cli(
        &env,
        &["policy-explain", "ws1", "--hop", r#"{"skill":"refund"}"#],
        "",
    )
    .await;
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(
        (o.json()["decision"].as_str(), o.json()["rule"].as_str()),
        (Some("deny"), Some("no-refunds")),
        "{}",
        o.stdout
    );
    let o = cli(
        &env,
        &["policy-explain", "ws1", "--hop", r#"{"skill":"x"}"#],
        "",
    )
    .await;
    assert_eq!(o.json()["rule"], "ok-ws", "{}", o.stdout);
    let o = cli(
        &env,
        &["pii-set", "ws1", r#"{"actions":{"EMAIL":"nope"}}"#],
        "",
    )
    .await;
    assert!(!o.ok, "{}", o.stdout);
    let o = cli(
        &env,
        &[
            "pii-set",
            "ws1",
            r#"{"default_action":"record","actions":{"EMAIL":"redact"}}"#,
        ],
        "",
    )
    .await;
    assert!(o.ok, "{}", o.stderr);
    let o = cli(&env, &["pii-get", "ws1"], "").await;
    assert_eq!(o.json()["actions"]["EMAIL"], "redact", "{}", o.stdout);
    let o = cli(
        &env,
        &["kill", "ws1", "task", &task, "--reason", "runaway"],
        "",
    )
    .await;
    assert!(o.ok, "{}", o.stderr);
    let o = cli(&env, &["kill", "ws1", "context", "ctx-cli"], "").await;
    assert!(o.ok, "{}", o.stderr);
    let o = cli(&env, &["kill-list", "ws1"], "").await;
    let kills: Vec<(String, String)> = o
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kind"].as_str().unwrap().to_owned(),
                k["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(kills.contains(&("task".into(), task.clone())), "{kills:?}");
    assert!(
        kills.contains(&("context".into(), "ctx-cli".into())),
        "{kills:?}"
    );

    // The running gateway: the policy denies (once its cache has the writes), ...
    let b = until(&env, &skilled("refund", "refund please"), |b| {
        gw_code(b) == "a2a_policy_denied"
    })
    .await;
    assert_eq!(
        b["error"]["data"][0]["metadata"]["rule"], "no-refunds",
        "{b}"
    );
    // ... the PII rules redact, ...
    let (_, b) = env
        .rpc("/a2a/echo", Some("1.0"), send10("mail ann@example.com"))
        .await;
    assert!(b["result"].is_object(), "{b}");
    let seen = env.peers[0].last_body().to_string();
    assert!(
        seen.contains("[REDACTED:EMAIL]") && !seen.contains("ann@example.com"),
        "{seen}"
    );
    // `audit-export` shows each hop's governance evidence: the denial with its rule, the PII
    // found by type and count, never the PII itself (audit rows are written in batches: bounded
    // wait).
    let start = Instant::now();
    loop {
        let o = cli(&env, &["audit-export", "--workspace", "ws1"], "").await;
        assert!(o.ok, "{}", o.stderr);
        assert!(!o.stdout.contains("ann@example.com"), "{}", o.stdout);
        let lines: Vec<Value> = o
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let found = |want: &dyn Fn(&Value) -> bool| lines.iter().any(|l| want(&l["governance"]));
        let denial = |g: &Value| {
            g["decisions"].as_array().is_some_and(|d| {
                d.iter()
                    .any(|d| d["decision"] == "deny" && d["rule"] == "no-refunds")
            })
        };
        let pii = |g: &Value| g["pii"]["EMAIL"] == 1;
        if (found(&denial) && found(&pii)) || start.elapsed() > Duration::from_secs(15) {
            assert!(found(&denial) && found(&pii), "{lines:?}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // ... the killed task and context are refused, the other task is not.
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), get(&task)).await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    let mut m = send10("more");
    m["params"]["message"]["taskId"] = json!(task);
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), m).await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    let mut m = send10("in a killed context");
    m["params"]["message"]["contextId"] = json!("ctx-cli");
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), m).await;
    assert_eq!(gw_code(&b), "a2a_session_killed", "{b}");
    let (_, b) = env.rpc("/a2a/echo", Some("1.0"), get(&other_task)).await;
    assert!(b["result"].is_object(), "{b}");
    // kill-lift: the context is served again (within the cache time); a second lift fails.
    assert!(
        cli(&env, &["kill-lift", "ws1", "context", "ctx-cli"], "")
            .await
            .ok
    );
    let o = cli(&env, &["kill-lift", "ws1", "context", "ctx-cli"], "").await;
    assert!(
        !o.ok && o.stderr.contains("no kill of context ctx-cli"),
        "{}",
        o.stderr
    );
    let mut lifted = send10("in a lifted context");
    lifted["params"]["message"]["contextId"] = json!("ctx-cli");
    let b = until(&env, &lifted, |b| b["result"].is_object()).await;
    assert!(b["result"].is_object(), "{b}");

    // policy-delete and pii-delete: the operator default decides again, PII is left alone.
    assert!(cli(&env, &["policy-delete", "ws1"], "").await.ok);
    let o = cli(&env, &["policy-delete", "ws1"], "").await;
    assert!(!o.ok && o.stderr.contains("no policy"), "{}", o.stderr);
    assert!(cli(&env, &["pii-delete", "ws1"], "").await.ok);
    let b = until(&env, &skilled("refund", "refund again"), |b| {
        b["result"].is_object()
    })
    .await;
    assert!(b["result"].is_object(), "{b}");
    let (_, b) = env
        .rpc("/a2a/echo", Some("1.0"), send10("mail bo@example.com"))
        .await;
    assert!(b["result"].is_object(), "{b}");
    assert!(
        env.peers[0]
            .last_body()
            .to_string()
            .contains("bo@example.com")
    );
    env.stop().await;
}
