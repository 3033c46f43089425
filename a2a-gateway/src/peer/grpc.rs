//! The address rules of a gRPC peer: the interface URL's scheme and host, and the checked
//! addresses to connect to (gRPC connects by address, not through the HTTP client's resolver).

use std::net::IpAddr;

use a2a_agent::net_guard::NetGuard;
use url::Url;

use crate::protocol::errors::Refusal;

/// The address rules for a gRPC interface URL (as read by selection: `http://host:port/` or
/// `https://host:port/`).
pub(crate) fn check_url(url: &Url, registered: &Url, dev_mode: bool) -> Result<(), Refusal> {
    match url.scheme() {
        "https" => {}
        "http" if dev_mode => {}
        "http" => {
            return Err(Refusal::peer_url_refused(&format!(
                "{url}: plaintext gRPC (h2c) is allowed only in development mode; serve gRPC \
                 over TLS (an https interface url)"
            )));
        }
        other => {
            return Err(Refusal::peer_url_refused(&format!(
                "{url}: the gRPC url scheme must be https (or http in development mode), not {other}"
            )));
        }
    }
    NetGuard::new(dev_mode)
        .check_parsed(url)
        .map_err(|e| super::guard_refusal(url, e, dev_mode))?;
    if url.host_str() != registered.host_str() {
        return Err(Refusal::peer_url_refused(&format!(
            "{url}: not on the registered endpoint's host ({})",
            registered.host_str().unwrap_or_default()
        )));
    }
    Ok(())
}

/// The addresses to connect to: the host resolved with the network checks (every address
/// allowed, as [`super::check_resolved`] requires), or the literal address of the URL.
pub(crate) async fn checked_addresses(url: &Url, dev_mode: bool) -> Result<Vec<IpAddr>, Refusal> {
    let host = match url.host() {
        Some(url::Host::Domain(host)) => host,
        Some(url::Host::Ipv4(ip)) => return Ok(vec![IpAddr::V4(ip)]),
        Some(url::Host::Ipv6(ip)) => return Ok(vec![IpAddr::V6(ip)]),
        None => return Err(Refusal::peer_url_refused(&format!("{url}: no host"))),
    };
    let ips = NetGuard::new(dev_mode)
        .resolve_checked(host)
        .await
        .map_err(|e| Refusal::peer_url_refused(&format!("{url}: {e}")))?;
    if ips.is_empty() {
        return Err(Refusal::peer_url_refused(&format!(
            "{url}: host does not resolve"
        )));
    }
    Ok(ips)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn grpc_address_rules() {
        let reg = u("http://127.0.0.1:8000/a2a");
        // Another port of the registered host: allowed (gRPC has a port of its own).
        assert!(check_url(&u("http://127.0.0.1:50051/"), &reg, true).is_ok());
        let cases = [
            (
                "http://127.0.0.2:50051/",
                true,
                "registered endpoint's host",
            ),
            ("http://127.0.0.1:50051/", false, "development mode"),
            ("ftp://127.0.0.1:50051/", true, "scheme"),
            ("http://u:p@127.0.0.1:50051/", true, "user name"),
        ];
        for (url, dev, needle) in cases {
            let e = check_url(&u(url), &reg, dev).unwrap_err();
            assert_eq!(e.code, "a2a_peer_url_refused");
            assert!(e.message.contains(needle), "{url}: {}", e.message);
        }
        // TLS: allowed in dev mode, and outside it on a public host (loopback is refused there).
        assert!(check_url(&u("https://127.0.0.1:50051/"), &reg, true).is_ok());
        let public = u("https://93.184.215.14/a2a");
        assert!(check_url(&u("https://93.184.215.14:50051/"), &public, false).is_ok());
        let e = check_url(&u("http://93.184.215.14:50051/"), &public, false).unwrap_err();
        assert!(e.message.contains("development mode"), "{}", e.message);
        let e = check_url(&u("https://127.0.0.1:50051/"), &reg, false).unwrap_err();
        assert_eq!(e.code, "a2a_peer_url_refused");
        let meta = u("http://169.254.169.254:50051/");
        let e = check_url(&meta, &meta, true).unwrap_err();
        assert!(e.message.contains("metadata"), "{}", e.message);
    }
}
