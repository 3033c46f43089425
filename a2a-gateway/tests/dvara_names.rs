//! The DVARA API's operator settings read as written (issue 37, items 1 and 4): each row of
//! docs/settings-map.md's DVARA table set by its dotted name in the `--config` file of the real
//! binary, in TOML's dotted form (`[a2a.protocol] serve-v1 = false`) and quoted
//! (`"a2a.protocol.serve-v1" = false`), and the behaviour observed; a value that cannot be
//! honoured refuses the start, naming the key. Also the deprecated names of the settings
//! convention (issue 34, item 8).

use crate::common::*;
use serde_json::{Value, json};
use std::process::Command;

/// A served gateway (killed on drop) in front of the echo agent `echo`, with `toml` as its file.
struct Served {
    child: std::process::Child,
    base: String,
    key: String,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_with(toml: &str, echo: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "echo", echo);
    let file = dir.path().join("dvara.toml");
    std::fs::write(&file, toml).unwrap();
    let (child, base) = spawn_serve(&db, &["--config", file.to_str().unwrap()]);
    Served {
        child,
        base,
        key,
        _dir: dir,
    }
}

/// A 1.0 JSON-RPC call through the gateway: (status, content type, body).
async fn call(s: &Served, agent: &str, body: Value) -> (u16, String, String) {
    let r = reqwest::Client::new()
        .post(format!("{}/a2a/{agent}", s.base))
        .bearer_auth(&s.key)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, ct, r.text().await.unwrap())
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// What a case observes.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A 1.0 send is refused with -32009 (served at 0.3 only).
    Only03,
    /// A 1.0 send is answered.
    Serves10,
    /// A refusal (an unknown agent) comes with this HTTP status.
    RefusalStatus(u16),
    /// A 1.0 streaming send is refused with `a2a_streaming_disabled`.
    NoStreams,
    /// A 1.0 streaming send opens a stream.
    Streams,
    /// A push config is refused with `a2a_push_not_available` (`true`), or is not (`false`).
    PushUnavailable(bool),
}

/// Rows: `a2a.protocol.serve-v1`, `a2a.protocol.json-rpc-error-status`,
/// `a2a.streaming.enabled`, `a2a.push.callback-base-url` (each in both TOML forms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dvara_settings_as_written_change_the_behaviour() {
    let echo = a2a_agent::AgentServer::new(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
    )
    .validate_auth(false)
    .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
    .await
    .unwrap();
    let cases: &[(&str, Expect)] = &[
        ("[a2a.protocol]\nserve-v1 = false\n", Expect::Only03),
        ("\"a2a.protocol.serve-v1\" = false\n", Expect::Only03),
        ("\"a2a.protocol.serve-v1\" = true\n", Expect::Serves10),
        (
            "[a2a.protocol]\njson-rpc-error-status = \"refusal\"\n",
            Expect::RefusalStatus(404),
        ),
        (
            "\"a2a.protocol.json-rpc-error-status\" = 200\n",
            Expect::RefusalStatus(200),
        ),
        ("[a2a.streaming]\nenabled = false\n", Expect::NoStreams),
        ("\"a2a.streaming.enabled\" = false\n", Expect::NoStreams),
        ("\"a2a.streaming.enabled\" = true\n", Expect::Streams),
        ("", Expect::PushUnavailable(true)),
        (
            "[a2a.push]\ncallback-base-url = \"http://127.0.0.1:9\"\n",
            Expect::PushUnavailable(false),
        ),
        (
            "\"a2a.push.callback-base-url\" = \"http://127.0.0.1:9\"\n",
            Expect::PushUnavailable(false),
        ),
    ];
    for (toml, expect) in cases {
        let s = serve_with(toml, echo.url());
        match *expect {
            Expect::Only03 | Expect::Serves10 => {
                let (_, _, b) = call(&s, "echo", send10("hi")).await;
                let b = json_of(&b);
                if matches!(expect, Expect::Only03) {
                    assert_eq!(b["error"]["code"], -32009, "{toml}: {b}");
                } else {
                    assert!(b["result"].is_object(), "{toml}: {b}");
                }
            }
            Expect::RefusalStatus(want) => {
                let (st, _, b) = call(&s, "ghost", send10("hi")).await;
                assert_eq!(st, want, "{toml}: {b}");
                assert!(json_of(&b)["error"].is_object(), "{toml}: {b}");
            }
            Expect::NoStreams | Expect::Streams => {
                let mut req = send10("stream");
                req["method"] = json!("SendStreamingMessage");
                let (_, ct, b) = call(&s, "echo", req).await;
                if matches!(expect, Expect::NoStreams) {
                    assert!(b.contains("a2a_streaming_disabled"), "{toml}: {b}");
                } else {
                    assert!(ct.starts_with("text/event-stream"), "{toml}: {ct} {b}");
                }
            }
            Expect::PushUnavailable(refused) => {
                let (_, _, b) = call(&s, "echo", send10("a task")).await;
                let tid = json_of(&b)["result"]["task"]["id"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no task: {b}"))
                    .to_owned();
                let set = json!({"jsonrpc": "2.0", "id": "p",
                    "method": "CreateTaskPushNotificationConfig",
                    "params": {"taskId": tid, "url": "https://8.8.8.8/hook", "token": "t"}});
                let (_, _, b) = call(&s, "echo", set).await;
                let code = gw_code(&json_of(&b));
                assert_eq!(code == "a2a_push_not_available", refused, "{toml}: {b}");
            }
        }
    }
    echo.shutdown().await;
}

/// `a2a-gateway serve --check-config` with `toml` as the file: (success, stderr).
fn check(toml: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gw.toml");
    std::fs::write(&file, toml).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    c.args([
        "serve",
        "--check-config",
        "--config",
        file.to_str().unwrap(),
    ])
    .args(args)
    .env_remove("RUST_LOG")
    .env_remove("A2A_GATEWAY_LOG_LEVEL");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Row `a2a.extensions.allowed` (a workspace setting here: the empty list, DVARA's default, is
/// accepted, any other refused naming the key), and values that cannot be honoured.
#[test]
fn dvara_values_are_honoured_or_refused_naming_the_key() {
    for toml in [
        "[a2a.extensions]\nallowed = []\n",
        "\"a2a.extensions.allowed\" = []\n",
        // A whole DVARA configuration, as TOML.
        "[a2a.protocol]\nserve-v1 = true\njson-rpc-error-status = \"refusal\"\n\
         [a2a.streaming]\nenabled = true\n[a2a.push]\ncallback-base-url = \"https://gw.example\"\n\
         [a2a.extensions]\nallowed = []\n",
    ] {
        let (ok, err) = check(toml, &[], &[]);
        assert!(ok, "{toml}: {err}");
    }
    for (toml, key) in [
        (
            "[a2a.extensions]\nallowed = [\"urn:x\"]\n",
            "a2a.extensions.allowed",
        ),
        (
            "\"a2a.protocol.json-rpc-error-status\" = \"teapot\"\n",
            "a2a.protocol.json-rpc-error-status",
        ),
        (
            "[a2a.streaming]\nenabled = \"maybe\"\n",
            "a2a.streaming.enabled",
        ),
        ("[a2a.protocol]\nserve-v2 = true\n", "a2a.protocol.serve-v2"),
        (
            "serve_v1 = true\n\"a2a.protocol.serve-v1\" = false\n",
            "a2a.protocol.serve-v1",
        ),
    ] {
        let (ok, err) = check(toml, &[], &[]);
        assert!(!ok && err.contains(key), "{toml}: {err}");
    }
}

/// Issue 34 item 8: durations with units under one name; the old names (file, environment,
/// flags) still read, each with a warning naming the old and the new; switches with `--no-`.
#[test]
fn old_names_still_read_with_a_warning() {
    let c = a2a_gateway::config::Config::from_toml_str(
        "peer_timeout_secs = 7\npush_delete_grace_ms = 250\n",
    )
    .unwrap();
    assert_eq!((c.peer_timeout_secs, c.push_delete_grace_ms), (7, 250));
    let c = a2a_gateway::config::Config::from_toml_str(
        "peer_timeout = \"2m\"\npush_delete_grace = \"1500ms\"\n",
    )
    .unwrap();
    assert_eq!((c.peer_timeout_secs, c.push_delete_grace_ms), (120, 1500));
    let err = a2a_gateway::config::Config::from_toml_str("peer_timeout = 30").unwrap_err();
    assert!(err.contains("unit"), "{err}");
    let (ok, err) = check(
        "peer_timeout_secs = 7\n",
        &["--approval-wait-secs", "3", "--dev", "true"],
        &[("A2A_GATEWAY_IDLE_TIMEOUT_SECS", "5")],
    );
    assert!(ok, "{err}");
    for (old, new) in [
        ("peer_timeout_secs", "peer_timeout = \"7s\""),
        ("--approval-wait-secs", "--approval-wait=3s"),
        ("--dev true", "--dev"),
        (
            "A2A_GATEWAY_IDLE_TIMEOUT_SECS",
            "A2A_GATEWAY_IDLE_TIMEOUT=5s",
        ),
    ] {
        assert!(
            err.lines()
                .any(|l| l.contains("WARN") && l.contains(old) && l.contains(new)),
            "{old} -> {new}: {err}"
        );
    }
    let (ok, err) = check("", &["--no-dev", "--serve-grpc", "--no-streaming"], &[]);
    assert!(ok && !err.contains("WARN"), "{err}");
    let (ok, err) = check("", &["--peer-timeout", "1500ms"], &[]);
    assert!(!ok && err.contains("--peer-timeout"), "{err}");
    let help = Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for switch in ["--no-dev", "--no-serve-v1", "--no-streaming", "--no-ard"] {
        assert!(help.contains(switch), "{switch}");
    }
}
