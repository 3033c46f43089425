//! Reads of the hop history for the operator console: newest-first keyset pages with filters,
//! the records of one trace, an agent's last refusal and its latency samples.
//!
//! Every query walks an index in `seq` order and stops at its `LIMIT` (migration
//! [`MIGRATION`]), so a page costs the same with 100 or 100,000 audit rows (measured in
//! docs/console.md, "Speed").

use rusqlite::{Connection, OptionalExtension, params};

use super::{AuditRecord, Store, StoreError};

/// Indexes for the console's pages: by workspace, by workspace and agent, by decision (each
/// ending in `seq` for keyset paging) and by trace id (a hop's records).
pub const MIGRATION: &str = r#"
    CREATE INDEX audit_ws_seq ON audit(workspace_id, seq);
    CREATE INDEX audit_ws_target_seq ON audit(workspace_id, target, seq);
    CREATE INDEX audit_decision_seq ON audit(decision, seq);
    CREATE INDEX audit_trace ON audit(trace_id);
    DROP INDEX IF EXISTS audit_ws_target;
"#;

/// Migration 13 (issue 11): `audit_intent_of` holds only the rows that complete an intent.
/// Intent rows (half of the log) have no `intent_of` and no query looks them up by it: the
/// only use is `c.intent_of = audit.seq`, which a partial index `WHERE intent_of IS NOT NULL`
/// serves (SQLite uses it for any comparison on the column). One index insert less per hop.
pub const MIGRATION_INTENT_OF: &str = r#"
    DROP INDEX IF EXISTS audit_intent_of;
    CREATE INDEX audit_intent_of ON audit(intent_of) WHERE intent_of IS NOT NULL;
"#;

/// Migration 14 (issue 11): the audit table rebuilt without `AUTOINCREMENT`, and the decision
/// index without the `allowed` rows. Per audit row this saves the `sqlite_sequence` lookup and
/// update (and that page's WAL frame in every commit) and, for the rows most hops write (the
/// intent and an `allowed` completion), one index insert.
///
/// Sequence numbers are still never reused. Without `AUTOINCREMENT` SQLite gives a new row the
/// largest rowid in the table plus one; audit rows are never deleted (the `audit_no_delete`
/// trigger, there since migration 1, is created again here; since migration 18 it lets the
/// audit retention delete the oldest rows, never the newest: `super::retention`), so that
/// largest rowid never goes down and a number once given is never given again. (A rolled-back batch gives its numbers
/// back either way, `AUTOINCREMENT` or not: those rows never existed, and the writer forgets
/// the intent links it handed out.) What `AUTOINCREMENT` covered beyond that, rows deleted
/// past the trigger (the file edited outside the gateway), is kept as well: if `sqlite_sequence`
/// is above the highest row, a `sequence-gap` row takes that number, so later rows still
/// follow every number ever given, and the edit stays on record. Rows keep their `seq`; the
/// copy costs one pass over the table, once, when a gateway of this version first opens it.
///
/// The decision index (`audit_decision_seq`) holds only rows whose decision is not `allowed`:
/// the console's decision filter looks for the rare ones (`refused`, `held`, `killed`, ...)
/// and adds `decision <> 'allowed'` to its query for them (see `filter_sql`), which is what
/// lets SQLite use the partial index; `allowed` rows, most of the log, are found walking the
/// table (or a workspace index) in `seq` order.
pub const MIGRATION_AUDIT_REBUILD: &str = r#"
    CREATE TABLE audit_rebuilt (
        seq INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        workspace_id TEXT,
        key_id TEXT,
        target TEXT,
        operation TEXT,
        client_method TEXT,
        peer_method TEXT,
        client_version TEXT,
        client_binding TEXT,
        peer_version TEXT,
        peer_binding TEXT,
        decision TEXT NOT NULL,
        status INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        error_code TEXT,
        phase TEXT,
        intent_of INTEGER,
        task_id TEXT,
        governance TEXT,
        signature_trust TEXT
    );
    INSERT INTO audit_rebuilt(seq, ts, trace_id, workspace_id, key_id, target, operation,
        client_method, peer_method, client_version, client_binding, peer_version, peer_binding,
        decision, status, latency_ms, error_code, phase, intent_of, task_id, governance,
        signature_trust)
      SELECT seq, ts, trace_id, workspace_id, key_id, target, operation, client_method,
        peer_method, client_version, client_binding, peer_version, peer_binding, decision,
        status, latency_ms, error_code, phase, intent_of, task_id, governance, signature_trust
      FROM audit ORDER BY seq;
    INSERT INTO audit_rebuilt(seq, ts, trace_id, operation, decision, status, latency_ms)
      SELECT s.seq, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), '', 'audit:sequence-gap',
        'sequence-gap', 0, 0
      FROM sqlite_sequence s
      WHERE s.name = 'audit' AND s.seq > (SELECT coalesce(max(seq), 0) FROM audit);
    DROP TABLE audit;
    ALTER TABLE audit_rebuilt RENAME TO audit;
    CREATE INDEX audit_ws_seq ON audit(workspace_id, seq);
    CREATE INDEX audit_ws_target_seq ON audit(workspace_id, target, seq);
    CREATE INDEX audit_decision_seq ON audit(decision, seq) WHERE decision <> 'allowed';
    CREATE INDEX audit_trace ON audit(trace_id);
    CREATE INDEX audit_intent_of ON audit(intent_of) WHERE intent_of IS NOT NULL;
    CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
"#;

/// The columns [`row_record`] reads, in its order.
pub(super) const RECORD_COLUMNS: &str = "seq, ts, trace_id, workspace_id, key_id, target,
    operation, client_method, peer_method, client_version, client_binding, peer_version,
    peer_binding, decision, status, latency_ms, error_code, task_id, intent_of,
    CASE WHEN phase = 'intent' THEN 'incomplete' END, governance, signature_trust, peer_us,
    overhead_us";

/// One audit row selected with [`RECORD_COLUMNS`].
pub(super) fn row_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<AuditRecord> {
    Ok(AuditRecord {
        seq: r.get(0)?,
        ts: r.get(1)?,
        trace_id: r.get(2)?,
        workspace_id: r.get(3)?,
        key_id: r.get(4)?,
        target: r.get(5)?,
        operation: r.get(6)?,
        client_method: r.get(7)?,
        peer_method: r.get(8)?,
        client_version: r.get(9)?,
        client_binding: r.get(10)?,
        peer_version: r.get(11)?,
        peer_binding: r.get(12)?,
        decision: r.get(13)?,
        status: r.get(14)?,
        latency_ms: r.get(15)?,
        error_code: r.get(16)?,
        task_id: r.get(17)?,
        intent_seq: r.get(18)?,
        outcome: r.get(19)?,
        governance: r
            .get::<_, Option<String>>(20)?
            .and_then(|g| serde_json::from_str(&g).ok()),
        signature_trust: r.get(21)?,
        peer_us: r.get(22)?,
        overhead_us: r.get(23)?,
    })
}

/// Filters of a hop page; `None` (or empty) matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HopFilter {
    /// Workspace id.
    pub workspace: Option<String>,
    /// Target agent id.
    pub agent: Option<String>,
    /// Decision (`allowed`, `refused`, `held`, `killed`, ...).
    pub decision: Option<String>,
    /// Records at or after this RFC 3339 time (a prefix such as `2026-01-02T03:04` works).
    pub since: Option<String>,
    /// Records before this RFC 3339 time (prefix).
    pub until: Option<String>,
}

/// The WHERE clause of `f` (only its set filters, so SQLite picks the index that serves them)
/// and its parameters, numbered from ?1.
fn filter_sql(f: &HopFilter) -> (String, Vec<String>) {
    let mut clause = String::from(
        "NOT (phase IS 'intent' AND EXISTS (SELECT 1 FROM audit c WHERE c.intent_of = audit.seq))",
    );
    let mut args = Vec::new();
    for (value, cond) in [
        (&f.workspace, "workspace_id ="),
        (&f.agent, "target ="),
        (&f.decision, "decision ="),
        (&f.since, "ts >="),
        (&f.until, "ts <"),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            args.push(v.to_owned());
            clause.push_str(&format!(" AND {cond} ?{}", args.len()));
        }
    }
    // The decision index holds no `allowed` rows (`MIGRATION_AUDIT_REBUILD`): SQLite uses it
    // only when the query says so in these words.
    if f.decision
        .as_deref()
        .is_some_and(|d| !d.is_empty() && d != "allowed")
    {
        clause.push_str(" AND decision <> 'allowed'");
    }
    (clause, args)
}

impl Store {
    /// One hop per row (as [`Store::audit`]), newest first, with `seq < before` (`None`: from the
    /// newest), at most `limit`.
    pub fn hop_page(
        &self,
        f: &HopFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush_audit();
        self.with(|c| query(c, f, "<", before.unwrap_or(i64::MAX), limit))
    }

    /// Hops newer than `after`, newest first, at most `limit` (the console's live updates).
    pub fn hops_after(
        &self,
        f: &HopFilter,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush_audit();
        self.with(|c| query(c, f, ">", after, limit))
    }

    /// One audit row by its sequence number.
    pub fn audit_record(&self, seq: i64) -> Result<Option<AuditRecord>, StoreError> {
        self.flush_audit();
        let sql = format!("SELECT {RECORD_COLUMNS} FROM audit WHERE seq = ?1");
        self.with(|c| Ok(c.query_row(&sql, [seq], row_record).optional()?))
    }

    /// Every audit row of a trace (intent and final records, stream evidence), oldest first.
    pub fn trace_records(&self, trace_id: &str) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush_audit();
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM audit WHERE trace_id = ?1 ORDER BY seq LIMIT 100"
        );
        self.with(|c| {
            let mut st = c.prepare_cached(&sql)?;
            let rows = st.query_map([trace_id], row_record)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// The newest refused hop of an agent, if any.
    pub fn last_refusal(&self, ws: &str, agent: &str) -> Result<Option<AuditRecord>, StoreError> {
        let f = HopFilter {
            workspace: Some(ws.into()),
            agent: Some(agent.into()),
            decision: Some("refused".into()),
            ..HopFilter::default()
        };
        Ok(self.hop_page(&f, None, 1)?.into_iter().next())
    }

    /// `(ts, latency_ms)` of an agent's hops at or after `since` (RFC 3339), newest first, at
    /// most `limit`.
    pub fn latency_samples(
        &self,
        ws: &str,
        agent: &str,
        since: &str,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        self.flush_audit();
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT ts, latency_ms FROM audit WHERE workspace_id = ?1 AND target = ?2
                   AND ts >= ?3 AND phase IS NOT 'intent' ORDER BY seq DESC LIMIT ?4",
            )?;
            let rows = st.query_map(params![ws, agent, since, limit], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }
}

impl Store {
    /// SQLite's plan for a [`Store::hop_page`] query with `f` (one line per step), for tests
    /// that check the pages use an index.
    #[doc(hidden)]
    pub fn hop_page_plan(&self, f: &HopFilter) -> Result<Vec<String>, StoreError> {
        let (clause, args) = filter_sql(f);
        let n = args.len();
        let sql = format!(
            "EXPLAIN QUERY PLAN SELECT {RECORD_COLUMNS} FROM audit WHERE {clause} AND seq < ?{} \
             ORDER BY seq DESC LIMIT ?{}",
            n + 1,
            n + 2
        );
        self.with(|c| {
            let mut st = c.prepare(&sql)?;
            let mut values: Vec<rusqlite::types::Value> =
                args.into_iter().map(Into::into).collect();
            values.push(i64::MAX.into());
            values.push(50i64.into());
            let rows = st.query_map(rusqlite::params_from_iter(values), |r| {
                r.get::<_, String>(3)
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }
}

/// Hops matching `f` with `seq {cmp} bound`, newest first, at most `limit` (1..=1000).
fn query(
    c: &Connection,
    f: &HopFilter,
    cmp: &str,
    bound: i64,
    limit: i64,
) -> Result<Vec<AuditRecord>, StoreError> {
    let (clause, args) = filter_sql(f);
    let n = args.len();
    let sql = format!(
        "SELECT {RECORD_COLUMNS} FROM audit WHERE {clause} AND seq {cmp} ?{} \
         ORDER BY seq DESC LIMIT ?{}",
        n + 1,
        n + 2
    );
    let mut st = c.prepare_cached(&sql)?;
    let mut values: Vec<rusqlite::types::Value> = args.into_iter().map(Into::into).collect();
    values.push(bound.into());
    values.push(limit.clamp(1, 1000).into());
    let rows = st.query_map(rusqlite::params_from_iter(values), row_record)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}
