//! The stores a server runs on, as its settings name them (`store`, `sqlite_path`) or its
//! builder gave them ([`super::AgentServer::postgres`]): tasks with their replayable events,
//! the send log of idempotent sends and the push configs, in memory, in the SQLite file or in
//! PostgreSQL.

use std::sync::Arc;

use super::ServeError;
use crate::config::AgentConfig;
use crate::push::store::{MemoryPushStore, PushConfigStore};
use crate::replay::ReplayLog;
#[cfg(feature = "postgres")]
use crate::store::PostgresStore;
use crate::store::{MemoryStore, StoreChoice, TaskStore};
use crate::tasks::idempotency::SendLog;

/// A task store and its replay log (none: a resume gets the task snapshot).
pub(super) type Tasks = (Arc<dyn TaskStore>, Option<Arc<dyn ReplayLog>>);

/// Where the server's state lives (the task store given to the builder aside).
pub(super) enum Backend {
    /// In memory (the sends in the task manager's default log).
    Memory,
    /// The SQLite file at this path.
    #[cfg(feature = "sqlite")]
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL database that replicas share.
    #[cfg(feature = "postgres")]
    Postgres(PostgresStore),
}

/// A connected PostgreSQL store given to the builder ([`super::AgentServer::postgres`]); a
/// build without the `postgres` feature has none.
#[cfg(feature = "postgres")]
pub(super) type Given = Option<PostgresStore>;
/// A connected PostgreSQL store given to the builder; a build without the `postgres` feature
/// has none.
#[cfg(not(feature = "postgres"))]
pub(super) type Given = Option<std::convert::Infallible>;

/// The `application_name` the agent's connections show in `pg_stat_activity`.
#[cfg(feature = "postgres")]
const APPLICATION_NAME: &str = "a2a-agent";

impl Backend {
    /// The backend of `cfg`, or `given` (a connected PostgreSQL store) when there is one.
    /// Connects to PostgreSQL (and migrates it) when the settings name it.
    pub(super) async fn open(cfg: &AgentConfig, given: Given) -> Result<Backend, ServeError> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = given {
            return Ok(Backend::Postgres(pg));
        }
        #[cfg(not(feature = "postgres"))]
        let _ = given;
        match cfg.store_choice().map_err(ServeError::Config)? {
            StoreChoice::Memory => Ok(Backend::Memory),
            #[cfg(feature = "sqlite")]
            StoreChoice::Sqlite(p) => Ok(Backend::Sqlite(p.to_path_buf())),
            #[cfg(feature = "postgres")]
            StoreChoice::Postgres(url) => {
                let opts = a2a_pg::PoolOptions {
                    application_name: APPLICATION_NAME.into(),
                    ..Default::default()
                };
                let pg = PostgresStore::connect(url, &opts).await?;
                pg.set_lease(cfg.replica_lease.get());
                Ok(Backend::Postgres(pg))
            }
            // Refused by `missing_features` before the server gets here.
            #[allow(unreachable_patterns)]
            _ => Err(ServeError::Config(
                "the store named in the settings needs a feature this build left out".into(),
            )),
        }
    }

    /// Starts what replicas on one database tell each other (events, cancels, leases) for
    /// `manager`; nothing on a store one process owns.
    pub(super) fn start_peers(
        &self,
        manager: &Arc<crate::tasks::TaskManager>,
    ) -> Result<(), ServeError> {
        #[cfg(feature = "postgres")]
        if let Backend::Postgres(pg) = self {
            crate::tasks::peers_pg::start(pg.clone(), manager)?;
        }
        let _ = manager;
        Ok(())
    }

    /// The task store and its replay log (the memory store is its own).
    pub(super) fn tasks(&self, cfg: &AgentConfig) -> Result<Tasks, ServeError> {
        let pair: Tasks = match self {
            Backend::Memory => {
                let m = Arc::new(
                    MemoryStore::new(cfg.memory_store_cap, cfg.terminal_task_ttl.get())
                        .with_max_bytes(cfg.memory_store_max_bytes)
                        .with_replay_events(cfg.replay_events_per_task),
                );
                (m.clone(), Some(m))
            }
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(p) => (
                Arc::new(crate::store::SqliteStore::open(p)?),
                Some(Arc::new(crate::replay::SqliteReplay::open(
                    p,
                    cfg.replay_events_per_task,
                )?)),
            ),
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => (
                Arc::new(pg.clone()),
                Some(Arc::new(crate::replay_pg::PgReplay::new(
                    pg.clone(),
                    cfg.replay_events_per_task,
                ))),
            ),
        };
        Ok(pair)
    }

    /// The send log of idempotent sends (`None`: the task manager's memory log).
    pub(super) fn send_log(
        &self,
        cfg: &AgentConfig,
    ) -> Result<Option<Arc<dyn SendLog>>, ServeError> {
        let _ = cfg;
        let log: Option<Arc<dyn SendLog>> = match self {
            Backend::Memory => None,
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(p) => Some(Arc::new(crate::tasks::idempotency::SqliteSendLog::open(
                p,
                cfg.idempotency_window.get(),
            )?)),
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Some(Arc::new(crate::tasks::idempotency::PgSendLog::new(
                pg.clone(),
                cfg.idempotency_window.get(),
            ))),
        };
        Ok(log)
    }

    /// Where push configs are kept.
    pub(super) fn push_configs(&self) -> Result<Arc<dyn PushConfigStore>, ServeError> {
        let store: Arc<dyn PushConfigStore> = match self {
            Backend::Memory => Arc::new(MemoryPushStore::default()),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(p) => Arc::new(
                crate::push::store::SqlitePushStore::open(p)
                    .map_err(|e| ServeError::Config(e.to_string()))?,
            ),
            #[cfg(feature = "postgres")]
            Backend::Postgres(pg) => Arc::new(crate::push::store_pg::PgPushStore::new(pg.clone())),
        };
        Ok(store)
    }
}
