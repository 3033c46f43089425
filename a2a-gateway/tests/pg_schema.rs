//! The gateway's PostgreSQL tables (issue 32) on a real throwaway cluster: applied once by
//! replicas starting together, every table and column of the SQLite file present (so a new
//! SQLite migration without its PostgreSQL twin fails here), registry changes announced and
//! counted, the audit's append-only rules and the retention mark as in SQLite.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use a2a_gateway::store::Store;
use a2a_gateway::store::pg_schema::{COMPONENT, PG_MIGRATIONS, REGISTRY_CHANNEL};
use a2a_pg::{Event, Listener, PoolOptions, migrate, pg_config, pool};

/// Table -> columns of the SQLite file after every migration.
fn sqlite_columns() -> BTreeMap<String, BTreeSet<String>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    drop(Store::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    let tables: Vec<String> = c
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'table'
               AND name NOT LIKE 'sqlite_%'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    tables
        .into_iter()
        .map(|t| {
            let cols = c
                .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            (t, cols)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_tables_match_the_sqlite_file_and_keep_its_rules() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    let url = cluster.url();
    let opts = PoolOptions::default();
    // Three replicas migrate at once; the schema is applied once.
    let mut joins = Vec::new();
    for _ in 0..3 {
        let url = url.clone();
        let opts = opts.clone();
        joins.push(tokio::spawn(async move {
            let p = pool(&url, &opts).unwrap();
            let mut c = p.get().await.unwrap();
            migrate(&mut c, COMPONENT, PG_MIGRATIONS).await.unwrap()
        }));
    }
    for j in joins {
        assert_eq!(j.await.unwrap().version, PG_MIGRATIONS.len() as i64);
    }
    let p = pool(&url, &opts).unwrap();
    let c = p.get().await.unwrap();

    // Every SQLite table and column is there (journal_state is the SQLite intent journal's
    // watermark; replicas commit intents instead).
    let mut pg: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in c
        .query(
            "SELECT table_name, column_name FROM information_schema.columns
             WHERE table_schema = 'public'",
            &[],
        )
        .await
        .unwrap()
    {
        pg.entry(r.get(0)).or_default().insert(r.get(1));
    }
    for (table, cols) in sqlite_columns() {
        if table == "journal_state" || table == "audit_rebuilt" {
            continue;
        }
        let have = pg
            .get(&table)
            .unwrap_or_else(|| panic!("no table {table} in PostgreSQL"));
        // `journal` numbers journaled intents in SQLite only.
        let missing: Vec<_> = cols
            .difference(have)
            .filter(|c| !(table == "audit" && *c == "journal"))
            .collect();
        assert!(missing.is_empty(), "{table}: missing {missing:?}");
    }

    // Every integer column is BIGINT (the store binds i64), but the one-row tables' ids.
    let narrow: Vec<(String, String)> = c
        .query(
            "SELECT table_name, column_name FROM information_schema.columns
             WHERE table_schema = 'public' AND data_type IN ('integer', 'smallint')
               AND NOT (column_name = 'id' AND table_name IN ('registry_epoch', 'audit_retention'))",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert!(
        narrow.is_empty(),
        "integer columns narrower than i64: {narrow:?}"
    );

    // Registry changes are announced with the table's name and counted.
    let listener = Listener::start(
        pg_config(&url, &opts).unwrap(),
        &[REGISTRY_CHANNEL],
        Duration::from_millis(200),
    )
    .unwrap();
    let mut rx = listener.subscribe();
    for _ in 0..200 {
        if listener.is_connected() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = epoch(&c).await;
    c.execute(
        "INSERT INTO workspaces(id, name, created_at) VALUES ('w', 'W', 0)",
        &[],
    )
    .await
    .unwrap();
    c.execute(
        "INSERT INTO agents(workspace_id, agent_id, endpoint, created_at)
         VALUES ('w', 'a', 'http://127.0.0.1:9/', 0)",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(epoch(&c).await, before + 2);
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(Event::Notification { channel, payload })) => {
                assert_eq!(channel, REGISTRY_CHANNEL);
                seen.push(payload);
            }
            Ok(Ok(Event::Connected)) => {}
            other => panic!("no registry notification: {other:?} after {seen:?}"),
        }
    }
    assert_eq!(seen, ["workspaces", "agents"]);

    // The audit is append-only except below the retention mark, which only moves forward.
    for _ in 0..3 {
        c.execute(
            "INSERT INTO audit(ts, trace_id, decision, status, latency_ms)
             VALUES ('t', 'x', 'allowed', 200, 1)",
            &[],
        )
        .await
        .unwrap();
    }
    let err = c
        .execute("UPDATE audit SET status = 500", &[])
        .await
        .unwrap_err();
    assert!(message(&err).contains("append-only"), "{err:?}");
    let err = c.execute("DELETE FROM audit", &[]).await.unwrap_err();
    assert!(message(&err).contains("append-only"), "{err:?}");
    let first: i64 = c
        .query_one("SELECT min(seq) FROM audit", &[])
        .await
        .unwrap()
        .get(0);
    c.execute(
        "UPDATE audit_retention SET deleted_below = $1",
        &[&(first + 1)],
    )
    .await
    .unwrap();
    assert_eq!(
        c.execute("DELETE FROM audit WHERE seq = $1", &[&first])
            .await
            .unwrap(),
        1
    );
    assert!(
        c.execute("UPDATE audit_retention SET deleted_below = 0", &[])
            .await
            .is_err(),
        "the mark never moves back"
    );
    assert!(
        c.execute("UPDATE audit_retention SET deleted_below = 1000000", &[])
            .await
            .is_err(),
        "nor past the newest row"
    );

    // Each owner's count of listed tasks follows inserts, gone marks and deletions.
    for (task, ws) in [("t1", "w"), ("t2", "w"), ("t3", "w"), ("u1", "v")] {
        c.execute(
            "INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at)
             VALUES ('e', $1, $2, 'a', 0)",
            &[&task, &ws],
        )
        .await
        .unwrap();
    }
    let listed = |ws: &'static str| {
        let c = &c;
        async move {
            c.query_opt(
                "SELECT listed FROM task_owner_counts
                 WHERE workspace_id = $1 AND agent_id = 'a' AND endpoint = 'e'",
                &[&ws],
            )
            .await
            .unwrap()
            .map_or(0, |r| r.get::<_, i64>(0))
        }
    };
    assert_eq!((listed("w").await, listed("v").await), (3, 1));
    for sql in [
        "UPDATE task_owners SET gone = TRUE WHERE task_id = 't2'",
        "UPDATE task_owners SET gone = TRUE WHERE task_id = 't2'",
        "UPDATE task_owners SET state = 'x', gone = FALSE WHERE task_id = 't1'",
    ] {
        c.execute(sql, &[]).await.unwrap();
    }
    assert_eq!(listed("w").await, 2);
    c.execute(
        "UPDATE task_owners SET gone = FALSE WHERE task_id = 't2'",
        &[],
    )
    .await
    .unwrap();
    c.execute("DELETE FROM task_owners WHERE task_id IN ('t3', 'u1')", &[])
        .await
        .unwrap();
    assert_eq!((listed("w").await, listed("v").await), (2, 0));
}

/// Binds of one owner's tasks from two backends at once do not wait for each other: the
/// owner's count is kept in stripes per backend (migration 10), so an uncommitted batch of one
/// replica's writer does not hold back another's; the count is their sum once both commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_owners_binds_from_two_backends_do_not_wait_for_each_other() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    let p = pool(&cluster.url(), &PoolOptions::default()).unwrap();
    {
        let mut c = p.get().await.unwrap();
        migrate(&mut c, COMPONENT, PG_MIGRATIONS).await.unwrap();
    }
    // Two connections whose backends count in different stripes.
    let mut held: Vec<(i32, a2a_pg::deadpool_postgres::Object)> = Vec::new();
    let (a, b) = loop {
        let c = p.get().await.unwrap();
        let pid: i32 = c
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        if let Some(i) = held.iter().position(|(other, _)| other % 16 != pid % 16) {
            break (held.swap_remove(i).1, c);
        }
        held.push((pid, c));
    };
    let insert = "INSERT INTO task_owners(endpoint, task_id, workspace_id, agent_id, created_at)
                  VALUES ('e', $1, 'w', 'a', 0)";
    a.batch_execute("BEGIN").await.unwrap();
    a.execute(insert, &[&"t1"]).await.unwrap();
    b.batch_execute("BEGIN; SET LOCAL lock_timeout = '2s'")
        .await
        .unwrap();
    let second = b.execute(insert, &[&"t2"]).await;
    assert!(
        second.is_ok(),
        "the second backend waited for the first: {:?}",
        second.err().map(|e| message(&e))
    );
    b.batch_execute("COMMIT").await.unwrap();
    a.batch_execute("COMMIT").await.unwrap();
    let listed: i64 = a
        .query_one(
            "SELECT COALESCE(SUM(listed), 0)::BIGINT FROM task_owner_counts
             WHERE workspace_id = 'w' AND agent_id = 'a' AND endpoint = 'e'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(listed, 2);
}

async fn epoch(c: &a2a_pg::deadpool_postgres::Object) -> i64 {
    c.query_one("SELECT epoch FROM registry_epoch", &[])
        .await
        .unwrap()
        .get(0)
}

fn message(e: &a2a_pg::tokio_postgres::Error) -> String {
    e.as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_owned())
}
