//! `a2a-gateway demo` as a child process: it prints LISTENING and the printed commands work.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[tokio::test]
async fn demo_prints_listening_and_serves_the_echo_agent() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["demo", "--port", "0", "--database"])
        .arg(dir.path().join("demo.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Keep reading stdout after LISTENING: a closed pipe would kill the demo mid-print.
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut key = None;
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(k) = line.strip_prefix("export A2A_GATEWAY_KEY=") {
                key = Some(k.to_owned());
            }
            if let Some(url) = line.strip_prefix("LISTENING ")
                && let (Some(tx), Some(k)) = (tx.take(), key.clone())
            {
                let _ = tx.send((url.to_owned(), k));
            }
        }
    });
    let (base, key) = rx.await.expect("no LISTENING line");
    let http = reqwest::Client::new();
    let b: Value = http
        .post(format!("{base}/a2a/echo"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":
                {"kind":"message","messageId": uuid::Uuid::new_v4().to_string(),"role":"user","parts":[{"kind":"text","text":"hello"}]}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(b["result"].to_string().contains("hello"), "{b}");
    let card: Value = http
        .get(format!("{base}/a2a/echo/.well-known/agent-card.json"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{base}/a2a/echo")
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn serve_help_names_every_default() {
    let out = Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    // clap wraps the help to the terminal width, so a default may be split over two lines.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "default: 127.0.0.1:8080",
        "default: true",
        "default: ok",
        "default: 50000",
        "16 MiB",
        "64 MiB",
        "1 MiB",
        "default: 30",
        "A2A_GATEWAY_SERVE_V1",
    ] {
        assert!(help.contains(needle), "missing {needle:?} in:\n{help}");
    }
}
