//! Where governance settings live: [`GovStore`] (a trait, so that a PostgreSQL store can follow)
//! and its SQLite implementation over the gateway's database, [`SqliteGov`].
//!
//! Documents are kept as the JSON text the admin API validated; the trait has no SQLite types.

use rusqlite::{OptionalExtension, params};

use crate::{store::Store, store::StoreError};

/// A killed context or task.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kill {
    /// Workspace.
    pub workspace_id: String,
    /// `context` or `task`.
    pub kind: String,
    /// The context id or task id.
    pub id: String,
    /// The agent the task runs at (for canceling it), when known.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The operator's reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Unix seconds.
    #[serde(default)]
    pub killed_at: i64,
}

/// Governance settings storage, per workspace.
pub trait GovStore: Send + Sync {
    /// The workspace's policy document (JSON text), if any.
    fn policy(&self, workspace: &str) -> Result<Option<String>, StoreError>;
    /// Stores (replaces) the workspace's policy document.
    fn put_policy(&self, workspace: &str, document: &str) -> Result<(), StoreError>;
    /// Removes the workspace's policy; false when it had none.
    fn delete_policy(&self, workspace: &str) -> Result<bool, StoreError>;
    /// The workspace's PII rules (JSON text of [`crate::pii::PiiRules`]), if any.
    fn pii_rules(&self, workspace: &str) -> Result<Option<String>, StoreError>;
    /// Stores (replaces) the workspace's PII rules.
    fn put_pii_rules(&self, workspace: &str, rules: &str) -> Result<(), StoreError>;
    /// Removes the workspace's PII rules (PII scanning off); false when it had none.
    fn delete_pii_rules(&self, workspace: &str) -> Result<bool, StoreError>;
    /// The workspace's kills.
    fn kills(&self, workspace: &str) -> Result<Vec<Kill>, StoreError>;
    /// Records a kill (idempotent).
    fn add_kill(&self, kill: &Kill) -> Result<(), StoreError>;
}

/// [`GovStore`] over the gateway's SQLite store.
#[derive(Clone)]
pub struct SqliteGov {
    store: Store,
}

impl SqliteGov {
    /// Governance storage in `store`'s database.
    pub fn new(store: Store) -> SqliteGov {
        SqliteGov { store }
    }

    fn exists(&self, workspace: &str) -> Result<(), StoreError> {
        match self.store.workspace(workspace)? {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound(format!("workspace {workspace}"))),
        }
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl GovStore for SqliteGov {
    fn policy(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.store.with(|c| {
            Ok(c.query_row(
                "SELECT document FROM gov_policies WHERE workspace_id = ?1",
                params![workspace],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn put_policy(&self, workspace: &str, document: &str) -> Result<(), StoreError> {
        self.exists(workspace)?;
        self.store.with(|c| {
            c.execute(
                "INSERT INTO gov_policies(workspace_id, document, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(workspace_id) DO UPDATE SET document = ?2, updated_at = ?3",
                params![workspace, document, now()],
            )?;
            Ok(())
        })
    }

    fn delete_policy(&self, workspace: &str) -> Result<bool, StoreError> {
        self.store.with(|c| {
            Ok(c.execute(
                "DELETE FROM gov_policies WHERE workspace_id = ?1",
                params![workspace],
            )? > 0)
        })
    }

    fn pii_rules(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.store.with(|c| {
            Ok(c.query_row(
                "SELECT rules FROM gov_pii_rules WHERE workspace_id = ?1",
                params![workspace],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn put_pii_rules(&self, workspace: &str, rules: &str) -> Result<(), StoreError> {
        self.exists(workspace)?;
        self.store.with(|c| {
            c.execute(
                "INSERT INTO gov_pii_rules(workspace_id, rules, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(workspace_id) DO UPDATE SET rules = ?2, updated_at = ?3",
                params![workspace, rules, now()],
            )?;
            Ok(())
        })
    }

    fn delete_pii_rules(&self, workspace: &str) -> Result<bool, StoreError> {
        self.store.with(|c| {
            Ok(c.execute(
                "DELETE FROM gov_pii_rules WHERE workspace_id = ?1",
                params![workspace],
            )? > 0)
        })
    }

    fn kills(&self, workspace: &str) -> Result<Vec<Kill>, StoreError> {
        self.store.with(|c| {
            let mut st = c.prepare(
                "SELECT workspace_id, kind, id, agent_id, reason, killed_at FROM gov_kills
                 WHERE workspace_id = ?1 ORDER BY killed_at",
            )?;
            let rows = st.query_map(params![workspace], |r| {
                Ok(Kill {
                    workspace_id: r.get(0)?,
                    kind: r.get(1)?,
                    id: r.get(2)?,
                    agent_id: r.get(3)?,
                    reason: r.get(4)?,
                    killed_at: r.get(5)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    fn add_kill(&self, kill: &Kill) -> Result<(), StoreError> {
        self.exists(&kill.workspace_id)?;
        self.store.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO gov_kills(workspace_id, kind, id, agent_id, reason, killed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    kill.workspace_id,
                    kill.kind,
                    kill.id,
                    kill.agent_id,
                    kill.reason,
                    if kill.killed_at == 0 {
                        now()
                    } else {
                        kill.killed_at
                    }
                ],
            )?;
            Ok(())
        })
    }
}
