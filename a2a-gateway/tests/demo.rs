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

/// The demo's printed commands, run as printed (bash, after its `export` lines), twice each:
/// a command run again (or edited and run again) sends a fresh `messageId`, not a changed
/// duplicate. The CLI is named by a path that exists or through cargo; the temporary database
/// is gone after the demo stops.
#[test]
fn the_printed_commands_run_as_printed_and_the_temporary_database_goes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["demo", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    loop {
        let l = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the demo printed its CONSOLE line");
        let done = l.starts_with("CONSOLE ");
        lines.push(l);
        if done {
            break;
        }
    }
    std::thread::spawn(move || for _ in rx {});
    let db = lines[0]
        .split("database ")
        .nth(1)
        .and_then(|r| r.strip_suffix(" (removed on exit)"))
        .unwrap_or_else(|| panic!("{}", lines[0]))
        .to_owned();
    assert!(std::path::Path::new(&db).exists(), "{db}");
    let exports: String = lines
        .iter()
        .filter(|l| l.starts_with("export "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(exports.contains("A2A_BEARER"), "{exports}");
    // Each curl command, with its continuation line.
    let mut commands = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with("curl ") {
            let mut c = lines[i].clone();
            while c.ends_with('\\') {
                i += 1;
                c = format!("{}\n{}", c, lines[i]);
            }
            commands.push(c);
        }
        i += 1;
    }
    assert_eq!(commands.len(), 4, "{commands:#?}");
    for c in &commands {
        for round in 0..2 {
            // The second run is the command edited: another text under the printed id form.
            let c = if round == 0 {
                c.clone()
            } else {
                c.replace("\"hello\"", "\"hello again\"")
            };
            let out = Command::new("bash")
                .arg("-c")
                .arg(format!("{exports}{c}"))
                .output()
                .unwrap();
            let body = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{c}: {body}");
            assert!(
                !body.contains("\"error\"") && !body.contains("a2a_"),
                "round {round}: {c}\n{body}"
            );
            assert!(
                body.contains("echo") || body.contains("hello"),
                "{c}: {body}"
            );
        }
    }
    for cli in lines
        .iter()
        .filter(|l| l.contains(" send ") && !l.starts_with('#'))
    {
        let first = cli.split_whitespace().next().unwrap();
        assert!(
            cli.starts_with("cargo run -q --release -p a2ars-client --bin a2a -- ")
                || std::path::Path::new(first).exists(),
            "{cli}"
        );
        assert!(!cli.contains("--bearer"), "the CLI reads A2A_BEARER: {cli}");
    }
    // A closed terminal (SIGHUP) ends the demo as Ctrl-C and SIGTERM do, cleaning up.
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    assert!(child.wait().unwrap().success());
    for suffix in ["", "-wal", "-shm", ".intents", ".intents.lock"] {
        let p = format!("{db}{suffix}");
        assert!(!std::path::Path::new(&p).exists(), "{p} left behind");
    }
}
