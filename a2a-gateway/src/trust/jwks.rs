//! Key sets of peers, fetched from the JWKS URL registered for an agent with the same network
//! checks and caching as cards: the URL passes the SSRF policy ([`crate::peer`]'s checks, minus
//! the same-origin rule), is fetched by the peer client (whose resolver refuses internal
//! addresses), and is kept for its `max-age` clamped to 30 s .. 1 h ([`crate::peer::CARD_TTL`]),
//! then revalidated with its ETag. A signature naming a kid the cached set lacks makes the set be
//! asked for again at once (a peer that rotated its key), at most once per call.

use std::sync::Arc;

use jsonwebtoken::jwk::JwkSet;
use url::Url;

use a2a_agent::net_guard::NetGuard;
use a2a_client::discovery::{CacheStatus, CardResolver, Clock};

use crate::errors::Refusal;

/// Largest key set read (bytes).
pub const MAX_JWKS_BYTES: usize = 256 * 1024;

/// The cache of peers' key sets.
#[derive(Clone, Debug)]
pub struct JwksCache {
    resolver: CardResolver,
    dev_mode: bool,
}

/// A body must be a JWK Set.
fn jwks_check(body: &[u8]) -> Result<(), String> {
    serde_json::from_slice::<JwkSet>(body)
        .map(|_| ())
        .map_err(|e| format!("not a JWK Set ({e})"))
}

impl JwksCache {
    /// A cache fetching through `http` (the gateway's peer client).
    pub fn new(http: reqwest::Client, dev_mode: bool) -> JwksCache {
        JwksCache {
            resolver: CardResolver::new(http)
                .with_ttl_clamp(crate::peer::CARD_TTL)
                .with_stale_if_error(true)
                .with_max_bytes(MAX_JWKS_BYTES)
                .with_card_check(jwks_check),
            dev_mode,
        }
    }

    /// Replaces the clock (tests of expiry).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> JwksCache {
        self.resolver = self.resolver.with_clock(clock);
        self
    }

    /// The static checks of a JWKS URL (https, or http in development; no credentials; public
    /// literal addresses), as an error message.
    pub fn check_url(url: &str, dev_mode: bool) -> Result<Url, String> {
        NetGuard::new(dev_mode)
            .check_url(url)
            .map_err(|e| format!("JWKS URL {url:?}: {e}"))
    }

    /// The key set at `url`; `fresh` asks the server again even when the cached set is fresh.
    /// Returns whether the set was just fetched (or revalidated) rather than served from cache.
    pub async fn get(&self, url: &str, fresh: bool) -> Result<(JwkSet, bool), Refusal> {
        let bad = |m: String| Refusal::card_signature_invalid(&m);
        let u = Self::check_url(url, self.dev_mode).map_err(bad)?;
        crate::peer::check_resolved(&u, self.dev_mode)
            .await
            .map_err(|r| bad(format!("JWKS URL: {}", r.message)))?;
        let got = if fresh {
            self.resolver.revalidate_url(u.clone()).await
        } else {
            self.resolver.fetch_url(u.clone()).await
        }
        .map_err(|e| bad(format!("the key set at {u} is unavailable: {e}")))?;
        let set: JwkSet = serde_json::from_slice(&got.body)
            .map_err(|e| bad(format!("the key set at {u} is not a JWK Set: {e}")))?;
        Ok((set, got.cache != CacheStatus::Fresh))
    }
}
