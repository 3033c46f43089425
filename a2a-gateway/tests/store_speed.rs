//! The store's fast paths stay exact: the registry cache sees changes made through the store
//! and by other connections to the same file, and the group-commit audit writer commits an
//! intent record before it answers and every queued record before a read of the log.

use a2a_gateway::keys::Scope;
use a2a_gateway::store::{Agent, AuditRecord, KeyRejection, Recovered, Store};

fn agent(endpoint: &str) -> Agent {
    Agent {
        workspace_id: "w".into(),
        agent_id: "echo".into(),
        endpoint: endpoint.into(),
        credential: None,
        skills: None,
        pinned_card_key: None,
    }
}

/// A store on a new file (its directory kept alive by the first value) with workspace `w`.
fn fresh() -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
    (dir, path, s)
}

#[test]
fn cached_key_is_revoked_through_the_store_and_from_another_connection() {
    let (_dir, path, s) = fresh();
    let (a, secret_a) = s.create_key("w", &[], None, None).unwrap();
    let (_, secret_b) = s.create_key("w", &[Scope::Read], None, None).unwrap();
    // Read twice: the second answer comes from the cache.
    for _ in 0..2 {
        assert_eq!(s.authenticate(&secret_a).unwrap().unwrap().key_id, a.key_id);
        assert!(s.authenticate(&secret_b).unwrap().is_ok());
    }
    // Through this store: seen at once.
    s.revoke_key(&a.key_id).unwrap();
    assert_eq!(
        s.authenticate(&secret_a).unwrap(),
        Err(KeyRejection::Revoked)
    );
    // Through another connection (as `a2a-gateway admin` against a running gateway's file).
    let other = Store::open(&path).unwrap();
    let b_id = other
        .list_keys("w")
        .unwrap()
        .into_iter()
        .find(|k| k.key_id != a.key_id)
        .unwrap()
        .key_id;
    assert!(s.authenticate(&secret_b).unwrap().is_ok());
    other.revoke_key(&b_id).unwrap();
    assert_eq!(
        s.authenticate(&secret_b).unwrap(),
        Err(KeyRejection::Revoked)
    );
    // A wrong secret for a cached key id is still refused.
    let forged = format!("{}x", &secret_a[..secret_a.len() - 1]);
    assert_eq!(s.authenticate(&forged).unwrap(), Err(KeyRejection::Invalid));
}

#[test]
fn each_hop_reads_the_registry_as_of_its_authentication() {
    let (_dir, path, s) = fresh();
    let (_, secret) = s.create_key("w", &[], None, None).unwrap();
    s.upsert_agent(&agent("http://127.0.0.1:1/")).unwrap();
    let hop1 = s.authenticate(&secret).unwrap().unwrap();
    assert!(hop1.registry_version.is_some());
    let at = |p: &a2a_gateway::store::Principal| {
        s.agent_seen("w", "echo", p.registry_version)
            .unwrap()
            .map(|a| a.endpoint)
    };
    assert_eq!(at(&hop1).as_deref(), Some("http://127.0.0.1:1/"));
    // Another process changes the registration: the next hop's authentication sees the new
    // version, and its lookups the new row.
    let other = Store::open(&path).unwrap();
    other.upsert_agent(&agent("http://127.0.0.1:2/")).unwrap();
    let hop2 = s.authenticate(&secret).unwrap().unwrap();
    assert_ne!(hop2.registry_version, hop1.registry_version);
    assert_eq!(at(&hop2).as_deref(), Some("http://127.0.0.1:2/"));
    // A lookup carrying an outdated version checks again (never answers from older rows).
    other.delete_agent("w", "echo").unwrap();
    assert_eq!(at(&hop1), None);
    // A change through this store empties the cache: seen even with the hop's version.
    let hop3 = s.authenticate(&secret).unwrap().unwrap();
    s.upsert_agent(&agent("http://127.0.0.1:3/")).unwrap();
    assert_eq!(at(&hop3).as_deref(), Some("http://127.0.0.1:3/"));
    assert_eq!(
        s.workspace_seen("w", hop3.registry_version)
            .unwrap()
            .unwrap()
            .id,
        "w"
    );
}

#[test]
fn cached_agent_and_workspace_follow_changes_from_both_sides() {
    let (_dir, path, s) = fresh();
    assert!(s.agent("w", "echo").unwrap().is_none());
    s.upsert_agent(&agent("http://127.0.0.1:1/")).unwrap();
    assert_eq!(
        s.agent("w", "echo").unwrap().unwrap().endpoint,
        "http://127.0.0.1:1/"
    );
    let other = Store::open(&path).unwrap();
    other.upsert_agent(&agent("http://127.0.0.1:2/")).unwrap();
    assert_eq!(
        s.agent("w", "echo").unwrap().unwrap().endpoint,
        "http://127.0.0.1:2/"
    );
    other.delete_agent("w", "echo").unwrap();
    assert!(s.agent("w", "echo").unwrap().is_none());

    assert_eq!(s.workspace("w").unwrap().unwrap().max_response_bytes, None);
    other
        .set_workspace_limits("w", Some(1000), None, None)
        .unwrap();
    assert_eq!(
        s.workspace("w").unwrap().unwrap().max_response_bytes,
        Some(1000)
    );
    s.set_workspace_limits("w", Some(2000), None, None).unwrap();
    assert_eq!(
        s.workspace("w").unwrap().unwrap().max_response_bytes,
        Some(2000)
    );
    assert!(s.workspace("nope").unwrap().is_none());
    other.create_workspace("nope", "N").unwrap();
    assert!(s.workspace("nope").unwrap().is_some());
}

/// The audit writer commits from a connection of its own: its batches leave the registry
/// version (the epoch the cache checks) alone, so the cache stays warm under load; changes to
/// keys, agents, workspaces and settings by another connection still move it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_batches_leave_the_registry_version_and_registry_changes_move_it() {
    let (_dir, path, s) = fresh();
    let (_, secret) = s.create_key("w", &[], None, None).unwrap();
    s.upsert_agent(&agent("http://127.0.0.1:1/")).unwrap();
    let v0 = s.authenticate(&secret).unwrap().unwrap().registry_version;
    assert!(v0.is_some());
    for i in 0..10 {
        let intent = s
            .append_intent_committed(&rec(&format!("v{i}")))
            .await
            .unwrap();
        s.append_audit_queued(&rec(&format!("v{i}")), Some(&intent))
            .unwrap();
        s.flush_audit();
        let v = s.authenticate(&secret).unwrap().unwrap().registry_version;
        assert_eq!(v, v0, "an audit commit moved the registry version");
    }
    // Settings written by another connection: a new version, and the new document.
    let other = Store::open(&path).unwrap();
    let settings = a2a_gateway::store::WorkspaceSettings {
        extensions_allowed: vec!["https://example.com/ext/x".into()],
        ..Default::default()
    };
    other.put_workspace_settings("w", &settings).unwrap();
    let v1 = s.authenticate(&secret).unwrap().unwrap().registry_version;
    assert_ne!(v1, v0);
    assert!(
        s.workspace_settings_seen("w", v1)
            .unwrap()
            .allows_extension("https://example.com/ext/x")
    );
    // A raw delete of the workspace by another connection (cascading to its agents and keys)
    // is seen by the next authentication.
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("PRAGMA foreign_keys = ON; DELETE FROM workspaces WHERE id = 'w';")
        .unwrap();
    assert!(s.authenticate(&secret).unwrap().is_err());
    assert!(s.agent("w", "echo").unwrap().is_none());
}

/// A write through another connection holding SQLite's write lock makes the audit writer wait
/// (busy timeout), not fail: the records queued meanwhile are all committed once it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_writer_waits_for_a_write_lock_held_elsewhere() {
    let (_dir, path, s) = fresh();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("BEGIN IMMEDIATE").unwrap();
    for i in 0..5 {
        s.append_audit_queued(&rec(&format!("held{i}")), None)
            .unwrap();
    }
    // Reads of the registry go on meanwhile (WAL: readers beside a writer).
    assert!(s.workspace("w").unwrap().is_some());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    raw.execute_batch("COMMIT").unwrap();
    let rows = s.audit(Some("w"), None, 0, 100).unwrap();
    let held = rows
        .iter()
        .filter(|r| r.trace_id.starts_with("held"))
        .count();
    assert_eq!(held, 5, "{rows:?}");
}

fn rec(trace: &str) -> AuditRecord {
    AuditRecord {
        trace_id: trace.into(),
        workspace_id: Some("w".into()),
        decision: "allowed".into(),
        status: 200,
        ..AuditRecord::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intent_is_committed_before_it_answers_and_queued_records_before_reads() {
    let (_dir, path, s) = fresh();
    // Many hops at once: every intent gets its own sequence number, each already committed
    // (visible to another connection) when its call returns.
    let mut tasks = Vec::new();
    for i in 0..32 {
        let s = s.clone();
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let intent = s
                .append_intent_committed(&rec(&format!("t{i}")))
                .await
                .unwrap();
            let seq = intent
                .seq()
                .expect("committed without a journal: the seq is known");
            let other = Store::open(&path).unwrap();
            let rows = other.audit(Some("w"), None, seq - 1, 1).unwrap();
            assert_eq!(rows.len(), 1, "intent {seq} not committed");
            assert_eq!(rows[0].trace_id, format!("t{i}"));
            assert_eq!(rows[0].outcome.as_deref(), Some("incomplete"));
            // The completion record, queued without waiting.
            let done = rec(&format!("t{i}"));
            s.append_audit_queued(&done, Some(&intent)).unwrap();
            seq
        }));
    }
    let mut seqs = Vec::new();
    for t in tasks {
        seqs.push(t.await.unwrap());
    }
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), 32);
    // A read of the log waits for the queued completions: 32 finished hops, none incomplete.
    let rows = s.audit(Some("w"), None, 0, 1000).unwrap();
    assert_eq!(rows.len(), 32);
    assert!(rows.iter().all(|r| r.outcome.is_none()), "{rows:?}");
    // Dropping the store flushes what is queued: another connection sees it afterwards.
    s.append_audit_queued(&rec("lone"), None).unwrap();
    drop(s);
    let other = Store::open(&path).unwrap();
    let rows = other.audit(Some("w"), None, 0, 1000).unwrap();
    assert!(rows.iter().any(|r| r.trace_id == "lone"));
}

/// With the intent journal (the serving process), an intent returns once journaled; reads
/// still show one record per finished hop; a second process cannot take the same journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn journaled_intents_link_their_completions_and_the_journal_is_exclusive() {
    let (dir, path, s) = fresh();
    assert_eq!(s.open_intent_journal().unwrap().intents, 0);
    let other = Store::open(&path).unwrap();
    let err = other.open_intent_journal().unwrap_err().to_string();
    assert!(err.contains("another gateway process"), "{err}");
    for i in 0..20 {
        let intent = s
            .append_intent_committed(&rec(&format!("j{i}")))
            .await
            .unwrap();
        if i % 2 == 0 {
            s.append_audit_queued(&rec(&format!("j{i}")), Some(&intent))
                .unwrap();
        }
    }
    let rows = s.audit(Some("w"), None, 0, 1000).unwrap();
    assert_eq!(rows.len(), 20, "{rows:?}");
    let incomplete = rows.iter().filter(|r| r.outcome.is_some()).count();
    assert_eq!(incomplete, 10, "odd hops never completed: {rows:?}");
    assert!(
        std::fs::metadata(dir.path().join("gw.db.intents"))
            .unwrap()
            .len()
            > 0
    );
    // A restart recovers nothing twice: every journaled intent is in the database already.
    drop(s);
    drop(other);
    let again = Store::open(&path).unwrap();
    assert_eq!(again.open_intent_journal().unwrap(), Recovered::default());
    assert_eq!(again.audit(Some("w"), None, 0, 1000).unwrap().len(), 20);
}

/// With the journal open, a hop that completes before the writer commits its intent is written
/// as one row (the completion, no `intent_of`); a hop whose intent committed first keeps both
/// rows, linked. Reads show one record per hop either way, and a restart recovers nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intent_completed_within_its_batch_is_folded_into_the_completion() {
    let (_dir, path, s) = fresh();
    s.open_intent_journal().unwrap();
    for i in 0..20 {
        let r = rec(&format!("f{i}"));
        let intent = s.append_intent_committed(&r).await.unwrap();
        if i % 2 == 1 {
            // Committed before the hop completes: two rows.
            s.flush_audit();
            assert!(intent.seq().is_some());
        }
        s.append_audit_queued(&r, Some(&intent)).unwrap();
    }
    let mut folded = 0;
    for i in 0..20 {
        let rows = s.trace_records(&format!("f{i}")).unwrap();
        match rows.as_slice() {
            [done] => {
                assert_eq!((done.intent_seq, &done.outcome), (None, &None), "{rows:?}");
                assert_eq!(i % 2, 0, "only unflushed hops fold: {rows:?}");
                folded += 1;
            }
            [intent, done] => assert_eq!(done.intent_seq, Some(intent.seq), "{rows:?}"),
            _ => panic!("hop f{i}: {rows:?}"),
        }
    }
    // The completion is queued microseconds after its intent, well inside the writer's batch
    // window: nearly every even hop folds (at least one, whatever the scheduling).
    assert!(folded >= 1, "no intent was folded");
    let hops = s.audit(Some("w"), None, 0, 1000).unwrap();
    assert_eq!(hops.len(), 20);
    assert!(hops.iter().all(|r| r.outcome.is_none()), "{hops:?}");
    drop(s);
    let again = Store::open(&path).unwrap();
    assert_eq!(
        again.open_intent_journal().unwrap(),
        Recovered::default(),
        "nothing to recover"
    );
    assert_eq!(again.audit(Some("w"), None, 0, 1000).unwrap().len(), 20);
}

/// The WAL is checkpointed from the writer's own connection (SQLite's automatic checkpoint is
/// off on the connection the hops share): it stays bounded while far more than its size is
/// written, and every row is kept.
#[test]
fn the_wal_stays_bounded_with_checkpoints_off_the_shared_connection() {
    let (dir, _path, s) = fresh();
    let blob = serde_json::json!({ "evidence": "x".repeat(2048) });
    for i in 0..4000 {
        let mut r = rec(&format!("wal{i}"));
        r.governance = Some(blob.clone());
        s.append_audit_queued(&r, None).unwrap();
    }
    s.flush_audit();
    let wal = std::fs::metadata(dir.path().join("gw.db-wal"))
        .unwrap()
        .len();
    // 4,000 rows of 2 KB: over 8 MB went through the WAL.
    assert!(wal < 4 * 1024 * 1024, "WAL grew to {wal} bytes");
    assert_eq!(s.audit(Some("w"), None, 0, 10_000).unwrap().len(), 4000);
}

/// Whether `owner` owns the task, as the store reads it.
fn owns(s: &Store, endpoint: &str, task: &str, owner: &a2a_gateway::ownership::Owner) -> bool {
    s.task_owner(endpoint, task).unwrap().as_ref() == Some(owner)
}

/// With the journal open, a task binding is answered from memory at once (first owner wins,
/// another owner is told `Other`), committed in the writer's batch (seen by another
/// connection after a flush) and listed; without a journal it is committed on the spot.
#[test]
fn journaled_bindings_are_visible_at_once_and_committed_in_the_batch() {
    use a2a_gateway::ownership::{Bound, Owner};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.open_intent_journal().unwrap();
    let own = s.clone();
    let a = Owner {
        workspace_id: "wa".into(),
        agent_id: "echo".into(),
    };
    let b = Owner {
        workspace_id: "wb".into(),
        agent_id: "echo".into(),
    };
    let ep = "http://127.0.0.1:1/";
    for i in 0..50 {
        let t = format!("t{i}");
        assert!(matches!(own.bind_task(ep, &t, &a).unwrap(), Bound::New));
        // Before any commit: the same owner again, another owner, reads.
        assert!(matches!(own.bind_task(ep, &t, &a).unwrap(), Bound::Already));
        assert!(matches!(own.bind_task(ep, &t, &b).unwrap(), Bound::Other));
        assert!(owns(&own, ep, &t, &a));
        assert!(!owns(&own, ep, &t, &b));
    }
    // Lists see every binding (they wait for the batch), in binding order.
    let listed = own.owned_tasks(ep, &a, 0, 100).unwrap();
    assert_eq!(listed.len(), 50);
    assert_eq!(listed[0].1, "t0");
    assert!(own.owned_tasks(ep, &b, 0, 100).unwrap().is_empty());
    // Committed: another connection sees the owners.
    s.flush_audit();
    let other = Store::open(&path).unwrap();
    for i in 0..50 {
        assert!(owns(&other, ep, &format!("t{i}"), &a));
        assert!(!owns(&other, ep, &format!("t{i}"), &b));
    }
    // Without a journal (that other store): committed on the spot, first owner wins.
    assert!(matches!(
        other.bind_task(ep, "t0", &b).unwrap(),
        Bound::Other
    ));
    assert!(matches!(other.bind_task(ep, "u", &b).unwrap(), Bound::New));
    assert!(owns(&own, ep, "u", &b));
}

/// A binding journaled by a process that died before its batch committed is recovered when
/// the next process opens the journal (the caller who saw the task still owns it; nobody else
/// can take it).
#[test]
fn a_journaled_binding_not_committed_is_recovered_on_start() {
    use a2a_gateway::ownership::{Bound, Owner};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    drop(Store::open(&path).unwrap());
    // What a killed process leaves: a journal line above journal_state.committed (0).
    let line = r#"{"j":1,"bind":{"endpoint":"http://127.0.0.1:1/","task_id":"t-lost","workspace_id":"wa","agent_id":"echo"}}"#;
    std::fs::write(dir.path().join("gw.db.intents"), format!("{line}\n")).unwrap();
    let s = Store::open(&path).unwrap();
    assert_eq!(
        s.open_intent_journal().unwrap().intents,
        0,
        "no intents, one binding"
    );
    let own = s.clone();
    let a = Owner {
        workspace_id: "wa".into(),
        agent_id: "echo".into(),
    };
    let b = Owner {
        workspace_id: "wb".into(),
        agent_id: "echo".into(),
    };
    assert!(owns(&own, "http://127.0.0.1:1/", "t-lost", &a));
    assert!(matches!(
        own.bind_task("http://127.0.0.1:1/", "t-lost", &b).unwrap(),
        Bound::Other
    ));
}

/// The intent link index holds only completing rows (issue 11: one index insert less per
/// hop); every hop page still finds a record's completion through it, never by a scan.
#[test]
fn hop_pages_find_completions_through_the_partial_intent_index() {
    use a2a_gateway::store::HopFilter;
    let s = Store::open_in_memory().unwrap();
    for f in [
        HopFilter::default(),
        HopFilter {
            workspace: Some("w".into()),
            agent: Some("a".into()),
            ..HopFilter::default()
        },
        HopFilter {
            decision: Some("refused".into()),
            ..HopFilter::default()
        },
    ] {
        let plan = s.hop_page_plan(&f).unwrap().join(" | ");
        assert!(
            plan.contains("USING COVERING INDEX audit_intent_of") && !plan.contains("SCAN c"),
            "{f:?}: {plan}"
        );
    }
    // An intent and its completion read as one hop; an intent alone as incomplete.
    s.create_workspace("w", "W").unwrap();
    let mut done = rec("done");
    let seq = s.append_intent(&done).unwrap();
    done.intent_seq = Some(seq);
    s.append_audit(&done).unwrap();
    s.append_intent(&rec("cut")).unwrap();
    let rows = s.audit(Some("w"), None, 0, 100).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].outcome, None);
    assert_eq!(rows[1].outcome.as_deref(), Some("incomplete"));
}

/// An intent journaled by a process that died before its batch committed is recovered with
/// the time it was journaled (not the time of the restart); a line from an earlier version,
/// without that time, is recovered as before.
#[test]
fn a_recovered_intent_keeps_the_time_it_was_journaled() {
    let (dir, path, s) = fresh();
    drop(s);
    // 2026-01-01T00:00:00.5Z in Unix nanoseconds.
    let at = 1_767_225_600_500_000_000i64;
    let lines = format!(
        "{{\"j\":1,\"rec\":{{\"traceId\":\"cut\",\"workspaceId\":\"w\",\"decision\":\"allowed\",\"status\":200,\"latencyMs\":0}},\"at\":{at}}}\n\
         {{\"j\":2,\"rec\":{{\"traceId\":\"old\",\"workspaceId\":\"w\",\"decision\":\"allowed\",\"status\":200,\"latencyMs\":0}}}}\n"
    );
    std::fs::write(dir.path().join("gw.db.intents"), lines).unwrap();
    let s = Store::open(&path).unwrap();
    assert_eq!(s.open_intent_journal().unwrap().intents, 2);
    let rows = s.audit(Some("w"), None, 0, 10).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].trace_id, "cut");
    assert_eq!(rows[0].ts, "2026-01-01T00:00:00.5Z");
    assert_eq!(rows[0].outcome.as_deref(), Some("incomplete"));
    assert_eq!(rows[1].trace_id, "old");
    assert!(rows[1].ts.starts_with("20"), "{:?}", rows[1].ts);
    assert_ne!(rows[1].ts, rows[0].ts);
}

/// A live journaled intent's line carries its time, so a kill before the batch loses nothing
/// of the record: the recovered row is the one the journal held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journaled_intent_line_carries_its_time() {
    let (dir, _path, s) = fresh();
    s.open_intent_journal().unwrap();
    let before = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
    s.append_intent_committed(&rec("timed")).await.unwrap();
    let after = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
    let text = std::fs::read_to_string(dir.path().join("gw.db.intents")).unwrap();
    let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let at = i128::from(line["at"].as_i64().expect("the journal time"));
    assert!(before <= at && at <= after, "{before} <= {at} <= {after}");
    assert_eq!(line["rec"]["traceId"], "timed");
}
