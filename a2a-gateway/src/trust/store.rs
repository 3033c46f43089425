//! Where trust settings live: the gateway's own card signing keys (private keys sealed, see
//! [`super::own`]), each workspace's "require signed cards" switch, the push JWT ids already
//! used, and the audit column with a card's trust state.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::{store::Store, store::StoreError};

/// A card signing key as listed (never the private key).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeyInfo {
    /// Key id (the signatures' `kid`).
    pub kid: String,
    /// Algorithm (`ES256`).
    pub alg: String,
    /// The public key (JWK).
    pub public_jwk: serde_json::Value,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Retirement time, Unix seconds (`None`: active).
    pub retired_at: Option<i64>,
    /// `active` (signs cards when it is the newest active key) or `retired` (listed in the key
    /// set until its grace period ends).
    pub state: &'static str,
}

pub(crate) fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn info(r: &rusqlite::Row<'_>) -> rusqlite::Result<SigningKeyInfo> {
    let retired_at: Option<i64> = r.get(4)?;
    Ok(SigningKeyInfo {
        kid: r.get(0)?,
        alg: r.get(1)?,
        public_jwk: serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or_default(),
        created_at: r.get(3)?,
        retired_at,
        state: if retired_at.is_some() {
            "retired"
        } else {
            "active"
        },
    })
}

/// Every signing key, newest first.
pub fn list_keys(store: &Store) -> Result<Vec<SigningKeyInfo>, StoreError> {
    store.with(|c| {
        let mut s = c.prepare_cached(
            "SELECT kid, alg, public_jwk, created_at, retired_at FROM card_signing_keys
             ORDER BY created_at DESC, rowid DESC",
        )?;
        let rows = s.query_map([], info)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    })
}

/// Adds a key.
pub fn insert_key(
    store: &Store,
    kid: &str,
    public_jwk: &serde_json::Value,
    sealed: &[u8],
) -> Result<(), StoreError> {
    store.with(|c| {
        c.execute(
            "INSERT INTO card_signing_keys(kid, alg, public_jwk, sealed_private, created_at)
             VALUES (?1, 'ES256', ?2, ?3, ?4)",
            params![kid, public_jwk.to_string(), sealed, now()],
        )?;
        Ok(())
    })
}

/// Retires a key (idempotent); `NotFound` for an unknown kid.
pub fn retire_key(store: &Store, kid: &str) -> Result<(), StoreError> {
    store.with(|c| {
        let n = c.execute(
            "UPDATE card_signing_keys SET retired_at = COALESCE(retired_at, ?2) WHERE kid = ?1",
            params![kid, now()],
        )?;
        if n == 0 {
            return Err(StoreError::NotFound(format!("signing key {kid}")));
        }
        Ok(())
    })
}

/// Retires every active key but `keep`.
pub fn retire_others(store: &Store, keep: &str) -> Result<(), StoreError> {
    store.with(|c| {
        c.execute(
            "UPDATE card_signing_keys SET retired_at = ?2 WHERE kid != ?1 AND retired_at IS NULL",
            params![keep, now()],
        )?;
        Ok(())
    })
}

/// The newest active key: its kid and sealed private key.
pub fn signing_key(store: &Store) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    store.with(|c| {
        Ok(c.query_row(
            "SELECT kid, sealed_private FROM card_signing_keys WHERE retired_at IS NULL
             ORDER BY created_at DESC, rowid DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
    })
}

/// The workspace's "require signed cards" switch (`None`: not set, the fleet setting decides).
pub fn require_signed(store: &Store, workspace: &str) -> Result<Option<bool>, StoreError> {
    store.with(|c| {
        Ok(c.query_row(
            "SELECT require_signed_cards FROM workspace_card_trust WHERE workspace_id = ?1",
            params![workspace],
            |r| r.get::<_, bool>(0),
        )
        .optional()?)
    })
}

/// Sets (or with `None` clears) the workspace's switch.
pub fn set_require_signed(
    store: &Store,
    workspace: &str,
    on: Option<bool>,
) -> Result<(), StoreError> {
    if store.workspace(workspace)?.is_none() {
        return Err(StoreError::NotFound(format!("workspace {workspace}")));
    }
    store.with(|c| {
        match on {
            Some(v) => c.execute(
                "INSERT INTO workspace_card_trust(workspace_id, require_signed_cards) VALUES (?1, ?2)
                 ON CONFLICT(workspace_id) DO UPDATE SET require_signed_cards = excluded.require_signed_cards",
                params![workspace, v],
            )?,
            None => c.execute(
                "DELETE FROM workspace_card_trust WHERE workspace_id = ?1",
                params![workspace],
            )?,
        };
        Ok(())
    })
}

/// Records a push JWT id of `issuer` until `expires_at`; false when it was already used.
pub fn use_jti(
    store: &Store,
    issuer: &str,
    jti: &str,
    expires_at: i64,
) -> Result<bool, StoreError> {
    store.with(|c| {
        c.execute(
            "DELETE FROM push_jwt_seen WHERE expires_at < ?1",
            params![now() - 60],
        )?;
        let n = c.execute(
            "INSERT OR IGNORE INTO push_jwt_seen(issuer, jti, expires_at) VALUES (?1, ?2, ?3)",
            params![issuer, jti, expires_at],
        )?;
        Ok(n == 1)
    })
}
