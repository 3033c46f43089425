//! A gateway whose registry and task records are on PostgreSQL (issue 32, docs/replicas.md),
//! the rest on its SQLite file, started with `Gateway::with_backends`: a send, a ListTasks and
//! an idempotent retry end to end through a real a2a-agent peer, the bindings and send
//! records in PostgreSQL; and while PostgreSQL is stopped, every caller form is refused with
//! 503 `a2a_store_unavailable` (gRPC: UNAVAILABLE) within a bounded time, whether the
//! registry (the key) or the records (the send's claim, the listing) cannot be read, and is
//! served again once PostgreSQL is back, without restarting the gateway.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_client::{Binding, Version};
use a2a_gateway::config::Config;
use a2a_gateway::ownership::Owner;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::backend::{
    Audit, Holds, PgRecords, PgRegistry, Records, Registry, RegistryStore, SendStore, SqliteAudit,
    SqliteHolds, SqliteRegistry, TaskStore,
};
use a2a_gateway::store::sends::{Outcome, SendKey};
use a2a_gateway::store::{Agent, Store};
use a2a_pg::PoolOptions;
use a2a_pg::testing::TempCluster;
use serde_json::{Value, json};

use crate::common::Env;
use crate::common::callers::{Call, FORMS, Form, call};
use crate::common::leaks::Got;
use crate::idempotent_sends::{OFFERED, caller, counting_peer, send, task_id};
use crate::store_suite::{cluster, wait_listening};

/// Pools that give up quickly on a database that is away (the refusal is bounded by them).
fn quick() -> PoolOptions {
    PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    }
}

/// Waits until `check` holds (bounded: 30 s, a liveness bound, not a speed claim).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..600 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never: {what}");
}

/// Workspace `ws1` with agent `count` at `endpoint` and a key of `ws1` in `registry`.
async fn seed(registry: &impl RegistryStore, endpoint: &str) -> String {
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

/// A gateway (gRPC callers on) over a fresh SQLite file, with `registry` and `records`.
async fn start(
    store: Store,
    dir: tempfile::TempDir,
    key: String,
    backends: (Registry, Records),
) -> Env {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        dev_mode: true,
        serve_grpc: true,
        peer_timeout_secs: 5,
        listen: listener.local_addr().unwrap(),
        ..Config::default()
    };
    let (registry, records) = backends;
    // The audit, approvals and kills stay on the SQLite file here.
    let audit = Audit::Sqlite(SqliteAudit::new(store.clone()));
    let holds = Holds::Sqlite(SqliteHolds::new(store.clone()));
    let gw = Gateway::with_backends(config, store.clone(), registry, records, audit, holds)
        .unwrap()
        .serve(listener)
        .await
        .unwrap();
    Env {
        gw,
        store,
        key,
        http: reqwest::Client::new(),
        _dir: dir,
        peers: vec![],
    }
}

/// A gateway whose registry and records are on database `db` of `cluster`; also the registry.
async fn on_postgres(cluster: &TempCluster, db: &str, endpoint: &str) -> (Env, PgRegistry) {
    cluster.create_database(db).unwrap();
    let registry = PgRegistry::connect(&cluster.url_of(db), &quick())
        .await
        .unwrap();
    assert!(wait_listening(&registry).await);
    let key = seed(&registry, endpoint).await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    let records = Records::Postgres(registry.records());
    let env = start(
        store,
        dir,
        key,
        (Registry::Postgres(registry.clone()), records),
    )
    .await;
    (env, registry)
}

fn owner() -> Owner {
    Owner {
        workspace_id: "ws1".into(),
        agent_id: "count".into(),
    }
}

/// ListTasks (JSON-RPC 1.0): the status and the listed task ids.
async fn list(env: &Env) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    env.rpc("/a2a/count", Some("1.0"), body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_on_postgres_sends_lists_and_answers_a_retry_from_the_first_send() {
    let Some(cluster) = cluster() else { return };
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    let (env, registry) = on_postgres(&cluster, "served", peer.url()).await;
    let mut firsts = Vec::new();
    for (i, (binding, version)) in OFFERED.into_iter().enumerate() {
        let what = format!("{binding:?} {version:?}");
        let c = caller(&env, &env.key, binding, version).await;
        let id = format!("pg-{i}");
        let first = task_id(c.send(send("work", &id)).await.unwrap());
        // The retry is answered from the first send's record: the same task, no peer call.
        assert_eq!(
            task_id(c.send(send("work", &id)).await.unwrap()),
            first,
            "{what}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), i + 1, "{what}");
        firsts.push((id, first));
    }
    // The bindings and send records are PostgreSQL's rows (none in the SQLite file).
    let records = registry.records();
    for (id, task) in &firsts {
        assert_eq!(
            records.owner(peer.url(), task).await.unwrap(),
            Some(owner())
        );
        assert_eq!(env.store.task_owner(peer.url(), task).unwrap(), None);
        let key = SendKey {
            workspace_id: "ws1".into(),
            agent_id: "count".into(),
            message_id: id.clone(),
        };
        assert_eq!(
            records.first_answer(&key).await.unwrap(),
            Some(Outcome::Task(task.clone()))
        );
    }
    // ListTasks is answered from those records: the three tasks, exactly counted.
    let (s, b) = list(&env).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["result"]["totalSize"], 3, "{b}");
    let mut listed: Vec<&str> = b["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = firsts.iter().map(|(_, t)| t.as_str()).collect();
    listed.sort_unstable();
    want.sort_unstable();
    assert_eq!(listed, want);
    // A caller of another workspace reads nothing of them.
    registry.create_workspace("ws2", "Two").await.unwrap();
    let (_, key2) = registry.create_key("ws2", &[], None, None).await.unwrap();
    registry
        .upsert_agent(&Agent {
            workspace_id: "ws2".into(),
            agent_id: "count".into(),
            endpoint: peer.url().into(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .await
        .unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
        "params": {"id": firsts[0].1}});
    let (_, b) = env.rpc_key("/a2a/count", Some("1.0"), body, &key2).await;
    assert_eq!(b["error"]["code"], -32001, "{b}");
    env.stop().await;
    peer.shutdown().await;
}

/// What a caller in `form` got is the store's refusal: 503 with `a2a_store_unavailable`
/// (and `Retry-After`), or over gRPC UNAVAILABLE with the reason in its ErrorInfo; a 0.3
/// JSON-RPC stream refused once its method is known (`sse03`: not at the key) gets it as its
/// one SSE error event.
#[track_caller]
pub(crate) fn assert_store_unavailable(form: Form, c: &Call, got: &Got, sse03: bool) {
    let what = format!("{form:?} {c:?}: {got:?}");
    if form == Form::Grpc {
        assert!(
            got.texts.iter().any(|t| t.starts_with("Unavailable ")),
            "{what}"
        );
        assert!(
            got.texts
                .iter()
                .any(|t| t.contains("A2A_STORE_UNAVAILABLE")),
            "{what}"
        );
        return;
    }
    let status = got.texts[0].as_str();
    let body = &got.values[0];
    match (form, c) {
        (Form::Rpc03 | Form::Path03, Call::Stream(_)) if sse03 => {
            assert!(status.starts_with("200"), "{what}");
            assert_eq!(
                body["error"]["data"]["code"], "a2a_store_unavailable",
                "{what}"
            );
            return;
        }
        (Form::Rpc1 | Form::Path1, _) => {
            let info = &body["error"]["data"][0];
            assert_eq!(info["reason"], "A2A_STORE_UNAVAILABLE", "{what}");
            assert_eq!(info["metadata"]["code"], "a2a_store_unavailable", "{what}");
        }
        (Form::Rpc03 | Form::Path03, _) => {
            assert_eq!(
                body["error"]["data"]["code"], "a2a_store_unavailable",
                "{what}"
            );
        }
        (Form::Rest1, _) => {
            assert_eq!(body["error"]["status"], "UNAVAILABLE", "{what}");
            let info = &body["error"]["details"][0];
            assert_eq!(info["reason"], "A2A_STORE_UNAVAILABLE", "{what}");
        }
        (Form::Rest03, _) => {
            assert_eq!(body["data"]["code"], "a2a_store_unavailable", "{what}");
        }
        (Form::Grpc, _) => unreachable!(),
    }
    assert!(status.starts_with("503"), "{what}");
    assert!(got.texts.iter().any(|t| t == "retry-after: 1"), "{what}");
}

/// Every form's answer to each of `calls` (bounded: a call unanswered after 30 s fails the
/// test, a liveness bound, not a speed claim), checked by [`assert_store_unavailable`].
async fn every_form_refused(env: &Env, calls: &[Call], sse03: bool) {
    let (base, addr) = (env.gw.base_url(), env.gw.local_addr());
    for form in FORMS {
        for c in calls.iter().filter(|c| form.has(c)) {
            let answered = call(&env.http, &base, addr, &env.key, form, "count", c);
            let got = tokio::time::timeout(Duration::from_secs(30), answered)
                .await
                .unwrap_or_else(|_| panic!("{form:?} {c:?}: no answer in 30 s"));
            assert_store_unavailable(form, c, &got, sse03);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_postgres_is_down_every_caller_form_gets_503_and_is_served_again_after() {
    let Some(cluster) = cluster() else { return };
    let runs = Arc::new(AtomicUsize::new(0));
    let peer = counting_peer(runs.clone()).await;
    // The registry and records on PostgreSQL: the key cannot be read.
    let (on_pg, registry) = on_postgres(&cluster, "outage", peer.url()).await;
    // The registry on the SQLite file, the records on PostgreSQL: the key is read, the send's
    // claim and the listing cannot be.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    let sqlite = SqliteRegistry::new(store.clone());
    let key = seed(&sqlite, peer.url()).await;
    cluster.create_database("outage_records").unwrap();
    let records = PgRecords::connect(&cluster.url_of("outage_records"), &quick())
        .await
        .unwrap();
    let mixed = start(
        store,
        dir,
        key,
        (Registry::Sqlite(sqlite), Records::Postgres(records)),
    )
    .await;
    for env in [&on_pg, &mixed] {
        let c = caller(env, &env.key, Binding::JsonRpc, Version::V1).await;
        task_id(c.send(send("work", "before")).await.unwrap());
        assert_eq!(list(env).await.0, 200);
    }
    let before = runs.load(Ordering::SeqCst);

    cluster.stop().unwrap();
    // Once its listener has noticed, the registry asks the database before every read.
    eventually("the registry notices PostgreSQL is away", || async {
        !registry.listening()
    })
    .await;
    let calls = [
        Call::Send("work".into()),
        Call::Stream("work".into()),
        Call::List,
    ];
    every_form_refused(&on_pg, &calls, false).await;
    every_form_refused(&mixed, &calls, true).await;
    // The sends were refused before the peer was called (the claim comes first).
    assert_eq!(runs.load(Ordering::SeqCst), before);

    cluster.start_again().unwrap();
    for env in [&on_pg, &mixed] {
        let c = caller(env, &env.key, Binding::JsonRpc, Version::V1).await;
        let mut n = 0;
        eventually("a send is served again", || {
            n += 1;
            let req = send("work", &format!("after-{n}"));
            let c = &c;
            async move { c.send(req).await.is_ok() }
        })
        .await;
        let (s, b) = list(env).await;
        assert_eq!(s, 200, "{b}");
        assert!(b["result"]["totalSize"].as_u64().unwrap() >= 2, "{b}");
    }
    on_pg.stop().await;
    mixed.stop().await;
    peer.shutdown().await;
}
