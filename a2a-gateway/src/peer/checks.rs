//! The static peer address checks of a hop, computed once per registration and card.
//!
//! Every hop checks the agent's registered endpoint (parse, [`peer::check_url`]), chooses the
//! interface from the peer's card ([`peer::select_from`]) and checks the chosen URL against the
//! registered endpoint. None of that depends on anything but the registered endpoint text, the
//! card's exact body and the gateway's configuration (`dev_mode`, `serve_v1`, fixed for its
//! life), so the results are kept here, keyed by those inputs: a changed registration (another
//! endpoint text) or a changed card (other body bytes) misses and is checked afresh. Only
//! successes are kept; a refusal is recomputed every hop.
//!
//! What is not kept: the DNS checks ([`peer::check_resolved`]) still run on every hop, and the
//! peer client's resolver ([`peer::CheckedResolver`]) still checks every address it connects to.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Bytes;
use url::Url;

use crate::protocol::errors::Refusal;
use crate::{peer, peer::Chosen};

/// Entries kept before the cache starts over (endpoints of removed agents go with them).
const MAX_ENTRIES: usize = 4096;

/// A registered endpoint, parsed and statically checked, with its card addresses
/// ([`peer::card_urls`]).
#[derive(Debug, Clone)]
pub(crate) struct Registered {
    /// The endpoint.
    pub(crate) url: Url,
    /// `<endpoint>/.well-known/agent-card.json`.
    pub(crate) card_url: Url,
    /// The origin's well-known card, when the endpoint has a path.
    pub(crate) fallback: Option<Url>,
}

/// One registered endpoint and, once a hop got that far, the checked interface chosen from the
/// card body it came from.
#[derive(Debug, Clone)]
struct Entry {
    registered: Registered,
    chosen: Option<(Bytes, Chosen)>,
}

/// The checked registered endpoints and chosen interfaces (see the module docs).
#[derive(Debug, Default)]
pub struct PeerChecks {
    map: Mutex<HashMap<String, Entry>>,
}

impl PeerChecks {
    /// The registered endpoint `endpoint`, parsed and statically checked ([`peer::check_url`]
    /// against itself), from the cache when this exact text passed before.
    pub(crate) fn registered(&self, endpoint: &str, dev_mode: bool) -> Result<Registered, Refusal> {
        if let Some(r) = self
            .map
            .lock()
            .ok()
            .and_then(|m| m.get(endpoint).map(|e| e.registered.clone()))
        {
            return Ok(r);
        }
        let url = Url::parse(endpoint)
            .map_err(|e| Refusal::peer_url_refused(&format!("registered endpoint: {e}")))?;
        peer::check_url(&url, &url, dev_mode)?;
        let (card_url, fallback) = peer::card_urls(&url);
        let registered = Registered {
            url,
            card_url,
            fallback,
        };
        if let Ok(mut m) = self.map.lock() {
            if m.len() >= MAX_ENTRIES {
                m.clear();
            }
            m.entry(endpoint.to_owned()).or_insert_with(|| Entry {
                registered: registered.clone(),
                chosen: None,
            });
        }
        Ok(registered)
    }

    /// The interface chosen and checked earlier for `endpoint` from exactly this card `body`.
    pub(crate) fn chosen(&self, endpoint: &str, body: &Bytes) -> Option<Chosen> {
        let m = self.map.lock().ok()?;
        let (kept, chosen) = m.get(endpoint)?.chosen.as_ref()?;
        // The entry holds its body, so an equal pointer is the same bytes; else compare them.
        (kept.as_ptr() == body.as_ptr() && kept.len() == body.len() || kept == body)
            .then(|| chosen.clone())
    }

    /// Keeps `chosen`, which passed every static check, for `endpoint` and the card `body`.
    pub(crate) fn keep_chosen(&self, endpoint: &str, body: &Bytes, chosen: &Chosen) {
        if let Ok(mut m) = self.map.lock()
            && let Some(e) = m.get_mut(endpoint)
        {
            let mut c = chosen.clone();
            c.signature_trust = None;
            e.chosen = Some((body.clone(), c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{protocol::errors::Binding, protocol::errors::Version};

    fn chosen(url: &str) -> Chosen {
        Chosen {
            url: Url::parse(url).unwrap(),
            binding: Binding::JsonRpc,
            version: Version::V1,
            tenant: None,
            signature_trust: Some("unsigned"),
        }
    }

    #[test]
    fn a_changed_registration_is_checked_again() {
        let c = PeerChecks::default();
        let ok = "https://peer.example/a2a";
        assert_eq!(c.registered(ok, false).unwrap().url.as_str(), ok);
        // Kept: the same text is answered from the cache.
        assert!(c.map.lock().unwrap().contains_key(ok));
        let r = c.registered(ok, false).unwrap();
        assert_eq!(r.url.as_str(), ok);
        assert_eq!(
            r.card_url.as_str(),
            "https://peer.example/a2a/.well-known/agent-card.json"
        );
        // Another endpoint text is another key: refused on its own merits, never kept.
        for bad in [
            "https://10.0.0.1/a2a",
            "http://peer.example/a2a",
            "https://metadata.google.internal/a2a",
        ] {
            let e = c.registered(bad, false).unwrap_err();
            assert_eq!(e.code, "a2a_peer_url_refused", "{bad}");
            assert!(!c.map.lock().unwrap().contains_key(bad));
            assert!(c.registered(bad, false).is_err(), "{bad} refused again");
        }
    }

    #[test]
    fn a_changed_card_misses_and_the_choice_is_per_endpoint() {
        let c = PeerChecks::default();
        let ep = "https://peer.example/a2a";
        c.registered(ep, false).unwrap();
        let body = Bytes::from_static(br#"{"name":"a"}"#);
        assert!(c.chosen(ep, &body).is_none());
        c.keep_chosen(ep, &body, &chosen("https://peer.example/a2a/v1"));
        let got = c.chosen(ep, &body).unwrap();
        assert_eq!(got.url.as_str(), "https://peer.example/a2a/v1");
        assert_eq!(got.signature_trust, None, "trust is judged every hop");
        // Equal bytes in another allocation (a refetch of the same card): still the same card.
        let same = Bytes::from(br#"{"name":"a"}"#.to_vec());
        assert!(c.chosen(ep, &same).is_some());
        // Another body: a miss, so the card is selected and checked again.
        let other = Bytes::from_static(br#"{"name":"b"}"#);
        assert!(c.chosen(ep, &other).is_none());
        // Another registration does not see this endpoint's choice.
        c.registered("https://peer2.example/a2a", false).unwrap();
        assert!(c.chosen("https://peer2.example/a2a", &body).is_none());
        // A choice for an endpoint that never passed its own check is not kept.
        c.keep_chosen("https://10.0.0.1/", &body, &chosen("https://10.0.0.1/"));
        assert!(c.chosen("https://10.0.0.1/", &body).is_none());
    }
}
