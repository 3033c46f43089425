//! The official Python SDK (a2a-sdk 1.x and 0.3.x, venvs made by `interop/setup_venvs.py`) as the
//! client of our agent, over JSON-RPC and HTTP+JSON. The client drivers are `interop/clients/*`
//! (see `interop/README.md`); they are run directly here so this crate needs no dependency on the
//! conformance crate.

mod common;

use a2a_agent::{AgentCard, AgentConfig};
use common::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;
use tokio::io::AsyncWriteExt;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn ensure_venvs() {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        std::process::Command::new(
            std::env::var("A2A_INTEROP_PYTHON").unwrap_or_else(|_| "python3".into()),
        )
        .arg(root().join("interop/setup_venvs.py"))
        .current_dir(root())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
    });
    assert!(ok, "interop/setup_venvs.py failed");
}

/// Run the `sdk` ("sdk1" | "sdk03") client driver with `scenario`; returns its JSON lines.
async fn run(
    sdk: &str,
    url: &str,
    binding: &str,
    version: Option<&str>,
    scenario: Value,
) -> Vec<Value> {
    tokio::task::spawn_blocking(ensure_venvs).await.unwrap();
    let mut cmd = tokio::process::Command::new(root().join(format!(".venv/{sdk}/bin/python")));
    cmd.arg(root().join(format!("interop/clients/{sdk}_client.py")))
        .args(["--url", url, "--binding", binding])
        .current_dir(root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(v) = version {
        cmd.args(["--protocol-version", v]);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(scenario.to_string().as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(180),
        child.wait_with_output(),
    )
    .await
    .expect("client driver timed out")
    .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("non-JSON line {l:?}")))
        .collect();
    assert!(
        !lines.is_empty(),
        "no output; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

fn op(lines: &[Value], i: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["i"] == i && l.get("event").is_none())
        .unwrap_or_else(|| panic!("no op {i} in {lines:?}"))
}

fn events(lines: &[Value], i: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["i"] == i)
        .filter_map(|l| l.get("event"))
        .collect()
}

fn st(v: &Value) -> String {
    let s = v
        .pointer("/task/status/state")
        .or_else(|| v.pointer("/status/state"));
    s.and_then(Value::as_str).unwrap_or("").to_string()
}

fn main_scenario() -> Value {
    json!([
        {"op": "card"},
        {"op": "send", "text": "hello"},
        {"op": "send", "text": "slow", "blocking": false},
        {"op": "get", "taskId": "$2.task_id"},
        {"op": "cancel", "taskId": "$2.task_id"},
        {"op": "cancel", "taskId": "$1.task_id"},
        {"op": "get", "taskId": "nope"},
        {"op": "stream", "text": "stream x"},
        {"op": "get", "taskId": "$1.task_id", "historyLength": 1},
        {"op": "send", "text": "input"},
        {"op": "send", "text": "more", "taskId": "$9.task_id"},
    ])
}

fn check_main(tag: &str, l: &[Value], v03: bool) {
    let (done, working, submitted, canceled, input) = if v03 {
        (
            "completed",
            "working",
            "submitted",
            "canceled",
            "input-required",
        )
    } else {
        (
            "TASK_STATE_COMPLETED",
            "TASK_STATE_WORKING",
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
        )
    };
    assert_eq!(op(l, 0)["ok"], true, "{tag}");
    assert_eq!(st(&op(l, 1)["result"]), done, "{tag}: {}", op(l, 1));
    let s2 = st(&op(l, 2)["result"]);
    assert!(s2 == submitted || s2 == working, "{tag}: {s2}");
    assert_eq!(op(l, 3)["ok"], true, "{tag}");
    assert_eq!(st(&op(l, 4)["result"]), canceled, "{tag}");
    assert_eq!(op(l, 5)["ok"], false, "{tag}: terminal cancel must fail");
    assert_eq!(op(l, 6)["ok"], false, "{tag}: unknown task must fail");
    let evs = events(l, 7);
    assert_eq!(evs.len(), 6, "{tag}: {evs:?}");
    assert_eq!(
        st(evs[5].get("statusUpdate").unwrap_or(evs[5])),
        done,
        "{tag}"
    );
    assert_eq!(op(l, 7)["ok"], true, "{tag}");
    let hist = op(l, 8)["result"]["history"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert_eq!(hist, 1, "{tag}: historyLength=1");
    assert_eq!(st(&op(l, 9)["result"]), input, "{tag}");
    assert_eq!(st(&op(l, 10)["result"]), done, "{tag}");
    assert_eq!(
        op(l, 10)["task_id"],
        op(l, 9)["task_id"],
        "{tag}: same task"
    );
}

#[tokio::test]
async fn sdk1_client_over_jsonrpc_and_rest_1_0() {
    let s = echo(open_config()).await;
    for binding in ["jsonrpc", "rest"] {
        let l = run("sdk1", s.url(), binding, Some("1.0"), main_scenario()).await;
        check_main(&format!("sdk1 1.0 {binding}"), &l, false);
        // error classes
        assert_eq!(op(&l, 5)["error"]["type"], "TaskNotCancelableError");
        assert_eq!(op(&l, 6)["error"]["type"], "TaskNotFoundError");
    }
    // list with paging, version refused (1.x only)
    for binding in ["jsonrpc", "rest"] {
        let l = run(
            "sdk1",
            s.url(),
            binding,
            Some("1.0"),
            json!([
                {"op": "list", "pageSize": 2},
                {"op": "list", "pageSize": 2, "pageToken": "$0.result.nextPageToken"},
                {"op": "list", "pageToken": "5"},
                {"op": "send", "text": "slow", "blocking": false},
                {"op": "subscribe", "taskId": "$3.task_id", "background": true},
                {"op": "sleep", "seconds": 0.5},
                {"op": "cancel", "taskId": "$3.task_id"},
                {"op": "wait"},
                {"op": "headers", "headers": {"A2A-Version": "9.9"}},
                {"op": "send", "text": "x"},
            ]),
        )
        .await;
        let p1 = op(&l, 0)["result"]["tasks"].as_array().unwrap().clone();
        let p2 = op(&l, 1)["result"]["tasks"].as_array().unwrap().clone();
        assert_eq!(p1.len(), 2, "{binding}");
        assert_eq!(p2.len(), 2, "{binding}");
        assert_ne!(p1[0]["id"], p2[0]["id"]);
        assert_eq!(op(&l, 2)["ok"], false, "{binding}: numeric pageToken");
        let sub = events(&l, 4);
        assert!(sub[0].get("task").is_some(), "{binding}: {sub:?}");
        assert_eq!(
            sub.last().unwrap()["statusUpdate"]["status"]["state"],
            "TASK_STATE_CANCELED",
            "{binding}: {sub:?}"
        );
        assert_eq!(
            op(&l, 9)["error"]["type"],
            "VersionNotSupportedError",
            "{binding}"
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn sdk1_in_0_3_mode_and_sdk03_client() {
    let s = echo(open_config()).await;
    for binding in ["jsonrpc", "rest"] {
        let l = run("sdk1", s.url(), binding, Some("0.3"), main_scenario()).await;
        check_main(&format!("sdk1 0.3 {binding}"), &l, false);
        let l = run("sdk03", s.url(), binding, None, main_scenario()).await;
        check_main(&format!("sdk03 {binding}"), &l, true);
    }
    s.shutdown().await;
}

#[tokio::test]
async fn sdk_clients_see_limits_and_extensions() {
    let card = AgentCard::builder("ext", "d", "1")
        .streaming(true)
        .extension("urn:a2a:test", false)
        .build();
    let cfg = AgentConfig {
        max_payload_size: 2048,
        max_concurrent_tasks: 1,
        ..open_config()
    };
    let s = start_with(card, a2a_agent::demo::echo_handler(), cfg).await;
    let big = "y".repeat(4096);
    for binding in ["jsonrpc", "rest"] {
        let l = run(
            "sdk1",
            s.url(),
            binding,
            Some("1.0"),
            json!([
                {"op": "send", "text": big},
                {"op": "send", "text": "slow", "blocking": false},
                {"op": "send", "text": "while busy"},
                {"op": "cancel", "taskId": "$1.task_id"},
                {"op": "headers", "headers": {"A2A-Extensions": "urn:a2a:test"}},
                {"op": "send", "text": "with ext"},
                {"op": "headers", "headers": {"A2A-Extensions": "urn:unknown"}},
                {"op": "send", "text": "bad ext"},
            ]),
        )
        .await;
        assert_eq!(op(&l, 0)["ok"], false, "{binding}: payload too large");
        assert_eq!(
            op(&l, 0)["error"]["httpStatus"],
            413,
            "{binding}: {}",
            op(&l, 0)
        );
        assert_eq!(op(&l, 1)["ok"], true, "{binding}");
        assert_eq!(op(&l, 2)["ok"], false, "{binding}: busy");
        let busy = &op(&l, 2)["error"];
        assert!(
            busy["code"] == -32000
                || busy["httpStatus"] == 429
                || busy["message"].as_str().unwrap_or("").contains("-32000"),
            "{binding}: {busy}"
        );
        assert_eq!(op(&l, 3)["ok"], true, "{binding}");
        assert_eq!(
            st(&op(&l, 5)["result"]),
            "TASK_STATE_COMPLETED",
            "{binding}: {}",
            op(&l, 5)
        );
        assert_eq!(op(&l, 7)["ok"], false, "{binding}: unknown extension");
    }
    s.shutdown().await;
}

// ---------- `--exec` as a full agent: the example script with the official SDK clients ----------

struct ExecAgent {
    child: std::process::Child,
    url: String,
}

impl Drop for ExecAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn exec_agent() -> ExecAgent {
    use std::io::BufRead;
    let script = root().join("a2a-agent/examples/exec_agent.sh");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-agent"))
        .args(["serve", "--port", "0", "--validate-auth", "false"])
        .args(["--exec", &format!("sh {}", script.display())])
        .args(["--exec-events", "jsonl", "--name", "exec-example"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(u) = line.strip_prefix("LISTENING ") {
                let _ = tx.send(u.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("no LISTENING line");
    ExecAgent { child, url }
}

fn exec_scenario() -> Value {
    json!([
        {"op": "card"},
        {"op": "send", "text": "quick question"},
        {"op": "stream", "text": "make a report"},
        {"op": "send", "text": "csv", "taskId": "$2.task_id"},
        {"op": "get", "taskId": "$2.task_id"},
        {"op": "send", "text": "another report"},
        {"op": "stream", "text": "md", "taskId": "$5.task_id"},
        {"op": "stream", "text": "quick stream"},
        {"op": "send", "text": "fail now"},
        {"op": "get", "taskId": "nope"},
        {"op": "send", "text": "a third report"},
        {"op": "cancel", "taskId": "$10.task_id"},
        {"op": "get", "taskId": "$10.task_id"},
        {"op": "list"},
    ])
}

/// The text parts of an artifact (either SDK's dump).
fn artifact_texts(task: &Value) -> Vec<(String, String)> {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let name = a["name"].as_str().unwrap_or("").to_string();
            let text: String = a["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| {
                    p["text"]
                        .as_str()
                        .or(p.pointer("/root/text").and_then(Value::as_str))
                })
                .collect();
            (name, text)
        })
        .collect()
}

/// `lists`: the client speaks 1.0, where ListTasks is a core operation.
fn check_exec(tag: &str, l: &[Value], v03: bool, lists: bool) {
    let (done, input, failed, canceled) = if v03 {
        ("completed", "input-required", "failed", "canceled")
    } else {
        (
            "TASK_STATE_COMPLETED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
        )
    };
    assert_eq!(op(l, 0)["result"]["name"], "exec-example", "{tag}");
    // A direct message, no task.
    let r = &op(l, 1)["result"];
    let m = r.get("message").unwrap_or(r);
    assert!(
        m["parts"]
            .to_string()
            .contains("quick answer to: quick question"),
        "{tag}: {r}"
    );
    assert!(
        r.get("task").is_none() && r.get("status").is_none(),
        "{tag}: {r}"
    );
    // The streamed report: progress, a file artifact, input required.
    let evs = events(l, 2);
    assert!(evs.len() >= 4, "{tag}: {evs:?}");
    let all = serde_json::to_string(&evs).unwrap();
    assert!(all.contains("reading the request"), "{tag}: {all}");
    assert!(all.contains("report.txt"), "{tag}: {all}");
    let last = evs.last().unwrap();
    assert_eq!(
        st(last.get("statusUpdate").unwrap_or(last)),
        input,
        "{tag}: {last}"
    );
    assert!(all.contains("Which format"), "{tag}");
    // The follow-up turn reaches the script with the task id and completes the task.
    assert_eq!(st(&op(l, 3)["result"]), done, "{tag}: {}", op(l, 3));
    assert_eq!(op(l, 3)["task_id"], op(l, 2)["task_id"], "{tag}: same task");
    let t = &op(l, 4)["result"];
    let t = t.get("task").unwrap_or(t);
    let arts = artifact_texts(t);
    assert!(arts.iter().any(|(n, _)| n == "report.txt"), "{tag}: {t}");
    assert!(
        arts.iter()
            .any(|(n, x)| n == "summary" && x == "format: csv (done)"),
        "{tag}: appended chunks: {arts:?}"
    );
    // Blocking first turn asks for input; a streamed follow-up completes it.
    assert_eq!(st(&op(l, 5)["result"]), input, "{tag}");
    let evs = events(l, 6);
    let last = evs.last().unwrap();
    assert_eq!(
        st(last.get("statusUpdate").unwrap_or(last)),
        done,
        "{tag}: {evs:?}"
    );
    // A streamed direct message is one Message event.
    let evs = events(l, 7);
    assert_eq!(evs.len(), 1, "{tag}: {evs:?}");
    assert!(
        evs[0].to_string().contains("quick answer to: quick stream"),
        "{tag}"
    );
    // A failing script fails the task with its stderr.
    assert_eq!(st(&op(l, 8)["result"]), failed, "{tag}: {}", op(l, 8));
    assert_eq!(op(l, 9)["ok"], false, "{tag}");
    // A task waiting for input is canceled (no program runs meanwhile) and reads as canceled.
    assert_eq!(st(&op(l, 10)["result"]), input, "{tag}: {}", op(l, 10));
    assert_eq!(st(&op(l, 11)["result"]), canceled, "{tag}: {}", op(l, 11));
    assert_eq!(st(&op(l, 12)["result"]), canceled, "{tag}: {}", op(l, 12));
    if lists {
        let listed = op(l, 13)["result"].to_string();
        for i in [2, 5, 10] {
            let id = op(l, i)["task_id"].as_str().unwrap_or("?").to_string();
            assert!(
                listed.contains(&id),
                "{tag}: task {id} not listed: {listed}"
            );
        }
    }
}

#[tokio::test]
async fn sdk_clients_against_the_exec_example_script() {
    let a = tokio::task::spawn_blocking(exec_agent).await.unwrap();
    for binding in ["jsonrpc", "rest"] {
        let l = run("sdk1", &a.url, binding, Some("1.0"), exec_scenario()).await;
        check_exec(&format!("sdk1 1.0 {binding}"), &l, false, true);
        // Not sdk1's 0.3 mode over HTTP+JSON: a2a-sdk 1.3.0's 0.3 compat client decodes a
        // `fileWithBytes` part twice (`compat/v0_3/proto_utils.py` takes the decoded bytes for
        // base64 text: "Incorrect padding"), so the file artifact breaks its stream; the 0.3.x
        // SDK reads the same stream (below).
        if binding == "jsonrpc" {
            let l = run("sdk1", &a.url, binding, Some("0.3"), exec_scenario()).await;
            check_exec(&format!("sdk1 0.3 {binding}"), &l, false, false);
        }
        let l = run("sdk03", &a.url, binding, None, exec_scenario()).await;
        check_exec(&format!("sdk03 {binding}"), &l, true, false);
    }
}

#[tokio::test]
async fn sdk_clients_get_direct_messages_from_a_rust_handler() {
    let h = a2a_agent::handler_fn(|ctx: a2a_agent::RequestContext| async move {
        Ok(a2a_agent::Reply::direct_text(format!(
            "direct: {}",
            ctx.text()
        )))
    })
    .direct_replies();
    let s = start_with(a2a_agent::demo::echo_card(), h, open_config()).await;
    let sc = json!([
        {"op": "send", "text": "one"},
        {"op": "stream", "text": "two"},
    ]);
    for binding in ["jsonrpc", "rest"] {
        for (sdk, v) in [
            ("sdk1", Some("1.0")),
            ("sdk1", Some("0.3")),
            ("sdk03", None),
        ] {
            let tag = format!("{sdk} {v:?} {binding}");
            let l = run(sdk, s.url(), binding, v, sc.clone()).await;
            assert_eq!(op(&l, 0)["ok"], true, "{tag}: {l:?}");
            assert!(
                op(&l, 0)["result"].to_string().contains("direct: one"),
                "{tag}: {l:?}"
            );
            let evs = events(&l, 1);
            assert_eq!(evs.len(), 1, "{tag}: {evs:?}");
            assert!(evs[0].to_string().contains("direct: two"), "{tag}: {evs:?}");
        }
    }
    s.shutdown().await;
}
