//! The SQLite store on a real file: migrations, WAL, keys at rest, isolation, audit export.

use std::io::{Read, Write};

use a2a_gateway::keys::Scope;
use a2a_gateway::store::{Agent, AuditRecord, KeyRejection, Store};

#[test]
fn file_store_migrates_once_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let secret = {
        let s = Store::open(&path).unwrap();
        assert_eq!(
            s.schema_version().unwrap(),
            a2a_gateway::store::MIGRATIONS.len() as i64
        );
        s.create_workspace("w", "W").unwrap();
        let (_, secret) = s.create_key("w", &[Scope::Read], Some("l"), None).unwrap();
        secret
    };
    assert!(dir.path().join("gw.db-wal").exists() || dir.path().join("gw.db").exists());
    let s = Store::open(&path).unwrap();
    assert_eq!(s.list_workspaces().unwrap().len(), 1);
    let p = s.authenticate(&secret).unwrap().unwrap();
    assert_eq!(p.scopes, vec![Scope::Read]);
    // Only the SHA-256 is stored, never the key.
    let raw = std::fs::read(&path).unwrap();
    let wal = std::fs::read(dir.path().join("gw.db-wal")).unwrap_or_default();
    let needle = secret.as_bytes();
    assert!(!raw.windows(needle.len()).any(|w| w == needle));
    assert!(!wal.windows(needle.len()).any(|w| w == needle));
    assert_eq!(
        s.authenticate("a2agw_0000000000000000_nope").unwrap(),
        Err(KeyRejection::Invalid)
    );
    assert_eq!(
        s.authenticate("garbage").unwrap(),
        Err(KeyRejection::Invalid)
    );
}

#[test]
fn agents_are_scoped_to_their_workspace() {
    let s = Store::open_in_memory().unwrap();
    s.create_workspace("a", "A").unwrap();
    s.create_workspace("b", "B").unwrap();
    let agent = Agent {
        workspace_id: "a".into(),
        agent_id: "x".into(),
        endpoint: "https://peer.example/a2a".into(),
        credential: Some("c".into()),
        skills: Some(vec!["s1".into()]),
        pinned_card_key: Some("https://peer.example/jwks.json".into()),
    };
    s.upsert_agent(&agent).unwrap();
    assert_eq!(s.agent("a", "x").unwrap().unwrap(), agent);
    assert!(s.agent("b", "x").unwrap().is_none());
    assert!(
        s.upsert_agent(&Agent {
            agent_id: "bad id".into(),
            ..agent.clone()
        })
        .is_err()
    );
    // A pinned key is a public JWK (or set) or a JWKS URL; never a private or symmetric key.
    for bad in [
        "k",
        r#"{"kty":"oct","k":"c2VjcmV0"}"#,
        "ftp://peer.example/jwks",
    ] {
        let e = s
            .upsert_agent(&Agent {
                pinned_card_key: Some(bad.into()),
                ..agent.clone()
            })
            .unwrap_err();
        assert!(e.to_string().contains("pinnedCardKey"), "{bad}: {e}");
    }
    assert!(
        s.upsert_agent(&Agent {
            endpoint: "not a url".into(),
            ..agent.clone()
        })
        .is_err()
    );
    assert!(
        s.upsert_agent(&Agent {
            workspace_id: "zz".into(),
            ..agent.clone()
        })
        .is_err()
    );
    s.delete_agent("a", "x").unwrap();
    assert!(s.agent("a", "x").unwrap().is_none());
}

#[test]
fn audit_is_append_only_and_exports_json_lines() {
    let s = Store::open_in_memory().unwrap();
    for i in 0..3 {
        s.append_audit(&AuditRecord {
            trace_id: format!("t{i}"),
            workspace_id: Some(if i == 2 { "w2" } else { "w1" }.into()),
            decision: "allowed".into(),
            status: 200,
            ..AuditRecord::default()
        })
        .unwrap();
    }
    let mut out = Vec::new();
    assert_eq!(s.export_audit_jsonl(Some("w1"), &mut out).unwrap(), 2);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["traceId"], "t0");
    assert_eq!(lines[1]["traceId"], "t1");
    assert!(s.execute_raw("UPDATE audit SET status = 1").is_err());
    assert!(s.execute_raw("DELETE FROM audit WHERE seq = 1").is_err());
    assert_eq!(s.audit(None, None, 0, 10).unwrap().len(), 3);
}

#[test]
fn a_database_from_a_newer_release_is_refused_by_the_store_and_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    drop(Store::open(&path).unwrap());
    let newer = a2a_gateway::store::MIGRATIONS.len() as i64 + 1;
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", newer).unwrap();
    drop(c);
    match Store::open(&path) {
        Err(a2a_gateway::store::StoreError::NewerSchema { found, known }) => {
            assert_eq!((found, known), (newer, newer - 1))
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened a newer schema"),
    }
    for args in [
        &["serve", "--listen", "127.0.0.1:0"][..],
        &["admin", "--database"][..],
    ] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
        cmd.args(args);
        if args[0] == "serve" {
            cmd.arg("--database").arg(&path);
        } else {
            cmd.arg(&path).arg("workspace-list");
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("newer than this release knows"),
            "{args:?}: {text}"
        );
    }
}

/// `database = "postgres://…"` is never taken for a SQLite file path: the SQLite store refuses
/// it clearly, and `serve` on an unreachable URL answers `/readyz` 503 naming PostgreSQL
/// without creating a file (tests/serve_postgres.rs serves a reachable one).
#[test]
fn a_postgres_url_as_the_database_is_refused_clearly() {
    let url = "postgres://gw@127.0.0.1:1/gw";
    match Store::open(std::path::Path::new(url)) {
        Err(a2a_gateway::store::StoreError::Invalid(m)) => {
            assert!(m.contains("PostgreSQL URL"), "{m}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened {url} as a SQLite file"),
    }
    // `serve` takes it as PostgreSQL, never as a file: nothing answers there, so it serves
    // 503 while it waits for the database (tests/serve_postgres_down.rs), saying why.
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--database", url])
        .current_dir(dir.path());
    let (mut child, base, _lines) = crate::common::spawn_gateway_cmd(cmd);
    let mut s = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    s.write_all(b"GET /readyz HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("PostgreSQL"), "{text}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

#[test]
fn check_config_accepts_good_settings_and_refuses_bad_ones_without_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "audit_retention = \"7d\"\n").unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "audit_retention = \"7 days\"\n").unwrap();
    let db = dir.path().join("never.db");
    let run = |cfg: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
            .args(["serve", "--check-config", "--config"])
            .arg(cfg)
            .arg("--database")
            .arg(&db)
            .output()
            .unwrap()
    };
    let ok = run(&good);
    assert!(ok.status.success(), "{ok:?}");
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "config ok");
    let no = run(&bad);
    assert_eq!(no.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&no.stderr).contains("audit_retention"),
        "{no:?}"
    );
    assert!(!db.exists(), "no database opened");
}
