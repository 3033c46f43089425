//! The connection pool: bounded sizes and times, so a dead database gives an error in about
//! `connect_timeout` instead of a hang.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, QueueMode, RecyclingMethod, Runtime};
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

use crate::PgError;

/// How the pool connects and waits.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Connections at most.
    pub max_size: usize,
    /// Longest wait to open one connection.
    pub connect_timeout: Duration,
    /// Longest wait for a free connection from the pool (and for creating or checking one).
    pub wait_timeout: Duration,
    /// The server cancels a statement that runs longer (`statement_timeout`; `None`: none).
    pub statement_timeout: Option<Duration>,
    /// `application_name` shown in `pg_stat_activity`.
    pub application_name: String,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_size: 16,
            connect_timeout: Duration::from_secs(3),
            wait_timeout: Duration::from_secs(5),
            statement_timeout: Some(Duration::from_secs(30)),
            application_name: "a2a-rs".into(),
        }
    }
}

/// The `tokio_postgres` settings of `url` (`postgres://user:pass@host:port/db?…`) with the
/// options' connect timeout, statement timeout and application name.
pub fn pg_config(url: &str, opts: &PoolOptions) -> Result<tokio_postgres::Config, PgError> {
    let mut pg: tokio_postgres::Config = url
        .parse()
        .map_err(|e| PgError::Setup(format!("database URL: {e}")))?;
    pg.connect_timeout(opts.connect_timeout);
    pg.application_name(&opts.application_name);
    if let Some(t) = opts.statement_timeout {
        pg.options(format!("-c statement_timeout={}", t.as_millis()));
    }
    // A dead peer on an idle connection is noticed by TCP keepalives.
    pg.keepalives(true);
    pg.keepalives_idle(Duration::from_secs(30));
    Ok(pg)
}

/// A pool for `url` (nothing is connected until the first [`Pool::get`]).
pub fn pool(url: &str, opts: &PoolOptions) -> Result<Pool, PgError> {
    let mgr = Manager::from_config(
        pg_config(url, opts)?,
        NoTls,
        ManagerConfig {
            // Fast: a connection is checked by its closed flag, not by a round trip per get.
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(mgr)
        .max_size(opts.max_size.max(1))
        // The most recently returned connection first: under load a few backends stay busy
        // and warm instead of every backend of the pool taking turns (each backend faults in
        // each shared buffer it touches for the first time, and its caches go cold). The
        // gateway's echo hop on PostgreSQL: 10-15 % more hops per second (docs/replicas.md,
        // "Sizing").
        .queue_mode(QueueMode::Lifo)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(opts.wait_timeout))
        .create_timeout(Some(opts.connect_timeout))
        .recycle_timeout(Some(opts.wait_timeout))
        .build()
        .map_err(|e| PgError::Setup(e.to_string()))
}

/// The rows of one statement on a connection of `pool` (prepared once per connection).
pub async fn query(
    pool: &Pool,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, PgError> {
    let c = pool.get().await?;
    let st = c.prepare_cached(sql).await?;
    Ok(c.query(&st, params).await?)
}

/// One statement's affected rows on a connection of `pool` (prepared once per connection).
pub async fn execute(
    pool: &Pool,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, PgError> {
    let c = pool.get().await?;
    let st = c.prepare_cached(sql).await?;
    Ok(c.execute(&st, params).await?)
}
