//! The console end to end in headless Chromium (chromedriver, driven with `fantoccini`) against
//! a real gateway on 127.0.0.1:0 and a real a2a-agent echo agent: log in, register the agent,
//! create and revoke a key, send a message and watch its hop appear live, open the hop, deny and
//! approve held hops, the agent's chart, a narrow window and keyboard use. Screenshots of each
//! view go to `target/console-screenshots/`.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's `chromium` and
//! `chromium-driver`; `cargo xtask test` installs them). `A2A_CONSOLE_BROWSER=skip` skips the
//! test where they cannot be installed, except under CI (`CI` set), where it always runs.

use crate::common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use a2a_gateway::config::Config;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::Store;
use common::ADMIN;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long a page condition is waited for (a loaded 2-core machine).
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// chromedriver on a free loopback port; killed on drop.
pub(crate) struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn start_driver() -> Option<Driver> {
    let present =
        std::path::Path::new(CHROMIUM).exists() && std::path::Path::new(CHROMEDRIVER).exists();
    if !present {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        if std::env::var("A2A_CONSOLE_BROWSER").as_deref() == Ok("skip") && !ci {
            eprintln!("console browser test skipped (A2A_CONSOLE_BROWSER=skip)");
            return None;
        }
        panic!(
            "the console browser test needs {CHROMIUM} and {CHROMEDRIVER}: install them with \
             `apt-get install chromium chromium-driver` (cargo xtask test does), or set \
             A2A_CONSOLE_BROWSER=skip to skip this test"
        );
    }
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let http = reqwest::Client::new();
        for _ in 0..100 {
            let ready = http
                .get(format!("{}/status", driver.url))
                .send()
                .await
                .ok()
                .filter(|r| r.status().is_success());
            if let Some(r) = ready {
                let v: Value = r.json().await.unwrap_or_default();
                if v["value"]["ready"] == true {
                    return Some(driver);
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The port was taken in between, or the driver is slow: try another.
    }
    panic!("chromedriver did not become ready");
}

pub(crate) async fn browser(driver: &Driver, profile: &std::path::Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": CHROMIUM, "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1280,1000",
            format!("--user-data-dir={}", profile.display()),
        ]}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a chromium session")
}

fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/console-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    std::fs::write(shots().join(format!("{name}.png")), png).unwrap();
}

/// How many pixels the page scrolls sideways (0: it fits the window).
pub(crate) async fn sideways_overflow(c: &Client) -> i64 {
    c.execute(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
        vec![],
    )
    .await
    .unwrap()
    .as_i64()
    .unwrap_or(99)
}

/// The value of `#new-secret` once it differs from `previous` (the page before a form's answer
/// may still show the last secret).
async fn new_secret_other_than(c: &Client, previous: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Ok(e) = c.find(Locator::Css("#new-secret")).await
            && let Ok(Some(v)) = e.prop("value").await
            && v != previous
            && !v.is_empty()
        {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no new secret shown within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the page's text contains `text`.
pub(crate) async fn wait_text(c: &Client, text: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        // Between two pages there may be no body yet: read again.
        let body = match c.find(Locator::Css("body")).await {
            Ok(b) => b.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if body.contains(text) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the page never showed {text:?}; it shows:\n{body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(crate) async fn fill(c: &Client, css: &str, text: &str) {
    let e = c.find(Locator::Css(css)).await.unwrap();
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

pub(crate) async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

async fn send(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    text: &str,
    skill: Option<&str>,
) -> Value {
    let mut body = json!({"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {
        "message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
            "parts": [{"text": text}]}}});
    if let Some(s) = skill {
        body["params"]["metadata"] = json!({"skill": s});
        body["params"]["configuration"] = json!({"returnImmediately": true});
    }
    http.post(format!("{base}/a2a/echo"))
        .bearer_auth(key)
        .header("A2A-Version", "1.0")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_in_a_real_browser() {
    let Some(driver) = start_driver().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    store.create_workspace("team", "Team").unwrap();
    let echo = a2a_agent::AgentServer::new(
        a2a_agent::demo::echo_card(),
        a2a_agent::demo::echo_handler(),
    )
    .validate_auth(false)
    .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        listen: listener.local_addr().unwrap(),
        dev_mode: true,
        admin_token: Some(ADMIN.into()),
        approval_wait_secs: 0,
        ..Config::default()
    };
    let gw = Gateway::new(config, store.clone())
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    let base = gw.base_url();
    let http = reqwest::Client::new();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path()).await;

    // Log in: the console sends a visitor without a session to the login form.
    c.goto(&format!("{base}/console")).await.unwrap();
    wait_text(&c, "Admin token").await;
    assert!(
        c.current_url()
            .await
            .unwrap()
            .path()
            .ends_with("/console/login")
    );
    shot(&c, "01-login").await;
    fill(&c, "#token", "wrong").await;
    click(&c, "form.card button[type=submit]").await;
    wait_text(&c, "That is not the admin token.").await;
    fill(&c, "#token", ADMIN).await;
    click(&c, "form.card button[type=submit]").await;
    // The overview is the home after login; the workspaces are one click away.
    wait_text(&c, "Hops per minute").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/console/overview");
    click(&c, "a[href=\"/console\"]").await;
    wait_text(&c, "New workspace").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/console");
    shot(&c, "02-workspaces").await;

    // Keyboard: the first Tab reaches the skip link.
    c.find(Locator::Css("body"))
        .await
        .unwrap()
        .send_keys("\u{E004}")
        .await
        .unwrap();
    let focused = c.active_element().await.unwrap().text().await.unwrap();
    assert_eq!(focused, "Skip to content");

    // Register the echo agent; a refused registration first, its reason shown.
    c.goto(&format!("{base}/console/workspaces/team/agents/new"))
        .await
        .unwrap();
    fill(&c, "#agent-id", "echo").await;
    fill(&c, "#agent-endpoint", "not a url").await;
    click(&c, "form.card button[type=submit]").await;
    wait_text(&c, "The admin API refused the registration").await;
    wait_text(&c, "relative URL without a base").await;
    shot(&c, "03-agent-refused").await;
    fill(&c, "#agent-endpoint", echo.url()).await;
    click(&c, "form.card button[type=submit]").await;
    wait_text(&c, "Agent saved.").await;
    wait_text(&c, "JSONRPC").await;
    assert!(store.agent("team", "echo").unwrap().is_some());
    c.goto(&format!("{base}/console/workspaces/team"))
        .await
        .unwrap();
    wait_text(&c, "unsigned").await;
    shot(&c, "04-agents").await;

    // Create a key (its secret shown once), then create and revoke another.
    c.goto(&format!("{base}/console/workspaces/team/keys"))
        .await
        .unwrap();
    fill(&c, "#key-label", "browser").await;
    click(&c, "section form.card button[type=submit]").await;
    let secret = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("#new-secret"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    assert!(secret.starts_with("a2agw_"));
    shot(&c, "05-key-created").await;
    fill(&c, "#key-label", "to-revoke").await;
    click(&c, "section form.card button[type=submit]").await;
    // The page that showed the first secret is still there until the form's answer arrives:
    // wait for a `#new-secret` with another value.
    let doomed = new_secret_other_than(&c, &secret).await;
    let doomed_id = a2a_gateway::keys::key_id_of(&doomed).unwrap().to_owned();
    c.goto(&format!("{base}/console/workspaces/team/keys"))
        .await
        .unwrap();
    let page = c.source().await.unwrap();
    assert!(
        !page.contains(&secret) && !page.contains(&doomed),
        "shown once"
    );
    click(&c, &format!("tr[data-key=\"{doomed_id}\"] button")).await;
    wait_text(&c, "Key revoked.").await;
    let state = c
        .find(Locator::Css(&format!(
            "tr[data-key=\"{doomed_id}\"] td.state-revoked"
        )))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(state, "revoked");
    assert!(store.authenticate(&doomed).unwrap().is_err());
    shot(&c, "06-keys").await;

    // A message through the gateway: its hop appears on the open hops page by itself.
    c.goto(&format!("{base}/console/hops?workspace=team"))
        .await
        .unwrap();
    wait_text(&c, "Live: new hops appear").await;
    let before = c
        .find_all(Locator::Css("#hops tbody tr[data-seq]"))
        .await
        .unwrap()
        .len();
    let answer = send(&http, &base, &secret, "hello console", None).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let rows = c
            .find_all(Locator::Css("#hops tbody tr[data-seq]"))
            .await
            .unwrap();
        if rows.len() > before {
            let text = rows[0].text().await.unwrap();
            assert!(text.contains("echo") && text.contains("allowed"), "{text}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no live hop row");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    shot(&c, "07-hops").await;
    click(&c, "#hops tbody tr[data-seq] th a").await;
    wait_text(&c, "Audit records of this trace").await;
    wait_text(&c, "SendMessage").await;
    shot(&c, "08-hop-detail").await;

    // Two held hops: deny one, approve the other.
    let policy = json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'",
        "decision": "approve"}]});
    let r = http
        .put(format!("{base}/admin/workspaces/team/policy"))
        .bearer_auth(ADMIN)
        .json(&policy)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    for text in ["refund one", "refund two"] {
        let held = send(&http, &base, &secret, text, Some("refund")).await;
        assert!(held.get("result").is_some(), "{held}");
    }
    c.goto(&format!("{base}/console/approvals?workspace=team"))
        .await
        .unwrap();
    wait_text(&c, "needs-a-person").await;
    let ids: Vec<String> = {
        let rows = c
            .find_all(Locator::Css("#approvals tr[data-approval]"))
            .await
            .unwrap();
        let mut ids = Vec::new();
        for r in rows {
            ids.push(r.attr("data-approval").await.unwrap().unwrap());
        }
        ids
    };
    assert_eq!(ids.len(), 2, "two held hops");
    shot(&c, "09-approvals").await;
    // Deciding is on the approval's page, beside the whole held request.
    click(&c, &format!("tr[data-approval=\"{}\"] a.review", ids[0])).await;
    wait_text(&c, "as it will be sent").await;
    shot(&c, "09b-approval").await;
    fill(&c, &format!("#deny-why-{}", ids[0]), "not today").await;
    click(&c, "#approval form.decide button.danger").await;
    wait_text(&c, "Denied: the held hop was not sent.").await;
    c.goto(&format!(
        "{base}/console/workspaces/team/approvals/{}",
        ids[1]
    ))
    .await
    .unwrap();
    click(&c, "#approval form.decide button:not(.danger)").await;
    wait_text(&c, "Approved: the held hop was sent.").await;
    let state = |id: String| {
        let http = http.clone();
        let base = base.clone();
        async move {
            let v: Value = http
                .get(format!("{base}/admin/workspaces/team/approvals/{id}"))
                .bearer_auth(ADMIN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            v["state"].as_str().unwrap_or("").to_owned()
        }
    };
    assert_eq!(state(ids[0].clone()).await, "denied");
    assert_eq!(state(ids[1].clone()).await, "approved");
    c.goto(&format!(
        "{base}/console/approvals?workspace=team&state=denied"
    ))
    .await
    .unwrap();
    wait_text(&c, "not today").await;
    shot(&c, "10-approvals-decided").await;

    // The agent's page: the chart of its hops.
    c.goto(&format!("{base}/console/workspaces/team/agents/echo"))
        .await
        .unwrap();
    wait_text(&c, "Latency and throughput").await;
    assert!(
        !c.find_all(Locator::Css(".chart rect"))
            .await
            .unwrap()
            .is_empty()
    );
    shot(&c, "11-agent").await;

    // A narrow window: the page does not scroll sideways (wide tables scroll in their box).
    c.set_window_size(390, 844).await.unwrap();
    c.goto(&format!("{base}/console/hops")).await.unwrap();
    wait_text(&c, "Hops, newest first").await;
    let overflow = sideways_overflow(&c).await;
    assert!(overflow <= 1, "sideways scroll: {overflow}");
    shot(&c, "12-hops-narrow").await;

    // Log out: the session is gone.
    c.set_window_size(1280, 1000).await.unwrap();
    click(&c, "form.logout button").await;
    wait_text(&c, "Admin token").await;
    c.goto(&format!("{base}/console/hops")).await.unwrap();
    wait_text(&c, "Admin token").await;

    c.close().await.unwrap();
    gw.shutdown().await;
    echo.shutdown().await;
    drop(driver);
}
