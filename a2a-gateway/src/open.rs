//! The gateway on the database its `database` setting names: a SQLite file (embedded, as
//! [`Gateway::new`]) or a PostgreSQL URL ([`Gateway::on_postgres`]), where every store is on
//! one pool and nothing is kept in a file (docs/replicas.md, "Topology").

use crate::app::Gateway;
use crate::config::Config;
use crate::store::Store;
use crate::store::backend::{Audit, Holds, PgRegistry, Records, Registry, Shared, StreamBounds};

impl Gateway {
    /// A gateway with every store on the PostgreSQL database `config.database` names
    /// (`postgres://…`), on one pool of `config.pool_options()`: the registry, policies and PII
    /// rules, task records and idempotent sends, the audit, approvals and kills, the page-token
    /// key, console sessions and card trust, and the stream resume events. Applies the
    /// migrations (once across replicas) and starts the notification listeners. No SQLite file
    /// is opened or made: the [`Store`] the state holds is an empty in-memory one that nothing
    /// on this path keeps data in. Replicas started with the same URL behave as one gateway;
    /// give them the same `delegation_key` and card key secret too.
    pub async fn on_postgres(config: Config) -> Result<Gateway, String> {
        let Some(url) = config.postgres_url().map(str::to_owned) else {
            return Err(format!(
                "database {} is not a PostgreSQL URL (postgres://…)",
                config.database.display()
            ));
        };
        let fail = |what: &str, e: crate::store::StoreError| format!("PostgreSQL {what}: {e}");
        let pg = PgRegistry::connect(&url, &config.pool_options())
            .await
            .map_err(|e| fail("database", e))?;
        let holds = pg.holds().map_err(|e| fail("approvals", e))?;
        let streams = pg
            .stream_events(StreamBounds::default())
            .map_err(|e| fail("stream events", e))?;
        let shared = pg.shared().await.map_err(|e| fail("shared state", e))?;
        let nothing = Store::open_in_memory().map_err(|e| e.to_string())?;
        Gateway::with_backends(
            config,
            nothing,
            Registry::Postgres(pg.clone()),
            Records::Postgres(pg.records()),
            Audit::Postgres(pg.audit()),
            Holds::Postgres(holds),
        )?
        .with_shared(Shared::Postgres(shared))
        .await?
        .with_stream_events(streams)
    }
}
