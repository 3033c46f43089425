//! SSRF protection for outbound requests to caller-chosen URLs (push webhooks here, upstreams in
//! the gateway).
//!
//! Two checks, one policy:
//! - at registration, [`NetGuard::check_url`] refuses non-HTTPS URLs, metadata host names and
//!   literal addresses that are not public, and [`NetGuard::check_resolved`] also resolves the
//!   host and refuses it when any address is not public;
//! - at delivery, [`NetGuard::client`] builds a `reqwest::Client` whose DNS resolver returns only
//!   checked addresses (the connection goes to exactly what was checked, so there is no
//!   DNS-rebinding window), follows no redirect and uses no proxy.
//!
//! Refused: unspecified/wildcard, loopback, private (RFC 1918), link-local, CGNAT (100.64/10),
//! IETF protocol assignments (192.0.0/24, includes Oracle's 192.0.0.192 metadata), documentation
//! and benchmarking ranges, multicast, broadcast and reserved (240/4), IPv6 ULA (fc00::/7),
//! link-local, site-local, multicast, documentation, and IPv4-mapped / IPv4-compatible / NAT64 /
//! 6to4 forms of refused IPv4 addresses; cloud metadata names and addresses.
//! Decimal, octal and hex host forms (`http://2130706433/`, `0177.0.0.1`, `0x7f.1`) are
//! normalised to dotted IPv4 by the `url` crate (WHATWG host parsing) before the check.
//!
//! `allow_local` (development only) permits loopback addresses and plain `http`.

use async_trait::async_trait;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use url::{Host, Url};

/// Why a URL or an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// Not a valid absolute URL.
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    /// Scheme other than https (or http with `allow_local`).
    #[error("URL scheme {0:?} is not allowed (https required)")]
    Scheme(String),
    /// Userinfo in the URL.
    #[error("credentials in the URL are not allowed")]
    Credentials,
    /// A host name that is refused as such (cloud metadata).
    #[error("host {0:?} is not allowed (cloud metadata)")]
    Host(String),
    /// An address that is not public.
    #[error("address {0} is not allowed ({1})")]
    Address(IpAddr, &'static str),
    /// The host did not resolve.
    #[error("host {0:?} did not resolve: {1}")]
    Resolve(String, String),
}

/// Host names of cloud metadata services (compared case-insensitively, trailing dot ignored).
pub const METADATA_HOSTS: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.com",
    "metadata.platformequinix.com",
    "metadata.tencentyun.com",
    "kubernetes.default.svc",
];

/// Cloud metadata addresses (named in the refusal; most are also inside a refused range).
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(192, 0, 0, 192),
];

/// Why an IPv4 address is not public, or `None` when it is.
fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if METADATA_V4.contains(&ip) {
        return Some("cloud metadata");
    }
    let r = match o {
        [0, ..] => "unspecified / this network",
        [127, ..] => "loopback",
        [10, ..] => "private",
        [172, b, ..] if (16..32).contains(&b) => "private",
        [192, 168, ..] => "private",
        [169, 254, ..] => "link-local",
        [100, b, ..] if (64..128).contains(&b) => "CGNAT (shared address space)",
        [192, 0, 0, _] => "IETF protocol assignments",
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => "documentation",
        [198, b, ..] if b == 18 || b == 19 => "benchmarking",
        [192, 88, 99, _] => "6to4 relay anycast",
        [a, ..] if (224..240).contains(&a) => "multicast",
        [255, 255, 255, 255] => "broadcast",
        [a, ..] if a >= 240 => "reserved",
        _ => return None,
    };
    Some(r)
}

/// Why an IPv6 address is not public, or `None` when it is.
fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("cloud metadata");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    let s = ip.segments();
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judge the IPv4 inside.
    if s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0) {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_reason(v4).or(Some("IPv4-compatible"));
    }
    // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765): judge the IPv4 inside.
    if s[..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_reason(v4).or(Some("IPv4-translated"));
    }
    // NAT64 local-use prefix 64:ff9b:1::/48 (RFC 8215): translates to operator-chosen, often
    // private, IPv4 space.
    if s[..3] == [0x64, 0xff9b, 1] {
        return Some("NAT64 local-use");
    }
    // NAT64 well-known prefix 64:ff9b::/96 and 6to4 2002::/16 embed an IPv4 address.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_reason(v4);
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return v4_reason(v4);
    }
    let r = match s[0] {
        x if x & 0xfe00 == 0xfc00 => "unique local (ULA)",
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xff00 == 0xff00 => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        0x2001 if s[1] == 0 => "Teredo",
        0x0100 if s[1..4] == [0, 0, 0] => "discard-only",
        _ => return None,
    };
    Some(r)
}

/// Why `ip` is not a public address, or `None` when it is.
pub fn refusal_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|m| m.is_loopback()),
    }
}

/// Resolves host names (pluggable so tests can simulate DNS rebinding).
#[async_trait]
pub trait HostResolver: Send + Sync + 'static {
    /// Every address of `host`.
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The system resolver (`tokio::net::lookup_host`).
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        Ok(tokio::net::lookup_host((host, 0))
            .await?
            .map(|a| a.ip())
            .collect())
    }
}

/// The SSRF policy: which URLs and addresses outbound requests may reach.
#[derive(Clone)]
pub struct NetGuard {
    allow_local: bool,
    resolver: Arc<dyn HostResolver>,
}

impl std::fmt::Debug for NetGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetGuard")
            .field("allow_local", &self.allow_local)
            .finish()
    }
}

impl Default for NetGuard {
    fn default() -> Self {
        NetGuard::new(false)
    }
}

impl NetGuard {
    /// The production policy (`allow_local = false`) or the development one, with the system
    /// resolver.
    pub fn new(allow_local: bool) -> Self {
        NetGuard {
            allow_local,
            resolver: Arc::new(SystemResolver),
        }
    }

    /// Use `resolver` for host names.
    pub fn with_resolver(mut self, resolver: Arc<dyn HostResolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Whether loopback and plain http are permitted.
    pub fn allow_local(&self) -> bool {
        self.allow_local
    }

    /// Check one address.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), GuardError> {
        if self.allow_local && is_loopback(ip) {
            return Ok(());
        }
        match refusal_reason(ip) {
            Some(r) => Err(GuardError::Address(ip, r)),
            None => Ok(()),
        }
    }

    /// The checks that need no DNS: scheme, credentials, metadata host names, literal addresses.
    pub fn check_url(&self, url: &str) -> Result<Url, GuardError> {
        let u = Url::parse(url.trim()).map_err(|e| GuardError::InvalidUrl(e.to_string()))?;
        self.check_parsed(&u)?;
        Ok(u)
    }

    /// [`NetGuard::check_url`] on a URL already parsed (no second parse; the same checks).
    pub fn check_parsed(&self, u: &Url) -> Result<(), GuardError> {
        match u.scheme() {
            "https" => {}
            "http" if self.allow_local => {}
            s => return Err(GuardError::Scheme(s.to_string())),
        }
        if !u.username().is_empty() || u.password().is_some() {
            return Err(GuardError::Credentials);
        }
        match u.host() {
            None => return Err(GuardError::InvalidUrl("no host".into())),
            Some(Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip))?,
            Some(Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip))?,
            Some(Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                if METADATA_HOSTS.contains(&d.as_str()) {
                    return Err(GuardError::Host(d));
                }
                if (d == "localhost" || d.ends_with(".localhost")) && !self.allow_local {
                    return Err(GuardError::Address(
                        IpAddr::V4(Ipv4Addr::LOCALHOST),
                        "loopback",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Resolve `host` and return its addresses when every one is allowed.
    pub async fn resolve_checked(&self, host: &str) -> Result<Vec<IpAddr>, GuardError> {
        let h = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = h.parse::<IpAddr>() {
            self.check_ip(ip)?;
            return Ok(vec![ip]);
        }
        let ips = self
            .resolver
            .lookup(h)
            .await
            .map_err(|e| GuardError::Resolve(h.to_string(), e.to_string()))?;
        if ips.is_empty() {
            return Err(GuardError::Resolve(h.to_string(), "no address".into()));
        }
        for ip in &ips {
            self.check_ip(*ip)?;
        }
        Ok(ips)
    }

    /// [`NetGuard::check_url`] plus resolution of the host: every address must be allowed.
    pub async fn check_resolved(&self, url: &str) -> Result<Url, GuardError> {
        let u = self.check_url(url)?;
        if let Some(Host::Domain(d)) = u.host() {
            self.resolve_checked(d).await?;
        }
        Ok(u)
    }

    /// A client that connects only to checked addresses: its resolver refuses a host with any
    /// address that is not allowed, it follows no redirect, uses no proxy and times out each
    /// request after `timeout`. Literal-address URLs bypass DNS, so callers still run
    /// [`NetGuard::check_url`] before each request.
    pub fn client(&self, timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
        reqwest::Client::builder()
            .dns_resolver(GuardedResolve(self.clone()))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .https_only(!self.allow_local)
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
    }
}

/// The reqwest resolver of [`NetGuard::client`].
struct GuardedResolve(NetGuard);

impl reqwest::dns::Resolve for GuardedResolve {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let g = self.0.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let ips = g
                .resolve_checked(&host)
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            let addrs: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_addresses_pass() {
        let g = NetGuard::new(false);
        for u in [
            "https://example.com/hook",
            "https://8.8.8.8/x",
            "https://[2606:4700::1111]/x",
            "https://172.32.0.1/",
            "https://100.128.0.1/",
        ] {
            assert!(g.check_url(u).is_ok(), "{u}");
        }
    }

    #[test]
    fn allow_local_permits_loopback_only() {
        let g = NetGuard::new(true);
        assert!(g.check_url("http://127.0.0.1:8080/x").is_ok());
        assert!(g.check_url("http://[::1]:8080/x").is_ok());
        assert!(g.check_url("http://localhost:1/x").is_ok());
        assert!(g.check_url("http://10.0.0.1/x").is_err());
        assert!(g.check_url("http://169.254.169.254/x").is_err());
        assert!(g.check_url("ftp://127.0.0.1/x").is_err());
    }
}
