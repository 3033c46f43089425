//! Calling peers: card cache, interface selection and peer address checks.
//!
//! - Cards are fetched from `<endpoint>/.well-known/agent-card.json` (falling back to the origin's
//!   well-known path) and cached for the peer's `max-age`, clamped to 30 s .. 1 h, then
//!   revalidated with `If-None-Match`.
//! - The interface is the first entry of `supportedInterfaces`, in the card's order, that the
//!   gateway speaks (JSON-RPC 0.3 / 1.0, HTTP+JSON 1.0); a card without `supportedInterfaces` is a
//!   0.3 card reached over JSON-RPC at its `url`. gRPC 1.0 is taken only when no such entry exists
//!   (a gRPC-only peer; its own address rules and calls: `crate::outbound::grpc`).
//! - The chosen URL must have the registered endpoint's scheme, host and port, be https (http in
//!   development mode), carry no userinfo or fragment, and resolve only to public addresses
//!   (loopback allowed in development mode). The same address rules run again inside the HTTP
//!   client's resolver, so the address connected to is the address checked.
//!
//! Shared pieces do the work: [`a2a_client::select`] judges each card entry, the SSRF policy is
//! [`a2a_agent::net_guard`], and the card cache is the client's [`CardResolver`] (caching headers,
//! ETag revalidation) with the gateway's 30 s .. 1 h TTL clamp ([`CARD_TTL`]). This module adds
//! the gateway's rules on top (same origin as the registered endpoint, no fragment, no fallback
//! past an entry with an unusable URL) and the gateway's error codes.

mod card;
pub(crate) mod checks;
pub mod clients;
pub mod delegated;
pub(crate) mod grpc;
pub(crate) mod http;
pub(crate) mod modified;
mod select;

pub(crate) use card::peer_card_at;
pub use card::{
    CARD_TTL, DEFAULT_CARD_TTL, card_json, card_resolver, card_structure, card_urls, error_chain,
    fetch_result, peer_card,
};
pub use select::{
    Chosen, Prefs, gateway_speaks, select_from, select_interface, select_interface_with,
    select_with,
};

use std::net::SocketAddr;
use std::time::Duration;

use url::Url;

use a2a_agent::net_guard::{GuardError, NetGuard};

use crate::protocol::errors::Refusal;

/// Smallest time a peer card is kept.
pub const MIN_CARD_TTL: Duration = Duration::from_secs(30);
/// Largest time a peer card is kept.
pub const MAX_CARD_TTL: Duration = Duration::from_secs(3600);

/// The static checks of a caller's webhook URL ([`NetGuard::check_url`]: scheme, userinfo,
/// metadata host names, literal addresses), with the failed check named in the error.
pub fn check_webhook(url: &str, dev_mode: bool) -> Result<Url, String> {
    NetGuard::new(dev_mode).check_url(url).map_err(|e| match e {
        GuardError::Scheme(s) if s == "http" && !dev_mode => {
            format!("{url}: only https webhooks are allowed")
        }
        GuardError::Credentials => "user name or password in the address".to_owned(),
        GuardError::Address(ip, why) => format!("{why} address ({ip})"),
        other => other.to_string(),
    })
}

/// Names the failed check of a [`GuardError`] for `a2a_peer_url_refused`.
pub(crate) fn guard_refusal(url: &Url, e: GuardError, dev_mode: bool) -> Refusal {
    let check = match e {
        GuardError::Scheme(s) if s == "http" && !dev_mode => {
            "plain http is allowed only in development mode".to_owned()
        }
        GuardError::Scheme(s) => format!("scheme {s:?} is not https"),
        GuardError::Credentials => "user name or password in the address".to_owned(),
        GuardError::Address(ip, why) => format!("{why} address ({ip})"),
        other => other.to_string(),
    };
    Refusal::peer_url_refused(&format!("{}: {check}", redact(url)))
}

/// Static checks of a peer URL against the registered endpoint (no DNS): the SSRF policy of
/// [`NetGuard::check_url`] (https, or http in development; no userinfo; no metadata host; literal
/// addresses public, loopback in development), then the gateway's own rules: no fragment, and the
/// registered endpoint's scheme, host and port.
pub fn check_url(url: &Url, registered: &Url, dev_mode: bool) -> Result<(), Refusal> {
    NetGuard::new(dev_mode)
        .check_parsed(url)
        .map_err(|e| guard_refusal(url, e, dev_mode))?;
    if url.fragment().is_some() {
        return Err(Refusal::peer_url_refused(&format!(
            "{url}: fragment in the address"
        )));
    }
    if url.scheme() != registered.scheme()
        || url.host_str() != registered.host_str()
        || url.port_or_known_default() != registered.port_or_known_default()
    {
        return Err(Refusal::peer_url_refused(&format!(
            "{url}: not on the registered endpoint's scheme, host and port ({})",
            registered.origin().ascii_serialization()
        )));
    }
    Ok(())
}

fn redact(url: &Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

/// Resolves the URL's host and applies the network checks to every address
/// ([`NetGuard::resolve_checked`]: one refused address refuses the host).
pub async fn check_resolved(url: &Url, dev_mode: bool) -> Result<(), Refusal> {
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d,
        Some(_) => return Ok(()), // literal addresses are checked statically
        None => return Err(Refusal::peer_url_refused(&format!("{url}: no host"))),
    };
    match NetGuard::new(dev_mode).resolve_checked(host).await {
        Ok(_) => Ok(()),
        Err(GuardError::Resolve(_, e)) => Err(Refusal::peer_url_refused(&format!(
            "{url}: host does not resolve ({e})"
        ))),
        Err(GuardError::Address(ip, why)) => Err(Refusal::peer_url_refused(&format!(
            "{url}: {host} resolves to a {why} address ({ip})"
        ))),
        Err(e) => Err(guard_refusal(url, e, dev_mode)),
    }
}

/// The extra roots of `peer_ca_file` (none when unset); an unreadable file or one without a
/// certificate stops the gateway at start.
pub fn trusted_roots(
    config: &crate::config::Config,
) -> Result<a2a_client::tls::ExtraRoots, String> {
    let Some(path) = &config.peer_ca_file else {
        return Ok(Default::default());
    };
    let pem = std::fs::read(path).map_err(|e| format!("peer_ca_file {}: {e}", path.display()))?;
    let certs = a2a_client::tls::parse_pem(&pem)
        .map_err(|e| format!("peer_ca_file {}: {e}", path.display()))?;
    Ok(std::sync::Arc::new(certs))
}

/// A resolver that returns only addresses [`NetGuard`] allows, so a name that changes between
/// check and connect cannot reach an internal address: reqwest's (cards, trust, pushes) and, as
/// hyper-util's DNS hook, the hops' peer client (`crate::peer::http`). (The gateway builds its own
/// clients rather than [`NetGuard::client`], whose whole-request timeout would cut long streams.)
#[derive(Debug, Clone)]
pub struct CheckedResolver {
    /// Allow loopback (development mode).
    pub allow_loopback: bool,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = NetGuard::new(self.allow_loopback);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips = guard
                .resolve_checked(&host)
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            let it: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(it)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::errors::{Binding, Version};
    use serde_json::{Value, json};

    fn iface(b: &str, v: &str) -> Value {
        json!({"url": "https://peer.example/a2a", "protocolBinding": b, "protocolVersion": v})
    }

    #[test]
    fn selection_table_of_the_dvara_api() {
        let card03 = json!({"name": "x", "url": "https://peer.example/a2a"});
        let c = select_interface(&card03, true).unwrap();
        assert_eq!((c.binding, c.version), (Binding::JsonRpc, Version::V03));
        let rows = [
            (
                vec![iface("JSONRPC", "1.0"), iface("JSONRPC", "0.3")],
                Binding::JsonRpc,
                Version::V1,
            ),
            (
                vec![iface("JSONRPC", "0.3"), iface("JSONRPC", "1.0")],
                Binding::JsonRpc,
                Version::V03,
            ),
            (
                vec![iface("HTTP+JSON", "1.0"), iface("JSONRPC", "1.0")],
                Binding::HttpJson,
                Version::V1,
            ),
            (
                vec![iface("JSONRPC", "1.0"), iface("HTTP+JSON", "1.0")],
                Binding::JsonRpc,
                Version::V1,
            ),
        ];
        for (list, b, v) in rows {
            let c =
                select_interface(&json!({"name": "x", "supportedInterfaces": list}), true).unwrap();
            assert_eq!((c.binding, c.version), (b, v));
        }
        for list in [vec![iface("GRPC", "0.3")], vec![iface("HTTP+JSON", "0.3")]] {
            let e = select_interface(&json!({"name": "x", "supportedInterfaces": list}), true)
                .unwrap_err();
            assert_eq!(e.code, "a2a_peer_protocol_unsupported");
            assert!(
                e.message.contains("supportedInterfaces[0]"),
                "{}",
                e.message
            );
        }
        // serve-v1: false calls every peer in 0.3.
        let c = select_interface(
            &json!({"name": "x", "supportedInterfaces": [iface("JSONRPC", "1.0"), iface("JSONRPC", "0.3")]}),
            false,
        )
        .unwrap();
        assert_eq!(c.version, Version::V03);
    }

    #[test]
    fn grpc_is_taken_only_when_no_http_binding_is_usable() {
        let grpc =
            json!({"url": "127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"});
        let pick = |list: Vec<Value>, v1: bool| {
            select_interface(&json!({"name": "x", "supportedInterfaces": list}), v1)
        };
        // gRPC-only (beside entries the gateway cannot call): gRPC, its host:port read as http.
        let c = pick(vec![iface("HTTP+JSON", "0.3"), grpc.clone()], true).unwrap();
        assert_eq!((c.binding, c.version), (Binding::Grpc, Version::V1));
        assert_eq!(c.url.as_str(), "http://127.0.0.1:50051/");
        // Listed first, gRPC still yields to an HTTP binding the gateway speaks.
        let c = pick(vec![grpc.clone(), iface("HTTP+JSON", "1.0")], true).unwrap();
        assert_eq!(c.binding, Binding::HttpJson);
        let c = pick(vec![grpc.clone(), iface("JSONRPC", "0.3")], true).unwrap();
        assert_eq!((c.binding, c.version), (Binding::JsonRpc, Version::V03));
        // serve-v1: false speaks no 1.0 at all, gRPC included.
        let e = pick(vec![grpc], false).unwrap_err();
        assert!(e.message.contains("serve-v1: false"), "{}", e.message);
    }

    #[test]
    fn url_checks() {
        let reg = Url::parse("https://peer.example/a2a").unwrap();
        let ok = Url::parse("https://peer.example/a2a/v1").unwrap();
        assert!(check_url(&ok, &reg, false).is_ok());
        let cases = [
            ("http://peer.example/a2a", "plain http"),
            ("https://other.example/a2a", "registered endpoint"),
            ("https://peer.example:8443/a2a", "registered endpoint"),
            ("https://u:p@peer.example/a2a", "user name"),
            ("https://peer.example/a2a#frag", "fragment"),
        ];
        for (u, needle) in cases {
            let e = check_url(&Url::parse(u).unwrap(), &reg, false).unwrap_err();
            assert_eq!(e.code, "a2a_peer_url_refused");
            assert!(e.message.contains(needle), "{u}: {}", e.message);
        }
        let reg_ip = Url::parse("https://10.0.0.1/a2a").unwrap();
        let e = check_url(&reg_ip, &reg_ip, false).unwrap_err();
        assert!(e.message.contains("private"));
        let lo = Url::parse("http://127.0.0.1:9/a2a").unwrap();
        assert!(check_url(&lo, &lo, true).is_ok());
        assert!(check_url(&lo, &lo, false).is_err());
        for (ip, why) in [
            ("169.254.169.254", "metadata"),
            ("100.64.0.1", "CGNAT"),
            ("169.254.1.1", "link-local"),
            ("192.168.1.1", "private"),
            ("::1", "loopback"),
            ("fe80::1", "link-local"),
            ("::ffff:10.0.0.1", "private"),
        ] {
            let host = if ip.contains(':') {
                format!("[{ip}]")
            } else {
                ip.to_owned()
            };
            let got = check_webhook(&format!("https://{host}/hook"), false).unwrap_err();
            assert!(got.contains(why), "{ip}: {got}");
        }
        assert!(check_webhook("https://8.8.8.8/hook", false).is_ok());
    }

    #[test]
    fn webhook_table_refuses_every_embedded_and_credential_form() {
        let refused = [
            "https://[::ffff:127.0.0.1]/",    // IPv4-mapped loopback
            "https://[::ffff:0:7f00:1]/",     // IPv4-translated loopback
            "https://[::ffff:0:a9fe:a9fe]/",  // IPv4-translated metadata
            "https://[::127.0.0.1]/",         // IPv4-compatible
            "https://[64:ff9b::a00:1]/",      // NAT64 of 10.0.0.1
            "https://[64:ff9b:1::808:808]/",  // NAT64 local-use prefix
            "https://[2002:a9fe:a9fe::]/",    // 6to4 of the metadata address
            "https://[2001:0:4136:e378::1]/", // Teredo
            "https://user:pw@example.com/",   // userinfo
            "https://user@example.com/",      // user name only
            "https://metadata.google.internal/",
            "http://example.com/", // plain http outside development
        ];
        for u in refused {
            assert!(check_webhook(u, false).is_err(), "{u} must be refused");
        }
        // Development mode allows http and loopback, never userinfo.
        assert!(check_webhook("http://127.0.0.1:9/hook", true).is_ok());
        assert!(check_webhook("http://user:pw@127.0.0.1:9/hook", true).is_err());
        assert!(check_webhook("https://[64:ff9b::808:808]/", false).is_ok());
    }

    fn card_ttl(h: &reqwest::header::HeaderMap) -> Duration {
        CARD_TTL.ttl(&a2a_client::discovery::CachePolicy::from_headers(h))
    }

    #[test]
    fn ttl_is_clamped() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("cache-control", "max-age=5".parse().unwrap());
        assert_eq!(card_ttl(&h), MIN_CARD_TTL);
        h.insert("cache-control", "max-age=99999".parse().unwrap());
        assert_eq!(card_ttl(&h), MAX_CARD_TTL);
        h.insert("cache-control", "max-age=120".parse().unwrap());
        assert_eq!(card_ttl(&h), Duration::from_secs(120));
        h.insert("age", "60".parse().unwrap());
        assert_eq!(card_ttl(&h), Duration::from_secs(60));
        h.insert("cache-control", "no-cache".parse().unwrap());
        assert_eq!(card_ttl(&h), MIN_CARD_TTL);
        assert_eq!(
            card_ttl(&reqwest::header::HeaderMap::new()),
            DEFAULT_CARD_TTL
        );
    }

    #[test]
    fn selection_reasons_in_gateway_wording() {
        let card = json!({"name": "x", "supportedInterfaces": [
            iface("GRPC", "0.3"), iface("HTTP+JSON", "0.3"), iface("JSONRPC", "2.0")]});
        let e = select_interface(&card, true).unwrap_err();
        assert_eq!(e.code, "a2a_peer_protocol_unsupported");
        for needle in [
            "supportedInterfaces[0] GRPC 0.3 at https://peer.example/a2a: gRPC is supported at A2A 1.0 only",
            "supportedInterfaces[1] HTTP+JSON 0.3 at https://peer.example/a2a: HTTP+JSON is supported at A2A 1.0 only",
            "supportedInterfaces[2] JSONRPC 2.0 at https://peer.example/a2a: A2A version \"2.0\" is not served",
        ] {
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
        let v1_only = json!({"name": "x", "supportedInterfaces": [iface("JSONRPC", "1.0")]});
        let e = select_interface(&v1_only, false).unwrap_err();
        assert!(e.message.contains("serve-v1: false"), "{}", e.message);
        // The tenant of the chosen entry is kept.
        let mut t = iface("JSONRPC", "1.0");
        t["tenant"] = json!("acme");
        let c = select_interface(&json!({"name": "x", "supportedInterfaces": [t]}), true).unwrap();
        assert_eq!(c.tenant.as_deref(), Some("acme"));
    }

    #[test]
    fn unusable_url_of_a_spoken_entry_is_refused_not_skipped() {
        let card = json!({"name": "x", "supportedInterfaces": [
            {"url": "not a url", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            iface("JSONRPC", "0.3")]});
        let e = select_interface(&card, true).unwrap_err();
        assert_eq!(e.code, "a2a_peer_url_refused");
        assert!(
            e.message.contains("supportedInterfaces[0]"),
            "{}",
            e.message
        );
        // A 0.3 card: url + preferredTransport, then additionalInterfaces.
        let card03 = json!({"name": "x", "url": "https://peer.example/grpc", "preferredTransport": "GRPC",
            "additionalInterfaces": [{"url": "https://peer.example/rpc", "transport": "JSONRPC"}]});
        let c = select_interface(&card03, true).unwrap();
        assert_eq!(c.url.as_str(), "https://peer.example/rpc");
        assert_eq!((c.binding, c.version), (Binding::JsonRpc, Version::V03));
    }

    /// A peer with no card under its endpoint path (only at the origin), a bearer-protected
    /// card, and a nameless card: the fallback, the credential and the card check.
    #[tokio::test]
    async fn peer_card_falls_back_sends_the_credential_and_refuses_non_cards() {
        use axum::http::{HeaderMap, StatusCode};
        use axum::response::IntoResponse;
        let app = axum::Router::new()
            .route(
                "/.well-known/agent-card.json",
                axum::routing::get(|h: HeaderMap| async move {
                    if h.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer s3") {
                        return StatusCode::UNAUTHORIZED.into_response();
                    }
                    axum::Json(json!({"name": "root", "description": "", "version": "1",
                        "url": "http://127.0.0.1:1/", "capabilities": {}, "skills": [],
                        "defaultInputModes": [], "defaultOutputModes": []}))
                    .into_response()
                }),
            )
            .route(
                "/nameless/.well-known/agent-card.json",
                axum::routing::get(|| async { axum::Json(json!({"url": "http://127.0.0.1:1/"})) }),
            );
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(l, app).await });
        let cards = card_resolver(reqwest::Client::new());
        let endpoint = Url::parse(&format!("{base}/a2a/agent")).unwrap();

        let card = peer_card(&cards, &endpoint, Some("s3"), 65536, false)
            .await
            .unwrap();
        assert_eq!(card_json(&card).unwrap()["name"], "root");
        let again = peer_card(&cards, &endpoint, Some("s3"), 65536, false)
            .await
            .unwrap();
        assert_eq!(again.cache, a2a_client::discovery::CacheStatus::Fresh);

        let other = Url::parse(&format!("{base}/b")).unwrap();
        let e = peer_card(&cards, &other, None, 65536, false)
            .await
            .unwrap_err();
        assert_eq!(e.code, "a2a_card_unavailable");
        assert!(e.message.contains("HTTP 404"), "{}", e.message);

        let nameless = Url::parse(&format!("{base}/nameless")).unwrap();
        let e = peer_card(&cards, &nameless, None, 65536, false)
            .await
            .unwrap_err();
        assert!(
            e.message.contains("not an Agent Card"),
            "the path's own error, not the fallback's: {}",
            e.message
        );
        let e = peer_card(&cards, &Url::parse(&base).unwrap(), Some("s3"), 8, false)
            .await
            .unwrap_err();
        assert!(e.message.contains("larger than 8 bytes"), "{}", e.message);
        server.abort();
    }

    #[tokio::test]
    async fn resolved_and_metadata_host_checks() {
        let reg = Url::parse("https://metadata.google.internal/a2a").unwrap();
        let e = check_url(&reg, &reg, false).unwrap_err();
        assert!(e.message.contains("metadata"), "{}", e.message);
        let lo = Url::parse("http://localhost:9/a2a").unwrap();
        assert!(check_url(&lo, &lo, false).is_err());
        let e = check_resolved(&lo, false).await.unwrap_err();
        assert_eq!(e.code, "a2a_peer_url_refused");
        assert!(e.message.contains("loopback"), "{}", e.message);
        assert!(check_resolved(&lo, true).await.is_ok());
    }
}
