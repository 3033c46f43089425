//! The append-only audit log: intent and final records, the writer's journal hooks (task
//! bindings, idempotent sends), reads and export.

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::journal::{SendRow, TaskBinding};
use super::{AuditRecord, BindOutcome, CachedExt, IntentRef, Store, StoreError, hop_page};

impl Store {
    /// Appends an audit record; returns its sequence number. `rec.intent_seq` names the
    /// intent record this record completes.
    pub fn append_audit(&self, rec: &AuditRecord) -> Result<i64, StoreError> {
        self.insert_audit(rec, None)
    }

    /// Appends the intent record of a hop about to call its peer; returns its sequence
    /// number. Until a record naming it in `intent_seq` is appended, reads show it with
    /// `outcome = "incomplete"`.
    pub fn append_intent(&self, rec: &AuditRecord) -> Result<i64, StoreError> {
        self.insert_audit(rec, Some("intent"))
    }

    fn insert_audit(&self, rec: &AuditRecord, phase: Option<&str>) -> Result<i64, StoreError> {
        self.with(|c| insert_audit_row(c, rec, phase))
    }

    /// Writes the intent record of a hop through the group-commit writer; returns once the
    /// record survives the process (its batch committed, or its journal line written when
    /// [`Store::open_intent_journal`] was called), so before the peer is called.
    pub async fn append_intent_committed(
        &self,
        rec: &AuditRecord,
    ) -> Result<IntentRef, StoreError> {
        self.audit.intent(rec).await
    }

    /// Queues an audit record for the writer's next batch (readers of the log and
    /// [`Store::flush_audit`] wait for it); `intent` names the intent record it completes.
    /// With the intent journal open, the record is journaled before this returns: it survives
    /// the process (recovered on the next start), so call it before the hop's answer leaves.
    pub fn append_audit_queued(
        &self,
        rec: &AuditRecord,
        intent: Option<&IntentRef>,
    ) -> Result<(), StoreError> {
        self.audit.enqueue(rec, intent)
    }

    /// Binds a task to its owner through the intent journal when it is open (the binding is
    /// visible at once and committed in the writer's next batch); `None` without a journal.
    pub(crate) fn bind_journaled(
        &self,
        b: &TaskBinding,
    ) -> Result<Option<BindOutcome>, StoreError> {
        self.audit.bind(b, || {
            self.with(|c| {
                Ok(c.query_row_cached(
                    "SELECT workspace_id, agent_id FROM task_owners WHERE endpoint = ?1 AND task_id = ?2",
                    params![b.endpoint, b.task_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?)
            })
        })
    }

    /// The owner (workspace id, agent id) of a task bound through the journal and not yet
    /// committed.
    pub(crate) fn pending_owner(&self, endpoint: &str, task_id: &str) -> Option<(String, String)> {
        self.audit.pending_owner(endpoint, task_id)
    }

    /// Whether the intent journal is open (this is the serving process).
    pub(crate) fn has_intent_journal(&self) -> bool {
        self.audit.journaled()
    }

    /// The idempotent sends of this store held in memory (see `crate::hop::idempotency`).
    pub(crate) fn send_memory(&self) -> Arc<crate::store::sends_memory::SendMemory> {
        self.sends.clone()
    }

    /// Writes a completed send record through the intent journal (committed in the writer's
    /// next batch, then `committed` runs); `Ok(false)` without a journal. `sweep_before`:
    /// the batch first forgets the records created before that time.
    pub(crate) fn journal_send(
        &self,
        row: &SendRow,
        sweep_before: Option<i64>,
        committed: Box<dyn FnOnce() + Send>,
    ) -> Result<bool, StoreError> {
        self.audit.send_record(row, sweep_before, committed)
    }

    /// Whether journaled bindings wait for the writer's next batch.
    pub(crate) fn has_pending_bindings(&self) -> bool {
        self.audit.has_pending_bindings()
    }

    /// Blocks until every queued audit record has committed.
    pub fn flush_audit(&self) {
        self.audit.flush();
    }

    /// Reads audit records, oldest first, optionally filtered by workspace and target, after
    /// sequence number `after`. One record per hop: an intent record is shown only while no
    /// record completes it (then with `outcome = "incomplete"`).
    pub fn audit(
        &self,
        workspace_id: Option<&str>,
        target: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush_audit();
        self.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {} FROM audit
                 WHERE (?1 IS NULL OR workspace_id = ?1) AND (?2 IS NULL OR target = ?2) AND seq > ?3
                   AND NOT (phase IS 'intent'
                     AND EXISTS (SELECT 1 FROM audit c WHERE c.intent_of = audit.seq))
                 ORDER BY seq LIMIT ?4",
                hop_page::RECORD_COLUMNS
            ))?;
            let rows = st.query_map(
                params![workspace_id, target, after, limit],
                hop_page::row_record,
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Exports audit records as JSON lines (one object per line).
    pub fn export_audit_jsonl(
        &self,
        workspace_id: Option<&str>,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, StoreError> {
        self.export_audit_jsonl_after(workspace_id, 0, out)
    }

    /// Exports the audit records after sequence number `after` as JSON lines, oldest first
    /// (an export that continues the previous one: `after` = its last `seq`).
    pub fn export_audit_jsonl_after(
        &self,
        workspace_id: Option<&str>,
        mut after: i64,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, StoreError> {
        let mut n = 0;
        loop {
            let page = self.audit(workspace_id, None, after, 1000)?;
            if page.is_empty() {
                return Ok(n);
            }
            for rec in &page {
                let line =
                    serde_json::to_string(rec).map_err(|e| StoreError::Invalid(e.to_string()))?;
                writeln!(out, "{line}").map_err(|e| StoreError::Invalid(e.to_string()))?;
                after = rec.seq;
                n += 1;
            }
        }
    }
}

/// Serialises an audit record for the hop-history endpoint.
pub fn audit_to_value(rec: &AuditRecord) -> Value {
    serde_json::to_value(rec).unwrap_or(Value::Null)
}

/// Inserts one audit row on `c` (the store's connection or a transaction on it).
pub(crate) fn insert_audit_row(
    c: &Connection,
    rec: &AuditRecord,
    phase: Option<&str>,
) -> Result<i64, StoreError> {
    let intent_of = if phase.is_some() {
        None
    } else {
        rec.intent_seq
    };
    insert_audit_row_linked(c, rec, phase, intent_of, None)
}

/// [`insert_audit_row`] with the intent it completes given apart from the record, and for a
/// journaled intent its journal number.
pub(super) fn insert_audit_row_linked(
    c: &Connection,
    rec: &AuditRecord,
    phase: Option<&str>,
    intent_of: Option<i64>,
    journal: Option<u64>,
) -> Result<i64, StoreError> {
    let ts = if rec.ts.is_empty() {
        time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    } else {
        rec.ts.clone()
    };
    {
        c.execute_cached(
                "INSERT INTO audit(ts, trace_id, workspace_id, key_id, target, operation, client_method,
                   peer_method, client_version, client_binding, peer_version, peer_binding, decision,
                   status, latency_ms, error_code, phase, intent_of, task_id, governance,
                   signature_trust, journal, peer_us, overhead_us)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                   ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
                params![
                    ts,
                    rec.trace_id,
                    rec.workspace_id,
                    rec.key_id,
                    rec.target,
                    rec.operation,
                    rec.client_method,
                    rec.peer_method,
                    rec.client_version,
                    rec.client_binding,
                    rec.peer_version,
                    rec.peer_binding,
                    rec.decision,
                    rec.status,
                    rec.latency_ms,
                    rec.error_code,
                    phase,
                    intent_of,
                    rec.task_id,
                    rec.governance.as_ref().map(Value::to_string),
                    rec.signature_trust,
                    journal.and_then(|j| i64::try_from(j).ok()),
                    rec.peer_us,
                    rec.overhead_us
                ],
            )?;
        Ok(c.last_insert_rowid())
    }
}
