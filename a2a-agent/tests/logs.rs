//! The binary's logs: `--log-format json` writes JSON lines, `--log-level` filters them (over
//! `A2A_AGENT_LOG`), text into a pipe has no colour codes, a bad format or filter is refused.

use std::io::BufRead;
use std::time::Duration;

fn first_lines(args: &[&str], n: usize) -> Vec<String> {
    let mut child = std::process::Command::new(crate::common::AGENT_BIN)
        .args(["serve", "--echo", "--host", "127.0.0.1", "--port", "0"])
        .args(args)
        .env("A2A_AGENT_LOG", "error")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut out = Vec::new();
    while out.len() < n {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(l) => out.push(l),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    out
}

#[test]
fn json_lines_at_the_level_asked_text_without_colour() {
    let json = first_lines(&["--log-format", "json", "--log-level", "info"], 2);
    let levels: Vec<String> = json
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["level"].as_str().unwrap().to_owned()
        })
        .collect();
    // --log-level info overrides A2A_AGENT_LOG=error.
    assert!(levels.iter().any(|l| l == "INFO"), "{json:?}");
    let text = first_lines(&["--log-level", "info"], 1);
    assert!(!text.is_empty());
    assert!(!text[0].contains('\u{1b}'), "{:?}", text[0]);
    for bad in [
        &["--log-format", "xml"][..],
        &["--log-level", "info,=="][..],
    ] {
        let out = std::process::Command::new(crate::common::AGENT_BIN)
            .args(["serve", "--echo", "--port", "0"])
            .args(bad)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
    }
}
