//! Card trust, both ways (see `docs/gateway/trust.md`, "Trust"):
//!
//! - peer cards: each registered agent may have trusted keys ([`KeySource`]: a pinned JWK, or
//!   a JWKS URL read through [`jwks::JwksCache`]), and signed cards may be required for a
//!   workspace or the whole fleet. [`check_card`] verifies the card the gateway is about to use
//!   ([`a2a_client::signing::verify_card`], the card's own version's canonical forms) and
//!   decides: an invalid signature never gives an address; with trusted keys or required
//!   signing only a verified card does; the result is the response header
//!   [`TRUST_HEADER`] and the audit record's `signatureTrust`.
//! - the gateway's own cards: signing keys and the key set ([`own`]), their admin API
//!   ([`admin`]) and the storage ([`store`]).
//! - signed push notifications from agents with trusted keys ([`push_jwt`]).

pub mod jwks;
pub mod own;
pub mod store;

use std::collections::HashMap;
use std::sync::Mutex;

use axum::http::HeaderValue;
use axum::response::Response;
use jsonwebtoken::jwk::JwkSet;
use serde_json::{Value, json};

use a2a_client::discovery::FetchedCard;
use a2a_client::signing;
pub use a2a_client::signing::Trust;

use crate::config::Config;
use crate::protocol::errors::Refusal;
use crate::store::Agent;
use crate::store::backend::{Shared, SqliteShared, TrustStore};
use crate::store::{Store, StoreError};
pub use crate::{store::KeySource, store::deserialize_key_source};

/// The response header with the trust state of the card behind a governed card or call.
pub const TRUST_HEADER: &str = "x-a2a-signature-trust";

/// The member of a refusal (and of the audit record) naming the trust state.
pub const TRUST_MEMBER: &str = "signatureTrust";

/// Trust state kept by the gateway: the peers' key sets and verified cards.
pub struct TrustState {
    /// Peers' key sets from their JWKS URLs.
    pub jwks: arc_swap::ArcSwap<jwks::JwksCache>,
    /// The sealing key of the own signing keys (for the admin API).
    pub seal: Option<own::SealKey>,
    verdicts: Mutex<HashMap<[u8; 32], Trust>>,
    /// Each workspace's "require signed cards" switch, read at most every [`SWITCH_TTL`].
    switches: Mutex<HashMap<String, (bool, std::time::Instant)>>,
    /// Where the workspaces' switches are kept.
    store: Shared,
    /// The fleet's `require_signed_cards`.
    require_signed_cards: bool,
    /// Development mode: http and loopback JWKS URLs allowed.
    dev_mode: bool,
}

/// How long a workspace's switch is kept (a change through the admin API applies at once, one
/// through the CLI within this time).
pub const SWITCH_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// Verdicts kept at most (the map is emptied when full).
const MAX_VERDICTS: usize = 1024;

impl std::fmt::Debug for TrustState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustState")
            .field("jwks", &self.jwks)
            .field("require_signed_cards", &self.require_signed_cards)
            .field("dev_mode", &self.dev_mode)
            .finish_non_exhaustive()
    }
}

impl TrustState {
    /// The state over the gateway's peer client, its store and the fleet's settings.
    pub fn new(
        http: reqwest::Client,
        config: &Config,
        store: Store,
        seal: Option<own::SealKey>,
    ) -> TrustState {
        TrustState::on(http, config, Shared::Sqlite(SqliteShared::new(store)), seal)
    }

    /// [`TrustState::new`] with the switches on `store`'s backend (on PostgreSQL, shared by
    /// every replica).
    pub fn on(
        http: reqwest::Client,
        config: &Config,
        store: Shared,
        seal: Option<own::SealKey>,
    ) -> TrustState {
        TrustState {
            jwks: arc_swap::ArcSwap::from_pointee(jwks::JwksCache::new(http, config.dev_mode)),
            seal,
            verdicts: Mutex::default(),
            switches: Mutex::default(),
            store,
            require_signed_cards: config.require_signed_cards,
            dev_mode: config.dev_mode,
        }
    }

    /// Reads JWKS URLs with `http` from now on (a reload that changed the peer roots); the
    /// key sets read so far are read again.
    pub fn set_http(&self, http: reqwest::Client) {
        self.jwks.store(std::sync::Arc::new(jwks::JwksCache::new(
            http,
            self.dev_mode,
        )));
    }

    /// [`signing::verify_card`], remembered per card body and key set (the body is parsed only
    /// when no verdict is kept).
    fn verify(&self, card: &FetchedCard, keys: &JwkSet, keys_text: &str) -> Trust {
        let body = &card.body[..];
        let mut d = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
        d.update(keys_text.as_bytes());
        d.update(&[0]);
        d.update(body);
        let mut slot = [0u8; 32];
        slot.copy_from_slice(d.finish().as_ref());
        if let Some(t) = self
            .verdicts
            .lock()
            .ok()
            .and_then(|m| m.get(&slot).cloned())
        {
            return t;
        }
        let t = match card.json() {
            Ok(json) => signing::verify_card(&json, keys),
            Err(e) => Trust::Invalid(format!("the card is not JSON ({e})")),
        };
        if let Ok(mut m) = self.verdicts.lock() {
            if m.len() >= MAX_VERDICTS {
                m.clear();
            }
            m.insert(slot, t.clone());
        }
        t
    }
}

impl TrustState {
    /// Whether signed cards are required for `workspace` (the fleet's `require_signed_cards`, or
    /// the workspace's own switch). A database that cannot be reached is an error (the caller
    /// answers 503); another failed read counts as "not set", as it always has.
    pub async fn signing_required(&self, workspace: &str) -> Result<bool, StoreError> {
        if self.require_signed_cards {
            return Ok(true);
        }
        let now = std::time::Instant::now();
        if let Some((on, at)) = self
            .switches
            .lock()
            .ok()
            .and_then(|m| m.get(workspace).copied())
            && now.duration_since(at) < SWITCH_TTL
        {
            return Ok(on);
        }
        let on = match self.store.require_signed(workspace).await {
            Ok(v) => v.unwrap_or(false),
            Err(e) if e.is_unavailable() => return Err(e),
            Err(_) => false,
        };
        if let Ok(mut m) = self.switches.lock() {
            m.insert(workspace.to_owned(), (on, now));
        }
        Ok(on)
    }

    /// Forgets the kept switch of `workspace` (after the admin API changed it).
    pub fn forget_switch(&self, workspace: &str) {
        if let Ok(mut m) = self.switches.lock() {
            m.remove(workspace);
        }
    }

    /// The trust of the peer card the gateway is about to use, or the refusal that stops the call
    /// (nothing is sent to the peer): an invalid signature always refuses; with trusted keys for
    /// the agent or required signing, anything but a verified card refuses.
    pub async fn check_card(&self, agent: &Agent, card: &FetchedCard) -> Result<Trust, Refusal> {
        let required = self
            .signing_required(&agent.workspace_id)
            .await
            .map_err(|e| Refusal::store("card trust", &e))?;
        let source = match agent.pinned_card_key.as_deref() {
            Some(s) if !s.trim().is_empty() => Some(
                KeySource::parse(s, self.dev_mode)
                    .map_err(|e| Refusal::card_signature_invalid(&e))?,
            ),
            _ => None,
        };
        let signed = memchr_signatures(&card.body);
        if source.is_none() && !required && !signed {
            return Ok(Trust::Unsigned);
        }
        let trust = match &source {
            None => self.verify(card, &JwkSet { keys: vec![] }, ""),
            Some(KeySource::Pinned(set)) => {
                let text = agent.pinned_card_key.as_deref().unwrap_or_default();
                self.verify(card, set, text)
            }
            Some(KeySource::Url(u)) => {
                let (set, fetched) = self
                    .jwks
                    .load_full()
                    .get(u, false)
                    .await
                    .map_err(no_key_set)?;
                let text = serde_json::to_string(&set).unwrap_or_default();
                let t = self.verify(card, &set, &text);
                if matches!(t, Trust::UntrustedKey(_)) && !fetched {
                    // A kid the cached set lacks: the peer may have rotated its key.
                    let (set, _) = self
                        .jwks
                        .load_full()
                        .get(u, true)
                        .await
                        .map_err(no_key_set)?;
                    let text = serde_json::to_string(&set).unwrap_or_default();
                    self.verify(card, &set, &text)
                } else {
                    t
                }
            }
        };
        match &trust {
            Trust::Verified(_) => Ok(trust),
            Trust::Invalid(_) => Err(refuse(
                &trust,
                "an invalid signature never gives an address",
            )),
            _ if source.is_some() => Err(refuse(&trust, "the agent has a pinned card key")),
            _ if required => Err(refuse(&trust, "signed cards are required")),
            _ => Ok(trust),
        }
    }
}

/// 502 `a2a_card_signature_invalid` for a card in state `trust`.
fn refuse(trust: &Trust, why: &str) -> Refusal {
    Refusal::card_signature_invalid(&format!("{} ({why}): {}", trust.as_str(), trust.reason()))
        .with(TRUST_MEMBER, json!(trust.as_str()))
}

/// A key set that cannot be read leaves the card's signer untrusted.
fn no_key_set(r: Refusal) -> Refusal {
    r.with(TRUST_MEMBER, json!("untrusted-key"))
}

/// Whether a card body mentions `"signatures"` (a cheap test before parsing it).
fn memchr_signatures(body: &[u8]) -> bool {
    memchr::memmem::find(body, b"\"signatures\"").is_some()
}

/// The addresses a card names (`url`, `additionalInterfaces[].url`,
/// `supportedInterfaces[].url`): what its signature covers.
pub fn covered_urls(card: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(u) = card.get("url").and_then(Value::as_str) {
        out.push(u.to_owned());
    }
    for list in ["additionalInterfaces", "supportedInterfaces"] {
        for e in card
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(u) = e.get("url").and_then(Value::as_str) {
                out.push(u.to_owned());
            }
        }
    }
    out
}

/// The address-coverage rule: the interface chosen from a verified card must be one its
/// signature covers (the selection reads the same bytes that were verified; this holds the two
/// together should either change).
pub fn check_coverage(trust: &Trust, card: &FetchedCard, chosen: &url::Url) -> Result<(), Refusal> {
    if !matches!(trust, Trust::Verified(_)) {
        return Ok(());
    }
    let json = card.json().unwrap_or(Value::Null);
    let covered = covered_urls(&json).iter().any(|u| {
        url::Url::parse(u)
            .map(|p| p.as_str() == chosen.as_str())
            .unwrap_or(false)
    });
    if covered {
        Ok(())
    } else {
        Err(refuse(
            &Trust::Invalid(format!("{chosen} is not covered by the verified signature")),
            "only addresses the verified signature covers are used",
        ))
    }
}

/// Adds [`TRUST_HEADER`] to a response when the trust state is known.
pub fn stamp(mut resp: Response, trust: Option<&str>) -> Response {
    if let Some(t) = trust
        && let Ok(v) = HeaderValue::from_str(t)
    {
        resp.headers_mut().insert(TRUST_HEADER, v);
    }
    resp
}

/// The trust state a refusal names, if any.
pub fn of_refusal(r: &Refusal) -> Option<String> {
    r.extra
        .get(TRUST_MEMBER)
        .and_then(Value::as_str)
        .map(str::to_owned)
}
