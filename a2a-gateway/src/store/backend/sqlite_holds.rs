//! Approvals and kills on the embedded SQLite file (`gov_approvals`, `gov_approval_requests`,
//! `gov_kills`): what the gateway, the console and the admin CLI read and write them through.
//!
//! One process serves the file: this handle's own decisions and kills wake its waiters at once
//! (clones share one set of waiters: make one handle per store and clone it); a change made by
//! another process (the admin CLI) is read at the next [`POLL`].

use std::sync::Arc;
use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde_json::Value;
use tokio::sync::broadcast;

use super::holds::{self, Kills, POLL, Poll, Signal};
use super::rows::APPROVAL_COLS as COLS;
use super::rows::{Approval, ApprovalSummary, Kill, MAX_PAGE};
use super::{HoldStore, sqlite::constraint};
use crate::store::{Store, StoreError};

/// Approvals and kills on a SQLite [`Store`] (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct SqliteHolds {
    store: Store,
    signals: broadcast::Sender<Signal>,
}

impl SqliteHolds {
    /// Approvals and kills in `store`'s database.
    pub fn new(store: Store) -> SqliteHolds {
        SqliteHolds {
            store,
            signals: broadcast::channel(1024).0,
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A subscription to this handle's signals, and how long its waiters sleep between reads.
    pub(super) fn signals(&self) -> (broadcast::Receiver<Signal>, Poll) {
        (self.signals.subscribe(), Arc::new(|| POLL))
    }

    fn tell(&self, s: Signal) {
        let _ = self.signals.send(s);
    }

    fn exists(&self, workspace: &str) -> Result<(), StoreError> {
        match self.store.workspace(workspace)? {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound(format!("workspace {workspace}"))),
        }
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn json_list(r: &rusqlite::Row<'_>, i: usize) -> Vec<String> {
    r.get::<_, String>(i)
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default()
}

/// An [`ApprovalSummary`] from a SQLite row of [`COLS`].
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

fn kill_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Kill> {
    Ok(Kill {
        workspace_id: r.get(0)?,
        kind: r.get(1)?,
        id: r.get(2)?,
        agent_id: r.get(3)?,
        reason: r.get(4)?,
        killed_at: r.get(5)?,
    })
}

impl HoldStore for SqliteHolds {
    async fn create_approval(&self, a: &Approval) -> Result<(), StoreError> {
        let s = &a.summary;
        // A missing workspace is refused as on PostgreSQL (its foreign key), before the insert.
        self.exists(&s.workspace_id)?;
        self.store
            .with(|c| {
                let tx = c.unchecked_transaction()?;
                tx.execute(
                    &format!(
                        "INSERT INTO gov_approvals({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,
                           ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
                    ),
                    params![
                        s.id,
                        s.workspace_id,
                        s.agent_id,
                        s.caller_version,
                        s.preview.to_string(),
                        s.context_id,
                        s.state,
                        s.rule,
                        s.approver,
                        s.reason,
                        s.peer_task_id,
                        s.created_at,
                        s.expires_at,
                        serde_json::to_string(&s.chain).unwrap_or_else(|_| "[]".into()),
                        serde_json::to_string(&s.extensions).unwrap_or_else(|_| "[]".into()),
                        s.key_id,
                        s.refusal.as_ref().map(Value::to_string)
                    ],
                )?;
                tx.execute(
                    "INSERT INTO gov_approval_requests(id, params) VALUES (?1, ?2)",
                    params![s.id, a.params],
                )?;
                tx.commit()?;
                Ok(())
            })
            .map_err(|e| constraint(e, &format!("approval {}", s.id)))
    }

    async fn approval(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError> {
        let Some(summary) = self.approval_summary(workspace, id).await? else {
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

    async fn approval_summary(
        &self,
        workspace: &str,
        id: &str,
    ) -> Result<Option<ApprovalSummary>, StoreError> {
        self.store.with(|c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1 AND id = ?2"
            ))?
            .query_row(params![workspace, id], summary_row)
            .optional()?)
        })
    }

    async fn approval_count(&self, workspace: &str, state: &str) -> Result<u64, StoreError> {
        self.store.with(|c| {
            let n: i64 = c
                .prepare_cached(
                    "SELECT COUNT(*) FROM gov_approvals WHERE workspace_id = ?1 AND state = ?2",
                )?
                .query_row(params![workspace, state], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    async fn pending_by_workspace(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT w.id, (SELECT COUNT(*) FROM gov_approvals a
                   WHERE a.workspace_id = w.id AND a.state = 'pending')
                 FROM workspaces w ORDER BY w.id",
            )?;
            let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
            let mut out = Vec::new();
            for row in rows {
                let (ws, n) = row?;
                out.push((ws, u64::try_from(n).unwrap_or(0)));
            }
            Ok(out)
        })
    }

    async fn summaries(
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
                        "SELECT created_at, id FROM gov_approvals
                         WHERE workspace_id = ?1 AND id = ?2",
                    )?
                    .query_row(params![workspace, id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound(format!("approval {id}")))?,
                ),
            };
            let sql = format!(
                "SELECT {COLS} FROM gov_approvals WHERE workspace_id = ?1{}{}
                 ORDER BY created_at DESC, id DESC LIMIT ?5",
                if state.is_some() {
                    " AND state = ?2"
                } else {
                    " AND ?2 IS NULL"
                },
                if cursor.is_some() {
                    " AND (created_at, id) < (?3, ?4)"
                } else {
                    " AND ?3 IS NULL AND ?4 IS NULL"
                },
            );
            let (at, id) = cursor.unzip();
            let mut st = c.prepare_cached(&sql)?;
            let rows = st.query_map(params![workspace, state, at, id, limit], summary_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    async fn expire_due(&self, workspace: &str, now: i64) -> Result<u64, StoreError> {
        let n = self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = 'expired'
                 WHERE workspace_id = ?1 AND state = 'pending' AND expires_at <= ?2",
                params![workspace, now],
            )?)
        })?;
        if n > 0 {
            self.tell(Signal::Reread);
        }
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        let moved = self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = ?3, approver = ?4, reason = ?5
                 WHERE workspace_id = ?1 AND id = ?2 AND state = 'pending'",
                params![workspace, id, state, approver, reason],
            )? > 0)
        })?;
        if moved {
            self.tell(Signal::Decided(id.to_owned()));
        }
        Ok(moved)
    }

    async fn set_peer_task(&self, workspace: &str, id: &str, task: &str) -> Result<(), StoreError> {
        self.store.with(|c| {
            c.execute(
                "UPDATE gov_approvals SET peer_task_id = ?3 WHERE workspace_id = ?1 AND id = ?2",
                params![workspace, id, task],
            )?;
            Ok(())
        })
    }

    async fn fail(&self, workspace: &str, id: &str, refusal: &Value) -> Result<bool, StoreError> {
        let moved = self.store.with(|c| {
            Ok(c.execute(
                "UPDATE gov_approvals SET state = 'failed', refusal = ?3
                 WHERE workspace_id = ?1 AND id = ?2 AND state = 'approved'
                   AND peer_task_id IS NULL",
                params![workspace, id, refusal.to_string()],
            )? > 0)
        })?;
        if moved {
            self.tell(Signal::Decided(id.to_owned()));
        }
        Ok(moved)
    }

    async fn decision(
        &self,
        workspace: &str,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<ApprovalSummary>, StoreError> {
        let (signals, poll) = self.signals();
        holds::decision(signals, poll, id, timeout, || {
            self.approval_summary(workspace, id)
        })
        .await
    }

    async fn kills(&self, workspace: &str) -> Result<Vec<Kill>, StoreError> {
        self.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT workspace_id, kind, id, agent_id, reason, killed_at FROM gov_kills
                 WHERE workspace_id = ?1 ORDER BY killed_at",
            )?;
            let rows = st.query_map(params![workspace], kill_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    async fn kills_since(&self, since: i64) -> Result<Vec<Kill>, StoreError> {
        self.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT workspace_id, kind, id, agent_id, reason, killed_at FROM gov_kills
                 WHERE killed_at >= ?1 ORDER BY killed_at",
            )?;
            let rows = st.query_map(params![since], kill_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    async fn add_kill(&self, kill: &Kill) -> Result<(), StoreError> {
        self.exists(&kill.workspace_id)?;
        let at = if kill.killed_at == 0 {
            now()
        } else {
            kill.killed_at
        };
        self.store.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO gov_kills(workspace_id, kind, id, agent_id, reason,
                   killed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    kill.workspace_id,
                    kill.kind,
                    kill.id,
                    kill.agent_id,
                    kill.reason,
                    at
                ],
            )?;
            Ok(())
        })?;
        self.tell(Signal::Killed);
        Ok(())
    }

    async fn lift_kill(&self, workspace: &str, kind: &str, id: &str) -> Result<bool, StoreError> {
        let n = self.store.with(|c| {
            Ok(c.execute(
                "DELETE FROM gov_kills WHERE workspace_id = ?1 AND kind = ?2 AND id = ?3",
                params![workspace, kind, id],
            )?)
        })?;
        Ok(n > 0)
    }

    async fn kill_events(&self) -> Result<Kills<SqliteHolds>, StoreError> {
        let (signals, poll) = self.signals();
        Kills::start(self.clone(), signals, poll).await
    }
}
