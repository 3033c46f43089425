//! Workspaces, registered agents and workspace API keys (admin changes clear the registry
//! cache; reads on the hop path go through it).

use rusqlite::{OptionalExtension, params};

use super::rules::{
    KeyRow, agent_of, check_agent, check_workspace_id, judge_key, standing, workspace_exists,
};
use super::{
    Agent, CachedExt, KeyInfo, KeyRejection, Principal, Store, StoreError, Workspace, now,
};
use crate::{keys, keys::Scope};

impl Store {
    /// Creates a workspace.
    pub fn create_workspace(&self, id: &str, name: &str) -> Result<Workspace, StoreError> {
        check_workspace_id(id)?;
        self.with_write(|c| {
            let n = c.execute_cached(
                "INSERT OR IGNORE INTO workspaces(id, name, created_at) VALUES (?1, ?2, ?3)",
                params![id, name, now()],
            )?;
            if n == 0 {
                return Err(workspace_exists(id));
            }
            Ok(())
        })?;
        self.workspace(id)?
            .ok_or_else(|| StoreError::NotFound(format!("workspace {id}")))
    }

    /// Reads a workspace.
    pub fn workspace(&self, id: &str) -> Result<Option<Workspace>, StoreError> {
        self.workspace_seen(id, None)
    }

    /// [`Store::workspace`] as of registry version `seen` (see [`Principal::registry_version`]).
    pub fn workspace_seen(
        &self,
        id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Workspace>, StoreError> {
        self.with(|c| {
            let mut cached = self.cache.current_seen(c, seen)?;
            if let Some(w) = cached.workspaces.get(id) {
                return Ok(w.clone());
            }
            let w = c.query_row_cached(
                "SELECT id, name, max_response_bytes, max_stream_bytes, max_card_bytes FROM workspaces WHERE id = ?1",
                params![id],
                |r| {
                    Ok(Workspace {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        max_response_bytes: r.get::<_, Option<i64>>(2)?.map(|v| v as u64),
                        max_stream_bytes: r.get::<_, Option<i64>>(3)?.map(|v| v as u64),
                        max_card_bytes: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                    })
                },
            )
            .optional()?;
            cached.make_room();
            cached.workspaces.insert(id.to_owned(), w.clone());
            Ok(w)
        })
    }

    /// Lists workspaces.
    pub fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        let ids: Vec<String> = self.with(|c| {
            let mut st = c.prepare_cached("SELECT id FROM workspaces ORDER BY id")?;
            let rows = st.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(w) = self.workspace(&id)? {
                out.push(w);
            }
        }
        Ok(out)
    }

    /// Sets (or clears, with `None`) the per-workspace response limits.
    pub fn set_workspace_limits(
        &self,
        id: &str,
        max_response_bytes: Option<u64>,
        max_stream_bytes: Option<u64>,
        max_card_bytes: Option<u64>,
    ) -> Result<(), StoreError> {
        self.with_write(|c| {
            let n = c.execute_cached(
                "UPDATE workspaces SET max_response_bytes = ?2, max_stream_bytes = ?3, max_card_bytes = ?4 WHERE id = ?1",
                params![
                    id,
                    max_response_bytes.map(|v| v as i64),
                    max_stream_bytes.map(|v| v as i64),
                    max_card_bytes.map(|v| v as i64)
                ],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("workspace {id}")));
            }
            Ok(())
        })
    }

    /// Registers (or replaces) an agent in a workspace.
    pub fn upsert_agent(&self, agent: &Agent) -> Result<(), StoreError> {
        let skills = check_agent(agent)?;
        if self.workspace(&agent.workspace_id)?.is_none() {
            return Err(StoreError::NotFound(format!(
                "workspace {}",
                agent.workspace_id
            )));
        }
        self.with_write(|c| {
            c.execute_cached(
                "INSERT INTO agents(workspace_id, agent_id, endpoint, credential, skill_allow, pinned_card_key, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(workspace_id, agent_id) DO UPDATE SET endpoint = excluded.endpoint,
                   credential = excluded.credential, skill_allow = excluded.skill_allow,
                   pinned_card_key = excluded.pinned_card_key",
                params![
                    agent.workspace_id,
                    agent.agent_id,
                    agent.endpoint,
                    agent.credential,
                    skills,
                    agent.pinned_card_key,
                    now()
                ],
            )?;
            Ok(())
        })
    }

    /// Looks an agent up inside a workspace. An agent of another workspace is `None`, like a
    /// missing one.
    pub fn agent(&self, workspace_id: &str, agent_id: &str) -> Result<Option<Agent>, StoreError> {
        self.agent_seen(workspace_id, agent_id, None)
    }

    /// [`Store::agent`] as of registry version `seen` (see [`Principal::registry_version`]).
    pub fn agent_seen(
        &self,
        workspace_id: &str,
        agent_id: &str,
        seen: Option<i64>,
    ) -> Result<Option<Agent>, StoreError> {
        self.with(|c| {
            let mut cached = self.cache.current_seen(c, seen)?;
            let key = (workspace_id.to_owned(), agent_id.to_owned());
            if let Some(a) = cached.agents.get(&key) {
                return Ok(a.clone());
            }
            let a = c
                .query_row_cached(
                    "SELECT workspace_id, agent_id, endpoint, credential, skill_allow, pinned_card_key
                     FROM agents WHERE workspace_id = ?1 AND agent_id = ?2",
                    params![workspace_id, agent_id],
                    row_agent,
                )
                .optional()?;
            cached.make_room();
            cached.agents.insert(key, a.clone());
            Ok(a)
        })
    }

    /// Lists the agents of a workspace.
    pub fn list_agents(&self, workspace_id: &str) -> Result<Vec<Agent>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT workspace_id, agent_id, endpoint, credential, skill_allow, pinned_card_key
                 FROM agents WHERE workspace_id = ?1 ORDER BY agent_id",
            )?;
            let rows = st.query_map(params![workspace_id], row_agent)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Removes an agent registration.
    pub fn delete_agent(&self, workspace_id: &str, agent_id: &str) -> Result<(), StoreError> {
        self.with_write(|c| {
            let n = c.execute_cached(
                "DELETE FROM agents WHERE workspace_id = ?1 AND agent_id = ?2",
                params![workspace_id, agent_id],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("agent {agent_id}")));
            }
            Ok(())
        })
    }

    /// Creates an API key. Returns the metadata and the secret key, which is shown only once
    /// (only its SHA-256 is stored).
    pub fn create_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> Result<(KeyInfo, String), StoreError> {
        if self.workspace(workspace_id)?.is_none() {
            return Err(StoreError::NotFound(format!("workspace {workspace_id}")));
        }
        let generated = keys::generate().map_err(StoreError::Invalid)?;
        let scopes_s = keys::scopes_to_string(scopes);
        let created = now();
        self.with_write(|c| {
            c.execute_cached(
                "INSERT INTO api_keys(key_id, workspace_id, hash, scopes, label, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    generated.key_id,
                    workspace_id,
                    generated.hash.to_vec(),
                    scopes_s,
                    label,
                    created,
                    expires_at
                ],
            )?;
            Ok(())
        })?;
        Ok((
            KeyInfo {
                key_id: generated.key_id,
                workspace_id: workspace_id.to_owned(),
                scopes: scopes.to_vec(),
                label: label.map(str::to_owned),
                created_at: created,
                expires_at,
                revoked_at: None,
            },
            generated.secret,
        ))
    }

    /// Lists the keys of a workspace (metadata only).
    pub fn list_keys(&self, workspace_id: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT key_id, workspace_id, scopes, label, created_at, expires_at, revoked_at
                 FROM api_keys WHERE workspace_id = ?1 ORDER BY created_at, key_id",
            )?;
            let rows = st.query_map(params![workspace_id], |r| {
                Ok(KeyInfo {
                    key_id: r.get(0)?,
                    workspace_id: r.get(1)?,
                    scopes: keys::parse_scopes(&r.get::<_, String>(2)?).unwrap_or_default(),
                    label: r.get(3)?,
                    created_at: r.get(4)?,
                    expires_at: r.get(5)?,
                    revoked_at: r.get(6)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Revokes a key (idempotent).
    pub fn revoke_key(&self, key_id: &str) -> Result<(), StoreError> {
        self.with_write(|c| {
            let n = c.execute_cached(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?2) WHERE key_id = ?1",
                params![key_id, now()],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("key {key_id}")));
            }
            Ok(())
        })
    }

    /// Authenticates a presented bearer key: constant-time comparison of SHA-256 digests.
    pub fn authenticate(
        &self,
        presented: &str,
    ) -> Result<Result<Principal, KeyRejection>, StoreError> {
        let Some(key_id) = keys::key_id_of(presented) else {
            return Ok(Err(KeyRejection::Invalid));
        };
        let mut registry_version = None;
        let row: Option<KeyRow> = self.with(|c| {
            let mut cached = self.cache.current(c)?;
            registry_version = cached.version();
            if let Some(k) = cached.keys.get(key_id) {
                return Ok(Some(k.clone()));
            }
            let k: Option<KeyRow> = c
                .query_row_cached(
                    "SELECT workspace_id, hash, scopes, expires_at, revoked_at FROM api_keys WHERE key_id = ?1",
                    params![key_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()?;
            if let Some(k) = &k {
                cached.make_room();
                cached.keys.insert(key_id.to_owned(), k.clone());
            }
            Ok(k)
        })?;
        Ok(judge_key(presented, key_id, row, registry_version))
    }
}

impl Store {
    /// Whether the key `key_id` still stands (`Ok(None)`), or why not: revoked, expired, or
    /// gone (`Invalid`). Read like [`Store::authenticate`] (the registry cache, then the
    /// table), without a presented secret: for hops already authenticated whose key may have
    /// been revoked or expired since (open streams, held sends).
    pub fn key_standing(&self, key_id: &str) -> Result<Option<KeyRejection>, StoreError> {
        let row: Option<KeyRow> = self.with(|c| {
            let cached = self.cache.current(c)?;
            if let Some(k) = cached.keys.get(key_id) {
                return Ok(Some(k.clone()));
            }
            drop(cached);
            Ok(c.query_row_cached(
                "SELECT workspace_id, hash, scopes, expires_at, revoked_at FROM api_keys WHERE key_id = ?1",
                params![key_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?)
        })?;
        Ok(standing(row.as_ref()))
    }
}

fn row_agent(r: &rusqlite::Row<'_>) -> rusqlite::Result<Agent> {
    Ok(agent_of(
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}
