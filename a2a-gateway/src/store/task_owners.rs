//! Task ownership bindings in the SQLite file (the `task_owners` table): a task the gateway
//! saw created is bound to exactly one owner (workspace + agentId); a second bind of the same
//! task to another owner is refused. `crate::tasks::ownership` checks every task operation
//! against these bindings; the PostgreSQL counterpart is `backend::pg_tasks`.

use rusqlite::{OptionalExtension, params};

use super::audit_writer::BindOutcome;
use super::sql::CachedExt;
use super::{Store, StoreError, TaskBinding};

/// The owner of a task: a registration inside a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Workspace id.
    pub workspace_id: String,
    /// The agentId the task was created through.
    pub agent_id: String,
}

/// What binding a task to an owner did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A new binding was written.
    New,
    /// The task was already bound to this owner.
    Already,
    /// The task is bound to another owner (the binding is unchanged).
    Other,
}

impl Bound {
    /// What a bind finds when the task is bound already, to (`workspace_id`, `agent_id`).
    pub(crate) fn existing(owner: &Owner, workspace_id: &str, agent_id: &str) -> Bound {
        if owner.workspace_id == workspace_id && owner.agent_id == agent_id {
            Bound::Already
        } else {
            Bound::Other
        }
    }
}

impl Store {
    /// Binds `task_id` at peer `endpoint` to `owner` unless it is bound already: through the
    /// intent journal in the serving process (off the request path), else committed here.
    pub fn bind_task(
        &self,
        endpoint: &str,
        task_id: &str,
        owner: &Owner,
    ) -> Result<Bound, StoreError> {
        let b = TaskBinding {
            endpoint: endpoint.to_owned(),
            task_id: task_id.to_owned(),
            workspace_id: owner.workspace_id.clone(),
            agent_id: owner.agent_id.clone(),
        };
        match self.bind_journaled(&b)? {
            Some(BindOutcome::New) => return Ok(Bound::New),
            Some(BindOutcome::Existing(ws, agent)) => {
                return Ok(Bound::existing(owner, &ws, &agent));
            }
            None => {}
        }
        self.with(|c| {
            let n = c.execute_cached(
                "INSERT OR IGNORE INTO task_owners(endpoint, task_id, workspace_id, agent_id,
                   created_at) VALUES (?1, ?2, ?3, ?4, strftime('%s','now'))",
                params![endpoint, task_id, owner.workspace_id, owner.agent_id],
            )?;
            if n == 1 {
                return Ok(Bound::New);
            }
            let same: Option<i64> = c
                .query_row_cached(
                    "SELECT 1 FROM task_owners WHERE endpoint = ?1 AND task_id = ?2
                       AND workspace_id = ?3 AND agent_id = ?4",
                    params![endpoint, task_id, owner.workspace_id, owner.agent_id],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(if same.is_some() {
                Bound::Already
            } else {
                Bound::Other
            })
        })
    }

    /// The owner of a task, if the gateway knows it (a binding still queued included).
    pub fn task_owner(&self, endpoint: &str, task_id: &str) -> Result<Option<Owner>, StoreError> {
        if let Some((workspace_id, agent_id)) = self.pending_owner(endpoint, task_id) {
            return Ok(Some(Owner {
                workspace_id,
                agent_id,
            }));
        }
        self.with(|c| {
            Ok(c.query_row_cached(
                "SELECT workspace_id, agent_id FROM task_owners
                 WHERE endpoint = ?1 AND task_id = ?2",
                params![endpoint, task_id],
                |r| {
                    Ok(Owner {
                        workspace_id: r.get(0)?,
                        agent_id: r.get(1)?,
                    })
                },
            )
            .optional()?)
        })
    }

    /// A page of the owner's task ids at `endpoint`, oldest binding first, after binding
    /// sequence `after`: `(seq, task_id)` pairs.
    pub fn owned_tasks(
        &self,
        endpoint: &str,
        owner: &Owner,
        after: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        // Lists read committed rows: let the writer commit journaled bindings first.
        if self.has_pending_bindings() {
            self.flush_audit();
        }
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT seq, task_id FROM task_owners WHERE workspace_id = ?1 AND agent_id = ?2
                   AND endpoint = ?3 AND seq > ?4 ORDER BY seq LIMIT ?5",
            )?;
            let rows = st.query_map(
                params![owner.workspace_id, owner.agent_id, endpoint, after, limit],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Removes a task's binding (and its record).
    pub fn forget_task(&self, endpoint: &str, task_id: &str) -> Result<(), StoreError> {
        // A binding still queued would come back after the delete: commit it first.
        if self.has_pending_bindings() {
            self.flush_audit();
        }
        self.with(|c| {
            c.execute_cached(
                "DELETE FROM task_owners WHERE endpoint = ?1 AND task_id = ?2",
                params![endpoint, task_id],
            )?;
            Ok(())
        })
    }
}
