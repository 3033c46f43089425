//! Sealed push callbacks: the caller's webhooks, which peers never see.

use rusqlite::{OptionalExtension, params};

use super::{CachedExt, PushCallback, Store, StoreError, now};

impl Store {
    /// Stores a sealed push callback.
    pub fn insert_push_callback(&self, cb: &PushCallback) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "INSERT INTO push_callbacks(callback_id, workspace_id, agent_id, task_id, config_id,
                   url, token, auth_scheme, auth_credentials, caller_version, peer_version,
                   notify_token, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    cb.callback_id,
                    cb.workspace_id,
                    cb.agent_id,
                    cb.task_id,
                    cb.config_id,
                    cb.url,
                    cb.token,
                    cb.auth_scheme,
                    cb.auth_credentials,
                    cb.caller_version,
                    cb.peer_version,
                    cb.notify_token,
                    now()
                ],
            )?;
            Ok(())
        })
    }

    /// Records the task id and/or config id the peer answered for a callback (None: unchanged).
    pub fn update_push_callback(
        &self,
        callback_id: &str,
        task_id: Option<&str>,
        config_id: Option<&str>,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "UPDATE push_callbacks SET task_id = COALESCE(?2, task_id),
                   config_id = COALESCE(?3, config_id) WHERE callback_id = ?1",
                params![callback_id, task_id, config_id],
            )?;
            Ok(())
        })
    }

    /// One sealed push callback.
    pub fn push_callback(&self, callback_id: &str) -> Result<Option<PushCallback>, StoreError> {
        self.with(|c| {
            Ok(c.query_row_cached(
                "SELECT callback_id, workspace_id, agent_id, task_id, config_id, url, token,
                   auth_scheme, auth_credentials, caller_version, peer_version, notify_token
                 FROM push_callbacks WHERE callback_id = ?1",
                params![callback_id],
                |r| {
                    Ok(PushCallback {
                        callback_id: r.get(0)?,
                        workspace_id: r.get(1)?,
                        agent_id: r.get(2)?,
                        task_id: r.get(3)?,
                        config_id: r.get(4)?,
                        url: r.get(5)?,
                        token: r.get(6)?,
                        auth_scheme: r.get(7)?,
                        auth_credentials: r.get(8)?,
                        caller_version: r.get(9)?,
                        peer_version: r.get(10)?,
                        notify_token: r.get(11)?,
                    })
                },
            )
            .optional()?)
        })
    }

    /// Removes the sealed callbacks of a push config (`config_id` None: of every config of
    /// the task); returns how many were removed.
    pub fn delete_push_callbacks(
        &self,
        workspace_id: &str,
        agent_id: &str,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        self.with(|c| {
            Ok(c.execute_cached(
                "DELETE FROM push_callbacks WHERE workspace_id = ?1 AND agent_id = ?2
                   AND task_id = ?3 AND (?4 IS NULL OR config_id = ?4)",
                params![workspace_id, agent_id, task_id, config_id],
            )?)
        })
    }

    /// Marks a body as delivered for a callback; false when it already was (a duplicate).
    pub fn mark_push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            Ok(c.execute_cached(
                "INSERT OR IGNORE INTO push_delivered(callback_id, body_hash, delivered_at)
                 VALUES (?1, ?2, ?3)",
                params![callback_id, hash, now()],
            )? == 1)
        })
    }

    /// Whether a body was already delivered for a callback.
    pub fn push_delivered(&self, callback_id: &str, hash: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            Ok(c.query_row_cached(
                "SELECT 1 FROM push_delivered WHERE callback_id = ?1 AND body_hash = ?2",
                params![callback_id, hash],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
        })
    }
}
