//! The `a2a-agent` binary's `/metrics` after real traffic: requests with the gateway's
//! histogram buckets, task states, the queue gauges, push deliveries and failures.

use crate::common;

use common::scrape::Scrape;
use common::{bin, msg, rpc};
use serde_json::json;

/// A webhook on loopback: `/ok` answers 200, `/bad` 500.
async fn hooks() -> String {
    let app = axum::Router::new()
        .route(
            "/ok",
            axum::routing::post(|| async { http::StatusCode::OK }),
        )
        .route(
            "/bad",
            axum::routing::post(|| async { http::StatusCode::INTERNAL_SERVER_ERROR }),
        );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    base
}

async fn scrape(url: &str) -> Scrape {
    let text = reqwest::get(format!("{url}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    Scrape::parse(&text)
}

#[tokio::test]
async fn binary_metrics_after_sends_and_pushes() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("card.json");
    std::fs::write(
        &card,
        json!({
            "name": "echo", "description": "echo with push", "version": "1.0.0",
            "capabilities": {"streaming": true, "pushNotifications": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []
        })
        .to_string(),
    )
    .unwrap();
    let hooks = hooks().await;
    let agent = bin(
        &[
            "--echo",
            "--card",
            card.to_str().unwrap(),
            "--metrics",
            "--no-validate-auth",
            "--allow-local-webhook-urls",
            "--push-retry-attempts",
            "0",
        ],
        &[],
    );
    let url = agent.url.clone();
    for hook in ["ok", "bad"] {
        let cfg = json!({"url": format!("{hooks}/{hook}"), "token": "t"});
        let (s, r) = rpc(
            &url,
            "SendMessage",
            json!({"message": msg("hi"), "configuration": {"taskPushNotificationConfig": cfg}}),
        )
        .await;
        assert_eq!(s, 200, "{r}");
    }
    let (s, _) = rpc(&url, "SendMessage", json!({"message": msg("plain")})).await;
    assert_eq!(s, 200);

    // Deliveries end in the background: wait until both outcomes are counted.
    let deliveries =
        |m: &Scrape, result: &str| m.sum("a2a_agent_push_deliveries_total", &[("result", result)]);
    let mut m = scrape(&url).await;
    for _ in 0..200 {
        if deliveries(&m, "delivered") >= 1.0
            && deliveries(&m, "failed") >= 1.0
            && m.sum("a2a_agent_push_queue_depth", &[]) == 0.0
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        m = scrape(&url).await;
    }
    assert!(deliveries(&m, "delivered") >= 1.0, "{m:?}");
    assert!(deliveries(&m, "failed") >= 1.0, "{m:?}");
    // One failed attempt per failed delivery (no retries).
    assert_eq!(
        m.sum("a2a_agent_push_failures_total", &[]),
        deliveries(&m, "failed"),
        "{m:?}"
    );
    assert_eq!(m.sum("a2a_agent_push_queue_depth", &[]), 0.0);
    assert_eq!(m.sum("a2a_agent_task_queue_depth", &[]), 0.0);
    assert_eq!(
        m.families.get("a2a_agent_tasks_live").map(String::as_str),
        Some("gauge")
    );

    // Requests: the three sends (and the scrapes before this one) answered 200.
    assert!(
        m.sum("a2a_agent_requests_total", &[("status", "200")]) >= 3.0,
        "{m:?}"
    );
    assert_eq!(
        m.families
            .get("a2a_agent_request_duration_seconds")
            .map(String::as_str),
        Some("histogram")
    );
    let mut les: Vec<f64> = m
        .matching("a2a_agent_request_duration_seconds_bucket", &[])
        .map(|s| s.labels["le"].parse::<f64>().unwrap())
        .collect();
    les.sort_by(f64::total_cmp);
    let mut want = a2a_agent::metrics::BUCKETS.to_vec();
    want.push(f64::INFINITY);
    assert_eq!(les, want, "the gateway's buckets");
    // Task states: every send's turn ended completed.
    let completed = m
        .matching("a2a_agent_task_turns_total", &[])
        .filter(|s| s.labels["state"].to_ascii_lowercase().contains("completed"))
        .map(|s| s.value)
        .sum::<f64>();
    assert_eq!(completed, 3.0, "{m:?}");
}
