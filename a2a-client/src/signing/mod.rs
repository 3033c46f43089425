//! Agent Card signatures (feature `signing`): sign a card and verify one, for A2A 1.0 cards
//! (S1 §8.4: JWS with a detached payload over the card's canonical form) and 0.3 cards (same
//! `signatures` member; see [`canonical`] for the forms).
//!
//! - [`verify_card`] checks a card against trusted keys (a JWK Set) and says how far it can be
//!   trusted ([`Trust`]). Algorithms are allow-listed ([`ALLOWED_ALGS`]: ES256, ES384, RS256,
//!   PS256, EdDSA); `none` and HMAC are never accepted, whatever the key set holds. Each
//!   signature's protected header must carry `kid` and `typ: "JOSE"`.
//! - [`sign_card`] adds signatures (protected header `alg`, `kid`, `typ: "JOSE"`, optional
//!   `jku`) with a [`CardKey`]; one signature per distinct canonical form of the card's version,
//!   so both spec-strict verifiers and the official SDKs' verifiers accept it.
//! - [`generate_es256`] makes a P-256 key pair (PKCS#8 private key, public JWK).
//!
//! It lives in the client because the client, the agent runtime and the gateway all depend on
//! it (`a2a-types` <- `a2a-translate` <- `a2a-client` <- `a2a-agent`, `a2a-gateway`), and it
//! is a feature so that a client that never checks signatures does not build the crypto.

pub mod canonical;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{Value, json};

/// The algorithms a card signature may use.
pub const ALLOWED_ALGS: &[&str] = &["ES256", "ES384", "RS256", "PS256", "EdDSA"];

/// How far a card can be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// At least one signature verified with a trusted key (its `kid`).
    Verified(String),
    /// The card carries no signature.
    Unsigned,
    /// The card's signatures are malformed, use a refused algorithm, or do not verify with
    /// the trusted key they name (why, for each signature).
    Invalid(String),
    /// The card is signed, but by no key in the trusted set (why).
    UntrustedKey(String),
}

impl Trust {
    /// The header value: `verified`, `unsigned`, `invalid` or `untrusted-key`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Trust::Verified(_) => "verified",
            Trust::Unsigned => "unsigned",
            Trust::Invalid(_) => "invalid",
            Trust::UntrustedKey(_) => "untrusted-key",
        }
    }

    /// The reason of a state other than verified.
    pub fn reason(&self) -> String {
        match self {
            Trust::Verified(kid) => format!("verified with key {kid:?}"),
            Trust::Unsigned => "the card is not signed".to_owned(),
            Trust::Invalid(r) | Trust::UntrustedKey(r) => r.clone(),
        }
    }
}

/// Whether a card is a 1.0 card (it has `supportedInterfaces`); otherwise it is read as 0.3.
pub fn is_v1_card(card: &Value) -> bool {
    card.get("supportedInterfaces").is_some_and(Value::is_array)
}

fn alg_of(name: &str) -> Option<Algorithm> {
    Some(match name {
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "RS256" => Algorithm::RS256,
        "PS256" => Algorithm::PS256,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Whether `jwk` may check a signature made with `alg`: a public key of the algorithm's family
/// and curve (never a symmetric key), whose own `alg`, when it names one, is `alg`.
fn key_fits(jwk: &Jwk, alg: &str) -> Result<(), String> {
    if let Some(ka) = &jwk.common.key_algorithm
        && ka.to_string() != alg
    {
        return Err(format!("the key is for {ka}, the signature uses {alg}"));
    }
    let ok = match (&jwk.algorithm, alg) {
        (AlgorithmParameters::EllipticCurve(p), "ES256") => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::EllipticCurve(p), "ES384") => p.curve == EllipticCurve::P384,
        (AlgorithmParameters::RSA(_), "RS256" | "PS256") => true,
        (AlgorithmParameters::OctetKeyPair(p), "EdDSA") => p.curve == EllipticCurve::Ed25519,
        (AlgorithmParameters::OctetKey(_), _) => {
            return Err("symmetric (oct) keys are never trusted".to_owned());
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("the key's type does not fit {alg}"))
    }
}

/// The key and algorithm that check a JWS made with `alg` (one of [`ALLOWED_ALGS`]) by `jwk`
/// (refused: other algorithms, symmetric keys, keys of another type or curve). For other JWS
/// uses of the same trusted keys, such as signed push notifications.
pub fn verifying_key(jwk: &Jwk, alg: &str) -> Result<(DecodingKey, Algorithm), String> {
    let algorithm = alg_of(alg).ok_or_else(|| format!("algorithm {alg:?} is not allowed"))?;
    key_fits(jwk, alg)?;
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("unusable key: {e}"))?;
    Ok((key, algorithm))
}

/// Why one signature does not verify: a defect of the signature, or an unknown key.
enum Miss {
    Invalid(String),
    Unknown(String),
}

fn check_one(sig: &Value, encoded_payloads: &[String], keys: &JwkSet) -> Result<String, Miss> {
    let protected = sig
        .get("protected")
        .and_then(Value::as_str)
        .ok_or_else(|| Miss::Invalid("no protected header".to_owned()))?;
    let signature = sig
        .get("signature")
        .and_then(Value::as_str)
        .ok_or_else(|| Miss::Invalid("no signature value".to_owned()))?;
    let header: Value = B64
        .decode(protected)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(Value::is_object)
        .ok_or_else(|| Miss::Invalid("the protected header is not base64url JSON".to_owned()))?;
    let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
    let Some(algorithm) = alg_of(alg) else {
        return Err(Miss::Invalid(format!("algorithm {alg:?} is not allowed")));
    };
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or_else(|| Miss::Invalid("no kid in the protected header".to_owned()))?;
    if header.get("typ").and_then(Value::as_str) != Some("JOSE") {
        return Err(Miss::Invalid(format!("key {kid:?}: typ is not \"JOSE\"")));
    }
    if header.get("crit").is_some() {
        return Err(Miss::Invalid(format!(
            "key {kid:?}: critical header parameters are not understood"
        )));
    }
    let candidates: Vec<&Jwk> = keys
        .keys
        .iter()
        .filter(|k| k.common.key_id.as_deref().is_none_or(|id| id == kid))
        .collect();
    if candidates.is_empty() {
        return Err(Miss::Unknown(format!("key {kid:?} is not trusted")));
    }
    let mut why = format!("key {kid:?}: the signature does not match the card");
    for jwk in candidates {
        if let Err(e) = key_fits(jwk, alg) {
            why = format!("key {kid:?}: {e}");
            continue;
        }
        let Ok(key) = DecodingKey::from_jwk(jwk) else {
            why = format!("key {kid:?}: the trusted key is unusable");
            continue;
        };
        for payload in encoded_payloads {
            let input = format!("{protected}.{payload}");
            if jsonwebtoken::crypto::verify(signature, input.as_bytes(), &key, algorithm)
                .unwrap_or(false)
            {
                return Ok(kid.to_owned());
            }
        }
    }
    Err(Miss::Invalid(why))
}

/// Verifies a card's `signatures` with the trusted `keys` (a key without `kid` matches any
/// signature's `kid`), in the canonical forms of the card's version ([`is_v1_card`]).
pub fn verify_card(card: &Value, keys: &JwkSet) -> Trust {
    let sigs = match card.get("signatures") {
        None | Some(Value::Null) => return Trust::Unsigned,
        Some(Value::Array(a)) if a.is_empty() => return Trust::Unsigned,
        Some(Value::Array(a)) => a,
        Some(_) => return Trust::Invalid("signatures is not a list".to_owned()),
    };
    let payloads = match canonical::payloads(card, is_v1_card(card)) {
        Ok(p) => p.iter().map(|b| B64.encode(b)).collect::<Vec<_>>(),
        Err(e) => return Trust::Invalid(e),
    };
    let mut invalid = Vec::new();
    let mut unknown = Vec::new();
    for (i, sig) in sigs.iter().enumerate() {
        match check_one(sig, &payloads, keys) {
            Ok(kid) => return Trust::Verified(kid),
            Err(Miss::Invalid(r)) => invalid.push(format!("signatures[{i}]: {r}")),
            Err(Miss::Unknown(r)) => unknown.push(format!("signatures[{i}]: {r}")),
        }
    }
    if invalid.is_empty() {
        Trust::UntrustedKey(unknown.join("; "))
    } else {
        invalid.extend(unknown);
        Trust::Invalid(invalid.join("; "))
    }
}

/// A private key that signs cards.
#[derive(Clone)]
pub struct CardKey {
    /// Key id (the protected header's `kid`).
    pub kid: String,
    /// Algorithm (one of [`ALLOWED_ALGS`]).
    pub alg: Algorithm,
    /// The private key.
    pub key: EncodingKey,
}

impl std::fmt::Debug for CardKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardKey")
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

impl CardKey {
    /// An ES256 key from its PKCS#8 (DER) private key.
    pub fn es256(kid: impl Into<String>, pkcs8_der: &[u8]) -> CardKey {
        CardKey {
            kid: kid.into(),
            alg: Algorithm::ES256,
            key: EncodingKey::from_ec_der(pkcs8_der),
        }
    }
}

/// The signatures of `card` (its `signatures` member left out) with `key`: one per distinct
/// canonical form of the card's version. `jku` goes into the protected header when given.
pub fn signatures(card: &Value, key: &CardKey, jku: Option<&str>) -> Result<Vec<Value>, String> {
    let alg = format!("{:?}", key.alg);
    if !ALLOWED_ALGS.contains(&alg.as_str()) {
        return Err(format!(
            "algorithm {alg} is not allowed for card signatures"
        ));
    }
    let mut header = json!({"alg": alg, "typ": "JOSE", "kid": key.kid});
    if let Some(u) = jku {
        header["jku"] = json!(u);
    }
    let protected = B64.encode(header.to_string());
    let mut out = Vec::new();
    for payload in canonical::payloads(card, is_v1_card(card))? {
        let input = format!("{protected}.{}", B64.encode(&payload));
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &key.key, key.alg)
            .map_err(|e| format!("cannot sign the card: {e}"))?;
        out.push(json!({"protected": protected, "signature": signature}));
    }
    Ok(out)
}

/// `card` with `signatures` made by `key` appended (see [`signatures`]).
pub fn sign_card(card: Value, key: &CardKey, jku: Option<&str>) -> Result<Value, String> {
    let sigs = signatures(&card, key, jku)?;
    let mut card = card;
    let Some(obj) = card.as_object_mut() else {
        return Err("the card is not a JSON object".to_owned());
    };
    let list = obj
        .entry("signatures")
        .or_insert_with(|| Value::Array(Vec::new()));
    match list.as_array_mut() {
        Some(a) => a.extend(sigs),
        None => *list = Value::Array(sigs),
    }
    Ok(card)
}

/// A new ES256 (P-256) key pair: the PKCS#8 (DER) private key and the public JWK (with `kid`,
/// `alg: ES256`, `use: sig`).
pub fn generate_es256(kid: &str) -> Result<(Vec<u8>, Value), String> {
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
        .map_err(|_| "cannot generate a P-256 key".to_owned())?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
        .map_err(|_| "cannot read the generated key".to_owned())?;
    let public_jwk = es256_public_jwk(kid, pair.public_key().as_ref())?;
    Ok((pkcs8.as_ref().to_vec(), public_jwk))
}

/// The public JWK of an uncompressed P-256 point (`04 || x || y`).
pub fn es256_public_jwk(kid: &str, point: &[u8]) -> Result<Value, String> {
    if point.len() != 65 || point[0] != 4 {
        return Err("not an uncompressed P-256 point".to_owned());
    }
    Ok(
        json!({"kty": "EC", "crv": "P-256", "x": B64.encode(&point[1..33]),
        "y": B64.encode(&point[33..]), "kid": kid, "alg": "ES256", "use": "sig"}),
    )
}

/// Reads a trusted key set: a JWK Set (`{"keys": [...]}`) or one JWK.
pub fn key_set(v: &Value) -> Result<JwkSet, String> {
    if v.get("keys").is_some() {
        serde_json::from_value(v.clone()).map_err(|e| format!("not a JWK Set: {e}"))
    } else {
        let jwk: Jwk = serde_json::from_value(v.clone()).map_err(|e| format!("not a JWK: {e}"))?;
        Ok(JwkSet { keys: vec![jwk] })
    }
}

#[cfg(test)]
mod tests;
