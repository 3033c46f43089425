//! Idempotent sends on both backends (issue 32): the claim rules (run by the suite of
//! `store_records`), then two "replicas" racing: two PostgreSQL pools on one database (on
//! SQLite, two handles of one serving store) claim one `messageId` and bind one task at the
//! same instant, many times: exactly one wins each race, the other reads the winner's state.

use a2a_gateway::store::Bound;
use a2a_gateway::store::backend::{PgRecords, SendStore, SqliteRecords, TaskStore};
use a2a_gateway::store::sends::{Claimed, Outcome, SendKey};
use a2a_pg::PoolOptions;

use crate::store_records::{E, owner, sqlite_store};
use crate::store_suite::{cluster, pg};

pub fn key(ws: &str, m: &str) -> SendKey {
    SendKey {
        workspace_id: ws.into(),
        agent_id: "a".into(),
        message_id: m.into(),
    }
}

/// The claim rules, on records with no sends yet.
pub async fn sends<R: SendStore>(r: &R) {
    let k1 = key("w1", "m1");
    assert_eq!(r.claim(&k1, "d", 100, 0, 0).await.unwrap(), Claimed::First);
    assert_eq!(
        r.claim(&k1, "d", 101, 0, 0).await.unwrap(),
        Claimed::Pending
    );
    assert_eq!(
        r.claim(&k1, "x", 101, 0, 0).await.unwrap(),
        Claimed::Conflict
    );
    assert_eq!(r.first_answer(&k1).await.unwrap(), None);
    // Another workspace's messageId is its own.
    let k2 = key("w2", "m1");
    assert_eq!(r.claim(&k2, "x", 101, 0, 0).await.unwrap(), Claimed::First);
    let t1 = Outcome::Task("t1".into());
    r.complete(&k1, &t1).await.unwrap();
    assert_eq!(
        r.claim(&k1, "d", 102, 0, 0).await.unwrap(),
        Claimed::Done(t1.clone())
    );
    // The first answer stays.
    r.complete(&k1, &Outcome::Task("t2".into())).await.unwrap();
    assert_eq!(r.first_answer(&k1).await.unwrap(), Some(t1.clone()));
    // A released claim may be claimed again; a completed one is kept.
    r.release(&k2).await.unwrap();
    assert_eq!(r.claim(&k2, "y", 103, 0, 0).await.unwrap(), Claimed::First);
    r.release(&k1).await.unwrap();
    assert_eq!(
        r.claim(&k1, "d", 103, 0, 0).await.unwrap(),
        Claimed::Done(t1)
    );
    // A direct message answer.
    let m = serde_json::json!({"messageId": "r", "parts": [{"text": "hi"}]});
    let k3 = key("w1", "m3");
    assert_eq!(r.claim(&k3, "d", 104, 0, 0).await.unwrap(), Claimed::First);
    r.complete(&k3, &Outcome::Message(m.clone())).await.unwrap();
    assert_eq!(
        r.claim(&k3, "d", 105, 0, 0).await.unwrap(),
        Claimed::Done(Outcome::Message(m))
    );
    // Out of the window a record is forgotten; an abandoned claim is taken over.
    assert_eq!(
        r.claim(&k1, "z", 200, 150, 0).await.unwrap(),
        Claimed::First
    );
    assert_eq!(
        r.claim(&k1, "z", 201, 150, 201).await.unwrap(),
        Claimed::First
    );
}

fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// Two replicas `a` and `b` claim one `messageId` at the same instant, `rounds` times: exactly
/// one wins each time, the other finds the claim pending, and once the winner completes the
/// loser reads its answer. Then both bind one task to different owners at once: exactly one
/// binds, the other is refused, and both read the winner as the owner.
pub async fn race<R: TaskStore + SendStore>(a: &R, b: &R, rounds: usize) {
    for i in 0..rounds {
        let k = key("race", &format!("m{i}"));
        let now = unix_now();
        let go = std::sync::Arc::new(tokio::sync::Barrier::new(2));
        let claim = |r: &R| {
            let (r, k, go) = (r.clone(), k.clone(), go.clone());
            tokio::spawn(async move {
                go.wait().await;
                r.claim(&k, "d", now, now - 600, now - 60).await.unwrap()
            })
        };
        let (ja, jb) = (claim(a), claim(b));
        let (ca, cb) = (ja.await.unwrap(), jb.await.unwrap());
        let (winner, loser) = match (&ca, &cb) {
            (Claimed::First, Claimed::Pending) => (a, b),
            (Claimed::Pending, Claimed::First) => (b, a),
            other => panic!("round {i}: not exactly one winner: {other:?}"),
        };
        let answer = Outcome::Task(format!("task-{i}"));
        winner.complete(&k, &answer).await.unwrap();
        assert_eq!(
            loser
                .claim(&k, "d", now, now - 600, now - 60)
                .await
                .unwrap(),
            Claimed::Done(answer.clone()),
            "round {i}"
        );
        assert_eq!(loser.first_answer(&k).await.unwrap(), Some(answer));

        let t = format!("race-task-{i}");
        let bind = |r: &R, ws: &'static str| {
            let (r, t, go) = (r.clone(), t.clone(), go.clone());
            tokio::spawn(async move {
                go.wait().await;
                r.bind(E, &t, &owner(ws)).await.unwrap()
            })
        };
        let (ja, jb) = (bind(a, "ra"), bind(b, "rb"));
        let (ba, bb) = (ja.await.unwrap(), jb.await.unwrap());
        let won = match (ba, bb) {
            (Bound::New, Bound::Other) => "ra",
            (Bound::Other, Bound::New) => "rb",
            other => panic!("round {i}: not exactly one binding: {other:?}"),
        };
        a.settle().await;
        for r in [a, b] {
            assert_eq!(r.owner(E, &t).await.unwrap(), Some(owner(won)), "round {i}");
        }
    }
}

/// The claim rules on a SQLite store without an intent journal (every claim and completion a
/// transaction; the suite of `store_records` runs them with the journal open).
#[tokio::test]
async fn the_claim_rules_on_a_sqlite_store_without_a_journal() {
    let store = a2a_gateway::store::Store::open_in_memory().unwrap();
    sends(&SqliteRecords::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_of_one_sqlite_store_claim_and_bind_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir).await;
    let (a, b) = (SqliteRecords::new(store.clone()), SqliteRecords::new(store));
    race(&a, &b, 100).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_replicas_claim_and_bind_exactly_once() {
    let Some(cluster) = cluster() else { return };
    let reg = pg(&cluster, "race").await;
    let b = PgRecords::connect(&cluster.url_of("race"), &PoolOptions::default())
        .await
        .unwrap();
    race(&reg.records(), &b, 100).await;
    // A claim made on one replica is the state the other reads, with no race at all.
    let k = key("w", "seq");
    let now = unix_now();
    let a = reg.records();
    assert_eq!(
        a.claim(&k, "d", now, now - 600, now - 60).await.unwrap(),
        Claimed::First
    );
    assert_eq!(
        b.claim(&k, "d", now, now - 600, now - 60).await.unwrap(),
        Claimed::Pending
    );
    assert_eq!(
        b.claim(&k, "e", now, now - 600, now - 60).await.unwrap(),
        Claimed::Conflict
    );
    b.release(&k).await.unwrap();
    assert_eq!(
        b.claim(&k, "d", now, now - 600, now - 60).await.unwrap(),
        Claimed::First,
        "released on one replica, claimable on the other"
    );
}
