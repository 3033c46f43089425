//! Interface selection: which entry of a peer's card the gateway calls ([`select_interface`],
//! [`select_with`] with the settings' and the registration's preferences).

use serde_json::Value;
use url::Url;

use a2a_client::select as sel;

use crate::{protocol::errors::Binding, protocol::errors::Refusal, protocol::errors::Version};

/// The interface the gateway uses for a peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// URL of the entry.
    pub url: Url,
    /// Binding.
    pub binding: Binding,
    /// Version.
    pub version: Version,
    /// Tenant to send, if the entry names one.
    pub tenant: Option<String>,
    /// Trust state of the card the entry came from (`crate::trust`), once checked.
    pub signature_trust: Option<&'static str>,
}

/// The `(binding, version)` pairs the gateway speaks to peers: JSON-RPC 1.0, HTTP+JSON 1.0 and
/// JSON-RPC 0.3, or JSON-RPC 0.3 only when `serve-v1: false`. (The gateway has no HTTP+JSON 0.3
/// client: that binding was never normative in 0.3.)
pub fn gateway_speaks(serve_v1: bool) -> sel::Speaks {
    use sel::{Binding as B, Version as V};
    if serve_v1 {
        sel::Speaks::pairs([
            (B::JsonRpc, V::V1),
            (B::HttpJson, V::V1),
            (B::JsonRpc, V::V03),
        ])
    } else {
        sel::Speaks::pairs([(B::JsonRpc, V::V03)])
    }
}

/// What the choice of a peer's interface depends on besides its card.
#[derive(Debug, Clone, Copy)]
pub struct Prefs<'a> {
    /// A2A 1.0 is served (`serve_v1`).
    pub serve_v1: bool,
    /// gRPC peers are called (`peer_grpc = "call"`).
    pub grpc: bool,
    /// The registered endpoint: among the usable entries, the one at this address wins.
    pub registered: Option<&'a Url>,
}

impl Prefs<'_> {
    /// Every binding the gateway speaks when `serve_v1`, gRPC peers called, no registered
    /// endpoint.
    pub fn serving(serve_v1: bool) -> Prefs<'static> {
        Prefs {
            serve_v1,
            grpc: true,
            registered: None,
        }
    }

    /// The settings' preferences, no registered endpoint.
    pub fn of(config: &crate::config::Config) -> Prefs<'static> {
        Prefs {
            serve_v1: config.serve_v1,
            grpc: config.peer_grpc == crate::config::PeerGrpc::Call,
            registered: None,
        }
    }
}

/// The gateway's wording for why `a2a_client::select` passed an entry over.
fn passed_over_reason(why: &sel::PassedOver, p: &Prefs<'_>) -> String {
    use sel::{Binding as B, PassedOver as P, Version as V};
    fn grpc(b: &str) -> bool {
        sel::Binding::parse(b) == Some(sel::Binding::Grpc)
    }
    match why {
        P::Binding(b) if grpc(b) && !p.grpc => {
            "gRPC is not supported (peer_grpc: refuse)".to_owned()
        }
        P::NotRequested(B::Grpc, _) if !p.grpc => {
            "gRPC is not supported (peer_grpc: refuse)".to_owned()
        }
        P::Binding(b) if grpc(b) && !p.serve_v1 => {
            "gRPC is spoken at A2A 1.0 only, which is disabled (serve-v1: false)".to_owned()
        }
        P::Binding(b) => format!("binding {b:?} is not supported"),
        P::UnknownVersion(v) => format!("A2A version {v:?} is not served"),
        P::NotRequested(B::HttpJson, V::V03) => "HTTP+JSON is supported at A2A 1.0 only".to_owned(),
        P::NotRequested(B::Grpc, V::V03) => "gRPC is supported at A2A 1.0 only".to_owned(),
        P::NotRequested(_, V::V1) if !p.serve_v1 => {
            "A2A 1.0 is disabled (serve-v1: false)".to_owned()
        }
        other => other.to_string(),
    }
}

/// Chooses the peer interface from a card (either version) with [`a2a_client::select`], over the
/// pairs of [`gateway_speaks`]. Errors list every entry and why it was passed over
/// (`a2a_peer_protocol_unsupported`; the list also in the refusal's `passedOver` member, which
/// the registration check shows); an entry the gateway would take but whose URL is unusable
/// is refused (`a2a_peer_url_refused`) rather than silently skipped for a later entry.
pub fn select_interface(card: &Value, serve_v1: bool) -> Result<Chosen, Refusal> {
    select_interface_with(card, &Prefs::serving(serve_v1))
}

/// [`select_interface`] with the settings' and the registration's preferences.
pub fn select_interface_with(card: &Value, prefs: &Prefs<'_>) -> Result<Chosen, Refusal> {
    let interfaces: sel::CardInterfaces = serde_json::from_value(card.clone()).map_err(|e| {
        Refusal::peer_protocol_unsupported(&format!(
            "the card's interface members are unreadable ({e})"
        ))
    })?;
    select_with(&interfaces, prefs)
}

/// [`select_interface`] over the interface members already read (a [`FetchedCard`]'s).
pub fn select_from(interfaces: &sel::CardInterfaces, serve_v1: bool) -> Result<Chosen, Refusal> {
    select_with(interfaces, &Prefs::serving(serve_v1))
}

/// The choice itself. gRPC 1.0 is taken only when the card offers no JSON-RPC or HTTP+JSON
/// entry the gateway speaks (a gRPC-only peer), and only with `prefs.grpc`: the HTTP bindings
/// carry TLS, stream resumption and heartbeats, which the gateway's gRPC calls do not (see
/// `crate::outbound::grpc`). Among the usable entries the one at the registered endpoint
/// wins, as in the DVARA API; else the card's order decides.
pub fn select_with(interfaces: &sel::CardInterfaces, prefs: &Prefs<'_>) -> Result<Chosen, Refusal> {
    let http = walk(interfaces, &gateway_speaks(prefs.serve_v1), prefs);
    match http {
        Err(r) if prefs.serve_v1 && prefs.grpc && r.code == "a2a_peer_protocol_unsupported" => {
            let with_grpc = sel::Speaks::pairs([
                (sel::Binding::JsonRpc, sel::Version::V1),
                (sel::Binding::HttpJson, sel::Version::V1),
                (sel::Binding::JsonRpc, sel::Version::V03),
                (sel::Binding::Grpc, sel::Version::V1),
            ]);
            walk(interfaces, &with_grpc, prefs)
        }
        other => other,
    }
}

/// The same address, a trailing slash aside.
fn same_address(a: &Url, b: &Url) -> bool {
    a.as_str().trim_end_matches('/') == b.as_str().trim_end_matches('/')
}

/// The first entry `speaks` takes, in the card's order (one at the registered endpoint
/// preferred), or every entry and why it was passed over.
fn walk(
    interfaces: &sel::CardInterfaces,
    speaks: &sel::Speaks,
    prefs: &Prefs<'_>,
) -> Result<Chosen, Refusal> {
    let offers = interfaces.offers();
    let mut reasons = Vec::new();
    let mut first: Option<Chosen> = None;
    // One entry at a time, so the first entry whose only defect is its URL stops the walk
    // (before a usable entry was found).
    for offer in &offers {
        match sel::select_offers(std::slice::from_ref(offer), speaks) {
            Ok(s) => {
                let chosen = Chosen {
                    url: s.url,
                    binding: s.binding,
                    version: s.version,
                    tenant: s.tenant,
                    signature_trust: None,
                };
                let at_registered = prefs
                    .registered
                    .is_some_and(|r| same_address(&chosen.url, r));
                if at_registered || prefs.registered.is_none() {
                    return Ok(chosen);
                }
                if first.is_none() {
                    first = Some(chosen);
                }
            }
            Err(_) if first.is_some() => {}
            Err(none) => {
                for (o, why) in &none.passed_over {
                    if let sel::PassedOver::BadUrl(bad) = why {
                        let reason = format!("{}.url {:?} is not a URL: {bad}", o.source, o.url);
                        return Err(Refusal::peer_url_refused(&reason)
                            .with("passedOver", serde_json::json!([reason])));
                    }
                    reasons.push(format!(
                        "{} {} {} at {}: {}",
                        o.source,
                        o.binding,
                        o.version,
                        o.url,
                        passed_over_reason(why, prefs)
                    ));
                }
            }
        }
    }
    if let Some(c) = first {
        return Ok(c);
    }
    if reasons.is_empty() {
        reasons.push("the card offers no interface".to_owned());
    }
    Err(Refusal::peer_protocol_unsupported(&reasons.join("; "))
        .with("passedOver", serde_json::json!(reasons)))
}
