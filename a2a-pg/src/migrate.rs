//! Versioned migrations per component, applied once across replicas.
//!
//! Each component (the gateway, the agent) has its own ordered list of migrations; the version
//! a database is at is the row `a2a_schema(component, version)`. Replicas that start together
//! all call [`migrate`]: the first takes the component's advisory lock (a session lock keyed by
//! [`advisory_key`]) and applies what is missing, one transaction per migration; the others
//! wait for the lock, then find nothing left to do. A database at a version newer than the
//! list is refused ([`PgError::NewerSchema`]): an older release must not write into a schema it
//! does not know.

use tokio_postgres::Client;

use crate::PgError;

/// What [`migrate`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The version the database was at.
    pub from: i64,
    /// The version it is at now (the number of migrations).
    pub version: i64,
}

/// The advisory lock key of a name: FNV-1a over its bytes, with a fixed prefix so that other
/// users of advisory locks in the same database are unlikely to collide.
pub fn advisory_key(name: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in "a2a-rs:".bytes().chain(name.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// Applies the migrations of `component` the database does not have yet (see the module doc).
pub async fn migrate(
    client: &mut Client,
    component: &str,
    migrations: &[&str],
) -> Result<Migrated, PgError> {
    let key = advisory_key(&format!("migrate:{component}"));
    client
        .execute("SELECT pg_advisory_lock($1)", &[&key])
        .await?;
    let out = apply(client, component, migrations).await;
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&key])
        .await;
    let out = out?;
    unlocked?;
    Ok(out)
}

async fn apply(
    client: &mut Client,
    component: &str,
    migrations: &[&str],
) -> Result<Migrated, PgError> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS a2a_schema (
                component TEXT PRIMARY KEY,
                version BIGINT NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .await?;
    let from: i64 = client
        .query_opt(
            "SELECT version FROM a2a_schema WHERE component = $1",
            &[&component],
        )
        .await?
        .map_or(0, |r| r.get(0));
    let known = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    if from > known {
        return Err(PgError::NewerSchema {
            component: component.to_owned(),
            found: from,
            known,
        });
    }
    for (i, sql) in migrations.iter().enumerate().skip(from.max(0) as usize) {
        let v = i64::try_from(i + 1).unwrap_or(i64::MAX);
        let tx = client.transaction().await?;
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO a2a_schema(component, version) VALUES ($1, $2)
             ON CONFLICT (component) DO UPDATE SET version = $2, updated_at = now()",
            &[&component, &v],
        )
        .await?;
        tx.commit().await?;
        tracing::info!(component, version = v, "postgres migration applied");
    }
    Ok(Migrated {
        from,
        version: known.max(from),
    })
}
