//! The console's overview (issue 35): its figures against `/metrics` after known traffic (5
//! allowed hops, 2 refused by policy, 1 held, 1 to a dead peer, a card fetch, 1 without a key),
//! fleet-wide over two replicas on PostgreSQL, and over 100,000 audit rows (timed). The hop
//! filters, a held hop's story and the browser test are in `console_hops_story.rs`, with the
//! helpers here.

use crate::common;

use std::collections::BTreeMap;

use a2a_gateway::errors::Version;
use common::approval::{held, result_task};
use common::console::*;
use common::gov::admin;
use common::scrape::Scrape;
use common::*;
use serde_json::{Value, json};

/// Allowed, refund (held) and forbidden (denied) sends.
pub(crate) fn policy() -> Value {
    json!({"rules": [
        {"id": "needs-a-person", "when": "skill == 'refund'", "decision": "approve"},
        {"id": "never", "when": "skill == 'forbidden'", "decision": "deny"}]})
}

pub(crate) fn with_skill(skill: &str) -> Value {
    let mut r = send10("x");
    r["params"]["metadata"] = json!({"skill": skill});
    r
}

/// The value of the overview's figure `name`.
pub(crate) fn figure(html: &str, name: &str) -> f64 {
    let at = html
        .find(&format!(r#"data-figure="{name}""#))
        .unwrap_or_else(|| panic!("no figure {name} in {html}"));
    let rest = &html[at..];
    let v = rest.find(r#"<span class="value">"#).unwrap() + r#"<span class="value">"#.len();
    let end = rest[v..].find('<').unwrap();
    rest[v..v + end].parse().unwrap()
}

/// The text of the first `<td class="{class}">` after `anchor`.
pub(crate) fn cell_after<'a>(html: &'a str, anchor: &str, class: &str) -> Option<&'a str> {
    let rest = &html[html.find(anchor)?..];
    let open = format!(r#"<td class="{class}">"#);
    let v = rest.find(&open)? + open.len();
    Some(&rest[v..v + rest[v..].find('<')?])
}

/// `histogram_quantile(q, sum by (le) (family_bucket))` of a scrape, written apart from the
/// console's.
pub(crate) fn quantile(s: &Scrape, family: &str, q: f64) -> Option<f64> {
    let b = buckets(s, family);
    let total = b.last()?.1;
    if total == 0.0 {
        return None;
    }
    let rank = q * total;
    let i = b.iter().position(|x| x.1 >= rank)?;
    if b[i].0.is_infinite() {
        return Some(b[i - 1].0);
    }
    let (lo, below) = if i == 0 { (0.0, 0.0) } else { b[i - 1] };
    if b[i].1 == below {
        return Some(b[i].0);
    }
    Some(lo + (b[i].0 - lo) * (rank - below) / (b[i].1 - below))
}

/// The bounds (seconds) of the bucket of `family` holding its `q` quantile: where the exact
/// quantile of the same samples lies.
fn bucket_of(s: &Scrape, family: &str, q: f64) -> (f64, f64) {
    let b = buckets(s, family);
    let rank = q * b.last().unwrap().1;
    let i = b.iter().position(|x| x.1 >= rank).unwrap();
    (if i == 0 { 0.0 } else { b[i - 1].0 }, b[i].0)
}

/// `(upper bound, cumulative count)` of `family`'s buckets, every series summed.
fn buckets(s: &Scrape, family: &str) -> Vec<(f64, f64)> {
    let mut by_le: BTreeMap<String, f64> = BTreeMap::new();
    for x in s.matching(&format!("{family}_bucket"), &[]) {
        *by_le.entry(x.labels["le"].clone()).or_default() += x.value;
    }
    let mut b: Vec<(f64, f64)> = by_le
        .into_iter()
        .map(|(le, n)| {
            (
                if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap()
                },
                n,
            )
        })
        .collect();
    b.sort_by(|x, y| x.0.total_cmp(&y.0));
    b
}

/// The `data-seq` of every hop row of a page.
pub(crate) fn seqs(html: &str) -> Vec<i64> {
    html.match_indices("<tr data-seq=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

/// Sends the known traffic to ws1: 5 allowed, 2 refused by policy, 1 held, 1 to a dead peer,
/// 1 card fetch and 1 request without a key. Returns the held send's answer.
pub(crate) async fn traffic(env: &Env) -> Value {
    let (s, b) = admin(env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{b}");
    for i in 0..5 {
        let (s, b) = env
            .rpc("/a2a/echo", Some("1.0"), send10(&format!("hi {i}")))
            .await;
        assert_eq!(s, 200, "{b}");
    }
    for _ in 0..2 {
        let (_, b) = env
            .rpc("/a2a/echo", Some("1.0"), with_skill("forbidden"))
            .await;
        assert_eq!(gw_code(&b), "a2a_policy_denied", "{b}");
    }
    let (_, h) = env
        .rpc("/a2a/echo", Some("1.0"), held(Some("1.0"), "refund me"))
        .await;
    assert!(
        result_task(&h)["id"]
            .as_str()
            .unwrap()
            .starts_with("gw-approval-"),
        "{h}"
    );
    env.register("ws1", "dead", "http://127.0.0.1:9", None);
    let (_, b) = env.rpc("/a2a/dead", Some("1.0"), send10("anyone?")).await;
    assert!(b.get("error").is_some(), "{b}");
    let card = env
        .http
        .get(env.url("/a2a/echo/.well-known/agent-card.json"))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    let (s, _) = env
        .rpc_key("/a2a/echo", Some("1.0"), send10("who?"), "a2agw_nope")
        .await;
    assert_eq!(s, 401);
    h
}

pub(crate) async fn metrics(env: &Env) -> Scrape {
    let text = env
        .http
        .get(env.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    Scrape::parse(&text)
}

/// The overview's figures are `/metrics`' for the same traffic.
pub(crate) fn assert_matches_metrics(page: &str, m: &Scrape, ws: Option<&str>) {
    let mut want: Vec<(&str, &str)> = Vec::new();
    if let Some(w) = ws {
        want.push(("workspace", w));
    }
    let audited: f64 = m
        .matching("a2a_requests_total", &want)
        .filter(|s| s.labels["workspace"] != "none")
        .map(|s| s.value)
        .sum();
    assert_eq!(figure(page, "hops"), audited, "hops");
    let mut refused = want.clone();
    refused.push(("decision", "refused"));
    assert_eq!(
        figure(page, "refused"),
        m.matching("a2a_requests_total", &refused)
            .filter(|s| s.labels["workspace"] != "none")
            .map(|s| s.value)
            .sum::<f64>(),
        "refused"
    );
    for code in m.values("a2a_requests_total", "code") {
        let mut c = refused.clone();
        c.push(("code", &code));
        let n: f64 = m
            .matching("a2a_requests_total", &c)
            .filter(|s| s.labels["workspace"] != "none")
            .map(|s| s.value)
            .sum();
        if n > 0.0 {
            let shown = cell_after(page, &format!(r#"data-code="{code}""#), "num");
            assert_eq!(shown, Some(n.to_string().as_str()), "code {code}");
        }
    }
    assert_eq!(
        figure(page, "approvals-waiting"),
        m.sum("a2a_approvals_pending", &want),
        "approvals waiting"
    );
    assert_eq!(figure(page, "open-streams"), m.sum("a2a_open_streams", &[]));
    assert_eq!(
        figure(page, "unauthenticated"),
        m.sum("a2a_unauthenticated_total", &[])
    );
    for (row, family) in [
        ("overhead", "a2a_gateway_overhead_seconds"),
        ("peer", "a2a_peer_duration_seconds"),
    ] {
        // This replica's histograms, as Prometheus reads them.
        let anchor = format!(r#"data-latency="{row}-replica""#);
        let count = cell_after(page, &anchor, "num count").unwrap();
        assert_eq!(count, m.sum(&format!("{family}_count"), &[]).to_string());
        for (q, class) in [(0.5, "num p50"), (0.99, "num p99")] {
            let want = quantile(m, family, q).unwrap() * 1000.0;
            let shown: f64 = cell_after(page, &anchor, class).unwrap().parse().unwrap();
            // Shown with one decimal under 10 ms, whole above.
            assert!((shown - want).abs() <= 0.5, "{row} p{q}: {shown} vs {want}");
        }
        // The audit's split of the same hops (one replica, one workspace with traffic): as
        // many, and each exact percentile in the bucket the histogram's estimate is in.
        let anchor = format!(r#"data-latency="{row}""#);
        let count = cell_after(page, &anchor, "num count").unwrap();
        assert_eq!(count, m.sum(&format!("{family}_count"), &[]).to_string());
        assert!(
            m.sum(&format!("{family}_count"), &[]) >= 5.0,
            "the allowed hops"
        );
        for (q, class) in [(0.5, "num p50"), (0.99, "num p99")] {
            let (lo, hi) = bucket_of(m, family, q);
            let shown: f64 = cell_after(page, &anchor, class).unwrap().parse().unwrap();
            assert!(
                lo * 1000.0 - 0.5 <= shown && shown <= hi * 1000.0 + 0.5,
                "{row} p{q} from the audit: {shown} ms, not in the bucket ({lo}, {hi}] s"
            );
        }
    }
}

#[tokio::test]
async fn overview_figures_match_the_metrics_endpoint() {
    let env = env(Version::V1).await;
    traffic(&env).await;
    let c = login(&env).await;
    let (status, page) = c.get("/console/overview?workspace=ws1").await;
    assert_eq!(status, 200);
    let m = metrics(&env).await;
    // The traffic as sent: 5 + 2 + 1 + 1 + the card fetch; 3 refused; 1 held, waiting.
    assert_eq!(figure(&page, "hops"), 10.0, "{page}");
    assert_eq!(figure(&page, "refused"), 3.0);
    assert_eq!(figure(&page, "held"), 1.0);
    assert_eq!(figure(&page, "approvals-waiting"), 1.0);
    assert_eq!(figure(&page, "unauthenticated"), 1.0);
    assert_eq!(
        cell_after(&page, r#"data-code="a2a_policy_denied""#, "num"),
        Some("2")
    );
    assert!(
        page.contains(r#"data-peer="dead""#),
        "a peer with errors: {page}"
    );
    assert_matches_metrics(&page, &m, Some("ws1"));
    // Fleet-wide: the same (ws2 had no traffic), and the live fragment has the same figures.
    let (_, fleet) = c.get("/console/overview").await;
    assert_matches_metrics(&fleet, &m, None);
    let (status, live) = c.get("/console/overview/live?workspace=ws1").await;
    assert_eq!(status, 200);
    assert_eq!(figure(&live, "hops"), 10.0);
    assert!(!live.contains("<html"), "a fragment");
    // An unknown workspace is said so; ws2's figures are zero.
    let (status, nope) = c.get("/console/overview?workspace=nope").await;
    assert_eq!(status, 404);
    assert!(
        nope.contains("workspace &quot;nope&quot; not found"),
        "{nope}"
    );
    let (_, two) = c.get("/console/overview?workspace=ws2").await;
    assert_eq!(figure(&two, "hops"), 0.0);
    // Strict CSP: no inline script or style on the page.
    assert!(!page.contains("style=") && !page.contains("<script>"));
    assert!(page.contains(r#"<script src="/console/assets/console.js" defer>"#));
    // A decision is not a hop: once the held hop is approved (and sent), the figures still
    // match, the approval no longer waits and the decision is counted apart.
    let id = common::approval::pending_id(&env).await;
    let (s, b) = common::approval::decide(&env, &id, "approve", None).await;
    assert_eq!(s, 200, "{b}");
    let (_, after) = c.get("/console/overview?workspace=ws1").await;
    let m = metrics(&env).await;
    assert_matches_metrics(&after, &m, Some("ws1"));
    assert_eq!(figure(&after, "hops"), 10.0);
    assert_eq!(figure(&after, "approvals-waiting"), 0.0);
    assert!(
        after.contains("Decided in the last 60 minutes: 1 approved."),
        "{after}"
    );
    env.stop().await;
}

/// Two replicas with their audit on one PostgreSQL: the overview of either counts the hops
/// of both (and says which figures are its own), as the sum of their `/metrics` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_is_fleet_wide_over_replicas_on_postgres() {
    use crate::gateway_replicas_gov::{replica, seed};
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    let (peer, key) = seed(&cluster, "overview").await;
    let a = replica(&cluster, "overview", &key).await;
    let b = replica(&cluster, "overview", &key).await;
    for (env, n) in [(&a, 3), (&b, 2)] {
        for i in 0..n {
            let (s, r) = env
                .rpc("/a2a/echo", Some("1.0"), send10(&format!("m{i}")))
                .await;
            assert_eq!(s, 200, "{r}");
        }
    }
    let (_, r) = b.rpc("/a2a/nope", Some("1.0"), send10("x")).await;
    assert_eq!(gw_code(&r), "a2a_agent_not_found", "{r}");
    let c = login(&a).await;
    let (status, page) = c.get("/console/overview?workspace=ws1").await;
    assert_eq!(status, 200, "{page}");
    let (ma, mb) = (metrics(&a).await, metrics(&b).await);
    let sent = |m: &Scrape, decision: &str| {
        m.sum(
            "a2a_requests_total",
            &[("workspace", "ws1"), ("decision", decision)],
        )
    };
    assert_eq!(
        figure(&page, "hops"),
        sent(&ma, "allowed") + sent(&mb, "allowed") + sent(&mb, "refused")
    );
    assert_eq!(figure(&page, "hops"), 6.0);
    assert_eq!(figure(&page, "refused"), sent(&mb, "refused"));
    assert_eq!(
        cell_after(&page, r#"data-code="a2a_agent_not_found""#, "num"),
        Some("1")
    );
    // Per-process figures are this replica's, and say so.
    assert!(page.contains("this replica since start"));
    let count = cell_after(&page, r#"data-latency="peer-replica""#, "num count").unwrap();
    assert_eq!(
        count,
        ma.sum("a2a_peer_duration_seconds_count", &[]).to_string()
    );
    // The overhead and peer time from the audit are both replicas' hops.
    for (row, family) in [
        ("overhead", "a2a_gateway_overhead_seconds_count"),
        ("peer", "a2a_peer_duration_seconds_count"),
    ] {
        let count = cell_after(&page, &format!(r#"data-latency="{row}""#), "num count");
        assert_eq!(
            count,
            Some(
                (ma.sum(family, &[]) + mb.sum(family, &[]))
                    .to_string()
                    .as_str()
            ),
            "{row}"
        );
        assert!(ma.sum(family, &[]) >= 3.0, "{row}: replica A's own hops");
    }
    a.stop().await;
    b.stop().await;
    peer.shutdown().await;
}

/// The open streams figure of a console's overview (`q`: its query string).
async fn open(c: &Console, q: &str) -> f64 {
    let (status, page) = c.get(&format!("/console/overview{q}")).await;
    assert_eq!(status, 200, "{page}");
    figure(&page, "open-streams")
}

/// Open streams over two replicas on PostgreSQL: a stream relayed by A is counted on B's
/// overview (its workspace's and the fleet's, as A published it), not in another workspace's,
/// and no more once it ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_streams_are_counted_over_replicas_on_postgres() {
    use crate::gateway_replicas::{quick, replica, seed};
    use crate::replica_streams::{STEPS, gated_peer};
    use crate::replicas_chaos::eventually;
    use a2a_gateway::store::Agent;
    use a2a_gateway::store::backend::{PgRegistry, RegistryStore};
    use futures::StreamExt;
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let (peer, peer_task) = gated_peer(gate.clone()).await;
    cluster.create_database("openstreams").unwrap();
    let url = cluster.url_of("openstreams");
    let seeding = PgRegistry::connect(&url, &quick()).await.unwrap();
    let key = seed(&seeding, "http://127.0.0.1:9").await;
    seeding.create_workspace("ws2", "Two").await.unwrap();
    let agent = Agent {
        workspace_id: "ws1".into(),
        agent_id: "steps".into(),
        endpoint: peer,
        credential: None,
        skills: None,
        pinned_card_key: None,
    };
    seeding.upsert_agent(&agent).await.unwrap();
    let (a, _) = replica(&url, &key, true).await;
    let (b, _) = replica(&url, &key, true).await;
    let (ca, cb) = (&login(&a).await, &login(&b).await);
    assert_eq!(open(cb, "").await, 0.0);

    // A stream on A, held open by the peer after its first event.
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]}}});
    let resp = a
        .http
        .post(a.url("/a2a/steps"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("A2A-Version", "1.0")
        .bearer_auth(&key)
        .body(send.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = resp.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("\n\n") {
        let chunk = body.next().await.expect("the first event").unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert_eq!(
        open(ca, "?workspace=ws1").await,
        1.0,
        "A counts its own now"
    );
    eventually("B counts A's stream", 10, || async {
        open(cb, "?workspace=ws1").await == 1.0 && open(cb, "").await == 1.0
    })
    .await;
    assert_eq!(
        open(cb, "?workspace=ws2").await,
        0.0,
        "not another workspace's"
    );
    let (_, page) = cb.get("/console/overview").await;
    assert!(page.contains("now, every replica"), "{page}");

    // The stream ends: counted nowhere.
    gate.add_permits(STEPS);
    while let Some(chunk) = body.next().await {
        chunk.unwrap();
    }
    eventually("the ended stream uncounted", 10, || async {
        open(cb, "").await == 0.0 && open(ca, "").await == 0.0
    })
    .await;
    a.stop().await;
    b.stop().await;
    peer_task.abort();
}

/// 100,000 hops written straight into the file, `recent` of them in the last hour (one a
/// 50 ms, newest now) and the rest two hours and more before, 1 in 25 refused.
fn seed_rows(path: &std::path::Path, recent: i64) {
    const ROWS: i64 = 100_000;
    let s = a2a_gateway::store::Store::open(path).unwrap();
    s.create_workspace("ws1", "One").unwrap();
    drop(s);
    let mut c = rusqlite::Connection::open(path).unwrap();
    let tx = c.transaction().unwrap();
    {
        let mut st = tx
            .prepare(
                "INSERT INTO audit(ts, trace_id, workspace_id, key_id, target, operation,
                   client_version, client_binding, peer_version, peer_binding, decision, status,
                   latency_ms, error_code)
                 VALUES (?1, ?2, 'ws1', 'k', 'echo', 'message/send', '1.0', 'JSONRPC', '1.0',
                   'JSONRPC', ?3, ?4, ?5, ?6)",
            )
            .unwrap();
        let now = time::OffsetDateTime::now_utc();
        for i in 0..ROWS {
            // Row i is `ROWS - 1 - i` steps before now: the newest last, times growing with seq.
            let back = ROWS - 1 - i;
            let ago = if back < recent {
                time::Duration::milliseconds(back * 50)
            } else {
                time::Duration::hours(2) + time::Duration::milliseconds(back * 10)
            };
            let ts = (now - ago)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap();
            let (decision, status, code) = if i % 25 == 3 {
                ("refused", 403, Some("a2a_policy_denied"))
            } else {
                ("allowed", 200, None)
            };
            st.execute(rusqlite::params![
                ts,
                format!("{i:032x}"),
                decision,
                status,
                i % 97,
                code
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

/// The overview over 100,000 audit rows: the figures of the window only, and how long a page
/// takes (median of 5, printed; docs/console.md "Speed"), with none, 10,000 and 40,000 of them
/// (past the 20,000 it reads) in the last hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_over_100k_audit_rows() {
    let mut report = String::new();
    for recent in [0, 10_000, 40_000] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        seed_rows(&path, recent);
        let store = a2a_gateway::store::Store::open(&path).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let config = a2a_gateway::config::Config {
            dev_mode: true,
            admin_token: Some(ADMIN.into()),
            listen: listener.local_addr().unwrap(),
            ..a2a_gateway::config::Config::default()
        };
        let gw = a2a_gateway::server::Gateway::new(config, store.clone())
            .unwrap()
            .serve(listener)
            .await
            .unwrap();
        let env = Env {
            gw,
            store,
            key: String::new(),
            http: reqwest::Client::new(),
            _dir: dir,
            peers: vec![],
        };
        let c = login(&env).await;
        let mut times = Vec::new();
        let mut page = String::new();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let (status, p) = c.get("/console/overview?workspace=ws1").await;
            times.push(t.elapsed());
            assert_eq!(status, 200);
            page = p;
        }
        times.sort();
        // Rows at the window's edge may have aged out between the seeding and the page.
        let hops = figure(&page, "hops") as i64;
        if recent > 20_000 {
            assert_eq!(hops, 20_000, "capped");
            assert!(page.contains("Busy hour"));
        } else {
            assert!(hops <= recent && hops >= recent - 100, "{hops} of {recent}");
            assert!(!page.contains("Busy hour"));
        }
        report.push_str(&format!(
            "{recent:>6} hops in the last hour: page {:>10.2?} ({hops} counted)\n",
            times[2]
        ));
        env.stop().await;
    }
    eprintln!("the overview over 100000 audit rows (median of 5):\n{report}");
}
