//! The registry on PostgreSQL, continued: API keys (see `pg` for the cache and the epoch).
//! Key rows are cached as stored, so authentication still hashes the presented key, compares
//! digests in constant time and checks expiry on every request (`rules::judge_key`).

use super::super::rules::{KeyRow, judge_key, standing};
use super::super::{KeyInfo, KeyRejection, Principal, StoreError, now};
use super::pg::{PgRegistry, refused};
use crate::keys::{self, Scope};

const KEY: &str =
    "SELECT workspace_id, hash, scopes, expires_at, revoked_at FROM api_keys WHERE key_id = $1";

impl PgRegistry {
    pub(super) async fn new_key(
        &self,
        workspace_id: &str,
        scopes: &[Scope],
        label: Option<&str>,
        expires_at: Option<i64>,
    ) -> Result<(KeyInfo, String), StoreError> {
        let missing = format!("workspace {workspace_id}");
        if !self.exists(workspace_id).await? {
            return Err(StoreError::NotFound(missing));
        }
        let generated = keys::generate().map_err(StoreError::Invalid)?;
        let created = now();
        self.execute_or(
            "INSERT INTO api_keys(key_id, workspace_id, hash, scopes, label, created_at,
               expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &generated.key_id,
                &workspace_id,
                &generated.hash.as_slice(),
                &keys::scopes_to_string(scopes),
                &label,
                &created,
                &expires_at,
            ],
            |e| refused(e, &format!("key {}", generated.key_id), &missing),
        )
        .await?;
        self.changed().await;
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

    pub(super) async fn keys_of(&self, workspace_id: &str) -> Result<Vec<KeyInfo>, StoreError> {
        let rows = self
            .query(
                "SELECT key_id, workspace_id, scopes, label, created_at, expires_at, revoked_at
                 FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, key_id COLLATE \"C\"",
                &[&workspace_id],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| KeyInfo {
                key_id: r.get(0),
                workspace_id: r.get(1),
                scopes: keys::parse_scopes(r.get(2)).unwrap_or_default(),
                label: r.get(3),
                created_at: r.get(4),
                expires_at: r.get(5),
                revoked_at: r.get(6),
            })
            .collect())
    }

    pub(super) async fn revoke(&self, key_id: &str) -> Result<(), StoreError> {
        let n = self
            .execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE key_id = $1",
                &[&key_id, &now()],
            )
            .await?;
        self.changed().await;
        if n == 0 {
            return Err(StoreError::NotFound(format!("key {key_id}")));
        }
        Ok(())
    }

    pub(super) async fn judge(
        &self,
        presented: &str,
    ) -> Result<Result<Principal, KeyRejection>, StoreError> {
        let Some(key_id) = keys::key_id_of(presented) else {
            return Ok(Err(KeyRejection::Invalid));
        };
        let v = self.version(None).await?;
        let row = match self.lookup(v, |r| r.keys.get(key_id).cloned())? {
            Some(k) => Some(k),
            None => {
                let k = self.key_row(key_id).await?;
                // Unknown ids are not cached: nobody grows the map with guesses.
                if let Some(k) = &k {
                    self.remember(v, |r| {
                        r.keys.insert(key_id.to_owned(), k.clone());
                    })?;
                }
                k
            }
        };
        Ok(judge_key(presented, key_id, row, Some(v)))
    }

    pub(super) async fn standing_of(
        &self,
        key_id: &str,
    ) -> Result<Option<KeyRejection>, StoreError> {
        let v = self.version(None).await?;
        let row = match self.lookup(v, |r| r.keys.get(key_id).cloned())? {
            Some(k) => Some(k),
            None => self.key_row(key_id).await?,
        };
        Ok(standing(row.as_ref()))
    }

    async fn key_row(&self, key_id: &str) -> Result<Option<KeyRow>, StoreError> {
        Ok(self.query(KEY, &[&key_id]).await?.first().map(|r| {
            (
                r.get(0),
                r.get::<_, Vec<u8>>(1),
                r.get(2),
                r.get(3),
                r.get(4),
            )
        }))
    }
}
