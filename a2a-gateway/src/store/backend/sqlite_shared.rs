//! Secrets, console sessions and trust for one process (the SQLite gateway), as before the
//! traits: secrets are made per process (a restart makes a new page-token key, so page tokens
//! of the previous run are refused), sessions and login links live in the process's memory (a
//! restart logs every operator out), and the trust keys and switches are on the SQLite file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{OptionalExtension, params};

use super::super::{Store, StoreError};
use super::shared::{SecretStore, SessionInfo, SessionStore, SigningKeyInfo, TrustStore};
use crate::ids::random_hex;

/// Open sessions kept at most (the oldest is dropped past it), on both backends.
pub const MAX_SESSIONS: usize = 256;

/// Secrets and sessions in memory, trust on `store` (see the module doc). Cheap to clone;
/// clones share the memory.
#[derive(Clone)]
pub struct SqliteShared {
    store: Store,
    memory: Arc<Mutex<Memory>>,
}

#[derive(Default)]
struct Memory {
    secrets: HashMap<String, Vec<u8>>,
    sessions: HashMap<[u8; 32], (SessionInfo, Instant)>,
    links: HashMap<[u8; 32], Instant>,
}

impl SqliteShared {
    /// Memory for this process, trust on `store`.
    pub fn new(store: Store) -> SqliteShared {
        SqliteShared {
            store,
            memory: Arc::default(),
        }
    }

    /// The SQLite file the trust keys are on.
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn memory(&self) -> Result<std::sync::MutexGuard<'_, Memory>, StoreError> {
        self.memory.lock().map_err(|_| StoreError::Poisoned)
    }
}

impl SecretStore for SqliteShared {
    async fn secret(&self, name: &str) -> Result<Vec<u8>, StoreError> {
        let mut m = self.memory()?;
        Ok(m.secrets
            .entry(name.to_owned())
            .or_insert_with(|| random_hex(32).into_bytes())
            .clone())
    }
}

impl SessionStore for SqliteShared {
    async fn open_session(
        &self,
        id_hash: [u8; 32],
        info: &SessionInfo,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let now = Instant::now();
        let mut m = self.memory()?;
        m.sessions.retain(|_, s| s.1 > now);
        if m.sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = m.sessions.iter().min_by_key(|(_, s)| s.1).map(|(k, _)| *k)
        {
            m.sessions.remove(&oldest);
        }
        m.sessions.insert(id_hash, (info.clone(), now + ttl));
        Ok(())
    }

    async fn session(&self, id_hash: [u8; 32]) -> Result<Option<SessionInfo>, StoreError> {
        let m = self.memory()?;
        Ok(m.sessions
            .get(&id_hash)
            .filter(|s| s.1 > Instant::now())
            .map(|s| s.0.clone()))
    }

    async fn close_session(&self, id_hash: [u8; 32]) -> Result<(), StoreError> {
        self.memory()?.sessions.remove(&id_hash);
        Ok(())
    }

    fn login_token(&self, ttl: Duration) -> String {
        let token = random_hex(32);
        if let Ok(mut m) = self.memory() {
            let now = Instant::now();
            m.links.retain(|_, t| *t > now);
            m.links.insert(crate::keys::hash(&token), now + ttl);
        }
        token
    }

    async fn redeem(&self, token: &str) -> Result<bool, StoreError> {
        let mut m = self.memory()?;
        Ok(m.links
            .remove(&crate::keys::hash(token))
            .is_some_and(|t| t > Instant::now()))
    }
}

/// Unix seconds now.
pub(crate) fn now_secs() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn info(r: &rusqlite::Row<'_>) -> rusqlite::Result<SigningKeyInfo> {
    Ok(SigningKeyInfo::of(
        r.get(0)?,
        r.get(1)?,
        &r.get::<_, String>(2)?,
        r.get(3)?,
        r.get(4)?,
    ))
}

/// The trust statements on the SQLite file, called in place (also by the offline CLI).
impl Store {
    /// Every signing key, newest first.
    pub fn signing_keys(&self) -> Result<Vec<SigningKeyInfo>, StoreError> {
        self.with(|c| {
            let mut s = c.prepare_cached(
                "SELECT kid, alg, public_jwk, created_at, retired_at FROM card_signing_keys
                 ORDER BY created_at DESC, rowid DESC",
            )?;
            let rows = s.query_map([], info)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Adds a signing key.
    pub fn insert_signing_key(
        &self,
        kid: &str,
        public_jwk: &serde_json::Value,
        sealed: &[u8],
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO card_signing_keys(kid, alg, public_jwk, sealed_private, created_at)
                 VALUES (?1, 'ES256', ?2, ?3, ?4)",
                params![kid, public_jwk.to_string(), sealed, now_secs()],
            )?;
            Ok(())
        })
    }

    /// Retires a signing key (idempotent); `NotFound` for an unknown kid.
    pub fn retire_signing_key(&self, kid: &str) -> Result<(), StoreError> {
        self.with(|c| {
            let n = c.execute(
                "UPDATE card_signing_keys SET retired_at = COALESCE(retired_at, ?2) WHERE kid = ?1",
                params![kid, now_secs()],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(format!("signing key {kid}")));
            }
            Ok(())
        })
    }

    /// Retires every active signing key but `keep`.
    pub fn retire_other_keys(&self, keep: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE card_signing_keys SET retired_at = ?2 WHERE kid != ?1 AND retired_at IS NULL",
                params![keep, now_secs()],
            )?;
            Ok(())
        })
    }

    /// The newest active signing key: its kid and sealed private key.
    pub fn signing_key(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT kid, sealed_private FROM card_signing_keys WHERE retired_at IS NULL
                 ORDER BY created_at DESC, rowid DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
        })
    }

    /// The workspace's "require signed cards" switch (`None`: not set).
    pub fn require_signed(&self, workspace: &str) -> Result<Option<bool>, StoreError> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT require_signed_cards FROM workspace_card_trust WHERE workspace_id = ?1",
                params![workspace],
                |r| r.get::<_, bool>(0),
            )
            .optional()?)
        })
    }

    /// Sets (or with `None` clears) the workspace's switch.
    pub fn set_require_signed(&self, workspace: &str, on: Option<bool>) -> Result<(), StoreError> {
        if self.workspace(workspace)?.is_none() {
            return Err(StoreError::NotFound(format!("workspace {workspace}")));
        }
        self.with(|c| {
            match on {
                Some(v) => c.execute(
                    "INSERT INTO workspace_card_trust(workspace_id, require_signed_cards)
                     VALUES (?1, ?2) ON CONFLICT(workspace_id)
                     DO UPDATE SET require_signed_cards = excluded.require_signed_cards",
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
    pub fn use_jti(&self, issuer: &str, jti: &str, expires_at: i64) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM push_jwt_seen WHERE expires_at < ?1",
                params![now_secs() - 60],
            )?;
            let n = c.execute(
                "INSERT OR IGNORE INTO push_jwt_seen(issuer, jti, expires_at) VALUES (?1, ?2, ?3)",
                params![issuer, jti, expires_at],
            )?;
            Ok(n == 1)
        })
    }
}

impl TrustStore for SqliteShared {
    async fn signing_keys(&self) -> Result<Vec<SigningKeyInfo>, StoreError> {
        self.store.signing_keys()
    }
    async fn insert_signing_key(
        &self,
        kid: &str,
        public_jwk: &serde_json::Value,
        sealed: &[u8],
    ) -> Result<(), StoreError> {
        self.store
            .insert_signing_key(kid, public_jwk, sealed)
            .map_err(|e| super::sqlite::constraint(e, &format!("signing key {kid}")))
    }
    async fn retire_signing_key(&self, kid: &str) -> Result<(), StoreError> {
        self.store.retire_signing_key(kid)
    }
    async fn retire_other_keys(&self, keep: &str) -> Result<(), StoreError> {
        self.store.retire_other_keys(keep)
    }
    async fn signing_key(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        self.store.signing_key()
    }
    async fn require_signed(&self, workspace: &str) -> Result<Option<bool>, StoreError> {
        self.store.require_signed(workspace)
    }
    async fn set_require_signed(
        &self,
        workspace: &str,
        on: Option<bool>,
    ) -> Result<(), StoreError> {
        self.store.set_require_signed(workspace, on)
    }
    async fn use_jti(&self, issuer: &str, jti: &str, expires_at: i64) -> Result<bool, StoreError> {
        self.store.use_jti(issuer, jti, expires_at)
    }
}
