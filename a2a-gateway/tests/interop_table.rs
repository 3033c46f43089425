//! The agent's table of official SDK checks (`a2a-agent/tests/common/table.rs`: six clients,
//! a2a-sdk 1.3.0 in 1.0 and 0.3 mode and a2a-sdk 0.3.26, each over JSON-RPC and HTTP+JSON; here
//! also a2a-sdk 1.0.3, the release the DVARA API names, in 1.0 mode over both), run unchanged
//! through the gateway to the reference agent: every row must hold as it does when the clients
//! call the agent directly, so any difference is the gateway's. Push configs go through the
//! gateway's sealed callback (no direct delivery), so "delivery" rows cross the gateway twice.
//! With `serve_grpc`, the same table over the gRPC transport of a2a-sdk 1.3.0 and 1.0.3 (the
//! card's GRPC interface, the agent named by its tenant).

use crate::common;

#[allow(dead_code)]
#[path = "../../a2a-agent/tests/common/reference.rs"]
pub(crate) mod reference;
// `reference`, `sdk` and `table` are also used by `interop_peers.rs` and `pairings.rs` (a file is
// included once per binary)
#[allow(dead_code)]
#[path = "../../a2a-agent/tests/common/sdk.rs"]
pub(crate) mod sdk;
// (the agent's own tests use the six-client forms, `run_all` and `run_grpc`)
#[allow(dead_code)]
#[path = "../../a2a-agent/tests/common/table.rs"]
pub(crate) mod table;

use a2a_agent::{AgentConfig, AgentServer};
use a2a_gateway::errors::Version;
use common::*;
use serde_json::json;
use table::Releases;

async fn reference_agent() -> a2a_agent::server::ServerHandle {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cfg = AgentConfig {
        validate_auth: false,
        allow_local_webhook_urls: true,
        push_retry_backoff: a2a_agent::config::Dur::from_millis(5),
        ..AgentConfig::default()
    };
    AgentServer::new(reference::card("reference"), reference::handler())
        .config(cfg)
        .serve(l)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_table_through_the_gateway_to_the_reference_agent() {
    let peer = reference_agent().await;
    let env = env_with(Version::V1, sdk_table_config).await;
    env.register("ws1", "reference", peer.url(), None);
    let key = json!({"op": "headers", "headers": {"Authorization": format!("Bearer {}", env.key)}});
    table::run_all_of(Releases::WithSdk103, &env.url("/a2a/reference"), &[key]).await;
    env.stop().await;
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_grpc_table_through_the_gateway_to_the_reference_agent() {
    let peer = reference_agent().await;
    let env = env_with(Version::V1, |c| {
        c.serve_grpc = true;
        sdk_table_config(c);
    })
    .await;
    env.register("ws1", "reference", peer.url(), None);
    let key = json!({"op": "headers", "headers": {"Authorization": format!("Bearer {}", env.key)}});
    table::run_grpc_of(Releases::WithSdk103, &env.url("/a2a/reference"), &[key]).await;
    env.stop().await;
    peer.shutdown().await;
}
