//! Loops and delegation: two real agents (a2a-agent handlers) that delegate to each other
//! through the gateway, carrying the signed chain with the a2a-client library; the cycle is
//! stopped at the second visit and every hop is audited with its chain. Also: a chain a peer
//! shortened is refused, and the depth limit.

use crate::common;

use std::sync::Arc;

use a2a_agent::handler::{Reply, RequestContext};
use a2a_client::ClientBuilder;
use a2a_gateway::errors::Version;
use a2a_gateway::governance::loops::ChainKey;
use common::gov::{Fut, Slot, agent};
use common::*;
use serde_json::{Value, json};

/// A handler that delegates every message to agent `next` through the gateway, carrying the
/// chain it received, and answers with what it got back (the error's debug form on a refusal).
fn delegate(next: &'static str, slot: Slot) -> impl Fn(RequestContext) -> Fut + Send + Sync {
    move |ctx: RequestContext| {
        let slot = slot.clone();
        Box::pin(async move {
            let Some((gw, key)) = slot.get().cloned() else {
                return Ok(Reply::Text("no gateway".into()));
            };
            let builder = ClientBuilder::default()
                .header("authorization", &format!("Bearer {key}"))
                .and_then(|b| b.delegation_chain(ctx.delegation_chain()));
            let answer = match builder {
                Err(e) => format!("client: {e}"),
                Ok(b) => match b.connect(&format!("{gw}/a2a/{next}")).await {
                    Err(e) => format!("connect: {e:?}"),
                    Ok(client) => match client
                        .send_message(a2a_types::v1::Message::user_text(ctx.text()))
                        .await
                    {
                        Ok(r) => serde_json::to_string(&r).unwrap_or_default(),
                        Err(e) => format!("refused: {e:?}"),
                    },
                },
            };
            Ok(Reply::Text(format!("{next} said: {answer}")))
        })
    }
}

#[tokio::test]
async fn delegation_cycle_is_stopped_at_the_second_visit() {
    let slot: Slot = Arc::default();
    let a = agent(delegate("b", slot.clone())).await;
    let b = agent(delegate("a", slot.clone())).await;
    let env = env(Version::V1).await;
    env.register("ws1", "a", a.url(), None);
    env.register("ws1", "b", b.url(), None);
    slot.set((env.gw.base_url(), env.key.clone())).unwrap();
    let (_, r) = env.rpc("/a2a/a", Some("1.0"), send10("plan a trip")).await;
    let text = r.to_string();
    assert!(
        text.contains("a2a_loop_detected") || text.contains("A2A_LOOP_DETECTED"),
        "{text}"
    );
    // Three hops: caller → a, a → b, b → a (refused).
    let hops = env.store.audit(Some("ws1"), None, 0, 100).unwrap();
    let sends: Vec<_> = hops
        .iter()
        .filter(|h| h.operation.as_deref() == Some("message/send"))
        .collect();
    assert_eq!(sends.len(), 3, "{sends:#?}");
    let chain =
        |h: &a2a_gateway::store::AuditRecord| h.governance.as_ref().unwrap()["chain"].clone();
    let refused = sends.iter().find(|h| h.decision == "refused").unwrap();
    assert_eq!(refused.error_code.as_deref(), Some("a2a_loop_detected"));
    assert_eq!(refused.target.as_deref(), Some("a"));
    assert_eq!(chain(refused), json!(["ws1/a", "ws1/b", "ws1/a"]));
    let allowed: Vec<Value> = sends
        .iter()
        .filter(|h| h.decision == "allowed")
        .map(|h| chain(h))
        .collect();
    assert!(allowed.contains(&json!(["ws1/a"])), "{allowed:?}");
    assert!(allowed.contains(&json!(["ws1/a", "ws1/b"])), "{allowed:?}");
    // The admin API shows the same evidence.
    let r = env
        .http
        .get(env.url("/admin/hops?workspace=ws1"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    let listed: Value = r.json().await.unwrap();
    assert!(listed.to_string().contains("a2a_loop_detected"));
    env.stop().await;
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn shortened_chains_and_depth() {
    let env = env_with(Version::V03, |c| {
        c.delegation_key = Some("k1".into());
        c.max_delegation_depth = 3;
    })
    .await;
    let call = |chain: String, v: Option<&'static str>| {
        let mut req = env
            .http
            .post(env.url("/a2a/echo"))
            .header("content-type", "application/json")
            .header("a2a-delegation-chain", chain)
            .bearer_auth(&env.key)
            .body(
                if v.is_some() {
                    send10("x")
                } else {
                    send03("x")
                }
                .to_string(),
            );
        if let Some(v) = v {
            req = req.header("A2A-Version", v);
        }
        req.send()
    };
    let k = ChainKey::new(b"k1");
    let members = |n: usize| (0..n).map(|i| format!("ws1/p{i}")).collect::<Vec<_>>();
    for v in [None, Some("1.0")] {
        // Depth 3 (two visited + echo) is allowed; depth 4 is not.
        let b: Value = call(k.sign(&members(2)), v)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(b["result"].is_object(), "{b}");
        let sent = env.peers[0].last_headers();
        let out = sent
            .iter()
            .find(|(n, _)| n == "a2a-delegation-chain")
            .unwrap()
            .1
            .clone();
        assert_eq!(
            k.verify(&out).unwrap(),
            vec!["ws1/p0", "ws1/p1", "ws1/echo"]
        );
        let b: Value = call(k.sign(&members(3)), v)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(gw_code(&b), "a2a_delegation_depth_exceeded", "{b}");
        // A peer that drops a member (re-encodes the body) or signs with another key.
        let good = k.sign(&members(2));
        let (_, tag) = good.split_once('.').unwrap();
        let short = k.sign(&members(1));
        let (body, _) = short.split_once('.').unwrap();
        let b: Value = call(format!("{body}.{tag}"), v)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(gw_code(&b), "a2a_delegation_chain_invalid", "{b}");
        let b: Value = call(ChainKey::new(b"other").sign(&[]), v)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(gw_code(&b), "a2a_delegation_chain_invalid", "{b}");
        // Its own agent already in the chain.
        let b: Value = call(k.sign(&["ws1/echo".into()]), v)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(gw_code(&b), "a2a_loop_detected", "{b}");
        // The same agent id in another workspace is another member.
        let b: Value = call(k.sign(&["ws2/echo".into()]), v)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(b["result"].is_object(), "{b}");
    }
    env.stop().await;
}
