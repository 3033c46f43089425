//! [`ApprovalStore`] in the gateway's SQLite database: the approvals' facts in `gov_approvals`,
//! each held request in `gov_approval_requests` (migration 19). A count reads the index
//! `gov_approvals_queue(workspace_id, state, created_at, id)` alone; a list reads that index and
//! rows of facts (a few hundred bytes and the bounded preview each), never a request, so neither
//! grows with the held requests' size (docs/gateway.md, "Approval").

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::approval::{Approval, ApprovalStore, ApprovalSummary, MAX_PAGE};
use crate::{store::Store, store::StoreError};

/// [`ApprovalStore`] in the gateway's SQLite database.
#[derive(Clone)]
pub struct SqliteApprovals {
    store: Store,
}

impl SqliteApprovals {
    /// Approvals in `store`'s database.
    pub fn new(store: Store) -> SqliteApprovals {
        SqliteApprovals { store }
    }
}

/// The columns of an [`ApprovalSummary`], in [`summary_row`]'s order.
const COLS: &str = "id, workspace_id, agent_id, caller_version, preview, context_id, state, rule, approver, reason, peer_task_id, created_at, expires_at, chain, extensions, key_id, refusal";

fn json_list(r: &rusqlite::Row<'_>, i: usize) -> Vec<String> {
    r.get::<_, String>(i)
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default()
}

fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApprovalSummary> {
    let preview: String = r.get(4)?;
    Ok(ApprovalSummary {
        id: r.get(0)?,
        workspace_id: r.get(1)?,
        agent_id: r.get(2)?,
        caller_version: r.get(3)?,
        preview: serde_json::from_str(&preview).unwrap_or(Value::Null),
        context_id: r.get(5)?,
        state: r.get(6)?,
        rule: r.get(7)?,
        approver: r.get(8)?,
        reason: r.get(9)?,
        peer_task_id: r.get(10)?,
        created_at: r.get(11)?,
        expires_at: r.get(12)?,
        chain: json_list(r, 13),
        extensions: json_list(r, 14),
        key_id: r.get(15)?,
        refusal: r
            .get::<_, Option<String>>(16)?
            .and_then(|c| serde_json::from_str(&c).ok()),
    })
}

impl ApprovalStore for SqliteApprovals {
    fn create(&self, a: &Approval) -> Result<(), StoreError> {
        let s = &a.summary;
        self.store.with(|c| {
            let tx = c.unchecked_transaction()?;
            tx.execute(
                &format!("INSERT INTO gov_approvals({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"),
                params![s.id, s.workspace_id, s.agent_id, s.caller_version,
                    s.preview.to_string(), s.context_id, s.state, s.rule, s.approver, s.reason,
                    s.peer_task_id, s.created_at, s.expires_at,
                    serde_json::to_string(&s.chain).unwrap_or_else(|_| "[]".into()),
                    serde_json::to_string(&s.extensions).unwrap_or_else(|_| "[]".into()),
                    s.key_id, s.refusal.as_ref().map(Value::to_string)],
            )?;
            tx.execute(
                "INSERT INTO gov_approval_requests(id, params) VALUES (?1, ?2)",
                params![s.id, a.params],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn get(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError> {
        let Some(summary) = self.summary(workspace, id)? else {
            return Ok(None);
        };
        let params: Option<String> = self.store.with(|c| {
            Ok(c.query_row(
                "SELECT params FROM gov_approval_requests WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()?)
        })?;
        match params {
            Some(params) => Ok(Some(Approval { summary, params })),
            None => Err(StoreError::NotFound(format!(
                "the held request of approval {id}"
            ))),
        }
    }

    fn summary(&self, workspace: &str, id: &str) -> Result<Option<ApprovalSummary>, StoreError> {
        self.store.with(|c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1 AND id = ?2"
            ))?
            .query_row(params![workspace, id], summary_row)
            .optional()?)
        })
    }

    fn count(&self, workspace: &str, state: &str) -> Result<u64, StoreError> {
        self.store.with(|c| {
            let n: i64 = c
                .prepare_cached(
                    "SELECT COUNT(*) FROM gov_approvals WHERE workspace_id = ?1 AND state = ?2",
                )?
                .query_row(params![workspace, state], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    fn summaries(
        &self,
        workspace: &str,
        state: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ApprovalSummary>, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        self.store.with(|c| {
            // The keyset: the approvals older than `after`, or as old with a smaller id.
            let cursor: Option<(i64, String)> = match after {
                None => None,
                Some(id) => Some(
                    c.prepare_cached(
                        "SELECT created_at, id FROM gov_approvals WHERE workspace_id = ?1 AND id = ?2",
                    )?
                    .query_row(params![workspace, id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound(format!("approval {id}")))?,
                ),
            };
            let sql = format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1{}{}
                 ORDER BY created_at DESC, id DESC LIMIT ?5",
                if state.is_some() { " AND state = ?2" } else { " AND ?2 IS NULL" },
                if cursor.is_some() { " AND (created_at, id) < (?3, ?4)" } else { " AND ?3 IS NULL AND ?4 IS NULL" },
            );
            let (at, id) = cursor.unzip();
            let mut st = c.prepare_cached(&sql)?;
            let rows = st.query_map(params![workspace, state, at, id, limit], summary_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    fn expire_due(&self, workspace: &str, now: i64) -> Result<u64, StoreError> {
        self.store.with(|c| {
            let n = c.execute(
                "UPDATE gov_approvals SET state = 'expired'
                 WHERE workspace_id = ?1 AND state = 'pending' AND expires_at <= ?2",
                params![workspace, now],
            )?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = ?3, approver = ?4, reason = ?5
                 WHERE workspace_id = ?1 AND id = ?2 AND state = 'pending'",
                params![workspace, id, state, approver, reason],
            )? > 0)
        })
    }

    fn set_peer_task(&self, workspace: &str, id: &str, task: &str) -> Result<(), StoreError> {
        self.store.with(|c| {
            c.execute(
                "UPDATE gov_approvals SET peer_task_id = ?3 WHERE workspace_id = ?1 AND id = ?2",
                params![workspace, id, task],
            )?;
            Ok(())
        })
    }

    fn fail(&self, workspace: &str, id: &str, refusal: &Value) -> Result<bool, StoreError> {
        self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = 'failed', refusal = ?3
                 WHERE workspace_id = ?1 AND id = ?2 AND state = 'approved' AND peer_task_id IS NULL",
                params![workspace, id, refusal.to_string()],
            )? > 0)
        })
    }
}
