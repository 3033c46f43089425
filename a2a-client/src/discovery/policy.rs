//! Caching headers of a card answer ([`CachePolicy`]) and a caller's bounds on them ([`TtlClamp`]).

use std::time::Duration;

use http::HeaderMap;
use http::header::{AGE, CACHE_CONTROL};

/// The caching-relevant directives of a response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CachePolicy {
    /// `max-age` in seconds.
    pub max_age: Option<u64>,
    /// `Age` in seconds.
    pub age: u64,
    /// `no-store`.
    pub no_store: bool,
    /// `no-cache` (store, but always revalidate).
    pub no_cache: bool,
}

impl CachePolicy {
    /// Reads `Cache-Control` (all fields) and `Age`.
    pub fn from_headers(headers: &HeaderMap) -> CachePolicy {
        let mut policy = CachePolicy::default();
        for value in headers.get_all(CACHE_CONTROL) {
            let Ok(value) = value.to_str() else { continue };
            for directive in value.split(',') {
                let directive = directive.trim();
                let (name, arg) = match directive.split_once('=') {
                    Some((n, a)) => (n.trim(), Some(a.trim().trim_matches('"'))),
                    None => (directive, None),
                };
                match name.to_ascii_lowercase().as_str() {
                    "max-age" => policy.max_age = arg.and_then(|a| a.parse().ok()),
                    "no-store" => policy.no_store = true,
                    "no-cache" => policy.no_cache = true,
                    _ => {}
                }
            }
        }
        policy.age = headers
            .get(AGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        policy
    }

    /// How long a response stays fresh (`None`: revalidate on every use).
    pub fn fresh_for(&self) -> Option<Duration> {
        if self.no_store || self.no_cache {
            return None;
        }
        let max_age = self.max_age?;
        let left = max_age.saturating_sub(self.age);
        (left > 0).then(|| Duration::from_secs(left))
    }
}

/// Bounds on how long a card stays fresh, overriding the peer's caching headers (a gateway's
/// policy). The peer's `max-age` minus `Age` (zero for `no-store` / `no-cache`, [`Self::default`]
/// when there is no `max-age`) is clamped to `min ..= max`. With a clamp every card is stored,
/// `no-store` included, and is revalidated (`If-None-Match` / `If-Modified-Since`) once stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtlClamp {
    /// The least time a card is kept.
    pub min: Duration,
    /// The most time a card is kept.
    pub max: Duration,
    /// The time (before clamping) when the answer names no `max-age`.
    pub default: Duration,
}

impl TtlClamp {
    /// How long an answer with these caching headers stays fresh.
    pub fn ttl(&self, policy: &CachePolicy) -> Duration {
        let ttl = if policy.no_store || policy.no_cache {
            Duration::ZERO
        } else {
            match policy.max_age {
                Some(max_age) => Duration::from_secs(max_age.saturating_sub(policy.age)),
                None => self.default,
            }
        };
        ttl.clamp(self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control_parsing() {
        let mut h = HeaderMap::new();
        h.insert(CACHE_CONTROL, "public, max-age=60".parse().unwrap());
        h.insert(AGE, "10".parse().unwrap());
        let p = CachePolicy::from_headers(&h);
        assert_eq!(p.max_age, Some(60));
        assert_eq!(p.fresh_for(), Some(Duration::from_secs(50)));
        h.insert(CACHE_CONTROL, "no-cache, max-age=60".parse().unwrap());
        assert_eq!(CachePolicy::from_headers(&h).fresh_for(), None);
        h.insert(CACHE_CONTROL, "max-age=\"5\"".parse().unwrap());
        h.insert(AGE, "9".parse().unwrap());
        assert_eq!(CachePolicy::from_headers(&h).fresh_for(), None);
        assert!(
            CachePolicy::from_headers(&HeaderMap::new())
                .fresh_for()
                .is_none()
        );
    }

    #[test]
    fn clamp_bounds_max_age_and_defaults() {
        let clamp = TtlClamp {
            min: Duration::from_secs(30),
            max: Duration::from_secs(3600),
            default: Duration::from_secs(300),
        };
        let mut h = HeaderMap::new();
        let ttl = |h: &HeaderMap| clamp.ttl(&CachePolicy::from_headers(h));
        assert_eq!(ttl(&h), Duration::from_secs(300));
        h.insert(CACHE_CONTROL, "max-age=5".parse().unwrap());
        assert_eq!(ttl(&h), Duration::from_secs(30));
        h.insert(CACHE_CONTROL, "max-age=99999".parse().unwrap());
        assert_eq!(ttl(&h), Duration::from_secs(3600));
        h.insert(CACHE_CONTROL, "max-age=120".parse().unwrap());
        h.insert(AGE, "60".parse().unwrap());
        assert_eq!(ttl(&h), Duration::from_secs(60));
        h.insert(CACHE_CONTROL, "no-store".parse().unwrap());
        assert_eq!(ttl(&h), Duration::from_secs(30));
    }
}
