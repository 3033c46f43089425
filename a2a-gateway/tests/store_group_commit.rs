//! The group-commit writer of a replica on PostgreSQL (issue 32, docs/replicas.md "Where the
//! time goes"): the durable writes of hops in flight at once (claim, intent, completion of the
//! claim, the hop's record, a task binding) share transactions, so many hops cost fewer commits
//! than hops; every write is committed when its call returns; and one job's refusal is its own
//! answer, not its batch's.
//!
//! Commits are counted as transaction ids: every transaction that writes takes one, read-only
//! ones do not, so the ids taken between two probes are the write commits in between (plus one
//! for the probe). `pg_stat_database.xact_commit` would count them too, but each backend
//! reports it lazily (up to seconds later).

use a2a_gateway::store::backend::{AuditStore, SendStore, TaskStore};
use a2a_gateway::store::sends::{Claimed, Outcome};
use a2a_gateway::store::{AuditRecord, Bound, StoreError};

use crate::store_race::key;
use crate::store_records::{E, owner};
use crate::store_suite::{cluster, pg};

/// The next transaction id (takes one).
async fn xid(url: &str) -> i64 {
    let (c, conn) = a2a_pg::tokio_postgres::connect(url, a2a_pg::tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(conn);
    let row = c
        .query_one("SELECT pg_current_xact_id()::text::bigint", &[])
        .await
        .unwrap();
    drop(c);
    let _ = task.await;
    row.get(0)
}

fn rec(trace: &str) -> AuditRecord {
    AuditRecord {
        trace_id: trace.into(),
        workspace_id: Some("w1".into()),
        target: Some("a".into()),
        decision: "allowed".into(),
        status: 200,
        ..AuditRecord::default()
    }
}

/// The trace id of each audit row numbered `seqs` (intents only), read on a connection of its
/// own.
async fn intent_traces(url: &str, seqs: &[i64]) -> Vec<Option<String>> {
    let (c, conn) = a2a_pg::tokio_postgres::connect(url, a2a_pg::tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(conn);
    let mut traces = Vec::new();
    for seq in seqs {
        let row = c
            .query_opt(
                "SELECT trace_id FROM audit WHERE seq = $1 AND phase = 'intent'",
                &[seq],
            )
            .await
            .unwrap();
        traces.push(row.map(|r| r.get(0)));
    }
    drop(c);
    let _ = task.await;
    traces
}

/// One echo hop's durable writes, in the hop's order: claim, intent, bind, completion of the
/// claim, the hop's record; returns the number its intent was given.
async fn hop<A: AuditStore, R: SendStore + TaskStore>(a: &A, r: &R, i: usize) -> i64 {
    let k = key("w1", &format!("m{i}"));
    assert_eq!(r.claim(&k, "d", 100, 0, 0).await.unwrap(), Claimed::First);
    let intent = a.intent(&rec(&format!("t{i}"))).await.unwrap();
    let task = format!("task-{i}");
    assert_eq!(r.bind(E, &task, &owner("w1")).await.unwrap(), Bound::New);
    r.complete(&k, &Outcome::Task(task)).await.unwrap();
    a.durable(&rec(&format!("t{i}")), Some(&intent))
        .await
        .unwrap();
    intent.seq().expect("a committed intent has its number")
}

/// 64 hops at once commit in fewer transactions than there are hops (each hop makes five
/// durable writes, five commits when each statement commits alone), and each write is on
/// record once its call returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_hops_share_commits() {
    let Some(cluster) = cluster() else { return };
    let reg = pg(&cluster, "group").await;
    let url = cluster.url_of("group");
    let (a, r) = (reg.audit(), reg.records());
    // The first statements of the pool's connections (prepares, catalog reads) out of the count.
    hop(&a, &r, 0).await;
    let before = xid(&url).await;
    let hops = 64;
    let seqs = futures::future::join_all((1..=hops).map(|i| hop(&a, &r, i))).await;
    let after = xid(&url).await;
    let commits = after - before - 1;
    assert!(
        commits < hops as i64,
        "{hops} hops took {commits} commits (5 per hop without group commit)"
    );
    // Everything is on record, read on another connection.
    for i in 1..=hops {
        let k = key("w1", &format!("m{i}"));
        let first = r.first_answer(&k).await.unwrap();
        assert_eq!(first, Some(Outcome::Task(format!("task-{i}"))), "send {i}");
        let bound = r.owner(E, &format!("task-{i}")).await.unwrap();
        assert_eq!(bound, Some(owner("w1")), "binding {i}");
    }
    // Each intent got the number of its own row (a batch of intents inserted in one
    // statement hands each caller its row's number, not a neighbour's).
    let traces = intent_traces(&url, &seqs).await;
    for (i, trace) in (1..=hops).zip(traces) {
        assert_eq!(trace, Some(format!("t{i}")), "intent of hop {i}");
    }
    let rows = a.records(Some("w1"), None, 0, 1000).await.unwrap();
    assert_eq!(rows.len(), hops + 1, "one record per hop");
    assert!(
        rows.iter()
            .all(|r| r.outcome.as_deref() != Some("incomplete"))
    );
}

/// A job refused inside a batch (a task id with a NUL character, which PostgreSQL's text
/// refuses) fails alone: the hops batched with it still commit, and it gets its own refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_fails_alone_not_its_batch() {
    let Some(cluster) = cluster() else { return };
    let reg = pg(&cluster, "refused").await;
    let (a, r) = (reg.audit(), reg.records());
    hop(&a, &r, 0).await;
    let good = futures::future::join_all((1..=16).map(|i| hop(&a, &r, i)));
    let w1 = owner("w1");
    let bad = r.bind(E, "orphan\0", &w1);
    let (_, bad) = futures::join!(good, bad);
    let err = bad.unwrap_err();
    assert!(
        matches!(&err, StoreError::Postgres(_)) && !err.is_unavailable(),
        "{err:?}"
    );
    for i in 1..=16 {
        let k = key("w1", &format!("m{i}"));
        assert!(r.first_answer(&k).await.unwrap().is_some(), "send {i}");
    }
    let rows = a.records(Some("w1"), None, 0, 1000).await.unwrap();
    assert_eq!(rows.len(), 17, "one record per hop");
}
