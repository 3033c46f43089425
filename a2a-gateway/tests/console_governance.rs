//! The console's governance pages (issue 35): the pages' forms over plain HTTP (CSRF, refusals
//! in the page, admin-audit rows), and each page and action in headless Chromium: a policy
//! refused at save time with the message beside its rule, fixed and governing the next hop,
//! explained, and its dry-run results; a PII rule redacting a hop; a kill refusing its context,
//! then lifted; settings and limits; a card key trusted; the admin audit filtered to those
//! changes. Screenshots go to `target/console-screenshots/` (`g1-...` to `g7-...`). That every
//! admin route has a console page is `console_routes.rs`.

use crate::common;
use crate::console_browser::{
    browser, click, fill, shot, sideways_overflow, start_driver, wait_text,
};

use a2a_client::signing;
use common::console::login;
use common::*;
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// The governance forms over plain HTTP: each needs the CSRF token, a refusal comes back in
/// the page (and changes nothing), and each change is an admin-audit row of the console.
#[tokio::test]
async fn governance_forms_check_csrf_and_answer_in_the_page() {
    let env = env(a2a_gateway::protocol::errors::Version::V1).await;
    let con = login(&env).await;
    let origin = con.base.clone();
    let o = Some(origin.as_str());
    // No CSRF token: refused, nothing stored.
    let (s, _) = con
        .post(
            "/console/workspaces/ws1/policy",
            &[
                ("id.0", "r"),
                ("when.0", "true"),
                ("decision.0", "deny"),
                ("do", "save"),
            ],
            o,
        )
        .await;
    assert_eq!(s, 403);
    assert_eq!(admin_get(&env, "/admin/workspaces/ws1/policy").await.0, 404);
    // A rule the admin API refuses: the page says why, beside the rule; nothing stored.
    let (s, html) = con
        .post(
            "/console/workspaces/ws1/policy",
            &[
                ("csrf", &con.csrf),
                ("id.0", "ok"),
                ("when.0", "true"),
                ("decision.0", "allow"),
                ("id.1", "typo"),
                ("when.1", "agent.idd == 'x'"),
                ("decision.1", "deny"),
                ("do", "save"),
            ],
            o,
        )
        .await;
    assert_eq!(s, 422, "{html}");
    assert!(html.contains(r#"id="rule-error-1""#), "{html}");
    assert!(html.contains("rules[1]"), "{html}");
    assert!(html.contains("agent.idd"), "the typed rule is kept: {html}");
    assert_eq!(admin_get(&env, "/admin/workspaces/ws1/policy").await.0, 404);
    // Settings: an unknown push delivery is refused in the page.
    let (s, html) = con
        .post(
            "/console/workspaces/ws1/settings",
            &[("csrf", &con.csrf), ("push_delivery", "pigeon")],
            o,
        )
        .await;
    assert_eq!(s, 400, "{html}");
    assert!(
        html.contains(r#"role="alert""#) && html.contains("direct"),
        "{html}"
    );
    // A kill without an id: the admin API's message, in the page.
    let (s, html) = con
        .post(
            "/console/workspaces/ws1/kills",
            &[("csrf", &con.csrf), ("kind", "context"), ("id", "")],
            o,
        )
        .await;
    assert_eq!(s, 400, "{html}");
    assert!(html.contains("id: must be 1 to 1024 characters"), "{html}");
    // Lifting a kill that does not stand: the admin API's 404, in the page.
    let (s, html) = con
        .post(
            "/console/workspaces/ws1/kills/lift",
            &[
                ("csrf", &con.csrf),
                ("kind", "context"),
                ("id", "never/killed"),
            ],
            o,
        )
        .await;
    assert_eq!(s, 404, "{html}");
    assert!(
        html.contains("no kill of context never/killed in workspace ws1"),
        "{html}"
    );
    // A good save: redirected to the page, stored, and recorded as the console's action.
    let (s, _) = con
        .post(
            "/console/workspaces/ws1/pii",
            &[
                ("csrf", &con.csrf),
                ("default_action", "record"),
                ("kind.EMAIL", "redact"),
            ],
            o,
        )
        .await;
    assert_eq!(s, 303);
    assert_eq!(admin_get(&env, "/admin/workspaces/ws1/pii").await.0, 200);
    let (_, rows) = admin_get(
        &env,
        "/admin/admin-audit?workspace=ws1&actor=console&action=pii",
    )
    .await;
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(rows[0]["action"], "PUT /admin/workspaces/{ws}/pii");
    assert_eq!(rows[0]["actor"]["kind"], "console");
    // Every page of the workspace answers 200 with its forms' CSRF field; an unknown
    // workspace is a page that says so.
    for p in ["policy", "pii", "kills", "settings", "trust"] {
        let (s, html) = con.get(&format!("/console/workspaces/ws1/{p}")).await;
        assert_eq!(s, 200, "{p}: {html}");
        assert!(html.contains(r#"name="csrf""#), "{p}");
        let (s, html) = con.get(&format!("/console/workspaces/nope/{p}")).await;
        assert_eq!(s, 404, "{p}");
        assert!(html.contains("workspace nope not found"), "{p}: {html}");
    }
    let (s, html) = con.get("/console/admin-audit?since=yesterday").await;
    assert_eq!(s, 400);
    assert!(html.contains("is not a time like"), "{html}");
    env.stop().await;
}

/// An admin API `GET`: status and JSON answer.
async fn admin_get(env: &Env, path: &str) -> (u16, Value) {
    let r = env
        .http
        .get(env.url(path))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn send(env: &Env, text: &str, skill: Option<&str>, context: Option<&str>) -> (u16, Value) {
    let mut body = send10(text);
    if let Some(s) = skill {
        body["params"]["metadata"] = json!({"skill": s});
    }
    if let Some(c) = context {
        body["params"]["message"]["contextId"] = json!(c);
    }
    env.rpc("/a2a/echo", Some("1.0"), body).await
}

/// The text of the element `css`.
async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The page holds the console's rules: no field without a label, no inline script or style,
/// and at 1,280 px no sideways scroll.
async fn page_rules(c: &Client, name: &str) {
    let unlabelled = c
        .execute(
            "return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
               .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
               .map(e => e.id || e.name);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(unlabelled, json!([]), "{name}: fields without a label");
    let inline = c
        .execute(
            "return document.querySelectorAll('script:not([src]), style, [style]').length;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(inline, json!(0), "{name}: inline script or style");
    let overflow = sideways_overflow(c).await;
    assert!(
        overflow <= 1,
        "{name}: sideways scroll at 1,280 px: {overflow}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governance_pages_in_a_real_browser() {
    let Some(driver) = start_driver().await else {
        return;
    };
    let env = env_with(a2a_gateway::protocol::errors::Version::V1, |c| {
        c.card_key_secret = Some("a card key secret of 32 bytes or more".into());
    })
    .await;
    // A peer whose card is signed with a key the workspace does not trust yet.
    let (peer, peer_base) = crate::trust::peer().await;
    let (k1, jwk1) = crate::trust::key("k1");
    let signed_url = format!("{peer_base}/p/signed");
    peer.cards.lock().unwrap().insert(
        "signed".into(),
        signing::sign_card(crate::trust::card_v1(&signed_url), &k1, None).unwrap(),
    );
    env.register("ws1", "signed", &signed_url, None);
    let base = env.gw.base_url();
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path()).await;
    c.goto(&format!("{base}/console/login")).await.unwrap();
    fill(&c, "#token", ADMIN).await;
    click(&c, "form.card button[type=submit]").await;
    // The login lands on the overview.
    wait_text(&c, "Logged in as admin-token").await;

    // Policy: a rule with a name the hop lacks is refused at save, the message beside it.
    c.goto(&format!("{base}/console/workspaces/ws1/policy"))
        .await
        .unwrap();
    wait_text(&c, "Rules, in order").await;
    page_rules(&c, "policy").await;
    fill(&c, "#id-0", "no-refunds").await;
    fill(&c, "#when-0", "agent.idd == 'echo'").await;
    click(&c, "#decision-0 option[value=deny]").await;
    click(&c, "button[value=save]").await;
    wait_text(&c, "Not saved: rule 1 is refused").await;
    let beside = text_of(&c, "#rule-error-0").await;
    assert!(
        beside.contains("rules[0]") && beside.contains("agent.idd"),
        "{beside}"
    );
    shot(&c, "g1-policy-invalid").await;
    assert_eq!(
        admin_get(&env, "/admin/workspaces/ws1/policy").await.0,
        404,
        "nothing saved"
    );
    // Fixed, and a dry-run rule after it: saved, and it governs the next hop.
    fill(&c, "#when-0", "declared_skill == 'refund'").await;
    fill(&c, "#id-1", "watch-text").await;
    fill(&c, "#when-1", "message.text_chars > 3").await;
    click(&c, "#decision-1 option[value=deny]").await;
    click(&c, "tr[data-rule=\"1\"] input[name=\"dry.1\"]").await;
    click(&c, "button[value=save]").await;
    wait_text(&c, "Policy saved").await;
    let (_, denied) = send(&env, "a refund please", Some("refund"), None).await;
    assert_eq!(gw_code(&denied), "a2a_policy_denied", "{denied}");
    let (status, allowed) = send(&env, "hello", None, None).await;
    assert_eq!(status, 200, "{allowed}");
    assert!(allowed.get("result").is_some(), "{allowed}");
    // Explain a sample request over the rules in the form.
    c.goto(&format!("{base}/console/workspaces/ws1/policy"))
        .await
        .unwrap();
    wait_text(&c, "Dry-run results").await;
    let dry = text_of(&c, "#dry-run-results").await;
    assert!(
        dry.contains("watch-text") && dry.contains("deny: "),
        "{dry}"
    );
    fill(&c, "#x-agent", "echo").await;
    fill(&c, "#x-skill", "refund").await;
    click(&c, "button[value=explain]").await;
    wait_text(&c, "Each rule's result").await;
    c.execute(
        "document.getElementById('dry-run-results').scrollIntoView();",
        vec![],
    )
    .await
    .unwrap();
    shot(&c, "g2b-policy-dry-run").await;
    c.execute("window.scrollTo(0, 0);", vec![]).await.unwrap();
    let explained = text_of(&c, "#explain-result").await;
    assert!(
        explained.contains("Decision deny by rule no-refunds"),
        "{explained}"
    );
    page_rules(&c, "policy explained").await;
    shot(&c, "g2-policy-explain").await;

    // PII: e-mail addresses redacted, from the next hop on.
    c.goto(&format!("{base}/console/workspaces/ws1/pii"))
        .await
        .unwrap();
    wait_text(&c, "Scanning is off").await;
    page_rules(&c, "pii").await;
    click(&c, "#kind-EMAIL option[value=redact]").await;
    click(&c, "#binary-parts option[value=refuse]").await;
    click(&c, "#pii-form button[type=submit]").await;
    wait_text(&c, "PII rules saved").await;
    wait_text(&c, "Scanning is on").await;
    shot(&c, "g3-pii").await;
    let (_, echoed) = send(&env, "write to alice@example.com", None, None).await;
    let shown = echoed.to_string();
    assert!(
        shown.contains("[REDACTED:EMAIL]") && !shown.contains("alice@example.com"),
        "{shown}"
    );
    let (_, rules) = admin_get(&env, "/admin/workspaces/ws1/pii").await;
    assert_eq!(rules["binary_parts"], "refuse", "{rules}");

    // Kills: a context killed from the page; a send naming it is refused.
    c.goto(&format!("{base}/console/workspaces/ws1/kills"))
        .await
        .unwrap();
    wait_text(&c, "No kills in this workspace.").await;
    page_rules(&c, "kills").await;
    fill(&c, "#kill-id", "ctx-runaway").await;
    fill(&c, "#kill-reason", "looping").await;
    click(&c, "#kill-form button[type=submit]").await;
    wait_text(&c, "Killed context").await;
    let row = text_of(&c, "tr[data-kill=\"context:ctx-runaway\"]").await;
    assert!(row.contains("looping"), "{row}");
    shot(&c, "g4-kills").await;
    let (_, killed) = send(&env, "again", None, Some("ctx-runaway")).await;
    assert_eq!(gw_code(&killed), "a2a_session_killed", "{killed}");
    // Lifted from its row: the next send in that context is served.
    click(&c, "tr[data-kill=\"context:ctx-runaway\"] button").await;
    wait_text(&c, "Kill lifted").await;
    wait_text(&c, "No kills in this workspace.").await;
    let (status, served) = send(&env, "once more", None, Some("ctx-runaway")).await;
    assert_eq!(status, 200, "{served}");
    assert!(served.get("result").is_some(), "{served}");

    // Settings: an allowed extension and a card limit.
    c.goto(&format!("{base}/console/workspaces/ws1/settings"))
        .await
        .unwrap();
    wait_text(&c, "Byte limits").await;
    page_rules(&c, "settings").await;
    fill(&c, "#extensions", "urn:example:ext/1").await;
    click(&c, "#settings-form button[type=submit]").await;
    wait_text(&c, "Settings saved").await;
    assert!(
        text_of(&c, "#settings-now")
            .await
            .contains("urn:example:ext/1")
    );
    fill(&c, "#max-card", "65536").await;
    click(&c, "#limits-form button[type=submit]").await;
    wait_text(&c, "Limits saved.").await;
    shot(&c, "g5-settings").await;
    let w = env.store.workspace("ws1").unwrap().unwrap();
    assert_eq!(w.max_card_bytes, Some(65536));
    let s = env.store.workspace_settings("ws1").unwrap();
    assert_eq!(s.extensions_allowed, vec!["urn:example:ext/1".to_owned()]);

    // Trust: the signed peer's key is not trusted until pinned from the page.
    c.goto(&format!("{base}/console/workspaces/ws1/trust"))
        .await
        .unwrap();
    wait_text(&c, "Each agent's card").await;
    page_rules(&c, "trust").await;
    let before = text_of(&c, "tr[data-agent=\"signed\"] td.trust").await;
    assert!(before.starts_with("untrusted-key"), "{before}");
    assert!(
        text_of(&c, "tr[data-agent=\"signed\"]")
            .await
            .contains("k1")
    );
    fill(&c, "#pin-signed", &jwk1.to_string()).await;
    click(&c, "tr[data-agent=\"signed\"] form.pin button").await;
    wait_text(&c, "Card key pinned").await;
    let after = text_of(&c, "tr[data-agent=\"signed\"] td.trust").await;
    assert_eq!(after, "verified");
    assert!(
        env.store
            .agent("ws1", "signed")
            .unwrap()
            .unwrap()
            .pinned_card_key
            .is_some()
    );
    click(&c, "#require option[value=true]").await;
    click(&c, "#card-trust-form button[type=submit]").await;
    wait_text(&c, "Card trust saved.").await;
    assert_eq!(text_of(&c, "#trust-effective").await, "required");
    c.find(Locator::XPath("//button[text()='New signing key']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "New signing key: it signs").await;
    let keys = c
        .find_all(Locator::Css("#signing-keys tr[data-kid] td.state-active"))
        .await
        .unwrap();
    assert_eq!(keys.len(), 1);
    shot(&c, "g6-trust").await;

    // The admin audit: the changes just made, filtered by operator, action and workspace.
    c.goto(&format!("{base}/console/admin-audit"))
        .await
        .unwrap();
    wait_text(&c, "Admin actions").await;
    page_rules(&c, "admin audit").await;
    fill(&c, "#a-workspace", "ws1").await;
    fill(&c, "#a-actor", "console").await;
    fill(&c, "#a-action", "policy").await;
    click(&c, "#audit-filters button[type=submit]").await;
    wait_text(&c, "PUT /admin/workspaces/{ws}/policy").await;
    let rows = c
        .find_all(Locator::Css("#admin-audit tbody tr[data-seq]"))
        .await
        .unwrap();
    let mut texts = Vec::new();
    for r in &rows {
        texts.push(r.text().await.unwrap());
    }
    // The refused save (422) and the good one; the explain is a read, not recorded.
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].contains("422") && texts[1].contains("200"),
        "{texts:?}"
    );
    assert!(texts.iter().all(|t| t.contains("console")), "{texts:?}");
    shot(&c, "g7-admin-audit").await;
    // "The last hour" keeps the filters and finds the same rows.
    click(&c, "#last-hour").await;
    wait_text(&c, "PUT /admin/workspaces/{ws}/policy").await;
    let since = c
        .find(Locator::Css("#a-since"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(!since.is_empty());
    let recent = c
        .find_all(Locator::Css("#admin-audit tbody tr[data-seq]"))
        .await
        .unwrap();
    assert_eq!(recent.len(), 2);
    fill(&c, "#a-action", "kill").await;
    click(&c, "#audit-filters button[type=submit]").await;
    wait_text(&c, "POST /admin/workspaces/{ws}/kill").await;
    wait_text(&c, "DELETE /admin/workspaces/{ws}/kills/{kind}/{id}").await;
    // Keyboard: from the action filter, Tab moves on through the form's fields.
    c.find(Locator::Css("#a-action"))
        .await
        .unwrap()
        .send_keys("\u{E004}")
        .await
        .unwrap();
    let focused = c.active_element().await.unwrap().attr("id").await.unwrap();
    assert_eq!(focused.as_deref(), Some("a-since"));

    c.close().await.unwrap();
    drop(driver);
    env.stop().await;
}
