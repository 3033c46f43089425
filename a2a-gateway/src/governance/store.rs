//! Where governance settings live: [`GovStore`] (a trait, so that a PostgreSQL store can follow)
//! and its SQLite implementation over the gateway's database, [`SqliteGov`].
//!
//! Documents are kept as the JSON text the admin API validated; the trait has no SQLite types.

use rusqlite::{OptionalExtension, params};

use crate::{store::Store, store::StoreError};

/// A killed context or task (kept with the approvals, [`crate::store::backend::HoldStore`]).
pub use crate::store::backend::Kill;

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
}
