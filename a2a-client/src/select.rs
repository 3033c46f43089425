//! Interface selection: which (url, binding, version, tenant) of an agent card this client uses.
//!
//! The rules are those of the 1.0 specification §8.3.2 (walk `supportedInterfaces` in the card's
//! order and take the first entry the client can speak; copy the entry's `tenant` into every
//! request) and, for a 0.3 card without `supportedInterfaces`, of the 0.3 specification §5.6.3
//! (`url` + `preferredTransport` first, then `additionalInterfaces` in order).
//!
//! Selection is a pure function over the card ([`CardInterfaces`]) and the set of
//! `(binding, version)` pairs the caller can speak ([`Speaks`]). Forcing a binding and/or a version
//! is just a smaller set ([`Speaks::only`]). When nothing fits, [`NoUsableInterface`] lists every
//! offered entry and why each was passed over.

use std::fmt;

use serde::Deserialize;
use url::Url;

// The binding and version vocabulary is a2a-types' own, shared by every crate.
pub use a2a_types::version::{Binding, Version};

/// The set of `(binding, version)` pairs a caller can speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaks {
    pairs: Vec<(Binding, Version)>,
}

impl Speaks {
    /// Everything this client library speaks: JSON-RPC and HTTP+JSON, each at 1.0 and 0.3, and
    /// (feature `grpc`) gRPC at 1.0.
    pub fn all() -> Speaks {
        let mut pairs = vec![
            (Binding::JsonRpc, Version::V1),
            (Binding::HttpJson, Version::V1),
        ];
        #[cfg(feature = "grpc")]
        pairs.push((Binding::Grpc, Version::V1));
        pairs.extend([
            (Binding::JsonRpc, Version::V03),
            (Binding::HttpJson, Version::V03),
        ]);
        Speaks { pairs }
    }

    /// An explicit set of pairs (order does not matter: the card's order decides).
    pub fn pairs(pairs: impl IntoIterator<Item = (Binding, Version)>) -> Speaks {
        Speaks {
            pairs: pairs.into_iter().collect(),
        }
    }

    /// [`Speaks::all`] restricted to a forced binding and/or version (`None` = not forced).
    pub fn only(binding: Option<Binding>, version: Option<Version>) -> Speaks {
        let mut speaks = Speaks::all();
        speaks.pairs.retain(|(b, v)| {
            binding.as_ref().is_none_or(|f| f == b) && version.is_none_or(|f| f == *v)
        });
        speaks
    }

    /// Whether the pair is in the set.
    pub fn contains(&self, binding: &Binding, version: Version) -> bool {
        self.pairs
            .iter()
            .any(|(b, v)| b == binding && *v == version)
    }

    /// Whether any pair uses this binding.
    pub fn has_binding(&self, binding: &Binding) -> bool {
        self.pairs.iter().any(|(b, _)| b == binding)
    }

    /// The pairs, in insertion order.
    pub fn as_slice(&self) -> &[(Binding, Version)] {
        &self.pairs
    }
}

impl fmt::Display for Speaks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.pairs.iter().map(|(b, v)| format!("{b} {v}")).collect();
        if names.is_empty() {
            f.write_str("nothing")
        } else {
            f.write_str(&names.join(", "))
        }
    }
}

/// One entry offered by a card, exactly as declared (before any interpretation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// Position in the card's offer order (0 = preferred).
    pub index: usize,
    /// Where the entry came from, for messages: `supportedInterfaces[2]`, `url`, `additionalInterfaces[0]`.
    pub source: String,
    /// The declared URL.
    pub url: String,
    /// The declared binding name (`protocolBinding` / `transport` / `preferredTransport`).
    pub binding: String,
    /// The declared protocol version (`protocolVersion` of the entry, or of a 0.3 card).
    pub version: String,
    /// The declared tenant (1.0 only; empty strings are treated as absent).
    pub tenant: Option<String>,
}

/// Why an offered entry was passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassedOver {
    /// The binding is not one the caller speaks at all (e.g. `GRPC`).
    Binding(String),
    /// The declared version is not one this client knows (e.g. `2.0`, `0.2.9`).
    UnknownVersion(String),
    /// Both are known, but the pair is not in the caller's set (forced binding/version).
    NotRequested(Binding, Version),
    /// The URL is missing, not absolute, or not http(s).
    BadUrl(String),
    /// An earlier entry with the same url, binding and version was already considered.
    Duplicate,
}

impl fmt::Display for PassedOver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassedOver::Binding(b) => write!(f, "binding {b:?} is not spoken by this client"),
            PassedOver::UnknownVersion(v) => write!(f, "protocol version {v:?} is not supported"),
            PassedOver::NotRequested(b, v) => {
                write!(
                    f,
                    "{b} {v} is not among the requested binding/version pairs"
                )
            }
            PassedOver::BadUrl(why) => write!(f, "unusable url: {why}"),
            PassedOver::Duplicate => f.write_str("duplicate of an earlier entry"),
        }
    }
}

/// No offered entry fits: every offer and why it was passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoUsableInterface {
    /// What the caller could speak.
    pub speaks: Speaks,
    /// Every offered entry, in card order, with the reason it was not taken.
    pub passed_over: Vec<(Offer, PassedOver)>,
}

impl fmt::Display for NoUsableInterface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.passed_over.is_empty() {
            return write!(
                f,
                "no usable interface: the card offers no interface (client speaks {})",
                self.speaks
            );
        }
        write!(
            f,
            "no usable interface (client speaks {}); the card offers:",
            self.speaks
        )?;
        for (offer, why) in &self.passed_over {
            write!(
                f,
                "\n  {}: {} {} at {:?}",
                offer.source,
                if offer.binding.is_empty() {
                    "<no binding>"
                } else {
                    &offer.binding
                },
                if offer.version.is_empty() {
                    "<no version>"
                } else {
                    &offer.version
                },
                offer.url
            )?;
            if let Some(tenant) = &offer.tenant {
                write!(f, " tenant {tenant:?}")?;
            }
            write!(f, " -> {why}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NoUsableInterface {}

/// The interface chosen from a card: where and how every request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedInterface {
    /// The endpoint URL (JSON-RPC endpoint, or HTTP+JSON base URL).
    pub url: Url,
    /// The binding to speak.
    pub binding: Binding,
    /// The version to speak.
    pub version: Version,
    /// The tenant to send on every request (1.0 only), exactly as declared.
    pub tenant: Option<String>,
    /// The offer this was taken from (`None` when built by hand with [`SelectedInterface::direct`]).
    pub offer: Option<Offer>,
}

impl SelectedInterface {
    /// An interface given directly (no card): the caller forces url, binding and version.
    pub fn direct(url: Url, binding: Binding, version: Version) -> SelectedInterface {
        SelectedInterface {
            url,
            binding,
            version,
            tenant: None,
            offer: None,
        }
    }

    /// The same interface with a tenant.
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> SelectedInterface {
        let tenant = tenant.into();
        self.tenant = (!tenant.is_empty()).then_some(tenant);
        self
    }
}

/// The interface-related members of an agent card of either version.
///
/// Deserializes from any agent card JSON (unknown members are ignored), so selection does not depend
/// on the full card model. Build it from typed cards with the `From` impls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CardInterfaces {
    /// 1.0 `supportedInterfaces` (ordered, first preferred).
    #[serde(default)]
    pub supported_interfaces: Vec<DeclaredInterface>,
    /// 0.3 main `url`.
    #[serde(default)]
    pub url: Option<String>,
    /// 0.3 `preferredTransport` (default `JSONRPC`).
    #[serde(default)]
    pub preferred_transport: Option<String>,
    /// 0.3 `additionalInterfaces`.
    #[serde(default)]
    pub additional_interfaces: Vec<DeclaredLegacyInterface>,
    /// 0.3 card-level `protocolVersion` (default `0.3.0`).
    #[serde(default)]
    pub protocol_version: Option<String>,
}

/// A 1.0 `AgentInterface` as declared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclaredInterface {
    /// `url`.
    #[serde(default)]
    pub url: String,
    /// `protocolBinding`.
    #[serde(default, alias = "protocol_binding")]
    pub protocol_binding: String,
    /// `tenant`.
    #[serde(default)]
    pub tenant: Option<String>,
    /// `protocolVersion`.
    #[serde(default, alias = "protocol_version")]
    pub protocol_version: String,
}

/// A 0.3 `AgentInterface` (`{url, transport}`) as declared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct DeclaredLegacyInterface {
    /// `url`.
    #[serde(default)]
    pub url: String,
    /// `transport`.
    #[serde(default)]
    pub transport: String,
}

impl CardInterfaces {
    /// Parses the interface members out of agent card JSON of either version.
    pub fn from_json(json: &[u8]) -> Result<CardInterfaces, serde_json::Error> {
        serde_json::from_slice(json)
    }

    /// The card's offers in preference order.
    ///
    /// A non-empty `supportedInterfaces` wins (1.0 §8.3.2). Otherwise the 0.3 members are used:
    /// `url` + `preferredTransport` (default `JSONRPC`) first, then each `additionalInterfaces`
    /// entry, all at the card's `protocolVersion` (default `0.3.0`).
    pub fn offers(&self) -> Vec<Offer> {
        if !self.supported_interfaces.is_empty() {
            return self
                .supported_interfaces
                .iter()
                .enumerate()
                .map(|(index, i)| Offer {
                    index,
                    source: format!("supportedInterfaces[{index}]"),
                    url: i.url.clone(),
                    binding: i.protocol_binding.clone(),
                    version: i.protocol_version.clone(),
                    tenant: i.tenant.clone().filter(|t| !t.is_empty()),
                })
                .collect();
        }
        let version = self
            .protocol_version
            .clone()
            .unwrap_or_else(|| "0.3.0".to_string());
        let mut offers = Vec::new();
        if let Some(url) = &self.url {
            offers.push(Offer {
                index: 0,
                source: "url".to_string(),
                url: url.clone(),
                binding: self
                    .preferred_transport
                    .clone()
                    .unwrap_or_else(|| "JSONRPC".to_string()),
                version: version.clone(),
                tenant: None,
            });
        }
        for (i, extra) in self.additional_interfaces.iter().enumerate() {
            offers.push(Offer {
                index: offers.len(),
                source: format!("additionalInterfaces[{i}]"),
                url: extra.url.clone(),
                binding: extra.transport.clone(),
                version: version.clone(),
                tenant: None,
            });
        }
        offers
    }
}

/// Picks the first offer of `card` that the caller speaks (see the module docs).
pub fn select(
    card: &CardInterfaces,
    speaks: &Speaks,
) -> Result<SelectedInterface, NoUsableInterface> {
    select_offers(&card.offers(), speaks)
}

/// Picks the first of `offers` (in order) that the caller speaks.
pub fn select_offers(
    offers: &[Offer],
    speaks: &Speaks,
) -> Result<SelectedInterface, NoUsableInterface> {
    let mut passed_over = Vec::new();
    let mut seen: Vec<(String, Binding, Option<Version>)> = Vec::new();
    for offer in offers {
        let Some(binding) = Binding::parse(&offer.binding) else {
            passed_over.push((offer.clone(), PassedOver::Binding(offer.binding.clone())));
            continue;
        };
        let version = Version::from_declared(&offer.version);
        let key = (offer.url.trim().to_string(), binding, version);
        if seen.contains(&key) {
            passed_over.push((offer.clone(), PassedOver::Duplicate));
            continue;
        }
        seen.push(key);
        if !speaks.has_binding(&binding) && !matches!(binding, Binding::JsonRpc | Binding::HttpJson)
        {
            passed_over.push((offer.clone(), PassedOver::Binding(offer.binding.clone())));
            continue;
        }
        let Some(version) = version else {
            passed_over.push((
                offer.clone(),
                PassedOver::UnknownVersion(offer.version.clone()),
            ));
            continue;
        };
        if !speaks.contains(&binding, version) {
            passed_over.push((offer.clone(), PassedOver::NotRequested(binding, version)));
            continue;
        }
        let parsed = if binding == Binding::Grpc {
            parse_grpc_url(&offer.url)
        } else {
            parse_http_url(&offer.url)
        };
        let url = match parsed {
            Ok(url) => url,
            Err(why) => {
                passed_over.push((offer.clone(), PassedOver::BadUrl(why)));
                continue;
            }
        };
        return Ok(SelectedInterface {
            url,
            binding,
            version,
            tenant: offer.tenant.clone(),
            offer: Some(offer.clone()),
        });
    }
    Err(NoUsableInterface {
        speaks: speaks.clone(),
        passed_over,
    })
}

fn parse_http_url(raw: &str) -> Result<Url, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err("empty".to_string());
    }
    let url = Url::parse(raw).map_err(|e| format!("{raw:?} is not an absolute URL ({e})"))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(format!("scheme {other:?} is not http or https")),
    }
}

/// A gRPC interface url: `host:port` (what `a2a.proto` asks for; plaintext HTTP/2 is assumed)
/// or an `http(s)://host:port` URL.
fn parse_grpc_url(raw: &str) -> Result<Url, String> {
    let raw = raw.trim();
    if raw.contains("://") {
        return parse_http_url(raw);
    }
    if raw.is_empty() || raw.contains('/') {
        return Err(format!("{raw:?} is not host:port"));
    }
    parse_http_url(&format!("http://{raw}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_urls() {
        assert_eq!(
            parse_grpc_url("127.0.0.1:50051").map(|u| u.to_string()),
            Ok("http://127.0.0.1:50051/".to_string())
        );
        assert_eq!(
            parse_grpc_url("http://h:1").map(|u| u.to_string()),
            Ok("http://h:1/".to_string())
        );
        assert!(parse_grpc_url("").is_err());
        assert!(parse_grpc_url("h:1/x").is_err());
        assert!(parse_grpc_url("ftp://h:1").is_err());
    }

    #[test]
    fn version_mapping() {
        assert_eq!(Version::from_declared("1.0"), Some(Version::V1));
        assert_eq!(Version::from_declared("1.0.1"), Some(Version::V1));
        assert_eq!(Version::from_declared("1.2"), Some(Version::V1));
        assert_eq!(Version::from_declared("0.3.0"), Some(Version::V03));
        assert_eq!(Version::from_declared("0.3"), Some(Version::V03));
        assert_eq!(Version::from_declared(""), Some(Version::V03));
        assert_eq!(Version::from_declared("0.2.9"), None);
        assert_eq!(Version::from_declared("2.0"), None);
        assert_eq!(Version::from_declared("latest"), None);
    }

    #[test]
    fn binding_spellings() {
        assert_eq!(Binding::parse("jsonrpc"), Some(Binding::JsonRpc));
        assert_eq!(Binding::parse("HTTP+JSON"), Some(Binding::HttpJson));
        assert_eq!(Binding::parse("grpc"), Some(Binding::Grpc));
        assert_eq!(Binding::parse("urn:x:custom"), None);
    }

    #[test]
    fn only_restricts() {
        let s = Speaks::only(Some(Binding::HttpJson), None);
        assert!(s.contains(&Binding::HttpJson, Version::V03));
        assert!(!s.contains(&Binding::JsonRpc, Version::V1));
        let s = Speaks::only(None, Some(Version::V03));
        assert_eq!(s.as_slice().len(), 2);
    }
}
