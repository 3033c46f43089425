//! Workspace API keys: generation, hashing, constant-time comparison and scopes.
//!
//! A key looks like `a2agw_<key id>_<secret>`: the key id (16 hex digits) is public and indexes
//! the row; the whole key is hashed with SHA-256 (aws-lc-rs) and only the digest is stored.
//! Digests are compared in constant time (`subtle`).

use aws_lc_rs::digest;
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

/// Prefix of every gateway key.
pub const KEY_PREFIX: &str = "a2agw_";

/// An A2A scope of a workspace key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    /// `a2a:read`: tasks:get, tasks:list, tasks:resubscribe, push config reads.
    #[serde(rename = "a2a:read")]
    Read,
    /// `a2a:send`: message:send, message:stream, tasks:cancel, push config writes.
    #[serde(rename = "a2a:send")]
    Send,
}

impl Scope {
    /// The scope's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "a2a:read",
            Scope::Send => "a2a:send",
        }
    }
}

/// Parses a space- or comma-separated list of scopes (empty = unscoped).
pub fn parse_scopes(s: &str) -> Result<Vec<Scope>, String> {
    let mut out = Vec::new();
    for part in s.split([' ', ',']).filter(|p| !p.is_empty()) {
        let scope = match part {
            "a2a:read" => Scope::Read,
            "a2a:send" => Scope::Send,
            other => {
                return Err(format!(
                    "unknown scope {other:?} (known: a2a:read, a2a:send)"
                ));
            }
        };
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    Ok(out)
}

/// Joins scopes with spaces.
pub fn scopes_to_string(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a key with `granted` scopes may run an operation needing `needed`
/// (an unscoped key is unrestricted).
pub fn allows(granted: &[Scope], needed: Scope) -> bool {
    granted.is_empty() || granted.contains(&needed)
}

/// A freshly generated key.
pub struct Generated {
    /// Public id.
    pub key_id: String,
    /// The full key, shown once.
    pub secret: String,
    /// SHA-256 of the full key.
    pub hash: [u8; 32],
}

/// Generates a new random key.
pub fn generate() -> Result<Generated, String> {
    let rng = SystemRandom::new();
    let mut id = [0u8; 8];
    let mut secret = [0u8; 32];
    rng.fill(&mut id)
        .map_err(|_| "random generator failed".to_owned())?;
    rng.fill(&mut secret)
        .map_err(|_| "random generator failed".to_owned())?;
    let key_id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let full = format!(
        "{KEY_PREFIX}{key_id}_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret)
    );
    let hash = hash(&full);
    Ok(Generated {
        key_id,
        secret: full,
        hash,
    })
}

/// The key id of a presented key, if it is well formed.
pub fn key_id_of(presented: &str) -> Option<&str> {
    let rest = presented.strip_prefix(KEY_PREFIX)?;
    let (id, secret) = rest.split_once('_')?;
    (id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()) && !secret.is_empty())
        .then_some(id)
}

/// SHA-256 of a key.
pub fn hash(key: &str) -> [u8; 32] {
    let d = digest::digest(&digest::SHA256, key.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Constant-time digest comparison.
pub fn digest_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_and_hash() {
        let g = generate().unwrap();
        assert_eq!(key_id_of(&g.secret), Some(g.key_id.as_str()));
        assert!(digest_eq(&hash(&g.secret), &g.hash));
        assert!(!digest_eq(&hash("other"), &g.hash));
        let g2 = generate().unwrap();
        assert_ne!(g.secret, g2.secret);
    }

    #[test]
    fn scopes() {
        assert_eq!(
            parse_scopes("a2a:read a2a:send").unwrap(),
            vec![Scope::Read, Scope::Send]
        );
        assert!(parse_scopes("admin").is_err());
        assert!(allows(&[], Scope::Send));
        assert!(!allows(&[Scope::Read], Scope::Send));
        assert_eq!(key_id_of("a2agw_zz_x"), None);
    }
}
