//! One registry suite, written once against `RegistryStore` and run on both backends (issue
//! 32): a SQLite file and a throwaway PostgreSQL cluster. Duplicates, bad values and missing
//! rows are refused with the same error kind on both; revoked and expired keys are refused;
//! one workspace reads nothing of another's; settings round-trip; push callbacks keep their
//! delivered marks. The cross-replica tests are in `store_replicas`.

use a2a_gateway::keys::Scope;
use a2a_gateway::store::backend::{PgRegistry, Registry, RegistryStore, SqliteRegistry};
use a2a_gateway::store::{
    Agent, KeyRejection, PushCallback, PushDelivery, Store, StoreError, WorkspaceSettings,
};
use a2a_pg::PoolOptions;
use a2a_pg::testing::{TempCluster, server_bin};

/// A throwaway cluster, or `None` (with the reason printed) when PostgreSQL's server binaries
/// are not installed.
pub fn cluster() -> Option<TempCluster> {
    if server_bin().is_none() {
        eprintln!(
            "SKIPPED: no initdb/pg_ctl (install Debian's `postgresql`; `cargo xtask test` does)"
        );
        return None;
    }
    Some(TempCluster::start().expect("a throwaway PostgreSQL cluster starts"))
}

/// A registry on a fresh database `db` of `cluster`.
pub async fn pg(cluster: &TempCluster, db: &str) -> PgRegistry {
    cluster.create_database(db).unwrap();
    PgRegistry::connect(&cluster.url_of(db), &PoolOptions::default())
        .await
        .unwrap()
}

#[track_caller]
fn invalid<T: std::fmt::Debug>(r: Result<T, StoreError>, says: &str) {
    match r {
        Err(StoreError::Invalid(m)) => assert!(m.contains(says), "{m:?} lacks {says:?}"),
        other => panic!("expected Invalid({says:?}), got {other:?}"),
    }
}

#[track_caller]
fn not_found<T: std::fmt::Debug>(r: Result<T, StoreError>, says: &str) {
    match r {
        Err(StoreError::NotFound(m)) => assert_eq!(m, says),
        other => panic!("expected NotFound({says:?}), got {other:?}"),
    }
}

fn agent(ws: &str, id: &str, endpoint: &str) -> Agent {
    Agent {
        workspace_id: ws.into(),
        agent_id: id.into(),
        endpoint: endpoint.into(),
        credential: Some("peer-secret".into()),
        skills: Some(vec!["echo".into()]),
        pinned_card_key: None,
    }
}

/// The whole suite, on a registry with no rows.
pub async fn suite<R: RegistryStore>(r: &R) {
    workspaces(r).await;
    agents(r).await;
    keys(r).await;
    settings(r).await;
    push_callbacks(r).await;
}

async fn workspaces<R: RegistryStore>(r: &R) {
    let w = r.create_workspace("ws-b", "B").await.unwrap();
    assert_eq!((w.id.as_str(), w.name.as_str()), ("ws-b", "B"));
    r.create_workspace("ws-a", "A").await.unwrap();
    invalid(
        r.create_workspace("ws-b", "again").await,
        "workspace ws-b already exists",
    );
    invalid(r.create_workspace("bad id", "X").await, "workspace id");
    invalid(r.create_workspace("", "X").await, "workspace id");
    let ids: Vec<String> = r
        .list_workspaces()
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.id)
        .collect();
    assert_eq!(ids, ["ws-a", "ws-b"], "listed by id");
    assert_eq!(r.workspace("ws-b").await.unwrap().unwrap().name, "B");
    assert_eq!(r.workspace("nope").await.unwrap(), None);

    r.set_workspace_limits("ws-a", Some(1000), None, Some(50))
        .await
        .unwrap();
    let a = r.workspace("ws-a").await.unwrap().unwrap();
    assert_eq!(
        (a.max_response_bytes, a.max_stream_bytes, a.max_card_bytes),
        (Some(1000), None, Some(50))
    );
    r.set_workspace_limits("ws-a", None, Some(7), None)
        .await
        .unwrap();
    let a = r.workspace("ws-a").await.unwrap().unwrap();
    assert_eq!(
        (a.max_response_bytes, a.max_stream_bytes, a.max_card_bytes),
        (None, Some(7), None)
    );
    not_found(
        r.set_workspace_limits("nope", Some(1), None, None).await,
        "workspace nope",
    );
}

async fn agents<R: RegistryStore>(r: &R) {
    // A missing answer is cached too: the registration below must replace it.
    assert_eq!(r.agent("ws-a", "echo").await.unwrap(), None);
    let a = agent("ws-a", "echo", "http://127.0.0.1:9/a2a");
    r.upsert_agent(&a).await.unwrap();
    assert_eq!(r.agent("ws-a", "echo").await.unwrap(), Some(a.clone()));
    // Another workspace sees nothing of it.
    assert_eq!(r.agent("ws-b", "echo").await.unwrap(), None);
    assert!(r.list_agents("ws-b").await.unwrap().is_empty());

    let moved = Agent {
        endpoint: "http://127.0.0.1:10/a2a".into(),
        skills: None,
        credential: None,
        ..a.clone()
    };
    r.upsert_agent(&moved).await.unwrap();
    assert_eq!(r.agent("ws-a", "echo").await.unwrap(), Some(moved.clone()));
    r.upsert_agent(&agent("ws-a", "other", "http://127.0.0.1:11/"))
        .await
        .unwrap();
    let listed: Vec<String> = r
        .list_agents("ws-a")
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.agent_id)
        .collect();
    assert_eq!(listed, ["echo", "other"]);

    invalid(
        r.upsert_agent(&agent("ws-a", "bad id", "http://127.0.0.1:9/"))
            .await,
        "agent id",
    );
    invalid(
        r.upsert_agent(&agent("ws-a", "x", "not a url")).await,
        "endpoint",
    );
    let private = Agent {
        pinned_card_key: Some(r#"{"kty":"oct","k":"c2VjcmV0"}"#.into()),
        ..agent("ws-a", "x", "http://127.0.0.1:9/")
    };
    invalid(r.upsert_agent(&private).await, "pinnedCardKey");
    not_found(
        r.upsert_agent(&agent("nope", "x", "http://127.0.0.1:9/"))
            .await,
        "workspace nope",
    );

    r.delete_agent("ws-a", "other").await.unwrap();
    assert_eq!(r.agent("ws-a", "other").await.unwrap(), None);
    not_found(r.delete_agent("ws-a", "other").await, "agent other");
    // Deleting through another workspace removes nothing.
    not_found(r.delete_agent("ws-b", "echo").await, "agent echo");
    assert!(r.agent("ws-a", "echo").await.unwrap().is_some());
}

async fn keys<R: RegistryStore>(r: &R) {
    let (info, secret) = r
        .create_key("ws-a", &[Scope::Read], Some("ci"), None)
        .await
        .unwrap();
    assert_eq!(info.workspace_id, "ws-a");
    assert!(secret.starts_with("a2agw_") && secret.contains(&info.key_id));
    let p = r.authenticate(&secret).await.unwrap().unwrap();
    assert_eq!(
        (p.key_id.as_str(), p.workspace_id.as_str()),
        (info.key_id.as_str(), "ws-a")
    );
    assert_eq!(p.scopes, [Scope::Read]);
    assert!(p.registry_version.is_some());
    // The hop's later reads at the version it started with.
    let seen = p.registry_version;
    assert!(r.agent_seen("ws-a", "echo", seen).await.unwrap().is_some());
    assert!(r.workspace_seen("ws-a", seen).await.unwrap().is_some());

    // A wrong secret with a real id, a malformed key, an unknown id.
    let mut wrong = secret.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == 'A' { 'B' } else { 'A' });
    for bad in [wrong.as_str(), "garbage", "a2agw_0000000000000000_nope"] {
        assert_eq!(
            r.authenticate(bad).await.unwrap(),
            Err(KeyRejection::Invalid),
            "{bad}"
        );
    }

    // A key of one workspace authenticates to that workspace only, and lists only there.
    let (b_info, b_secret) = r.create_key("ws-b", &[], None, None).await.unwrap();
    let pb = r.authenticate(&b_secret).await.unwrap().unwrap();
    assert_eq!(pb.workspace_id, "ws-b");
    assert!(pb.scopes.is_empty());
    assert_eq!(r.agent(&pb.workspace_id, "echo").await.unwrap(), None);
    let ids = |keys: Vec<a2a_gateway::store::KeyInfo>| -> Vec<String> {
        keys.into_iter().map(|k| k.key_id).collect()
    };
    assert_eq!(
        ids(r.list_keys("ws-a").await.unwrap()),
        [info.key_id.as_str()]
    );
    assert_eq!(ids(r.list_keys("ws-b").await.unwrap()), [b_info.key_id]);
    not_found(
        r.create_key("nope", &[], None, None).await,
        "workspace nope",
    );

    // Revoked: refused at once (the key's row was cached by the reads above), idempotent.
    assert_eq!(r.key_standing(&info.key_id).await.unwrap(), None);
    r.revoke_key(&info.key_id).await.unwrap();
    assert_eq!(
        r.authenticate(&secret).await.unwrap(),
        Err(KeyRejection::Revoked)
    );
    assert_eq!(
        r.key_standing(&info.key_id).await.unwrap(),
        Some(KeyRejection::Revoked)
    );
    let revoked_at = r.list_keys("ws-a").await.unwrap()[0].revoked_at;
    assert!(revoked_at.is_some());
    r.revoke_key(&info.key_id).await.unwrap();
    assert_eq!(r.list_keys("ws-a").await.unwrap()[0].revoked_at, revoked_at);
    not_found(
        r.revoke_key("0000000000000000").await,
        "key 0000000000000000",
    );
    assert_eq!(
        r.key_standing("0000000000000000").await.unwrap(),
        Some(KeyRejection::Invalid)
    );

    // Expired.
    let past = time_now() - 10;
    let (old, old_secret) = r.create_key("ws-a", &[], None, Some(past)).await.unwrap();
    assert_eq!(
        r.authenticate(&old_secret).await.unwrap(),
        Err(KeyRejection::Expired)
    );
    assert_eq!(
        r.key_standing(&old.key_id).await.unwrap(),
        Some(KeyRejection::Expired)
    );
}

fn time_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

async fn settings<R: RegistryStore>(r: &R) {
    assert_eq!(
        r.workspace_settings("ws-a").await.unwrap(),
        WorkspaceSettings::default()
    );
    let set = WorkspaceSettings {
        extensions_allowed: vec!["urn:x:a".into(), "https://example.org/ext/b".into()],
        push_delivery: Some(PushDelivery::Direct),
    };
    r.put_workspace_settings("ws-a", &set).await.unwrap();
    assert_eq!(r.workspace_settings("ws-a").await.unwrap(), set);
    assert_eq!(
        r.workspace_settings("ws-b").await.unwrap(),
        WorkspaceSettings::default(),
        "one workspace's settings are not another's"
    );
    let replaced = WorkspaceSettings {
        extensions_allowed: vec![],
        push_delivery: Some(PushDelivery::Gateway),
    };
    r.put_workspace_settings("ws-a", &replaced).await.unwrap();
    assert_eq!(r.workspace_settings("ws-a").await.unwrap(), replaced);
    not_found(
        r.put_workspace_settings("nope", &set).await,
        "workspace nope",
    );
    let bad = WorkspaceSettings {
        extensions_allowed: vec!["a,b".into()],
        push_delivery: None,
    };
    invalid(
        r.put_workspace_settings("ws-a", &bad).await,
        "extension URI",
    );
    assert_eq!(r.workspace_settings("ws-a").await.unwrap(), replaced);
}

fn callback(id: &str, task: &str, config: Option<&str>) -> PushCallback {
    PushCallback {
        callback_id: id.into(),
        workspace_id: "ws-a".into(),
        agent_id: "echo".into(),
        task_id: task.into(),
        config_id: config.map(str::to_owned),
        url: "https://caller.example/hook".into(),
        token: Some("caller-token".into()),
        auth_scheme: Some("Bearer".into()),
        auth_credentials: Some("cred".into()),
        caller_version: "1.0".into(),
        peer_version: "0.3".into(),
        notify_token: format!("notify-{id}"),
    }
}

async fn push_callbacks<R: RegistryStore>(r: &R) {
    let cb = callback("cb1", "t1", None);
    r.insert_push_callback(&cb).await.unwrap();
    invalid(
        r.insert_push_callback(&cb).await,
        "push callback cb1 already exists",
    );
    assert_eq!(r.push_callback("cb1").await.unwrap(), Some(cb.clone()));
    assert_eq!(r.push_callback("nope").await.unwrap(), None);

    r.update_push_callback("cb1", None, Some("cfg1"))
        .await
        .unwrap();
    let got = r.push_callback("cb1").await.unwrap().unwrap();
    assert_eq!(
        (got.task_id.as_str(), got.config_id.as_deref()),
        ("t1", Some("cfg1"))
    );
    r.update_push_callback("cb1", Some("t1b"), None)
        .await
        .unwrap();
    let got = r.push_callback("cb1").await.unwrap().unwrap();
    assert_eq!(
        (got.task_id.as_str(), got.config_id.as_deref()),
        ("t1b", Some("cfg1"))
    );

    // Delivered marks: the first is new, the same body again a duplicate.
    assert!(!r.push_delivered("cb1", "h1").await.unwrap());
    assert!(r.mark_push_delivered("cb1", "h1").await.unwrap());
    assert!(!r.mark_push_delivered("cb1", "h1").await.unwrap());
    assert!(r.push_delivered("cb1", "h1").await.unwrap());
    assert!(!r.push_delivered("cb1", "h2").await.unwrap());
    assert!(r.mark_push_delivered("cb1", "h2").await.unwrap());
    not_found(
        r.mark_push_delivered("nope", "h1").await,
        "push callback nope",
    );

    // Deleting by config, then every config of the task; the marks go with the callback.
    r.insert_push_callback(&callback("cb2", "t2", Some("c1")))
        .await
        .unwrap();
    r.insert_push_callback(&callback("cb3", "t2", Some("c2")))
        .await
        .unwrap();
    assert_eq!(
        r.delete_push_callbacks("ws-b", "echo", "t2", None)
            .await
            .unwrap(),
        0,
        "another workspace deletes nothing"
    );
    assert_eq!(
        r.delete_push_callbacks("ws-a", "echo", "t2", Some("c1"))
            .await
            .unwrap(),
        1
    );
    assert!(r.push_callback("cb2").await.unwrap().is_none());
    assert!(r.push_callback("cb3").await.unwrap().is_some());
    assert_eq!(
        r.delete_push_callbacks("ws-a", "echo", "t1b", None)
            .await
            .unwrap(),
        1
    );
    assert!(!r.push_delivered("cb1", "h1").await.unwrap());
    r.insert_push_callback(&cb).await.unwrap();
    assert!(
        r.mark_push_delivered("cb1", "h1").await.unwrap(),
        "a callback made again starts with no marks"
    );
}

#[tokio::test]
async fn the_registry_suite_on_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    suite(&SqliteRegistry::new(store.clone())).await;
    // The same rows through the store the gateway calls today.
    assert_eq!(store.list_workspaces().unwrap().len(), 2);
    assert!(store.agent("ws-a", "echo").unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_suite_on_postgres() {
    let Some(cluster) = cluster() else { return };
    let r = pg(&cluster, "suite").await;
    assert!(r.listening() || wait_listening(&r).await);
    suite(&Registry::Postgres(r)).await;
}

/// Waits (bounded) until the registry hears notifications.
pub async fn wait_listening(r: &PgRegistry) -> bool {
    for _ in 0..500 {
        if r.listening() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}
