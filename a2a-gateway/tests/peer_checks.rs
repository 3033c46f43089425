//! The hop's static peer address checks are kept per registration and card
//! (`a2a-gateway/src/peer_checks.rs`): a changed registration is checked afresh on its next hop.

use crate::common;

use crate::common::echo::start_echo;
use a2a_gateway::errors::Version;
use common::*;
use serde_json::json;

#[tokio::test]
async fn a_changed_registration_is_checked_again_on_the_next_hop() {
    let env = env(Version::V1).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let good = start_echo(l, Version::V1, None).await.unwrap();
    // A peer whose card sends the gateway to another origin (the good peer's port).
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere = json!({"name":"e","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url": format!("{}/", good.url),"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]});
    let bad = start_echo(l, Version::V1, Some(elsewhere)).await.unwrap();

    env.register("ws1", "moving", &good.url, None);
    for _ in 0..2 {
        let (s, b) = env.rpc("/a2a/moving", None, send03("x")).await;
        assert_eq!(s, 200);
        assert_eq!(b["result"]["kind"], "task", "{b}");
    }
    // Same agent id, new endpoint: its card's interface is on another origin, so refused,
    // although the previous registration's choice passed (and was kept).
    env.register("ws1", "moving", &bad.url, None);
    let (_, b) = env.rpc("/a2a/moving", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused", "{b}");
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("registered endpoint"),
        "{b}"
    );
    // Refusals are not kept: refused on every hop.
    let (_, b) = env.rpc("/a2a/moving", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused", "{b}");
    // Back to the first endpoint: served again.
    env.register("ws1", "moving", &good.url, None);
    let (_, b) = env.rpc("/a2a/moving", None, send03("x")).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    // An endpoint the static checks refuse (a private address) is refused, never served.
    env.register("ws1", "moving", "http://10.0.0.1:9/a2a", None);
    let (_, b) = env.rpc("/a2a/moving", None, send03("x")).await;
    assert_eq!(gw_code(&b), "a2a_peer_url_refused", "{b}");
    env.stop().await;
}
