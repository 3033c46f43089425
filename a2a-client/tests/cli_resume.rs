//! The `a2a` CLI on a stream whose connection breaks (issue 16): it prints a reconnect line on
//! stderr and every event once on stdout; when the reconnections are spent it fails with an error
//! naming them. The agent is the event-numbering test server of `resume.rs`.

use crate::resume::{N, agent, agent_with, texts};
use a2a_types::v1;

/// Runs `a2a --json --no-card --binding jsonrpc --a2a-version 1.0 send URL go --stream`.
async fn stream_json(url: &str) -> (bool, Vec<v1::StreamResponse>, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args([
            "--json",
            "--no-card",
            "--binding",
            "jsonrpc",
            "--a2a-version",
            "1.0",
        ])
        .args(["send", url, "go", "--stream"])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (
        out.status.success(),
        events,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn reconnect_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("reconnecting"))
        .filter(|l| !l.starts_with("a2a: error"))
        .collect()
}

#[tokio::test]
async fn a_resumed_stream_prints_a_reconnect_line_and_every_event_once() {
    let a = agent(5, true).await;
    let (ok, events, err) = stream_json(&a.url).await;
    assert!(ok, "{err}");
    assert_eq!(
        reconnect_lines(&err),
        ["a2a: stream broke; reconnecting (attempt 1) after event 5"],
        "{err}"
    );
    let results: Vec<_> = events.into_iter().map(Ok).collect();
    let want: Vec<String> = (2..N).map(|i| format!("c{i}")).collect();
    assert_eq!(texts(&results), want, "no chunk missing or repeated");
    assert_eq!(results.len() as u64, N, "the task, the chunks, the status");
    assert!(matches!(results[0], Ok(v1::StreamResponse::Task(_))));
    assert!(
        matches!(&results[results.len() - 1], Ok(v1::StreamResponse::StatusUpdate(s))
            if s.status.state == v1::TaskState::Completed)
    );
}

#[tokio::test]
async fn spent_reconnections_fail_the_cli_with_an_error_naming_them() {
    let a = agent_with(3, true, true).await;
    let (ok, events, err) = stream_json(&a.url).await;
    assert!(!ok, "{err}");
    assert_eq!(events.len(), 3, "the events before the break are printed");
    let lines: Vec<String> = (1..=3)
        .map(|n| format!("a2a: stream broke; reconnecting (attempt {n}) after event 3"))
        .collect();
    assert_eq!(reconnect_lines(&err), lines, "{err}");
    assert!(
        err.contains(
            "a2a: error: reconnecting the stream of task t1 after event 3: gave up after 3 attempts"
        ),
        "{err}"
    );
}
