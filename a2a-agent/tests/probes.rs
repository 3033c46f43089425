//! Liveness and readiness (`/healthz`, `/readyz`, at the root whatever the base path), and a
//! SQLite file written by a newer release refused with a clear message instead of written into.

use crate::common::*;

async fn probe(base: &str, path: &str) -> (u16, serde_json::Value) {
    let url = reqwest::Url::parse(base).unwrap().join(path).unwrap();
    let r = client().get(url).send().await.unwrap();
    let s = r.status().as_u16();
    (s, r.json().await.unwrap())
}

#[tokio::test]
async fn ready_until_shutdown_begins_alive_throughout() {
    let srv = echo(open_config()).await;
    let base = srv.url().to_string();
    assert_eq!(
        probe(&base, "/healthz").await,
        (200, serde_json::json!({"status": "ok"}))
    );
    let (s, b) = probe(&base, "/readyz").await;
    assert_eq!((s, b["status"].as_str()), (200, Some("ready")), "{b}");
    srv.manager().begin_shutdown();
    let (s, b) = probe(&base, "/readyz").await;
    assert_eq!(
        (s, b["reason"].as_str()),
        (503, Some("shutting down")),
        "{b}"
    );
    assert_eq!(probe(&base, "/healthz").await.0, 200);
    srv.shutdown().await;
}

#[test]
fn a_database_from_a_newer_release_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    drop(a2a_agent::SqliteStore::open(&path).unwrap());
    // Opened again by the same release: fine.
    drop(a2a_agent::SqliteStore::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);
    let err = a2a_agent::SqliteStore::open(&path).err().expect("refused");
    assert!(
        err.to_string().contains("newer than this release knows"),
        "{err}"
    );
    let out = std::process::Command::new(crate::common::AGENT_BIN)
        .args(["serve", "--echo", "--host", "127.0.0.1", "--port", "0"])
        .arg("--sqlite-path")
        .arg(&path)
        .env("A2A_AGENT_LOG", "warn")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("newer than this release knows"), "{text}");
}

#[test]
fn check_config_accepts_good_settings_and_refuses_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "max_concurrent_tasks = 4\n").unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "max_concurrent_taskz = 4\n").unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(crate::common::AGENT_BIN)
            .arg("serve")
            .args(args)
            .output()
            .unwrap()
    };
    let ok = run(&[
        "--echo",
        "--check-config",
        "--config",
        good.to_str().unwrap(),
    ]);
    assert!(ok.status.success(), "{ok:?}");
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "config ok");
    let no = run(&[
        "--echo",
        "--check-config",
        "--config",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(no.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&no.stderr).contains("max_concurrent_taskz"),
        "{no:?}"
    );
    assert_eq!(
        run(&["--check-config"]).status.code(),
        Some(2),
        "no handler"
    );
}
