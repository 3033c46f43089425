//! The gateway's own card signing keys: ES256 keys made, rotated and retired by an operator, their
//! private keys sealed at rest (AES-256-GCM under a key derived with HKDF-SHA256 from the
//! `card_key_secret` / `card_key_file` setting, the row's kid as associated data), the key set
//! served at `/a2a/.well-known/jwks.json`, and [`OwnSigner`], which signs every governed card.

use std::collections::HashMap;
use std::sync::Mutex;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::hkdf;
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use serde_json::{Value, json};

use a2a_client::signing::{self, CardKey};

use super::store as ts;
use crate::config::Config;
use crate::governance::step::CardSigner;
use crate::store::backend::{NewestKey, Shared, TrustStore};
use crate::{store::Store, store::StoreError};

/// Shortest secret accepted for sealing private keys (bytes).
pub const MIN_SECRET_BYTES: usize = 32;

/// The key that seals private signing keys at rest.
pub struct SealKey(LessSafeKey);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

struct Len;
impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        32
    }
}

impl SealKey {
    /// Derives the sealing key from a secret of at least [`MIN_SECRET_BYTES`].
    pub fn from_secret(secret: &[u8]) -> Result<SealKey, String> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "the card key secret must be at least {MIN_SECRET_BYTES} bytes"
            ));
        }
        let prk =
            hkdf::Salt::new(hkdf::HKDF_SHA256, b"a2a-gateway card signing keys").extract(secret);
        let okm = prk
            .expand(&[b"aes-256-gcm v1"], Len)
            .map_err(|_| "cannot derive the sealing key".to_owned())?;
        let mut bytes = [0u8; 32];
        okm.fill(&mut bytes)
            .map_err(|_| "cannot derive the sealing key".to_owned())?;
        let key = UnboundKey::new(&AES_256_GCM, &bytes)
            .map_err(|_| "cannot build the sealing key".to_owned())?;
        Ok(SealKey(LessSafeKey::new(key)))
    }

    /// The sealing key of a configuration: `card_key_secret`, else the contents of
    /// `card_key_file` (trimmed); `None` when neither is set.
    pub fn from_config(config: &Config) -> Result<Option<SealKey>, String> {
        if let Some(s) = config.card_key_secret.as_deref().filter(|s| !s.is_empty()) {
            return SealKey::from_secret(s.as_bytes()).map(Some);
        }
        if let Some(p) = &config.card_key_file {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read card_key_file {}: {e}", p.display()))?;
            return SealKey::from_secret(text.trim().as_bytes()).map(Some);
        }
        Ok(None)
    }

    /// `nonce || ciphertext || tag` of `plain`, bound to `kid`.
    pub fn seal(&self, kid: &str, plain: &[u8]) -> Result<Vec<u8>, String> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| "no randomness".to_owned())?;
        let mut buf = plain.to_vec();
        self.0
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(kid.as_bytes()),
                &mut buf,
            )
            .map_err(|_| "cannot seal the key".to_owned())?;
        let mut out = nonce.to_vec();
        out.extend(buf);
        Ok(out)
    }

    /// Opens what [`SealKey::seal`] made for `kid`.
    pub fn open(&self, kid: &str, sealed: &[u8]) -> Result<Vec<u8>, String> {
        if sealed.len() < NONCE_LEN {
            return Err(format!("signing key {kid}: sealed key too short"));
        }
        let (n, c) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(n).map_err(|_| "bad nonce".to_owned())?;
        let mut buf = c.to_vec();
        let plain = self
            .0
            .open_in_place(nonce, Aad::from(kid.as_bytes()), &mut buf)
            .map_err(|_| format!("signing key {kid}: cannot open it (another card key secret?)"))?;
        Ok(plain.to_vec())
    }
}

fn no_seal() -> StoreError {
    StoreError::Invalid(
        "no card key secret is configured: set A2A_GATEWAY_CARD_KEY_SECRET (or card_key_file) \
         to a secret of at least 32 bytes"
            .to_owned(),
    )
}

/// A fresh ES256 key: its kid, public JWK and sealed private key.
fn new_key(seal: Option<&SealKey>) -> Result<(String, Value, Vec<u8>), StoreError> {
    let seal = seal.ok_or_else(no_seal)?;
    let kid = format!("gw-{}-{}", ts::now(), &crate::ids::random_hex(4));
    let (pkcs8, jwk) = signing::generate_es256(&kid).map_err(StoreError::Invalid)?;
    let sealed = seal.seal(&kid, &pkcs8).map_err(StoreError::Invalid)?;
    Ok((kid, jwk, sealed))
}

fn listed(keys: Vec<ts::SigningKeyInfo>, kid: &str) -> Result<ts::SigningKeyInfo, StoreError> {
    keys.into_iter()
        .find(|k| k.kid == kid)
        .ok_or_else(|| StoreError::NotFound(format!("signing key {kid}")))
}

/// Makes a new ES256 key on a SQLite file; with `rotate`, every other active key is retired
/// (it stays in the key set for the grace period).
pub fn create_key(
    store: &Store,
    seal: Option<&SealKey>,
    rotate: bool,
) -> Result<ts::SigningKeyInfo, StoreError> {
    let (kid, jwk, sealed) = new_key(seal)?;
    ts::insert_key(store, &kid, &jwk, &sealed)?;
    if rotate {
        ts::retire_others(store, &kid)?;
    }
    listed(ts::list_keys(store)?, &kid)
}

/// [`create_key`] on the running gateway's backend (on PostgreSQL, shared by every replica).
pub async fn create_key_in(
    trust: &impl TrustStore,
    seal: Option<&SealKey>,
    rotate: bool,
) -> Result<ts::SigningKeyInfo, StoreError> {
    let (kid, jwk, sealed) = new_key(seal)?;
    trust.insert_signing_key(&kid, &jwk, &sealed).await?;
    if rotate {
        trust.retire_other_keys(&kid).await?;
    }
    listed(trust.signing_keys().await?, &kid)
}

/// The key set served at `/a2a/.well-known/jwks.json`: active keys, and retired keys until
/// `grace_secs` after their retirement.
pub fn jwks(store: &Store, grace_secs: u64) -> Result<Value, StoreError> {
    Ok(key_set(ts::list_keys(store)?, grace_secs))
}

/// [`jwks`] on the running gateway's backend.
pub async fn jwks_in(trust: &impl TrustStore, grace_secs: u64) -> Result<Value, StoreError> {
    Ok(key_set(trust.signing_keys().await?, grace_secs))
}

fn key_set(keys: Vec<ts::SigningKeyInfo>, grace_secs: u64) -> Value {
    let now = ts::now();
    let grace = i64::try_from(grace_secs).unwrap_or(i64::MAX);
    let keys: Vec<Value> = keys
        .into_iter()
        .filter(|k| k.retired_at.is_none_or(|r| r.saturating_add(grace) > now))
        .map(|k| k.public_jwk)
        .collect();
    json!({ "keys": keys })
}

/// The URL of the gateway's key set (the signatures' `jku`).
pub fn jku(config: &Config) -> String {
    format!("{}/a2a/.well-known/jwks.json", config.public_base())
}

/// Signs governed cards with the newest active key; leaves them unsigned when there is none
/// (or no sealing key). The same card keeps the same signatures (kept per key and card), so
/// its ETag changes only when the card or the key does.
pub struct OwnSigner {
    source: Source,
    seal: Option<SealKey>,
    jku: String,
    keys: Mutex<HashMap<String, CardKey>>,
    made: Mutex<HashMap<Slot, Vec<Value>>>,
}

/// Where the newest active key is read.
enum Source {
    /// The SQLite file, read at each signing (microseconds).
    File(Store),
    /// A backend shared by replicas: the key as last read, every [`KEY_POLL`] by a task of the
    /// backend's (signing never waits for the database).
    Polled(NewestKey),
}

pub use crate::store::backend::KEY_POLL;

/// A key id and the SHA-256 of a card: the signatures made for it are kept.
type Slot = (String, Vec<u8>);

/// Signatures kept for reuse at most (the map is emptied when full).
const MAX_KEPT: usize = 1024;

impl OwnSigner {
    /// A signer over `store`'s keys.
    pub fn new(store: Store, seal: Option<SealKey>, config: &Config) -> OwnSigner {
        OwnSigner::of(Source::File(store), seal, config)
    }

    /// A signer over the keys of `shared`: the SQLite file's read in place, PostgreSQL's as
    /// last read by the backend (every [`KEY_POLL`]).
    pub fn on(shared: &Shared, seal: Option<SealKey>, config: &Config) -> OwnSigner {
        let source = match shared {
            Shared::Sqlite(s) => Source::File(s.store().clone()),
            Shared::Postgres(p) => Source::Polled(p.newest_signing_key()),
        };
        OwnSigner::of(source, seal, config)
    }

    fn of(source: Source, seal: Option<SealKey>, config: &Config) -> OwnSigner {
        OwnSigner {
            source,
            seal,
            jku: jku(config),
            keys: Mutex::default(),
            made: Mutex::default(),
        }
    }

    fn key(&self) -> Option<CardKey> {
        let newest = match &self.source {
            Source::File(store) => ts::signing_key(store),
            Source::Polled(cell) => Ok(Option::clone(&cell.load())),
        };
        let (kid, sealed) = match newest {
            Ok(Some(k)) => k,
            Ok(None) => return None,
            Err(e) => {
                tracing::error!("card signing key lookup failed: {e}");
                return None;
            }
        };
        if let Some(k) = self.keys.lock().ok()?.get(&kid) {
            return Some(k.clone());
        }
        let Some(seal) = &self.seal else {
            tracing::error!(
                "card signing key {kid} exists but no card key secret is configured: cards are served unsigned"
            );
            return None;
        };
        match seal.open(&kid, &sealed) {
            Ok(der) => {
                let k = CardKey::es256(kid.clone(), &der);
                if let Ok(mut m) = self.keys.lock() {
                    m.insert(kid, k.clone());
                }
                Some(k)
            }
            Err(e) => {
                tracing::error!("{e}: cards are served unsigned");
                None
            }
        }
    }
}

impl CardSigner for OwnSigner {
    fn sign(&self, card: Value) -> Value {
        let Some(key) = self.key() else {
            return card;
        };
        let mut card = card;
        if let Some(o) = card.as_object_mut() {
            // The peer's signatures cover the peer's card, not this one.
            o.remove("signatures");
        }
        let digest = crate::keys::hash(&card.to_string()).to_vec();
        let slot = (key.kid.clone(), digest);
        let kept = self.made.lock().ok().and_then(|m| m.get(&slot).cloned());
        let sigs = match kept {
            Some(s) => s,
            None => match signing::signatures(&card, &key, Some(&self.jku)) {
                Ok(s) => {
                    if let Ok(mut m) = self.made.lock() {
                        if m.len() >= MAX_KEPT {
                            m.clear();
                        }
                        m.insert(slot, s.clone());
                    }
                    s
                }
                Err(e) => {
                    tracing::error!("card signing failed: {e}");
                    return card;
                }
            },
        };
        if let Some(o) = card.as_object_mut() {
            o.insert("signatures".into(), Value::Array(sigs));
        }
        card
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_round_trip_is_bound_to_the_kid_and_secret() {
        let k = SealKey::from_secret(&[7u8; 32]).unwrap();
        let sealed = k.seal("kid-1", b"private").unwrap();
        assert!(!sealed.windows(7).any(|w| w == b"private"));
        assert_eq!(k.open("kid-1", &sealed).unwrap(), b"private");
        assert!(k.open("kid-2", &sealed).is_err());
        let other = SealKey::from_secret(&[8u8; 32]).unwrap();
        assert!(other.open("kid-1", &sealed).is_err());
        assert!(SealKey::from_secret(b"short").is_err());
    }
}
