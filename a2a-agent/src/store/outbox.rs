//! The SQLite store's push outbox: the `push_outbox` table, where notifications are recorded as
//! due with the task change they report and removed once their webhook has answered (the
//! interface is [`TaskStore`](super::TaskStore)'s outbox methods).

use super::api::{DueNotice, Notice, StoreError};
use bytes::Bytes;

fn sq(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

/// The outbox table (idempotent DDL, part of the SQLite store's schema).
pub(super) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS push_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    content_type TEXT NOT NULL,
    body BLOB NOT NULL
 );";

/// Record `notices` (inside the caller's transaction, if any); their numbers, in order.
pub(super) fn insert(c: &rusqlite::Connection, notices: &[Notice]) -> Result<Vec<i64>, StoreError> {
    let mut st = c
        .prepare_cached(
            "INSERT INTO push_outbox(task_id, config_id, content_type, body) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(sq)?;
    let mut seqs = Vec::with_capacity(notices.len());
    for n in notices {
        st.execute(rusqlite::params![
            n.task_id,
            n.config_id,
            n.content_type,
            n.body.as_ref()
        ])
        .map_err(sq)?;
        seqs.push(c.last_insert_rowid());
    }
    Ok(seqs)
}

/// Remove notice `seq`.
pub(super) fn remove(c: &rusqlite::Connection, seq: i64) -> Result<(), StoreError> {
    c.prepare_cached("DELETE FROM push_outbox WHERE seq = ?1")
        .map_err(sq)?
        .execute([seq])
        .map_err(sq)?;
    Ok(())
}

/// Every recorded notice, oldest first.
pub(super) fn due(c: &rusqlite::Connection) -> Result<Vec<DueNotice>, StoreError> {
    let mut st = c
        .prepare("SELECT seq, task_id, config_id, content_type, body FROM push_outbox ORDER BY seq")
        .map_err(sq)?;
    let mut rows = st.query([]).map_err(sq)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(sq)? {
        let body: Vec<u8> = r.get(4).map_err(sq)?;
        out.push(DueNotice {
            seq: r.get(0).map_err(sq)?,
            notice: Notice {
                task_id: r.get(1).map_err(sq)?,
                config_id: r.get(2).map_err(sq)?,
                content_type: r.get(3).map_err(sq)?,
                body: Bytes::from(body),
            },
        });
    }
    Ok(out)
}
