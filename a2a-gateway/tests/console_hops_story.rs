//! The console's hop list and a held hop's story (issue 35): the hop filters (card fetches
//! hidden, decision, code, operation, version, binding, trace id, task) and the story (held,
//! decided by whom and when, the peer task, each linked) over plain HTTP; then the overview and
//! the hops in headless Chromium, with screenshots (`target/console-screenshots/13-15`).

use crate::common;
use crate::console_browser::{
    WAIT, browser, click, fill, shot, sideways_overflow, start_driver, wait_text,
};
use crate::console_overview::{assert_matches_metrics, metrics, seqs, traffic};

use std::time::Duration;

use a2a_gateway::errors::Version;
use common::approval::result_task;
use common::console::*;
use common::gov::admin;
use common::*;
use fantoccini::Locator;
use serde_json::json;

#[tokio::test]
async fn hop_filters_and_a_held_hops_story() {
    let env = env(Version::V1).await;
    let h = traffic(&env).await;
    let id = result_task(&h)["id"]
        .as_str()
        .unwrap()
        .trim_start_matches("gw-approval-")
        .to_owned();
    let c = login(&env).await;
    // Card fetches are hidden unless asked for.
    let (_, all) = c.get("/console/hops").await;
    assert!(!all.contains(r#"data-kind="card""#) && all.contains("show them"));
    let (_, cards) = c.get("/console/hops?cards=1").await;
    assert_eq!(cards.matches(r#"data-kind="card""#).count(), 1);
    let (_, by_op) = c.get("/console/hops?operation=agent/card").await;
    assert_eq!(seqs(&by_op).len(), 1);
    // By code, decision, version, binding, trace id text.
    let (_, denied) = c.get("/console/hops?code=a2a_policy_denied").await;
    assert_eq!(seqs(&denied).len(), 2);
    let (_, held_rows) = c.get("/console/hops?decision=held").await;
    let held_seq = seqs(&held_rows);
    assert_eq!(held_seq.len(), 1, "{held_rows}");
    assert!(held_rows.contains("held (pending)"));
    let (_, v03) = c.get("/console/hops?version=0.3").await;
    assert!(seqs(&v03).is_empty(), "every call was 1.0");
    let (_, grpc) = c.get("/console/hops?binding=GRPC").await;
    assert!(seqs(&grpc).is_empty());
    let (_, json) = c.get("/console/hops?binding=JSONRPC").await;
    assert_eq!(seqs(&json).len(), 9, "every hop but the card fetch");
    let trace_of = |html: &str| {
        let at = html.find(r#"<code class="trace">"#).unwrap() + r#"<code class="trace">"#.len();
        html[at..at + 32].to_owned()
    };
    let trace = trace_of(&held_rows);
    let (_, by_trace) = c
        .get(&format!(
            "/console/hops?trace={}",
            &trace[8..20].to_uppercase()
        ))
        .await;
    assert_eq!(seqs(&by_trace), held_seq);
    let (status, bad) = c.get("/console/hops?decision=maybe").await;
    assert_eq!(status, 400);
    assert!(bad.contains("is not a decision"));
    // Live rows keep the filter; the header says where the next poll starts.
    let r = c
        .http
        .get(format!(
            "{}/console/hops/live?decision=held&after=0",
            c.base
        ))
        .header(reqwest::header::COOKIE, &c.cookie)
        .send()
        .await
        .unwrap();
    let after: i64 = r.headers()["x-after"].to_str().unwrap().parse().unwrap();
    assert!(after > held_seq[0]);
    assert_eq!(seqs(&r.text().await.unwrap()), held_seq);
    // The story while pending: held, waiting, not sent yet.
    let (_, page) = c.get(&format!("/console/hops/{}", held_seq[0])).await;
    assert!(page.contains("Waiting</strong> for a decision"), "{page}");
    // Approved by ana: the peer task it became, and the three linked.
    let (s, b) = admin(
        &env,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
        Some(json!({"approver": "ana"})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let peer_task = b["peerTaskId"].as_str().unwrap().to_owned();
    let (_, decisions) = c.get("/console/hops?decision=approval").await;
    let decision_seq = seqs(&decisions);
    assert_eq!(decision_seq.len(), 1, "{decisions}");
    assert!(decisions.contains("approved by ana"));
    let (_, allowed) = c.get("/console/hops?decision=allowed").await;
    assert!(
        !seqs(&allowed).contains(&decision_seq[0]),
        "a decision is not a hop"
    );
    let task_link = format!("/console/hops?workspace=ws1&amp;agent=echo&amp;task={peer_task}");
    for (seq, other) in [
        (held_seq[0], decision_seq[0]),
        (decision_seq[0], held_seq[0]),
    ] {
        let (_, page) = c.get(&format!("/console/hops/{seq}")).await;
        assert!(page.contains("Held for approval: what happened"), "{page}");
        assert!(
            page.contains(&format!(r#"href="/console/hops/{other}""#)),
            "{page}"
        );
        assert!(page.contains(&format!(
            r#"href="/console/hops/{seq}" aria-current="step""#
        )));
        assert!(page.contains(r#"Approved</strong> by <span class="who">ana</span>"#));
        assert!(page.contains(&task_link), "{page}");
        assert!(page.contains(&format!("/console/workspaces/ws1/approvals/{id}")));
    }
    let (_, task_hops) = c
        .get(&format!(
            "/console/hops?workspace=ws1&agent=echo&task={peer_task}"
        ))
        .await;
    assert!(seqs(&task_hops).contains(&decision_seq[0]), "{task_hops}");
    let (_, held_rows) = c.get("/console/hops?decision=held").await;
    assert!(held_rows.contains("held (approved)"));
    // The approval's page links its held hop (the list filtered to its gateway task).
    let (_, approval) = c
        .get(&format!("/console/workspaces/ws1/approvals/{id}"))
        .await;
    let to_hop = format!("/console/hops?workspace=ws1&amp;agent=echo&amp;task=gw-approval-{id}");
    assert!(approval.contains(&to_hop), "{approval}");
    let (_, by_task) = c.get(&to_hop.replace("&amp;", "&")).await;
    assert_eq!(seqs(&by_task), held_seq);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overview_and_hops_in_a_real_browser() {
    let Some(driver) = start_driver().await else {
        return;
    };
    let env = env(Version::V1).await;
    let base = env.gw.base_url();
    traffic(&env).await;
    let profile = tempfile::tempdir().unwrap();
    let c = browser(&driver, profile.path()).await;
    c.goto(&format!("{base}/console")).await.unwrap();
    fill(&c, "#token", ADMIN).await;
    click(&c, "form.card button[type=submit]").await;
    wait_text(&c, "Hops per minute").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/console/overview");
    // One workspace, chosen with its labelled selector.
    c.find(Locator::Css("#o-ws"))
        .await
        .unwrap()
        .select_by_value("ws1")
        .await
        .unwrap();
    click(&c, "form.filters button[type=submit]").await;
    wait_text(&c, "The last 60 minutes of workspace ws1").await;
    let page = c.source().await.unwrap();
    assert_matches_metrics(&page, &metrics(&env).await, Some("ws1"));
    assert!(
        !c.find_all(Locator::Css(".chart svg rect"))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !c.find_all(Locator::Css(".chart svg .legend text"))
            .await
            .unwrap()
            .is_empty(),
        "a legend"
    );
    // Usable at 1,280 px: nothing scrolls sideways.
    let overflow = sideways_overflow(&c).await;
    assert!(overflow <= 1, "sideways scroll: {overflow}");
    // The whole page in the screenshot.
    c.set_window_size(1280, 1500).await.unwrap();
    shot(&c, "13-overview").await;
    c.set_window_size(1280, 1000).await.unwrap();
    // Live: one more hop shows in the figures without a reload.
    let (s, _) = env.rpc("/a2a/echo", Some("1.0"), send10("one more")).await;
    assert_eq!(s, 200);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let v = c
            .find(Locator::Css(r#"[data-figure="hops"] .value"#))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if v == "11" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "not refreshed: {v}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // Hops: filter with the form (held), a bookmarkable URL.
    c.goto(&format!("{base}/console/hops")).await.unwrap();
    wait_text(&c, "Card fetches are hidden").await;
    // At 1,280 px the hop table fits: its box does not scroll sideways either.
    let overflow = c
        .execute(
            "var b = document.getElementById('hops').parentElement; return b.scrollWidth - b.clientWidth;",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        overflow.as_i64().unwrap_or(99) <= 1,
        "the hop table scrolls: {overflow}"
    );
    assert!(
        c.find_all(Locator::Css(r#"tr[data-kind="card"]"#))
            .await
            .unwrap()
            .is_empty()
    );
    c.find(Locator::Css("#f-decision"))
        .await
        .unwrap()
        .select_by_value("held")
        .await
        .unwrap();
    click(&c, "form.filters button[type=submit]").await;
    wait_text(&c, "held (pending)").await;
    assert!(
        c.current_url()
            .await
            .unwrap()
            .query()
            .unwrap_or("")
            .contains("decision=held")
    );
    let rows = c
        .find_all(Locator::Css("#hops tbody tr[data-seq]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    shot(&c, "14-hops-filtered").await;
    // Show card fetches with the checkbox (keyboard: Space on the focused box).
    c.goto(&format!("{base}/console/hops")).await.unwrap();
    c.find(Locator::Css("#f-cards"))
        .await
        .unwrap()
        .send_keys(" ")
        .await
        .unwrap();
    click(&c, "form.filters button[type=submit]").await;
    wait_text(&c, "agent/card").await;

    // The held hop's story: approve it from its approval page, then follow the three links.
    c.goto(&format!("{base}/console/hops?decision=held"))
        .await
        .unwrap();
    click(&c, "#hops tbody tr[data-seq] th a").await;
    wait_text(&c, "Waiting for a decision").await;
    click(&c, r#"li[data-step="held"] a[href*="/approvals/"]"#).await;
    wait_text(&c, "as it will be sent").await;
    // Decided as the logged-in operator (the admin token's login here).
    wait_text(&c, "Decided as admin-token").await;
    let approver = "admin-token";
    click(&c, "#approval form.decide button:not(.danger)").await;
    wait_text(&c, "Approved: the held hop was sent.").await;
    c.goto(&format!("{base}/console/hops?decision=held"))
        .await
        .unwrap();
    wait_text(&c, "held (approved)").await;
    click(&c, "#hops tbody tr[data-seq] th a").await;
    wait_text(&c, &format!("Approved by {approver}")).await;
    shot(&c, "15-held-story").await;
    click(&c, r#"li[data-step="decision"] a"#).await;
    wait_text(&c, "approved by").await;
    assert!(
        c.find_all(Locator::Css(
            r#"li[data-step="decision"] a[aria-current="step"]"#
        ))
        .await
        .unwrap()
        .len()
            == 1,
        "the decision's own page"
    );
    click(&c, r#"li[data-step="held"] a[href^="/console/hops/"]"#).await;
    wait_text(&c, "Held for approval: what happened").await;
    click(&c, r#"li[data-step="task"] a"#).await;
    wait_text(&c, "Hops, newest first").await;
    assert!(
        c.current_url()
            .await
            .unwrap()
            .query()
            .unwrap_or("")
            .contains("task=")
    );
    let rows = c
        .find_all(Locator::Css(r#"#hops tr[data-kind="approval"]"#))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "the release, on the peer task");

    c.close().await.unwrap();
    env.stop().await;
    drop(driver);
}
