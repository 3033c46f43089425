//! Session kill: an operator stops a context or a task of a workspace. Sends that name it
//! (message `contextId`/`taskId`, a task id of GetTask, CancelTask, SubscribeToTask or a push
//! config operation) are refused with `a2a_session_killed`; open streams of it end with one
//! `a2a_session_killed` error event ([`Streams`]); the admin handler also cancels the peer task.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::errors::Refusal;
use crate::seams::{Evidence, Hop, Step};

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
}

/// Cancels `task` at the peer `agent` of `workspace` (CancelTask in the peer's version), when
/// the gateway's ownership records give the task to that registration: a kill never touches
/// another workspace's task at a shared peer. Returns `canceled` or why not.
pub(crate) async fn cancel_at_peer(
    st: &crate::server::GatewayState,
    workspace: &str,
    agent_id: &str,
    task: &str,
) -> String {
    use crate::ownership::{Owner, OwnershipStore, SqliteOwnership};
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
    let (chosen, _) = match crate::hop::choose(st, &agent, st.config.limits.max_card_bytes).await {
        Ok(c) => c,
        Err(r) => return r.code,
    };
    let params = match crate::hop::peer_params(
        crate::ops::Operation::CancelTask,
        crate::errors::Version::V10,
        &chosen,
        &serde_json::json!({"id": task}),
        false,
    ) {
        Ok(p) => p,
        Err(r) => return r.code,
    };
    let ctx = crate::hop::PeerCall {
        st,
        agent: &agent,
        chosen: &chosen,
        caller: crate::errors::Version::V10,
        traceparent: format!(
            "00-{}-{}-01",
            crate::server::random_hex(16),
            crate::server::random_hex(8)
        ),
        hops: 1,
        id: serde_json::json!(crate::server::random_hex(8)),
        max_resp: st.config.limits.max_response_bytes,
        max_stream: st.config.limits.max_stream_bytes,
        gov: None,
        open: None,
    };
    match ctx.call(crate::ops::Operation::CancelTask, params).await {
        Ok(_) => "canceled".into(),
        Err(r) => r.code,
    }
}
