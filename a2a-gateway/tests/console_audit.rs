//! The console in the admin audit and its origin rules (issue 39, item 8): every login attempt
//! (refused or not) and every console action is recorded with the operator's address; the
//! Origin check trusts a forwarded host only with `console_trusted_proxy`, and with a
//! `public_url` only that URL's origin.

use crate::common;

use a2a_gateway::errors::Version;
use common::console::*;
use common::gov::admin;
use common::*;
use reqwest::header::{COOKIE, ORIGIN};
use serde_json::Value;

async fn audit_rows(env: &Env) -> Vec<Value> {
    let (s, rows) = admin(env, "GET", "/admin/admin-audit?limit=1000", None).await;
    assert_eq!(s, 200, "{rows}");
    rows.as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn logins_and_console_actions_are_audited_with_the_operators_address() {
    let env = env(Version::V1).await;
    let http = client();
    let base = env.gw.base_url();
    let (status, cookie) = login_with(&http, &base, "not-the-token").await;
    assert_eq!((status, cookie), (401, None));
    let c = login(&env).await;
    let (status, body) = c
        .post(
            "/console/workspaces/ws1/keys",
            &[("label", "from-the-console"), ("csrf", &c.csrf)],
            Some(&base),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let rows = audit_rows(&env).await;
    let logins: Vec<&Value> = rows
        .iter()
        .filter(|r| r["action"] == "console login")
        .collect();
    assert_eq!(logins.len(), 2, "{rows:?}");
    assert_eq!(logins[0]["status"], 401);
    assert_eq!(logins[0]["actor"]["subject"], "login", "nobody known yet");
    assert_eq!(logins[1]["status"], 200);
    assert_eq!(logins[1]["actor"]["subject"], "admin-token");
    for l in &logins {
        assert_eq!(l["actor"]["kind"], "console", "{l}");
        assert!(
            l["actor"]["remote"]
                .as_str()
                .is_some_and(|r| r.starts_with("127.0.0.1:")),
            "{l}"
        );
    }
    let made = rows
        .iter()
        .find(|r| r["action"] == "POST /admin/workspaces/{ws}/keys")
        .expect("the console's key creation is audited");
    assert_eq!(made["actor"]["kind"], "console", "{made}");
    // The operator is the subject (the admin token's login here), the session in the detail.
    assert_eq!(made["actor"]["subject"], "admin-token", "{made}");
    assert!(
        made["detail"]["session"]
            .as_str()
            .is_some_and(|s| s.starts_with("session:")),
        "{made}"
    );
    assert!(
        made["actor"]["remote"]
            .as_str()
            .is_some_and(|r| r.starts_with("127.0.0.1:")),
        "{made}"
    );
    assert_eq!(made["workspaceId"], "ws1");
    env.stop().await;
}

#[tokio::test]
async fn forwarded_hosts_count_only_behind_a_trusted_proxy() {
    let env = env(Version::V1).await;
    let c = login(&env).await;
    let keys = || env.store.list_keys("ws1").unwrap().len();
    let before = keys();
    // A cross-site form that also claims the forwarded host of its own site.
    let r = c
        .http
        .post(format!("{}/console/workspaces/ws1/keys", c.base))
        .header(COOKIE, &c.cookie)
        .header(ORIGIN, "http://evil.example")
        .header("x-forwarded-host", "evil.example")
        .form(&[("label", "forged"), ("csrf", c.csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(keys(), before);
    env.stop().await;

    // With a public URL only its origin counts (the listener's own address no longer does).
    let env = env_with(Version::V1, |c| {
        c.public_url = Some("http://console.example:8443".into())
    })
    .await;
    let http = client();
    let base = env.gw.base_url();
    let form = http
        .get(format!("{base}/console/login"))
        .send()
        .await
        .unwrap();
    let (pre, _) = set_cookie(&form, "a2a_console_login").unwrap();
    let csrf = csrf_of(&form.text().await.unwrap());
    for (origin, want) in [(base.as_str(), 403), ("http://console.example:8443", 303)] {
        let r = http
            .post(format!("{base}/console/login"))
            .header(COOKIE, &pre)
            .header(ORIGIN, origin)
            .form(&[("csrf", csrf.as_str()), ("token", ADMIN)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), want, "Origin {origin}");
    }
    env.stop().await;
}
