//! `GET /a2a/.well-known/ard.json` (issue 15): off by default; on, the caller's key sees its
//! own workspace's agents with their governed card URLs, never another workspace's.

use a2a_gateway::errors::Version;
use serde_json::Value;

use crate::common::*;

async fn ard(env: &Env, key: Option<&str>) -> (u16, Value) {
    let mut req = env.http.get(env.url("/a2a/.well-known/ard.json"));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let resp = req.send().await.unwrap();
    let s = resp.status().as_u16();
    (s, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn off_by_default() {
    let env = env(Version::V1).await;
    let (s, b) = ard(&env, Some(&env.key)).await;
    assert_eq!(s, 404, "{b}");
    env.stop().await;
}

#[tokio::test]
async fn lists_the_keys_workspace_only() {
    let env = env_with(Version::V1, |c| c.ard_enabled = true).await;
    let echo = env.peers[0].url.clone();
    env.register("ws1", "second", &echo, None);
    env.register("ws2", "secret-of-ws2", &echo, None);
    let (s, b) = ard(&env, Some(&env.key)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["specVersion"], "1.0");
    let entries = b["entries"].as_array().unwrap();
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e["displayName"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["echo", "second"], "{b}");
    assert!(!b.to_string().contains("secret-of-ws2"));
    for e in entries {
        assert_eq!(e["type"], "application/a2a-agent-card+json");
        // The URL is the governed card, which the same key can read.
        let url = e["url"].as_str().unwrap();
        assert!(url.starts_with(&env.gw.base_url()), "{url}");
        let card = env
            .http
            .get(url)
            .bearer_auth(&env.key)
            .send()
            .await
            .unwrap();
        assert_eq!(card.status(), 200, "{url}");
    }
    // A key of ws2 sees ws2's agent only.
    let (_, k2) = env.store.create_key("ws2", &[], None, None).unwrap();
    let (_, b) = ard(&env, Some(&k2)).await;
    let ids: Vec<&str> = b["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["displayName"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["secret-of-ws2"]);
    // No key: 401.
    let (s, _) = ard(&env, None).await;
    assert_eq!(s, 401);
    env.stop().await;
}
