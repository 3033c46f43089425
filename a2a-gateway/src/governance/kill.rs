//! Session kill: an operator stops a context or a task of a workspace. Sends that name it
//! (message `contextId`/`taskId`, a task id of GetTask, CancelTask, SubscribeToTask or a push
//! config operation) are refused with `a2a_session_killed`; open streams of it end with one
//! `a2a_session_killed` error event ([`Streams`]); the admin handler also cancels the peer task.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::outbound::side_call::Peer;
use crate::protocol::answer::Answer;
use crate::protocol::ops::Operation;
use crate::{governance::step::Evidence, governance::step::Hop, governance::step::Step};
use crate::{protocol::errors::Refusal, protocol::errors::Version};

use super::Cache;

/// The context and task ids a request or event names (1.0 form).
pub fn ids_of(v: &Value) -> (Vec<String>, Vec<String>) {
    let mut contexts = Vec::new();
    let mut tasks = Vec::new();
    let mut take = |obj: &Value, task_key: &str| {
        if let Some(c) = obj.get("contextId").and_then(Value::as_str) {
            contexts.push(c.to_owned());
        }
        if let Some(t) = obj.get(task_key).and_then(Value::as_str) {
            tasks.push(t.to_owned());
        }
    };
    // A request: the message, or the task a task operation names.
    if let Some(m) = v.get("message") {
        take(m, "taskId");
    } else {
        // GetTask / CancelTask / SubscribeToTask name the task by `id`; a Task does too.
        take(v, "id");
    }
    take(v, "taskId");
    for k in ["task", "statusUpdate", "artifactUpdate"] {
        if let Some(o) = v.get(k) {
            take(o, if k == "task" { "id" } else { "taskId" });
        }
    }
    (contexts, tasks)
}

/// The kill step: refuses requests naming a killed context or task.
pub struct KillStep {
    pub(crate) cache: Arc<Cache>,
}

impl Step for KillStep {
    fn name(&self) -> &'static str {
        "kill"
    }

    fn active(&self, hop: &Hop) -> bool {
        !self.cache.get(&hop.workspace_id).kills.is_empty()
    }

    fn request(&self, hop: &Hop, params: &mut Value, ev: &mut Evidence) -> Result<(), Refusal> {
        let entry = self.cache.get(&hop.workspace_id);
        let (contexts, tasks) = ids_of(params);
        for (kind, ids) in [("context", contexts), ("task", tasks)] {
            for id in ids {
                if entry.kills.contains(&(kind.to_owned(), id.clone())) {
                    ev.decide("kill", "killed", Some(&format!("{kind}:{id}")));
                    return Err(Refusal::session_killed(kind, &id));
                }
            }
        }
        Ok(())
    }
}

/// One open stream, as the kill switch sees it.
pub struct OpenStream {
    workspace: String,
    agent: String,
    ids: Mutex<(HashSet<String>, HashSet<String>)>,
    /// Cancelled when the stream is killed.
    pub token: CancellationToken,
    why: Mutex<Option<Refusal>>,
    /// The final event (1.0 form) the stream ends with instead of an error ([`Streams::end_task`]).
    last: Mutex<Option<Value>>,
}

impl OpenStream {
    /// Notes the context and task ids an event names.
    pub fn saw(&self, event: &Value) {
        let (c, t) = ids_of(event);
        if let Ok(mut ids) = self.ids.lock() {
            ids.0.extend(c);
            ids.1.extend(t);
        }
    }

    /// The refusal the stream was killed with.
    pub fn refusal(&self) -> Refusal {
        self.why
            .lock()
            .ok()
            .and_then(|w| w.clone())
            .unwrap_or_else(|| Refusal::session_killed("session", ""))
    }

    /// The final event (1.0 form) the stream was ended with, if it was ended by
    /// [`Streams::end_task`] rather than killed.
    pub fn final_event(&self) -> Option<Value> {
        self.last.lock().ok().and_then(|l| l.clone())
    }
}

/// The open streams of the gateway (weakly held: a stream that ends drops out).
#[derive(Default)]
pub struct Streams {
    open: Mutex<Vec<Weak<OpenStream>>>,
}

impl Streams {
    /// Registers a stream of `workspace`'s `agent` whose request is `params` (1.0 form).
    pub fn open(&self, workspace: &str, agent: &str, params: &Value) -> Arc<OpenStream> {
        let (c, t) = ids_of(params);
        let s = Arc::new(OpenStream {
            workspace: workspace.to_owned(),
            agent: agent.to_owned(),
            ids: Mutex::new((c.into_iter().collect(), t.into_iter().collect())),
            token: CancellationToken::new(),
            why: Mutex::new(None),
            last: Mutex::new(None),
        });
        if let Ok(mut open) = self.open.lock() {
            open.retain(|w| w.strong_count() > 0);
            open.push(Arc::downgrade(&s));
        }
        s
    }

    /// Ends the open streams of `workspace` naming the `kind` (`context`/`task`) `id`; returns
    /// the (agent, task id) pairs they carried, for canceling at the peer.
    pub fn kill(&self, workspace: &str, kind: &str, id: &str) -> Vec<(String, String)> {
        let mut tasks = Vec::new();
        let Ok(open) = self.open.lock() else {
            return tasks;
        };
        for s in open.iter().filter_map(Weak::upgrade) {
            if s.workspace != workspace {
                continue;
            }
            let Ok(ids) = s.ids.lock() else { continue };
            let hit = match kind {
                "context" => ids.0.contains(id),
                _ => ids.1.contains(id),
            };
            if hit {
                for t in &ids.1 {
                    tasks.push((s.agent.clone(), t.clone()));
                }
                if let Ok(mut w) = s.why.lock() {
                    *w = Some(Refusal::session_killed(kind, id));
                }
                s.token.cancel();
            }
        }
        tasks
    }

    /// Ends the open streams of `workspace`'s `agent` that carry task `task` with `event` (a 1.0
    /// `StreamResponse`, sent in each caller's version); returns how many it ended.
    pub fn end_task(&self, workspace: &str, agent: &str, task: &str, event: &Value) -> usize {
        let Ok(open) = self.open.lock() else { return 0 };
        let mut ended = 0;
        for s in open.iter().filter_map(Weak::upgrade) {
            if s.workspace != workspace || s.agent != agent {
                continue;
            }
            if !s.ids.lock().is_ok_and(|ids| ids.1.contains(task)) {
                continue;
            }
            if let Ok(mut l) = s.last.lock() {
                *l = Some(event.clone());
            }
            s.token.cancel();
            ended += 1;
        }
        ended
    }
}

/// Cancels `task` at the peer `agent` of `workspace` (CancelTask in the peer's version), when
/// the gateway's ownership records give the task to that registration: a kill never touches
/// another workspace's task at a shared peer. Returns `canceled` or why not.
pub(crate) async fn cancel_at_peer(
    st: &crate::state::GatewayState,
    workspace: &str,
    agent_id: &str,
    task: &str,
) -> String {
    use crate::{
        tasks::ownership::Owner, tasks::ownership::OwnershipStore,
        tasks::ownership::SqliteOwnership,
    };
    let agent = match st.store.agent(workspace, agent_id) {
        Ok(Some(a)) => a,
        Ok(None) => return "agent not found".into(),
        Err(e) => return format!("registry: {e}"),
    };
    let owner = Owner {
        workspace_id: workspace.to_owned(),
        agent_id: agent_id.to_owned(),
    };
    match SqliteOwnership::new(st.store.clone()).owns(&agent.endpoint, task, &owner) {
        Ok(true) => {}
        Ok(false) => return "not a task of this workspace: not canceled".into(),
        Err(e) => return format!("ownership: {e}"),
    }
    match Peer::open(st, &agent).await {
        Ok(peer) => match peer.op(Operation::CancelTask, json!({"id": task})).await {
            Ok(_) => "canceled".into(),
            Err(code) => code,
        },
        Err(code) => code,
    }
}

/// Owned tasks looked up one by one (GetTask) at most, for a peer without ListTasks (0.3).
pub(crate) const MAX_CONTEXT_SCAN: usize = 1000;

/// What a context kill found at one agent: the workspace's tasks of that context there.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextScan {
    pub agent_id: String,
    pub tasks: Vec<String>,
    /// `ListTasks` (1.0 peer, filtered by contextId) or `GetTask` (0.3 peer, each owned task).
    pub method: &'static str,
    /// More owned tasks than [`MAX_CONTEXT_SCAN`] (GetTask) or peer pages were left unread.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The tasks of context `context` that `workspace` owns at its agent `agent_id`: asked of the
/// peer (the context of a task is the peer's to say) and kept to the gateway's ownership records,
/// so another workspace's tasks under the same context id at a shared peer are never named.
pub(crate) async fn tasks_in_context(
    st: &crate::state::GatewayState,
    workspace: &str,
    agent: &crate::store::Agent,
    context: &str,
) -> ContextScan {
    use crate::{
        tasks::ownership::Owner, tasks::ownership::OwnershipStore,
        tasks::ownership::SqliteOwnership,
    };
    let mut scan = ContextScan {
        agent_id: agent.agent_id.clone(),
        method: "ListTasks",
        ..Default::default()
    };
    let owner = Owner {
        workspace_id: workspace.to_owned(),
        agent_id: agent.agent_id.clone(),
    };
    let owned: Vec<String> =
        match SqliteOwnership::new(st.store.clone()).list(&agent.endpoint, &owner, 0, i64::MAX) {
            Ok(rows) => rows.into_iter().map(|(_, t)| t).collect(),
            Err(e) => {
                scan.error = Some(format!("ownership: {e}"));
                return scan;
            }
        };
    if owned.is_empty() {
        return scan;
    }
    let peer = match Peer::open(st, agent).await {
        Ok(p) => p,
        Err(code) => {
            scan.error = Some(code);
            return scan;
        }
    };
    let mine: HashSet<&str> = owned.iter().map(String::as_str).collect();
    if peer.chosen.version == Version::V10 {
        let mut token = String::new();
        for page in 0..crate::hop::listing::MAX_PEER_PAGES {
            let mut params = json!({"contextId": context, "historyLength": 0,
                "pageSize": crate::hop::listing::MAX_LIST_PAGE});
            if !token.is_empty() {
                params["pageToken"] = json!(token);
            }
            let list = match peer.op(Operation::ListTasks, params).await {
                Ok(Answer::Unary(v)) => v,
                Ok(Answer::Passed(p)) => p.into_value(),
                Ok(Answer::Stream(_)) => {
                    scan.error = Some("a2a_upstream_invalid_response".into());
                    return scan;
                }
                Err(code) => {
                    scan.error = Some(code);
                    return scan;
                }
            };
            for t in list
                .get("tasks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                // The peer's filter is trusted only as far as the task says it.
                if let (Some(id), Some(c)) = (
                    t.get("id").and_then(Value::as_str),
                    t.get("contextId").and_then(Value::as_str),
                ) && c == context
                    && mine.contains(id)
                {
                    scan.tasks.push(id.to_owned());
                }
            }
            token = list
                .get("nextPageToken")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if token.is_empty() {
                break;
            }
            scan.truncated = page + 1 == crate::hop::listing::MAX_PEER_PAGES;
        }
    } else {
        scan.method = "GetTask";
        scan.truncated = owned.len() > MAX_CONTEXT_SCAN;
        // The newest bindings first: a runaway session is most likely among them.
        for id in owned.iter().rev().take(MAX_CONTEXT_SCAN) {
            if let Ok(Answer::Unary(t)) = peer
                .op(Operation::GetTask, json!({"id": id, "historyLength": 0}))
                .await
                && t.get("contextId").and_then(Value::as_str) == Some(context)
            {
                scan.tasks.push(id.clone());
            }
        }
    }
    scan
}
