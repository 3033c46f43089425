//! The audit log on the embedded SQLite file: today's [`Store`] methods and group-commit
//! writer thread, called in place (`store::audit`, `audit_writer`, `hop_page`, `retention`),
//! so nothing changes for the SQLite gateway. The admin audit's two statements are here too
//! ([`Store::append_admin_audit`], [`Store::admin_audit`]), for `admin::audit` and the trait.
//!
//! "Durable" is what the serving gateway relies on today: with the intent journal open
//! ([`Store::open_intent_journal`]), the record's journal line is written before the call
//! returns (recovered on the next start); without it (the admin CLI, tests), the call waits
//! for the writer's batch to commit.

use rusqlite::params;
use serde_json::Value;

use super::AuditStore;
use super::pg_audit_read::hop_filter;
use super::rows::{AdminAuditRecord, AdminIdentity};
use crate::store::{
    AuditRecord, AuditRetention, CachedExt, HopFilter, IntentRef, RetentionState, Store,
    StoreError, Trimmed,
};

/// The audit log on a SQLite [`Store`] (see the module doc). Cheap to clone.
#[derive(Clone)]
pub struct SqliteAudit {
    store: Store,
}

impl SqliteAudit {
    /// The audit log of `store`. In the serving process, make it after opening the intent
    /// journal ([`Store::open_intent_journal`]).
    pub fn new(store: Store) -> SqliteAudit {
        SqliteAudit { store }
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.store
    }
}

impl AuditStore for SqliteAudit {
    async fn intent(&self, rec: &AuditRecord) -> Result<IntentRef, StoreError> {
        self.store.append_intent_committed(rec).await
    }

    fn enqueue(&self, rec: &AuditRecord, intent: Option<&IntentRef>) -> Result<(), StoreError> {
        self.store.append_audit_queued(rec, intent)
    }

    async fn durable(
        &self,
        rec: &AuditRecord,
        intent: Option<&IntentRef>,
    ) -> Result<(), StoreError> {
        // With the journal open the line is written before this returns.
        self.store.append_audit_queued(rec, intent)?;
        if !self.store.has_intent_journal() {
            self.store.audit.flushed().await;
        }
        Ok(())
    }

    async fn flushed(&self) {
        self.store.audit.flushed().await;
    }

    async fn append_admin(&self, rec: &AdminAuditRecord) -> Result<i64, StoreError> {
        self.store.append_admin_audit(rec)
    }

    async fn records(
        &self,
        workspace_id: Option<&str>,
        target: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.store.audit(workspace_id, target, after, limit)
    }

    async fn hop_page(
        &self,
        f: &HopFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.store.hop_page(f, before, limit)
    }

    async fn hops_after(
        &self,
        f: &HopFilter,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.store.hops_after(f, after, limit)
    }

    async fn hop_count(&self, f: &HopFilter) -> Result<u64, StoreError> {
        self.store.flush_audit();
        let (clause, args) = hop_filter(f, '?', "");
        let sql = format!("SELECT COUNT(*) FROM audit WHERE {clause}");
        let n: i64 = self.store.with(|c| {
            Ok(c.prepare_cached(&sql)?
                .query_row(rusqlite::params_from_iter(args.iter()), |r| r.get(0))?)
        })?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn record(&self, seq: i64) -> Result<Option<AuditRecord>, StoreError> {
        self.store.audit_record(seq)
    }

    async fn trace_records(&self, trace_id: &str) -> Result<Vec<AuditRecord>, StoreError> {
        self.store.trace_records(trace_id)
    }

    async fn latency_samples(
        &self,
        ws: &str,
        agent: &str,
        since: &str,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        self.store.latency_samples(ws, agent, since, limit)
    }

    async fn admin_records(
        &self,
        workspace_id: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AdminAuditRecord>, StoreError> {
        self.store.admin_audit(workspace_id, after, limit)
    }

    async fn trim(&self, rule: &AuditRetention) -> Result<Trimmed, StoreError> {
        self.store.trim_audit(rule)
    }

    async fn retention_state(&self) -> Result<RetentionState, StoreError> {
        self.store.audit_retention_state()
    }

    async fn audit_bytes(&self) -> Result<u64, StoreError> {
        self.store.flush_audit();
        self.store.audit_bytes()
    }
}

/// The admin audit's two statements (`admin::audit` writes and reads the rows through them).
impl Store {
    /// Appends an admin audit row; returns its sequence number.
    pub fn append_admin_audit(&self, rec: &AdminAuditRecord) -> Result<i64, StoreError> {
        let ts = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        self.with(|c| {
            c.execute_cached(
                "INSERT INTO admin_audit(ts, actor_kind, actor_subject, actor_remote, action,
                   workspace_id, status, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    ts,
                    rec.actor.kind,
                    rec.actor.subject,
                    rec.actor.remote,
                    rec.action,
                    rec.workspace_id,
                    rec.status,
                    rec.detail.to_string()
                ],
            )?;
            Ok(c.last_insert_rowid())
        })
    }

    /// Admin audit rows after `after`, oldest first, optionally of one workspace.
    pub fn admin_audit(
        &self,
        workspace_id: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AdminAuditRecord>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT seq, ts, actor_kind, actor_subject, actor_remote, action, workspace_id,
                   status, detail FROM admin_audit
                 WHERE (?1 IS NULL OR workspace_id = ?1) AND seq > ?2 ORDER BY seq LIMIT ?3",
            )?;
            let rows = st.query_map(params![workspace_id, after, limit], |r| {
                Ok(AdminAuditRecord {
                    seq: r.get(0)?,
                    ts: r.get(1)?,
                    actor: AdminIdentity {
                        kind: r.get(2)?,
                        subject: r.get(3)?,
                        remote: r.get(4)?,
                    },
                    action: r.get(5)?,
                    workspace_id: r.get(6)?,
                    status: r.get(7)?,
                    detail: serde_json::from_str(&r.get::<_, String>(8)?).unwrap_or(Value::Null),
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }
}
