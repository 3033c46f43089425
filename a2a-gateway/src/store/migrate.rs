//! `a2a-gateway admin migrate-store --from FILE.db --to postgres://…`: a SQLite deployment's
//! state copied into an empty PostgreSQL database, table by table in batches, then verified by
//! counting each table's rows on both sides.
//!
//! The tables both schemas hold are copied, parents before children (workspaces before their
//! agents, keys, settings, policies, PII rules, kills, card trust, approvals; push callbacks
//! before their delivered bodies), with the columns both hold: registry, governance, card
//! signing keys and trust, the push JWT replay guard, push callbacks, task ownership and
//! records, idempotent sends, approvals and held requests, the audit and the admin audit (their
//! sequence numbers kept, the identities moved past them). What is not copied: the SQLite
//! file's bookkeeping (journal watermark, registry epoch, retention mark, listing counts: the
//! PostgreSQL triggers recount them) and what one SQLite process keeps in memory (console
//! sessions, the page-token key: operators log in again and ListTasks page tokens restart).
//! Everything runs in one transaction: a failure leaves the target as it was.

use std::path::Path;

use a2a_pg::tokio_postgres::types::ToSql;
use rusqlite::types::Value as Lite;

use super::pg_schema::{COMPONENT, PG_MIGRATIONS};
use super::{Store, StoreError};

/// Rows read and inserted per statement.
pub const BATCH: usize = 500;

/// Tables copied first, in this order (foreign keys); any other table both schemas hold
/// follows in name order.
const FIRST: &[&str] = &[
    "workspaces",
    "agents",
    "api_keys",
    "workspace_settings",
    "gov_policies",
    "gov_pii_rules",
    "gov_kills",
    "workspace_card_trust",
    "card_signing_keys",
    "push_callbacks",
    "push_delivered",
    "push_jwt_seen",
    "task_owners",
    "gateway_sends",
    "gov_approvals",
    "gov_approval_requests",
    "audit",
    "admin_audit",
];

/// Bookkeeping of one backend that is not copied (see the module doc).
const SKIPPED: &[&str] = &[
    "registry_epoch",
    "audit_retention",
    "journal_state",
    "task_owner_counts",
    "sqlite_sequence",
    "a2a_schema",
];

/// One table's rows: in the SQLite file and in PostgreSQL after the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// The table.
    pub table: String,
    /// Rows in the SQLite file.
    pub sqlite: u64,
    /// Rows in PostgreSQL after the copy.
    pub postgres: u64,
}

fn pg(e: impl Into<a2a_pg::PgError>) -> StoreError {
    StoreError::Postgres(e.into())
}

/// Copies the SQLite file `from` into the PostgreSQL database `to` (migrated first), which
/// must hold no workspace and no audit row; returns each table's counts, the copy refused
/// (`StoreError::Invalid`) when any differ. Opening the file recovers what a stopped gateway
/// journaled, and is refused while a gateway serves the file.
pub async fn migrate_store(from: &Path, to: &str) -> Result<Vec<Copied>, StoreError> {
    let store = Store::open(from)?;
    store.open_intent_journal()?;
    let opts = a2a_pg::PoolOptions {
        max_size: 2,
        statement_timeout: None,
        application_name: "a2a-gateway migrate-store".into(),
        ..a2a_pg::PoolOptions::default()
    };
    let pool = a2a_pg::pool(to, &opts)?;
    let mut c = pool.get().await.map_err(pg)?;
    a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
    let tx = c.transaction().await.map_err(pg)?;
    for t in ["workspaces", "audit", "admin_audit", "task_owners"] {
        let n: i64 = tx
            .query_one(&format!("SELECT count(*) FROM {t}"), &[])
            .await
            .map_err(pg)?
            .get(0);
        if n > 0 {
            return Err(StoreError::Invalid(format!(
                "the target database is not empty ({t} holds {n} rows): migrate into a new database"
            )));
        }
    }
    let lite_tables = {
        let conn = store.conn.lock().map_err(|_| poisoned())?;
        let mut st = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        st.query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?
    };
    let pg_tables: Vec<String> = tx
        .query(
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
            &[],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut tables: Vec<String> = FIRST.iter().map(|t| (*t).to_owned()).collect();
    let mut rest: Vec<String> = lite_tables
        .iter()
        .filter(|t| pg_tables.contains(t) && !FIRST.contains(&t.as_str()))
        .filter(|t| !SKIPPED.contains(&t.as_str()))
        .cloned()
        .collect();
    rest.sort();
    tables.extend(rest);
    tables.retain(|t| lite_tables.contains(t) && pg_tables.contains(t));
    let mut out = Vec::with_capacity(tables.len());
    for t in &tables {
        let sqlite = copy_table(&store, &tx, t).await?;
        let postgres: i64 = tx
            .query_one(&format!("SELECT count(*) FROM {t}"), &[])
            .await
            .map_err(pg)?
            .get(0);
        out.push(Copied {
            table: t.clone(),
            sqlite,
            postgres: postgres as u64,
        });
    }
    if let Some(d) = out.iter().find(|c| c.sqlite != c.postgres) {
        return Err(StoreError::Invalid(format!(
            "{}: {} rows in the file, {} copied; nothing was committed",
            d.table, d.sqlite, d.postgres
        )));
    }
    tx.commit().await.map_err(pg)?;
    Ok(out)
}

fn poisoned() -> StoreError {
    StoreError::Invalid("the store's lock is poisoned".into())
}

/// Copies the rows of `table` in batches of [`BATCH`] (by `rowid`); returns how many the file
/// holds.
async fn copy_table(
    store: &Store,
    tx: &a2a_pg::tokio_postgres::Transaction<'_>,
    table: &str,
) -> Result<u64, StoreError> {
    // The columns both hold, with PostgreSQL's types; identity columns are overridden.
    let pg_cols: Vec<(String, String, bool)> = tx
        .query(
            "SELECT column_name::text, data_type::text, is_identity = 'YES'
             FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1",
            &[&table],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let lite_cols: Vec<String> = {
        let conn = store.conn.lock().map_err(|_| poisoned())?;
        let mut st = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
        st.query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?
    };
    let cols: Vec<(String, String, bool)> = pg_cols
        .into_iter()
        .filter(|(c, _, _)| lite_cols.contains(c))
        .collect();
    let names = cols
        .iter()
        .map(|(c, _, _)| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let overriding = if cols.iter().any(|(_, _, id)| *id) {
        " OVERRIDING SYSTEM VALUE"
    } else {
        ""
    };
    let mut after = i64::MIN;
    let mut total = 0u64;
    loop {
        let (rows, last) = {
            let conn = store.conn.lock().map_err(|_| poisoned())?;
            let mut st = conn.prepare(&format!(
                "SELECT rowid, {names} FROM {table} WHERE rowid > ?1 ORDER BY rowid LIMIT {BATCH}"
            ))?;
            let mut rows = Vec::new();
            let mut last = after;
            let mut q = st.query([after])?;
            while let Some(r) = q.next()? {
                last = r.get(0)?;
                let mut row = Vec::with_capacity(cols.len());
                for i in 0..cols.len() {
                    row.push(r.get::<_, Lite>(i + 1)?);
                }
                rows.push(row);
            }
            (rows, last)
        };
        if rows.is_empty() {
            break;
        }
        after = last;
        total += rows.len() as u64;
        let mut params: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        let mut tuples = Vec::with_capacity(rows.len());
        for row in rows {
            let mut slots = Vec::with_capacity(cols.len());
            for (v, (_, ty, _)) in row.into_iter().zip(&cols) {
                params.push(value(v, ty)?);
                slots.push(format!("${}", params.len()));
            }
            tuples.push(format!("({})", slots.join(", ")));
        }
        let sql = format!(
            "INSERT INTO {table} ({names}){overriding} VALUES {}",
            tuples.join(", ")
        );
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        tx.execute(&sql, &refs)
            .await
            .map_err(|e| StoreError::Invalid(format!("copying {table}: {e}")))?;
    }
    for (c, _, _) in cols.iter().filter(|(_, _, id)| *id) {
        tx.query_one(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{table}', '{c}'),
                    (SELECT coalesce(max(\"{c}\"), 0) + 1 FROM {table}), false)"
            ),
            &[],
        )
        .await
        .map_err(pg)?;
    }
    Ok(total)
}

/// A SQLite value as the PostgreSQL column type `ty` takes it.
fn value(v: Lite, ty: &str) -> Result<Box<dyn ToSql + Sync + Send>, StoreError> {
    let wrong = |v: &Lite| StoreError::Invalid(format!("a {ty} column holds {v:?}"));
    Ok(match (ty, v) {
        ("bigint", Lite::Null) => Box::new(None::<i64>),
        ("bigint", Lite::Integer(i)) => Box::new(i),
        ("integer", Lite::Null) => Box::new(None::<i32>),
        ("integer", Lite::Integer(i)) => {
            Box::new(i32::try_from(i).map_err(|_| wrong(&Lite::Integer(i)))?)
        }
        ("boolean", Lite::Null) => Box::new(None::<bool>),
        ("boolean", Lite::Integer(i)) => Box::new(i != 0),
        ("bytea", Lite::Null) => Box::new(None::<Vec<u8>>),
        ("bytea", Lite::Blob(b)) => Box::new(b),
        ("bytea", Lite::Text(t)) => Box::new(t.into_bytes()),
        ("text", Lite::Null) => Box::new(None::<String>),
        ("text", Lite::Text(t)) => Box::new(t),
        ("text", Lite::Integer(i)) => Box::new(i.to_string()),
        ("text", Lite::Real(f)) => Box::new(f.to_string()),
        ("double precision", Lite::Real(f)) => Box::new(f),
        ("double precision", Lite::Integer(i)) => Box::new(i as f64),
        (_, v) => return Err(wrong(&v)),
    })
}
