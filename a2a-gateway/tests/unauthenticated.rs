//! Refusals before a key is accepted are counted in `a2a_unauthenticated_total{reason}`, not
//! written as audit rows: nobody without a key can grow the append-only audit table.

use crate::common;

use a2a_gateway::errors::Version;
use common::*;

fn metric(text: &str, reason: &str) -> u64 {
    let name = format!("a2a_unauthenticated_total{{reason=\"{reason}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&name))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn keyless_and_bad_key_calls_are_counted_not_audited() {
    let env = env(Version::V1).await;
    let rows = |env: &Env| env.store.audit(None, None, 0, 1_000_000).unwrap().len();
    let before = rows(&env);
    for i in 0..100 {
        // No key, JSON-RPC.
        let r = env
            .http
            .post(env.url("/a2a/echo"))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(send10(&format!("no key {i}")).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        // A wrong key, HTTP+JSON.
        let r = env
            .http
            .post(env.url("/a2a/echo/message:send"))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(format!("gwk_not_a_key_{i}"))
            .body(serde_json::json!({"message": send10("x")["params"]["message"]}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
    }
    assert_eq!(rows(&env), before, "no audit row for unauthenticated calls");
    let text = env
        .http
        .get(env.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(metric(&text, "missing"), 100, "{text}");
    assert_eq!(metric(&text, "invalid"), 100, "{text}");

    // An authenticated call is still audited, exactly once.
    let (status, v) = env.rpc("/a2a/echo", Some("1.0"), send10("with key")).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(rows(&env), before + 1);
    env.stop().await;
}
