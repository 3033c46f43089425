//! Which replicas are alive, without heartbeats of our own: each replica holds a session
//! advisory lock keyed by its id ([`Alive::hold`]) on a connection of its own for as long as
//! it runs. PostgreSQL frees a session's locks when the session ends (the process exited or was
//! killed, or its connection broke), so another replica can tell a gone replica from a live one
//! by trying the lock ([`is_alive`]): rows a gone replica owned can then be taken over.
//!
//! A replica whose liveness connection breaks while it keeps running looks gone to the others;
//! [`Alive`] logs it. The agent's replicas therefore rely on leases renewed in rows (its
//! `agent_replicas` table, `a2a-agent`'s `pg_lease`), which also bound how long a stalled
//! replica keeps its work, and fence its writes once another replica took the work over; a
//! runner without a lease row (an older release's) falls back to this lock.

use tokio_postgres::{Client, NoTls};

use crate::PgError;
use crate::migrate::advisory_key;

/// The lock key of replica `id` of `component`.
fn key(component: &str, id: &str) -> i64 {
    advisory_key(&format!("alive:{component}:{id}"))
}

/// A replica's liveness lock, held until this is dropped (see the module doc).
pub struct Alive {
    id: String,
    _session: Client,
}

impl Alive {
    /// Connects with `config` (see [`crate::pg_config`]) and takes the liveness lock of
    /// replica `id` of `component` (an id is used once: a restarted replica takes a new one).
    pub async fn hold(
        config: &tokio_postgres::Config,
        component: &str,
        id: &str,
    ) -> Result<Alive, PgError> {
        let (client, conn) = config.connect(NoTls).await?;
        let who = format!("{component} replica {id}");
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::warn!(
                    "postgres: the liveness session of {who} ended ({e}): other replicas now \
                     take it for gone"
                );
            }
        });
        client
            .execute("SELECT pg_advisory_lock($1)", &[&key(component, id)])
            .await?;
        Ok(Alive {
            id: id.to_owned(),
            _session: client,
        })
    }

    /// The replica's id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Whether replica `id` of `component` holds its liveness lock (asked on `client`, a pooled
/// connection: the probe takes the lock when it is free and gives it back at once).
pub async fn is_alive(client: &Client, component: &str, id: &str) -> Result<bool, PgError> {
    let k = key(component, id);
    let free: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&k])
        .await?
        .try_get(0)?;
    if free {
        client
            .execute("SELECT pg_advisory_unlock($1)", &[&k])
            .await?;
    }
    Ok(!free)
}
