//! Where trust settings live: the gateway's own card signing keys (private keys sealed, see
//! [`super::own`]), each workspace's "require signed cards" switch and the push JWT ids
//! already used. The running gateway reads and writes them through
//! [`TrustStore`](crate::store::backend::TrustStore) on the backend chosen at start (on
//! PostgreSQL shared by every replica); these functions are the same operations on a SQLite
//! file, called in place (the offline `a2a-gateway trust` commands).

use crate::{store::Store, store::StoreError};

pub use crate::store::backend::SigningKeyInfo;

pub(crate) fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// Every signing key, newest first.
pub fn list_keys(store: &Store) -> Result<Vec<SigningKeyInfo>, StoreError> {
    store.signing_keys()
}

/// Adds a key.
pub fn insert_key(
    store: &Store,
    kid: &str,
    public_jwk: &serde_json::Value,
    sealed: &[u8],
) -> Result<(), StoreError> {
    store.insert_signing_key(kid, public_jwk, sealed)
}

/// Retires a key (idempotent); `NotFound` for an unknown kid.
pub fn retire_key(store: &Store, kid: &str) -> Result<(), StoreError> {
    store.retire_signing_key(kid)
}

/// Retires every active key but `keep`.
pub fn retire_others(store: &Store, keep: &str) -> Result<(), StoreError> {
    store.retire_other_keys(keep)
}

/// The newest active key: its kid and sealed private key.
pub fn signing_key(store: &Store) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    store.signing_key()
}

/// The workspace's "require signed cards" switch (`None`: not set, the fleet setting decides).
pub fn require_signed(store: &Store, workspace: &str) -> Result<Option<bool>, StoreError> {
    store.require_signed(workspace)
}

/// Sets (or with `None` clears) the workspace's switch.
pub fn set_require_signed(
    store: &Store,
    workspace: &str,
    on: Option<bool>,
) -> Result<(), StoreError> {
    store.set_require_signed(workspace, on)
}

/// Records a push JWT id of `issuer` until `expires_at`; false when it was already used.
pub fn use_jti(
    store: &Store,
    issuer: &str,
    jti: &str,
    expires_at: i64,
) -> Result<bool, StoreError> {
    store.use_jti(issuer, jti, expires_at)
}
