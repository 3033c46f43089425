//! The registry on PostgreSQL, continued: workspace settings (cached like the rest of the
//! registry, see `pg`) and sealed push callbacks with their delivered bodies (not cached:
//! read when a peer's notification arrives, not on every hop).

use super::super::rules::{settings_document, settings_of};
use super::super::{PushCallback, StoreError, WorkspaceSettings, now};
use super::pg::{PgRegistry, refused};

const CALLBACK: &str = "SELECT callback_id, workspace_id, agent_id, task_id, config_id, url, token,
    auth_scheme, auth_credentials, caller_version, peer_version, notify_token
    FROM push_callbacks WHERE callback_id = $1";

impl PgRegistry {
    pub(super) async fn settings_seen(
        &self,
        workspace_id: &str,
        seen: Option<i64>,
    ) -> Result<WorkspaceSettings, StoreError> {
        let v = self.version(seen).await?;
        if let Some(s) = self.lookup(v, |r| r.settings.get(workspace_id).cloned())? {
            return Ok(s);
        }
        let rows = self
            .query(
                "SELECT document FROM workspace_settings WHERE workspace_id = $1",
                &[&workspace_id],
            )
            .await?;
        let doc: Option<String> = rows.first().map(|r| r.get(0));
        let s = settings_of(workspace_id, doc.as_deref())?;
        self.remember(v, |r| {
            r.settings.insert(workspace_id.to_owned(), s.clone());
        })?;
        Ok(s)
    }

    pub(super) async fn put_settings(
        &self,
        workspace_id: &str,
        settings: &WorkspaceSettings,
    ) -> Result<(), StoreError> {
        let doc = settings_document(settings)?;
        let missing = format!("workspace {workspace_id}");
        // The workspace table itself, not the cache (as SQLite does).
        let exists = !self
            .query("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace_id])
            .await?
            .is_empty();
        if !exists {
            return Err(StoreError::NotFound(missing));
        }
        self.execute_or(
            "INSERT INTO workspace_settings(workspace_id, document, updated_at)
             VALUES ($1, $2, $3)
             ON CONFLICT (workspace_id) DO UPDATE SET document = EXCLUDED.document,
               updated_at = EXCLUDED.updated_at",
            &[&workspace_id, &doc, &now()],
            |e| refused(e, &format!("settings of {workspace_id}"), &missing),
        )
        .await?;
        self.changed().await;
        Ok(())
    }

    pub(super) async fn insert_callback(&self, cb: &PushCallback) -> Result<(), StoreError> {
        self.execute_or(
            "INSERT INTO push_callbacks(callback_id, workspace_id, agent_id, task_id, config_id,
               url, token, auth_scheme, auth_credentials, caller_version, peer_version,
               notify_token, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            &[
                &cb.callback_id,
                &cb.workspace_id,
                &cb.agent_id,
                &cb.task_id,
                &cb.config_id,
                &cb.url,
                &cb.token,
                &cb.auth_scheme,
                &cb.auth_credentials,
                &cb.caller_version,
                &cb.peer_version,
                &cb.notify_token,
                &now(),
            ],
            |e| {
                let what = format!("push callback {}", cb.callback_id);
                refused(e, &what, &what)
            },
        )
        .await?;
        Ok(())
    }

    pub(super) async fn update_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> Result<(), StoreError> {
        self.execute(
            "UPDATE push_callbacks SET task_id = COALESCE($2, task_id),
               config_id = COALESCE($3, config_id) WHERE callback_id = $1",
            &[&callback_id, &task_id, &config_id],
        )
        .await?;
        Ok(())
    }

    pub(super) async fn callback(
        &self,
        callback_id: &str,
    ) -> Result<Option<PushCallback>, StoreError> {
        Ok(self
            .query(CALLBACK, &[&callback_id])
            .await?
            .first()
            .map(|r| PushCallback {
                callback_id: r.get(0),
                workspace_id: r.get(1),
                agent_id: r.get(2),
                task_id: r.get(3),
                config_id: r.get(4),
                url: r.get(5),
                token: r.get(6),
                auth_scheme: r.get(7),
                auth_credentials: r.get(8),
                caller_version: r.get(9),
                peer_version: r.get(10),
                notify_token: r.get(11),
            }))
    }

    pub(super) async fn delete_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        let n = self
            .execute(
                "DELETE FROM push_callbacks WHERE workspace_id = $1 AND agent_id = $2
                   AND task_id = $3 AND ($4::TEXT IS NULL OR config_id = $4)",
                &[&workspace_id, &agent_id, &task_id, &config_id],
            )
            .await?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    pub(super) async fn mark_delivered(
        &self,
        callback_id: &str,
        hash: &str,
    ) -> Result<bool, StoreError> {
        let n = self
            .execute_or(
                "INSERT INTO push_delivered(callback_id, body_hash, delivered_at)
                 VALUES ($1, $2, $3) ON CONFLICT (callback_id, body_hash) DO NOTHING",
                &[&callback_id, &hash, &now()],
                |e| {
                    let what = format!("push callback {callback_id}");
                    refused(e, &what, &what)
                },
            )
            .await?;
        Ok(n == 1)
    }

    pub(super) async fn delivered(
        &self,
        callback_id: &str,
        hash: &str,
    ) -> Result<bool, StoreError> {
        Ok(!self
            .query(
                "SELECT 1 FROM push_delivered WHERE callback_id = $1 AND body_hash = $2",
                &[&callback_id, &hash],
            )
            .await?
            .is_empty())
    }
}
