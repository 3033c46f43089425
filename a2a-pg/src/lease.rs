//! Replicas' leases in rows: each replica has a row of a table of its component (its id and
//! when its lease ends, in the database's clock, so the replicas' clocks need not agree), which
//! it renews every third of the lease time ([`renew`], or [`Lease::keep`] on a task of its
//! own); another replica takes it for gone once the lease ended ([`gone`]). Unlike the liveness
//! lock ([`crate::Alive`]), a lease also ends for a replica that stalled or lost its database
//! for the lease time, and it ends within that time whatever the network did.
//!
//! The table is the component's, made by its migrations:
//! `CREATE TABLE <table> (id TEXT PRIMARY KEY, expires TIMESTAMPTZ NOT NULL)` (the agent's
//! `agent_replicas`, the gateway's `gateway_replicas`).

use std::time::Duration;

use crate::{PgError, Pool, execute, query};

/// Renews (or takes) the lease of replica `id` in `table` for `lease` from now.
pub async fn renew(pool: &Pool, table: &str, id: &str, lease: Duration) -> Result<(), PgError> {
    let sql = format!(
        "INSERT INTO {table}(id, expires) VALUES ($1, now() + make_interval(secs => $2))
         ON CONFLICT (id) DO UPDATE SET expires = EXCLUDED.expires"
    );
    execute(pool, &sql, &[&id, &lease.as_secs_f64()]).await?;
    Ok(())
}

/// Gives the lease of replica `id` up (it stops): it is gone at once.
pub async fn release(pool: &Pool, table: &str, id: &str) -> Result<(), PgError> {
    execute(pool, &format!("DELETE FROM {table} WHERE id = $1"), &[&id]).await?;
    Ok(())
}

/// Whether replica `id` is gone: its lease ended, or it has none (given up, or never taken).
pub async fn gone(pool: &Pool, table: &str, id: &str) -> Result<bool, PgError> {
    let sql =
        format!("SELECT NOT EXISTS (SELECT 1 FROM {table} WHERE id = $1 AND expires >= now())");
    let rows = query(pool, &sql, &[&id]).await?;
    Ok(rows.first().map(|r| r.get::<_, bool>(0)).unwrap_or(true))
}

/// How often a lease of `lease` is renewed: every third of it.
pub fn renew_every(lease: Duration) -> Duration {
    lease / 3
}

/// A replica's lease renewed on a task of its own (see the module doc) until this is dropped,
/// when it is given up.
pub struct Lease {
    stop: tokio::sync::watch::Sender<bool>,
    id: String,
}

impl Lease {
    /// Takes the lease of replica `id` in `table` for `lease` and renews it every third of
    /// that (on the current Tokio runtime). A renewal that fails is logged and tried again at
    /// the next turn; the first is made at once.
    pub fn keep(pool: Pool, table: &'static str, id: String, lease: Duration) -> Lease {
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let who = id.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = renew(&pool, table, &who, lease).await {
                    tracing::warn!("postgres: renewing the lease of replica {who}: {e}");
                }
                tokio::select! {
                    _ = tokio::time::sleep(renew_every(lease)) => {}
                    _ = stopped.changed() => break,
                }
            }
            if let Err(e) = release(&pool, table, &who).await {
                tracing::debug!("postgres: giving up the lease of replica {who}: {e}");
            }
        });
        Lease { stop, id }
    }

    /// The replica's id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}
