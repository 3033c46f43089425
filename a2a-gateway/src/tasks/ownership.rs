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
//! The gateway keeps the bindings in its task records ([`Records`], on the SQLite file or on
//! PostgreSQL: `crate::store::backend::TaskStore`, whose backends keep the same rules: one
//! owner per task, a second owner's bind refused). A store that cannot be reached refuses the
//! request with 503 `a2a_store_unavailable` ([`Refusal::store`]).
//!
//! Each binding also records what the gateway last saw of its task's status (context, state,
//! status timestamp; schema version 16, `crate::store::TaskStatusRow`), from every answer,
//! stream event and push notification that passes through the gateway for the task
//! ([`bind_answer`], [`record_answer`], [`record`]): ListTasks is answered from these records.

use futures::StreamExt;
use serde_json::Value;

use crate::protocol::answer::Answer;
use crate::protocol::ops::Operation;
use crate::protocol::reveal::{TaskFacts, revealed_status};
use crate::store::TaskStatusRow;
use crate::store::backend::{Records, TaskStore};
use crate::{protocol::errors::Refusal, protocol::errors::Version};
pub use crate::{protocol::reveal::listed_task_id, protocol::reveal::revealed_task};

pub use crate::store::{Bound, Owner};

/// The record of what `facts` say of one of `owner`'s tasks (another owner's binding is never
/// touched); `fresh`: a read of the task itself, which replaces the record whatever its time.
pub fn status_row(endpoint: &str, owner: &Owner, facts: &TaskFacts, fresh: bool) -> TaskStatusRow {
    TaskStatusRow {
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
    }
}

/// The record that the peer no longer knows one of `owner`'s tasks: the binding stays (the
/// task is still the owner's), the task is no longer listed until the peer names it again.
pub fn gone_row(endpoint: &str, owner: &Owner, task_id: &str) -> TaskStatusRow {
    TaskStatusRow {
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
    }
}

/// Records the status `v` (an answer, stream event or notification in either version's shape)
/// reveals of one of `owner`'s tasks, if any. A record that cannot be made is logged: the
/// listing reads its tasks from the peer and refreshes what it finds out of date.
pub async fn record(records: &Records, endpoint: &str, owner: &Owner, v: &Value) {
    if let Some(facts) = revealed_status(v) {
        record_facts(records, endpoint, owner, &facts).await;
    }
}

async fn record_facts(records: &Records, endpoint: &str, owner: &Owner, facts: &TaskFacts) {
    let row = status_row(endpoint, owner, facts, false);
    if let Err(e) = records.record_status(row).await {
        tracing::warn!(task = %facts.task_id, "task status not recorded: {e}");
    }
}

/// Records what a task operation's answer (GetTask, CancelTask: the Task; SubscribeToTask: each
/// event) says of the owner's task, and hands the answer on unchanged.
pub async fn record_answer(
    records: Records,
    endpoint: &str,
    owner: &Owner,
    answer: Answer,
) -> Answer {
    match answer {
        Answer::Unary(v) => {
            record(&records, endpoint, owner, &v).await;
            Answer::Unary(v)
        }
        Answer::Passed(p) => {
            if let Some(f) = p.status() {
                record_facts(&records, endpoint, owner, f).await;
            }
            Answer::Passed(p)
        }
        Answer::Stream(events) => {
            let (endpoint, owner) = (endpoint.to_owned(), owner.clone());
            Answer::Stream(Box::pin(events.then(move |ev| {
                let (records, endpoint, owner) = (records.clone(), endpoint.clone(), owner.clone());
                async move {
                    if let Ok(v) = &ev {
                        record(&records, &endpoint, &owner, v).await;
                    }
                    ev
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
/// [`not_found`] otherwise. Store failures refuse ([`Refusal::store`]).
pub async fn check(
    records: &Records,
    endpoint: &str,
    owner: &Owner,
    op: Operation,
    version: Version,
    params: &Value,
) -> Result<Option<String>, Refusal> {
    let Some(task) = requested_task(op, version, params) else {
        return Ok(None);
    };
    match records.owns(endpoint, &task, owner).await {
        Ok(true) => Ok(Some(task)),
        Ok(false) => Err(not_found()),
        Err(e) => Err(Refusal::store("", &e)),
    }
}

async fn bind_revealed(
    records: &Records,
    endpoint: &str,
    owner: &Owner,
    v: &Value,
    facts: Option<&TaskFacts>,
) -> Result<Option<String>, Refusal> {
    let Some(task) = revealed_task(v) else {
        return Ok(None);
    };
    bind_task(records, endpoint, owner, task, facts).await
}

/// Binds `task` to `owner` ([`bind_revealed`] once the task is known), recording with the
/// binding what `facts` (of the same answer) say of the task, when they are of it.
async fn bind_task(
    records: &Records,
    endpoint: &str,
    owner: &Owner,
    task: String,
    facts: Option<&TaskFacts>,
) -> Result<Option<String>, Refusal> {
    let status = facts
        .filter(|f| f.task_id == task)
        .map(|f| status_row(endpoint, owner, f, false));
    match records.bind_recorded(endpoint, &task, owner, status).await {
        Ok(Bound::New | Bound::Already) => Ok(Some(task)),
        Ok(Bound::Other) => {
            tracing::warn!(task = %task, "peer answered a task bound to another owner");
            Err(not_found())
        }
        Err(e) => Err(Refusal::store("", &e)),
    }
}

/// Records `facts` unless the binding of `task` recorded them ([`bind_task`]: facts of the
/// bound task).
async fn record_unbound(
    records: &Records,
    endpoint: &str,
    owner: &Owner,
    task: Option<&str>,
    facts: Option<&TaskFacts>,
) {
    match facts {
        Some(f) if task != Some(f.task_id.as_str()) => {
            record_facts(records, endpoint, owner, f).await
        }
        _ => {}
    }
}

/// Binds the task a send's answer reveals to `owner` (a stream: at the first event that names
/// it, before the caller sees it). Returns the answer and the task id of a unary answer. A task
/// already bound to another owner is refused as [`not_found`]; a stream ends at its first
/// error event.
pub async fn bind_answer(
    records: Records,
    endpoint: &str,
    owner: &Owner,
    answer: Answer,
) -> Result<(Answer, Option<String>), Refusal> {
    match answer {
        Answer::Unary(v) => {
            let facts = revealed_status(&v);
            let task = bind_revealed(&records, endpoint, owner, &v, facts.as_ref()).await?;
            record_unbound(&records, endpoint, owner, task.as_deref(), facts.as_ref()).await;
            Ok((Answer::Unary(v), task))
        }
        Answer::Passed(p) => {
            let facts = p.status();
            let task = match p.task_id() {
                Some(t) => bind_task(&records, endpoint, owner, t.to_owned(), facts).await?,
                None => None,
            };
            record_unbound(&records, endpoint, owner, task.as_deref(), facts).await;
            Ok((Answer::Passed(p), task))
        }
        Answer::Stream(mut events) => {
            let (endpoint, owner) = (endpoint.to_owned(), owner.clone());
            let s = async_stream::stream! {
                let mut bound = false;
                while let Some(item) = events.next().await {
                    let ev = match item {
                        Ok(ev) => ev,
                        Err(r) => {
                            yield Err(r);
                            break;
                        }
                    };
                    if !bound {
                        match bind_revealed(&records, &endpoint, &owner, &ev, None).await {
                            Ok(Some(_)) => bound = true,
                            Ok(None) => {
                                yield Ok(ev);
                                continue;
                            }
                            Err(r) => {
                                yield Err(r);
                                break;
                            }
                        }
                    }
                    record(&records, &endpoint, &owner, &ev).await;
                    yield Ok(ev);
                }
            };
            Ok((Answer::Stream(Box::pin(s)), None))
        }
    }
}

/// The task id a request of `op` names (caller's version), if any: `id` of task operations,
/// the push config's task, or `message.taskId` of a send. ListTasks names none.
pub fn requested_task(op: Operation, version: Version, params: &Value) -> Option<String> {
    let s = |path: &[&str]| {
        crate::protocol::member(params, path)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match op {
        Operation::SendMessage | Operation::SendStreamingMessage => s(&["message", "taskId"]),
        Operation::GetTask | Operation::CancelTask | Operation::SubscribeToTask => {
            Some(s(&["id"]).unwrap_or_default())
        }
        Operation::CreateTaskPushNotificationConfig => Some(s(&["taskId"]).unwrap_or_default()),
        Operation::GetTaskPushNotificationConfig
        | Operation::ListTaskPushNotificationConfigs
        | Operation::DeleteTaskPushNotificationConfig => Some(
            match version {
                Version::V03 => s(&["id"]),
                Version::V1 => s(&["taskId"]),
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

    #[tokio::test]
    async fn binds_once_and_refuses_other_owners() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let own = Records::Sqlite(crate::store::backend::SqliteRecords::new(store));
        let a = Owner {
            workspace_id: "a".into(),
            agent_id: "x".into(),
        };
        let b = Owner {
            workspace_id: "b".into(),
            agent_id: "x".into(),
        };
        let answer = || {
            Answer::Unary(json!({"task": {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}}}))
        };
        let (_, task) = bind_answer(own.clone(), "http://p", &a, answer())
            .await
            .unwrap();
        assert_eq!(task.as_deref(), Some("t1"));
        assert!(
            bind_answer(own.clone(), "http://p", &a, answer())
                .await
                .is_ok()
        );
        let other = bind_answer(own.clone(), "http://p", &b, answer()).await;
        assert_eq!(other.err(), Some(not_found()));
        let get = json!({"id": "t1"});
        let checked = check(&own, "http://p", &a, Operation::GetTask, Version::V1, &get).await;
        assert_eq!(checked, Ok(Some("t1".to_owned())));
        let checked = check(&own, "http://p", &b, Operation::GetTask, Version::V1, &get).await;
        assert_eq!(checked, Err(not_found()));
        let checked = check(&own, "http://q", &a, Operation::GetTask, Version::V1, &get).await;
        assert_eq!(checked, Err(not_found()));
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
