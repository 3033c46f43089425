//! The audit log on PostgreSQL: the reads (hop pages, a hop's records, the export, the admin
//! audit) and the retention, with the same rules as the SQLite file's (`store::hop_page`,
//! `store::retention`); the writer is `pg_audit`.
//!
//! Reads first wait for what this replica queued ([`PgAudit::flush`]), then read the table:
//! every replica's committed records. Times are compared byte-wise (`COLLATE "C"`), as SQLite
//! compares them, whatever the database's collation.
//!
//! **Retention** deletes the oldest rows in one short transaction per batch, after locking the
//! retention mark (`audit_retention`), so two replicas' passes take turns instead of deleting
//! the same rows. The age rule is SQLite's. **The audit's size** on PostgreSQL is the bytes of
//! its live rows (`pg_column_size`) times the share of its indexes (total relation size over
//! table size): deleted rows leave the table's files as large as they were until `VACUUM`
//! makes their space reusable (autovacuum does it; the files are not shrunk), so the files
//! cannot be the measure. The size rule estimates it from the rows (`max(seq) - min(seq) + 1`:
//! rows leave only from the start; gaps of failed batches count as rows, so it errs towards
//! deleting) times the bytes per row of the newest thousand rows, measured at most every
//! [`RECALIBRATE`]; over the bound, the oldest rows go until the estimate is 10 % under it.
//! While the whole relation (files included) is under the bound, nothing is measured.

use a2a_pg::tokio_postgres::Row;
use a2a_pg::tokio_postgres::types::ToSql;
use serde_json::Value;

use super::super::hop_page::RECORD_COLUMNS;
use super::super::retention::{Measure, is_older};
use super::super::{
    AuditRecord, AuditRetention, HopFilter, IntentRef, RetentionState, StoreError, Trimmed,
};
use super::rows::{AdminAuditRecord, AdminIdentity};
use super::{AuditStore, PgAudit};

/// One audit row selected with [`RECORD_COLUMNS`].
fn record_of(r: &Row) -> AuditRecord {
    AuditRecord {
        seq: r.get(0),
        ts: r.get(1),
        trace_id: r.get(2),
        workspace_id: r.get(3),
        key_id: r.get(4),
        target: r.get(5),
        operation: r.get(6),
        client_method: r.get(7),
        peer_method: r.get(8),
        client_version: r.get(9),
        client_binding: r.get(10),
        peer_version: r.get(11),
        peer_binding: r.get(12),
        decision: r.get(13),
        status: r.get(14),
        latency_ms: r.get(15),
        error_code: r.get(16),
        task_id: r.get(17),
        intent_seq: r.get(18),
        outcome: r.get(19),
        governance: r
            .get::<_, Option<String>>(20)
            .and_then(|g| serde_json::from_str(&g).ok()),
        signature_trust: r.get(21),
        peer_us: r.get(22),
        overhead_us: r.get(23),
    }
}

/// The WHERE clause of `f` (its set filters only, so the planner picks the index serving them)
/// and its values, numbered from 1 with `mark` (`$` on PostgreSQL, `?` on SQLite): one record
/// per hop, as `hop_page::filter_sql`. `collate` is what makes a time compare byte-wise
/// (` COLLATE "C"` on PostgreSQL; SQLite compares bytes already).
pub(super) fn hop_filter(f: &HopFilter, mark: char, collate: &str) -> (String, Vec<String>) {
    let mut clause = String::from(
        "NOT (phase IS NOT DISTINCT FROM 'intent'
           AND EXISTS (SELECT 1 FROM audit c WHERE c.intent_of = audit.seq))",
    );
    let mut args = Vec::new();
    let (since, until) = (format!("ts{collate} >="), format!("ts{collate} <"));
    for (value, cond) in [
        (&f.workspace, "workspace_id ="),
        (&f.agent, "target ="),
        (&f.decision, "decision ="),
        (&f.since, since.as_str()),
        (&f.until, until.as_str()),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            args.push(v.to_owned());
            clause.push_str(&format!(" AND {cond} {mark}{}", args.len()));
        }
    }
    // The decision index holds no `allowed` rows: the planner uses it when the query says so.
    if f.decision
        .as_deref()
        .is_some_and(|d| !d.is_empty() && d != "allowed")
    {
        clause.push_str(" AND decision <> 'allowed'");
    }
    (clause, args)
}

/// [`hop_filter`] on PostgreSQL.
fn filter_sql(f: &HopFilter) -> (String, Vec<String>) {
    hop_filter(f, '$', " COLLATE \"C\"")
}

fn rfc3339_now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

impl PgAudit {
    /// The rows of one query on the pool.
    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let c = self.pool().get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.query(&st, params).await?)
    }

    /// Hops matching `f` with `seq {cmp} bound`, ordered by `seq` (`order`), at most `limit`.
    async fn hops(
        &self,
        f: &HopFilter,
        cmp: &str,
        bound: i64,
        order: &str,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush().await;
        let (clause, args) = filter_sql(f);
        let n = args.len();
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM audit WHERE {clause} AND seq {cmp} ${}
             ORDER BY seq {order} LIMIT ${}",
            n + 1,
            n + 2
        );
        let mut params: Vec<&(dyn ToSql + Sync)> =
            args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        params.push(&bound);
        params.push(&limit);
        let rows = self.query(&sql, &params).await?;
        Ok(rows.iter().map(record_of).collect())
    }

    /// The size rule: how many of the oldest `rows` rows to delete (and the estimated bytes).
    async fn over_size(
        &self,
        c: &a2a_pg::deadpool_postgres::Transaction<'_>,
        m: &mut Measure,
        max: u64,
        rows: i64,
    ) -> Result<(usize, Option<u64>), StoreError> {
        let total: i64 = c
            .query_one("SELECT pg_total_relation_size('audit')", &[])
            .await?
            .get(0);
        if u64::try_from(total).unwrap_or(0) <= max {
            // Even the files are under the bound: so are the live rows.
            return Ok(m.under_bound());
        }
        Ok(m.excess(max, rows))
    }

    /// Measures the bytes per row when the size rule may need them and the last measure is
    /// stale (outside the batch's transaction).
    async fn calibrate(&self, m: &mut Measure, max: u64) -> Result<(), StoreError> {
        if m.fresh() {
            return Ok(());
        }
        let total: i64 = self
            .query("SELECT pg_total_relation_size('audit')", &[])
            .await?
            .first()
            .map_or(0, |r| r.get(0));
        if u64::try_from(total).unwrap_or(0) <= max {
            return Ok(());
        }
        let rows = self
            .query(
                "SELECT coalesce(avg(pg_column_size(a.*)), 0)::float8
                   * (pg_total_relation_size('audit')::float8
                      / greatest(pg_table_size('audit'), 1))
                 FROM (SELECT * FROM audit ORDER BY seq DESC LIMIT 1000) a",
                &[],
            )
            .await?;
        let per_row: f64 = rows.first().map_or(0.0, |r| r.get(0));
        m.measured(per_row);
        Ok(())
    }
}

impl AuditStore for PgAudit {
    async fn intent(&self, rec: &AuditRecord) -> Result<IntentRef, StoreError> {
        let link = IntentRef::default();
        self.write(rec, true, Some(link.clone())).await?;
        Ok(link)
    }

    fn enqueue(&self, rec: &AuditRecord, intent: Option<&IntentRef>) -> Result<(), StoreError> {
        self.queue(rec, false, intent.cloned(), None)
    }

    async fn durable(
        &self,
        rec: &AuditRecord,
        intent: Option<&IntentRef>,
    ) -> Result<(), StoreError> {
        self.write(rec, false, intent.cloned()).await
    }

    async fn flushed(&self) {
        self.flush().await;
    }

    async fn append_admin(&self, rec: &AdminAuditRecord) -> Result<i64, StoreError> {
        let rows = self
            .query(
                "INSERT INTO admin_audit(ts, actor_kind, actor_subject, actor_remote, action,
                   workspace_id, status, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                 RETURNING seq",
                &[
                    &rfc3339_now(),
                    &rec.actor.kind,
                    &rec.actor.subject,
                    &rec.actor.remote,
                    &rec.action,
                    &rec.workspace_id,
                    &rec.status,
                    &rec.detail.to_string(),
                ],
            )
            .await?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    async fn records(
        &self,
        workspace_id: Option<&str>,
        target: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        let f = HopFilter {
            workspace: workspace_id.map(str::to_owned),
            agent: target.map(str::to_owned),
            ..HopFilter::default()
        };
        self.hops(&f, ">", after, "ASC", limit.max(0)).await
    }

    async fn hop_page(
        &self,
        f: &HopFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        let before = before.unwrap_or(i64::MAX);
        self.hops(f, "<", before, "DESC", limit.clamp(1, 1000))
            .await
    }

    async fn hops_after(
        &self,
        f: &HopFilter,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AuditRecord>, StoreError> {
        self.hops(f, ">", after, "DESC", limit.clamp(1, 1000)).await
    }

    async fn hop_count(&self, f: &HopFilter) -> Result<u64, StoreError> {
        self.flush().await;
        let (clause, args) = filter_sql(f);
        let params: Vec<&(dyn ToSql + Sync)> =
            args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
        let sql = format!("SELECT COUNT(*) FROM audit WHERE {clause}");
        let n: i64 = self
            .query(&sql, &params)
            .await?
            .first()
            .map_or(0, |r| r.get(0));
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn record(&self, seq: i64) -> Result<Option<AuditRecord>, StoreError> {
        self.flush().await;
        let sql = format!("SELECT {RECORD_COLUMNS} FROM audit WHERE seq = $1");
        Ok(self.query(&sql, &[&seq]).await?.first().map(record_of))
    }

    async fn trace_records(&self, trace_id: &str) -> Result<Vec<AuditRecord>, StoreError> {
        self.flush().await;
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM audit WHERE trace_id = $1 ORDER BY seq LIMIT 100"
        );
        let rows = self.query(&sql, &[&trace_id]).await?;
        Ok(rows.iter().map(record_of).collect())
    }

    async fn latency_samples(
        &self,
        ws: &str,
        agent: &str,
        since: &str,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        self.flush().await;
        let rows = self
            .query(
                "SELECT ts, latency_ms FROM audit WHERE workspace_id = $1 AND target = $2
                   AND ts COLLATE \"C\" >= $3 AND phase IS DISTINCT FROM 'intent'
                 ORDER BY seq DESC LIMIT $4",
                &[&ws, &agent, &since, &limit.max(0)],
            )
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    async fn admin_records(
        &self,
        workspace_id: Option<&str>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<AdminAuditRecord>, StoreError> {
        let rows = self
            .query(
                "SELECT seq, ts, actor_kind, actor_subject, actor_remote, action, workspace_id,
                   status, detail FROM admin_audit
                 WHERE ($1::text IS NULL OR workspace_id = $1) AND seq > $2
                 ORDER BY seq LIMIT $3",
                &[&workspace_id, &after, &limit.max(0)],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| AdminAuditRecord {
                seq: r.get(0),
                ts: r.get(1),
                actor: AdminIdentity {
                    kind: r.get(2),
                    subject: r.get(3),
                    remote: r.get(4),
                },
                action: r.get(5),
                workspace_id: r.get(6),
                status: r.get(7),
                detail: serde_json::from_str(r.get::<_, &str>(8)).unwrap_or(Value::Null),
            })
            .collect())
    }

    async fn trim(&self, rule: &AuditRetention) -> Result<Trimmed, StoreError> {
        let mut m = self.measure().lock().await;
        if let Some(max) = rule.max_bytes {
            self.calibrate(&mut m, max).await?;
        }
        let mut c = self.pool().get().await?;
        let tx = c.transaction().await?;
        // Taken in turn by the replicas' passes.
        tx.query_one(
            "SELECT deleted_below FROM audit_retention WHERE id = 1 FOR UPDATE",
            &[],
        )
        .await?;
        let limit = i64::try_from(rule.batch.max(1)).unwrap_or(i64::MAX);
        let oldest: Vec<(i64, String)> = tx
            .query("SELECT seq, ts FROM audit ORDER BY seq LIMIT $1", &[&limit])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let newest: i64 = tx
            .query_one("SELECT coalesce(max(seq), 0) FROM audit", &[])
            .await?
            .get(0);
        let Some(first) = oldest.first().map(|(s, _)| *s) else {
            return Ok(Trimmed::default());
        };
        // The newest row stays (the largest `seq` never goes down).
        let candidates: Vec<&(i64, String)> = oldest.iter().filter(|(s, _)| *s < newest).collect();
        let by_age = match rule.max_age {
            Some(age) => {
                let cutoff = time::OffsetDateTime::now_utc() - age;
                candidates
                    .iter()
                    .take_while(|(_, ts)| is_older(ts, cutoff))
                    .count()
            }
            None => 0,
        };
        let (by_size, audit_bytes) = match rule.max_bytes {
            Some(max) => self.over_size(&tx, &mut m, max, newest - first + 1).await?,
            None => (0, None),
        };
        let n = by_age.max(by_size).min(candidates.len());
        let Some(upper) = n
            .checked_sub(1)
            .and_then(|i| candidates.get(i))
            .map(|(s, _)| *s)
        else {
            tx.commit().await?;
            return Ok(Trimmed {
                audit_bytes,
                ..Trimmed::default()
            });
        };
        tx.execute(
            "UPDATE audit_retention SET deleted_below = greatest(deleted_below, $1) WHERE id = 1",
            &[&(upper + 1)],
        )
        .await?;
        let rows = tx
            .execute("DELETE FROM audit WHERE seq <= $1", &[&upper])
            .await?;
        let rows = i64::try_from(rows).unwrap_or(i64::MAX);
        tx.execute(
            "UPDATE audit_retention SET deleted_rows = deleted_rows + $1, last_at = $2
             WHERE id = 1",
            &[&rows, &rfc3339_now()],
        )
        .await?;
        tx.commit().await?;
        let rows = usize::try_from(rows).unwrap_or(usize::MAX);
        Ok(Trimmed {
            rows,
            by_age: by_age.min(rows),
            audit_bytes,
        })
    }

    async fn retention_state(&self) -> Result<RetentionState, StoreError> {
        let rows = self
            .query(
                "SELECT deleted_below, deleted_rows, last_at FROM audit_retention WHERE id = 1",
                &[],
            )
            .await?;
        Ok(rows
            .first()
            .map(|r| RetentionState {
                deleted_below: r.get(0),
                deleted_rows: r.get(1),
                last_at: r.get(2),
            })
            .unwrap_or_default())
    }

    async fn audit_bytes(&self) -> Result<u64, StoreError> {
        self.flush().await;
        let rows = self
            .query(
                "SELECT (coalesce(sum(pg_column_size(a.*)), 0)::float8
                   * (pg_total_relation_size('audit')::float8
                      / greatest(pg_table_size('audit'), 1)))::bigint
                 FROM audit a",
                &[],
            )
            .await?;
        let b: i64 = rows.first().map_or(0, |r| r.get(0));
        Ok(u64::try_from(b).unwrap_or(0))
    }
}
