//! Our Rust agent (a2a-agent) as a peer, over HTTP+JSON 1.0 and JSON-RPC, through the gateway.

use crate::common;

use a2a_agent::AgentServer;
use a2a_agent::card::AgentCard;
use a2a_agent::demo::{echo_card, echo_handler};
use a2a_gateway::errors::Version;
use common::*;
use serde_json::json;

async fn rust_agent(rest_first: bool) -> a2a_agent::server::ServerHandle {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut card = echo_card().json().clone();
    card["supportedInterfaces"] = if rest_first {
        json!([
            {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ])
    } else {
        json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])
    };
    AgentServer::new(AgentCard::from_json(card).unwrap(), echo_handler())
        .validate_auth(false)
        .serve(listener)
        .await
        .unwrap()
}

#[tokio::test]
async fn rust_agent_over_http_json_and_json_rpc() {
    for rest_first in [true, false] {
        let agent = rust_agent(rest_first).await;
        let env = env(Version::V1).await;
        env.register("ws1", "rust", agent.url(), None);
        // 0.3 caller, 1.0 peer.
        let (_, b) = env.rpc("/a2a/rust", None, send03("hello rust")).await;
        assert_eq!(b["result"]["kind"], "task", "{b}");
        assert_eq!(b["result"]["status"]["state"], "completed");
        let tid = b["result"]["id"].as_str().unwrap().to_owned();
        let (_, b) = env
            .rpc(
                "/a2a/rust",
                Some("1.0"),
                json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":tid}}),
            )
            .await;
        assert_eq!(
            b["result"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{b}"
        );
        let (_, b) = env
            .rpc(
                "/a2a/rust",
                None,
                json!({"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"id":"ghost"}}),
            )
            .await;
        assert_eq!(b["error"]["code"], -32001, "{b}");
        let (_, b) = env
            .rpc(
                "/a2a/rust",
                Some("1.0"),
                json!({"jsonrpc":"2.0","id":"c","method":"CancelTask","params":{"id":tid}}),
            )
            .await;
        assert_eq!(b["error"]["code"], -32002, "{b}");
        let mut req = send03("stream please");
        req["method"] = json!("message/stream");
        let (_, _, events) = env.sse("/a2a/rust", None, req).await;
        assert!(events.len() >= 3, "{events:?}");
        let last = events.last().unwrap();
        assert_eq!(last["result"]["final"], true, "{events:?}");
        assert!(
            events.iter().all(|e| e.get("error").is_none()),
            "{events:?}"
        );
        let hops = env.store.audit(Some("ws1"), Some("rust"), 0, 100).unwrap();
        let expected = if rest_first { "HTTP+JSON" } else { "JSONRPC" };
        assert!(
            hops.iter()
                .filter(|h| h.peer_binding.is_some())
                .all(|h| h.peer_binding.as_deref() == Some(expected))
        );
        env.stop().await;
        agent.shutdown().await;
    }
}
