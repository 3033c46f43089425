//! The gRPC binding (`grpc = true`): the official a2a-sdk 1.x gRPC client runs the SDK check
//! table (`common::table`) against the reference agent on the same port as JSON-RPC and
//! HTTP+JSON; the card lists the GRPC interface only when the setting is on.

use crate::common;

use a2a_agent::AgentConfig;
use common::table::run_grpc;
use common::*;
use serde_json::Value;

fn grpc_config() -> AgentConfig {
    AgentConfig {
        allow_local_webhook_urls: true,
        push_retry_backoff: a2a_agent::config::Dur::from_millis(5),
        grpc: true,
        ..open_config()
    }
}

async fn card_interfaces(url: &str) -> Vec<Value> {
    let card: Value = client()
        .get(format!("{url}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    card["supportedInterfaces"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn sdk_grpc_client_against_the_reference_agent() {
    let s = start_with(
        common::reference::card("reference"),
        common::reference::handler(),
        grpc_config(),
    )
    .await;
    let ifaces = card_interfaces(s.url()).await;
    let grpc: Vec<&Value> = ifaces
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(grpc.len(), 1, "{ifaces:?}");
    assert_eq!(grpc[0]["protocolVersion"], "1.0");
    assert_eq!(grpc[0]["url"], s.local_addr().to_string(), "host:port");
    run_grpc(s.url(), &[]).await;
    s.shutdown().await;
}

#[tokio::test]
async fn the_card_lists_grpc_only_when_served() {
    let s = echo(open_config()).await;
    let ifaces = card_interfaces(s.url()).await;
    assert!(!ifaces.is_empty());
    assert!(
        ifaces.iter().all(|i| i["protocolBinding"] != "GRPC"),
        "{ifaces:?}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_card_listing_grpc_needs_the_setting() {
    let mut card = common::reference::card("declared").json().clone();
    card["supportedInterfaces"] = serde_json::json!([{"url": "127.0.0.1:1", "protocolBinding": "grpc", "protocolVersion": "1.0"}]);
    let card = a2a_agent::AgentCard::from_json(card).unwrap();
    assert_eq!(
        card.json()["supportedInterfaces"][0]["protocolBinding"],
        "GRPC"
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = a2a_agent::AgentServer::new(card.clone(), common::reference::handler())
        .config(open_config())
        .serve(l)
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("grpc"), "{err}");
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let s = a2a_agent::AgentServer::new(card, common::reference::handler())
        .config(grpc_config())
        .serve(l)
        .await
        .unwrap();
    s.shutdown().await;
}
