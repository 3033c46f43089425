//! Task ownership: every task that passes through the gateway is bound to the workspace and the
//! registration (agentId) that created it, and every task operation checks the binding.
//!
//! A binding is keyed by the peer endpoint and the peer's task id, and names its owner
//! (workspace + agentId). A task of another owner, and a task the gateway never saw (created
//! directly at the peer, or before ownership existed), answer exactly like a task id that never
//! existed: the gateway refuses them itself with TaskNotFound (-32001 / 404 `NOT_FOUND`), before
//! any peer call. Ownership is per workspace *and* agentId: one peer registered as "x" and "y"
//! in the same workspace gives two owners, since keys of one workspace may be scoped per
//! registration later and a caller must not reach a task through a registration that did not
//! create it.
//!
//! The gateway calls the store through a trait ([`OwnershipStore`]); its SQLite
//! implementation ([`SqliteOwnership`]) calls the bindings of the gateway's SQLite file (table
//! `task_owners`, schema version 3; `crate::store::Store::bind_task` and the rest). The same
//! operations on SQLite or PostgreSQL, async, are `crate::store::backend::TaskStore` (issue 32;
//! the call sites move to it with the `database` setting).
//!
//! Each binding also records what the gateway last saw of its task's status (context, state,
//! status timestamp; schema version 16, `crate::store::TaskStatusRow`), from every answer,
//! stream event and push notification that passes through the gateway for the task
//! ([`bind_answer`], [`record_answer`], [`record`]): ListTasks is answered from these records.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;

use crate::protocol::answer::Answer;
use crate::protocol::ops::Operation;
use crate::protocol::reveal::{TaskFacts, revealed_status};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
pub use crate::{protocol::reveal::listed_task_id, protocol::reveal::revealed_task};
use crate::{store::Store, store::StoreError};
use crate::{store::TaskQuery, store::TaskRecord, store::TaskStatusRow};

pub use crate::store::{Bound, Owner};

/// Durable task ownership.
pub trait OwnershipStore: Send + Sync {
    /// Binds `task_id` at peer `endpoint` to `owner` unless it is bound already.
    fn bind(&self, endpoint: &str, task_id: &str, owner: &Owner) -> Result<Bound, StoreError>;
    /// The owner of a task, if the gateway knows it.
    fn owner(&self, endpoint: &str, task_id: &str) -> Result<Option<Owner>, StoreError>;
    /// Whether `owner` owns the task (one indexed lookup).
    fn owns(&self, endpoint: &str, task_id: &str, owner: &Owner) -> Result<bool, StoreError> {
        Ok(self.owner(endpoint, task_id)?.as_ref() == Some(owner))
    }
    /// A page of the owner's task ids at `endpoint`, oldest binding first, after binding
    /// sequence `after`: `(seq, task_id)` pairs.
    fn list(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError>;
    /// Removes a binding.
    fn forget(&self, endpoint: &str, task_id: &str) -> Result<(), StoreError>;
    /// Records what an answer, event or notification says of one of `owner`'s tasks (another
    /// owner's binding is never touched); `fresh`: a read of the task itself, which replaces
    /// the record whatever its time. Queued, not waited for.
    fn record(
        &self,
        endpoint: &str,
        owner: &Owner,
        facts: &TaskFacts,
        fresh: bool,
    ) -> Result<(), StoreError>;
    /// Records that the peer no longer knows one of `owner`'s tasks: the binding stays (the
    /// task is still the owner's), the task is no longer listed until the peer names it again.
    fn record_gone(&self, endpoint: &str, owner: &Owner, task_id: &str) -> Result<(), StoreError>;
    /// One page of the owner's listed tasks at `endpoint`, newest recorded status first, and how
    /// many match the query's filters in all.
    fn listed(
        &self,
        endpoint: &str,
        owner: &Owner,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError>;
    /// Up to `limit` of the owner's tasks whose record may be out of date (not terminal, last
    /// recorded before `before`, Unix milliseconds), least recently recorded first.
    fn unsettled(
        &self,
        endpoint: &str,
        owner: &Owner,
        before: i64,
        limit: u64,
    ) -> Result<Vec<String>, StoreError>;
}

/// [`OwnershipStore`] over the gateway's SQLite [`Store`] (same file, same connection).
#[derive(Clone)]
pub struct SqliteOwnership {
    store: Store,
}

impl SqliteOwnership {
    /// Ownership in `store`'s file.
    pub fn new(store: Store) -> SqliteOwnership {
        SqliteOwnership { store }
    }
}

impl OwnershipStore for SqliteOwnership {
    fn bind(&self, endpoint: &str, task_id: &str, owner: &Owner) -> Result<Bound, StoreError> {
        self.store.bind_task(endpoint, task_id, owner)
    }

    fn owner(&self, endpoint: &str, task_id: &str) -> Result<Option<Owner>, StoreError> {
        self.store.task_owner(endpoint, task_id)
    }

    fn list(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        self.store.owned_tasks(endpoint, owner, after, limit)
    }

    fn forget(&self, endpoint: &str, task_id: &str) -> Result<(), StoreError> {
        self.store.forget_task(endpoint, task_id)
    }

    fn record(
        &self,
        endpoint: &str,
        owner: &Owner,
        facts: &TaskFacts,
        fresh: bool,
    ) -> Result<(), StoreError> {
        self.store.record_task_status(TaskStatusRow {
            endpoint: endpoint.to_owned(),
            task_id: facts.task_id.clone(),
            workspace_id: owner.workspace_id.clone(),
            agent_id: owner.agent_id.clone(),
            context_id: facts.context_id.clone(),
            state: facts.state.as_str().to_owned(),
            open: !facts.state.is_terminal(),
            status_at: facts.status_at.unwrap_or(-1),
            fresh,
            gone: false,
            checked_at: 0,
        })
    }

    fn record_gone(&self, endpoint: &str, owner: &Owner, task_id: &str) -> Result<(), StoreError> {
        self.store.record_task_status(TaskStatusRow {
            endpoint: endpoint.to_owned(),
            task_id: task_id.to_owned(),
            workspace_id: owner.workspace_id.clone(),
            agent_id: owner.agent_id.clone(),
            context_id: None,
            state: String::new(),
            open: false,
            status_at: -1,
            fresh: true,
            gone: true,
            checked_at: 0,
        })
    }

    fn listed(
        &self,
        endpoint: &str,
        owner: &Owner,
        q: &TaskQuery<'_>,
    ) -> Result<(Vec<TaskRecord>, u64), StoreError> {
        self.store
            .task_records(endpoint, &owner.workspace_id, &owner.agent_id, q)
    }

    fn unsettled(
        &self,
        endpoint: &str,
        owner: &Owner,
        before: i64,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        self.store.unsettled_task_records(
            endpoint,
            &owner.workspace_id,
            &owner.agent_id,
            before,
            limit,
        )
    }
}

/// Records the status `v` (an answer, stream event or notification in either version's shape)
/// reveals of one of `owner`'s tasks, if any. A record that cannot be queued is logged: the
/// listing reads its tasks from the peer and refreshes what it finds out of date.
pub fn record(owners: &dyn OwnershipStore, endpoint: &str, owner: &Owner, v: &Value) {
    if let Some(facts) = revealed_status(v) {
        record_facts(owners, endpoint, owner, &facts);
    }
}

fn record_facts(owners: &dyn OwnershipStore, endpoint: &str, owner: &Owner, facts: &TaskFacts) {
    if let Err(e) = owners.record(endpoint, owner, facts, false) {
        tracing::warn!(task = %facts.task_id, "task status not recorded: {e}");
    }
}

/// Records what a task operation's answer (GetTask, CancelTask: the Task; SubscribeToTask: each
/// event) says of the owner's task, and hands the answer on unchanged.
pub fn record_answer(
    owners: Arc<dyn OwnershipStore>,
    endpoint: &str,
    owner: &Owner,
    answer: Answer,
) -> Answer {
    match answer {
        Answer::Unary(v) => {
            record(owners.as_ref(), endpoint, owner, &v);
            Answer::Unary(v)
        }
        Answer::Passed(p) => {
            if let Some(f) = p.status() {
                record_facts(owners.as_ref(), endpoint, owner, f);
            }
            Answer::Passed(p)
        }
        Answer::Stream(events) => {
            let endpoint = endpoint.to_owned();
            let owner = owner.clone();
            Answer::Stream(Box::pin(events.inspect(move |ev| {
                if let Ok(ev) = ev {
                    record(owners.as_ref(), &endpoint, &owner, ev);
                }
            })))
        }
    }
}

/// The refusal for a task the caller does not own (the gateway's own TaskNotFound, the same
/// whether another workspace owns the task or nobody does).
pub fn not_found() -> Refusal {
    Refusal::task_not_found()
}

/// Checks the task a request names (if any) against its owner: `Ok(Some(task))` when owned,
/// `Ok(None)` when the request names no task (a send that starts a task, ListTasks), and
/// [`not_found`] otherwise. Store failures refuse with an internal error.
pub fn check(
    owners: &dyn OwnershipStore,
    endpoint: &str,
    owner: &Owner,
    op: Operation,
    version: Version,
    params: &Value,
) -> Result<Option<String>, Refusal> {
    let Some(task) = requested_task(op, version, params) else {
        return Ok(None);
    };
    match owners.owns(endpoint, &task, owner) {
        Ok(true) => Ok(Some(task)),
        Ok(false) => Err(not_found()),
        Err(e) => Err(Refusal::internal(&e.to_string())),
    }
}

fn bind_revealed(
    owners: &dyn OwnershipStore,
    endpoint: &str,
    owner: &Owner,
    v: &Value,
) -> Result<Option<String>, Refusal> {
    let Some(task) = revealed_task(v) else {
        return Ok(None);
    };
    bind_task(owners, endpoint, owner, task)
}

/// Binds `task` to `owner` ([`bind_revealed`] once the task is known).
fn bind_task(
    owners: &dyn OwnershipStore,
    endpoint: &str,
    owner: &Owner,
    task: String,
) -> Result<Option<String>, Refusal> {
    match owners.bind(endpoint, &task, owner) {
        Ok(Bound::New | Bound::Already) => Ok(Some(task)),
        Ok(Bound::Other) => {
            tracing::warn!(task = %task, "peer answered a task bound to another owner");
            Err(not_found())
        }
        Err(e) => Err(Refusal::internal(&e.to_string())),
    }
}

/// Binds the task a send's answer reveals to `owner` (a stream: at the first event that names
/// it, before the caller sees it). Returns the answer and the task id of a unary answer. A task
/// already bound to another owner is refused as [`not_found`].
pub fn bind_answer(
    owners: Arc<dyn OwnershipStore>,
    endpoint: &str,
    owner: &Owner,
    answer: Answer,
) -> Result<(Answer, Option<String>), Refusal> {
    match answer {
        Answer::Unary(v) => {
            let task = bind_revealed(owners.as_ref(), endpoint, owner, &v)?;
            record(owners.as_ref(), endpoint, owner, &v);
            Ok((Answer::Unary(v), task))
        }
        Answer::Passed(p) => {
            let task = match p.task_id() {
                Some(t) => bind_task(owners.as_ref(), endpoint, owner, t.to_owned())?,
                None => None,
            };
            if let Some(f) = p.status() {
                record_facts(owners.as_ref(), endpoint, owner, f);
            }
            Ok((Answer::Passed(p), task))
        }
        Answer::Stream(events) => {
            let endpoint = endpoint.to_owned();
            let owner = owner.clone();
            let mut bound = false;
            let mut failed = false;
            let s = events
                .map(move |item| {
                    if failed {
                        return item;
                    }
                    let ev = item?;
                    if bound {
                        record(owners.as_ref(), &endpoint, &owner, &ev);
                        return Ok(ev);
                    }
                    match bind_revealed(owners.as_ref(), &endpoint, &owner, &ev) {
                        Ok(Some(_)) => {
                            bound = true;
                            record(owners.as_ref(), &endpoint, &owner, &ev);
                            Ok(ev)
                        }
                        Ok(None) => Ok(ev),
                        Err(r) => {
                            failed = true;
                            Err(r)
                        }
                    }
                })
                .scan(false, |done, item| {
                    if *done {
                        return futures::future::ready(None);
                    }
                    *done = item.is_err();
                    futures::future::ready(Some(item))
                });
            Ok((Answer::Stream(Box::pin(s)), None))
        }
    }
}

/// The task id a request of `op` names (caller's version), if any: `id` of task operations,
/// the push config's task, or `message.taskId` of a send. ListTasks names none.
pub fn requested_task(op: Operation, version: Version, params: &Value) -> Option<String> {
    let s = |p: &str| params.pointer(p).and_then(Value::as_str).map(str::to_owned);
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => s("/message/taskId"),
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask => {
            Some(s("/id").unwrap_or_default())
        }
        Operation::CreateTaskPushNotificationConfig => Some(s("/taskId").unwrap_or_default()),
        Operation::GetTaskPushNotificationConfig
        | Operation::ListTaskPushNotificationConfigs
        | Operation::DeleteTaskPushNotificationConfig => Some(
            match version {
                Version::V03 => s("/id"),
                Version::V1 => s("/taskId"),
            }
            .unwrap_or_default(),
        ),
        Operation::ListTasks | Operation::GetExtendedAgentCard => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn binds_once_and_refuses_other_owners() {
        let store = Store::open_in_memory().unwrap();
        let own = SqliteOwnership::new(store);
        let a = Owner {
            workspace_id: "a".into(),
            agent_id: "x".into(),
        };
        let b = Owner {
            workspace_id: "b".into(),
            agent_id: "x".into(),
        };
        assert_eq!(own.bind("http://p", "t1", &a).unwrap(), Bound::New);
        assert_eq!(own.bind("http://p", "t1", &a).unwrap(), Bound::Already);
        assert_eq!(own.bind("http://p", "t1", &b).unwrap(), Bound::Other);
        assert!(own.owns("http://p", "t1", &a).unwrap());
        assert!(!own.owns("http://p", "t1", &b).unwrap());
        assert!(!own.owns("http://q", "t1", &a).unwrap());
        own.bind("http://p", "t2", &a).unwrap();
        let page = own.list("http://p", &a, 0, 10).unwrap();
        assert_eq!(
            page.iter().map(|p| p.1.as_str()).collect::<Vec<_>>(),
            ["t1", "t2"]
        );
        assert!(own.list("http://p", &b, 0, 10).unwrap().is_empty());
        own.forget("http://p", "t1").unwrap();
        assert_eq!(own.owner("http://p", "t1").unwrap(), None);
    }

    #[test]
    fn task_ids_of_requests_and_answers() {
        let p = json!({"message": {"taskId": "t"}});
        assert_eq!(
            requested_task(Operation::SendMessage, Version::V1, &p).as_deref(),
            Some("t")
        );
        assert_eq!(
            requested_task(Operation::SendMessage, Version::V1, &json!({"message": {}})),
            None
        );
        assert_eq!(
            requested_task(
                Operation::ListTaskPushNotificationConfigs,
                Version::V03,
                &json!({"id": "t"})
            )
            .as_deref(),
            Some("t")
        );
        assert_eq!(
            requested_task(Operation::GetTask, Version::V03, &json!({})).as_deref(),
            Some("")
        );
        assert_eq!(
            revealed_task(&json!({"kind": "task", "id": "t"})).as_deref(),
            Some("t")
        );
        assert_eq!(
            revealed_task(&json!({"task": {"id": "t"}})).as_deref(),
            Some("t")
        );
        assert_eq!(
            revealed_task(&json!({"statusUpdate": {"taskId": "t"}})).as_deref(),
            Some("t")
        );
        assert_eq!(
            revealed_task(&json!({"kind": "status-update", "taskId": "t"})).as_deref(),
            Some("t")
        );
    }
}
