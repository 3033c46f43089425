//! The store's fast paths stay exact: the registry cache sees changes made through the store
//! and by other connections to the same file, and the group-commit audit writer commits an
//! intent record before it answers and every queued record before a read of the log.

use a2a_gateway::keys::Scope;
use a2a_gateway::store::{Agent, AuditRecord, KeyRejection, Store};

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

#[test]
fn cached_key_is_revoked_through_the_store_and_from_another_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
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
fn cached_agent_and_workspace_follow_changes_from_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.db");
    let s = Store::open(&path).unwrap();
    s.create_workspace("w", "W").unwrap();
    assert_eq!(s.open_intent_journal().unwrap(), 0);
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
    assert_eq!(again.open_intent_journal().unwrap(), 0);
    assert_eq!(again.audit(Some("w"), None, 0, 1000).unwrap().len(), 20);
}
