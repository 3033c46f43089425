//! Console operators through OpenID Connect (issue 35, item 4; docs/console.md "Operators and
//! roles"): the code flow with PKCE against a small provider on loopback (`common/oidc.rs`),
//! roles from a claim. A viewer reads and changes nothing (the forms are left out of the page
//! and the server refuses the request); an approver of one workspace decides its approvals and
//! no other change, and the decision and the admin audit name them; an admin changes
//! everything; a login without a role, with a forged state or nonce, or without the flow's
//! cookie is refused and recorded. The admin token's login stays.

use reqwest::header::{COOKIE, LOCATION, ORIGIN};
use serde_json::{Value, json};

use crate::common::approval::{approval_id, held, policy};
use crate::common::console::{Console, client, csrf_of, login, session_cookie, set_cookie};
use crate::common::gov::admin;
use crate::common::oidc::{CLIENT_ID, CLIENT_SECRET, Provider};
use crate::common::{Env, env_with};
use a2a_gateway::config::Config;
use a2a_gateway::errors::Version;

async fn env_for(p: &Provider) -> Env {
    let issuer = p.issuer.clone();
    env_with(Version::V1, move |c| {
        c.console_oidc_issuer = Some(issuer);
        c.console_oidc_client_id = Some(CLIENT_ID.into());
        c.console_oidc_client_secret = Some(CLIENT_SECRET.into());
    })
    .await
}

/// What a login through the provider ended with: the callback's status, its body, and the
/// session cookie when one was set.
struct Login {
    status: u16,
    body: String,
    cookie: Option<String>,
}

/// The browser's part of the flow, by hand: start, the provider's redirect, the callback with
/// the flow's cookie (`tamper` may change the callback's query first).
async fn oidc_login(env: &Env, p: &Provider, claims: Value, tamper: fn(&mut url::Url)) -> Login {
    p.next_login(claims);
    let http = client();
    let base = env.gw.base_url();
    let start = http
        .get(format!("{base}/console/oidc/start"))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), 303, "start");
    let (flow, whole) = set_cookie(&start, "a2a_console_oidc").expect("the flow cookie");
    assert!(
        whole.contains("HttpOnly") && whole.contains("SameSite=Lax"),
        "{whole}"
    );
    let to_provider = start.headers()[LOCATION].to_str().unwrap().to_owned();
    assert!(to_provider.starts_with(&format!("{}/authorize?", p.issuer)));
    assert!(to_provider.contains("code_challenge_method=S256"));
    let back = http.get(&to_provider).send().await.unwrap();
    assert_eq!(back.status(), 303, "the provider redirects back");
    let mut callback = url::Url::parse(back.headers()[LOCATION].to_str().unwrap()).unwrap();
    assert_eq!(callback.path(), "/console/oidc/callback");
    tamper(&mut callback);
    let r = http
        .get(callback.as_str())
        .header(COOKIE, &flow)
        .send()
        .await
        .unwrap();
    let cookie = session_cookie(&r)
        .map(|c| c.0)
        .filter(|c| !c.ends_with('='));
    Login {
        status: r.status().as_u16(),
        body: r.text().await.unwrap(),
        cookie,
    }
}

/// A logged-in console of `claims`.
async fn console_of(env: &Env, p: &Provider, claims: Value) -> Console {
    let l = oidc_login(env, p, claims, |_| {}).await;
    assert_eq!(l.status, 200, "{}", l.body);
    let cookie = l.cookie.expect("a session cookie");
    let http = client();
    let base = env.gw.base_url();
    let r = http
        .get(format!("{base}/console"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let csrf = csrf_of(&r.text().await.unwrap());
    Console {
        http,
        base,
        cookie,
        csrf,
    }
}

/// The admin audit's records, newest last.
async fn admin_audit(env: &Env) -> Vec<Value> {
    let (s, b) = admin(env, "GET", "/admin/admin-audit", None).await;
    assert_eq!(s, 200, "{b}");
    b.as_array().cloned().unwrap_or_default()
}

/// A send held for approval in ws1; its approval id.
async fn held_approval(env: &Env) -> String {
    let (s, b) = admin(env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert!(s < 300, "{b}");
    let (_, b) = env
        .rpc("/a2a/echo", Some("1.0"), held(Some("1.0"), "refund 5"))
        .await;
    approval_id(&b)
}

#[tokio::test]
async fn a_viewer_reads_every_page_and_changes_nothing() {
    let p = Provider::start().await;
    let env = env_for(&p).await;
    let id = held_approval(&env).await;
    let c = console_of(
        &env,
        &p,
        json!({"sub": "u-vera", "email": "vera@example.com", "roles": ["viewer"]}),
    )
    .await;
    let (s, page) = c.get("/console").await;
    assert_eq!(s, 200);
    assert!(
        page.contains("Logged in as <strong>oidc:vera@example.com</strong> (viewer)"),
        "{page}"
    );
    assert!(
        !page.contains(r#"action="/console/workspaces""#),
        "the create form is left out"
    );
    assert!(page.contains("Read only: oidc:vera@example.com"), "{page}");
    for path in [
        "/console/workspaces/ws1",
        "/console/workspaces/ws1/keys",
        "/console/workspaces/ws1/agents/echo",
        "/console/hops",
        "/console/approvals",
        &format!("/console/workspaces/ws1/approvals/{id}"),
        "/console/workspaces/ws1/policy",
        "/console/workspaces/ws1/pii",
        "/console/workspaces/ws1/kills",
        "/console/workspaces/ws1/settings",
        "/console/workspaces/ws1/trust",
        "/console/admin-audit",
    ] {
        let (s, page) = c.get(path).await;
        assert_eq!(s, 200, "{path}");
        let forms = page.matches("<form method=\"post\"").count();
        assert_eq!(forms, 1, "{path}: only the logout form: {page}");
    }
    // The server refuses what the page leaves out, whatever the form says.
    let base = c.base.clone();
    for (path, form) in [
        ("/console/workspaces", vec![("id", "ws9")]),
        ("/console/workspaces/ws1/keys", vec![("label", "x")]),
        (
            "/console/workspaces/ws1/policy",
            vec![
                ("id.0", "r"),
                ("when.0", "true"),
                ("decision.0", "deny"),
                ("do", "save"),
            ],
        ),
        (
            "/console/workspaces/ws1/kills",
            vec![("kind", "context"), ("id", "c1")],
        ),
        ("/console/workspaces/ws1/trust/signing-keys", vec![]),
        (
            &*format!("/console/workspaces/ws1/approvals/{id}/approve"),
            vec![],
        ),
    ] {
        let mut f = vec![("csrf", c.csrf.as_str())];
        f.extend(form);
        let (s, page) = c.post(path, &f, Some(&base)).await;
        assert_eq!(s, 403, "{path}: {page}");
        assert!(
            page.contains("oidc:vera@example.com may not do this"),
            "{page}"
        );
    }
    let (_, ws) = admin(&env, "GET", "/admin/workspaces", None).await;
    assert!(!ws.to_string().contains("ws9"), "{ws}");
    let (_, kills) = admin(&env, "GET", "/admin/workspaces/ws1/kills", None).await;
    assert_eq!(kills, json!([]), "no kill made by a viewer");
    let (_, a) = admin(
        &env,
        "GET",
        &format!("/admin/workspaces/ws1/approvals/{id}"),
        None,
    )
    .await;
    assert_eq!(a["state"], "pending", "{a}");
}

#[tokio::test]
async fn an_approver_decides_their_workspace_and_is_named_in_the_decision_and_the_audit() {
    let p = Provider::start().await;
    let env = env_for(&p).await;
    let id = held_approval(&env).await;
    let c = console_of(
        &env,
        &p,
        json!({"sub": "u-ana", "preferred_username": "ana", "roles": "approver:ws1"}),
    )
    .await;
    let (_, page) = c
        .get(&format!("/console/workspaces/ws1/approvals/{id}"))
        .await;
    assert!(
        page.contains("Decided as <strong>oidc:ana</strong>"),
        "{page}"
    );
    assert_eq!(
        page.matches("<form method=\"post\"").count(),
        3,
        "approve, deny, logout"
    );
    assert!(!page.contains("name=\"approver\""), "no typed approver");
    let (_, keys) = c.get("/console/workspaces/ws1/keys").await;
    assert!(
        !keys.contains(r#"action="/console/workspaces/ws1/keys""#),
        "{keys}"
    );
    let base = c.base.clone();
    // Another workspace's approvals and any other change are refused.
    let (s, _) = c
        .post(
            "/console/workspaces/ws2/approvals/ap-x/approve",
            &[("csrf", &c.csrf)],
            Some(&base),
        )
        .await;
    assert_eq!(s, 403);
    let (s, _) = c
        .post(
            "/console/workspaces",
            &[("csrf", &c.csrf), ("id", "ws9")],
            Some(&base),
        )
        .await;
    assert_eq!(s, 403);
    // Their own: the typed-approver field of an old form is ignored.
    let (s, page) = c
        .post(
            &format!("/console/workspaces/ws1/approvals/{id}/deny"),
            &[("csrf", &c.csrf), ("approver", "mallory"), ("reason", "no")],
            Some(&base),
        )
        .await;
    assert_eq!(s, 303, "{page}");
    let (_, a) = admin(
        &env,
        "GET",
        &format!("/admin/workspaces/ws1/approvals/{id}"),
        None,
    )
    .await;
    assert_eq!(a["state"], "denied", "{a}");
    assert_eq!(a["approver"], "oidc:ana", "{a}");
    let audit = admin_audit(&env).await;
    let decided = audit
        .iter()
        .find(|r| r["action"].as_str().is_some_and(|a| a.ends_with("/deny")))
        .expect("the decision in the admin audit");
    assert_eq!(decided["actor"]["kind"], "console");
    assert_eq!(decided["actor"]["subject"], "oidc:ana", "{decided}");
    assert!(
        decided["detail"]["session"]
            .as_str()
            .is_some_and(|s| s.starts_with("session:"))
    );
    let login = audit
        .iter()
        .find(|r| r["action"] == "console login-oidc" && r["status"] == 200)
        .expect("the login in the admin audit");
    assert_eq!(login["actor"]["subject"], "oidc:ana", "{login}");
}

#[tokio::test]
async fn an_admin_through_the_provider_changes_everything_and_the_token_login_stays() {
    let p = Provider::start().await;
    let env = env_for(&p).await;
    let c = console_of(
        &env,
        &p,
        json!({"sub": "u-root", "email": "root@example.com",
            "realm_access": {"roles": ["admin"]}, "roles": ["admin"]}),
    )
    .await;
    let base = c.base.clone();
    let (s, page) = c
        .post(
            "/console/workspaces",
            &[("csrf", &c.csrf), ("id", "ws7")],
            Some(&base),
        )
        .await;
    assert_eq!(s, 303, "{page}");
    let audit = admin_audit(&env).await;
    assert!(audit.iter().any(|r| r["action"] == "POST /admin/workspaces"
        && r["actor"]["subject"] == "oidc:root@example.com"));
    // The admin token's login page offers the provider and still takes the token.
    let text = client()
        .get(format!("{base}/console/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains(r#"href="/console/oidc/start""#), "{text}");
    let admin_console = login(&env).await;
    let (_, page) = admin_console.get("/console").await;
    assert!(
        page.contains("Logged in as <strong>admin-token</strong> (admin)"),
        "{page}"
    );
}

#[tokio::test]
async fn logins_without_a_role_or_with_a_forged_answer_are_refused_and_recorded() {
    let p = Provider::start().await;
    let env = env_for(&p).await;
    // No console role.
    let l = oidc_login(
        &env,
        &p,
        json!({"sub": "u-x", "email": "x@example.com", "roles": ["other"]}),
        |_| {},
    )
    .await;
    assert_eq!(l.status, 403, "{}", l.body);
    assert!(
        l.body.contains("oidc:x@example.com has no console role"),
        "{}",
        l.body
    );
    assert!(l.cookie.is_none());
    // A state that is not the flow's.
    let l = oidc_login(&env, &p, json!({"sub": "u-y", "roles": ["admin"]}), |u| {
        let code = u
            .query_pairs()
            .find(|(k, _)| k == "code")
            .unwrap()
            .1
            .into_owned();
        u.query_pairs_mut()
            .clear()
            .append_pair("code", &code)
            .append_pair("state", "forged");
    })
    .await;
    assert_eq!(l.status, 403);
    assert!(l.body.contains("state check"), "{}", l.body);
    assert!(l.cookie.is_none());
    // An ID token whose nonce is not this login's.
    p.wrong_nonce();
    let l = oidc_login(&env, &p, json!({"sub": "u-z", "roles": ["admin"]}), |_| {}).await;
    assert_eq!(l.status, 403);
    assert!(l.body.contains("nonce"), "{}", l.body);
    assert!(l.cookie.is_none());
    // A callback without the flow's cookie (another browser).
    let r = client()
        .get(format!(
            "{}/console/oidc/callback?code=c&state=s",
            env.gw.base_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(
        p.refused().is_empty(),
        "the gateway's token requests were well formed: {:?}",
        p.refused()
    );
    let audit = admin_audit(&env).await;
    let refusals = audit
        .iter()
        .filter(|r| r["action"] == "console login-oidc" && r["status"] == 403)
        .count();
    assert_eq!(refusals, 4, "{audit:?}");
    // Nobody got a session: the console still sends everyone to the login page.
    let r = client()
        .get(format!("{}/console", env.gw.base_url()))
        .header(ORIGIN, env.gw.base_url())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
}

#[test]
fn the_provider_settings_come_together_and_over_https() {
    let store = a2a_gateway::store::Store::open_in_memory().unwrap();
    let partial = Config {
        console_oidc_issuer: Some("https://login.example.com".into()),
        ..Config::default()
    };
    let e = a2a_gateway::server::Gateway::new(partial, store.clone())
        .err()
        .expect("refused");
    assert!(e.contains("set together"), "{e}");
    let plain = Config {
        console_oidc_issuer: Some("http://login.example.com".into()),
        console_oidc_client_id: Some("c".into()),
        console_oidc_client_secret: Some("s".into()),
        ..Config::default()
    };
    let e = a2a_gateway::server::Gateway::new(plain, store.clone())
        .err()
        .expect("refused");
    assert!(e.contains("must be https"), "{e}");
    let loopback = Config {
        console_oidc_issuer: Some("http://127.0.0.1:9/".into()),
        console_oidc_client_id: Some("c".into()),
        console_oidc_client_secret: Some("s".into()),
        ..Config::default()
    };
    assert!(a2a_gateway::server::Gateway::new(loopback, store).is_ok());
}

/// The same flow in headless Chromium: the login page offers the provider; an approver of ws1
/// logs in through it, sees who they are, approves a held hop in the page, and the approval
/// names them; a viewer's pages show no form to change anything. Screenshots as the other
/// browser tests take them (`oidc-*.png`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_log_in_through_the_provider_in_a_real_browser() {
    use crate::console_browser::{browser, click, shot, start_driver, wait_text};
    let Some(driver) = start_driver().await else {
        return;
    };
    let p = Provider::start().await;
    let env = env_for(&p).await;
    let id = held_approval(&env).await;
    let base = env.gw.base_url();

    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path()).await;
    c.goto(&format!("{base}/console/login")).await.unwrap();
    wait_text(&c, "Log in with your identity provider").await;
    shot(&c, "oidc-01-login").await;
    p.next_login(json!({"sub": "u-ana", "email": "ana@example.com", "roles": ["approver:ws1"]}));
    click(&c, "#sso").await;
    wait_text(&c, "Logged in as oidc:ana@example.com (approver:ws1)").await;
    c.goto(&format!("{base}/console/workspaces/ws1/approvals/{id}"))
        .await
        .unwrap();
    wait_text(&c, "Decided as oidc:ana@example.com").await;
    shot(&c, "oidc-02-approver-approval").await;
    click(&c, r#"button[aria-label^="Approve"]"#).await;
    wait_text(&c, "Approved: the held hop was sent.").await;
    let (_, a) = admin(
        &env,
        "GET",
        &format!("/admin/workspaces/ws1/approvals/{id}"),
        None,
    )
    .await;
    assert_eq!(a["state"], "approved", "{a}");
    assert_eq!(a["approver"], "oidc:ana@example.com", "{a}");
    // The held hop's story names the approver from the login, and so does the admin audit.
    c.goto(&format!("{base}/console/hops?workspace=ws1&decision=held"))
        .await
        .unwrap();
    wait_text(&c, "held (approved)").await;
    click(&c, "#hops tbody tr[data-seq] th a").await;
    wait_text(&c, "Approved by oidc:ana@example.com").await;
    shot(&c, "oidc-04-approver-story").await;
    let audit = admin_audit(&env).await;
    let decided = audit
        .iter()
        .find(|r| {
            r["action"]
                .as_str()
                .is_some_and(|a| a.ends_with("/approve"))
        })
        .expect("the decision in the admin audit");
    assert_eq!(
        decided["actor"]["subject"], "oidc:ana@example.com",
        "{decided}"
    );
    c.close().await.unwrap();

    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path()).await;
    p.next_login(json!({"sub": "u-vera", "email": "vera@example.com", "roles": ["viewer"]}));
    c.goto(&format!("{base}/console/oidc/start")).await.unwrap();
    wait_text(&c, "Logged in as oidc:vera@example.com (viewer)").await;
    c.goto(&format!("{base}/console")).await.unwrap();
    wait_text(&c, "Read only: oidc:vera@example.com may not change this.").await;
    assert!(
        c.find(fantoccini::Locator::Css("#ws-id")).await.is_err(),
        "no create form"
    );
    shot(&c, "oidc-03-viewer-workspaces").await;
    c.close().await.unwrap();
}
