//! What one process kept for itself and replicas must share (issue 32, docs/replicas.md),
//! behind three traits of the registry's design (async, `Send` futures, an enum chosen at
//! start rather than a trait object):
//!
//! - [`SecretStore`]: named secrets made once (the ListTasks page-token key);
//! - [`SessionStore`]: the console's sessions (only the SHA-256 of a session id is kept) and
//!   its spent one-time login links;
//! - [`TrustStore`]: the gateway's card signing keys, each workspace's "require signed cards"
//!   switch and the push JWT `jti` replay guard.
//!
//! [`SqliteShared`] keeps today's single-process behaviour (secrets and sessions in the
//! process's memory, trust on the SQLite file); [`PgShared`] keeps all of it in PostgreSQL, so a
//! page token, a console login, a login link, a signing key, a switch or a used `jti` of one
//! replica holds on every other. [`Shared`] is either.

use std::future::Future;
use std::time::Duration;

use serde::Serialize;

use super::super::StoreError;
use super::{PgShared, SqliteShared};

/// The name of the ListTasks page-token key in [`SecretStore`].
pub const PAGE_KEY: &str = "page_token_key";

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

impl SigningKeyInfo {
    /// A listed key from its columns (a JWK that does not parse is `null`).
    pub fn of(
        kid: String,
        alg: String,
        jwk: &str,
        created_at: i64,
        retired_at: Option<i64>,
    ) -> SigningKeyInfo {
        SigningKeyInfo {
            kid,
            alg,
            public_jwk: serde_json::from_str(jwk).unwrap_or_default(),
            created_at,
            retired_at,
            state: if retired_at.is_some() {
                "retired"
            } else {
                "active"
            },
        }
    }
}

/// Named secrets, made once (see the module doc).
pub trait SecretStore: Clone + Send + Sync + 'static {
    /// The secret `name`: made (32 random bytes) by the first caller, the same bytes for every
    /// later one (on PostgreSQL: every replica's).
    fn secret(&self, name: &str) -> impl Future<Output = Result<Vec<u8>, StoreError>> + Send;
}

/// Who a console session is for: its CSRF token, the operator's identity and roles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// The synchronizer token every form of the session carries.
    pub csrf: String,
    /// The operator: `admin-token` for a login with the admin token (or a login link), else
    /// the identity the OpenID Connect provider vouched for (`oidc:` and its e-mail, user name
    /// or subject).
    pub operator: String,
    /// The operator's roles, space-separated (`admin`, `viewer`, `approver`,
    /// `approver:{workspace}`), as `console::roles` reads them.
    pub roles: String,
}

/// The console's sessions (see the module doc). Sessions are named by the SHA-256 of their
/// id: the id itself is never stored.
pub trait SessionStore: Clone + Send + Sync + 'static {
    /// Opens a session for `ttl` for `info`; the oldest sessions past the bound (256) are
    /// dropped.
    fn open_session(
        &self,
        id_hash: [u8; 32],
        info: &SessionInfo,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A live session (`None`: unknown, closed or expired).
    fn session(
        &self,
        id_hash: [u8; 32],
    ) -> impl Future<Output = Result<Option<SessionInfo>, StoreError>> + Send;

    /// Ends a session (idempotent).
    fn close_session(
        &self,
        id_hash: [u8; 32],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A one-time login token valid for `ttl` (made without a round trip).
    fn login_token(&self, ttl: Duration) -> String;

    /// Whether `token` is a live login token; it is spent either way (of two replicas
    /// redeeming one token at once, one gets `true`).
    fn redeem(&self, token: &str) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// Card trust keys and switches (see the module doc).
pub trait TrustStore: Clone + Send + Sync + 'static {
    /// Every signing key, newest first.
    fn signing_keys(&self) -> impl Future<Output = Result<Vec<SigningKeyInfo>, StoreError>> + Send;

    /// Adds an ES256 key (its private part sealed).
    fn insert_signing_key(
        &self,
        kid: &str,
        public_jwk: &serde_json::Value,
        sealed: &[u8],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Retires a key (idempotent); an unknown kid is [`StoreError::NotFound`].
    fn retire_signing_key(&self, kid: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Retires every active key but `keep`.
    fn retire_other_keys(&self, keep: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The newest active key: its kid and sealed private key.
    fn signing_key(
        &self,
    ) -> impl Future<Output = Result<Option<(String, Vec<u8>)>, StoreError>> + Send;

    /// The workspace's "require signed cards" switch (`None`: not set).
    fn require_signed(
        &self,
        workspace: &str,
    ) -> impl Future<Output = Result<Option<bool>, StoreError>> + Send;

    /// Sets (or with `None` clears) the switch of an existing workspace (a missing one is
    /// [`StoreError::NotFound`]).
    fn set_require_signed(
        &self,
        workspace: &str,
        on: Option<bool>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Records a push JWT id of `issuer` until `expires_at` (Unix seconds); false when it was
    /// already used (on PostgreSQL: by any replica).
    fn use_jti(
        &self,
        issuer: &str,
        jti: &str,
        expires_at: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// Secrets, sessions and trust on the backend chosen at start.
#[derive(Clone)]
pub enum Shared {
    /// One process: memory and the SQLite file.
    Sqlite(SqliteShared),
    /// PostgreSQL, shared by replicas.
    Postgres(PgShared),
}

macro_rules! either {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self {
            Shared::Sqlite(r) => r.$m($($a),*).await,
            Shared::Postgres(r) => r.$m($($a),*).await,
        }
    };
}

impl SecretStore for Shared {
    async fn secret(&self, name: &str) -> Result<Vec<u8>, StoreError> {
        either!(self.secret(name))
    }
}

impl SessionStore for Shared {
    async fn open_session(
        &self,
        id_hash: [u8; 32],
        info: &SessionInfo,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        either!(self.open_session(id_hash, info, ttl))
    }
    async fn session(&self, id_hash: [u8; 32]) -> Result<Option<SessionInfo>, StoreError> {
        either!(self.session(id_hash))
    }
    async fn close_session(&self, id_hash: [u8; 32]) -> Result<(), StoreError> {
        either!(self.close_session(id_hash))
    }
    fn login_token(&self, ttl: Duration) -> String {
        match self {
            Shared::Sqlite(r) => r.login_token(ttl),
            Shared::Postgres(r) => r.login_token(ttl),
        }
    }
    async fn redeem(&self, token: &str) -> Result<bool, StoreError> {
        either!(self.redeem(token))
    }
}

impl TrustStore for Shared {
    async fn signing_keys(&self) -> Result<Vec<SigningKeyInfo>, StoreError> {
        either!(self.signing_keys())
    }
    async fn insert_signing_key(
        &self,
        kid: &str,
        public_jwk: &serde_json::Value,
        sealed: &[u8],
    ) -> Result<(), StoreError> {
        either!(self.insert_signing_key(kid, public_jwk, sealed))
    }
    async fn retire_signing_key(&self, kid: &str) -> Result<(), StoreError> {
        either!(self.retire_signing_key(kid))
    }
    async fn retire_other_keys(&self, keep: &str) -> Result<(), StoreError> {
        either!(self.retire_other_keys(keep))
    }
    async fn signing_key(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        either!(self.signing_key())
    }
    async fn require_signed(&self, workspace: &str) -> Result<Option<bool>, StoreError> {
        either!(self.require_signed(workspace))
    }
    async fn set_require_signed(
        &self,
        workspace: &str,
        on: Option<bool>,
    ) -> Result<(), StoreError> {
        either!(self.set_require_signed(workspace, on))
    }
    async fn use_jti(&self, issuer: &str, jti: &str, expires_at: i64) -> Result<bool, StoreError> {
        either!(self.use_jti(issuer, jti, expires_at))
    }
}
