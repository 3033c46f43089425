//! End-to-end tests of HTTP+JSON callers, audit, metrics and trace propagation, the admin API,
//! plugged steps and the entry tenant and path.

use crate::common;

use crate::common::echo::start_echo;
use a2a_gateway::errors::Version;
use a2a_gateway::keys::Scope;
use common::*;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn http_json_binding_for_callers() {
    let env = env(Version::V03).await;
    let resp = env
        .v1(Method::POST, "/a2a/echo/v1/message:send")
        .header("content-type", "application/a2a+json")
        .body(
            json!({"message":{"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":"rest"}]}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let b: Value = resp.json().await.unwrap();
    let tid = b["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(b["task"]["artifacts"][0]["parts"][0]["text"], "echo: rest");
    let resp = env
        .v1(Method::GET, &format!("/a2a/echo/v1/tasks/{tid}"))
        .send()
        .await
        .unwrap();
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["status"]["state"], "TASK_STATE_COMPLETED");
    let resp = env
        .v1(Method::GET, "/a2a/echo/v1/tasks/ghost")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    let resp = env
        .v1(Method::POST, &format!("/a2a/echo/v1/tasks/{tid}:cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let resp = env
        .v1(Method::POST, "/a2a/echo/v1/message:stream")
        .header("content-type", "application/json")
        .body(
            json!({"message":{"messageId": uuid::Uuid::new_v4().to_string(),"role":"ROLE_USER","parts":[{"text":"rest"}]}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    assert!(events[0]["task"].is_object(), "{text}");
    assert!(events[2]["statusUpdate"].is_object());
    let resp = env
        .v1(Method::GET, "/a2a/echo/v1/tasks")
        .send()
        .await
        .unwrap();
    let b: Value = resp.json().await.unwrap();
    // ListTasks at the 0.3 peer, served from the gateway's records.
    assert!(
        b["tasks"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["id"] == tid.as_str())),
        "{b}"
    );
    // No A2A-Version is 0.3 (S1 §3.6.2): served in the 0.3 HTTP+JSON dialect (ProtoJSON of the
    // 0.3 proto) on the same path.
    let resp = env
        .http
        .get(env.url(&format!("/a2a/echo/v1/tasks/{tid}")))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["id"], tid.as_str(), "{b}");
    assert_eq!(b["status"]["state"], "TASK_STATE_COMPLETED", "{b}");
    // ListTasks is not a 0.3 operation.
    let resp = env
        .http
        .get(env.url("/a2a/echo/v1/tasks"))
        .bearer_auth(&env.key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["code"], -32601, "{b}");
    env.stop().await;
}

#[tokio::test]
async fn audit_metrics_and_trace_propagation() {
    let env = env(Version::V03).await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let resp = env
        .v1(Method::POST, "/a2a/echo")
        .header("content-type", "application/json")
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .body(send10("audit me").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let peer_headers = env.peers[0].last_headers();
    let tp = peer_headers
        .iter()
        .find(|(k, _)| k == "traceparent")
        .unwrap();
    assert!(tp.1.contains(trace));
    assert!(
        peer_headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer peer-cred")
    );
    assert!(
        peer_headers
            .iter()
            .any(|(k, v)| k == "a2a-version" && v == "0.3")
    );
    let (_, read) = key_with(&env, &[Scope::Read], None);
    let _ = env.rpc_key("/a2a/echo", None, send03("x"), &read).await;

    let hops: Value = env
        .http
        .get(env.url("/admin/hops?workspace=ws1&agent=echo"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let hops = hops.as_array().unwrap();
    let first = hops.iter().find(|h| h["traceId"] == trace).unwrap();
    assert_eq!(first["operation"], "message/send");
    assert_eq!(first["clientMethod"], "SendMessage");
    assert_eq!(first["peerMethod"], "message/send");
    assert_eq!(first["clientVersion"], "1.0");
    assert_eq!(first["peerVersion"], "0.3");
    assert_eq!(first["peerBinding"], "JSONRPC");
    assert_eq!(first["decision"], "allowed");
    let denied = hops
        .iter()
        .find(|h| h["errorCode"] == "a2a_scope_denied")
        .unwrap();
    assert_eq!(denied["status"], 403);
    assert_eq!(denied["decision"], "refused");
    // JSON lines export and the admin token.
    let resp = env
        .http
        .get(env.url("/admin/audit"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    assert!(text.lines().count() >= 2);
    for l in text.lines() {
        serde_json::from_str::<Value>(l).unwrap();
    }
    let resp = env
        .http
        .get(env.url("/admin/audit"))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    // Append-only.
    assert!(env.store.execute_raw("DELETE FROM audit").is_err());
    assert!(
        env.store
            .execute_raw("UPDATE audit SET decision = 'x'")
            .is_err()
    );
    let metrics = env
        .http
        .get(env.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let m = common::scrape::Scrape::parse(&metrics);
    let hops = |code: &str| {
        m.sum(
            "a2a_requests_total",
            &[
                ("operation", "message/send"),
                ("workspace", "ws1"),
                ("code", code),
            ],
        )
    };
    assert_eq!(hops("ok"), 1.0, "{metrics}");
    assert_eq!(hops("a2a_scope_denied"), 1.0, "{metrics}");
    assert_eq!(
        m.sum(
            "a2a_request_duration_seconds_count",
            &[("operation", "message/send")]
        ),
        2.0
    );
    env.stop().await;
}

#[tokio::test]
async fn admin_api_manages_registry() {
    let env = env(Version::V1).await;
    let post = |path: &str, body: Value| {
        env.http
            .post(env.url(path))
            .bearer_auth(ADMIN)
            .json(&body)
            .send()
    };
    let r = post("/admin/workspaces", json!({"id": "ws3"}))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let r = post("/admin/workspaces", json!({"id": "ws3"}))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let peer = env.peers[0].url.clone();
    let r = post(
        "/admin/workspaces/ws3/agents",
        json!({"agentId": "e", "endpoint": peer, "credential": "s3cret"}),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let listed: Value = env
        .http
        .get(env.url("/admin/workspaces/ws3/agents"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["agentId"], "e");
    assert!(
        listed[0].get("credential").is_none(),
        "credentials are never listed"
    );
    let k: Value = post(
        "/admin/workspaces/ws3/keys",
        json!({"scopes": ["a2a:send"]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let key = k["key"].as_str().unwrap().to_owned();
    let (_, b) = env.rpc_key("/a2a/e", None, send03("hi"), &key).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let keys: Value = env
        .http
        .get(env.url("/admin/workspaces/ws3/keys"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(keys[0].get("key").is_none());
    let r = env
        .http
        .post(env.url(&format!(
            "/admin/keys/{}/revoke",
            k["keyId"].as_str().unwrap()
        )))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (s, _) = env.rpc_key("/a2a/e", None, send03("hi"), &key).await;
    assert_eq!(s, 401);
    env.stop().await;
}

/// A step of another implementation, plugged in after the gateway's own: refuses hops that
/// arrive deep in a delegation chain.
struct DenyDeep;
impl a2a_gateway::seams::Step for DenyDeep {
    fn name(&self) -> &'static str {
        "deny-deep"
    }
    fn active(&self, _hop: &a2a_gateway::seams::Hop) -> bool {
        true
    }
    fn request(
        &self,
        hop: &a2a_gateway::seams::Hop,
        _params: &mut Value,
        _ev: &mut a2a_gateway::seams::Evidence,
    ) -> Result<(), a2a_gateway::errors::Refusal> {
        if hop.chain.len() >= 2 {
            return Err(a2a_gateway::errors::Refusal::internal("policy: too deep"));
        }
        Ok(())
    }
}

#[tokio::test]
async fn plugged_steps_are_called_and_hops_counted() {
    use a2a_gateway::governance::{Governance, loops::ChainKey};
    use a2a_gateway::store::backend::{GovDocs, Holds, SqliteGovDocs, SqliteHolds};
    let dir = tempfile::tempdir().unwrap();
    let store = a2a_gateway::store::Store::open(&dir.path().join("s.db")).unwrap();
    store.create_workspace("ws1", "One").unwrap();
    let (_, key) = store.create_key("ws1", &[], None, None).unwrap();
    let peer = start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        Version::V1,
        None,
    )
    .await
    .unwrap();
    store
        .upsert_agent(&a2a_gateway::store::Agent {
            workspace_id: "ws1".into(),
            agent_id: "echo".into(),
            endpoint: peer.url.clone(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .unwrap();
    let config = a2a_gateway::config::Config {
        dev_mode: true,
        delegation_key: Some("k".into()),
        ..Default::default()
    };
    let governance = Governance::new(
        GovDocs::Sqlite(SqliteGovDocs::new(store.clone())),
        Holds::Sqlite(SqliteHolds::new(store.clone())),
        &config.governance(),
    )
    .with_step(std::sync::Arc::new(DenyDeep));
    let gw = a2a_gateway::server::Gateway::new(config, store)
        .unwrap()
        .with_governance(governance)
        .serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let key_k = ChainKey::new(b"k");
    let chain = |n: usize| key_k.sign(&(0..n).map(|i| format!("ws1/a{i}")).collect::<Vec<_>>());
    let call = |hops: &str| {
        let depth = hops.parse::<usize>().unwrap() - 1;
        http.post(format!("{}/a2a/echo", gw.base_url()))
            .header("content-type", "application/json")
            .header("x-a2a-gateway-hops", hops)
            .header("a2a-delegation-chain", chain(depth))
            .bearer_auth(&key)
            .body(send03("x").to_string())
            .send()
    };
    let b: Value = call("1").await.unwrap().json().await.unwrap();
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let sent = peer.last_headers();
    assert!(
        sent.iter()
            .any(|(k, v)| k == "x-a2a-gateway-hops" && v == "2"),
        "{sent:?}"
    );
    let b: Value = call("3").await.unwrap().json().await.unwrap();
    assert_eq!(b["error"]["data"]["code"], "a2a_internal_error", "{b}");
    gw.shutdown().await;
    peer.shutdown().await;
}

#[tokio::test]
async fn entry_tenant_and_path_are_used() {
    let env = env(Version::V1).await;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let card = json!({"name":"t","description":"","version":"1","skills":[],"capabilities":{},
        "defaultInputModes":[],"defaultOutputModes":[],
        "supportedInterfaces":[{"url": url, "protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"acme"}]});
    let peer = start_echo(l, Version::V1, Some(card)).await.unwrap();
    // Registered with a path: the card is read at <endpoint>/.well-known (404) then the origin's.
    env.register("ws1", "tenant", &format!("{}/agents/t", peer.url), None);
    let (_, b) = env.rpc("/a2a/tenant", None, send03("x")).await;
    assert_eq!(b["result"]["kind"], "task", "{b}");
    let sent = peer.last_body();
    assert_eq!(sent["params"]["tenant"], "acme", "{sent}");
    assert_eq!(sent["method"], "SendMessage");
    peer.shutdown().await;
    env.stop().await;
}
