//! Which store the settings name: `store` (a PostgreSQL URL or `memory`) and `sqlite_path`,
//! read once for the server and for the binary's `--check-config`.

use crate::config::AgentConfig;

/// The store the settings name (`store`, `sqlite_path`): [`AgentConfig::store_choice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreChoice<'a> {
    /// The bounded in-memory store.
    Memory,
    /// The SQLite file at this path.
    Sqlite(&'a std::path::Path),
    /// The PostgreSQL database at this URL.
    Postgres(&'a str),
}

impl AgentConfig {
    /// The store `store` and `sqlite_path` name, or why they cannot be used together (both
    /// given) or `store` is not understood. The error never repeats the URL (it may hold a
    /// password).
    pub fn store_choice(&self) -> Result<StoreChoice<'_>, String> {
        let store = self.store.as_deref().map(str::trim);
        match (store, &self.sqlite_path) {
            (None, None) => Ok(StoreChoice::Memory),
            (None, Some(p)) => Ok(StoreChoice::Sqlite(p)),
            (Some(s), sqlite) => {
                let postgres = s.starts_with("postgres://") || s.starts_with("postgresql://");
                if !postgres && s != "memory" {
                    // The scheme only: the rest of a URL may hold a password.
                    let what = match s.split_once("://") {
                        Some((scheme, _)) => format!("a {scheme}:// URL"),
                        None => "a path or another name".to_owned(),
                    };
                    return Err(format!(
                        "store must be a postgres:// (or postgresql://) URL or `memory`, not \
                         {what}; a SQLite file is named by sqlite_path"
                    ));
                }
                if sqlite.is_some() {
                    return Err(format!(
                        "store (A2A_AGENT_STORE, --store) and sqlite_path (A2A_AGENT_SQLITE_PATH, \
                         --sqlite-path) are both set: tasks live in one store; keep {}",
                        if postgres {
                            "store for PostgreSQL, or sqlite_path alone for SQLite"
                        } else {
                            "sqlite_path alone for SQLite, or store = \"memory\" alone"
                        }
                    ));
                }
                Ok(if postgres {
                    StoreChoice::Postgres(s)
                } else {
                    StoreChoice::Memory
                })
            }
        }
    }
}
