//! One suite for task ownership, task records and idempotent sends, written once against
//! `TaskStore` + `SendStore` and run on both backends (issue 32): a SQLite file (the serving
//! process's store, its intent journal open) and a throwaway PostgreSQL cluster. A task is
//! bound to one owner; one owner reads nothing of another's; listing totals are exact and
//! pages stable; retention deletes in batches; a `messageId` is claimed once and keeps its first
//! answer (the claim rules are in `store_race`, beside two replicas racing).

use std::time::Duration;

use a2a_gateway::store::backend::PgRegistry;
use a2a_gateway::store::backend::{
    Records, RegistryStore, SendStore, SqliteRecords, SqliteRegistry, TaskStore,
};

use a2a_gateway::store::{Bound, Owner, PushCallback, Store, TaskQuery, TaskRecord, TaskStatusRow};
use a2a_pg::PoolOptions;
use a2a_pg::testing::TempCluster;

use crate::store_suite::{cluster, pg};

pub const E: &str = "http://127.0.0.1:9/a2a";
const WORKING: &str = "TASK_STATE_WORKING";
const DONE: &str = "TASK_STATE_COMPLETED";

pub fn owner(ws: &str) -> Owner {
    Owner {
        workspace_id: ws.into(),
        agent_id: "x".into(),
    }
}

fn status(task: &str, ws: &str, state: &str, at: i64, ctx: Option<&str>) -> TaskStatusRow {
    TaskStatusRow {
        endpoint: E.into(),
        task_id: task.into(),
        workspace_id: ws.into(),
        agent_id: "x".into(),
        context_id: ctx.map(str::to_owned),
        state: state.into(),
        open: state != DONE,
        status_at: at,
        fresh: false,
        gone: false,
        checked_at: 0,
    }
}

fn gone(task: &str, ws: &str) -> TaskStatusRow {
    TaskStatusRow {
        gone: true,
        fresh: true,
        ..status(task, ws, "", -1, None)
    }
}

/// Task ids in byte order that a locale collation would order otherwise.
fn task(i: usize) -> String {
    format!("{}{i:02}", ["t", "T", "_t"][i % 3])
}

fn all(limit: u64) -> TaskQuery<'static> {
    TaskQuery {
        limit,
        ..TaskQuery::default()
    }
}

/// The whole suite, on records and a registry over one empty database.
pub async fn suite<R: TaskStore + SendStore, G: RegistryStore>(r: &R, reg: &G) {
    ownership(r).await;
    listing(r).await;
    retention(r, reg).await;
    crate::store_race::sends(r).await;
}

async fn ownership<R: TaskStore>(r: &R) {
    let (a, b) = (owner("wa"), owner("wb"));
    assert_eq!(r.bind(E, "t1", &a).await.unwrap(), Bound::New);
    assert_eq!(r.bind(E, "t1", &a).await.unwrap(), Bound::Already);
    assert_eq!(r.bind(E, "t1", &b).await.unwrap(), Bound::Other, "refused");
    let other_agent = Owner {
        agent_id: "y".into(),
        ..a.clone()
    };
    assert_eq!(r.bind(E, "t1", &other_agent).await.unwrap(), Bound::Other);
    assert_eq!(r.owner(E, "t1").await.unwrap(), Some(a.clone()));
    assert!(r.owns(E, "t1", &a).await.unwrap());
    assert!(!r.owns(E, "t1", &b).await.unwrap());
    assert_eq!(r.owner(E, "nope").await.unwrap(), None);
    // The same task id at another peer is another task.
    let e2 = "http://127.0.0.1:10/a2a";
    assert_eq!(r.bind(e2, "t1", &b).await.unwrap(), Bound::New);
    assert!(!r.owns(e2, "t1", &a).await.unwrap());
    assert_eq!(r.bind(E, "t2", &a).await.unwrap(), Bound::New);
    let page = r.owned_tasks(E, &a, 0, 10).await.unwrap();
    let ids: Vec<&str> = page.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(ids, ["t1", "t2"], "oldest binding first");
    let rest = r.owned_tasks(E, &a, page[0].0, 10).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert!(r.owned_tasks(E, &b, 0, 10).await.unwrap().is_empty());
    r.forget(E, "t1").await.unwrap();
    r.forget(E, "t2").await.unwrap();
    r.forget(e2, "t1").await.unwrap();
    assert_eq!(r.owner(E, "t1").await.unwrap(), None);
    assert_eq!(r.task_record_count().await.unwrap(), 0);
}

/// What a listing of `a` must answer: `(status_at desc, task id bytes)` order.
fn sorted(mut rows: Vec<TaskRecord>) -> Vec<TaskRecord> {
    rows.sort_by(|x, y| {
        y.status_at
            .cmp(&x.status_at)
            .then_with(|| x.task_id.as_bytes().cmp(y.task_id.as_bytes()))
    });
    rows
}

async fn listing<R: TaskStore>(r: &R) {
    let (a, b) = (owner("wa"), owner("wb"));
    let mut model = Vec::new();
    for i in 0..12 {
        let id = task(i);
        assert_eq!(r.bind(E, &id, &a).await.unwrap(), Bound::New);
        let (state, at, ctx) = match i {
            11 => (None, -1, None),
            _ => {
                let state = if i % 2 == 0 { WORKING } else { DONE };
                let ctx = format!("c{}", i % 3);
                r.record_status(status(&id, "wa", state, (i as i64 % 4) * 10, Some(&ctx)))
                    .await
                    .unwrap();
                (Some(state.to_owned()), (i as i64 % 4) * 10, Some(ctx))
            }
        };
        model.push(TaskRecord {
            task_id: id,
            context_id: ctx,
            state,
            status_at: at,
        });
    }
    for i in 0..3 {
        r.bind(E, &format!("u{i}"), &b).await.unwrap();
        r.record_status(status(&format!("u{i}"), "wb", WORKING, 99, None))
            .await
            .unwrap();
    }
    // Another owner's record of a's task changes nothing.
    r.record_status(status(&task(0), "wb", DONE, 1000, Some("zz")))
        .await
        .unwrap();
    // An older record does not win; a non-terminal one of the same time does not reopen.
    r.record_status(status(&task(1), "wa", WORKING, 0, None))
        .await
        .unwrap();
    r.record_status(status(&task(1), "wa", WORKING, 10, None))
        .await
        .unwrap();
    r.settle().await;
    let model = sorted(model);
    let (rows, total) = r.task_records(E, &a, &all(100)).await.unwrap();
    assert_eq!((rows, total), (model.clone(), 12));

    // Stable pages: cursor walk and offsets give the full listing, totals exact throughout.
    let mut walked = Vec::new();
    let mut cursor: Option<(i64, String)> = None;
    loop {
        let q = TaskQuery {
            cursor: cursor.as_ref().map(|(at, id)| (*at, id.as_str())),
            ..all(5)
        };
        let (page, total) = r.task_records(E, &a, &q).await.unwrap();
        assert_eq!(total, 12);
        let Some(last) = page.last() else { break };
        cursor = Some((last.status_at, last.task_id.clone()));
        walked.extend(page);
    }
    assert_eq!(walked, model);
    let q = TaskQuery {
        offset: 3,
        ..all(4)
    };
    assert_eq!(r.task_records(E, &a, &q).await.unwrap().0, model[3..7]);

    // Filters count exactly what they match.
    let count = |f: &dyn Fn(&TaskRecord) -> bool| model.iter().filter(|t| f(t)).count() as u64;
    let q = TaskQuery {
        state: Some(WORKING),
        ..all(100)
    };
    let (rows, total) = r.task_records(E, &a, &q).await.unwrap();
    assert_eq!(total, count(&|t| t.state.as_deref() == Some(WORKING)));
    assert_eq!(rows.len() as u64, total);
    let q = TaskQuery {
        context_id: Some("c1"),
        after: Some(10),
        ..all(100)
    };
    let want = count(&|t| t.context_id.as_deref() == Some("c1") && t.status_at >= 10);
    assert_eq!(r.task_records(E, &a, &q).await.unwrap().1, want);
    assert!(want > 0);

    // One owner reads nothing of another's.
    let (rows, total) = r.task_records(E, &b, &all(100)).await.unwrap();
    assert_eq!(total, 3);
    assert!(rows.iter().all(|t| t.task_id.starts_with('u')), "{rows:?}");
    let stranger = owner("wc");
    assert_eq!(
        r.task_records(E, &stranger, &all(100)).await.unwrap(),
        (vec![], 0)
    );
    assert!(
        r.unsettled(E, &stranger, i64::MAX, 100)
            .await
            .unwrap()
            .is_empty()
    );

    // Gone: neither listed nor counted; a fresh read brings it back.
    r.record_status(gone(&task(0), "wa")).await.unwrap();
    r.record_status(gone(&task(0), "wa")).await.unwrap();
    r.settle().await;
    let (rows, total) = r.task_records(E, &a, &all(100)).await.unwrap();
    assert_eq!((rows.len(), total), (11, 11));
    let mut back = status(&task(0), "wa", WORKING, 5, None);
    back.fresh = true;
    r.record_status(back).await.unwrap();
    r.settle().await;
    assert_eq!(r.task_records(E, &a, &all(0)).await.unwrap().1, 12);

    // Unsettled: a's open records (never recorded included), none of b's.
    let open = r.unsettled(E, &a, i64::MAX, 100).await.unwrap();
    let want = model
        .iter()
        .filter(|t| t.state.as_deref() != Some(DONE))
        .count();
    assert_eq!(open.len(), want, "{open:?}");
    assert!(r.unsettled(E, &a, 0, 100).await.unwrap().is_empty());
    assert_eq!(r.task_record_count().await.unwrap(), 15);
}

async fn retention<R: TaskStore, G: RegistryStore>(r: &R, reg: &G) {
    reg.create_workspace("wa", "A").await.unwrap();
    let cb = PushCallback {
        callback_id: "cb-t00".into(),
        workspace_id: "wa".into(),
        agent_id: "x".into(),
        task_id: task(0),
        config_id: None,
        url: "https://caller.example/hook".into(),
        token: None,
        auth_scheme: None,
        auth_credentials: None,
        caller_version: "1.0".into(),
        peer_version: "1.0".into(),
        notify_token: "n".into(),
    };
    reg.insert_push_callback(&cb).await.unwrap();
    let hour = Duration::from_secs(3600);
    assert_eq!(
        r.trim_task_records(hour, 100).await.unwrap(),
        0,
        "all recent"
    );
    r.settle().await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let mut batches = Vec::new();
    loop {
        match r.trim_task_records(Duration::ZERO, 4).await.unwrap() {
            0 => break,
            n => batches.push(n),
        }
    }
    assert_eq!(batches, [4, 4, 4, 3]);
    assert_eq!(r.task_record_count().await.unwrap(), 0);
    assert_eq!(
        r.task_records(E, &owner("wa"), &all(10)).await.unwrap().1,
        0
    );
    assert_eq!(
        reg.push_callback("cb-t00").await.unwrap(),
        None,
        "deleted with its task"
    );
}

/// A binding made with its first status (`Records::bind_recorded`, one write of the row on
/// PostgreSQL): listed with that status at once; an existing binding's status recorded as a
/// record would be; another owner's task refused and its record untouched.
async fn bound_with_status(r: &Records) {
    let e = "http://127.0.0.1:11/a2a";
    let (a, b) = (owner("wa"), owner("wb"));
    let st = |task: &str, ws: &str, state: &str, at: i64| TaskStatusRow {
        endpoint: e.into(),
        ..status(task, ws, state, at, Some("c1"))
    };
    let new = r.bind_recorded(e, "s1", &a, Some(st("s1", "wa", WORKING, 5)));
    assert_eq!(new.await.unwrap(), Bound::New);
    let (rows, total) = r.task_records(e, &a, &all(10)).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(
        (rows[0].state.as_deref(), rows[0].status_at),
        (Some(WORKING), 5),
        "listed with its status at once"
    );
    let again = r.bind_recorded(e, "s1", &a, Some(st("s1", "wa", DONE, 6)));
    assert_eq!(again.await.unwrap(), Bound::Already);
    let theirs = r.bind_recorded(e, "s1", &b, Some(st("s1", "wb", WORKING, 7)));
    assert_eq!(theirs.await.unwrap(), Bound::Other);
    assert_eq!(
        r.bind_recorded(e, "s2", &a, None).await.unwrap(),
        Bound::New
    );
    r.settle().await;
    let (rows, total) = r.task_records(e, &a, &all(10)).await.unwrap();
    assert_eq!(total, 2);
    let s1 = rows.iter().find(|t| t.task_id == "s1").unwrap();
    assert_eq!(
        (s1.state.as_deref(), s1.status_at, s1.context_id.as_deref()),
        (Some(DONE), 6, Some("c1")),
        "the owner's later status applied, the other owner's not"
    );
    let s2 = rows.iter().find(|t| t.task_id == "s2").unwrap();
    assert_eq!(s2.state, None, "bound without a status");
    assert!(r.task_records(e, &b, &all(10)).await.unwrap().0.is_empty());
    for t in ["s1", "s2"] {
        r.forget(e, t).await.unwrap();
    }
}

pub async fn sqlite_store(dir: &tempfile::TempDir) -> Store {
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    store.open_intent_journal().unwrap();
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_records_suite_on_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir).await;
    let r = Records::Sqlite(SqliteRecords::new(store.clone()));
    suite(&r, &SqliteRegistry::new(store.clone())).await;
    bound_with_status(&r).await;
}

/// Creates database `db` ordering text by a locale (ICU `en-US`: `t00` before `T01`, where
/// byte order puts `T01` first), so that the suite checks pages are in byte order whatever
/// the database's collation. `false` when the server has no ICU.
async fn locale_database(cluster: &TempCluster, db: &str) -> bool {
    let pool = a2a_pg::pool(&cluster.url(), &PoolOptions::default()).unwrap();
    let c = pool.get().await.unwrap();
    let sql = format!(
        "CREATE DATABASE {db} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'
           LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
    );
    if let Err(e) = c.batch_execute(&sql).await {
        eprintln!("no ICU collation ({e}): the suite runs on a C-collated database");
        return false;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_records_suite_on_postgres() {
    let Some(cluster) = cluster() else { return };
    let reg = if locale_database(&cluster, "records").await {
        PgRegistry::connect(&cluster.url_of("records"), &PoolOptions::default())
            .await
            .unwrap()
    } else {
        pg(&cluster, "records").await
    };
    // The locale really orders otherwise than bytes (or the database is C-collated).
    let c = a2a_pg::pool(&cluster.url_of("records"), &PoolOptions::default()).unwrap();
    let c = c.get().await.unwrap();
    let row = c
        .query_one(
            "SELECT 't00' < 'T01', datlocprovider::text FROM pg_database WHERE datname = 'records'",
            &[],
        )
        .await
        .unwrap();
    let (locale_order, provider): (bool, String) = (row.get(0), row.get(1));
    assert_eq!(
        locale_order,
        provider == "i",
        "ICU orders t00 first, C orders T01 first"
    );
    suite(&Records::Postgres(reg.records()), &reg).await;
    bound_with_status(&Records::Postgres(reg.records())).await;
    // A listing page (the statement of `pg_tasks`, each filter) reads an index in its order:
    // no sort of the owner's rows, whatever the collation.
    c.batch_execute("SET enable_seqscan = off").await.unwrap();
    for filter in ["", " AND state = 'x'", " AND context_id = 'c'"] {
        let plan: Vec<String> = c
            .query(
                &format!(
                    "EXPLAIN SELECT task_id FROM task_owners WHERE workspace_id = 'a'
                       AND agent_id = 'x' AND endpoint = 'e' AND NOT gone AND status_at >= 0{filter}
                       AND status_at <= 9 AND (status_at < 9 OR task_id COLLATE \"C\" > '')
                     ORDER BY status_at DESC, task_id COLLATE \"C\" LIMIT 5"
                ),
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let plan = plan.join("\n");
        assert!(plan.contains("task_owners_"), "{filter}: {plan}");
        assert!(!plan.contains("Sort"), "{filter}: {plan}");
    }
}
