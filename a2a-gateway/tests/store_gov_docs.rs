//! One suite for the governance documents (workspace policies and PII rules), written once
//! against `GovDocStore` and run on both backends (issue 32): a SQLite file and a throwaway
//! PostgreSQL cluster. Documents are stored, replaced, read back as written and deleted per
//! workspace; a missing workspace is refused alike. On PostgreSQL a write moves the version a
//! cached read trusts (`epoch`): at once on the writing replica, and on another replica (a
//! second pool on the database) once its notification arrives.

use std::time::Duration;

use a2a_gateway::store::Store;
use a2a_gateway::store::StoreError;
use a2a_gateway::store::backend::{
    GovDocStore, GovDocs, RegistryStore, SqliteGovDocs, SqliteRegistry,
};

use crate::store_suite::{cluster, pg, wait_listening};

/// The whole suite, on a store whose workspaces `wa` and `wb` exist and hold no documents.
pub async fn suite<D: GovDocStore>(d: &D) {
    for ws in ["wa", "wb"] {
        assert_eq!(d.policy(ws).await.unwrap(), None);
        assert_eq!(d.pii_rules(ws).await.unwrap(), None);
    }
    let p1 = r#"{"rules":[{"id":"r1","when":"true","decision":"deny"}]}"#;
    let p2 = r#"{"rules":[{"id":"r2","when":"skill == 'x'","decision":"approve"}]}"#;
    let pii = r#"{"default_action":"record","actions":{"EMAIL":"redact"}}"#;
    d.put_policy("wa", p1).await.unwrap();
    d.put_pii_rules("wa", pii).await.unwrap();
    assert_eq!(d.policy("wa").await.unwrap().as_deref(), Some(p1));
    assert_eq!(d.pii_rules("wa").await.unwrap().as_deref(), Some(pii));
    // One workspace's documents are not another's.
    assert_eq!(d.policy("wb").await.unwrap(), None);
    assert_eq!(d.pii_rules("wb").await.unwrap(), None);
    // Replaced whole.
    d.put_policy("wa", p2).await.unwrap();
    assert_eq!(d.policy("wa").await.unwrap().as_deref(), Some(p2));
    // A missing workspace is refused, as not found.
    for r in [
        d.put_policy("nope", p1).await,
        d.put_pii_rules("nope", pii).await,
    ] {
        assert!(matches!(r, Err(StoreError::NotFound(_))), "{r:?}");
    }
    // Deleted once: the second delete finds nothing.
    assert!(d.delete_policy("wa").await.unwrap());
    assert!(!d.delete_policy("wa").await.unwrap());
    assert!(d.delete_pii_rules("wa").await.unwrap());
    assert!(!d.delete_pii_rules("wa").await.unwrap());
    assert_eq!(d.policy("wa").await.unwrap(), None);
    assert_eq!(d.pii_rules("wa").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gov_docs_suite_on_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    let reg = SqliteRegistry::new(store.clone());
    reg.create_workspace("wa", "A").await.unwrap();
    reg.create_workspace("wb", "B").await.unwrap();
    let d = GovDocs::Sqlite(SqliteGovDocs::new(store));
    suite(&d).await;
    // One process: no version, its cache is invalidated by its own writes.
    assert_eq!(d.epoch().await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gov_docs_suite_on_postgres_and_a_change_reaches_another_replica() {
    let Some(cluster) = cluster() else { return };
    let a = pg(&cluster, "govdocs").await;
    a.create_workspace("wa", "A").await.unwrap();
    a.create_workspace("wb", "B").await.unwrap();
    assert!(wait_listening(&a).await);
    suite(&GovDocs::Postgres(a.gov_docs())).await;
    // A second replica on the same database.
    let b = a2a_gateway::store::backend::PgRegistry::connect(
        &cluster.url_of("govdocs"),
        &a2a_pg::PoolOptions::default(),
    )
    .await
    .unwrap();
    assert!(wait_listening(&b).await);
    let (da, db) = (a.gov_docs(), b.gov_docs());
    let before_a = da.epoch().await.unwrap().unwrap();
    let before_b = db.epoch().await.unwrap().unwrap();
    da.put_policy("wb", r#"{"rules":[]}"#).await.unwrap();
    // The writer trusts nothing older at once; the other replica once it is told.
    assert!(da.epoch().await.unwrap().unwrap() > before_a);
    let mut moved = false;
    for _ in 0..400 {
        if db.epoch().await.unwrap().unwrap() > before_b {
            moved = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(moved, "replica B's version never moved past the change");
    assert_eq!(
        db.policy("wb").await.unwrap().as_deref(),
        Some(r#"{"rules":[]}"#)
    );
}
