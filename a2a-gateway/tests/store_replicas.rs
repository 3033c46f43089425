//! Two PostgreSQL registries on one database, as two replicas hold them (issue 32): a change
//! made through one is read by the other, whose cache held the old answer, once the
//! notification has arrived; while the database is down every call fails as unavailable, and
//! after it returns the replicas read what changed meanwhile.

use std::future::Future;
use std::time::Duration;

use a2a_gateway::keys::Scope;
use a2a_gateway::store::backend::{PgRegistry, RegistryStore};
use a2a_gateway::store::{Agent, KeyRejection, PushDelivery, StoreError, WorkspaceSettings};
use a2a_pg::PoolOptions;

use crate::store_suite::{cluster, pg, wait_listening};

/// Waits until `check` holds (bounded: 10 s, a liveness bound, not a speed claim).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..500 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never: {what}");
}

fn echo(endpoint: &str) -> Agent {
    Agent {
        workspace_id: "w".into(),
        agent_id: "echo".into(),
        endpoint: endpoint.into(),
        credential: None,
        skills: None,
        pinned_card_key: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_one_replica_is_read_on_another() {
    let Some(cluster) = cluster() else { return };
    let a = pg(&cluster, "replicas").await;
    let b = PgRegistry::connect(&cluster.url_of("replicas"), &PoolOptions::default())
        .await
        .unwrap();
    assert!(wait_listening(&a).await && wait_listening(&b).await);

    // B has read (and cached) that nothing is there before A writes.
    assert_eq!(b.workspace("w").await.unwrap(), None);
    assert_eq!(b.agent("w", "echo").await.unwrap(), None);
    a.create_workspace("w", "W").await.unwrap();
    eventually("B reads A's workspace", || async {
        b.workspace("w").await.unwrap().is_some()
    })
    .await;
    // A duplicate made on another replica is refused as on one.
    assert!(b.create_workspace("w", "again").await.is_err());

    a.upsert_agent(&echo("http://127.0.0.1:9/")).await.unwrap();
    eventually("B reads A's agent", || async {
        b.agent("w", "echo").await.unwrap().is_some()
    })
    .await;
    // B replaces it; A, whose cache holds the old endpoint, reads the new one.
    assert_eq!(
        a.agent("w", "echo").await.unwrap().unwrap().endpoint,
        "http://127.0.0.1:9/"
    );
    b.upsert_agent(&echo("http://127.0.0.1:10/")).await.unwrap();
    assert_eq!(
        b.agent("w", "echo").await.unwrap().unwrap().endpoint,
        "http://127.0.0.1:10/",
        "the writer reads its own change at once"
    );
    eventually("A reads B's new endpoint", || async {
        a.agent("w", "echo").await.unwrap().unwrap().endpoint == "http://127.0.0.1:10/"
    })
    .await;

    // A key made on A authenticates on B; revoked on A, B refuses it although it cached it.
    let (info, secret) = a.create_key("w", &[Scope::Send], None, None).await.unwrap();
    eventually("B accepts A's key", || async {
        b.authenticate(&secret).await.unwrap().is_ok()
    })
    .await;
    assert_eq!(b.key_standing(&info.key_id).await.unwrap(), None);
    a.revoke_key(&info.key_id).await.unwrap();
    eventually("B refuses the key A revoked", || async {
        b.authenticate(&secret).await.unwrap() == Err(KeyRejection::Revoked)
    })
    .await;
    assert_eq!(
        b.key_standing(&info.key_id).await.unwrap(),
        Some(KeyRejection::Revoked)
    );

    // Settings, and a deletion, the other way round.
    assert_eq!(
        a.workspace_settings("w").await.unwrap(),
        WorkspaceSettings::default()
    );
    let set = WorkspaceSettings {
        extensions_allowed: vec!["urn:x:e".into()],
        push_delivery: Some(PushDelivery::Direct),
    };
    b.put_workspace_settings("w", &set).await.unwrap();
    eventually("A reads B's settings", || async {
        a.workspace_settings("w").await.unwrap() == set
    })
    .await;
    b.delete_agent("w", "echo").await.unwrap();
    eventually("A no longer finds the agent B deleted", || async {
        a.agent("w", "echo").await.unwrap().is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_postgres_is_down_calls_fail_as_unavailable_and_recover_after() {
    let Some(cluster) = cluster() else { return };
    cluster.create_database("outage").unwrap();
    let quick = PoolOptions {
        connect_timeout: Duration::from_secs(1),
        wait_timeout: Duration::from_secs(2),
        ..PoolOptions::default()
    };
    let url = cluster.url_of("outage");
    let a = PgRegistry::connect(&url, &quick).await.unwrap();
    let b = PgRegistry::connect(&url, &quick).await.unwrap();
    assert!(wait_listening(&a).await && wait_listening(&b).await);
    a.create_workspace("w", "W").await.unwrap();
    let (_, secret) = a.create_key("w", &[], None, None).await.unwrap();
    eventually("B accepts the key", || async {
        b.authenticate(&secret).await.unwrap().is_ok()
    })
    .await;

    cluster.stop().unwrap();
    eventually("B notices its listener is gone", || async {
        !b.listening()
    })
    .await;
    // Not listening, B asks the database before answering from its cache: it fails, and
    // says that the database is away, rather than answering from what may be stale.
    let err = b.authenticate(&secret).await.unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");
    let err = a.create_workspace("v", "V").await.unwrap_err();
    assert!(err.is_unavailable(), "{err:?}");

    cluster.start_again().unwrap();
    // A revokes the key while B may still be reconnecting its listener: B reads the change
    // either by the notification or by asking the table.
    eventually("A writes again", || async {
        // A try that committed but lost its answer leaves the workspace taken.
        matches!(
            a.create_workspace("v", "V").await,
            Ok(_) | Err(StoreError::Invalid(_))
        )
    })
    .await;
    let key_id = a.list_keys("w").await.unwrap()[0].key_id.clone();
    a.revoke_key(&key_id).await.unwrap();
    eventually("B refuses the revoked key after the outage", || async {
        matches!(
            b.authenticate(&secret).await,
            Ok(Err(KeyRejection::Revoked))
        )
    })
    .await;
    eventually("B listens again", || async { b.listening() }).await;
}
