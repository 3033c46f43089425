//! One store suite, written once against the store traits and run on every store (issue 33):
//! memory, a SQLite file (feature `sqlite`) and a throwaway PostgreSQL cluster (feature
//! `postgres`). Tasks: put, get, replace, list and page (the cursor of one page starts the
//! next; ties on the status time are broken by id), owner isolation, each filter, delete, the
//! count; the push outbox; push configs; idempotent sends; the replay log. What a restart
//! finds (unfinished tasks, due notices) is checked per persistent store below the suite.

use a2a_agent::idempotency::{MemorySendLog, SendLog, SendRecord, SendTarget, now_ms};
use a2a_agent::model::{Task, TaskState, TaskStatus, Timestamp};
use a2a_agent::push::store::{MemoryPushStore, PushConfigStore, PushRecord};
use a2a_agent::replay::ReplayLog;
use a2a_agent::store::{MemoryStore, Notice, StoredTask, TaskFilter, TaskStore};
use a2a_types::v1::TaskPushNotificationConfig;
use a2a_types::version::Version;
use std::sync::Arc;
use std::time::Duration;

/// Every store of one backend.
struct Kit {
    tasks: Arc<dyn TaskStore>,
    replay: Arc<dyn ReplayLog>,
    sends: Arc<dyn SendLog>,
    push: Arc<dyn PushConfigStore>,
    /// Whether the task store keeps the push outbox (the memory store does not).
    outbox: bool,
}

/// Replayable events kept per task in every kit.
const KEEP: usize = 3;
/// The window of every kit's send log.
const WINDOW: Duration = Duration::from_secs(60);

fn memory_kit() -> Kit {
    let m = Arc::new(MemoryStore::default().with_replay_events(KEEP));
    Kit {
        tasks: m.clone(),
        replay: m,
        sends: Arc::new(MemorySendLog::new(WINDOW, 1000)),
        push: Arc::new(MemoryPushStore::default()),
        outbox: false,
    }
}

#[cfg(feature = "sqlite")]
fn sqlite_kit(path: &std::path::Path) -> Kit {
    Kit {
        tasks: Arc::new(a2a_agent::SqliteStore::open(path).unwrap()),
        replay: Arc::new(a2a_agent::replay::SqliteReplay::open(path, KEEP).unwrap()),
        sends: Arc::new(a2a_agent::idempotency::SqliteSendLog::open(path, WINDOW).unwrap()),
        push: Arc::new(a2a_agent::push::store::SqlitePushStore::open(path).unwrap()),
        outbox: true,
    }
}

#[cfg(feature = "postgres")]
fn pg_kit(pg: &a2a_agent::PostgresStore) -> Kit {
    Kit {
        tasks: Arc::new(pg.clone()),
        replay: Arc::new(a2a_agent::replay_pg::PgReplay::new(pg.clone(), KEEP)),
        sends: Arc::new(a2a_agent::idempotency::PgSendLog::new(pg.clone(), WINDOW)),
        push: Arc::new(a2a_agent::push::store_pg::PgPushStore::new(pg.clone())),
        outbox: true,
    }
}

/// A throwaway cluster, or `None` (with the reason printed) when PostgreSQL's server binaries
/// are not installed.
#[cfg(feature = "postgres")]
pub fn cluster() -> Option<a2a_pg::testing::TempCluster> {
    if a2a_pg::testing::server_bin().is_none() {
        eprintln!(
            "SKIPPED: no initdb/pg_ctl (install Debian's `postgresql`; `cargo xtask test` does)"
        );
        return None;
    }
    Some(a2a_pg::testing::TempCluster::start().expect("a throwaway PostgreSQL cluster starts"))
}

/// A PostgreSQL store on a fresh database `db` of `cluster`.
#[cfg(feature = "postgres")]
pub async fn pg_store(
    cluster: &a2a_pg::testing::TempCluster,
    db: &str,
) -> a2a_agent::PostgresStore {
    cluster.create_database(db).unwrap();
    connect(cluster, db).await
}

/// Another connection (another replica) to database `db` of `cluster`.
#[cfg(feature = "postgres")]
pub async fn connect(cluster: &a2a_pg::testing::TempCluster, db: &str) -> a2a_agent::PostgresStore {
    a2a_agent::PostgresStore::connect(
        &cluster.url_of(db),
        &a2a_agent::store::PoolOptions::default(),
    )
    .await
    .unwrap()
}

fn task(id: &str, ctx: &str, state: TaskState, ms: i64) -> Task {
    Task {
        id: id.into(),
        context_id: Some(ctx.into()),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(Timestamp::from_unix_millis(ms).unwrap()),
        },
        ..Default::default()
    }
}

fn stored(id: &str, owner: &str, ctx: &str, state: TaskState, ms: i64) -> StoredTask {
    StoredTask {
        task: task(id, ctx, state, ms),
        owner: owner.into(),
    }
}

fn ids(v: &[StoredTask]) -> Vec<&str> {
    v.iter().map(|t| t.task.id.as_str()).collect()
}

fn owner(o: &str) -> TaskFilter {
    TaskFilter {
        owner: o.into(),
        ..Default::default()
    }
}

/// The whole suite, on stores with nothing in them.
async fn suite(k: &Kit) {
    tasks(k).await;
    outbox(k).await;
    push_configs(k).await;
    sends(k).await;
    replay(k).await;
}

const T0: i64 = 1_700_000_000_000;

async fn tasks(k: &Kit) {
    let s = &k.tasks;
    assert_eq!(s.get("t1").await.unwrap(), None);
    let t1 = stored("t1", "alice", "c1", TaskState::Working, T0);
    s.put(t1.clone()).await.unwrap();
    assert_eq!(s.get("t1").await.unwrap(), Some(t1));
    // Replaced in place.
    let t1 = stored("t1", "alice", "c1", TaskState::Completed, T0 + 10);
    s.put(t1.clone()).await.unwrap();
    assert_eq!(s.get("t1").await.unwrap(), Some(t1));
    // Alice: seven tasks; t3, t4 and t5 share a status time (the id breaks the tie).
    for (id, ctx, state, ms) in [
        ("t2", "c2", TaskState::Working, T0 + 20),
        ("t3", "c1", TaskState::Completed, T0 + 30),
        ("t4", "c2", TaskState::Completed, T0 + 30),
        ("t5", "c1", TaskState::Failed, T0 + 30),
        ("t6", "c2", TaskState::Completed, T0 + 40),
        ("t7", "c1", TaskState::Submitted, T0 + 50),
    ] {
        s.put(stored(id, "alice", ctx, state, ms)).await.unwrap();
    }
    // Bob: two, newer than all of alice's.
    s.put(stored("b1", "bob", "c1", TaskState::Completed, T0 + 60))
        .await
        .unwrap();
    s.put(stored("b2", "bob", "c1", TaskState::Completed, T0 + 70))
        .await
        .unwrap();
    assert_eq!(s.count().await.unwrap(), 9);

    let newest_first = ["t7", "t6", "t5", "t4", "t3", "t2", "t1"];
    assert_eq!(ids(&s.list(&owner("alice")).await.unwrap()), newest_first);
    assert_eq!(ids(&s.list(&owner("bob")).await.unwrap()), ["b2", "b1"]);
    assert!(s.list(&owner("carol")).await.unwrap().is_empty());

    // Pages of 3, each starting after the last task of the one before.
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let p = s.page(&owner("alice"), after.as_ref(), 3).await.unwrap();
        assert_eq!(p.total, 7);
        assert!(p.tasks.iter().all(|t| t.owner == "alice"));
        pages += 1;
        seen.extend(p.tasks.iter().map(|t| t.task.id.clone()));
        let last = p.tasks.last().unwrap();
        let ms = last.task.status.timestamp.as_ref().unwrap().unix_millis() as i64;
        after = Some((ms, last.task.id.clone()));
        if !p.more {
            break;
        }
        assert_eq!(p.tasks.len(), 3);
    }
    assert_eq!(
        (pages, seen.as_slice()),
        (3, &newest_first.map(String::from)[..])
    );
    // A cursor inside a tie: after t4 come t3 (same time, smaller id), then older ones.
    let p = s
        .page(&owner("alice"), Some(&(T0 + 30, "t4".into())), 10)
        .await
        .unwrap();
    assert_eq!((ids(&p.tasks), p.more), (vec!["t3", "t2", "t1"], false));
    // A page size of 0 counts and says more follow.
    let p = s.page(&owner("alice"), None, 0).await.unwrap();
    assert_eq!((p.tasks.len(), p.total, p.more), (0, 7, true));

    // Filters, each alone and together.
    let f = |context_id: Option<&str>, state: Option<TaskState>, after: Option<i64>| TaskFilter {
        owner: "alice".into(),
        context_id: context_id.map(String::from),
        state,
        status_timestamp_after: after.map(|ms| Timestamp::from_unix_millis(ms).unwrap()),
    };
    let by = |x: TaskFilter| {
        let s = s.clone();
        async move {
            let all = ids(&s.list(&x).await.unwrap())
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>();
            let p = s.page(&x, None, 100).await.unwrap();
            assert_eq!(p.total, all.len(), "the count agrees with the listing");
            assert_eq!(
                ids(&p.tasks),
                all.iter().map(String::as_str).collect::<Vec<_>>()
            );
            all
        }
    };
    assert_eq!(
        by(f(Some("c1"), None, None)).await,
        ["t7", "t5", "t3", "t1"]
    );
    assert_eq!(
        by(f(None, Some(TaskState::Completed), None)).await,
        ["t6", "t4", "t3", "t1"]
    );
    assert_eq!(
        by(f(None, None, Some(T0 + 30))).await,
        ["t7", "t6", "t5", "t4", "t3"]
    );
    assert_eq!(
        by(f(Some("c2"), Some(TaskState::Completed), Some(T0 + 35))).await,
        ["t6"]
    );
    // Another owner's filter never reaches alice's tasks.
    let mut bob_c1 = f(Some("c1"), None, None);
    bob_c1.owner = "bob".into();
    assert_eq!(by(bob_c1).await, ["b2", "b1"]);

    s.delete("t2").await.unwrap();
    assert_eq!(s.get("t2").await.unwrap(), None);
    assert_eq!(s.count().await.unwrap(), 8);
    assert_eq!(s.page(&owner("alice"), None, 10).await.unwrap().total, 6);
    // Deleting what is not there is no error.
    s.delete("t2").await.unwrap();
}

fn notice(task: &str, config: &str, body: &str) -> Notice {
    Notice {
        task_id: task.into(),
        config_id: config.into(),
        content_type: "application/a2a+json".into(),
        body: bytes::Bytes::from(body.to_owned()),
    }
}

async fn outbox(k: &Kit) {
    let s = &k.tasks;
    let t = stored("o1", "alice", "c", TaskState::Working, T0);
    let seqs = s
        .put_with_notices(
            t.clone(),
            vec![notice("o1", "w1", "a"), notice("o1", "w2", "b")],
        )
        .await
        .unwrap();
    assert_eq!(
        s.get("o1").await.unwrap(),
        Some(t),
        "the task is stored with its notices"
    );
    if !k.outbox {
        assert!(seqs.is_empty());
        assert!(s.due_notices().await.unwrap().is_empty());
        return;
    }
    assert_eq!(seqs.len(), 2);
    assert!(
        seqs[0] < seqs[1],
        "numbers grow in recording order: {seqs:?}"
    );
    let more = s
        .record_notices(vec![notice("o1", "w1", "c")])
        .await
        .unwrap();
    assert_eq!(more.len(), 1);
    assert!(more[0] > seqs[1]);
    let due = s.due_notices().await.unwrap();
    let got: Vec<(i64, &str, &[u8])> = due
        .iter()
        .map(|d| (d.seq, d.notice.config_id.as_str(), d.notice.body.as_ref()))
        .collect();
    assert_eq!(
        got,
        [
            (seqs[0], "w1", &b"a"[..]),
            (seqs[1], "w2", &b"b"[..]),
            (more[0], "w1", &b"c"[..])
        ]
    );
    assert_eq!(due[0].notice, notice("o1", "w1", "a"));
    s.notice_done(seqs[0]).await.unwrap();
    let left: Vec<i64> = s
        .due_notices()
        .await
        .unwrap()
        .iter()
        .map(|d| d.seq)
        .collect();
    assert_eq!(left, [seqs[1], more[0]]);
    // No notices: only the task is written.
    assert!(
        s.put_with_notices(stored("o2", "alice", "c", TaskState::Working, T0), vec![])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(s.record_notices(vec![]).await.unwrap().is_empty());
    s.notice_done(seqs[1]).await.unwrap();
    s.notice_done(more[0]).await.unwrap();
    assert!(s.due_notices().await.unwrap().is_empty());
}

fn push_rec(task: &str, id: &str, url: &str, version: Version) -> PushRecord {
    let mut config = TaskPushNotificationConfig::new(task, url);
    config.id = Some(id.into());
    PushRecord {
        config,
        version,
        owner: "alice".into(),
    }
}

async fn push_configs(k: &Kit) {
    let p = &k.push;
    assert!(p.list("p1").await.unwrap().is_empty());
    let a = push_rec("p1", "c-b", "https://hooks.example/a", Version::V1);
    let b = push_rec("p1", "c-a", "https://hooks.example/b", Version::V03);
    p.put(a.clone()).await.unwrap();
    p.put(b.clone()).await.unwrap();
    p.put(push_rec(
        "p2",
        "c-b",
        "https://hooks.example/c",
        Version::V1,
    ))
    .await
    .unwrap();
    assert_eq!(
        p.list("p1").await.unwrap(),
        [a, b.clone()],
        "creation order"
    );
    // Replaced in place: same position, new URL.
    let a2 = push_rec("p1", "c-b", "https://hooks.example/a2", Version::V1);
    p.put(a2.clone()).await.unwrap();
    assert_eq!(p.list("p1").await.unwrap(), [a2, b.clone()]);
    let mut tasks = p.task_ids().await.unwrap();
    tasks.sort();
    assert_eq!(tasks, ["p1", "p2"]);
    assert!(p.delete("p1", "c-b").await.unwrap());
    assert!(!p.delete("p1", "c-b").await.unwrap());
    assert!(!p.delete("p9", "c-a").await.unwrap());
    assert_eq!(p.list("p1").await.unwrap(), [b]);
    assert_eq!(p.list("p2").await.unwrap().len(), 1);
}

async fn sends(k: &Kit) {
    let l = &k.sends;
    let now = now_ms();
    let rec = |target: SendTarget, at_ms: i64| SendRecord {
        digest: "d1".into(),
        target,
        at_ms,
    };
    l.put("alice", "m1", rec(SendTarget::Task("t1".into()), now))
        .await
        .unwrap();
    assert_eq!(
        l.get("alice", "m1", now - 1000).await.unwrap(),
        Some(rec(SendTarget::Task("t1".into()), now))
    );
    // Per caller: bob's m1 is another send.
    assert_eq!(l.get("bob", "m1", 0).await.unwrap(), None);
    // Older than asked for.
    assert_eq!(l.get("alice", "m1", now + 1).await.unwrap(), None);
    // A direct message answer round-trips, and replaces the earlier record.
    let m = a2a_agent::model::Message::agent_text("hi");
    l.put(
        "alice",
        "m1",
        rec(SendTarget::Message(Box::new(m.clone())), now + 1),
    )
    .await
    .unwrap();
    assert_eq!(
        l.get("alice", "m1", 0).await.unwrap(),
        Some(rec(SendTarget::Message(Box::new(m)), now + 1))
    );
}

async fn replay(k: &Kit) {
    use a2a_agent::model::{StreamResponse, TaskStatusUpdateEvent};
    let ev = |task: &str, state: TaskState| {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.into(),
            context_id: "c".into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            metadata: None,
        })
    };
    // The memory store keeps the events of the tasks it holds.
    for id in ["r1", "r2"] {
        k.tasks
            .put(stored(id, "alice", "c", TaskState::Working, T0))
            .await
            .unwrap();
    }
    let r = &k.replay;
    assert_eq!(r.last("r1").await.unwrap(), 0);
    for seq in 1..=5 {
        r.append("r1", seq, &ev("r1", TaskState::Working))
            .await
            .unwrap();
    }
    r.append_owned("r2", 1, ev("r2", TaskState::Completed))
        .await
        .unwrap();
    assert_eq!(r.last("r1").await.unwrap(), 5);
    assert_eq!(r.last("r2").await.unwrap(), 1);
    assert_eq!(r.last("none").await.unwrap(), 0);
    let seqs = |v: Vec<(u64, StreamResponse)>| v.into_iter().map(|(s, _)| s).collect::<Vec<_>>();
    assert_eq!(
        seqs(r.since("r1", 0).await.unwrap()),
        [3, 4, 5],
        "the newest {KEEP}"
    );
    assert_eq!(seqs(r.since("r1", 4).await.unwrap()), [5]);
    assert!(r.since("r1", 5).await.unwrap().is_empty());
    assert_eq!(
        r.since("r2", 0).await.unwrap(),
        [(1, ev("r2", TaskState::Completed))]
    );
}

#[tokio::test]
async fn the_suite_passes_on_the_memory_store() {
    suite(&memory_kit()).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_suite_passes_on_the_sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    suite(&sqlite_kit(&dir.path().join("agent.db"))).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_on_the_postgres_store() {
    let Some(cluster) = cluster() else { return };
    let pg = pg_store(&cluster, "suite").await;
    suite(&pg_kit(&pg)).await;
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// Leaves what a process may leave behind: two unfinished tasks (of two owners) beside a
/// finished one, and a notice still due; the notice's number.
async fn leave(before: &dyn TaskStore) -> Vec<i64> {
    for (id, who, state, ms) in [
        ("u2", "alice", TaskState::Working, T0 + 2),
        ("u1", "bob", TaskState::Submitted, T0 + 1),
        ("u3", "alice", TaskState::Completed, T0 + 3),
    ] {
        before.put(stored(id, who, "c", state, ms)).await.unwrap();
    }
    before
        .record_notices(vec![notice("u2", "w", "x")])
        .await
        .unwrap()
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// What a restart finds of [`leave`]'s: the unfinished tasks, oldest first, and the notice.
async fn finds(again: &dyn TaskStore, unfinished: Vec<StoredTask>, seqs: &[i64]) {
    assert_eq!(ids(&unfinished), ["u1", "u2"]);
    assert_eq!(unfinished[0].owner, "bob");
    let due: Vec<i64> = again
        .due_notices()
        .await
        .unwrap()
        .iter()
        .map(|d| d.seq)
        .collect();
    assert_eq!(due, seqs);
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_reopened_sqlite_store_finds_the_unfinished_tasks_and_due_notices() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.db");
    let seqs = leave(&a2a_agent::SqliteStore::open(&path).unwrap()).await;
    let again = a2a_agent::SqliteStore::open(&path).unwrap();
    finds(&again, again.unfinished().await.unwrap(), &seqs).await;
}

/// Replica A's unfinished tasks and due notices are left alone by replica B while A lives;
/// once A is gone, B takes them over (the next start of B reads them), and only B does.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_replica_takes_over_only_what_a_gone_replica_left() {
    let Some(cluster) = cluster() else { return };
    let a = pg_store(&cluster, "left").await;
    let b = connect(&cluster, "left").await;
    let seqs = leave(&a).await;
    assert!(
        b.unfinished().await.unwrap().is_empty(),
        "A lives: its tasks run there"
    );
    assert!(
        b.due_notices().await.unwrap().is_empty(),
        "A lives: it delivers its notices"
    );
    assert!(b.orphaned_notices().await.unwrap().is_empty());
    assert!(
        a.orphaned_notices().await.unwrap().is_empty(),
        "a replica's own notices are never orphaned"
    );
    assert_eq!(
        a.due_notices()
            .await
            .unwrap()
            .iter()
            .map(|d| d.seq)
            .collect::<Vec<_>>(),
        seqs,
        "a replica's own notices are due to it"
    );
    // A's session (and its lock) ends with it, once PostgreSQL notices the closed connection.
    drop(a);
    let mut taken = Vec::new();
    for _ in 0..200 {
        taken = b.unfinished().await.unwrap();
        if !taken.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    finds(&b, taken, &seqs).await;
    // Taken over once: a third replica finds nothing left (B lives and holds them).
    let c = connect(&cluster, "left").await;
    assert!(c.unfinished().await.unwrap().is_empty());
    assert!(c.due_notices().await.unwrap().is_empty());
}

/// Two replicas continue one task waiting for input at once: the store lets one begin the turn
/// (a stale status, or a version moved by another write, is refused even when the status
/// looks the same again); a store one process owns always agrees.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_replicas_continuing_one_task_one_begins_the_turn() {
    let Some(cluster) = cluster() else { return };
    let a = pg_store(&cluster, "turns").await;
    let b = connect(&cluster, "turns").await;
    let waiting = stored("f1", "alice", "c", TaskState::InputRequired, T0);
    let seen = waiting.task.status.clone();
    a.put(waiting.clone()).await.unwrap();
    // Both replicas read the task as it waits, then both try to continue it.
    assert!(a.get("f1").await.unwrap().is_some());
    assert!(b.get("f1").await.unwrap().is_some());
    assert!(a.begin_turn("f1", &seen).await.unwrap());
    assert!(
        !b.begin_turn("f1", &seen).await.unwrap(),
        "b continues what a took"
    );
    let row = b.get("f1").await.unwrap().unwrap();
    assert_eq!(
        row.task.status.state,
        TaskState::InputRequired,
        "the body waits for a's write"
    );
    assert!(
        !b.begin_turn("f1", &seen).await.unwrap(),
        "the stored state moved on"
    );
    // A's turn ends waiting again with the very same status (same state and time): B, which
    // read the task before, is still refused (the version moved); after reading it again, B
    // may continue it.
    a.put(stored("f1", "alice", "c", TaskState::Working, T0 + 1))
        .await
        .unwrap();
    b.get("f1").await.unwrap();
    a.put(waiting.clone()).await.unwrap();
    assert!(
        !b.begin_turn("f1", &seen).await.unwrap(),
        "b's version is old"
    );
    b.get("f1").await.unwrap();
    assert!(b.begin_turn("f1", &seen).await.unwrap());
    // The memory store and the SQLite store leave the order of turns to the live task's lock.
    assert!(memory_kit().tasks.begin_turn("f1", &seen).await.unwrap());
}
