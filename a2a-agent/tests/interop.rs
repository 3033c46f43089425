//! The official Python SDK clients (a2a-sdk 1.x in 1.0 and 0.3 mode, a2a-sdk 0.3.x) against our
//! agent over JSON-RPC and HTTP+JSON (drivers: `interop/clients/*`, run by `common::sdk`).
//!
//! One table of checks (`common::table`) runs against two agents with the same behaviour: the reference
//! agent built on the library (`common::reference`) and `a2a-agent serve --exec
//! examples/exec_agent.sh --exec-events jsonl`. Each table run is one driver process per client
//! (six, run concurrently) against one agent process, and one webhook receiver.

use crate::common;

use a2a_agent::{AgentCard, AgentConfig};
#[cfg(feature = "cli")]
use common::sdk::root;
use common::sdk::{op, run, st};
use common::table::run_all;
use common::*;
use serde_json::json;

fn reference_config() -> AgentConfig {
    AgentConfig {
        allow_local_webhook_urls: true,
        push_retry_backoff: a2a_agent::config::Dur::from_millis(5),
        ..open_config()
    }
}

#[tokio::test]
async fn sdk_clients_against_the_reference_agent() {
    let s = start_with(
        common::reference::card("reference"),
        common::reference::handler(),
        reference_config(),
    )
    .await;
    run_all(s.url(), &[]).await;
    s.shutdown().await;
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn sdk_clients_against_the_exec_example_script() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("card.json");
    std::fs::write(
        &card,
        common::reference::card("exec-example").json().to_string(),
    )
    .unwrap();
    let script = root().join("a2a-agent/examples/exec_agent.sh");
    let a = tokio::task::spawn_blocking(move || {
        bin(
            &[
                "--exec",
                &format!("sh {}", script.display()),
                "--exec-events",
                "jsonl",
                "--card",
                &card.display().to_string(),
                "--no-validate-auth",
                "--allow-local-webhook-urls",
                "--push-retry-backoff-ms",
                "5",
            ],
            &[],
        )
    })
    .await
    .unwrap();
    run_all(&a.url, &[]).await;
}

#[tokio::test]
async fn sdk_clients_see_limits_and_extensions() {
    let card = AgentCard::builder("ext", "d", "1")
        .streaming(true)
        .extension("urn:a2a:test", false)
        .build();
    let cfg = AgentConfig {
        max_payload_size: 2048,
        max_concurrent_tasks: 1,
        ..open_config()
    };
    let s = start_with(card, a2a_agent::demo::echo_handler(), cfg).await;
    let big = "y".repeat(4096);
    for binding in ["jsonrpc", "rest"] {
        let l = run(
            "sdk1",
            s.url(),
            binding,
            Some("1.0"),
            json!([
                {"op": "send", "text": big},
                {"op": "send", "text": "slow", "blocking": false},
                {"op": "send", "text": "while busy"},
                {"op": "cancel", "taskId": "$1.task_id"},
                {"op": "headers", "headers": {"A2A-Extensions": "urn:a2a:test"}},
                {"op": "send", "text": "with ext"},
                {"op": "headers", "headers": {"A2A-Extensions": "urn:unknown"}},
                {"op": "send", "text": "bad ext"},
            ]),
        )
        .await;
        assert_eq!(op(&l, 0)["ok"], false, "{binding}: payload too large");
        assert_eq!(
            op(&l, 0)["error"]["httpStatus"],
            413,
            "{binding}: {}",
            op(&l, 0)
        );
        assert_eq!(op(&l, 1)["ok"], true, "{binding}");
        assert_eq!(op(&l, 2)["ok"], false, "{binding}: busy");
        let busy = &op(&l, 2)["error"];
        assert!(
            busy["code"] == -32000
                || busy["httpStatus"] == 429
                || busy["message"].as_str().unwrap_or("").contains("-32000"),
            "{binding}: {busy}"
        );
        assert_eq!(op(&l, 3)["ok"], true, "{binding}");
        assert_eq!(
            st(&op(&l, 5)["result"]),
            "TASK_STATE_COMPLETED",
            "{binding}: {}",
            op(&l, 5)
        );
        assert_eq!(op(&l, 7)["ok"], false, "{binding}: unknown extension");
    }
    s.shutdown().await;
}
