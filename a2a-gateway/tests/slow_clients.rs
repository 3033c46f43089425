//! The gateway's protocol edge (the shared `a2a_agent::listen` module) under slow and greedy
//! clients: the same raw-TCP checks as the agent's `tests/slow_clients.rs` and
//! `tests/header_deadline.rs`.

use crate::common;

#[path = "../../a2a-agent/tests/common/slow.rs"]
mod slow;

use a2a_gateway::errors::Version;

#[tokio::test]
async fn slowloris_slow_body_and_idle_connections_are_closed() {
    let env = common::env_with(Version::V1, |c| {
        c.header_read_timeout_secs = 1;
        c.body_read_timeout_secs = 1;
        c.idle_timeout_secs = 1;
    })
    .await;
    let addr = env.gw.local_addr();
    slow::slowloris_is_cut(addr).await;
    let text = slow::slow_body_gets_408(addr, "/a2a/echo", "A2A-Version: 1.0\r\n").await;
    assert!(text.contains("a2a_request_timeout"), "{text}");
    assert!(
        text.contains("\"jsonrpc\":\"2.0\""),
        "JSON-RPC form: {text}"
    );
    let text =
        slow::slow_body_gets_408(addr, "/a2a/echo/v1/message:send", "A2A-Version: 1.0\r\n").await;
    assert!(
        text.contains("\"status\""),
        "google.rpc.Status form: {text}"
    );
    // A 0.3 HTTP+JSON caller (no version): the 0.3 error object.
    let text = slow::slow_body_gets_408(addr, "/a2a/echo/v1/message:send", "").await;
    assert!(
        text.contains("\"data\":{")
            && text.contains("a2a_request_timeout")
            && !text.contains("\"status\""),
        "0.3 form: {text}"
    );
    slow::idle_is_closed(addr, "/healthz").await;
    env.stop().await;
}

#[tokio::test]
async fn silent_and_stalled_connections_are_closed_within_the_header_timeout() {
    // Header timeout 1 s, idle timeout 60 s (the default): closed well before the idle timeout,
    // whatever stage the HTTP/1 vs HTTP/2 detection is in.
    let env = common::env_with(Version::V10, |c| c.header_read_timeout_secs = 1).await;
    let addr = env.gw.local_addr();
    let within = std::time::Duration::from_secs(5);
    let cases: [&'static [u8]; 4] = [b"", b"P", b"GET /a2a/ec", slow::H2_PREFACE];
    let tasks: Vec<_> = cases
        .into_iter()
        .map(|sent| tokio::spawn(slow::stalled_is_cut(addr, sent, within)))
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let (code, text, _) = slow::get_keep(addr, "/healthz").await;
    assert_eq!(code, 200, "{text}");
    env.stop().await;
}

#[tokio::test]
async fn connection_cap_refuses_with_503_and_serves_again_below_it() {
    let env = common::env_with(Version::V1, |c| c.max_connections = 50).await;
    slow::cap_refuses_then_serves(env.gw.local_addr(), 50, "/healthz").await;
    env.stop().await;
}

/// A flood of silent connections ten times the cap (see the agent's test of the same name): the
/// gateway shares the edge, so normal requests keep being served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_requests_succeed_under_a_flood_of_silent_connections() {
    let limit = slow::raise_fd_limit();
    let cap = 100;
    let flood = (1000u64)
        .min(limit.saturating_sub(1200) / 2)
        .max(2 * cap as u64) as usize;
    let env = common::env_with(Version::V1, |c| c.max_connections = cap).await;
    let (ok, sent) =
        slow::normal_requests_under_a_silent_flood(env.gw.local_addr(), flood, 4, 50, "/healthz")
            .await;
    assert!(
        ok * 100 >= sent * 99,
        "{ok} of {sent} normal requests served under a flood of {flood}"
    );
    env.stop().await;
}
