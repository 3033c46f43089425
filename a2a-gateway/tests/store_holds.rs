//! One suite for approvals (held requests) and session kills, written once against
//! `HoldStore` and run on both backends (issue 32): a SQLite file and a throwaway PostgreSQL
//! cluster. Duplicates and missing workspaces are refused alike; counts, lists and keyset pages
//! (ids in byte order) agree; a decision moves only a pending approval; a waiter wakes on the
//! decision; a kill is recorded once and streamed. On PostgreSQL, two replicas (two pools on
//! one database): an approval decided through A wakes a waiter on B, also when B's listener
//! was cut meanwhile; a kill made on A is streamed on B; with the database stopped calls fail
//! as unavailable and work again after the restart.

use std::time::Duration;

use a2a_gateway::store::backend::{
    Approval, ApprovalSummary, HoldStore, Holds, Kill, PgHolds, RegistryStore, SqliteHolds,
    SqliteRegistry,
};
use a2a_gateway::store::{Store, StoreError};
use a2a_pg::PoolOptions;
use serde_json::json;

use crate::store_suite::{cluster, pg};

/// Longest a waiter or stream may take to see a change (a liveness bound, not a speed claim).
const BOUND: Duration = Duration::from_secs(20);

fn approval(ws: &str, id: &str, created_at: i64) -> Approval {
    Approval {
        summary: ApprovalSummary {
            id: id.into(),
            workspace_id: ws.into(),
            agent_id: "echo".into(),
            caller_version: "1.0".into(),
            preview: json!({"operation": "SendMessage", "text": "hello"}),
            context_id: format!("ctx-{id}"),
            state: "pending".into(),
            rule: Some("hold-all".into()),
            approver: None,
            reason: None,
            peer_task_id: None,
            chain: vec!["caller".into(), "echo".into()],
            extensions: vec!["urn:x:e".into()],
            created_at,
            expires_at: created_at + 3600,
            key_id: Some("k1".into()),
            refusal: None,
        },
        params: format!(r#"{{"message":{{"messageId":"{id}"}}}}"#),
    }
}

fn kill(ws: &str, kind: &str, id: &str) -> Kill {
    Kill {
        workspace_id: ws.into(),
        kind: kind.into(),
        id: id.into(),
        agent_id: Some("echo".into()),
        reason: Some("runaway".into()),
        killed_at: 0,
    }
}

/// The whole suite, on a store whose workspaces `wa` and `wb` exist and hold nothing.
pub async fn suite<H: HoldStore>(h: &H) {
    approvals(h).await;
    waiting(h).await;
    kills(h).await;
}

async fn approvals<H: HoldStore>(h: &H) {
    // Ids a locale would order otherwise than bytes, three of them created at one time.
    for (id, at) in [
        ("a1", 100),
        ("B2", 200),
        ("_c3", 200),
        ("b4", 200),
        ("e5", 300),
    ] {
        h.create_approval(&approval("wa", id, at)).await.unwrap();
    }
    h.create_approval(&approval("wb", "z9", 100)).await.unwrap();
    match h.create_approval(&approval("wa", "a1", 1)).await {
        Err(StoreError::Invalid(m)) => assert_eq!(m, "approval a1 already exists"),
        other => panic!("{other:?}"),
    }
    match h.create_approval(&approval("nope", "n1", 1)).await {
        Err(StoreError::NotFound(m)) => assert_eq!(m, "workspace nope"),
        other => panic!("{other:?}"),
    }

    let a = h.approval("wa", "a1").await.unwrap().unwrap();
    assert_eq!(a, approval("wa", "a1", 100), "round trip");
    assert_eq!(
        h.approval_summary("wa", "B2").await.unwrap().unwrap(),
        approval("wa", "B2", 200).summary
    );
    // One workspace reads nothing of another's.
    assert_eq!(h.approval("wb", "a1").await.unwrap(), None);
    assert_eq!(h.approval_summary("wa", "z9").await.unwrap(), None);

    assert_eq!(h.approval_count("wa", "pending").await.unwrap(), 5);
    assert_eq!(h.approval_count("wa", "approved").await.unwrap(), 0);
    assert_eq!(
        h.pending_by_workspace().await.unwrap(),
        [("wa".to_owned(), 5), ("wb".to_owned(), 1)]
    );

    // Newest first, then ids in byte order, descending; pages by keyset add up.
    let order = ["e5", "b4", "_c3", "B2", "a1"];
    let ids = |p: &[ApprovalSummary]| p.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
    assert_eq!(
        ids(&h.summaries("wa", None, None, 100).await.unwrap()),
        order
    );
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = h.summaries("wa", None, after.as_deref(), 2).await.unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 2);
        after = page.last().map(|s| s.id.clone());
        paged.extend(ids(&page));
    }
    assert_eq!(paged, order);
    match h.summaries("wa", None, Some("z9"), 2).await {
        Err(StoreError::NotFound(m)) => assert_eq!(m, "approval z9"),
        other => panic!("{other:?}"),
    }

    // A decision moves a pending approval once.
    assert!(
        h.decide("wa", "a1", "approved", Some("ops"), Some("ok"))
            .await
            .unwrap()
    );
    assert!(
        !h.decide("wa", "a1", "denied", Some("late"), None)
            .await
            .unwrap()
    );
    assert!(
        !h.decide("wb", "B2", "denied", None, None).await.unwrap(),
        "another workspace decides nothing"
    );
    let s = h.approval_summary("wa", "a1").await.unwrap().unwrap();
    assert_eq!(
        (s.state.as_str(), s.approver.as_deref(), s.reason.as_deref()),
        ("approved", Some("ops"), Some("ok"))
    );
    let approved = h.summaries("wa", Some("approved"), None, 10).await.unwrap();
    assert_eq!(ids(&approved), ["a1"]);
    // An approved hop not sent fails once; one with its peer task does not.
    let refusal = json!({"code": "a2a_key_revoked", "status": 401});
    assert!(h.fail("wa", "a1", &refusal).await.unwrap());
    assert!(!h.fail("wa", "a1", &refusal).await.unwrap());
    let s = h.approval_summary("wa", "a1").await.unwrap().unwrap();
    assert_eq!((s.state.as_str(), s.refusal), ("failed", Some(refusal)));
    assert!(h.decide("wa", "B2", "approved", None, None).await.unwrap());
    h.set_peer_task("wa", "B2", "peer-t").await.unwrap();
    assert!(!h.fail("wa", "B2", &json!({})).await.unwrap());
    let s = h.approval_summary("wa", "B2").await.unwrap().unwrap();
    assert_eq!(s.peer_task_id.as_deref(), Some("peer-t"));

    // Expiry: the pending ones whose hold ended.
    assert_eq!(h.expire_due("wa", 200 + 3600).await.unwrap(), 2);
    assert_eq!(h.approval_count("wa", "expired").await.unwrap(), 2);
    assert_eq!(h.approval_count("wa", "pending").await.unwrap(), 1);
}

async fn waiting<H: HoldStore>(h: &H) {
    // Decided already, or missing: at once.
    let s = h.decision("wa", "a1", BOUND).await.unwrap().unwrap();
    assert_eq!(s.state, "failed");
    assert_eq!(h.decision("wa", "nope", BOUND).await.unwrap(), None);
    // Pending past the wait: returned pending.
    let s = h
        .decision("wa", "e5", Duration::from_millis(50))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s.state, "pending");
    // A waiter wakes on the decision (its wait is far longer than the bound).
    let waiter = {
        let h = h.clone();
        tokio::spawn(async move { h.decision("wa", "e5", Duration::from_secs(600)).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        h.decide("wa", "e5", "denied", Some("ops"), Some("no"))
            .await
            .unwrap()
    );
    let s = tokio::time::timeout(BOUND, waiter)
        .await
        .expect("the waiter wakes")
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (s.state.as_str(), s.reason.as_deref()),
        ("denied", Some("no"))
    );
}

async fn kills<H: HoldStore>(h: &H) {
    let before = kill("wa", "context", "c-old");
    h.add_kill(&before).await.unwrap();
    let mut stream = h.kill_events().await.unwrap();
    h.add_kill(&kill("wa", "task", "t1")).await.unwrap();
    h.add_kill(&kill("wa", "task", "t1")).await.unwrap();
    match h.add_kill(&kill("nope", "task", "t1")).await {
        Err(StoreError::NotFound(m)) => assert_eq!(m, "workspace nope"),
        other => panic!("{other:?}"),
    }
    let listed = h.kills("wa").await.unwrap();
    assert_eq!(listed.len(), 2, "recorded once: {listed:?}");
    assert!(listed.iter().all(|k| k.killed_at > 0));
    assert!(h.kills("wb").await.unwrap().is_empty());
    // The stream hands out the new kill, once, not the one standing before it.
    let k = tokio::time::timeout(BOUND, stream.next())
        .await
        .expect("the kill is streamed")
        .unwrap();
    assert_eq!((k.kind.as_str(), k.id.as_str()), ("task", "t1"));
    h.add_kill(&kill("wb", "context", "c2")).await.unwrap();
    let k = tokio::time::timeout(BOUND, stream.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((k.workspace_id.as_str(), k.id.as_str()), ("wb", "c2"));
    // A lift removes that kill only (the same id in another workspace or of another kind
    // stands), once.
    h.add_kill(&kill("wa", "context", "c2")).await.unwrap();
    assert!(h.lift_kill("wb", "context", "c2").await.unwrap());
    assert!(!h.lift_kill("wb", "context", "c2").await.unwrap());
    assert!(!h.lift_kill("wa", "task", "c2").await.unwrap());
    assert!(h.kills("wb").await.unwrap().is_empty());
    assert!(h.kills("wa").await.unwrap().iter().any(|k| k.id == "c2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holds_suite_on_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    let reg = SqliteRegistry::new(store.clone());
    reg.create_workspace("wa", "A").await.unwrap();
    reg.create_workspace("wb", "B").await.unwrap();
    suite(&Holds::Sqlite(SqliteHolds::new(store))).await;
}

async fn pg_holds(cluster: &a2a_pg::testing::TempCluster, db: &str, opts: &PoolOptions) -> PgHolds {
    let reg = pg(cluster, db).await;
    reg.create_workspace("wa", "A").await.unwrap();
    reg.create_workspace("wb", "B").await.unwrap();
    PgHolds::connect(&cluster.url_of(db), opts).await.unwrap()
}

/// Waits (bounded) until the holds hear notifications.
async fn listening(h: &PgHolds) {
    for _ in 0..500 {
        if h.listening() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never listening");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holds_suite_on_postgres() {
    let Some(cluster) = cluster() else { return };
    let h = pg_holds(&cluster, "holds", &PoolOptions::default()).await;
    listening(&h).await;
    suite(&Holds::Postgres(h)).await;
}

/// Two replicas: a decision made through A wakes B's waiter, a kill made on A is streamed on
/// B; after B's connections are cut (its listener misses what is said meanwhile), B's waiter
/// still wakes on A's decision, by the re-read after reconnecting or the poll; of the two
/// deciding one approval at once, exactly one moves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_and_a_kill_on_one_replica_reach_another() {
    let Some(cluster) = cluster() else { return };
    let a = pg_holds(&cluster, "replicas", &PoolOptions::default()).await;
    let b_opts = PoolOptions {
        application_name: "replica-b".into(),
        ..PoolOptions::default()
    };
    let b = PgHolds::connect(&cluster.url_of("replicas"), &b_opts)
        .await
        .unwrap();
    listening(&a).await;
    listening(&b).await;
    a.create_approval(&approval("wa", "x1", 100)).await.unwrap();
    a.create_approval(&approval("wa", "x2", 100)).await.unwrap();

    let waiter = {
        let b = b.clone();
        tokio::spawn(async move { b.decision("wa", "x1", Duration::from_secs(600)).await })
    };
    let mut kills = b.kill_events().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        a.decide("wa", "x1", "approved", Some("ops"), None)
            .await
            .unwrap()
    );
    let s = tokio::time::timeout(BOUND, waiter)
        .await
        .expect("B's waiter wakes on A's decision")
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(s.state, "approved");
    // Decided on A first: B's own decision is refused.
    assert!(!b.decide("wa", "x1", "denied", None, None).await.unwrap());

    a.add_kill(&kill("wa", "context", "ctx-9")).await.unwrap();
    let k = tokio::time::timeout(BOUND, kills.next())
        .await
        .expect("B streams A's kill")
        .unwrap();
    assert_eq!(k.id, "ctx-9");

    // B's sessions cut (the listener's too); A decides while B reconnects.
    let waiter = {
        let b = b.clone();
        tokio::spawn(async move { b.decision("wa", "x2", Duration::from_secs(600)).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let admin = a2a_pg::pool(&cluster.url_of("replicas"), &PoolOptions::default()).unwrap();
    let cut: i64 = admin
        .get()
        .await
        .unwrap()
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE application_name = 'replica-b'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(cut >= 1);
    assert!(a.decide("wa", "x2", "denied", None, None).await.unwrap());
    let s = tokio::time::timeout(BOUND, waiter)
        .await
        .expect("B's waiter wakes after its listener was away")
        .unwrap();
    // The cut may fail the waiter's read in flight: then it says so, as unavailable.
    match s {
        Ok(Some(s)) => assert_eq!(s.state, "denied"),
        Err(e) => assert!(e.is_unavailable(), "{e:?}"),
        Ok(None) => panic!("the approval is there"),
    }
    listening(&b).await;
    assert_eq!(
        b.decision("wa", "x2", BOUND).await.unwrap().unwrap().state,
        "denied"
    );

    // Both replicas decide one approval at the same instant: exactly one moves it.
    for i in 0..20 {
        let id = format!("race{i}");
        a.create_approval(&approval("wa", &id, 100)).await.unwrap();
        let (x, y) = tokio::join!(
            a.decide("wa", &id, "approved", Some("a"), None),
            b.decide("wa", &id, "denied", Some("b"), None)
        );
        let (x, y) = (x.unwrap(), y.unwrap());
        assert!(x != y, "{id}: exactly one decides ({x}, {y})");
        let s = b.approval_summary("wa", &id).await.unwrap().unwrap();
        let winner = if x {
            ("approved", "a")
        } else {
            ("denied", "b")
        };
        assert_eq!(
            (s.state.as_str(), s.approver.as_deref()),
            (winner.0, Some(winner.1))
        );
    }
}

/// With the database stopped, calls fail as unavailable; after the restart they work, and a
/// kill made meanwhile elsewhere is streamed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_postgres_is_down_hold_calls_fail_as_unavailable() {
    let Some(cluster) = cluster() else { return };
    let quick = PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    };
    let a = pg_holds(&cluster, "outage", &quick).await;
    listening(&a).await;
    a.create_approval(&approval("wa", "o1", 100)).await.unwrap();
    let mut kills = a.kill_events().await.unwrap();
    cluster.stop().unwrap();
    for r in [
        a.approval_summary("wa", "o1").await.map(|_| ()),
        a.decide("wa", "o1", "approved", None, None)
            .await
            .map(|_| ()),
        a.add_kill(&kill("wa", "task", "t")).await,
        a.decision("wa", "o1", BOUND).await.map(|_| ()),
    ] {
        let err = r.unwrap_err();
        assert!(err.is_unavailable(), "{err:?}");
    }
    cluster.start_again().unwrap();
    let mut ok = false;
    for _ in 0..100 {
        if a.add_kill(&kill("wa", "task", "t2")).await.is_ok() {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "works again after the restart");
    // The stream survives the outage: its reads failed meanwhile, then it hands out the kill.
    let k = loop {
        match tokio::time::timeout(BOUND, kills.next()).await.unwrap() {
            Ok(k) => break k,
            Err(e) => assert!(e.is_unavailable(), "{e:?}"),
        }
    };
    assert_eq!(k.id, "t2");
    assert!(a.decide("wa", "o1", "approved", None, None).await.unwrap());
}
