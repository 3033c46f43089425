//! Per-workspace settings (issue 15): one JSON document per workspace, named by the settings'
//! DVARA keys (`a2a.extensions.allowed`, `a2a.push.delivery`). Read on every hop through the
//! registry cache (exact: cleared on writes, and on another process's change by the registry
//! epoch, see `super::cache`).

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::rules::{settings_document, settings_of};
use super::sql::CachedExt;
use super::{Store, StoreError};

/// Migration of the settings table (applied with the store's migrations).
pub const MIGRATION: &str = r#"
    CREATE TABLE workspace_settings (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        document TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    );
"#;

/// How a workspace's push configs are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PushDelivery {
    /// The caller's config goes to the peer as given: the peer posts to the caller's webhook.
    Direct,
    /// The gateway seals the caller's webhook and gives the peer its own callback
    /// (`push_callback_base_url` must be set).
    Gateway,
}

/// The settings of one workspace (absent members: the defaults).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceSettings {
    /// Extension URIs the workspace may use (`a2a.extensions.allowed`; empty: none).
    #[serde(
        rename = "a2a.extensions.allowed",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions_allowed: Vec<String>,
    /// Push delivery (`a2a.push.delivery`); unset: direct when the deprecated fleet-wide
    /// `push_direct_workspaces` lists the workspace, else through the gateway.
    #[serde(
        rename = "a2a.push.delivery",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub push_delivery: Option<PushDelivery>,
}

impl WorkspaceSettings {
    /// Whether the workspace allows extension `uri`.
    pub fn allows_extension(&self, uri: &str) -> bool {
        self.extensions_allowed.iter().any(|u| u == uri)
    }
}

impl Store {
    /// The settings of a workspace (the defaults when it has none stored).
    pub fn workspace_settings(&self, workspace_id: &str) -> Result<WorkspaceSettings, StoreError> {
        self.workspace_settings_seen(workspace_id, None)
    }

    /// [`Store::workspace_settings`] as of registry version `seen` (see
    /// [`super::Principal::registry_version`]).
    pub fn workspace_settings_seen(
        &self,
        workspace_id: &str,
        seen: Option<i64>,
    ) -> Result<WorkspaceSettings, StoreError> {
        self.with(|c| {
            let mut cached = self.cache.current_seen(c, seen)?;
            if let Some(s) = cached.settings.get(workspace_id) {
                return Ok(s.clone());
            }
            let doc: Option<String> = c
                .query_row_cached(
                    "SELECT document FROM workspace_settings WHERE workspace_id = ?1",
                    params![workspace_id],
                    |r| r.get(0),
                )
                .optional()?;
            let s = settings_of(workspace_id, doc.as_deref())?;
            cached.make_room();
            cached.settings.insert(workspace_id.to_owned(), s.clone());
            Ok(s)
        })
    }

    /// Replaces the settings of an existing workspace.
    pub fn put_workspace_settings(
        &self,
        workspace_id: &str,
        settings: &WorkspaceSettings,
    ) -> Result<(), StoreError> {
        let doc = settings_document(settings)?;
        self.with_write(|c| {
            let exists = c
                .query_row_cached(
                    "SELECT 1 FROM workspaces WHERE id = ?1",
                    params![workspace_id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if !exists {
                return Err(StoreError::NotFound(format!("workspace {workspace_id}")));
            }
            c.execute_cached(
                "INSERT INTO workspace_settings(workspace_id, document, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(workspace_id) DO UPDATE SET document = ?2, updated_at = ?3",
                params![workspace_id, doc, super::now()],
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_defaults() {
        let s = Store::open_in_memory().unwrap();
        s.create_workspace("w", "W").unwrap();
        assert_eq!(
            s.workspace_settings("w").unwrap(),
            WorkspaceSettings::default()
        );
        let set = WorkspaceSettings {
            extensions_allowed: vec!["urn:x:a".into()],
            push_delivery: Some(PushDelivery::Direct),
        };
        s.put_workspace_settings("w", &set).unwrap();
        assert_eq!(s.workspace_settings("w").unwrap(), set);
        assert!(
            s.workspace_settings("w")
                .unwrap()
                .allows_extension("urn:x:a")
        );
        assert!(matches!(
            s.put_workspace_settings("nope", &set),
            Err(StoreError::NotFound(_))
        ));
        let bad = WorkspaceSettings {
            extensions_allowed: vec!["a,b".into()],
            push_delivery: None,
        };
        assert!(matches!(
            s.put_workspace_settings("w", &bad),
            Err(StoreError::Invalid(_))
        ));
        let json = serde_json::to_value(&set).unwrap();
        assert_eq!(json["a2a.extensions.allowed"][0], "urn:x:a");
        assert_eq!(json["a2a.push.delivery"], "direct");
    }
}
