//! One suite for what replicas share beyond the registry (issue 32): secrets (the page-token
//! key), console sessions and login links, card trust keys, switches and the push JWT replay
//! guard, written against `SecretStore`, `SessionStore` and `TrustStore` and run on a SQLite
//! file and on a throwaway PostgreSQL cluster. On PostgreSQL also: two handles ("replicas")
//! on one database share every one of them, a link or a `jti` is spent once whichever
//! replica redeems it, and with the database stopped every call fails as unavailable, then
//! works again after the restart.

use std::time::Duration;

use a2a_gateway::store::backend::{
    MAX_SESSIONS, PAGE_KEY, PgShared, RegistryStore, SecretStore, SessionInfo, SessionStore,
    Shared, SqliteRegistry, SqliteShared, TrustStore,
};
use a2a_gateway::store::{Store, StoreError};
use a2a_pg::PoolOptions;
use serde_json::json;

use crate::store_suite::{cluster, pg};

fn hash(n: u32) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[..4].copy_from_slice(&n.to_be_bytes());
    h
}

/// The whole suite; workspace `ws-a` exists, `ws-missing` does not.
async fn suite<S: SecretStore + SessionStore + TrustStore>(s: &S) {
    secrets(s).await;
    sessions(s).await;
    links(s).await;
    trust(s).await;
}

async fn secrets<S: SecretStore>(s: &S) {
    let a = s.secret(PAGE_KEY).await.unwrap();
    assert!(a.len() >= 32, "{a:?}");
    assert_eq!(s.secret(PAGE_KEY).await.unwrap(), a, "made once");
    assert_ne!(s.secret("another").await.unwrap(), a);
}

/// A session of operator `op-{csrf}` with two roles (both kept as given).
fn info(csrf: &str) -> SessionInfo {
    SessionInfo {
        csrf: csrf.into(),
        operator: format!("oidc:op-{csrf}"),
        roles: "viewer approver:ws1".into(),
    }
}

async fn sessions<S: SessionStore>(s: &S) {
    let long = Duration::from_secs(3600);
    s.open_session(hash(1), &info("csrf-1"), long)
        .await
        .unwrap();
    s.open_session(hash(2), &info("csrf-2"), long)
        .await
        .unwrap();
    assert_eq!(s.session(hash(1)).await.unwrap(), Some(info("csrf-1")));
    assert_eq!(s.session(hash(2)).await.unwrap(), Some(info("csrf-2")));
    assert_eq!(s.session(hash(3)).await.unwrap(), None);
    s.close_session(hash(1)).await.unwrap();
    assert_eq!(s.session(hash(1)).await.unwrap(), None, "closed");
    s.close_session(hash(1)).await.unwrap();
    // An expired session is not live.
    s.open_session(hash(4), &info("csrf-4"), Duration::from_millis(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(s.session(hash(4)).await.unwrap(), None, "expired");
    // Past the bound the oldest (first to expire) is dropped, the newest kept.
    let n = u32::try_from(MAX_SESSIONS).unwrap();
    for i in 0..n {
        let ttl = long + Duration::from_secs(u64::from(i) + 1);
        s.open_session(hash(100 + i), &info("b"), ttl)
            .await
            .unwrap();
    }
    assert_eq!(
        s.session(hash(2)).await.unwrap(),
        None,
        "the oldest dropped"
    );
    assert!(s.session(hash(100)).await.unwrap().is_some());
    assert!(s.session(hash(99 + n)).await.unwrap().is_some());
    s.open_session(hash(99 + n + 1), &info("b"), long * 2)
        .await
        .unwrap();
    assert_eq!(s.session(hash(100)).await.unwrap(), None, "then the next");
    assert!(s.session(hash(99 + n + 1)).await.unwrap().is_some());
}

async fn links<S: SessionStore>(s: &S) {
    let t = s.login_token(Duration::from_secs(60));
    let u = s.login_token(Duration::from_secs(60));
    assert_ne!(t, u);
    assert!(s.redeem(&t).await.unwrap());
    assert!(!s.redeem(&t).await.unwrap(), "one time");
    assert!(s.redeem(&u).await.unwrap());
    assert!(!s.redeem("made-up").await.unwrap());
    assert!(!s.redeem("").await.unwrap());
    let forged = format!("{}0", &u[..u.len() - 1]);
    assert!(!s.redeem(&forged).await.unwrap());
    let short = s.login_token(Duration::from_millis(1));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!s.redeem(&short).await.unwrap(), "expired");
}

async fn trust<S: TrustStore>(s: &S) {
    assert!(s.signing_keys().await.unwrap().is_empty());
    assert_eq!(s.signing_key().await.unwrap(), None);
    let jwk = |k: &str| json!({"kty": "EC", "kid": k});
    s.insert_signing_key("k1", &jwk("k1"), b"sealed-1")
        .await
        .unwrap();
    s.insert_signing_key("k2", &jwk("k2"), b"sealed-2")
        .await
        .unwrap();
    match s.insert_signing_key("k1", &jwk("k1"), b"x").await {
        Err(StoreError::Invalid(m)) => assert_eq!(m, "signing key k1 already exists"),
        other => panic!("a taken kid: {other:?}"),
    }
    let keys = s.signing_keys().await.unwrap();
    let kids: Vec<&str> = keys.iter().map(|k| k.kid.as_str()).collect();
    assert_eq!(kids, ["k2", "k1"], "newest first");
    assert_eq!(keys[0].public_jwk, jwk("k2"));
    assert_eq!(keys[0].state, "active");
    assert_eq!(
        s.signing_key().await.unwrap(),
        Some(("k2".to_owned(), b"sealed-2".to_vec()))
    );
    s.retire_signing_key("k2").await.unwrap();
    s.retire_signing_key("k2").await.unwrap();
    match s.retire_signing_key("nope").await {
        Err(StoreError::NotFound(m)) => assert_eq!(m, "signing key nope"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.signing_key().await.unwrap().map(|k| k.0).as_deref(),
        Some("k1")
    );
    s.insert_signing_key("k3", &jwk("k3"), b"sealed-3")
        .await
        .unwrap();
    s.retire_other_keys("k3").await.unwrap();
    let keys = s.signing_keys().await.unwrap();
    let states: Vec<(&str, &str)> = keys.iter().map(|k| (k.kid.as_str(), k.state)).collect();
    assert_eq!(
        states,
        [("k3", "active"), ("k2", "retired"), ("k1", "retired")]
    );
    assert!(keys[1].retired_at.is_some());

    assert_eq!(s.require_signed("ws-a").await.unwrap(), None);
    s.set_require_signed("ws-a", Some(true)).await.unwrap();
    assert_eq!(s.require_signed("ws-a").await.unwrap(), Some(true));
    s.set_require_signed("ws-a", Some(false)).await.unwrap();
    assert_eq!(s.require_signed("ws-a").await.unwrap(), Some(false));
    s.set_require_signed("ws-a", None).await.unwrap();
    assert_eq!(s.require_signed("ws-a").await.unwrap(), None);
    for on in [Some(true), None] {
        match s.set_require_signed("ws-missing", on).await {
            Err(StoreError::NotFound(m)) => assert_eq!(m, "workspace ws-missing"),
            other => panic!("{other:?}"),
        }
    }

    let exp = time::OffsetDateTime::now_utc().unix_timestamp() + 300;
    assert!(s.use_jti("ws-a/echo", "j1", exp).await.unwrap());
    assert!(
        !s.use_jti("ws-a/echo", "j1", exp).await.unwrap(),
        "replayed"
    );
    assert!(
        s.use_jti("ws-a/other", "j1", exp).await.unwrap(),
        "per issuer"
    );
    assert!(s.use_jti("ws-a/echo", "j2", exp).await.unwrap());
}

#[tokio::test]
async fn the_shared_suite_on_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    SqliteRegistry::new(store.clone())
        .create_workspace("ws-a", "A")
        .await
        .unwrap();
    suite(&Shared::Sqlite(SqliteShared::new(store.clone()))).await;
    // The trust rows are the file's, as the offline CLI reads them.
    assert_eq!(store.signing_keys().unwrap().len(), 3);
    // One process: a second handle makes its own secrets and has its own sessions.
    let other = SqliteShared::new(store);
    let one = Shared::Sqlite(SqliteShared::new(Store::open_in_memory().unwrap()));
    assert_ne!(
        other.secret(PAGE_KEY).await.unwrap(),
        one.secret(PAGE_KEY).await.unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_suite_on_postgres() {
    let Some(cluster) = cluster() else { return };
    let r = pg(&cluster, "shared").await;
    r.create_workspace("ws-a", "A").await.unwrap();
    suite(&Shared::Postgres(r.shared().await.unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_secrets_sessions_links_keys_and_used_jtis() {
    let Some(cluster) = cluster() else { return };
    let r = pg(&cluster, "replicas").await;
    r.create_workspace("ws-a", "A").await.unwrap();
    let url = cluster.url_of("replicas");
    let a = PgShared::connect(&url, &PoolOptions::default())
        .await
        .unwrap();
    let b = PgShared::connect(&url, &PoolOptions::default())
        .await
        .unwrap();
    // Both replicas starting together make one page-token key.
    let opts = PoolOptions::default();
    let (kc, ka) = tokio::join!(
        async {
            let c = PgShared::connect(&url, &opts).await.unwrap();
            c.secret("race").await.unwrap()
        },
        a.secret("race")
    );
    assert_eq!(kc, ka.unwrap());
    assert_eq!(
        a.secret(PAGE_KEY).await.unwrap(),
        b.secret(PAGE_KEY).await.unwrap()
    );
    // A session opened on A is live on B; closed on B, it is gone on A.
    a.open_session(hash(7), &info("c7"), Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(b.session(hash(7)).await.unwrap(), Some(info("c7")));
    b.close_session(hash(7)).await.unwrap();
    assert_eq!(a.session(hash(7)).await.unwrap(), None);
    // Only the hash is stored.
    let admin = a2a_pg::pool(&url, &PoolOptions::default()).unwrap();
    let c = admin.get().await.unwrap();
    a.open_session(hash(8), &info("c8"), Duration::from_secs(60))
        .await
        .unwrap();
    let row = c
        .query_one(
            "SELECT token_hash FROM console_sessions WHERE csrf = 'c8'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, Vec<u8>>(0), hash(8).to_vec());
    // A link made on A is redeemed once, on B; then neither takes it. Both at once: one wins.
    let t = a.login_token(Duration::from_secs(60));
    assert!(b.redeem(&t).await.unwrap());
    assert!(!a.redeem(&t).await.unwrap());
    assert!(!b.redeem(&t).await.unwrap());
    for _ in 0..20 {
        let t = b.login_token(Duration::from_secs(60));
        let (x, y) = tokio::join!(a.redeem(&t), b.redeem(&t));
        assert!(x.unwrap() ^ y.unwrap(), "exactly one redeems");
    }
    // A jti used on A is refused on B; at once on both: one is accepted.
    let exp = time::OffsetDateTime::now_utc().unix_timestamp() + 300;
    assert!(a.use_jti("ws-a/echo", "j", exp).await.unwrap());
    assert!(!b.use_jti("ws-a/echo", "j", exp).await.unwrap());
    for i in 0..20 {
        let j = format!("race-{i}");
        let (x, y) = tokio::join!(a.use_jti("i", &j, exp), b.use_jti("i", &j, exp));
        assert!(x.unwrap() ^ y.unwrap(), "exactly one uses {j}");
    }
    // A key made on A signs on B within the poll; a switch set on A reads on B.
    let newest = b.newest_signing_key();
    assert!(newest.load().is_none());
    a.insert_signing_key("ka", &json!({"kid": "ka"}), b"s")
        .await
        .unwrap();
    let mut seen = false;
    for _ in 0..300 {
        if newest.load().as_ref().as_ref().map(|k| k.0.as_str()) == Some("ka") {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen, "B never read A's key");
    a.set_require_signed("ws-a", Some(true)).await.unwrap();
    assert_eq!(b.require_signed("ws-a").await.unwrap(), Some(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_postgres_stopped_every_call_fails_as_unavailable_then_works_again() {
    let Some(cluster) = cluster() else { return };
    let r = pg(&cluster, "outage").await;
    r.create_workspace("ws-a", "A").await.unwrap();
    let quick = PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    };
    let s = PgShared::connect(&cluster.url_of("outage"), &quick)
        .await
        .unwrap();
    let t = s.login_token(Duration::from_secs(60));
    cluster.stop().unwrap();
    #[track_caller]
    fn down<T: std::fmt::Debug>(what: &str, r: Result<T, StoreError>) {
        match r {
            Err(e) if e.is_unavailable() => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    down("secret", s.secret(PAGE_KEY).await);
    down(
        "open",
        s.open_session(hash(1), &info("c"), Duration::from_secs(60))
            .await,
    );
    down("session", s.session(hash(1)).await);
    down("close", s.close_session(hash(1)).await);
    down("redeem", s.redeem(&t).await);
    down("keys", s.signing_keys().await);
    down("switch", s.require_signed("ws-a").await);
    down("jti", s.use_jti("i", "j", i64::MAX).await);
    cluster.start_again().unwrap();
    let mut back = false;
    for _ in 0..300 {
        if s.session(hash(1)).await.is_ok() {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back, "never served again");
    assert!(
        s.redeem(&t).await.unwrap(),
        "the link was not spent by the outage"
    );
    s.open_session(hash(1), &info("c"), Duration::from_secs(60))
        .await
        .unwrap();
    assert!(s.session(hash(1)).await.unwrap().is_some());
}

mod streams {
    use std::time::Duration;

    use a2a_gateway::store::backend::{PgStreams, StreamBounds, StreamKey, StreamRow};
    use a2a_pg::{Event, PoolOptions};

    use crate::store_suite::cluster;

    fn key(stream: u64, ws: &str) -> StreamKey {
        StreamKey {
            stream,
            workspace: ws.into(),
            agent: "echo".into(),
            task: "t1".into(),
            version: "1.0".into(),
        }
    }

    fn ev(seq: u64) -> StreamRow {
        StreamRow {
            seq,
            end: false,
            body: format!("{{\"n\":{seq}}}"),
        }
    }

    /// Waits (bounded: 30 s, a liveness bound) until `s` keeps `want` of `k`.
    async fn kept(s: &PgStreams, k: &StreamKey, want: Option<(u64, u64, bool)>) {
        for _ in 0..600 {
            if s.bounds(k).await.unwrap() == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("never kept {want:?}: {:?}", s.bounds(k).await);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stream_events_are_written_in_order_scoped_announced_and_trimmed() {
        let Some(cluster) = cluster() else { return };
        cluster.create_database("streams").unwrap();
        let url = cluster.url_of("streams");
        let b = StreamBounds::default();
        let writer = PgStreams::connect(&url, &PoolOptions::default(), b)
            .await
            .unwrap();
        let reader = PgStreams::connect(&url, &PoolOptions::default(), b)
            .await
            .unwrap();
        for _ in 0..500 {
            if reader.listening() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(reader.listening());
        let mut heard = reader.changes();
        let k = key(7, "ws-a");
        // 600 events queued at once: committed in batches, every one once, in order.
        for n in 1..=600 {
            writer.enqueue(&k, ev(n));
        }
        writer.enqueue(
            &k,
            StreamRow {
                seq: 601,
                end: true,
                body: String::new(),
            },
        );
        kept(&reader, &k, Some((1, 600, true))).await;
        let mut after = 0;
        loop {
            let rows = reader.after(&k, after, 256).await.unwrap();
            let Some(last) = rows.last() else { break };
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(r.seq, after + 1 + i as u64);
            }
            after = last.seq;
        }
        assert_eq!(after, 601);
        // The reader heard of the stream by notification.
        let got = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                if let Ok(Event::Notification { payload, .. }) = heard.recv().await {
                    return payload;
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(got, "7");
        // Another workspace, agent, task or version reads nothing of it.
        let mut others = vec![key(7, "ws-b"), key(8, "ws-a")];
        let mut k2 = key(7, "ws-a");
        k2.agent = "other".into();
        others.push(k2.clone());
        k2 = key(7, "ws-a");
        k2.version = "0.3".into();
        others.push(k2);
        for o in &others {
            assert_eq!(reader.bounds(o).await.unwrap(), None, "{o:?}");
            assert!(reader.after(o, 0, 10).await.unwrap().is_empty());
        }
        // Retention: each stream keeps its newest events; an ended one goes after the grace.
        let open = key(9, "ws-a");
        for n in 1..=10 {
            writer.enqueue(&open, ev(n));
        }
        kept(&reader, &open, Some((1, 10, false))).await;
        let tight = StreamBounds {
            max_events: 4,
            grace: Duration::from_secs(3600),
            max_age: Duration::from_secs(3600),
        };
        reader.trim(tight).await.unwrap();
        assert_eq!(reader.bounds(&open).await.unwrap(), Some((7, 10, false)));
        let gone = StreamBounds {
            grace: Duration::ZERO,
            ..tight
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        reader.trim(gone).await.unwrap();
        assert_eq!(reader.bounds(&k).await.unwrap(), None, "ended: trimmed");
        assert!(reader.bounds(&open).await.unwrap().is_some(), "open: kept");
        // With PostgreSQL stopped reads fail as unavailable; queued rows wait for it.
        let quick = PoolOptions {
            connect_timeout: Duration::from_secs(1),
            wait_timeout: Duration::from_secs(2),
            ..PoolOptions::default()
        };
        let q = PgStreams::connect(&url, &quick, b).await.unwrap();
        cluster.stop().unwrap();
        let e = q.bounds(&open).await.unwrap_err();
        assert!(e.is_unavailable(), "{e}");
        q.enqueue(&open, ev(11));
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.start_again().unwrap();
        kept(&q, &open, Some((7, 11, false))).await;
    }
}
