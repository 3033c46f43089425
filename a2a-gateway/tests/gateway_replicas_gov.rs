//! Two gateways ("replicas") on one PostgreSQL database (issue 32, docs/replicas.md), each with
//! its own SQLite file for what is not on PostgreSQL yet, started with
//! `Gateway::with_backends`: a blocking send held for approval on replica B is released by a
//! decision made through replica A's admin API (and refused by a denial there); a session
//! kill made on A ends a stream open on B; a policy change made on A refuses the next matching
//! hop on B within 1 s; the hop audit records written by both are all read by either. And on
//! one gateway: an approval whose release meets an unreachable database answers 503
//! `a2a_store_unavailable` and stays pending, and is released once the database is back.

use std::future::Future;
use std::time::Duration;

use a2a_gateway::config::Config;
use a2a_gateway::errors::Version;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::Store;
use a2a_gateway::store::backend::{
    Audit, Holds, PgHolds, PgRegistry, Records, Registry, RegistryStore, SqliteAudit, SqliteHolds,
};
use a2a_pg::PoolOptions;
use a2a_pg::testing::TempCluster;
use serde_json::{Value, json};

use crate::common::echo::{EchoAgent, start_echo};
use crate::common::gov::admin;
use crate::common::{ADMIN, Env, send10};
use crate::store_suite::{cluster, wait_listening};

/// Longest a change may take to reach a replica in the liveness checks (not a speed claim;
/// the policy test's bound is the 1 s).
pub const BOUND: Duration = Duration::from_secs(20);

/// Pools that give up quickly on a database that is away.
fn quick() -> PoolOptions {
    PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    }
}

/// Waits until `check` holds, within [`BOUND`].
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let until = tokio::time::Instant::now() + BOUND;
    while tokio::time::Instant::now() < until {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("never: {what}");
}

/// One replica on database `db`: registry, task records, audit, approvals and kills (and so
/// policies and PII rules, which go with the registry) on PostgreSQL; its own SQLite file for
/// the rest. `key` is the caller's key (made on the first replica).
pub(crate) async fn replica(cluster: &TempCluster, db: &str, key: &str) -> Env {
    let url = cluster.url_of(db);
    let registry = PgRegistry::connect(&url, &quick()).await.unwrap();
    assert!(wait_listening(&registry).await);
    let holds = PgHolds::connect(&url, &quick()).await.unwrap();
    eventually("the holds listen", || async { holds.listening() }).await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    serve(
        store,
        dir,
        key,
        Registry::Postgres(registry.clone()),
        Records::Postgres(registry.records()),
        Audit::Postgres(registry.audit()),
        Holds::Postgres(holds),
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn serve(
    store: Store,
    dir: tempfile::TempDir,
    key: &str,
    registry: Registry,
    records: Records,
    audit: Audit,
    holds: Holds,
) -> Env {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        dev_mode: true,
        admin_token: Some(ADMIN.into()),
        peer_timeout_secs: 5,
        approval_wait_secs: 30,
        listen: listener.local_addr().unwrap(),
        ..Config::default()
    };
    let gw = Gateway::with_backends(config, store.clone(), registry, records, audit, holds)
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    Env {
        gw,
        store,
        key: key.to_owned(),
        http: reqwest::Client::new(),
        _dir: dir,
        peers: vec![],
    }
}

/// Database `db` with workspace `ws1`, its agent `echo` (a 1.0 echo peer) and a key.
pub(crate) async fn seed(cluster: &TempCluster, db: &str) -> (EchoAgent, String) {
    cluster.create_database(db).unwrap();
    let registry = PgRegistry::connect(&cluster.url_of(db), &quick())
        .await
        .unwrap();
    let peer = start_echo(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        Version::V1,
        None,
    )
    .await
    .unwrap();
    registry.create_workspace("ws1", "One").await.unwrap();
    registry
        .upsert_agent(&a2a_gateway::store::Agent {
            workspace_id: "ws1".into(),
            agent_id: "echo".into(),
            endpoint: peer.url.clone(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .await
        .unwrap();
    let (_, key) = registry.create_key("ws1", &[], None, None).await.unwrap();
    (peer, key)
}

pub fn policy() -> Value {
    json!({"rules": [{"id": "needs-a-person", "when": "skill == 'refund'", "decision": "approve"}]})
}

/// A 1.0 SendMessage with `skill` in its metadata (blocking: the caller waits).
pub fn send_with(text: &str, skill: &str) -> Value {
    let mut r = send10(text);
    r["params"]["metadata"] = json!({"skill": skill});
    r
}

/// The pending approval of `ws1` as `env`'s admin API lists it, once there is one.
pub async fn pending_one(env: &Env) -> String {
    let until = tokio::time::Instant::now() + BOUND;
    while tokio::time::Instant::now() < until {
        let (_, q) = admin(
            env,
            "GET",
            "/admin/workspaces/ws1/approvals?state=pending",
            None,
        )
        .await;
        if let Some(id) = q
            .as_array()
            .and_then(|a| a.first())
            .and_then(|a| a["id"].as_str())
        {
            return id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("never: an approval is pending");
}

/// A blocking send on `env`, answered later.
pub fn blocking_send(env: &Env, body: Value) -> tokio::task::JoinHandle<Value> {
    let (url, key, http) = (env.url("/a2a/echo"), env.key.clone(), env.http.clone());
    tokio::spawn(async move {
        http.post(url)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(key)
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_or_a_kill_made_on_one_replica_reaches_the_other() {
    let Some(cluster) = cluster() else { return };
    let (peer, key) = seed(&cluster, "holds").await;
    let a = replica(&cluster, "holds", &key).await;
    let b = replica(&cluster, "holds", &key).await;
    // The policy is written through A: it governs B's hops too.
    let (s, r) = admin(&a, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{r}");

    // (a) A blocking send held on B, approved through A: B's caller gets the released task.
    let caller = blocking_send(&b, send_with("refund 10", "refund"));
    let id = pending_one(&a).await;
    assert!(peer.last_body().is_null(), "nothing sent while held");
    let (s, r) = admin(
        &a,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/approve"),
        Some(json!({"approver": "ana"})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let peer_task = r["peerTaskId"].as_str().unwrap().to_owned();
    let got = tokio::time::timeout(BOUND, caller).await.unwrap().unwrap();
    let task = &got["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{got}");
    assert_eq!(task["id"], format!("gw-approval-{id}"), "{got}");
    assert_eq!(task["metadata"]["peerTaskId"], peer_task.as_str(), "{got}");
    // The peer got the held request, sent by A.
    assert!(peer.last_body().to_string().contains("refund 10"));

    // A denial made on A refuses the send held on B, with the approver's reason.
    let caller = blocking_send(&b, send_with("refund 20", "refund"));
    let id = pending_one(&a).await;
    let (s, r) = admin(
        &a,
        "POST",
        &format!("/admin/workspaces/ws1/approvals/{id}/deny"),
        Some(json!({"approver": "ana", "reason": "over budget"})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let got = tokio::time::timeout(BOUND, caller).await.unwrap().unwrap();
    let task = &got["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_REJECTED", "{got}");
    assert_eq!(task["metadata"]["code"], "a2a_approval_denied", "{got}");
    assert_eq!(task["metadata"]["denialReason"], "over budget", "{got}");
    assert!(!peer.last_body().to_string().contains("refund 20"));

    // (b) A stream open on B (a held streaming send of context `ctx-b`), killed through A.
    let mut req = send_with("refund 30", "refund");
    req["method"] = json!("SendStreamingMessage");
    req["params"]["message"]["contextId"] = json!("ctx-b");
    let stream = {
        let (url, key, http) = (b.url("/a2a/echo"), b.key.clone(), b.http.clone());
        tokio::spawn(async move {
            let resp = http
                .post(url)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .bearer_auth(key)
                .body(req.to_string())
                .send()
                .await
                .unwrap();
            resp.text().await.unwrap()
        })
    };
    pending_one(&a).await;
    let (s, r) = admin(
        &a,
        "POST",
        "/admin/workspaces/ws1/kill",
        Some(json!({"kind": "context", "id": "ctx-b"})),
    )
    .await;
    assert_eq!(s, 201, "{r}");
    let text = tokio::time::timeout(BOUND, stream)
        .await
        .expect("the stream on B ended")
        .unwrap();
    assert!(text.contains("a2a_session_killed"), "{text}");
    // A send naming the killed context is refused on B too.
    let mut again = send10("more");
    again["params"]["message"]["contextId"] = json!("ctx-b");
    let (_, r) = b.rpc("/a2a/echo", Some("1.0"), again).await;
    assert!(r.to_string().contains("a2a_session_killed"), "{r}");
    a.stop().await;
    b.stop().await;
    peer.shutdown().await;
}

/// Audit rows of workspace `ws1` as `env`'s export reads them.
async fn exported(env: &Env) -> Vec<Value> {
    let text = env
        .http
        .get(env.url("/admin/audit?workspace=ws1"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_change_on_one_replica_governs_the_other_and_audits_are_shared() {
    let Some(cluster) = cluster() else { return };
    let (peer, key) = seed(&cluster, "docs").await;
    let a = replica(&cluster, "docs", &key).await;
    let b = replica(&cluster, "docs", &key).await;

    // (d) Hops through both replicas: every hop once in either's export and listing. A hop's
    // record is committed before its answer: the other replica reads it at once.
    let mut sent = 0;
    for (env, other, name) in [(&a, &b, "a"), (&b, &a, "b"), (&a, &b, "a"), (&b, &a, "b")] {
        let (s, r) = env
            .rpc("/a2a/echo", Some("1.0"), send_with(name, "plain"))
            .await;
        assert_eq!(s, 200, "{r}");
        assert!(r.get("result").is_some(), "{r}");
        sent += 1;
        let done = exported(other)
            .await
            .iter()
            .filter(|r| r["outcome"] != "incomplete" && r["decision"] == "allowed")
            .count();
        assert_eq!(
            done, sent,
            "the other replica reads every finished hop at once"
        );
    }
    for env in [&a, &b] {
        let rows = exported(env).await;
        let sends: Vec<&Value> = rows
            .iter()
            .filter(|r| r["operation"] == "message/send" || r["operation"] == "SendMessage")
            .collect();
        assert_eq!(sends.len(), sent, "{rows:?}");
        let traces: std::collections::HashSet<&str> = sends
            .iter()
            .map(|r| r["traceId"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(traces.len(), sent, "one record per hop: {rows:?}");
        let (s, listed) = admin(env, "GET", "/admin/hops?workspace=ws1", None).await;
        assert_eq!(s, 200, "{listed}");
        assert_eq!(listed.as_array().unwrap().len(), rows.len(), "{listed}");
    }

    // (c) B allows a send of skill `blocked` until A's policy refuses it: B refuses the next
    // one within 1 s of A's answer (polled).
    let (s, r) = b
        .rpc("/a2a/echo", Some("1.0"), send_with("before", "blocked"))
        .await;
    assert_eq!(s, 200, "{r}");
    assert!(r.get("result").is_some(), "{r}");
    let deny =
        json!({"rules": [{"id": "no-blocked", "when": "skill == 'blocked'", "decision": "deny"}]});
    let (s, r) = admin(&a, "PUT", "/admin/workspaces/ws1/policy", Some(deny)).await;
    assert_eq!(s, 200, "{r}");
    let changed = std::time::Instant::now();
    let refused = loop {
        let (_, r) = b
            .rpc("/a2a/echo", Some("1.0"), send_with("after", "blocked"))
            .await;
        if r.to_string().contains("a2a_policy_denied") {
            break true;
        }
        if changed.elapsed() > Duration::from_secs(1) {
            break false;
        }
    };
    assert!(
        refused,
        "replica B still allowed the hop 1 s after A's change"
    );
    // And its removal on A allows it on B again.
    let (s, _) = admin(&a, "DELETE", "/admin/workspaces/ws1/policy", None).await;
    assert_eq!(s, 204);
    eventually("B allows the hop again", || async {
        let (_, r) = b
            .rpc("/a2a/echo", Some("1.0"), send_with("again", "blocked"))
            .await;
        r.get("result").is_some()
    })
    .await;
    a.stop().await;
    b.stop().await;
    peer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_that_meets_an_unreachable_database_stays_pending_and_can_be_retried() {
    let Some(cluster) = cluster() else { return };
    let (peer, key) = seed(&cluster, "blip").await;
    // The registry (keys, agents, policies) on PostgreSQL; approvals and audit on the file.
    let registry = PgRegistry::connect(&cluster.url_of("blip"), &quick())
        .await
        .unwrap();
    assert!(wait_listening(&registry).await);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    // The approvals on the file refer to its workspaces.
    store.create_workspace("ws1", "One").unwrap();
    let env = serve(
        store.clone(),
        dir,
        &key,
        Registry::Postgres(registry.clone()),
        Records::Postgres(registry.records()),
        Audit::Sqlite(SqliteAudit::new(store.clone())),
        Holds::Sqlite(SqliteHolds::new(store.clone())),
    )
    .await;
    let (s, r) = admin(&env, "PUT", "/admin/workspaces/ws1/policy", Some(policy())).await;
    assert_eq!(s, 200, "{r}");
    let mut held = send_with("refund 50", "refund");
    held["params"]["configuration"] = json!({"returnImmediately": true});
    let (s, r) = env.rpc("/a2a/echo", Some("1.0"), held).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{r}"
    );
    let id = pending_one(&env).await;

    cluster.stop().unwrap();
    eventually("the registry notices PostgreSQL is away", || async {
        !registry.listening()
    })
    .await;
    let approve = format!("/admin/workspaces/ws1/approvals/{id}/approve");
    let (s, r) = admin(&env, "POST", &approve, Some(json!({"approver": "ana"}))).await;
    assert_eq!(s, 503, "{r}");
    assert!(r.to_string().contains("a2a_store_unavailable"), "{r}");
    // Nothing was decided: the approval is pending, the peer was not called.
    let (s, r) = admin(
        &env,
        "GET",
        &format!("/admin/workspaces/ws1/approvals/{id}"),
        None,
    )
    .await;
    assert_eq!((s, r["state"].as_str()), (200, Some("pending")), "{r}");
    assert!(peer.last_body().is_null());

    cluster.start_again().unwrap();
    let until = tokio::time::Instant::now() + BOUND;
    let answer = loop {
        let (s, r) = admin(&env, "POST", &approve, Some(json!({"approver": "ana"}))).await;
        if s == 200 {
            break r;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "never released once PostgreSQL is back: {s} {r}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(answer["peerTaskId"].is_string(), "{answer}");
    assert!(peer.last_body().to_string().contains("refund 50"));
    env.stop().await;
    peer.shutdown().await;
}

/// With the audit on PostgreSQL a hop's record is committed before its answer leaves: while
/// the audit table is locked against inserts (after the hop's intent was written), the caller
/// gets no answer; once the lock goes, it gets it, and the record is in the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hops_record_is_committed_before_its_answer_leaves() {
    let Some(cluster) = cluster() else { return };
    let (peer, key) = seed(&cluster, "durable").await;
    let url = cluster.url_of("durable");
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let slow = crate::common::gov::agent(move |_ctx| {
        let g = g.clone();
        Box::pin(async move {
            let _ = g.acquire().await;
            Ok(a2a_agent::handler::Reply::text("done"))
        })
    })
    .await;
    let registry = PgRegistry::connect(&url, &quick()).await.unwrap();
    registry
        .upsert_agent(&a2a_gateway::store::Agent {
            workspace_id: "ws1".into(),
            agent_id: "slow".into(),
            endpoint: slow.url().to_owned(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .await
        .unwrap();
    let a = replica(&cluster, "durable", &key).await;
    let pool = a2a_pg::pool(&url, &PoolOptions::default()).unwrap();
    let rows = |pool: a2a_pg::Pool| async move {
        let c = pool.get().await.unwrap();
        let n: i64 = c
            .query_one("SELECT count(*) FROM audit WHERE workspace_id = 'ws1'", &[])
            .await
            .unwrap()
            .get(0);
        n
    };
    let caller = {
        let (u, k, http) = (a.url("/a2a/slow"), a.key.clone(), a.http.clone());
        tokio::spawn(async move {
            http.post(u)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .bearer_auth(k)
                .body(send10("slowly").to_string())
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    // The intent is on record (the peer is being called); then inserts are locked out.
    eventually("the hop's intent is committed", || {
        let pool = pool.clone();
        async move { rows(pool).await == 1 }
    })
    .await;
    let locker = pool.get().await.unwrap();
    locker
        .batch_execute("BEGIN; LOCK TABLE audit IN SHARE MODE")
        .await
        .unwrap();
    gate.add_permits(1);
    let mut caller = caller;
    assert!(
        tokio::time::timeout(Duration::from_secs(1), &mut caller)
            .await
            .is_err(),
        "the answer left before its audit record could be committed"
    );
    locker.batch_execute("COMMIT").await.unwrap();
    let got = tokio::time::timeout(BOUND, caller).await.unwrap().unwrap();
    assert!(got.get("result").is_some(), "{got}");
    assert_eq!(
        rows(pool.clone()).await,
        2,
        "the intent and the hop's record"
    );
    a.stop().await;
    slow.shutdown().await;
    peer.shutdown().await;
}
