//! Admin API of governance (under the admin token, like the rest of `/admin`):
//!
//! - `GET|PUT|DELETE /admin/workspaces/{ws}/policy`: the workspace's policy document
//!   (validated and compiled on save: 400 names the rule and the problem);
//! - `POST /admin/workspaces/{ws}/policy:explain` `{policy?, hop?}`: which rule decides a hop
//!   (the saved policy, or `policy` unsaved) over the attributes in `hop` (any of
//!   [`crate::governance::policy::ATTRIBUTES`], the rest filled with a plain SendMessage);
//! - `GET|PUT|DELETE /admin/workspaces/{ws}/pii`: the workspace's PII rules (absent: off);
//! - `POST /admin/workspaces/{ws}/kill` `{kind: context|task, id, agentId?, reason?}`, `GET
//!   /admin/workspaces/{ws}/kills`, `DELETE /admin/workspaces/{ws}/kills/{kind}/{id}` (lift):
//!   session kill;
//! - approvals: `super::approvals`.
//!
//! Every write invalidates the workspace's cached settings at once.

use std::collections::HashSet;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::outbound::side_call::Peer;
use crate::pii::PiiRules;
use crate::protocol::answer::Answer;
use crate::protocol::errors::Version;
use crate::protocol::ops::Operation;
use crate::state::GatewayState;
use crate::store::StoreError;
use crate::store::backend::{GovDocStore, HoldStore, Kill, RegistryStore, TaskStore};
use crate::{governance::policy::Policy, governance::policy::PolicyDoc};

use crate::{admin::reply::err, admin::reply::store_err};

/// The governance routes (the caller adds the admin token check).
pub fn routes() -> Router<Arc<GatewayState>> {
    Router::new()
        .route(
            "/admin/workspaces/{ws}/policy",
            get(get_policy).put(put_policy).delete(delete_policy),
        )
        .route("/admin/workspaces/{ws}/policy:explain", post(explain))
        .route(
            "/admin/workspaces/{ws}/pii",
            get(get_pii).put(put_pii).delete(delete_pii),
        )
        .route("/admin/workspaces/{ws}/kill", post(kill))
        .route("/admin/workspaces/{ws}/kills", get(kills))
        .route(
            "/admin/workspaces/{ws}/kills/{kind}/{id}",
            axum::routing::delete(lift),
        )
}

pub(super) async fn workspace_exists(st: &GatewayState, ws: &str) -> Result<(), Response> {
    match st.registry.workspace(ws).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(err(
            StatusCode::NOT_FOUND,
            &format!("workspace {ws} not found"),
        )),
        Err(e) => Err(store_err(e)),
    }
}

async fn get_policy(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    if let Err(r) = workspace_exists(&st, &ws).await {
        return r;
    }
    stored_json(
        st.governance.cache.store().policy(&ws).await,
        &format!("workspace {ws} has no policy"),
    )
}

/// 204 when something was deleted; 404 with `missing` when there was nothing.
fn deleted(r: Result<bool, StoreError>, missing: &str) -> Response {
    match r {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => err(StatusCode::NOT_FOUND, missing),
        Err(e) => store_err(e),
    }
}

/// A stored JSON document as the answer; 404 with `missing` when there is none.
fn stored_json(doc: Result<Option<String>, StoreError>, missing: &str) -> Response {
    match doc {
        Ok(Some(doc)) => match serde_json::from_str::<Value>(&doc) {
            Ok(v) => axum::Json(v).into_response(),
            Err(e) => err(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        Ok(None) => err(StatusCode::NOT_FOUND, missing),
        Err(e) => store_err(e),
    }
}

async fn put_policy(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let policy = match Policy::from_json(&String::from_utf8_lossy(&body)) {
        Ok(p) => p,
        // A name the hop's facts lack is refused here, never at hop time (the message lists
        // the names that exist).
        Err(e) if crate::governance::policy::is_unknown_name(&e) => {
            return err(StatusCode::UNPROCESSABLE_ENTITY, &e);
        }
        Err(e) => return err(StatusCode::BAD_REQUEST, &e),
    };
    let text = match serde_json::to_string(policy.doc()) {
        Ok(t) => t,
        Err(e) => return err(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let r = st.governance.cache.store().put_policy(&ws, &text).await;
    st.governance.cache.invalidate(&ws);
    match r {
        Ok(()) => axum::Json(policy.doc().clone()).into_response(),
        Err(e) => store_err(e),
    }
}

async fn delete_policy(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    let r = st.governance.cache.store().delete_policy(&ws).await;
    st.governance.cache.invalidate(&ws);
    deleted(r, &format!("workspace {ws} has no policy"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExplainBody {
    #[serde(default)]
    policy: Option<PolicyDoc>,
    #[serde(default)]
    hop: serde_json::Map<String, Value>,
}

async fn explain(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    axum::Json(b): axum::Json<ExplainBody>,
) -> Response {
    if let Err(r) = workspace_exists(&st, &ws).await {
        return r;
    }
    let policy = match b.policy {
        Some(doc) => match Policy::compile(doc) {
            Ok(p) => Arc::new(p),
            Err(e) => return err(StatusCode::BAD_REQUEST, &e),
        },
        None => match st.governance.cache.load(&ws).await.policy.clone() {
            Some(p) => p,
            None => {
                let d = st.config().governance().policy_default;
                return axum::Json(json!({"decision": d, "rule": "default", "trace": [],
                    "note": "the workspace has no policy: the operator default decides"}))
                .into_response();
            }
        },
    };
    // A plain SendMessage of the workspace, with the attributes the caller named over it.
    let facts = match crate::governance::policy::sample_facts(&ws, &b.hop) {
        Ok(f) => f,
        Err(e) => return err(StatusCode::BAD_REQUEST, &e),
    };
    let o = policy.evaluate(&facts, st.config().governance().policy_default);
    axum::Json(json!({"decision": o.decision, "rule": o.rule, "trace": o.trace, "hop": facts}))
        .into_response()
}

async fn get_pii(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    if let Err(r) = workspace_exists(&st, &ws).await {
        return r;
    }
    stored_json(
        st.governance.cache.store().pii_rules(&ws).await,
        &format!("workspace {ws} has no PII rules (scanning off)"),
    )
}

async fn put_pii(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let rules: PiiRules = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return err(StatusCode::BAD_REQUEST, &format!("PII rules: {e}")),
    };
    let text = match serde_json::to_string(&rules) {
        Ok(t) => t,
        Err(e) => return err(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let r = st.governance.cache.store().put_pii_rules(&ws, &text).await;
    st.governance.cache.invalidate(&ws);
    match r {
        Ok(()) => axum::Json(rules).into_response(),
        Err(e) => store_err(e),
    }
}

async fn delete_pii(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    let r = st.governance.cache.store().delete_pii_rules(&ws).await;
    st.governance.cache.invalidate(&ws);
    deleted(r, &format!("workspace {ws} has no PII rules"))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct KillBody {
    kind: String,
    id: String,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}

async fn kill(
    State(st): State<Arc<GatewayState>>,
    Path(ws): Path<String>,
    axum::Json(b): axum::Json<KillBody>,
) -> Response {
    if b.kind != "context" && b.kind != "task" {
        return err(StatusCode::BAD_REQUEST, "kind: must be context or task");
    }
    if b.id.is_empty() || b.id.len() > 1024 {
        return err(StatusCode::BAD_REQUEST, "id: must be 1 to 1024 characters");
    }
    let k = Kill {
        workspace_id: ws.clone(),
        kind: b.kind.clone(),
        id: b.id.clone(),
        agent_id: b.agent_id.clone(),
        reason: b.reason.clone(),
        killed_at: time::OffsetDateTime::now_utc().unix_timestamp(),
    };
    let r = st.holds.add_kill(&k).await;
    st.governance.cache.invalidate(&ws);
    if let Err(e) = r {
        return store_err(e);
    }
    let mut tasks = st.governance.streams.kill(&ws, &b.kind, &b.id);
    if let (Some(agent), "task") = (&b.agent_id, b.kind.as_str())
        && !tasks.iter().any(|(_, t)| t == &b.id)
    {
        tasks.push((agent.clone(), b.id.clone()));
    }
    let mut scans = Vec::new();
    if b.kind == "context" {
        // The context's tasks without an open stream: each becomes a task kill (a later
        // request naming only the task id is refused too) and is canceled at its peer.
        let agents = match &b.agent_id {
            Some(a) => st
                .registry
                .agent(&ws, a)
                .await
                .map(|a| a.into_iter().collect()),
            None => st.registry.list_agents(&ws).await,
        };
        for agent in agents.unwrap_or_default() {
            let scan = tasks_in_context(&st, &ws, &agent, &b.id).await;
            for t in &scan.tasks {
                let tk = Kill {
                    kind: "task".into(),
                    id: t.clone(),
                    agent_id: Some(agent.agent_id.clone()),
                    reason: Some(format!("context {} killed", b.id)),
                    ..k.clone()
                };
                if let Err(e) = st.holds.add_kill(&tk).await {
                    tracing::error!("kill of task {t} (context {}) not stored: {e}", b.id);
                }
                tasks.push((agent.agent_id.clone(), t.clone()));
            }
            scans.push(scan);
        }
        st.governance.cache.invalidate(&ws);
    }
    tasks.sort();
    tasks.dedup();
    let mut canceled = Vec::new();
    for (agent, task) in &tasks {
        let outcome = cancel_at_peer(&st, &ws, agent, task).await;
        canceled.push(json!({"agentId": agent, "taskId": task, "outcome": outcome}));
    }
    tracing::info!(workspace = %ws, kind = %b.kind, id = %b.id, "session killed");
    let rec = crate::store::AuditRecord {
        trace_id: crate::ids::random_hex(16),
        workspace_id: Some(ws.clone()),
        target: b.agent_id.clone(),
        operation: Some("admin:kill".into()),
        decision: "killed".into(),
        status: 200,
        task_id: (b.kind == "task").then(|| b.id.clone()),
        governance: Some(json!({"decisions": [{"step": "kill", "decision": "killed",
            "rule": format!("{}:{}", b.kind, b.id)}], "canceled": canceled, "scanned": scans})),
        ..Default::default()
    };
    if let Err(e) = crate::store::backend::AuditStore::enqueue(&st.audit, &rec, None) {
        tracing::error!("kill audit write failed: {e}");
    }
    (
        StatusCode::CREATED,
        axum::Json(json!({"kill": k, "canceled": canceled, "scanned": scans})),
    )
        .into_response()
}

async fn kills(State(st): State<Arc<GatewayState>>, Path(ws): Path<String>) -> Response {
    if let Err(r) = workspace_exists(&st, &ws).await {
        return r;
    }
    match st.holds.kills(&ws).await {
        Ok(k) => axum::Json(k).into_response(),
        Err(e) => store_err(e),
    }
}

/// `DELETE /admin/workspaces/{ws}/kills/{kind}/{id}`: lifts a kill (sends naming the context or
/// task are served again from the next request; what it ended stays ended); 404 without one.
async fn lift(
    State(st): State<Arc<GatewayState>>,
    Path((ws, kind, id)): Path<(String, String, String)>,
) -> Response {
    if let Err(r) = workspace_exists(&st, &ws).await {
        return r;
    }
    let r = st.holds.lift_kill(&ws, &kind, &id).await;
    st.governance.cache.invalidate(&ws);
    match r {
        Ok(true) => {
            tracing::info!(workspace = %ws, kind = %kind, id = %id, "session kill lifted");
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => err(
            StatusCode::NOT_FOUND,
            &format!("no kill of {kind} {id} in workspace {ws}"),
        ),
        Err(e) => store_err(e),
    }
}

// The peer calls of a session kill (the admin handler cancels what the kill names).

/// Cancels `task` at the peer `agent` of `workspace` (CancelTask in the peer's version), when
/// the gateway's ownership records give the task to that registration: a kill never touches
/// another workspace's task at a shared peer. Returns `canceled` or why not.
pub(crate) async fn cancel_at_peer(
    st: &crate::state::GatewayState,
    workspace: &str,
    agent_id: &str,
    task: &str,
) -> String {
    use crate::tasks::ownership::Owner;
    let agent = match st.registry.agent(workspace, agent_id).await {
        Ok(Some(a)) => a,
        Ok(None) => return "agent not found".into(),
        Err(e) => return format!("registry: {e}"),
    };
    let owner = Owner {
        workspace_id: workspace.to_owned(),
        agent_id: agent_id.to_owned(),
    };
    match st.records.owns(&agent.endpoint, task, &owner).await {
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
    use crate::tasks::ownership::Owner;
    let mut scan = ContextScan {
        agent_id: agent.agent_id.clone(),
        method: "ListTasks",
        ..Default::default()
    };
    let owner = Owner {
        workspace_id: workspace.to_owned(),
        agent_id: agent.agent_id.clone(),
    };
    let owned = st
        .records
        .owned_tasks(&agent.endpoint, &owner, 0, i64::MAX)
        .await;
    let owned: Vec<String> = match owned {
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
    if peer.chosen.version == Version::V1 {
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
