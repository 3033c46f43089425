//! The console's security over plain HTTP (no browser): nothing without the session cookie,
//! CSRF and Origin checks on every form, a key's secret shown once, no workspace key opens the
//! console, the cookie's flags, logout, one-time login links, and no console without the admin
//! API.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use a2a_gateway::errors::Version;
use common::console::*;
use common::*;
use reqwest::header::{COOKIE, LOCATION, ORIGIN};

#[tokio::test]
async fn nothing_without_the_session_cookie() {
    let env = env(Version::V1).await;
    let http = client();
    for path in [
        "/console",
        "/console/hops",
        "/console/hops/1",
        "/console/approvals",
        "/console/workspaces/ws1/keys",
    ] {
        for cookie in [None, Some("a2a_console=made-up")] {
            let mut req = http.get(env.url(path));
            if let Some(c) = cookie {
                req = req.header(COOKIE, c);
            }
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), 303, "{path} {cookie:?}");
            assert_eq!(r.headers()[LOCATION], "/console/login");
        }
    }
    let r = http.get(env.url("/console/")).send().await.unwrap();
    assert_eq!(r.status(), 308);
    assert_eq!(r.headers()[LOCATION], "/console");
    let r = http
        .get(env.url("/console/hops/live"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .post(env.url("/console/workspaces/ws1/keys"))
        .header(ORIGIN, env.gw.base_url())
        .form(&[("label", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(env.store.list_keys("ws1").unwrap().len(), 1, "no key made");
    // The login page and the assets are open, with the strict policy.
    let r = http.get(env.url("/console/login")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let csp = r.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"));
    let r = http
        .get(env.url("/console/assets/console.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    env.stop().await;
}

#[tokio::test]
async fn no_workspace_key_opens_the_console() {
    let env = env(Version::V1).await;
    let http = client();
    let base = env.gw.base_url();
    let (status, cookie) = login_with(&http, &base, &env.key).await;
    assert_eq!(status, 401);
    assert!(cookie.is_none());
    let (status, cookie) = login_with(&http, &base, "not-the-token").await;
    assert_eq!(status, 401);
    assert!(cookie.is_none());
    // A bearer header (a workspace key, or even the admin token) is not a console session.
    for bearer in [env.key.as_str(), ADMIN] {
        let r = http
            .get(env.url("/console"))
            .bearer_auth(bearer)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
    }
    env.stop().await;
}

#[tokio::test]
async fn every_form_needs_the_csrf_token_and_the_same_origin() {
    let env = env(Version::V1).await;
    let c = login(&env).await;
    let base = c.base.clone();
    let keys = || env.store.list_keys("ws1").unwrap().len();
    let before = keys();
    type Attempt<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>);
    let forms: [Attempt; 4] = [
        (&[("label", "no-token")], Some(&base)),
        (&[("label", "wrong"), ("csrf", "0123")], Some(&base)),
        (
            &[("label", "cross-site"), ("csrf", &c.csrf)],
            Some("http://evil.example"),
        ),
        (&[("label", "no-origin"), ("csrf", &c.csrf)], None),
    ];
    for (form, origin) in forms {
        let (status, body) = c.post("/console/workspaces/ws1/keys", form, origin).await;
        assert_eq!(status, 403, "{form:?} {origin:?}: {body}");
    }
    assert_eq!(keys(), before, "no refused form made a key");
    // Every other form is behind the same check.
    for path in [
        "/console/workspaces",
        "/console/workspaces/ws1/agents",
        "/console/workspaces/ws1/agents/echo/delete",
        "/console/logout",
    ] {
        let (status, _) = c.post(path, &[("csrf", "nope")], Some(&base)).await;
        assert_eq!(status, 403, "{path}");
    }
    assert!(env.store.agent("ws1", "echo").unwrap().is_some());
    let (status, _) = c
        .post(
            "/console/workspaces/ws1/keys",
            &[("label", "ok"), ("csrf", &c.csrf)],
            Some(&base),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(keys(), before + 1);
    // The login form is double-submit protected too.
    let r = client()
        .post(env.url("/console/login"))
        .header(ORIGIN, &base)
        .form(&[("csrf", "x"), ("token", ADMIN)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(session_cookie(&r).is_none());
    env.stop().await;
}

#[tokio::test]
async fn a_new_key_secret_is_shown_once() {
    let env = env(Version::V1).await;
    let c = login(&env).await;
    let (status, body) = c
        .post(
            "/console/workspaces/ws1/keys",
            &[
                ("label", "shown-once"),
                ("scope", "a2a:read"),
                ("days", "7"),
                ("csrf", &c.csrf),
            ],
            Some(&c.base.clone()),
        )
        .await;
    assert_eq!(status, 201);
    let at = body.find("a2agw_").expect("the secret in the answer");
    let secret: String = body[at..]
        .chars()
        .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_' || *ch == '-')
        .collect();
    let p = env
        .store
        .authenticate(&secret)
        .unwrap()
        .expect("a working key");
    assert_eq!(p.workspace_id, "ws1");
    let info = env
        .store
        .list_keys("ws1")
        .unwrap()
        .into_iter()
        .find(|k| k.key_id == p.key_id)
        .unwrap();
    assert_eq!(info.label.as_deref(), Some("shown-once"));
    assert!(info.expires_at.is_some());
    for path in ["/console/workspaces/ws1/keys", "/console", "/console/hops"] {
        let (status, page) = c.get(path).await;
        assert_eq!(status, 200);
        assert!(!page.contains(&secret), "{path} shows the secret again");
    }
    let (_, page) = c.get("/console/workspaces/ws1/keys").await;
    assert!(page.contains(&p.key_id), "the key id is listed");
    // Revoking goes through the admin API; a key of another workspace is not revocable here.
    let (_, other) = env.store.create_key("ws2", &[], None, None).unwrap();
    let other_id = a2a_gateway::keys::key_id_of(&other).unwrap().to_owned();
    let (status, _) = c
        .post(
            &format!("/console/workspaces/ws1/keys/{other_id}/revoke"),
            &[("csrf", &c.csrf)],
            Some(&c.base.clone()),
        )
        .await;
    assert_eq!(status, 404);
    assert!(env.store.authenticate(&other).unwrap().is_ok());
    let (status, _) = c
        .post(
            &format!("/console/workspaces/ws1/keys/{}/revoke", p.key_id),
            &[("csrf", &c.csrf)],
            Some(&c.base.clone()),
        )
        .await;
    assert_eq!(status, 303);
    assert!(env.store.authenticate(&secret).unwrap().is_err());
    env.stop().await;
}

#[tokio::test]
async fn cookie_flags_logout_and_refusals_verbatim() {
    let env = env(Version::V1).await;
    let http = client();
    let base = env.gw.base_url();
    // Loopback over plain HTTP: HttpOnly, SameSite=Strict, scoped to /console, not Secure.
    let form = http.get(env.url("/console/login")).send().await.unwrap();
    let (pre, _) = set_cookie(&form, "a2a_console_login").unwrap();
    let csrf = csrf_of(&form.text().await.unwrap());
    let r = http
        .post(env.url("/console/login"))
        .header(COOKIE, &pre)
        .header(ORIGIN, &base)
        .form(&[("csrf", csrf.as_str()), ("token", ADMIN)])
        .send()
        .await
        .unwrap();
    let (_, header) = session_cookie(&r).unwrap();
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age="] {
        assert!(header.contains(flag), "{header}");
    }
    assert!(!header.contains("Secure"), "{header}");
    let port = env.gw.local_addr().port();
    assert!(
        header.starts_with(&format!("a2a_console_{port}=")),
        "a port-specific name: {header}"
    );
    // A client-sent X-Forwarded-Proto is not trusted without `console_trusted_proxy`.
    let form = http
        .get(env.url("/console/login"))
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .unwrap();
    let (_, pre_header) = set_cookie(&form, "a2a_console_login").unwrap();
    assert!(!pre_header.contains("Secure"), "{pre_header}");
    env.stop().await;
    // Behind a trusted TLS proxy: Secure, with the __Host- prefix (Path=/).
    let env = env_with(Version::V1, |c| c.console_trusted_proxy = true).await;
    let base = env.gw.base_url();
    let form = http
        .get(env.url("/console/login"))
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .unwrap();
    let (pre, pre_header) = set_cookie(&form, "a2a_console_login").unwrap();
    assert!(pre_header.contains("Secure"));
    let csrf = csrf_of(&form.text().await.unwrap());
    let r = http
        .post(env.url("/console/login"))
        .header("x-forwarded-proto", "https")
        .header(COOKIE, &pre)
        .header(ORIGIN, &base)
        .form(&[("csrf", csrf.as_str()), ("token", ADMIN)])
        .send()
        .await
        .unwrap();
    let (_, header) = set_cookie(&r, "__Host-a2a_console").unwrap();
    for flag in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/;"] {
        assert!(header.contains(flag), "{header}");
    }
    // A refused registration shows the admin API's message verbatim.
    let c = login(&env).await;
    let (status, page) = c
        .post(
            "/console/workspaces/ws1/agents",
            &[
                ("agent_id", "bad"),
                ("endpoint", "not a url"),
                ("csrf", &c.csrf),
            ],
            Some(&c.base.clone()),
        )
        .await;
    assert_eq!(status, 400);
    let expected = a2a_gateway::console::html::esc(&format!(
        "endpoint {:?}: relative URL without a base",
        "not a url"
    ));
    assert!(page.contains(&expected), "{page}");
    assert!(env.store.agent("ws1", "bad").unwrap().is_none());
    // Logout ends the session on the server.
    let (status, _) = c
        .post(
            "/console/logout",
            &[("csrf", &c.csrf)],
            Some(&c.base.clone()),
        )
        .await;
    assert_eq!(status, 303);
    let (status, _) = c.get("/console").await;
    assert_eq!(status, 303);
    env.stop().await;
}

#[tokio::test]
async fn no_console_without_the_admin_api() {
    let env = env_with(Version::V1, |c| c.admin_token = None).await;
    for path in ["/console", "/console/login"] {
        let r = client().get(env.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
    }
    env.stop().await;
}

/// Stops a child process however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_serve_binary_serves_the_console_only_with_an_admin_token() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [(&["--admin-token", "bin-admin"][..], 200), (&[][..], 404)] {
        let db = dir.path().join(format!("gw{expected}.db"));
        seed_file(&db, "echo", "http://127.0.0.1:9/");
        let (child, base) = spawn_serve(&db, args);
        let _stop = KillOnDrop(child);
        let r = client()
            .get(format!("{base}/console/login"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), expected, "{args:?}");
        if expected == 200 {
            let (code, cookie) = login_with(&client(), &base, "bin-admin").await;
            assert_eq!((code, cookie.is_some()), (303, true));
        }
    }
}

#[tokio::test]
async fn demo_prints_a_one_time_login_link() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-gateway"))
        .args(["demo", "--port", "0", "--database"])
        .arg(dir.path().join("demo.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _stop = KillOnDrop(child);
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut link = None;
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(l) = line.strip_prefix("# One-time login link (valid 15 minutes): ") {
                link = Some(l.to_owned());
            }
            if let Some(url) = line.strip_prefix("CONSOLE ")
                && let (Some(tx), Some(l)) = (tx.take(), link.clone())
            {
                let _ = tx.send((url.to_owned(), l));
            }
        }
    });
    let (console, link) = tokio::time::timeout(std::time::Duration::from_secs(60), rx)
        .await
        .expect("the demo printed no CONSOLE line")
        .unwrap();
    assert!(console.ends_with("/console"));
    let http = client();
    let r = http.get(&link).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (cookie, _) = session_cookie(&r).expect("a session");
    let page = http
        .get(&console)
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("demo"));
    let again = http.get(&link).send().await.unwrap();
    assert_eq!(again.status(), 401, "the link is spent");
    assert!(session_cookie(&again).is_none());
}
