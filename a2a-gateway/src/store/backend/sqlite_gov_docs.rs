//! Governance documents on the embedded SQLite file (`gov_policies`, `gov_pii_rules`): each
//! call runs to completion on the caller's thread, as the gateway always read them.

use rusqlite::{OptionalExtension, params};

use super::GovDocStore;
use crate::store::{Store, StoreError};

/// Policies and PII rules on a SQLite [`Store`]. Cheap to clone.
#[derive(Clone)]
pub struct SqliteGovDocs {
    store: Store,
}

impl SqliteGovDocs {
    /// The governance documents in `store`'s database.
    pub fn new(store: Store) -> SqliteGovDocs {
        SqliteGovDocs { store }
    }

    fn exists(&self, workspace: &str) -> Result<(), StoreError> {
        match self.store.workspace(workspace)? {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound(format!("workspace {workspace}"))),
        }
    }

    fn read(&self, sql: &str, workspace: &str) -> Result<Option<String>, StoreError> {
        self.store.with(|c| {
            Ok(c.prepare_cached(sql)?
                .query_row(params![workspace], |r| r.get(0))
                .optional()?)
        })
    }

    fn delete(&self, sql: &str, workspace: &str) -> Result<bool, StoreError> {
        self.store
            .with(|c| Ok(c.execute(sql, params![workspace])? > 0))
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl GovDocStore for SqliteGovDocs {
    async fn policy(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.read(
            "SELECT document FROM gov_policies WHERE workspace_id = ?1",
            workspace,
        )
    }

    async fn put_policy(&self, workspace: &str, document: &str) -> Result<(), StoreError> {
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

    async fn delete_policy(&self, workspace: &str) -> Result<bool, StoreError> {
        self.delete(
            "DELETE FROM gov_policies WHERE workspace_id = ?1",
            workspace,
        )
    }

    async fn pii_rules(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.read(
            "SELECT rules FROM gov_pii_rules WHERE workspace_id = ?1",
            workspace,
        )
    }

    async fn put_pii_rules(&self, workspace: &str, rules: &str) -> Result<(), StoreError> {
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

    async fn delete_pii_rules(&self, workspace: &str) -> Result<bool, StoreError> {
        self.delete(
            "DELETE FROM gov_pii_rules WHERE workspace_id = ?1",
            workspace,
        )
    }

    async fn epoch(&self) -> Result<Option<i64>, StoreError> {
        Ok(None)
    }
}
