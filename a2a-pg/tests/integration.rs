//! Against a real throwaway cluster (`TempCluster`): migrations applied once by replicas that
//! start together, a newer schema refused, notifications across connections and across a
//! restart of the database, a pool that fails fast while the database is down, and replicas'
//! liveness locks held while their session lasts.

use std::time::Duration;

use a2a_pg::testing::TempCluster;
use a2a_pg::{Event, Listener, PgError, PoolOptions, migrate, notify, pg_config, pool};

fn quick() -> PoolOptions {
    PoolOptions {
        max_size: 4,
        connect_timeout: Duration::from_secs(2),
        wait_timeout: Duration::from_secs(3),
        ..PoolOptions::default()
    }
}

const MIGRATIONS: [&str; 2] = [
    "CREATE TABLE applied (n INT NOT NULL); INSERT INTO applied VALUES (1);",
    "INSERT INTO applied VALUES (2);",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_apply_each_migration_once() {
    let cluster = TempCluster::start().unwrap();
    cluster.create_database("m").unwrap();
    let url = cluster.url_of("m");
    // Eight "replicas", each with its own pool, migrate at once.
    let mut joins = Vec::new();
    for _ in 0..8 {
        let url = url.clone();
        joins.push(tokio::spawn(async move {
            let p = pool(&url, &quick()).unwrap();
            let mut c = p.get().await.unwrap();
            migrate(&mut c, "test", &MIGRATIONS).await.unwrap()
        }));
    }
    let mut applied_by = 0;
    for j in joins {
        let m = j.await.unwrap();
        assert_eq!(m.version, 2);
        if m.from == 0 {
            applied_by += 1;
        }
    }
    assert_eq!(applied_by, 1, "one replica applied the migrations");
    let p = pool(&url, &quick()).unwrap();
    let c = p.get().await.unwrap();
    let rows: Vec<i32> = c
        .query("SELECT n FROM applied ORDER BY n", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(rows, vec![1, 2]);

    // Another component's list is independent; an older release (one migration) is refused.
    let mut c = p.get().await.unwrap();
    let other = migrate(&mut c, "other", &["CREATE TABLE other_t (x INT)"])
        .await
        .unwrap();
    assert_eq!((other.from, other.version), (0, 1));
    match migrate(&mut c, "test", &MIGRATIONS[..1]).await {
        Err(PgError::NewerSchema { found, known, .. }) => assert_eq!((found, known), (2, 1)),
        other => panic!("{other:?}"),
    }
    // The lock was given back after the refusal: a new migration still applies.
    let three = [
        MIGRATIONS[0],
        MIGRATIONS[1],
        "INSERT INTO applied VALUES (3);",
    ];
    let m = migrate(&mut c, "test", &three).await.unwrap();
    assert_eq!((m.from, m.version), (2, 3));
}

async fn next_notification(rx: &mut tokio::sync::broadcast::Receiver<Event>) -> (String, String) {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(Event::Notification { channel, payload })) => return (channel, payload),
            Ok(Ok(Event::Connected)) => continue,
            other => panic!("no notification: {other:?}"),
        }
    }
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    for _ in 0..300 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_cross_connections_and_resume_after_the_database_restarts() {
    let cluster = TempCluster::start().unwrap();
    let url = cluster.url();
    let listener = Listener::start(
        pg_config(&url, &quick()).unwrap(),
        &["a2a_changes", "a2a_other"],
        Duration::from_millis(200),
    )
    .unwrap();
    let mut rx = listener.subscribe();
    wait_until("connected", || listener.is_connected()).await;
    let p = pool(&url, &quick()).unwrap();
    let c = p.get().await.unwrap();
    notify(&c, "a2a_changes", "registry:ws1").await.unwrap();
    assert_eq!(
        next_notification(&mut rx).await,
        ("a2a_changes".into(), "registry:ws1".into())
    );
    // Not listened to: never delivered.
    notify(&c, "a2a_unheard", "x").await.unwrap();
    notify(&c, "a2a_other", "y").await.unwrap();
    assert_eq!(next_notification(&mut rx).await.1, "y");
    drop(c);

    // The database goes away: the listener says so, the pool fails fast.
    cluster.stop().unwrap();
    wait_until("disconnected", || !listener.is_connected()).await;
    let got = tokio::time::timeout(Duration::from_secs(15), p.get()).await;
    match got {
        Ok(Err(e)) => assert!(PgError::from(e).is_unavailable()),
        Ok(Ok(c)) => {
            // A pooled connection that has not noticed yet fails on first use.
            let e = c.execute("SELECT 1", &[]).await.unwrap_err();
            assert!(PgError::from(e).is_unavailable());
        }
        Err(_) => panic!("the pool hung while the database was down"),
    }

    // It comes back: the listener reconnects by itself and tells its user to re-read.
    cluster.start_again().unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Ok(Event::Connected)) => break,
            Ok(Ok(_)) | Ok(Err(_)) => continue,
            Err(_) => panic!("the listener did not reconnect"),
        }
    }
    assert!(listener.connections() >= 2);
    let c = loop {
        match p.get().await {
            Ok(c) if c.execute("SELECT 1", &[]).await.is_ok() => break c,
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    notify(&c, "a2a_changes", "after").await.unwrap();
    assert_eq!(next_notification(&mut rx).await.1, "after");
}

#[test]
fn bad_channel_names_and_urls_are_refused() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let cfg = pg_config("postgres://u@127.0.0.1:1/db", &quick()).unwrap();
        assert!(Listener::start(cfg, &["x; DROP TABLE t"], Duration::from_secs(1)).is_err());
    });
    assert!(matches!(
        pool("not a url ::", &quick()),
        Err(PgError::Setup(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_is_alive_while_its_session_lasts() {
    let cluster = TempCluster::start().unwrap();
    let url = cluster.url();
    let p = pool(&url, &quick()).unwrap();
    let c = p.get().await.unwrap();
    let cfg = pg_config(&url, &quick()).unwrap();
    assert!(
        !a2a_pg::is_alive(&c, "agent", "r1").await.unwrap(),
        "never started"
    );
    let r1 = a2a_pg::Alive::hold(&cfg, "agent", "r1").await.unwrap();
    assert_eq!(r1.id(), "r1");
    let r2 = a2a_pg::Alive::hold(&cfg, "agent", "r2").await.unwrap();
    // Asked twice: the probe gives back what it took.
    for _ in 0..2 {
        assert!(a2a_pg::is_alive(&c, "agent", "r1").await.unwrap());
        assert!(a2a_pg::is_alive(&c, "agent", "r2").await.unwrap());
    }
    // Another component's replica of the same id is another replica.
    assert!(!a2a_pg::is_alive(&c, "gateway", "r1").await.unwrap());
    drop(r1);
    // PostgreSQL frees the lock once it has seen the session end.
    let mut gone = false;
    for _ in 0..200 {
        if !a2a_pg::is_alive(&c, "agent", "r1").await.unwrap() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "r1's lock was never freed");
    assert!(
        a2a_pg::is_alive(&c, "agent", "r2").await.unwrap(),
        "r2 still runs"
    );
    drop(r2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_ends_when_its_replica_stops_renewing_it_or_gives_it_up() {
    use a2a_pg::lease;
    let cluster = TempCluster::start().unwrap();
    let p = pool(&cluster.url(), &quick()).unwrap();
    p.get()
        .await
        .unwrap()
        .batch_execute("CREATE TABLE r (id TEXT PRIMARY KEY, expires TIMESTAMPTZ NOT NULL)")
        .await
        .unwrap();
    assert!(lease::gone(&p, "r", "a").await.unwrap(), "never taken");
    // Kept: renewed every third of 1.5 s, so it stays current well past 1.5 s.
    let kept = a2a_pg::Lease::keep(p.clone(), "r", "a".into(), Duration::from_millis(1500));
    assert_eq!(kept.id(), "a");
    wait_until_async(|| async { !lease::gone(&p, "r", "a").await.unwrap() }).await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert!(!lease::gone(&p, "r", "a").await.unwrap(), "renewed");
    // Taken once and not renewed (a replica killed or stalled): gone after its time.
    lease::renew(&p, "r", "b", Duration::from_millis(300))
        .await
        .unwrap();
    assert!(!lease::gone(&p, "r", "b").await.unwrap());
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(lease::gone(&p, "r", "b").await.unwrap(), "not renewed");
    // Given up (dropped): gone at once.
    drop(kept);
    wait_until_async(|| async { lease::gone(&p, "r", "a").await.unwrap() }).await;
}

/// Waits until `f` holds (bounded: 20 s, a liveness bound).
async fn wait_until_async<F: std::future::Future<Output = bool>>(f: impl Fn() -> F) {
    for _ in 0..400 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never");
}
