//! Governance documents on PostgreSQL (`gov_policies`, `gov_pii_rules`), on the registry's
//! pool and epoch ([`PgRegistry::gov_docs`]): a write moves the registry epoch by the tables'
//! triggers and notifies every replica; this replica moves its own epoch forward before the
//! write returns, so its next hop reads the change at once.

use super::GovDocStore;
use super::PgRegistry;
use super::pg::refused;
use crate::store::StoreError;

/// Policies and PII rules on PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub struct PgGovDocs {
    registry: PgRegistry,
}

impl PgRegistry {
    /// The governance documents on this registry's pool, read at its epoch.
    pub fn gov_docs(&self) -> PgGovDocs {
        PgGovDocs {
            registry: self.clone(),
        }
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl PgGovDocs {
    async fn read(&self, sql: &str, workspace: &str) -> Result<Option<String>, StoreError> {
        let rows = self.registry.query(sql, &[&workspace]).await?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    async fn write(&self, sql: &str, workspace: &str, text: &str) -> Result<(), StoreError> {
        let missing = format!("workspace {workspace}");
        let r = self
            .registry
            .execute_or(sql, &[&workspace, &text, &now()], |e| {
                refused(e, "document", &missing)
            })
            .await;
        self.registry.changed().await;
        r.map(|_| ())
    }

    async fn delete(&self, sql: &str, workspace: &str) -> Result<bool, StoreError> {
        let n = self.registry.execute(sql, &[&workspace]).await?;
        self.registry.changed().await;
        Ok(n > 0)
    }
}

impl GovDocStore for PgGovDocs {
    async fn policy(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.read(
            "SELECT document FROM gov_policies WHERE workspace_id = $1",
            workspace,
        )
        .await
    }

    async fn put_policy(&self, workspace: &str, document: &str) -> Result<(), StoreError> {
        self.write(
            "INSERT INTO gov_policies(workspace_id, document, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (workspace_id) DO UPDATE SET document = $2, updated_at = $3",
            workspace,
            document,
        )
        .await
    }

    async fn delete_policy(&self, workspace: &str) -> Result<bool, StoreError> {
        self.delete(
            "DELETE FROM gov_policies WHERE workspace_id = $1",
            workspace,
        )
        .await
    }

    async fn pii_rules(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.read(
            "SELECT rules FROM gov_pii_rules WHERE workspace_id = $1",
            workspace,
        )
        .await
    }

    async fn put_pii_rules(&self, workspace: &str, rules: &str) -> Result<(), StoreError> {
        self.write(
            "INSERT INTO gov_pii_rules(workspace_id, rules, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (workspace_id) DO UPDATE SET rules = $2, updated_at = $3",
            workspace,
            rules,
        )
        .await
    }

    async fn delete_pii_rules(&self, workspace: &str) -> Result<bool, StoreError> {
        self.delete(
            "DELETE FROM gov_pii_rules WHERE workspace_id = $1",
            workspace,
        )
        .await
    }

    async fn epoch(&self) -> Result<Option<i64>, StoreError> {
        self.registry.version(None).await.map(Some)
    }
}
