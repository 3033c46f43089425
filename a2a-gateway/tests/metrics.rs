//! `/metrics` after real traffic: the gateway binary in front of real a2a-agent servers (hops
//! by workspace, agent, operation, caller version, decision and code; the latency split; a
//! refusal; the `other` folding past `metrics_label_cap`), governance and approvals on a
//! governed workspace, and the Grafana dashboard's queries held against a real scrape.

use crate::common;

use a2a_gateway::errors::Version;
use a2a_gateway::metrics::names;
use a2a_gateway::store::{Agent, Store};
use common::scrape::{Scrape, family_of, promql_metrics};
use common::*;
use serde_json::Value;

async fn scrape(http: &reqwest::Client, base: &str) -> Scrape {
    let resp = http.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/plain"), "{ct}");
    Scrape::parse(&resp.text().await.unwrap())
}

/// A 1.0 JSON-RPC send to `agent` through the gateway at `base`.
async fn send(http: &reqwest::Client, base: &str, agent: &str, key: Option<&str>) -> (u16, Value) {
    let mut req = http
        .post(format!("{base}/a2a/{agent}"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(send10("hello").to_string());
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn binary_counts_hops_refusals_and_folds_past_the_label_cap() {
    let p = ok_peer().await;
    let q = ok_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.db");
    let key = seed_file(&db, "p", p.url());
    let key2 = {
        let store = Store::open(&db).unwrap();
        store.create_workspace("ws2", "Two").unwrap();
        store
            .upsert_agent(&Agent {
                workspace_id: "ws2".into(),
                agent_id: "q".into(),
                endpoint: q.url().into(),
                credential: None,
                skills: None,
                pinned_card_key: None,
            })
            .unwrap();
        store.create_key("ws2", &[], None, None).unwrap().1
    };
    let (mut child, base) = spawn_serve(&db, &["--metrics-label-cap", "1"]);
    let http = reqwest::Client::new();

    // First a path naming no agent: it must not take the one agent label of the cap.
    let (_, b) = send(&http, &base, "nope", Some(&key)).await;
    assert_eq!(gw_code(&b), "a2a_agent_not_found", "{b}");
    for _ in 0..2 {
        let (s, b) = send(&http, &base, "p", Some(&key)).await;
        assert_eq!(s, 200, "{b}");
        assert!(b.to_string().contains("\"ok\""), "{b}");
    }
    let (s, b) = send(&http, &base, "q", Some(&key2)).await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = send(&http, &base, "p", None).await;
    assert_eq!(s, 401);

    let m = scrape(&http, &base).await;
    for (name, kind, _) in names::ALL {
        if *name == names::DECISIONS {
            continue; // no governance in these workspaces
        }
        assert_eq!(
            m.families.get(*name).map(String::as_str),
            Some(*kind),
            "{name}: {m:?}"
        );
    }
    let ok = |ws: &str, agent: &str| {
        m.sum(
            names::REQUESTS,
            &[
                ("workspace", ws),
                ("agent", agent),
                ("operation", "message/send"),
                ("caller_version", "1.0"),
                ("decision", "allowed"),
                ("code", "ok"),
            ],
        )
    };
    assert_eq!(ok("ws", "p"), 2.0, "{m:?}");
    // ws2 and its agent came after the cap of 1: both are `other`.
    assert_eq!(ok("other", "other"), 1.0, "{m:?}");
    // A path naming no agent takes no agent label (`none`), so it cannot use up the cap.
    let refused = [
        ("workspace", "ws"),
        ("agent", "none"),
        ("decision", "refused"),
        ("code", "a2a_agent_not_found"),
    ];
    assert_eq!(m.sum(names::REQUESTS, &refused), 1.0, "{m:?}");
    assert_eq!(
        m.values(names::REQUESTS, "workspace"),
        ["none", "other", "ws"].map(String::from).into(),
        "{m:?}"
    );
    assert_eq!(
        m.values(names::REQUESTS, "agent"),
        ["none", "other", "p"].map(String::from).into(),
        "{m:?}"
    );
    assert_eq!(m.sum(names::UNAUTHENTICATED, &[("reason", "missing")]), 1.0);
    assert_eq!(
        m.sum(
            names::REQUESTS,
            &[("workspace", "none"), ("decision", "refused")]
        ),
        1.0
    );

    // The latency split: the three hops that reached a peer have a peer time and an overhead
    // that add up to their latency.
    let send_op = [("operation", "message/send")];
    let count = |n: &str| m.sum(&format!("{n}_count"), &send_op);
    let sum = |n: &str| m.sum(&format!("{n}_sum"), &send_op);
    assert_eq!(count(names::PEER_DURATION), 3.0, "{m:?}");
    assert_eq!(count(names::OVERHEAD), 3.0, "{m:?}");
    assert_eq!(count(names::REQUEST_DURATION), 4.0, "{m:?}");
    assert!(sum(names::PEER_DURATION) > 0.0 && sum(names::OVERHEAD) > 0.0);
    assert!(
        sum(names::PEER_DURATION) + sum(names::OVERHEAD) <= sum(names::REQUEST_DURATION) + 1e-6
    );
    // The agent's buckets.
    let mut les: Vec<f64> = m
        .matching(&format!("{}_bucket", names::REQUEST_DURATION), &send_op)
        .map(|s| s.labels["le"].parse::<f64>().unwrap())
        .collect();
    les.sort_by(f64::total_cmp);
    let mut want = a2a_agent::metrics::BUCKETS.to_vec();
    want.push(f64::INFINITY);
    assert_eq!(les, want);

    // Cards: p fetched then fresh from the cache, q fetched.
    assert_eq!(
        m.sum(names::CARD_FETCHES, &[("result", "fetched")]),
        2.0,
        "{m:?}"
    );
    assert_eq!(
        m.sum(names::CARD_FETCHES, &[("result", "fresh")]),
        1.0,
        "{m:?}"
    );
    assert!(
        m.sum(
            &format!("{}_count", names::STORE_DURATION),
            &[("op", "query")]
        ) > 0.0
    );
    assert_eq!(
        m.matching(names::STORE_ERRORS, &[("op", "query")]).count(),
        1
    );
    assert_eq!(m.sum(names::STORE_ERRORS, &[]), 0.0);
    assert_eq!(m.sum(names::APPROVALS_PENDING, &[]), 0.0);
    assert_eq!(
        m.matching(names::APPROVALS_PENDING, &[("workspace", "ws")])
            .count(),
        1
    );
    assert_eq!(m.sum(names::OPEN_STREAMS, &[]), 0.0);

    let _ = child.kill();
    let _ = child.wait();
    p.shutdown().await;
    q.shutdown().await;
}

/// Every metric a query of `deploy/grafana/a2a-gateway.json` reads.
fn dashboard_metrics() -> std::collections::BTreeSet<String> {
    let text = include_str!("../../deploy/grafana/a2a-gateway.json");
    let dash: Value = serde_json::from_str(text).unwrap();
    let mut exprs = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    match (k.as_str(), v) {
                        ("expr" | "query" | "definition", Value::String(s)) => out.push(s.clone()),
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    walk(&dash, &mut exprs);
    assert!(exprs.len() >= 12, "{exprs:?}");
    exprs.iter().flat_map(|e| promql_metrics(e)).collect()
}

#[tokio::test]
async fn governance_approvals_and_every_dashboard_query_on_a_real_scrape() {
    let env = env(Version::V1).await;
    common::approval::governed(&env).await;
    // A held send, and one that passes with its e-mail address redacted.
    let (s, b) = env
        .rpc(
            "/a2a/echo",
            Some("1.0"),
            common::approval::held(Some("1.0"), "refund"),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = env
        .rpc("/a2a/echo", Some("1.0"), send10("write to ann@example.com"))
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, _) = send(&env.http, &env.url(""), "echo", None).await;
    assert_eq!(s, 401);

    let m = scrape(&env.http, &env.url("")).await;
    assert_eq!(
        m.sum(names::APPROVALS_PENDING, &[("workspace", "ws1")]),
        1.0,
        "{m:?}"
    );
    assert_eq!(
        m.sum(
            names::DECISIONS,
            &[("step", "policy"), ("decision", "approve")]
        ),
        1.0,
        "{m:?}"
    );
    assert_eq!(
        m.sum(names::DECISIONS, &[("step", "pii"), ("decision", "redact")]),
        1.0,
        "{m:?}"
    );

    let used = dashboard_metrics();
    assert!(used.len() >= 10, "{used:?}");
    let mut shown = std::collections::BTreeSet::new();
    for name in &used {
        let family = family_of(&m, name).unwrap_or_else(|| {
            panic!("the dashboard reads {name}, which /metrics does not expose")
        });
        shown.insert(family.to_owned());
    }
    // Every gateway family has a panel.
    for (name, _, _) in names::ALL {
        assert!(shown.contains(*name), "no dashboard panel reads {name}");
    }
    open_streams_are_counted(&env).await;
    env.stop().await;
}

/// A stream through the gateway counts in `a2a_open_streams` while it is open, not after.
async fn open_streams_are_counted(env: &Env) {
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let slow = common::gov::agent(move |ctx| {
        let g = g.clone();
        Box::pin(async move {
            ctx.emit("working").await;
            let _ = g.acquire().await;
            Ok(a2a_agent::handler::Reply::text("done"))
        })
    })
    .await;
    env.register("ws1", "slow", slow.url(), None);
    let mut body = send10("stream me");
    body["method"] = "SendStreamingMessage".into();
    let mut resp = env
        .http
        .post(env.url("/a2a/slow"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .bearer_auth(&env.key)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.chunk().await.unwrap().is_some(),
        "the stream's first event"
    );
    let open = |m: &Scrape| m.sum(names::OPEN_STREAMS, &[]);
    assert_eq!(open(&scrape(&env.http, &env.url("")).await), 1.0);
    gate.add_permits(1);
    while resp.chunk().await.unwrap().is_some() {}
    let mut m = scrape(&env.http, &env.url("")).await;
    for _ in 0..100 {
        if open(&m) == 0.0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        m = scrape(&env.http, &env.url("")).await;
    }
    assert_eq!(open(&m), 0.0, "{m:?}");
    assert_eq!(
        m.sum(
            &format!("{}_count", names::PEER_DURATION),
            &[("operation", "message/stream")]
        ),
        1.0,
        "{m:?}"
    );
    slow.shutdown().await;
}
