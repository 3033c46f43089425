//! The serving gateway's background tasks, started by [`crate::server::Gateway::serve`] and
//! stopped with it: the audit's, the task records' and the WAL's retention, and the watcher
//! that ends this replica's streams on session kills made anywhere.

use std::sync::Arc;
use std::time::Duration;

use crate::state::GatewayState;
use crate::store::backend::{Audit, Records};

/// Applies the retention at the start and every `audit_retention_check_secs`, on a blocking
/// thread, until `stop`: the audit's (`audit_retention`, `audit_max_bytes`, see
/// [`crate::store::retention`]), the task records' (`task_retention`) and the WAL's bound (see
/// [`crate::store::task_retention`]).
pub(crate) fn spawn_retention(st: &Arc<GatewayState>, stop: tokio_util::sync::CancellationToken) {
    let audit = st.config().audit_retention();
    let tasks = st.config().task_retention();
    let every = Duration::from_secs(st.config().audit_retention_check_secs.max(1));
    let store = st.store.clone();
    // Task records elsewhere than the SQLite file are trimmed there (async, below).
    let elsewhere = match &st.records {
        Records::Sqlite(_) => None,
        Records::Postgres(_) => Some(st.records.clone()),
    };
    let on_file = tasks.filter(|_| elsewhere.is_none());
    // The audit on the SQLite file is trimmed with the file's passes (blocking thread, WAL
    // bound between batches); elsewhere through its trait (async, below).
    let (audit_file, audit_elsewhere) = match &st.audit {
        Audit::Sqlite(a) => (audit.map(|r| (a.store().clone(), r)), None),
        Audit::Postgres(_) => (None, audit.map(|r| (st.audit.clone(), r))),
    };
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let (store, halt) = (store.clone(), stop.clone());
            let audit_file = audit_file.clone();
            let pass = tokio::task::spawn_blocking(move || {
                let stopped = || halt.is_cancelled();
                if let Some((file, rule)) = &audit_file {
                    crate::store::retention::run_pass(file, rule, &stopped);
                }
                if let Some(age) = on_file {
                    let batch = crate::store::task_retention::TASK_BATCH;
                    crate::store::task_retention::run_task_pass(&store, age, batch, &stopped);
                }
                if let Err(e) = store.bound_wal() {
                    tracing::warn!("WAL bound: {e}");
                }
            });
            if let Err(e) = pass.await {
                tracing::error!("retention pass failed: {e}");
            }
            if let Some((audit, rule)) = &audit_elsewhere {
                trim_audit(audit, rule, &stop).await;
            }
            if let (Some(age), Some(records)) = (tasks, &elsewhere) {
                trim_task_records(records, age, &stop).await;
            }
        }
    });
}

/// Ends this replica's open streams of every kill made from now on, here or on another replica
/// ([`HoldStore::kill_events`](crate::store::backend::HoldStore::kill_events)), and forgets the
/// killed workspace's cached governance (its next hop reads the kill), until `stop`.
pub(crate) fn spawn_kill_watch(st: &Arc<GatewayState>, stop: tokio_util::sync::CancellationToken) {
    use crate::store::backend::{HoldStore, POLL};
    let st = st.clone();
    tokio::spawn(async move {
        let mut kills = loop {
            match st.holds.kill_events().await {
                Ok(k) => break k,
                Err(e) => tracing::warn!("kill stream not started: {e}"),
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(POLL) => {}
            }
        };
        loop {
            let k = tokio::select! {
                _ = stop.cancelled() => return,
                k = kills.next() => k,
            };
            match k {
                Ok(k) => {
                    st.governance.cache.invalidate(&k.workspace_id);
                    let ended = st.governance.streams.kill(&k.workspace_id, &k.kind, &k.id);
                    if !ended.is_empty() {
                        tracing::info!(workspace = %k.workspace_id, kind = %k.kind,
                            id = %k.id, "session killed: streams ended");
                    }
                }
                Err(e) => {
                    tracing::warn!("kill stream: {e}");
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(POLL) => {}
                    }
                }
            }
        }
    });
}

/// How often a replica on PostgreSQL looks whether its open streams changed (and publishes
/// them when they did, and at least every [`OPEN_STREAMS_REFRESH`]).
pub(crate) const OPEN_STREAMS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// Published again after this even when unchanged (a publish that failed, a row trimmed).
const OPEN_STREAMS_REFRESH: std::time::Duration = std::time::Duration::from_secs(30);

/// On PostgreSQL, keeps this replica's open streams per workspace in `gateway_open_streams`
/// for the console's overview of every replica, until `stop` (on SQLite there is one process:
/// the overview counts its own).
pub(crate) fn spawn_open_streams(
    st: &Arc<GatewayState>,
    stop: tokio_util::sync::CancellationToken,
) {
    let Some(pg) = st.replay.shared_store().cloned() else {
        return;
    };
    let st = st.clone();
    tokio::spawn(async move {
        let mut last: Option<(Vec<(String, i64)>, tokio::time::Instant)> = None;
        loop {
            let now = st.governance.streams.open_by_workspace();
            let fresh = last
                .as_ref()
                .is_some_and(|(c, at)| *c == now && at.elapsed() < OPEN_STREAMS_REFRESH);
            if !fresh {
                match pg.publish_open(&now).await {
                    Ok(()) => last = Some((now, tokio::time::Instant::now())),
                    Err(e) => {
                        tracing::debug!("open streams not published: {e}");
                        last = None;
                    }
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(OPEN_STREAMS_EVERY) => {}
            }
        }
    });
}

/// One audit retention pass on a backend other than the SQLite file: batches until the rule
/// keeps every row, an error (logged; the next pass tries again) or `stop`.
async fn trim_audit(
    audit: &Audit,
    rule: &crate::store::AuditRetention,
    stop: &tokio_util::sync::CancellationToken,
) {
    use crate::store::backend::AuditStore;
    let (mut rows, mut by_age) = (0, 0);
    while !stop.is_cancelled() {
        match audit.trim(rule).await {
            Ok(t) if t.rows == 0 => break,
            Ok(t) => {
                rows += t.rows;
                by_age += t.by_age;
            }
            Err(e) => {
                tracing::warn!("audit retention: {e}");
                break;
            }
        }
    }
    if rows > 0 {
        tracing::info!(rows, by_age, "audit retention deleted audit rows");
    }
}

/// One task retention pass on a backend other than the SQLite file: batches until nothing is
/// left to delete, an error (logged; the next pass tries again) or `stop`.
async fn trim_task_records(
    records: &Records,
    max_age: Duration,
    stop: &tokio_util::sync::CancellationToken,
) {
    use crate::store::backend::TaskStore;
    let mut rows = 0;
    while !stop.is_cancelled() {
        match records
            .trim_task_records(max_age, crate::store::task_retention::TASK_BATCH)
            .await
        {
            Ok(0) => break,
            Ok(n) => rows += n,
            Err(e) => {
                tracing::warn!("task retention: {e}");
                break;
            }
        }
    }
    if rows > 0 {
        tracing::info!(rows, "task retention deleted task records");
    }
}
