//! Statement helpers over the connection's prepared-statement cache.
//!
//! `Connection::execute` and `query_row` compile their SQL on every call (the profile of issue
//! 11 showed about 8 % of the gateway's CPU there). These helpers go through
//! `prepare_cached`, so each statement text is compiled once per connection and reused.

use rusqlite::{Connection, Params, Row};

use super::StoreError;

/// Capacity of each connection's statement cache: room for every statement of the stores.
pub(crate) const STATEMENT_CACHE: usize = 80;

/// `execute` / `query_row` through the connection's prepared-statement cache.
pub(crate) trait CachedExt {
    /// Like `Connection::execute`, with a cached statement.
    fn execute_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;
    /// Like `Connection::query_row`, with a cached statement.
    fn query_row_cached<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>;
}

impl CachedExt for Connection {
    fn execute_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn query_row_cached<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: Params,
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction on `c`: the write lock first (waiting,
/// `busy_timeout`, for the audit writer's batch), so what `f` reads is what it deletes;
/// committed when `f` succeeds, rolled back otherwise.
pub(crate) fn immediate<T>(
    c: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    c.execute_batch("BEGIN IMMEDIATE")?;
    let out = f(c).and_then(|t| {
        c.execute_batch("COMMIT")?;
        Ok(t)
    });
    if out.is_err() && !c.is_autocommit() {
        let _ = c.execute_batch("ROLLBACK");
    }
    out
}
