//! Secrets, console sessions and trust on PostgreSQL, shared by replicas (`gateway_secrets`,
//! `console_sessions`, `console_links_spent`, `card_signing_keys`, `workspace_card_trust`,
//! `push_jwt_seen`).
//!
//! - A secret is made once: every replica inserts its candidate with `ON CONFLICT DO NOTHING`
//!   and reads the row back, so all of them use the first one inserted.
//! - A console session is a row named by the SHA-256 of its id, with its CSRF token and expiry
//!   (Unix milliseconds, compared with each replica's clock); logout deletes the row, so it
//!   ends on every replica at once. At most [`MAX_SESSIONS`] are kept (the oldest dropped).
//! - A login link is made without a round trip: `{expiry}.{random}.{HMAC}` under the shared
//!   secret `console_link_key`; redeeming checks the HMAC and the expiry, then spends the link
//!   with one `INSERT … ON CONFLICT DO NOTHING` (one replica wins).
//! - A push JWT id is used once across replicas the same way; expired ids are swept at most
//!   once a second per replica.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::{Pool, PoolOptions};

use super::super::StoreError;
use super::super::pg_schema::{COMPONENT, PG_MIGRATIONS};
use super::PgRegistry;
use super::pg::refused;
use super::shared::{SecretStore, SessionInfo, SessionStore, SigningKeyInfo, TrustStore};
use super::sqlite_shared::{MAX_SESSIONS, now_secs};
use crate::ids::{hex, random_hex};

/// The secret login links are signed with.
const LINK_KEY: &str = "console_link_key";

/// Secrets, sessions and trust on PostgreSQL (see the module doc). Cheap to clone; the clones
/// share one pool.
#[derive(Clone)]
pub struct PgShared {
    inner: Arc<Inner>,
}

/// The newest active card signing key (kid, sealed private key) as last read.
pub type NewestKey = Arc<arc_swap::ArcSwap<Option<(String, Vec<u8>)>>>;

/// How often a replica reads the newest active card signing key: a key made or retired on any
/// replica signs (or stops signing) cards on every replica within this time.
pub const KEY_POLL: Duration = Duration::from_secs(1);

struct Inner {
    pool: Pool,
    newest: NewestKey,
    link_key: aws_lc_rs::hmac::Key,
    /// The second of this replica's last sweep of expired rows (sessions, links, JWT ids).
    swept: AtomicI64,
}

/// Unix milliseconds now.
fn now_ms() -> i64 {
    let ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl PgShared {
    /// Connects to the database at `url` (`postgres://…`), applies the gateway's migrations
    /// (once across replicas) and reads the shared login-link key.
    pub async fn connect(url: &str, opts: &PoolOptions) -> Result<PgShared, StoreError> {
        let pool = a2a_pg::pool(url, opts)?;
        {
            let mut c = pool.get().await?;
            a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
        }
        PgShared::on(pool).await
    }

    async fn on(pool: Pool) -> Result<PgShared, StoreError> {
        let key = secret(&pool, LINK_KEY).await?;
        let shared = PgShared {
            inner: Arc::new(Inner {
                pool,
                newest: NewestKey::default(),
                link_key: aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key),
                swept: AtomicI64::new(i64::MIN),
            }),
        };
        shared
            .inner
            .newest
            .store(Arc::new(shared.signing_key().await?));
        // Reads the newest key every KEY_POLL while a handle is held.
        let weak = Arc::downgrade(&shared.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(KEY_POLL).await;
                let Some(inner) = weak.upgrade() else { return };
                let me = PgShared { inner };
                match me.signing_key().await {
                    Ok(k) => me.inner.newest.store(Arc::new(k)),
                    Err(e) => tracing::debug!("card signing key refresh: {e}"),
                }
            }
        });
        Ok(shared)
    }

    /// The newest active card signing key as last read (every [`KEY_POLL`]; at once after a
    /// change made through this handle).
    pub fn newest_signing_key(&self) -> NewestKey {
        self.inner.newest.clone()
    }

    /// Reads the newest key now (after a change made through this handle).
    async fn reread_newest(&self) {
        if let Ok(k) = self.signing_key().await {
            self.inner.newest.store(Arc::new(k));
        }
    }

    async fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.execute(&st, params).await?)
    }

    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<a2a_pg::tokio_postgres::Row>, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.query(&st, params).await?)
    }

    /// Deletes expired sessions, spent links and JWT ids, at most once a second per replica.
    async fn sweep(&self) -> Result<(), StoreError> {
        let now = now_secs();
        if self.inner.swept.swap(now, Ordering::Relaxed) == now {
            return Ok(());
        }
        let at = now_ms();
        self.execute(
            "DELETE FROM console_sessions WHERE expires_at <= $1",
            &[&at],
        )
        .await?;
        self.execute(
            "DELETE FROM console_links_spent WHERE expires_at <= $1",
            &[&at],
        )
        .await?;
        self.execute(
            "DELETE FROM push_jwt_seen WHERE expires_at < $1",
            &[&(now - 60)],
        )
        .await?;
        Ok(())
    }

    fn link_mac(&self, body: &str) -> String {
        hex(aws_lc_rs::hmac::sign(&self.inner.link_key, body.as_bytes()).as_ref())
    }
}

impl PgRegistry {
    /// Secrets, sessions and trust on the same database and pool as this registry.
    pub async fn shared(&self) -> Result<PgShared, StoreError> {
        PgShared::on(self.pool().clone()).await
    }
}

/// The secret `name`, made once across replicas.
async fn secret(pool: &Pool, name: &str) -> Result<Vec<u8>, StoreError> {
    let c = pool.get().await?;
    let mut candidate = [0u8; 32];
    {
        use aws_lc_rs::rand::SecureRandom;
        aws_lc_rs::rand::SystemRandom::new()
            .fill(&mut candidate)
            .map_err(|_| StoreError::Invalid("no random bytes".to_owned()))?;
    }
    let insert = c
        .prepare_cached(
            "INSERT INTO gateway_secrets(name, value, created_at) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO NOTHING",
        )
        .await?;
    c.execute(&insert, &[&name, &&candidate[..], &now_secs()])
        .await?;
    let read = c
        .prepare_cached("SELECT value FROM gateway_secrets WHERE name = $1")
        .await?;
    let row = c.query_one(&read, &[&name]).await?;
    Ok(row.get(0))
}

impl SecretStore for PgShared {
    async fn secret(&self, name: &str) -> Result<Vec<u8>, StoreError> {
        secret(&self.inner.pool, name).await
    }
}

impl SessionStore for PgShared {
    async fn open_session(
        &self,
        id_hash: [u8; 32],
        info: &SessionInfo,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.sweep().await?;
        let now = now_ms();
        // Expired sessions do not count against the bound (as in one process's memory).
        self.execute(
            "DELETE FROM console_sessions WHERE expires_at <= $1",
            &[&now],
        )
        .await?;
        self.execute(
            "INSERT INTO console_sessions(token_hash, operator, created_at, expires_at, csrf,
               roles) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &&id_hash[..],
                &info.operator,
                &now,
                &now.saturating_add(ms(ttl)),
                &info.csrf,
                &info.roles,
            ],
        )
        .await?;
        let keep = i64::try_from(MAX_SESSIONS).unwrap_or(i64::MAX);
        self.execute(
            "DELETE FROM console_sessions WHERE token_hash IN (SELECT token_hash
               FROM console_sessions ORDER BY expires_at DESC, token_hash OFFSET $1)",
            &[&keep],
        )
        .await?;
        Ok(())
    }

    async fn session(&self, id_hash: [u8; 32]) -> Result<Option<SessionInfo>, StoreError> {
        let rows = self
            .query(
                "SELECT csrf, operator, roles FROM console_sessions
                 WHERE token_hash = $1 AND expires_at > $2",
                &[&&id_hash[..], &now_ms()],
            )
            .await?;
        Ok(rows.first().map(|r| SessionInfo {
            csrf: r.get(0),
            operator: r.get(1),
            roles: r.get(2),
        }))
    }

    async fn close_session(&self, id_hash: [u8; 32]) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM console_sessions WHERE token_hash = $1",
            &[&&id_hash[..]],
        )
        .await?;
        Ok(())
    }

    fn login_token(&self, ttl: Duration) -> String {
        let body = format!("{}.{}", now_ms().saturating_add(ms(ttl)), random_hex(16));
        let mac = self.link_mac(&body);
        format!("{body}.{mac}")
    }

    async fn redeem(&self, token: &str) -> Result<bool, StoreError> {
        let Some((body, mac)) = token.rsplit_once('.') else {
            return Ok(false);
        };
        let expected = self.link_mac(body);
        if !crate::keys::digest_eq(expected.as_bytes(), mac.as_bytes()) {
            return Ok(false);
        }
        let Some(expires) = body
            .split_once('.')
            .and_then(|(e, _)| e.parse::<i64>().ok())
        else {
            return Ok(false);
        };
        if expires <= now_ms() {
            return Ok(false);
        }
        self.sweep().await?;
        let n = self
            .execute(
                "INSERT INTO console_links_spent(token_hash, expires_at) VALUES ($1, $2)
                 ON CONFLICT (token_hash) DO NOTHING",
                &[&&crate::keys::hash(token)[..], &expires],
            )
            .await?;
        Ok(n == 1)
    }
}

impl TrustStore for PgShared {
    async fn signing_keys(&self) -> Result<Vec<SigningKeyInfo>, StoreError> {
        let rows = self
            .query(
                "SELECT kid, alg, public_jwk, created_at, retired_at FROM card_signing_keys
                 ORDER BY created_at DESC, seq DESC",
                &[],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| {
                SigningKeyInfo::of(r.get(0), r.get(1), r.get::<_, &str>(2), r.get(3), r.get(4))
            })
            .collect())
    }

    async fn insert_signing_key(
        &self,
        kid: &str,
        public_jwk: &serde_json::Value,
        sealed: &[u8],
    ) -> Result<(), StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c
            .prepare_cached(
                "INSERT INTO card_signing_keys(kid, alg, public_jwk, sealed_private, created_at)
                 VALUES ($1, 'ES256', $2, $3, $4)",
            )
            .await?;
        c.execute(&st, &[&kid, &public_jwk.to_string(), &sealed, &now_secs()])
            .await
            .map_err(|e| refused(e, &format!("signing key {kid}"), "signing key"))?;
        self.reread_newest().await;
        Ok(())
    }

    async fn retire_signing_key(&self, kid: &str) -> Result<(), StoreError> {
        let n = self
            .execute(
                "UPDATE card_signing_keys SET retired_at = COALESCE(retired_at, $2)
                 WHERE kid = $1",
                &[&kid, &now_secs()],
            )
            .await?;
        if n == 0 {
            return Err(StoreError::NotFound(format!("signing key {kid}")));
        }
        self.reread_newest().await;
        Ok(())
    }

    async fn retire_other_keys(&self, keep: &str) -> Result<(), StoreError> {
        self.execute(
            "UPDATE card_signing_keys SET retired_at = $2 WHERE kid <> $1 AND retired_at IS NULL",
            &[&keep, &now_secs()],
        )
        .await?;
        self.reread_newest().await;
        Ok(())
    }

    async fn signing_key(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        let rows = self
            .query(
                "SELECT kid, sealed_private FROM card_signing_keys WHERE retired_at IS NULL
                 ORDER BY created_at DESC, seq DESC LIMIT 1",
                &[],
            )
            .await?;
        Ok(rows.first().map(|r| (r.get(0), r.get(1))))
    }

    async fn require_signed(&self, workspace: &str) -> Result<Option<bool>, StoreError> {
        let rows = self
            .query(
                "SELECT require_signed_cards FROM workspace_card_trust WHERE workspace_id = $1",
                &[&workspace],
            )
            .await?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    async fn set_require_signed(
        &self,
        workspace: &str,
        on: Option<bool>,
    ) -> Result<(), StoreError> {
        let missing = || StoreError::NotFound(format!("workspace {workspace}"));
        let exists = self
            .query("SELECT 1 FROM workspaces WHERE id = $1", &[&workspace])
            .await?;
        if exists.is_empty() {
            return Err(missing());
        }
        match on {
            Some(v) => {
                let c = self.inner.pool.get().await?;
                let st = c
                    .prepare_cached(
                        "INSERT INTO workspace_card_trust(workspace_id, require_signed_cards)
                         VALUES ($1, $2) ON CONFLICT (workspace_id)
                         DO UPDATE SET require_signed_cards = excluded.require_signed_cards",
                    )
                    .await?;
                c.execute(&st, &[&workspace, &v])
                    .await
                    .map_err(|e| refused(e, "switch", &format!("workspace {workspace}")))?;
            }
            None => {
                self.execute(
                    "DELETE FROM workspace_card_trust WHERE workspace_id = $1",
                    &[&workspace],
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn use_jti(&self, issuer: &str, jti: &str, expires_at: i64) -> Result<bool, StoreError> {
        self.sweep().await?;
        let n = self
            .execute(
                "INSERT INTO push_jwt_seen(issuer, jti, expires_at) VALUES ($1, $2, $3)
                 ON CONFLICT (issuer, jti) DO NOTHING",
                &[&issuer, &jti, &expires_at],
            )
            .await?;
        Ok(n == 1)
    }
}
