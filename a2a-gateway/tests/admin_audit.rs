//! The admin audit log (issue 15): every admin action through the API is one row with the
//! admin's identity; reads and refused tokens are not recorded.

use a2a_gateway::errors::Version;
use serde_json::{Value, json};

use crate::common::gov::admin;
use crate::common::*;

#[tokio::test]
async fn every_admin_action_is_recorded_with_its_admin() {
    let env = env(Version::V1).await;
    let echo = env.peers[0].url.clone();
    let actions: Vec<(&str, String, Option<Value>, u16)> = vec![
        (
            "POST",
            "/admin/workspaces".into(),
            Some(json!({"id": "ws3"})),
            201,
        ),
        (
            "PUT",
            "/admin/workspaces/ws3/limits".into(),
            Some(json!({"maxResponseBytes": 1000})),
            204,
        ),
        (
            "POST",
            "/admin/workspaces/ws3/agents".into(),
            Some(json!({"agentId": "e", "endpoint": echo, "credential": "peer-s3cret"})),
            201,
        ),
        (
            "POST",
            "/admin/workspaces/ws3/keys".into(),
            Some(json!({})),
            201,
        ),
        (
            "PUT",
            "/admin/workspaces/ws3/policy".into(),
            Some(json!({"rules": []})),
            200,
        ),
        (
            "PATCH",
            "/admin/workspaces/ws3/settings".into(),
            Some(json!({"a2a.extensions.allowed": ["urn:x"], "a2a.push.delivery": "direct"})),
            200,
        ),
        ("DELETE", "/admin/workspaces/ws3/agents/e".into(), None, 204),
    ];
    let mut key_id = String::new();
    for (m, path, body, want) in &actions {
        let (s, b) = admin(&env, m, path, body.clone()).await;
        assert_eq!(s, *want, "{m} {path}: {b}");
        if path.ends_with("/keys") {
            key_id = b["keyId"].as_str().unwrap().to_owned();
        }
    }
    let (s, _) = admin(&env, "POST", &format!("/admin/keys/{key_id}/revoke"), None).await;
    assert_eq!(s, 204);
    // Reads and a wrong token are not recorded.
    admin(&env, "GET", "/admin/workspaces", None).await;
    admin(&env, "GET", "/admin/workspaces/ws3/settings", None).await;
    let wrong = env
        .http
        .post(env.url("/admin/workspaces"))
        .bearer_auth("not-the-token")
        .json(&json!({"id": "ws4"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    let (s, rows) = admin(&env, "GET", "/admin/admin-audit", None).await;
    assert_eq!(s, 200);
    let rows = rows.as_array().unwrap().clone();
    assert_eq!(rows.len(), actions.len() + 1, "{rows:#?}");
    let names: Vec<&str> = rows.iter().map(|r| r["action"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "POST /admin/workspaces",
            "PUT /admin/workspaces/{ws}/limits",
            "POST /admin/workspaces/{ws}/agents",
            "POST /admin/workspaces/{ws}/keys",
            "PUT /admin/workspaces/{ws}/policy",
            "PATCH /admin/workspaces/{ws}/settings",
            "DELETE /admin/workspaces/{ws}/agents/{agent}",
            "POST /admin/keys/{key}/revoke",
        ]
    );
    for r in &rows[..actions.len()] {
        assert_eq!(r["workspaceId"], "ws3", "{r}");
    }
    for r in &rows {
        assert_eq!(r["actor"]["kind"], "admin-token");
        assert_eq!(r["actor"]["subject"], "admin-token");
        assert!(
            r["actor"]["remote"]
                .as_str()
                .unwrap()
                .starts_with("127.0.0.1:")
        );
        assert!(!r["ts"].as_str().unwrap().is_empty());
    }
    assert_eq!(rows[3]["detail"]["outcome"]["keyId"], key_id.as_str());
    assert_eq!(
        rows[5]["detail"]["request"]["a2a.extensions.allowed"],
        json!(["urn:x"])
    );
    let all = Value::Array(rows.clone()).to_string();
    assert!(
        !all.contains("peer-s3cret"),
        "a credential reached the audit log"
    );
    assert!(
        !all.contains("a2agw_"),
        "a key secret reached the audit log"
    );
    // Filtered by workspace; another workspace's rows are not shown.
    let (_, ws1) = admin(&env, "GET", "/admin/admin-audit?workspace=ws1", None).await;
    assert_eq!(ws1.as_array().unwrap().len(), 0);
    // The log is append-only.
    assert!(
        env.store
            .execute_raw("UPDATE admin_audit SET action = 'x'")
            .is_err()
    );
    env.stop().await;
}

#[tokio::test]
async fn cli_settings_changes_are_recorded_with_the_os_user() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    a2a_gateway::store::Store::open(&db)
        .unwrap()
        .create_workspace("ws", "W")
        .unwrap();
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
            .arg("admin")
            .arg("--database")
            .arg(&db)
            .args(args)
            .env("USER", "operator-ann")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let set: Value = serde_json::from_str(&cli(&[
        "settings-set",
        "ws",
        "--allow-extension",
        "urn:x:a",
        "--allow-extension",
        "urn:x:b",
        "--push-delivery",
        "direct",
    ]))
    .unwrap();
    assert_eq!(set["a2a.extensions.allowed"], json!(["urn:x:a", "urn:x:b"]));
    cli(&["settings-set", "ws", "--disallow-extension", "urn:x:a"]);
    let got: Value = serde_json::from_str(&cli(&["settings-get", "ws"])).unwrap();
    assert_eq!(got["a2a.extensions.allowed"], json!(["urn:x:b"]));
    assert_eq!(got["a2a.push.delivery"], "direct");
    let lines: Vec<Value> = cli(&["admin-audit", "--workspace", "ws"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Two changes; the reads (settings-get, admin-audit) are not recorded.
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert_eq!(l["action"], "cli settings-set");
        assert_eq!(
            l["actor"],
            json!({"kind": "cli", "subject": "operator-ann"})
        );
        assert_eq!(l["workspaceId"], "ws");
    }
}
