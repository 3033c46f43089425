//! ListTasks at every peer (S1 §3.1.4), answered from the gateway's records of the caller's own
//! tasks (issue 40), never from the peer's list.
//!
//! Every task a workspace makes through the gateway is bound to it, and its binding records what
//! the gateway last saw of the task's status: context, state, status timestamp
//! (`crate::store::TaskStatusRow`), from every answer, stream event and push notification for
//! the task. A page is one indexed query over the owner's records (filters, order, keyset
//! cursor, `totalSize`); then the page's tasks are read from the peer with GetTask
//! ([`LIST_FETCH_CONCURRENCY`] at a time), so their content is current, except tasks that have
//! ended, which no longer change: their last read is shown again for a while
//! (`crate::tasks::terminal`). The shown tasks pass the hop's answer steps. What a read shows is
//! recorded at once: a task whose record was out of date (the peer moved it on without the
//! gateway seeing it) is put where it now belongs and the page is queried again, at most
//! [`MAX_ROUNDS`] times, so a page shows only tasks that match the filters as the peer has them
//! now; a task the peer no longer knows (TaskNotFound) is marked gone (no longer listed nor
//! counted; its binding stays). Before the page, up to [`REFRESH_PER_LIST`] of the owner's
//! records that may be out of date (not terminal, not read for [`REFRESH_AFTER_MS`]) are read
//! again, so a task that ended behind the gateway's back reaches its state's filter. The cost
//! of a call depends on its page size: neither the peer's other tasks nor other workspaces'
//! are read.

use std::collections::{HashMap, HashSet};

use futures::StreamExt;
use serde_json::{Value, json};

use a2a_types::v1::TaskState;

use crate::governance::HopGov;
use crate::hop::listing::ListPage;
use crate::protocol::ops::Operation;
use crate::protocol::reveal::{revealed_status, status_nanos};
use crate::protocol::{history, xlate};
use crate::store::backend::{Records, TaskStore};
use crate::store::{TaskQuery, TaskRecord};
use crate::tasks::ownership::{Owner, gone_row, status_row};
use crate::{outbound, outbound::PeerCall, outbound::peer_error};
use crate::{protocol::answer::Answer, state::GatewayState};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// GetTask calls in flight at once while a ListTasks call reads its tasks.
pub const LIST_FETCH_CONCURRENCY: usize = 8;
/// Queries of one ListTasks call at most (each reads the page's tasks not read yet).
pub const MAX_ROUNDS: usize = 3;
/// Records read again before a page at most (see the module documentation).
pub const REFRESH_PER_LIST: u64 = 8;
/// How long a record of a task not in a terminal state counts as current (milliseconds).
pub const REFRESH_AFTER_MS: i64 = 10_000;

/// The 1.0 ListTasks filters of a request.
struct Filters {
    context: Option<String>,
    status: Option<TaskState>,
    /// `statusTimestampAfter` in Unix nanoseconds.
    after: Option<i64>,
    artifacts: bool,
    history: Option<usize>,
}

impl Filters {
    fn read(params: &Value) -> Result<Filters, Refusal> {
        let status = match params.get("status") {
            None | Some(Value::Null) => None,
            Some(v) => Some(serde_json::from_value::<TaskState>(v.clone()).map_err(|_| {
                Refusal::invalid_params(&format!("params.status: not a task state: {v}"))
            })?),
        };
        let after = match params.get("statusTimestampAfter").and_then(Value::as_str) {
            None => None,
            Some(t) => Some(status_nanos(t).ok_or_else(|| {
                Refusal::invalid_params(&format!(
                    "params.statusTimestampAfter: not an RFC 3339 timestamp: {t}"
                ))
            })?),
        };
        Ok(Filters {
            context: params
                .get("contextId")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            status: status.filter(|s| *s != TaskState::Unspecified),
            after,
            artifacts: params.get("includeArtifacts").and_then(Value::as_bool) == Some(true),
            history: history::history_limit(Operation::GetTask, Version::V1, params),
        })
    }

    /// Whether a task as read from the peer matches the filters.
    fn keeps(&self, task: &Value) -> bool {
        let Some(f) = revealed_status(task) else {
            return self.context.is_none() && self.status.is_none() && self.after.is_none();
        };
        self.context
            .as_deref()
            .is_none_or(|c| f.context_id.as_deref() == Some(c))
            && self.status.is_none_or(|s| f.state == s)
            && self
                .after
                .is_none_or(|a| f.status_at.is_some_and(|t| t >= a))
    }

    /// The task as listed: artifacts only when asked for, history trimmed.
    fn shape(&self, mut task: Value) -> Value {
        if !self.artifacts
            && let Some(o) = task.as_object_mut()
        {
            o.remove("artifacts");
        }
        history::trim_history(Operation::GetTask, self.history, &mut task);
        task
    }
}

/// Whether a task as read from the peer is where its record put it (state, context, time).
fn as_recorded(task: &Value, r: &TaskRecord) -> bool {
    let Some(f) = revealed_status(task) else {
        return true;
    };
    r.state.as_deref() == Some(f.state.as_str())
        && f.context_id
            .is_none_or(|c| r.context_id.as_deref() == Some(c.as_str()))
        && f.status_at.unwrap_or(-1) == r.status_at
}

/// ListTasks from the owner's records (see the module documentation). `params` are the
/// caller's ListTasks params (the 1.0 shape, also for 0.3 JSON-RPC callers); the answer is in
/// the caller's version.
pub(crate) async fn list(
    st: &GatewayState,
    ctx: &PeerCall<'_>,
    owners: &Records,
    endpoint: &str,
    owner: &Owner,
    params: &Value,
) -> Result<Answer, Refusal> {
    let page = ListPage::read(st, owner, params)?;
    let filters = Filters::read(params)?;
    let store_err = |e: crate::store::StoreError| Refusal::store("", &e);
    // Each task in 1.0 terms, whatever the caller's version, as the peer wrote it: the listed
    // tasks pass the hop's answer steps at the end, whether read now or kept from an earlier
    // read (`crate::tasks::terminal`).
    let raw = ctx.gov.as_ref().map(|g| {
        std::sync::Arc::new(HopGov {
            hop: g.hop.clone(),
            active: false,
            evidence: Default::default(),
            chain_header: g.chain_header.clone(),
        })
    });
    let v1 = PeerCall {
        st: ctx.st,
        agent: ctx.agent,
        chosen: ctx.chosen,
        caller: Version::V1,
        traceparent: ctx.traceparent.clone(),
        hops: ctx.hops,
        id: ctx.id.clone(),
        max_resp: ctx.max_resp,
        max_stream: ctx.max_stream,
        gov: raw,
        open: None,
        peer_nanos: Default::default(),
    };
    let reads = Reads {
        v1: &v1,
        gov: ctx.gov.as_deref(),
        owners,
        endpoint,
        owner,
    };
    let t0 = std::time::Instant::now();
    reads.refresh().await;
    let t_refresh = t0.elapsed();
    let mut t_query = std::time::Duration::ZERO;
    let mut t_get = std::time::Duration::ZERO;
    let cursor = page.cursor();
    let query = TaskQuery {
        state: filters.status.map(TaskState::as_str),
        context_id: filters.context.as_deref(),
        after: filters.after,
        cursor,
        offset: if cursor.is_some() {
            0
        } else {
            page.offset() as u64
        },
        limit: page.size() as u64 + 1,
    };
    // The tasks read so far (`None`: the peer no longer knows it).
    let mut read: HashMap<String, Option<Value>> = HashMap::new();
    let mut round = 0;
    let (rows, total, more) = loop {
        round += 1;
        let t = std::time::Instant::now();
        let (mut rows, total) = owners
            .task_records(endpoint, owner, &query)
            .await
            .map_err(store_err)?;
        t_query += t.elapsed();
        let more = rows.len() > page.size();
        rows.truncate(page.size());
        let missing: Vec<String> = rows
            .iter()
            .filter(|r| !read.contains_key(&r.task_id))
            .map(|r| r.task_id.clone())
            .collect();
        let now: HashSet<String> = missing.iter().cloned().collect();
        let t = std::time::Instant::now();
        read.extend(reads.get(missing, filters.history).await?);
        t_get += t.elapsed();
        let off: Vec<&TaskRecord> = rows
            .iter()
            .filter(|r| {
                read.get(&r.task_id)
                    .is_none_or(|t| t.as_ref().is_none_or(|t| !as_recorded(t, r)))
            })
            .collect();
        if off.is_empty() {
            break (rows, total, more);
        }
        if round == MAX_ROUNDS {
            // What was just recorded is counted; the page keeps what matches.
            let count = TaskQuery { limit: 0, ..query };
            let (_, total) = owners
                .task_records(endpoint, owner, &count)
                .await
                .map_err(store_err)?;
            break (rows, total, more);
        }
        // Read in an earlier round and recorded differently since (a newer event): again.
        for r in off {
            if !now.contains(&r.task_id) {
                read.remove(&r.task_id);
            }
        }
    };
    let mut tasks: Vec<Value> = rows
        .iter()
        .filter_map(|r| read.get(&r.task_id).cloned().flatten())
        .filter(|t| filters.keeps(t))
        .map(|t| filters.shape(t))
        .collect();
    if let Some(g) = ctx.gov.as_ref().filter(|g| g.active) {
        let mut ev = g
            .evidence
            .lock()
            .map_err(|_| Refusal::internal("evidence lock"))?;
        for t in &mut tasks {
            st.governance.answer(&g.hop, t, &mut ev)?;
        }
    }
    let next = rows
        .last()
        .filter(|_| more)
        .map(|r| (r.status_at, r.task_id.as_str()));
    tracing::debug!(
        ?t_refresh, ?t_query, ?t_get, rounds = round, total = ?t0.elapsed(),
        "list timing"
    );
    let out = page.answer(st, tasks, total, next, rows.len());
    xlate::result(Operation::ListTasks, Version::V1, ctx.caller, &out)
        .map(Answer::Unary)
        .map_err(outbound::map_answer_error)
}

/// Reading the owner's tasks from the peer, and recording what the reads show.
struct Reads<'a> {
    /// GetTask calls whose answers are not governed (the listing governs what it shows).
    v1: &'a PeerCall<'a>,
    /// The listing's governance, for the peer's errors.
    gov: Option<&'a HopGov>,
    owners: &'a Records,
    endpoint: &'a str,
    owner: &'a Owner,
}

impl Reads<'_> {
    /// Reads the owner's records that may be out of date (see the module documentation); a
    /// peer that cannot be read leaves them as they are.
    async fn refresh(&self) {
        let now = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
        let before = i64::try_from(now).unwrap_or(i64::MAX) - REFRESH_AFTER_MS;
        let ids = match self
            .owners
            .unsettled(self.endpoint, self.owner, before, REFRESH_PER_LIST)
            .await
        {
            Ok(ids) if !ids.is_empty() => ids,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!("task records not read: {e}");
                return;
            }
        };
        if let Err(r) = self.get(ids, Some(0)).await {
            tracing::debug!("task records not refreshed: {r}");
        }
    }

    /// Each task of `ids` (`None`: the peer no longer knows it): a kept read of an ended task,
    /// else read with GetTask, each read recorded as the task's current status and kept when
    /// the task has ended.
    async fn get(
        &self,
        mut ids: Vec<String>,
        history: Option<usize>,
    ) -> Result<Vec<(String, Option<Value>)>, Refusal> {
        let v1 = self.v1;
        let (workspace, agent) = (&self.owner.workspace_id, &self.owner.agent_id);
        let terminal = &v1.st.terminal;
        let mut kept = Vec::new();
        ids.retain(
            |id| match terminal.get(self.endpoint, workspace, agent, id, history) {
                Some(t) => {
                    kept.push((id.clone(), Some(t)));
                    false
                }
                None => true,
            },
        );
        let got: Vec<Result<(String, Option<Value>), Refusal>> = futures::stream::iter(ids)
            .map(|id| async move {
                let mut get = json!({ "id": id });
                if let Some(h) = history {
                    get["historyLength"] = json!(h);
                }
                let p =
                    outbound::peer_params(Operation::GetTask, Version::V1, v1.chosen, &get, false)?;
                match v1.call(Operation::GetTask, p).await {
                    Ok(Answer::Unary(t)) => Ok((id, Some(t))),
                    Ok(Answer::Passed(p)) => Ok((id, Some(p.into_value()))),
                    Ok(Answer::Stream(_)) => {
                        Err(Refusal::upstream_invalid_response("expected a task"))
                    }
                    Err(r) if r.rpc_code == -32001 => Ok((id, None)),
                    Err(r) => Err(peer_error::govern(&v1.st.governance, self.gov, r)),
                }
            })
            .buffer_unordered(LIST_FETCH_CONCURRENCY)
            .collect()
            .await;
        let mut got = got.into_iter().collect::<Result<Vec<_>, _>>()?;
        for (id, task) in &got {
            let row = match task.as_ref().and_then(revealed_status) {
                Some(mut f) => {
                    f.task_id.clone_from(id);
                    Some(status_row(self.endpoint, self.owner, &f, true))
                }
                None if task.is_none() => Some(gone_row(self.endpoint, self.owner, id)),
                None => None,
            };
            let recorded = match row {
                Some(row) => self.owners.record_status(row).await,
                None => Ok(()),
            };
            if let Err(e) = recorded {
                tracing::warn!(task = %id, "task status not recorded: {e}");
            }
            if let Some(t) = task {
                terminal.put(self.endpoint, workspace, agent, history, t);
            }
        }
        got.extend(kept);
        Ok(got)
    }
}
