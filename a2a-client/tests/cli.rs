//! The `a2a` binary against the a2a-sdk 1.x reference agent: readable and `--json` output,
//! streaming progress, forced binding/version, errors, and `--help`.

use std::process::Command;

use a2a_types::v1;
use conformance::interop::{self, PyAgent, Sdk};

fn a2a(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_documents_every_flag() {
    let (ok, help, _) = a2a(&["--help"]);
    assert!(ok);
    for flag in [
        "--a2a-version",
        "--binding",
        "--header",
        "--api-key",
        "--bearer",
        "--json",
        "--no-card",
        "--extension",
        "--timeout",
        "--cacert",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    let (ok, help, _) = a2a(&["send", "--help"]);
    assert!(ok);
    for flag in ["--stream", "--data", "--file", "--task-id", "--no-wait"] {
        assert!(help.contains(flag), "send --help lacks {flag}:\n{help}");
    }
    for sub in [&["task", "--help"][..], &["push", "--help"][..]] {
        let (ok, help, _) = a2a(sub);
        assert!(ok, "{sub:?}");
        assert!(help.contains("get") && help.contains("list"), "{help}");
    }
}

#[test]
fn cli_against_sdk1_agent() {
    interop::ensure_venvs().unwrap();
    let agent = PyAgent::start(Sdk::V1).unwrap();
    let url = agent.url();

    let (ok, out, err) = a2a(&["card", url]);
    assert!(ok, "{err}");
    assert!(out.contains("sdk1-reference-agent"), "{out}");
    assert!(
        out.contains(" * JSONRPC 1.0"),
        "first usable entry marked:\n{out}"
    );

    let (ok, out, err) = a2a(&["send", url, "stream 2", "--stream"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("[task] "), "{out}");
    assert!(out.contains("[status] working: working 1/2"), "{out}");
    assert!(out.contains("[artifact] stream (+): chunk 2"), "{out}");
    assert_eq!(*lines.last().unwrap(), "[status] completed: done", "{out}");

    // --json streams: one StreamResponse per line.
    let (ok, out, err) = a2a(&[
        "--json",
        "--binding",
        "rest",
        "send",
        url,
        "stream 1",
        "--stream",
    ]);
    assert!(ok, "{err}");
    let events: Vec<v1::StreamResponse> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(matches!(events[0], v1::StreamResponse::Task(_)));
    assert_eq!(events.len(), 1 + 1 + 2 + 1, "{out}");

    // 0.3 forced, JSON output is still 1.0.
    let (ok, out, err) = a2a(&[
        "--json",
        "--a2a-version",
        "0.3",
        "send",
        url,
        "echo via 0.3",
    ]);
    assert!(ok, "{err}");
    let task: v1::Task = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(task.status.state, v1::TaskState::Completed);
    let id = task.id.clone();

    let (ok, out, err) = a2a(&["task", "get", url, &id]);
    assert!(ok, "{err}");
    assert!(out.starts_with(&format!("task {id} (completed)")), "{out}");

    let (ok, out, err) = a2a(&[
        "push",
        "set",
        url,
        &id,
        "http://127.0.0.1:9/h",
        "--id",
        "p1",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("push config p1 of task"), "{out}");
    // No card: the URL is the interface itself.
    let rpc = format!("{url}/");
    let (ok, out, err) = a2a(&[
        "--no-card",
        "--binding",
        "jsonrpc",
        "--a2a-version",
        "1.0",
        "task",
        "get",
        &rpc,
        &id,
    ]);
    assert!(ok, "{err}");
    assert!(out.starts_with(&format!("task {id} (completed)")), "{out}");
    let (ok, _, err) = a2a(&["--no-card", "task", "get", &rpc, &id]);
    assert!(!ok);
    assert!(
        err.contains("--no-card needs --binding and --a2a-version"),
        "{err}"
    );

    let (ok, out, _) = a2a(&["push", "list", url, &id]);
    assert!(ok && out.contains("p1"), "{out}");
    let (ok, _, err) = a2a(&["push", "delete", url, &id, "p1"]);
    assert!(ok, "{err}");

    // data and file parts, over 1.0 and 0.3
    let dir = std::env::temp_dir().join(format!("a2a-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("note.txt");
    std::fs::write(&file, b"file body").unwrap();
    for version in ["1.0", "0.3"] {
        let (ok, out, err) = a2a(&[
            "--a2a-version",
            version,
            "send",
            url,
            "echo parts",
            "--data",
            r#"{"k":[1,2]}"#,
            "--file",
            file.to_str().unwrap(),
        ]);
        assert!(ok, "{version}: {err}");
        assert!(out.contains("(completed)"), "{version}: {out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();

    let (ok, _, err) = a2a(&["task", "get", url, "no-such-task"]);
    assert!(!ok);
    assert!(err.contains("TaskNotFoundError"), "{err}");

    let (ok, _, err) = a2a(&["--a2a-version", "2.0", "task", "get", url, &id]);
    assert!(!ok);
    assert!(err.contains("unsupported --a2a-version"), "{err}");
}

#[test]
fn cli_binding_grpc_against_sdk1_agent() {
    interop::ensure_venvs().unwrap();
    let agent = PyAgent::start_with(Sdk::V1, &["--grpc", "both"]).unwrap();
    let url = agent.url();
    let (ok, out, err) = a2a(&["card", url]);
    assert!(ok, "{err}");
    assert!(
        out.contains(" * GRPC 1.0"),
        "gRPC listed first is used:\n{out}"
    );
    let (ok, out, err) = a2a(&["--json", "--binding", "grpc", "send", url, "echo over grpc"]);
    assert!(ok, "{err}");
    let task: v1::Task = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(task.status.state, v1::TaskState::Completed);
    let (ok, out, err) = a2a(&["--binding", "grpc", "send", url, "stream 1", "--stream"]);
    assert!(ok, "{err}");
    assert!(out.contains("[status] completed"), "{out}");
    let (ok, _, err) = a2a(&["--binding", "grpc", "task", "get", url, "no-such-task"]);
    assert!(!ok);
    assert!(
        err.contains("TaskNotFound") || err.contains("not found"),
        "{err}"
    );
}
