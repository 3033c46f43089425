//! Approvals and kills on PostgreSQL, shared by replicas (`gov_approvals`,
//! `gov_approval_requests`, `gov_kills` of `pg_schema`), with the statements and refusals of
//! the SQLite file's (`sqlite_holds`).
//!
//! Triggers (migration 4) raise a notification when an approval's state changes (channel
//! [`APPROVALS_CHANNEL`], payload the approval id) and when a kill is recorded
//! ([`KILLS_CHANNEL`]). Each [`PgHolds`] listens on both with a connection of its own and
//! wakes its waiters ([`HoldStore::decision`], [`HoldStore::kill_events`]); after each
//! (re)connection it tells them to re-read (notifications sent meanwhile are lost), and while
//! the listener is away they re-read every [`POLL`] (every [`IDLE_POLL`] while it listens, a
//! safety net only). A decision is one `UPDATE … WHERE state = 'pending'`: of two replicas
//! deciding one approval at once exactly one moves it.

use std::sync::{Arc, Weak};
use std::time::Duration;

use a2a_pg::tokio_postgres::Row;
use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::{Event, Listener, Pool, PoolOptions};
use serde_json::Value;
use tokio::sync::broadcast;

use super::HoldStore;
use super::holds::{self, APPROVALS_CHANNEL, KILLS_CHANNEL, Kills, POLL, Poll, Signal};
use super::pg::refused;
use super::rows::APPROVAL_COLS as COLS;
use super::rows::{Approval, ApprovalSummary, Kill, MAX_PAGE};
use crate::store::StoreError;
use crate::store::pg_schema::{COMPONENT, PG_MIGRATIONS};

/// How often waiters re-read while the listener is connected (notifications wake them first).
pub const IDLE_POLL: Duration = Duration::from_secs(30);

/// How often a lost notification connection is retried.
const RETRY: Duration = Duration::from_millis(500);

/// Approvals and kills on PostgreSQL (see the module doc). Cheap to clone; the clones share
/// one pool and listener.
#[derive(Clone)]
pub struct PgHolds {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    listener: Listener,
    signals: broadcast::Sender<Signal>,
    forward: tokio::task::JoinHandle<()>,
    /// Waits that re-read on the short [`POLL`] because the listener was away.
    polls: std::sync::atomic::AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.forward.abort();
    }
}

fn json_list(r: &Row, i: usize) -> Vec<String> {
    serde_json::from_str(r.get::<_, &str>(i)).unwrap_or_default()
}

fn summary_of(r: &Row) -> ApprovalSummary {
    ApprovalSummary {
        id: r.get(0),
        workspace_id: r.get(1),
        agent_id: r.get(2),
        caller_version: r.get(3),
        preview: serde_json::from_str(r.get::<_, &str>(4)).unwrap_or(Value::Null),
        context_id: r.get(5),
        state: r.get(6),
        rule: r.get(7),
        approver: r.get(8),
        reason: r.get(9),
        peer_task_id: r.get(10),
        created_at: r.get(11),
        expires_at: r.get(12),
        chain: json_list(r, 13),
        extensions: json_list(r, 14),
        key_id: r.get(15),
        refusal: r
            .get::<_, Option<&str>>(16)
            .and_then(|c| serde_json::from_str(c).ok()),
    }
}

fn kill_of(r: &Row) -> Kill {
    Kill {
        workspace_id: r.get(0),
        kind: r.get(1),
        id: r.get(2),
        agent_id: r.get(3),
        reason: r.get(4),
        killed_at: r.get(5),
    }
}

const KILL: &str = "SELECT workspace_id, kind, id, agent_id, reason, killed_at FROM gov_kills";

impl PgHolds {
    /// Connects to the database at `url` (`postgres://…`), applies the gateway's migrations
    /// (once across replicas) and starts listening for decisions and kills.
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<PgHolds, StoreError> {
        let pool = a2a_pg::pool(url, opts)?;
        {
            let mut c = pool.get().await?;
            a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
        }
        PgHolds::on(pool, a2a_pg::pg_config(url, opts)?)
    }

    /// On a migrated database's `pool`, listening with the connection settings `config`.
    pub(super) fn on(
        pool: Pool,
        config: a2a_pg::tokio_postgres::Config,
    ) -> Result<PgHolds, StoreError> {
        let listener = Listener::start(config, &[APPROVALS_CHANNEL, KILLS_CHANNEL], RETRY)?;
        let signals = broadcast::channel(1024).0;
        let mut events = listener.subscribe();
        let out = signals.clone();
        let forward = tokio::spawn(async move {
            loop {
                let s = match events.recv().await {
                    Ok(Event::Notification { channel, payload })
                        if channel == APPROVALS_CHANNEL =>
                    {
                        Signal::Decided(payload)
                    }
                    Ok(Event::Notification { .. }) => Signal::Killed,
                    // Notifications may have been missed: while away, or dropped for lag.
                    Ok(Event::Connected) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        Signal::Reread
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let _ = out.send(s);
            }
        });
        Ok(PgHolds {
            inner: Arc::new(Inner {
                pool,
                listener,
                signals,
                forward,
                polls: Default::default(),
            }),
        })
    }

    /// Whether decisions and kills are heard by notification now (false: waiters re-read
    /// every [`POLL`]).
    pub fn listening(&self) -> bool {
        self.inner.listener.is_connected()
    }

    /// How many waits re-read on the short poll because the listener was away
    /// (`a2a_store_polls_total{listener="holds"}`).
    pub fn polls(&self) -> u64 {
        self.inner.polls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A subscription to the signals, and how long waiters sleep between reads.
    pub(super) fn signals(&self) -> (broadcast::Receiver<Signal>, Poll) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let poll: Poll = Arc::new(move || match weak.upgrade() {
            Some(i) if i.listener.is_connected() => IDLE_POLL,
            Some(i) => {
                i.polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                POLL
            }
            None => POLL,
        });
        (self.inner.signals.subscribe(), poll)
    }

    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.query(&st, params).await?)
    }

    async fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.execute(&st, params).await?)
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl HoldStore for PgHolds {
    async fn create_approval(&self, a: &Approval) -> Result<(), StoreError> {
        let s = &a.summary;
        let (what, missing) = (
            format!("approval {}", s.id),
            format!("workspace {}", s.workspace_id),
        );
        let chain = serde_json::to_string(&s.chain).unwrap_or_else(|_| "[]".into());
        let extensions = serde_json::to_string(&s.extensions).unwrap_or_else(|_| "[]".into());
        let (preview, refusal) = (
            s.preview.to_string(),
            s.refusal.as_ref().map(Value::to_string),
        );
        let mut c = self.inner.pool.get().await?;
        let tx = c.transaction().await?;
        tx.execute(
            &format!(
                "INSERT INTO gov_approvals({COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
                   $10, $11, $12, $13, $14, $15, $16, $17)"
            ),
            &[
                &s.id,
                &s.workspace_id,
                &s.agent_id,
                &s.caller_version,
                &preview,
                &s.context_id,
                &s.state,
                &s.rule,
                &s.approver,
                &s.reason,
                &s.peer_task_id,
                &s.created_at,
                &s.expires_at,
                &chain,
                &extensions,
                &s.key_id,
                &refusal,
            ],
        )
        .await
        .map_err(|e| refused(e, &what, &missing))?;
        tx.execute(
            "INSERT INTO gov_approval_requests(id, params) VALUES ($1, $2)",
            &[&s.id, &a.params],
        )
        .await
        .map_err(|e| refused(e, &what, &missing))?;
        tx.commit().await?;
        Ok(())
    }

    async fn approval(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError> {
        let Some(summary) = self.approval_summary(workspace, id).await? else {
            return Ok(None);
        };
        let rows = self
            .query(
                "SELECT params FROM gov_approval_requests WHERE id = $1",
                &[&id],
            )
            .await?;
        match rows.first() {
            Some(r) => Ok(Some(Approval {
                summary,
                params: r.get(0),
            })),
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
        let sql = format!("SELECT {COLS} FROM gov_approvals WHERE workspace_id = $1 AND id = $2");
        Ok(self
            .query(&sql, &[&workspace, &id])
            .await?
            .first()
            .map(summary_of))
    }

    async fn approval_count(&self, workspace: &str, state: &str) -> Result<u64, StoreError> {
        let rows = self
            .query(
                "SELECT COUNT(*) FROM gov_approvals WHERE workspace_id = $1 AND state = $2",
                &[&workspace, &state],
            )
            .await?;
        let n: i64 = rows.first().map_or(0, |r| r.get(0));
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn pending_by_workspace(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let rows = self
            .query(
                "SELECT w.id, (SELECT COUNT(*) FROM gov_approvals a
                   WHERE a.workspace_id = w.id AND a.state = 'pending')
                 FROM workspaces w ORDER BY w.id COLLATE \"C\"",
                &[],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), u64::try_from(r.get::<_, i64>(1)).unwrap_or(0)))
            .collect())
    }

    async fn summaries(
        &self,
        workspace: &str,
        state: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ApprovalSummary>, StoreError> {
        let limit = i64::from(limit.clamp(1, MAX_PAGE));
        let cursor: Option<(i64, String)> = match after {
            None => None,
            Some(id) => Some(
                self.query(
                    "SELECT created_at, id FROM gov_approvals WHERE workspace_id = $1 AND id = $2",
                    &[&workspace, &id],
                )
                .await?
                .first()
                .map(|r| (r.get(0), r.get(1)))
                .ok_or_else(|| StoreError::NotFound(format!("approval {id}")))?,
            ),
        };
        // Ids ordered byte-wise, as SQLite orders them (migration 4 indexes them so).
        let sql = format!(
            "SELECT {COLS} FROM gov_approvals WHERE workspace_id = $1{}{}
             ORDER BY created_at DESC, id COLLATE \"C\" DESC LIMIT $5",
            if state.is_some() {
                " AND state = $2"
            } else {
                " AND $2::text IS NULL"
            },
            if cursor.is_some() {
                " AND (created_at, id COLLATE \"C\") < ($3, $4::text COLLATE \"C\")"
            } else {
                " AND $3::bigint IS NULL AND $4::text IS NULL"
            },
        );
        let (at, id) = cursor.unzip();
        let rows = self
            .query(&sql, &[&workspace, &state, &at, &id, &limit])
            .await?;
        Ok(rows.iter().map(summary_of).collect())
    }

    async fn expire_due(&self, workspace: &str, now: i64) -> Result<u64, StoreError> {
        self.execute(
            "UPDATE gov_approvals SET state = 'expired'
             WHERE workspace_id = $1 AND state = 'pending' AND expires_at <= $2",
            &[&workspace, &now],
        )
        .await
    }

    async fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        let n = self
            .execute(
                "UPDATE gov_approvals SET state = $3, approver = $4, reason = $5
                 WHERE workspace_id = $1 AND id = $2 AND state = 'pending'",
                &[&workspace, &id, &state, &approver, &reason],
            )
            .await?;
        Ok(n > 0)
    }

    async fn set_peer_task(&self, workspace: &str, id: &str, task: &str) -> Result<(), StoreError> {
        self.execute(
            "UPDATE gov_approvals SET peer_task_id = $3 WHERE workspace_id = $1 AND id = $2",
            &[&workspace, &id, &task],
        )
        .await?;
        Ok(())
    }

    async fn fail(&self, workspace: &str, id: &str, refusal: &Value) -> Result<bool, StoreError> {
        let n = self
            .execute(
                "UPDATE gov_approvals SET state = 'failed', refusal = $3
                 WHERE workspace_id = $1 AND id = $2 AND state = 'approved'
                   AND peer_task_id IS NULL",
                &[&workspace, &id, &refusal.to_string()],
            )
            .await?;
        Ok(n > 0)
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
        let rows = self
            .query(
                &format!("{KILL} WHERE workspace_id = $1 ORDER BY killed_at"),
                &[&workspace],
            )
            .await?;
        Ok(rows.iter().map(kill_of).collect())
    }

    async fn kills_since(&self, since: i64) -> Result<Vec<Kill>, StoreError> {
        let rows = self
            .query(
                &format!("{KILL} WHERE killed_at >= $1 ORDER BY killed_at"),
                &[&since],
            )
            .await?;
        Ok(rows.iter().map(kill_of).collect())
    }

    async fn add_kill(&self, kill: &Kill) -> Result<(), StoreError> {
        let at = if kill.killed_at == 0 {
            now()
        } else {
            kill.killed_at
        };
        let missing = format!("workspace {}", kill.workspace_id);
        let c = self.inner.pool.get().await?;
        let st = c
            .prepare_cached(
                "INSERT INTO gov_kills(workspace_id, kind, id, agent_id, reason, killed_at)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            )
            .await?;
        c.execute(
            &st,
            &[
                &kill.workspace_id,
                &kill.kind,
                &kill.id,
                &kill.agent_id,
                &kill.reason,
                &at,
            ],
        )
        .await
        .map_err(|e| refused(e, &format!("kill {}", kill.id), &missing))?;
        Ok(())
    }

    async fn lift_kill(&self, workspace: &str, kind: &str, id: &str) -> Result<bool, StoreError> {
        let n = self
            .execute(
                "DELETE FROM gov_kills WHERE workspace_id = $1 AND kind = $2 AND id = $3",
                &[&workspace, &kind, &id],
            )
            .await?;
        Ok(n > 0)
    }

    async fn kill_events(&self) -> Result<Kills<PgHolds>, StoreError> {
        let (signals, poll) = self.signals();
        Kills::start(self.clone(), signals, poll).await
    }
}
