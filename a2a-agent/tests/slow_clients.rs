//! The agent's protocol edge under slow and greedy clients: slowloris headers, slow bodies and
//! idle keep-alive connections are closed after the configured timeouts; beyond the connection
//! cap new connections get a JSON 503 and normal requests are served again below it.

use crate::common;
use crate::common::slow;

use a2a_agent::AgentConfig;

fn cfg(header_ms: u64, body_ms: u64, idle_ms: u64, max: usize) -> AgentConfig {
    AgentConfig {
        header_read_timeout: a2a_agent::config::Dur::from_millis(header_ms),
        body_read_timeout: a2a_agent::config::Dur::from_millis(body_ms),
        idle_timeout: a2a_agent::config::Dur::from_millis(idle_ms),
        max_connections: max,
        ..common::open_config()
    }
}

const CARD: &str = "/.well-known/agent-card.json";

#[tokio::test]
async fn slowloris_headers_are_cut() {
    let s = common::echo(cfg(1000, 30_000, 30_000, 0)).await;
    slow::slowloris_is_cut(s.local_addr()).await;
    // The server still serves.
    let (code, _, _) = slow::get_keep(s.local_addr(), CARD).await;
    assert_eq!(code, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn slow_body_gets_408_in_the_callers_form() {
    let s = common::echo(cfg(10_000, 1000, 30_000, 0)).await;
    let text = slow::slow_body_gets_408(s.local_addr(), "/", "A2A-Version: 1.0\r\n").await;
    assert!(
        text.contains("\"jsonrpc\":\"2.0\""),
        "JSON-RPC form: {text}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let s = common::echo(cfg(10_000, 30_000, 1000, 0)).await;
    slow::idle_is_closed(s.local_addr(), CARD).await;
    s.shutdown().await;
}

#[tokio::test]
async fn connection_cap_refuses_with_503_and_serves_again_below_it() {
    let s = common::echo(cfg(30_000, 30_000, 30_000, 50)).await;
    slow::cap_refuses_then_serves(s.local_addr(), 50, CARD).await;
    s.shutdown().await;
}

/// A flood of silent connections ten times the cap: each newcomer displaces the oldest
/// connection that has not sent a request head, so normal clients (who send at once) keep
/// being served instead of meeting a full cap for the header timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_requests_succeed_under_a_flood_of_silent_connections() {
    let limit = slow::raise_fd_limit();
    let cap = 100;
    // Client and server ends of every connection live in this process.
    let flood = (1000u64)
        .min(limit.saturating_sub(1200) / 2)
        .max(2 * cap as u64) as usize;
    let s = common::echo(cfg(10_000, 30_000, 30_000, cap)).await;
    let (ok, sent) =
        slow::normal_requests_under_a_silent_flood(s.local_addr(), flood, 4, 50, CARD).await;
    assert!(
        ok * 100 >= sent * 99,
        "{ok} of {sent} normal requests served under a flood of {flood}"
    );
    s.shutdown().await;
}
