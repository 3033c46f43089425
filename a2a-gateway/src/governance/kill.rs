//! Session kill: an operator stops a context or a task of a workspace. Sends that name it
//! (message `contextId`/`taskId`, a task id of GetTask, CancelTask, SubscribeToTask or a push
//! config operation) are refused with `a2a_session_killed`; open streams of it end with one
//! `a2a_session_killed` error event ([`Streams`]); the admin handler also cancels the peer task.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::errors::Refusal;
use crate::{governance::step::Evidence, governance::step::Hop, governance::step::Step};

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

    /// How many streams are open now (read at scrape time).
    pub fn open_count(&self) -> usize {
        self.open
            .lock()
            .map(|open| open.iter().filter(|w| w.strong_count() > 0).count())
            .unwrap_or(0)
    }

    /// How many streams are open now per workspace, in workspace order (workspaces with
    /// none are absent).
    pub fn open_by_workspace(&self) -> Vec<(String, i64)> {
        let mut by: std::collections::BTreeMap<String, i64> = Default::default();
        if let Ok(open) = self.open.lock() {
            for s in open.iter().filter_map(Weak::upgrade) {
                *by.entry(s.workspace.clone()).or_default() += 1;
            }
        }
        by.into_iter().collect()
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
