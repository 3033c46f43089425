//! The audit rows of a batch of the replica's group-commit writer (`pg_writer`): one
//! multi-row `INSERT … SELECT FROM unnest(…)` for all of them, which returns the intents'
//! sequence numbers when the batch has intents (see `pg_audit`).

use std::sync::LazyLock;

use a2a_pg::deadpool_postgres::ClientWrapper;
use a2a_pg::tokio_postgres::types::ToSql;
use tokio::sync::oneshot;

use super::super::{AuditRecord, IntentRef, StoreError};

/// One record for the writer.
pub(super) struct Row {
    pub(super) rec: Box<AuditRecord>,
    /// An intent record (the insert returns its sequence number).
    pub(super) intent: bool,
    /// Intent: where its sequence number goes; completion: the intent it completes.
    pub(super) link: Option<IntentRef>,
    /// Told whether the batch committed, when somebody waits for it.
    pub(super) done: Option<oneshot::Sender<bool>>,
}

impl Row {
    /// Tells a waiter whether the record was committed; a queued record not committed is
    /// logged.
    pub(super) fn answer(self, committed: bool) {
        match self.done {
            Some(done) => {
                let _ = done.send(committed);
            }
            None if !committed => {
                tracing::error!(trace_id = %self.rec.trace_id, "audit record dropped");
            }
            None => {}
        }
    }
}

/// Gives the intents of a committed batch their sequence numbers.
pub(super) fn linked(rows: &[Row], seqs: &[Option<i64>]) {
    for (row, seq) in rows.iter().zip(seqs) {
        if let (true, Some(link), Some(seq)) = (row.intent, &row.link, seq) {
            link.set_seq(*seq);
        }
    }
}

/// The audit's columns but `seq`, in the order [`insert_rows`] binds them.
const COLUMNS: &str = "ts, trace_id, workspace_id, key_id, target, operation,
    client_method, peer_method, client_version, client_binding, peer_version, peer_binding,
    decision, status, latency_ms, error_code, phase, intent_of, task_id, governance,
    signature_trust, peer_us, overhead_us";

/// Records only: one statement for the whole batch, the rows as arrays (one per column),
/// each row numbered by the identity's sequence. The sequence is named as PostgreSQL names
/// it (`audit_seq_seq`) and so resolved once when the statement is prepared:
/// `pg_get_serial_sequence('audit', 'seq')` looked it up in the catalog on every execution
/// (about 3 % of PostgreSQL's CPU per hop).
static INSERT: LazyLock<String> = LazyLock::new(|| insert_sql(false));

/// With intents: the same insert, which also returns every row's number in the batch's order
/// (one statement, where the intents' numbers were taken by a `SELECT nextval` before it).
static INSERT_NUMBERED: LazyLock<String> = LazyLock::new(|| insert_sql(true));

fn insert_sql(numbered: bool) -> String {
    let types = [
        "text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text",
        "text", "text", "bigint", "bigint", "text", "text", "bigint", "text", "text", "text",
        "bigint", "bigint",
    ];
    let arrays: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("${}::{t}[]", i + 1))
        .collect();
    let arrays = arrays.join(", ");
    let next = "nextval('audit_seq_seq'::regclass)";
    match numbered {
        false => format!(
            "INSERT INTO audit(seq, {COLUMNS}) OVERRIDING SYSTEM VALUE
             SELECT {next}, {COLUMNS} FROM unnest({arrays}) AS u({COLUMNS})"
        ),
        // A data-modifying `WITH` runs to completion whether or not the query reads it; the
        // rows are numbered in the batch's order as `u` is read.
        true => format!(
            "WITH u AS MATERIALIZED (
                 SELECT ord, {next} AS seq, {COLUMNS}
                 FROM unnest({arrays}) WITH ORDINALITY AS u({COLUMNS}, ord)),
             ins AS (INSERT INTO audit(seq, {COLUMNS}) OVERRIDING SYSTEM VALUE
                 SELECT seq, {COLUMNS} FROM u)
             SELECT seq FROM u ORDER BY ord"
        ),
    }
}

/// One optional text column of `recs`.
fn column<'a>(
    recs: &[&'a AuditRecord],
    f: fn(&'a AuditRecord) -> Option<&'a str>,
) -> Vec<Option<&'a str>> {
    recs.iter().copied().map(f).collect()
}

/// Inserts `rows` in one statement; returns the intents' sequence numbers (`None` for the
/// other rows).
pub(super) async fn insert_rows(
    c: &ClientWrapper,
    rows: &[Row],
) -> Result<Vec<Option<i64>>, StoreError> {
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let recs: Vec<&AuditRecord> = rows.iter().map(|r| &*r.rec).collect();
    let text = |f: fn(&AuditRecord) -> Option<&str>| column(&recs, f);
    let ts: Vec<&str> = recs
        .iter()
        .map(|r| if r.ts.is_empty() { &now } else { &r.ts })
        .map(String::as_str)
        .collect();
    let trace: Vec<&str> = recs.iter().map(|r| r.trace_id.as_str()).collect();
    let decision: Vec<&str> = recs.iter().map(|r| r.decision.as_str()).collect();
    let status: Vec<i64> = recs.iter().map(|r| r.status).collect();
    let latency: Vec<i64> = recs.iter().map(|r| r.latency_ms).collect();
    let phase: Vec<Option<&str>> = rows.iter().map(|r| r.intent.then_some("intent")).collect();
    let intent_of: Vec<Option<i64>> = rows
        .iter()
        .map(|r| match r.intent {
            true => None,
            false => r
                .link
                .as_ref()
                .and_then(IntentRef::seq)
                .or(r.rec.intent_seq),
        })
        .collect();
    let governance: Vec<Option<String>> = recs
        .iter()
        .map(|r| r.governance.as_ref().map(|g| g.to_string()))
        .collect();
    let (workspace, key, target) = (
        text(|r| r.workspace_id.as_deref()),
        text(|r| r.key_id.as_deref()),
        text(|r| r.target.as_deref()),
    );
    let (operation, client_method, peer_method) = (
        text(|r| r.operation.as_deref()),
        text(|r| r.client_method.as_deref()),
        text(|r| r.peer_method.as_deref()),
    );
    let (client_version, client_binding) = (
        text(|r| r.client_version.as_deref()),
        text(|r| r.client_binding.as_deref()),
    );
    let (peer_version, peer_binding) = (
        text(|r| r.peer_version.as_deref()),
        text(|r| r.peer_binding.as_deref()),
    );
    let (error_code, task_id, trust) = (
        text(|r| r.error_code.as_deref()),
        text(|r| r.task_id.as_deref()),
        text(|r| r.signature_trust.as_deref()),
    );
    let peer_us: Vec<Option<i64>> = recs.iter().map(|r| r.peer_us).collect();
    let overhead_us: Vec<Option<i64>> = recs.iter().map(|r| r.overhead_us).collect();
    let params: [&(dyn ToSql + Sync); 23] = [
        &ts,
        &trace,
        &workspace,
        &key,
        &target,
        &operation,
        &client_method,
        &peer_method,
        &client_version,
        &client_binding,
        &peer_version,
        &peer_binding,
        &decision,
        &status,
        &latency,
        &error_code,
        &phase,
        &intent_of,
        &task_id,
        &governance,
        &trust,
        &peer_us,
        &overhead_us,
    ];
    if !rows.iter().any(|r| r.intent) {
        let st = c.prepare_cached(&INSERT).await?;
        c.execute(&st, &params).await?;
        return Ok(vec![None; rows.len()]);
    }
    let st = c.prepare_cached(&INSERT_NUMBERED).await?;
    let numbered = c.query(&st, &params).await?;
    if numbered.len() != rows.len() {
        return Err(StoreError::Invalid(format!(
            "the audit insert numbered {} of {} rows",
            numbered.len(),
            rows.len()
        )));
    }
    Ok(rows
        .iter()
        .zip(&numbered)
        .map(|(r, n)| r.intent.then(|| n.get::<_, i64>(0)))
        .collect())
}
