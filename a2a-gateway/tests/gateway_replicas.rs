//! Two gateways ("replicas") on one PostgreSQL database (issue 32): the registry, the task
//! records and what `Gateway::with_shared` puts there (the page-token key, console sessions
//! and login links, trust keys) in PostgreSQL. A ListTasks page token issued by A is accepted
//! by B (and refused by a gateway that does not share the key); a console login on A is valid
//! on B and a logout on A ends it on B; a login link printed by A is redeemed once, on B; with
//! PostgreSQL stopped B answers the console and a ListTasks with 503 `a2a_store_unavailable`.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use a2a_client::{Binding, Version};
use a2a_gateway::config::Config;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::backend::{
    Audit, Holds, PgRegistry, PgStreams, Records, Registry, RegistryStore, Shared, SqliteAudit,
    SqliteHolds, StreamBounds,
};
use a2a_gateway::store::{Agent, Store};
use a2a_pg::PoolOptions;
use reqwest::header::{COOKIE, ORIGIN};
use serde_json::{Value, json};

use crate::common::console::{client, login_with, session_cookie};
use crate::common::{ADMIN, Env};
use crate::idempotent_sends::{caller, counting_peer, send, task_id};
use crate::store_suite::{cluster, wait_listening};

pub(crate) fn quick() -> PoolOptions {
    PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    }
}

/// Workspace `ws1`, agent `count` at `endpoint` and a key of `ws1`.
pub(crate) async fn seed(registry: &PgRegistry, endpoint: &str) -> String {
    registry.create_workspace("ws1", "One").await.unwrap();
    registry
        .upsert_agent(&Agent {
            workspace_id: "ws1".into(),
            agent_id: "count".into(),
            endpoint: endpoint.into(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .await
        .unwrap();
    registry.create_key("ws1", &[], None, None).await.unwrap().1
}

/// A gateway (console on) on database `url`, with its own pools; `shared`: the page-token key,
/// sessions, trust and stream resume events there too (else in this process, as on SQLite).
/// Also a login link it made before serving.
pub(crate) async fn replica(url: &str, key: &str, shared: bool) -> (Env, String) {
    let registry = PgRegistry::connect(url, &quick()).await.unwrap();
    assert!(wait_listening(&registry).await);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        dev_mode: true,
        admin_token: Some(ADMIN.into()),
        card_key_secret: Some("a card key secret of 32 bytes or more".into()),
        peer_timeout_secs: 5,
        listen: listener.local_addr().unwrap(),
        ..Config::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    let records = Records::Postgres(registry.records());
    let mut gw = Gateway::with_backends(
        config,
        store.clone(),
        Registry::Postgres(registry.clone()),
        records,
        // The audit, approvals and kills stay on the file here (`gateway_replicas_gov.rs`
        // puts them on PostgreSQL).
        Audit::Sqlite(SqliteAudit::new(store.clone())),
        Holds::Sqlite(SqliteHolds::new(store.clone())),
    )
    .unwrap();
    if shared {
        let on = Shared::Postgres(registry.shared().await.unwrap());
        gw = gw.with_shared(on).await.unwrap();
        let streams = PgStreams::connect(url, &quick(), StreamBounds::default())
            .await
            .unwrap();
        gw = gw.with_stream_events(streams).unwrap();
    }
    let base = format!("http://{}", listener.local_addr().unwrap());
    let link = gw.console_login_link(&base);
    let gw = gw.serve(listener).await.unwrap();
    let env = Env {
        gw,
        store,
        key: key.to_owned(),
        http: reqwest::Client::new(),
        _dir: dir,
        peers: vec![],
    };
    (env, link)
}

/// ListTasks (JSON-RPC 1.0) of at most 2 tasks after `token`.
async fn list(env: &Env, token: &str) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
        "params": {"pageSize": 2, "pageToken": token}});
    env.rpc("/a2a/count", Some("1.0"), body).await
}

/// The session cookie `cookie` (`a2a_console_<port>=v`) as gateway `env` names it (a plain
/// HTTP cookie names the port; behind one load balancer every replica sees the same one).
fn cookie_for(env: &Env, cookie: &str) -> String {
    let value = cookie.split_once('=').unwrap().1;
    format!("a2a_console_{}={value}", env.gw.local_addr().port())
}

async fn console_get(env: &Env, cookie: &str) -> (u16, String) {
    let r = client()
        .get(format!("{}/console", env.gw.base_url()))
        .header(COOKIE, cookie_for(env, cookie))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn csrf_of(html: &str) -> String {
    crate::common::console::csrf_of(html)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_page_tokens_console_logins_and_login_links() {
    let Some(cluster) = cluster() else { return };
    let peer = counting_peer(Arc::new(AtomicUsize::new(0))).await;
    cluster.create_database("replicas").unwrap();
    let url = cluster.url_of("replicas");
    let seeding = PgRegistry::connect(&url, &quick()).await.unwrap();
    let key = seed(&seeding, peer.url()).await;
    let (a, link) = replica(&url, &key, true).await;
    let (b, _) = replica(&url, &key, true).await;
    let (alone, _) = replica(&url, &key, false).await;

    // Three tasks through A; a page token of A is accepted by B.
    let c = caller(&a, &key, Binding::JsonRpc, Version::V1).await;
    for i in 0..3 {
        task_id(c.send(send("work", &format!("m{i}"))).await.unwrap());
    }
    let (s, first) = list(&a, "").await;
    assert_eq!(s, 200, "{first}");
    assert_eq!(first["result"]["tasks"].as_array().unwrap().len(), 2);
    let token = first["result"]["nextPageToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!token.is_empty(), "{first}");
    let (s, next) = list(&b, &token).await;
    assert_eq!(s, 200, "{next}");
    assert!(next.get("error").is_none(), "B refused A's token: {next}");
    assert_eq!(
        next["result"]["tasks"].as_array().unwrap().len(),
        1,
        "{next}"
    );
    assert_eq!(next["result"]["totalSize"], 3);
    let mut ids: Vec<String> = [&first, &next]
        .iter()
        .flat_map(|p| p["result"]["tasks"].as_array().unwrap().clone())
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "the pages add up");
    // A gateway that keeps its own key refuses it.
    let (_, foreign) = list(&alone, &token).await;
    assert!(foreign.get("error").is_some(), "{foreign}");

    // A console login on A is valid on B; a logout on A ends it on B (and on A).
    let http = client();
    let (s, cookie) = login_with(&http, &a.gw.base_url(), ADMIN).await;
    assert_eq!(s, 303);
    let cookie = cookie.expect("a session cookie");
    let (s, page) = console_get(&b, &cookie).await;
    assert_eq!(s, 200, "B does not know A's session");
    let csrf = csrf_of(&page);
    // The alone gateway keeps sessions in its memory: it does not know the login.
    assert_eq!(console_get(&alone, &cookie).await.0, 303);
    let r = http
        .post(format!("{}/console/logout", a.gw.base_url()))
        .header(COOKIE, cookie_for(&a, &cookie))
        .header(ORIGIN, a.gw.base_url())
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(console_get(&b, &cookie).await.0, 303, "logged out on B");
    assert_eq!(console_get(&a, &cookie).await.0, 303, "logged out on A");

    // A's login link is redeemed on B, once; then neither takes it.
    let token = link.rsplit('/').next().unwrap();
    let on_b = format!("{}/console/login/{token}", b.gw.base_url());
    let r = http.get(&on_b).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let (session, _) = session_cookie(&r).expect("a session from the link");
    assert_eq!(console_get(&a, &session).await.0, 200, "valid on A too");
    assert_eq!(http.get(&on_b).send().await.unwrap().status(), 401);
    let on_a = format!("{}/console/login/{token}", a.gw.base_url());
    assert_eq!(http.get(&on_a).send().await.unwrap().status(), 401);

    // PostgreSQL stopped: the console and a ListTasks on B are 503 a2a_store_unavailable.
    cluster.stop().unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(30), console_get(&b, &session));
    let (s, body) = answered.await.expect("an answer within 30 s");
    assert_eq!(s, 503, "{body}");
    assert!(body.contains("a2a_store_unavailable"), "{body}");
    let answered = tokio::time::timeout(Duration::from_secs(30), list(&b, ""));
    let (s, v) = answered.await.expect("an answer within 30 s");
    assert_eq!(s, 503, "{v}");
    assert_eq!(
        v["error"]["data"][0]["metadata"]["code"], "a2a_store_unavailable",
        "{v}"
    );
    let r = http.get(&on_b).send().await.unwrap();
    assert_eq!(r.status(), 503);
    cluster.start_again().unwrap();
    let mut back = false;
    for _ in 0..300 {
        if console_get(&b, &session).await.0 == 200 {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back, "the session survives the outage");
    a.stop().await;
    b.stop().await;
    alone.stop().await;
    peer.shutdown().await;
    drop(seeding);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_signing_key_made_on_one_replica_signs_on_the_other() {
    let Some(cluster) = cluster() else { return };
    cluster.create_database("keys").unwrap();
    let url = cluster.url_of("keys");
    let seeding = PgRegistry::connect(&url, &quick()).await.unwrap();
    let key = seed(&seeding, "http://127.0.0.1:9").await;
    let (a, _) = replica(&url, &key, true).await;
    let (b, _) = replica(&url, &key, true).await;
    let admin = |env: &Env, path: &str| {
        client()
            .post(format!("{}{path}", env.gw.base_url()))
            .bearer_auth(ADMIN)
            .json(&json!({}))
            .send()
    };
    let r = admin(&a, "/admin/signing-keys").await.unwrap();
    assert_eq!(r.status(), 201);
    let made: Value = r.json().await.unwrap();
    let kid = made["kid"].as_str().unwrap().to_owned();
    // B lists it and serves it in its key set.
    let r = client()
        .get(format!("{}/admin/signing-keys", b.gw.base_url()))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    let keys: Value = r.json().await.unwrap();
    assert_eq!(keys[0]["kid"], kid.as_str(), "{keys}");
    let set: Value = client()
        .get(format!("{}/a2a/.well-known/jwks.json", b.gw.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(set["keys"][0]["kid"], kid.as_str(), "{set}");
    // A switch set on A reads on B.
    let r = client()
        .put(format!(
            "{}/admin/workspaces/ws1/card-trust",
            a.gw.base_url()
        ))
        .bearer_auth(ADMIN)
        .json(&json!({"requireSignedCards": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = client()
        .get(format!(
            "{}/admin/workspaces/ws1/card-trust",
            b.gw.base_url()
        ))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["requireSignedCards"], true, "{v}");
    a.stop().await;
    b.stop().await;
    drop(seeding);
}
