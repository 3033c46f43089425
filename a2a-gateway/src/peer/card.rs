//! Peer cards: fetched through `a2a-client`'s resolver (shared cache, ETag revalidation) with
//! the gateway's TTL clamp, from the well-known path of a registered endpoint.

use std::time::Duration;

use serde_json::Value;
use url::Url;

use a2a_client::discovery::{CardResolver, DiscoveryError, FetchedCard, TtlClamp};

use super::{MAX_CARD_TTL, MIN_CARD_TTL};
use crate::protocol::errors::Refusal;

/// Time a card is kept when its answer names no `max-age`.
pub const DEFAULT_CARD_TTL: Duration = Duration::from_secs(300);

/// The gateway's card freshness: the peer's `max-age` (minus `Age`; `no-store` / `no-cache` give
/// the minimum) clamped to 30 s .. 1 h, [`DEFAULT_CARD_TTL`] when there is none.
pub const CARD_TTL: TtlClamp = TtlClamp {
    min: MIN_CARD_TTL,
    max: MAX_CARD_TTL,
    default: DEFAULT_CARD_TTL,
};

/// The peer-card cache: the client's [`CardResolver`] over `http` (the gateway's peer client,
/// whose DNS resolver is [`CheckedResolver`]) with [`CARD_TTL`], the cached card served when a
/// refetch fails, and bodies that are not Agent Cards refused.
pub fn card_resolver(http: reqwest::Client) -> CardResolver {
    CardResolver::new(http)
        .with_ttl_clamp(CARD_TTL)
        .with_stale_if_error(true)
        .with_card_check(agent_card_check)
}

/// A card body must be a JSON object with a `name` that passes its version's structure check
/// ([`card_structure`]). A body that fails is not cached, and the cached card, when there is
/// one, is served instead (`with_stale_if_error`); without one, `a2a_card_unavailable`.
fn agent_card_check(body: &[u8]) -> Result<(), String> {
    let card: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON ({e})"))?;
    if !card.is_object() || card.get("name").is_none() {
        return Err("not an Agent Card".to_owned());
    }
    card_structure(&card)
}

/// The members an A2A 1.0 card must have (the specification's `AgentCard` required fields).
const V1_REQUIRED: [&str; 8] = [
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
];

/// The structure check of a card in its own version: a card with `supportedInterfaces` is an
/// A2A 1.0 card (its required members present, each of its type), any other an A2A 0.3 card
/// (the 0.3 `AgentCard`'s members and types). Unknown members are allowed in both.
pub fn card_structure(card: &Value) -> Result<(), String> {
    use a2a_types::strict::parse_value_ref;
    if card.get("supportedInterfaces").is_some() {
        if let Some(m) = V1_REQUIRED.iter().find(|k| card.get(**k).is_none()) {
            return Err(format!("not an A2A 1.0 Agent Card: {m} is missing"));
        }
        parse_value_ref::<a2a_types::v1::AgentCard>(card)
            .map_err(|e| format!("not an A2A 1.0 Agent Card: {e}"))?;
    } else {
        parse_value_ref::<a2a_types::v03::AgentCard>(card)
            .map_err(|e| format!("not an A2A 0.3 Agent Card: {e}"))?;
    }
    Ok(())
}

/// Fetches the peer card for a registered endpoint through `cards`: `<endpoint>/.well-known/
/// agent-card.json`, else the origin's well-known card, cached under the first (`refresh`
/// revalidates a fresh card). Check `endpoint` with [`check_url`] and [`check_resolved`] first.
pub async fn peer_card(
    cards: &CardResolver,
    endpoint: &Url,
    credential: Option<&str>,
    max_bytes: u64,
    refresh: bool,
) -> Result<FetchedCard, Refusal> {
    let (card_url, fallback) = card_urls(endpoint);
    peer_card_at(cards, card_url, fallback, credential, max_bytes, refresh).await
}

/// The card addresses of a registered endpoint: `<endpoint>/.well-known/agent-card.json` and,
/// when the endpoint has a path, the origin's well-known card as the fallback.
pub fn card_urls(endpoint: &Url) -> (Url, Option<Url>) {
    let mut card_url = endpoint.clone();
    let path = format!(
        "{}/.well-known/agent-card.json",
        endpoint.path().trim_end_matches('/')
    );
    card_url.set_path(&path);
    card_url.set_query(None);
    card_url.set_fragment(None);
    let fallback = (!endpoint.path().trim_matches('/').is_empty()).then(|| {
        let mut root = card_url.clone();
        root.set_path("/.well-known/agent-card.json");
        root
    });
    (card_url, fallback)
}

/// [`peer_card`] at the addresses [`card_urls`] gave.
pub(crate) async fn peer_card_at(
    cards: &CardResolver,
    card_url: Url,
    fallback: Option<Url>,
    credential: Option<&str>,
    max_bytes: u64,
    refresh: bool,
) -> Result<FetchedCard, Refusal> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(c) = credential {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {c}"))
            .map_err(|_| Refusal::card_unavailable("the agent credential is not a header value"))?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    // The request's delegated authorization goes to the peer, and keys the cache.
    if let Some(d) = super::delegated::current()
        && let Ok(mut value) = reqwest::header::HeaderValue::from_str(&d)
    {
        value.set_sensitive(true);
        headers.insert(super::delegated::HEADER, value);
    }
    cards
        .clone()
        .with_max_bytes(usize::try_from(max_bytes).unwrap_or(usize::MAX))
        .with_partition(super::delegated::cache_partition())
        .with_headers(headers)
        .fetch_url_or(card_url, fallback, refresh)
        .await
        .map_err(|e| Refusal::card_unavailable(&discovery_detail(&e)))
}

/// The `result` label of a card resolution in `a2a_peer_card_fetches_total`: how the card was
/// obtained (`fetched`, `fresh` from the cache, `revalidated`, `stale`), or `error`.
pub fn fetch_result(r: &Result<FetchedCard, Refusal>) -> &'static str {
    use a2a_client::discovery::CacheStatus;
    match r {
        Ok(c) => match c.cache {
            CacheStatus::Fetched => "fetched",
            CacheStatus::Fresh => "fresh",
            CacheStatus::Revalidated => "revalidated",
            CacheStatus::Stale => "stale",
        },
        Err(_) => "error",
    }
}

/// The peer card as a JSON value (for the governed card).
pub fn card_json(card: &FetchedCard) -> Result<Value, Refusal> {
    card.json()
        .map_err(|e| Refusal::card_unavailable(&format!("{}: not JSON ({e})", card.url)))
}

/// The `a2a_card_unavailable` detail of a discovery error.
fn discovery_detail(e: &DiscoveryError) -> String {
    match e {
        DiscoveryError::Http { url, source } => format!("{url}: {}", error_chain(source)),
        DiscoveryError::Status { url, status, .. } => format!("{url}: HTTP {status}"),
        DiscoveryError::TooLarge { url, limit } => format!("{url}: larger than {limit} bytes"),
        DiscoveryError::Parse { url, source } => format!("{url}: not JSON ({source})"),
        DiscoveryError::Invalid { url, reason } => format!("{url}: {reason}"),
        other => other.to_string(),
    }
}

/// An error and its sources, joined.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
