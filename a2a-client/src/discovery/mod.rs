//! Agent card discovery with HTTP caching.
//!
//! [`CardResolver::fetch`] takes an agent's base URL (or the card URL itself), fetches
//! `/.well-known/agent-card.json` with the `A2A-Version` header, and keeps the card in a cache
//! that follows the parts of RFC 9111 the 1.0 spec asks for (§8.6): `Cache-Control: max-age`
//! (minus `Age`) makes a card fresh; a stale card with an `ETag` / `Last-Modified` is revalidated
//! with `If-None-Match` / `If-Modified-Since`, and a `304 Not Modified` keeps the cached body;
//! `no-store` is never cached, `no-cache` is always revalidated. What is read is capped at
//! [`CardResolver::max_bytes`] (checked on `Content-Length` and while streaming the body).
//!
//! A gateway-style policy is available on top: [`CardResolver::with_ttl_clamp`] bounds the
//! peer's `max-age` ([`TtlClamp`]), [`CardResolver::with_stale_if_error`] serves the cached card
//! when a refetch fails, [`CardResolver::with_card_check`] refuses bodies that are not cards,
//! [`CardResolver::revalidate`] asks again even when fresh, and [`CardResolver::fetch_url_or`]
//! falls back to a second URL. The resolver does no address checks of its own: give it a
//! `reqwest::Client` whose DNS resolver refuses internal addresses (the gateway does), and check
//! URLs before calling.
//!
//! Time comes from a [`Clock`], so tests drive freshness without sleeping.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_LENGTH, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use url::Url;

use crate::headers as a2a_header;

mod policy;
use crate::select::{self, CardInterfaces, NoUsableInterface, SelectedInterface, Speaks};
pub use policy::{CachePolicy, TtlClamp};

/// The well-known path of the public agent card (both versions).
pub const WELL_KNOWN_PATH: &str = ".well-known/agent-card.json";

/// Default cap on the size of a card body: 1 MiB.
pub const DEFAULT_MAX_CARD_BYTES: usize = 1024 * 1024;

/// A source of monotonic time for cache freshness.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Why a card could not be discovered.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The base URL cannot be turned into a card URL.
    #[error("invalid agent URL {url:?}: {reason}")]
    BadUrl {
        /// What was given.
        url: String,
        /// Why it is unusable.
        reason: String,
    },
    /// Connecting, sending or reading failed.
    #[error("fetching agent card {url}: {source}")]
    Http {
        /// The card URL.
        url: Url,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with a non-success status.
    #[error("fetching agent card {url}: HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        /// The card URL.
        url: Url,
        /// The HTTP status.
        status: u16,
        /// The first bytes of the body (lossy UTF-8), for the message.
        body: String,
    },
    /// The body is larger than the configured limit.
    #[error("agent card {url} is larger than the {limit}-byte limit")]
    TooLarge {
        /// The card URL.
        url: Url,
        /// The limit in bytes.
        limit: usize,
    },
    /// The body failed the resolver's card check ([`CardResolver::with_card_check`]).
    #[error("agent card {url}: {reason}")]
    Invalid {
        /// The card URL.
        url: Url,
        /// What the check said.
        reason: String,
    },
    /// The body is not an agent card.
    #[error("agent card {url} is not valid JSON: {source}")]
    Parse {
        /// The card URL.
        url: Url,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
}

/// How a [`FetchedCard`] was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    /// Downloaded (HTTP 200).
    Fetched,
    /// Served from the cache without any request (still fresh).
    Fresh,
    /// Revalidated with the server (HTTP 304), cached body reused.
    Revalidated,
    /// Served from the cache, no longer fresh, because fetching failed
    /// ([`CardResolver::with_stale_if_error`]).
    Stale,
}

/// A check of a card body beyond "JSON with readable interface members" (see
/// [`CardResolver::with_card_check`]); `Err` carries the reason.
pub type CardCheck = fn(&[u8]) -> Result<(), String>;

/// An agent card as fetched: the exact body plus what selection needs.
#[derive(Debug, Clone)]
pub struct FetchedCard {
    /// The card URL it was fetched from.
    pub url: Url,
    /// The exact body bytes (for typed parsing, signature checks and pass-through).
    pub body: Bytes,
    /// The interface members of the card (either version).
    pub interfaces: CardInterfaces,
    /// The `ETag` the server sent, if any.
    pub etag: Option<String>,
    /// How this call obtained it.
    pub cache: CacheStatus,
}

impl FetchedCard {
    fn of(entry: CacheEntry, cache: CacheStatus) -> FetchedCard {
        FetchedCard {
            url: entry.source,
            body: entry.body,
            interfaces: entry.interfaces,
            etag: entry.etag,
            cache,
        }
    }

    /// Selects the interface to use among the card's offers (see [`crate::select`]).
    pub fn select(&self, speaks: &Speaks) -> Result<SelectedInterface, NoUsableInterface> {
        select::select(&self.interfaces, speaks)
    }

    /// The card body as a JSON value tree (pass-through use only).
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    /// Whether this is a 1.0 card (it has a non-empty `supportedInterfaces`); otherwise 0.3.
    pub fn is_v1(&self) -> bool {
        !self.interfaces.supported_interfaces.is_empty()
    }
}

#[derive(Debug, Clone)]
struct CacheEntry {
    /// The URL the body came from (a fallback URL's entry is stored under the primary URL).
    source: Url,
    body: Bytes,
    interfaces: CardInterfaces,
    etag: Option<String>,
    last_modified: Option<String>,
    /// Instant until which the entry is fresh (`None` = must revalidate).
    fresh_until: Option<Instant>,
}

/// Fetches agent cards and caches them per card URL. Cheap to clone (shared cache).
#[derive(Debug, Clone)]
pub struct CardResolver {
    http: reqwest::Client,
    cache: Arc<Mutex<HashMap<String, CacheEntry>>>,
    max_bytes: usize,
    a2a_version: String,
    headers: HeaderMap,
    clock: Arc<dyn Clock>,
    ttl: Option<TtlClamp>,
    stale_if_error: bool,
    check: Option<CardCheck>,
    /// Cache partition: cards fetched under another partition are kept apart.
    partition: Option<String>,
    /// Keys a card's signature must verify with (feature `signing`).
    #[cfg(feature = "signing")]
    trusted: Option<Arc<jsonwebtoken::jwk::JwkSet>>,
}

impl CardResolver {
    /// A resolver using `http` for requests (share one client to reuse connections).
    pub fn new(http: reqwest::Client) -> CardResolver {
        CardResolver {
            http,
            cache: Arc::new(Mutex::new(HashMap::new())),
            max_bytes: DEFAULT_MAX_CARD_BYTES,
            a2a_version: crate::select::Version::V1.as_str().to_string(),
            headers: HeaderMap::new(),
            clock: Arc::new(SystemClock),
            ttl: None,
            stale_if_error: false,
            check: None,
            partition: None,
            #[cfg(feature = "signing")]
            trusted: None,
        }
    }

    /// Keeps cards for the peer's `max-age` clamped by `clamp` instead of following the caching
    /// headers to the letter (see [`TtlClamp`]).
    pub fn with_ttl_clamp(mut self, clamp: TtlClamp) -> CardResolver {
        self.ttl = Some(clamp);
        self
    }

    /// When fetching fails, serve the cached card if there is one ([`CacheStatus::Stale`]).
    pub fn with_stale_if_error(mut self, on: bool) -> CardResolver {
        self.stale_if_error = on;
        self
    }

    /// Refuses fetched bodies that `check` rejects ([`DiscoveryError::Invalid`]); they are not
    /// cached.
    pub fn with_card_check(mut self, check: CardCheck) -> CardResolver {
        self.check = Some(check);
        self
    }

    /// Accepts only cards whose signatures verify with one of `keys` (feature `signing`, see
    /// [`crate::signing::verify_card`]): an unsigned card, one signed by another key, or one
    /// whose signature does not match is refused ([`DiscoveryError::Invalid`] naming the trust
    /// state and the reason) and not cached.
    #[cfg(feature = "signing")]
    pub fn with_trusted_keys(mut self, keys: jsonwebtoken::jwk::JwkSet) -> CardResolver {
        self.trusted = Some(Arc::new(keys));
        self
    }

    /// Keeps the cards this resolver fetches apart from those of other partitions (the cache
    /// stays shared; `None`, the default, is a partition of its own): for requests whose extra
    /// headers ([`Self::with_headers`]) may change the card, such as a user's credential.
    pub fn with_partition(mut self, partition: Option<String>) -> CardResolver {
        self.partition = partition;
        self
    }

    /// The cache key of `url` in this resolver's partition.
    fn key(&self, url: &Url) -> String {
        match &self.partition {
            Some(p) => format!("{p}\n{url}"),
            None => url.as_str().to_string(),
        }
    }

    /// Drops the cached card of `url` (in this resolver's partition).
    pub fn forget(&self, url: &Url) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.remove(&self.key(url));
        }
    }

    /// Sets the cap on the card body size.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> CardResolver {
        self.max_bytes = max_bytes;
        self
    }

    /// The cap on the card body size.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Sets the `A2A-Version` value sent with card requests (default `1.0`).
    pub fn with_a2a_version(mut self, version: impl Into<String>) -> CardResolver {
        self.a2a_version = version.into();
        self
    }

    /// Extra headers sent with card requests (e.g. credentials for a protected card).
    pub fn with_headers(mut self, headers: HeaderMap) -> CardResolver {
        self.headers = headers;
        self
    }

    /// Replaces the clock (tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> CardResolver {
        self.clock = clock;
        self
    }

    /// Drops every cached card.
    pub fn clear(&self) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.clear();
        }
    }

    /// The card URL for an agent URL: a URL whose path already ends in `.json` is used as is;
    /// otherwise `.well-known/agent-card.json` is appended to its path (as the Python SDK does).
    pub fn card_url(agent_url: &str) -> Result<Url, DiscoveryError> {
        let bad = |reason: String| DiscoveryError::BadUrl {
            url: agent_url.to_string(),
            reason,
        };
        let mut url = Url::parse(agent_url.trim()).map_err(|e| bad(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(format!(
                "scheme {:?} is not http or https",
                url.scheme()
            )));
        }
        if url.path().ends_with(".json") {
            return Ok(url);
        }
        let path = format!("{}/{WELL_KNOWN_PATH}", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.set_query(None);
        url.set_fragment(None);
        Ok(url)
    }

    /// Fetches (or serves from cache) the card of the agent at `agent_url`.
    pub async fn fetch(&self, agent_url: &str) -> Result<FetchedCard, DiscoveryError> {
        let url = Self::card_url(agent_url)?;
        self.fetch_url(url).await
    }

    /// Fetches (or serves from cache) the card at exactly `url`.
    pub async fn fetch_url(&self, url: Url) -> Result<FetchedCard, DiscoveryError> {
        self.resolve(url, None, false).await
    }

    /// Asks the server again for the card of the agent at `agent_url` even if the cached card is
    /// fresh: a conditional request (`If-None-Match` / `If-Modified-Since`) when one is cached.
    pub async fn revalidate(&self, agent_url: &str) -> Result<FetchedCard, DiscoveryError> {
        self.resolve(Self::card_url(agent_url)?, None, true).await
    }

    /// [`Self::revalidate`] for exactly `url`.
    pub async fn revalidate_url(&self, url: Url) -> Result<FetchedCard, DiscoveryError> {
        self.resolve(url, None, true).await
    }

    /// The card at `url`, or when fetching it fails, the card at `fallback` (fetched
    /// unconditionally); either way cached under `url`. `revalidate` asks even if fresh. When
    /// both fail, the error is `url`'s.
    pub async fn fetch_url_or(
        &self,
        url: Url,
        fallback: Option<Url>,
        revalidate: bool,
    ) -> Result<FetchedCard, DiscoveryError> {
        self.resolve(url, fallback, revalidate).await
    }

    async fn resolve(
        &self,
        url: Url,
        fallback: Option<Url>,
        force: bool,
    ) -> Result<FetchedCard, DiscoveryError> {
        let key = self.key(&url);
        let cached = self.cache.lock().ok().and_then(|c| c.get(&key).cloned());
        let now = self.clock.now();
        if let Some(entry) = &cached
            && !force
            && entry.fresh_until.is_some_and(|until| now < until)
        {
            return Ok(FetchedCard::of(entry.clone(), CacheStatus::Fresh));
        }
        let mut result = self.request(&url, cached.as_ref(), now).await;
        if let (Err(_), Some(fallback)) = (&result, fallback)
            && let Ok(found) = self.request(&fallback, None, now).await
        {
            result = Ok(found);
        }
        match result {
            Ok((entry, status, no_store)) => {
                self.store(&key, &entry, no_store);
                Ok(FetchedCard::of(entry, status))
            }
            Err(e) => match cached {
                Some(entry) if self.stale_if_error => {
                    Ok(FetchedCard::of(entry, CacheStatus::Stale))
                }
                _ => Err(e),
            },
        }
    }

    /// How long an answer with `headers` stays fresh, and whether it must not be stored.
    fn freshness(&self, headers: &HeaderMap, now: Instant) -> (Option<Instant>, bool) {
        let policy = CachePolicy::from_headers(headers);
        match &self.ttl {
            Some(clamp) => (Some(now + clamp.ttl(&policy)), false),
            None if policy.no_store => (None, true),
            None => (policy.fresh_for().map(|d| now + d), false),
        }
    }

    /// One request for `url` (conditional on `cached`): the entry to store, how it was
    /// obtained, and whether it must not be stored.
    async fn request(
        &self,
        url: &Url,
        cached: Option<&CacheEntry>,
        now: Instant,
    ) -> Result<(CacheEntry, CacheStatus, bool), DiscoveryError> {
        let url = url.clone();
        let mut request = self
            .http
            .get(url.clone())
            .headers(self.headers.clone())
            .header(ACCEPT, "application/json")
            .header(a2a_header::VERSION, &self.a2a_version);
        if let Some(entry) = cached {
            if let Some(etag) = &entry.etag {
                request = request.header(IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &entry.last_modified {
                request = request.header(IF_MODIFIED_SINCE, lm);
            }
        }
        let response = request
            .send()
            .await
            .map_err(|source| DiscoveryError::Http {
                url: url.clone(),
                source,
            })?;
        let status = response.status();
        let headers = response.headers().clone();
        let (fresh_until, no_store) = self.freshness(&headers, now);

        if status == reqwest::StatusCode::NOT_MODIFIED
            && let Some(entry) = cached
        {
            // RFC 9111 §4.3.4: update the stored headers from the 304.
            let mut entry = entry.clone();
            entry.fresh_until = fresh_until;
            if let Some(etag) = header_string(&headers, ETAG) {
                entry.etag = Some(etag);
            }
            if let Some(lm) = header_string(&headers, LAST_MODIFIED) {
                entry.last_modified = Some(lm);
            }
            return Ok((entry, CacheStatus::Revalidated, no_store));
        }
        if !status.is_success() {
            let body = read_limited(response, 512).await.unwrap_or_default();
            return Err(DiscoveryError::Status {
                url,
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).trim().to_string(),
            });
        }
        if let Some(len) = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            && len > self.max_bytes as u64
        {
            return Err(DiscoveryError::TooLarge {
                url,
                limit: self.max_bytes,
            });
        }
        let body = match read_limited(response, self.max_bytes).await {
            Ok(body) => body,
            Err(ReadError::TooLarge) => {
                return Err(DiscoveryError::TooLarge {
                    url,
                    limit: self.max_bytes,
                });
            }
            Err(ReadError::Http(source)) => return Err(DiscoveryError::Http { url, source }),
        };
        let interfaces =
            CardInterfaces::from_json(&body).map_err(|source| DiscoveryError::Parse {
                url: url.clone(),
                source,
            })?;
        if let Some(check) = self.check
            && let Err(reason) = check(&body)
        {
            return Err(DiscoveryError::Invalid { url, reason });
        }
        #[cfg(feature = "signing")]
        if let Some(keys) = &self.trusted {
            let trust = match serde_json::from_slice::<serde_json::Value>(&body) {
                Ok(card) => crate::signing::verify_card(&card, keys),
                Err(e) => crate::signing::Trust::Invalid(format!("not JSON ({e})")),
            };
            if !matches!(trust, crate::signing::Trust::Verified(_)) {
                return Err(DiscoveryError::Invalid {
                    url,
                    reason: format!("card signature {}: {}", trust.as_str(), trust.reason()),
                });
            }
        }
        let entry = CacheEntry {
            source: url,
            body,
            interfaces,
            etag: header_string(&headers, ETAG),
            last_modified: header_string(&headers, LAST_MODIFIED),
            fresh_until,
        };
        Ok((entry, CacheStatus::Fetched, no_store))
    }

    fn store(&self, key: &str, entry: &CacheEntry, no_store: bool) {
        if let Ok(mut cache) = self.cache.lock() {
            if no_store {
                cache.remove(key);
            } else {
                cache.insert(key.to_string(), entry.clone());
            }
        }
    }
}

fn header_string(headers: &HeaderMap, name: http::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Why reading a body stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    TooLarge,
    Http(reqwest::Error),
}

/// Reads a response body, refusing more than `limit` bytes.
pub(crate) async fn read_limited(
    response: reqwest::Response,
    limit: usize,
) -> Result<Bytes, ReadError> {
    let mut stream = response.bytes_stream();
    let mut buf = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(ReadError::Http)?;
        if buf.len() + chunk.len() > limit {
            return Err(ReadError::TooLarge);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_url_rules() {
        assert_eq!(
            CardResolver::card_url("http://h:1").unwrap().as_str(),
            "http://h:1/.well-known/agent-card.json"
        );
        assert_eq!(
            CardResolver::card_url("http://h/a/b/").unwrap().as_str(),
            "http://h/a/b/.well-known/agent-card.json"
        );
        assert_eq!(
            CardResolver::card_url("http://h/x/card.json")
                .unwrap()
                .as_str(),
            "http://h/x/card.json"
        );
        assert!(CardResolver::card_url("ftp://h").is_err());
        assert!(CardResolver::card_url("not a url").is_err());
    }
}
