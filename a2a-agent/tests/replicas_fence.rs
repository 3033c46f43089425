//! Lease fencing (issue 33): a replica that lost the database for longer than its lease, and
//! whose task another replica took over and ended, does not overwrite that end when it comes
//! back: its write is refused, its handler stops, and its own subscribers get the survivor's
//! final state.

use crate::common::*;
use crate::replicas_live::{last_state, open_subscription};
use crate::replicas_procs::echo_replica;
use serde_json::json;
use std::time::Duration;

/// Sends `sig` to the process `pid`.
fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    let r = unsafe { libc::kill(pid as libc::pid_t, sig) };
    assert_eq!(r, 0, "kill({pid}, {sig})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_back_after_its_lease_ended_does_not_overwrite_the_survivors_failed() {
    let Some(cluster) = crate::store_suite::cluster() else {
        return;
    };
    cluster.create_database("fence").unwrap();
    let url = cluster.url_of("fence");
    let dir = tempfile::tempdir().unwrap();
    let a = echo_replica(dir.path(), &url, "1s");
    let b = echo_replica(dir.path(), &url, "1s");
    // Running on A: it completes 2 s after it starts, which A lives through stopped.
    let id = send_async(&a.url, "sleep:2000").await;
    wait_task(&b.url, &id, |s| s == "TASK_STATE_WORKING").await;
    let on_a = tokio::spawn(sse_events(open_subscription(&a.url, &id).await));
    // A loses the database (and everything else) for longer than its lease.
    signal(a.child.id(), libc::SIGSTOP);
    let failed = wait_task(&b.url, &id, |s| s == "TASK_STATE_FAILED").await;
    assert_eq!(
        failed["status"]["message"]["parts"][0]["text"],
        a2a_agent::REPLICA_LOST,
        "{failed}"
    );
    // A comes back: its handler's time is up, and it answers COMPLETED, which A may not store.
    signal(a.child.id(), libc::SIGCONT);
    let evs = tokio::time::timeout(Duration::from_secs(30), on_a)
        .await
        .expect("A's stream ends")
        .unwrap();
    assert_eq!(
        last_state(&evs),
        "TASK_STATE_FAILED",
        "A's subscriber: {evs:?}"
    );
    for url in [&a.url, &b.url] {
        let (_, v) = rpc(url, "GetTask", json!({"id": id})).await;
        assert_eq!(state(&v["result"]), "TASK_STATE_FAILED", "{v}");
        assert_eq!(
            v["result"]["status"]["message"]["parts"][0]["text"],
            a2a_agent::REPLICA_LOST,
            "{v}"
        );
    }
    // A still serves: a new task on A runs and is stored as A ends it.
    let (_, v) = rpc(&a.url, "SendMessage", json!({"message": msg("hello")})).await;
    assert_eq!(state(&v["result"]["task"]), "TASK_STATE_COMPLETED", "{v}");
    let id2 = v["result"]["task"]["id"].as_str().unwrap().to_owned();
    wait_task(&b.url, &id2, |s| s == "TASK_STATE_COMPLETED").await;
}
