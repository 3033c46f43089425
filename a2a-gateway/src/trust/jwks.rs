//! Key sets of peers, fetched from the JWKS URL registered for an agent with the same network
//! checks and caching as cards: the URL passes the SSRF policy ([`crate::peer`]'s checks, minus
//! the same-origin rule), is fetched by the peer client (whose resolver refuses internal
//! addresses), and is kept for its `max-age` clamped to 30 s .. 1 h ([`crate::peer::CARD_TTL`]),
//! then revalidated with its ETag. A signature naming a kid the cached set lacks makes the set be
//! asked for again at once (a peer that rotated its key), at most once per call.

use std::sync::Arc;

use jsonwebtoken::jwk::JwkSet;
use url::Url;

use a2a_client::discovery::{CacheStatus, CardResolver, Clock};

use crate::protocol::errors::Refusal;

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
        crate::store::KeySource::check_url(url, dev_mode)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[derive(Debug)]
    struct ManualClock(Mutex<Instant>);
    impl Clock for ManualClock {
        fn now(&self) -> Instant {
            *self.0.lock().unwrap()
        }
    }

    /// The key set expires with its (clamped) `max-age` and is fetched again; in between it is
    /// served from the cache; a body that is not a key set is refused.
    #[tokio::test]
    async fn key_sets_expire_and_are_fetched_again() {
        let hits = Arc::new(AtomicUsize::new(0));
        let kid = Arc::new(Mutex::new("k1".to_owned()));
        let (h, k) = (hits.clone(), kid.clone());
        let app = axum::Router::new()
            .route(
                "/jwks.json",
                axum::routing::get(move || {
                    let (h, k) = (h.clone(), k.clone());
                    async move {
                        h.fetch_add(1, Ordering::SeqCst);
                        let (_, mut jwk) = a2a_client::signing::generate_es256("x").unwrap();
                        jwk["kid"] = serde_json::json!(*k.lock().unwrap());
                        (
                            [("cache-control", "max-age=60")],
                            axum::Json(serde_json::json!({"keys": [jwk]})),
                        )
                    }
                }),
            )
            .route(
                "/bad.json",
                axum::routing::get(|| async { "{\"keys\": 1}" }),
            );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(l, app).await });
        let clock = Arc::new(ManualClock(Mutex::new(Instant::now())));
        let cache = JwksCache::new(reqwest::Client::new(), true).with_clock(clock.clone());
        let url = format!("{base}/jwks.json");
        let kid_of = |s: &JwkSet| s.keys[0].common.key_id.clone().unwrap();

        let (set, fetched) = cache.get(&url, false).await.unwrap();
        assert!(fetched);
        assert_eq!(kid_of(&set), "k1");
        *kid.lock().unwrap() = "k2".into();
        let (set, fetched) = cache.get(&url, false).await.unwrap();
        assert!(!fetched, "fresh for 60 s");
        assert_eq!(
            (kid_of(&set).as_str(), hits.load(Ordering::SeqCst)),
            ("k1", 1)
        );
        *clock.0.lock().unwrap() += Duration::from_secs(61);
        let (set, fetched) = cache.get(&url, false).await.unwrap();
        assert!(fetched, "expired: fetched again");
        assert_eq!(
            (kid_of(&set).as_str(), hits.load(Ordering::SeqCst)),
            ("k2", 2)
        );
        // Asked for again at once (an unknown kid), even when fresh.
        assert!(cache.get(&url, true).await.unwrap().1);
        assert_eq!(hits.load(Ordering::SeqCst), 3);

        let e = cache
            .get(&format!("{base}/bad.json"), false)
            .await
            .unwrap_err();
        assert_eq!(e.code, "a2a_card_signature_invalid");
        assert!(e.message.contains("not a JWK Set"), "{}", e.message);
        assert!(
            JwksCache::check_url(&url, false).is_err(),
            "http outside development"
        );
        assert!(JwksCache::check_url("https://user:pw@example.com/j", true).is_err());
        server.abort();
    }
}
